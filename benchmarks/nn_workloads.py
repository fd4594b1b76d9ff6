"""Training-step workloads of issue 12 (nn, losses, optimisers), each written
once for rtorch-py and once for PyTorch with the same initial weights and the
same batch. `workloads.workloads()` lists them with `+ nn_workloads(quick)`.
"""
from __future__ import annotations

import numpy as np
import torch

import rtorch_py as rt
from rtorch_py import nn
from rtorch_py.optim import optim_adam

from .workloads import Workload


def _same_weights(mine: nn.Module, ref: torch.nn.Module) -> None:
    with torch.no_grad():
        for p, q in zip(mine.parameters(), ref.parameters()):
            q.copy_(torch.from_numpy(p.data.copy()))


def _steps(model, ref, x: np.ndarray, y: np.ndarray, loss_of=None) -> tuple:
    """One Adam step on (x, y) for each engine."""
    X, Y = rt.torch_tensor(x), rt.torch_tensor(y)
    tX, tY = torch.tensor(x), torch.tensor(y)
    opt = optim_adam(model.parameters(), lr=1e-3)
    topt = torch.optim.Adam(ref.parameters(), lr=1e-3)
    loss_of = loss_of or (lambda m, a: m(a))

    def ours():
        opt.zero_grad()
        nn.nnf_cross_entropy(loss_of(model, X), Y).backward()
        opt.step()

    def theirs():
        topt.zero_grad()
        torch.nn.functional.cross_entropy(loss_of(ref, tX), tY).backward()
        topt.step()
    return ours, theirs


def mlp_adam(quick: bool) -> tuple:
    rng = np.random.default_rng(2)
    model = nn.nn_sequential(nn.nn_linear(784, 256), nn.nn_relu(), nn.nn_linear(256, 10))
    ref = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                              torch.nn.Linear(256, 10))
    _same_weights(model, ref)
    x = rng.standard_normal((64, 784)).astype(np.float32)
    return _steps(model, ref, x, rng.integers(0, 10, 64))


def cnn(quick: bool) -> tuple:
    rng = np.random.default_rng(3)
    model = nn.nn_sequential(
        nn.nn_conv2d(1, 8, 3), nn.nn_relu(), nn.nn_max_pool2d(2),
        nn.nn_conv2d(8, 16, 3), nn.nn_relu(), nn.nn_max_pool2d(2),
        nn.nn_flatten(), nn.nn_linear(16 * 5 * 5, 10))
    ref = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(16 * 5 * 5, 10))
    _same_weights(model, ref)
    x = rng.standard_normal((32, 1, 28, 28)).astype(np.float32)
    return _steps(model, ref, x, rng.integers(0, 10, 32))


def lstm(quick: bool) -> tuple:
    rng = np.random.default_rng(4)
    seq = 10 if quick else 50

    class Tagger(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = nn.nn_lstm(32, 64, batch_first=True)
            self.head = nn.nn_linear(64, 10)

        def forward(self, x):
            return self.head(self.lstm(x)[0][:, -1])

    class TorchTagger(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = torch.nn.LSTM(32, 64, batch_first=True)
            self.head = torch.nn.Linear(64, 10)

        def forward(self, x):
            return self.head(self.lstm(x)[0][:, -1])

    model, ref = Tagger(), TorchTagger()
    _same_weights(model, ref)
    x = rng.standard_normal((16, seq, 32)).astype(np.float32)
    return _steps(model, ref, x, rng.integers(0, 10, 16))


def nn_workloads(quick: bool) -> list[Workload]:
    return [
        Workload("nn_mlp", "MLP step: nn_sequential 784-256-10, cross_entropy, Adam (batch 64)",
                 mlp_adam, 0.8),
        Workload("nn_cnn", "CNN step: 2 conv2d 3x3 (8, 16 ch), max pool, Adam (32x1x28x28)",
                 cnn, 2.0),
        Workload("nn_lstm", "LSTM step: batch 16, sequence " + ("10" if quick else "50")
                 + ", hidden 64, Adam", lstm, 1.0),
    ]
