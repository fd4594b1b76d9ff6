"""Python twin of 07-training-a-classifier.Rmd: dataset, a shuffling
dataloader, an nn_module with a custom autograd_function layer, optim_adam and
lr_step, trained on spirals made by formula (no download). One seed gives R,
rtorch_py and PyTorch the same initial weights and the same batches (libtorch's
generator; R torch's dataloader shuffles with torch_randperm()).

Quantity names are the R expressions checked after each R chunk.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import rtorch_py as rt
from rtorch_py import nn
from rtorch_py.data import dataloader, dataset
from rtorch_py.optim import lr_step, optim_adam

EPOCHS, BATCH, LR, SEED = 60, 30, 0.02, 1
# float32 training, 600 Adam steps: NumPy's and libtorch's sums round
# differently; the epoch losses agree within 1e-5 + 1e-5 * max|loss| (measured:
# under 1e-6).
TOLERANCE = {"losses": (1e-5, 1e-5), "accuracy": (0.0, 0.0)}


def spirals() -> tuple[np.ndarray, np.ndarray]:
    """Three interleaved spirals, 100 points each, rows cycling through classes."""
    i = np.repeat(np.arange(100), 3)
    cls = np.tile(np.arange(3), 100)
    t = i / 99
    r = 0.1 + 0.9 * t
    theta = cls * 2 * math.pi / 3 + 3.5 * t + 0.15 * np.sin(50 * t + cls)
    return np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1), cls


# ---------------------------------------------------------------- rtorch_py

def swish_forward(ctx: Any, input: rt.Tensor) -> rt.Tensor:
    s = input.sigmoid()
    ctx.save_for_backward(input=input, s=s)
    return input * s


def swish_backward(ctx: Any, grad_output: rt.Tensor) -> dict:
    v = ctx.saved_variables
    return {"input": grad_output * v.s * (1 + v.input * (1 - v.s))}


swish = rt.autograd_function(forward=swish_forward, backward=swish_backward)

def spirals_initialize(self: Any, x: np.ndarray, y: np.ndarray) -> None:
    self.x = rt.torch_tensor(x, dtype="float32")
    self.y = rt.torch_tensor(y, dtype="int64")


Spirals = dataset("spirals", initialize=spirals_initialize,
                  getitem=lambda self, i: {"x": self.x[i], "y": self.y[i]},
                  length=lambda self: self.x.shape[0])


def net_initialize(self: Any, hidden: int = 32) -> None:
    self.fc1 = nn.nn_linear(2, hidden)
    self.fc2 = nn.nn_linear(hidden, hidden)
    self.out = nn.nn_linear(hidden, 3)


def net_forward(self: Any, x: rt.Tensor) -> rt.Tensor:
    x = swish(self.fc1(x))
    x = swish(self.fc2(x))
    return self.out(x)


SpiralNet = nn.nn_module("spiral_net", initialize=net_initialize, forward=net_forward)


def rtorch() -> dict:
    x, y = spirals()
    train_dl = dataloader(Spirals(x, y), batch_size=BATCH, shuffle=True)
    rt.torch_manual_seed(SEED)
    model = SpiralNet()
    params = model.parameters()
    optimizer = optim_adam(params, lr=LR)
    scheduler = lr_step(optimizer, step_size=20, gamma=0.5)
    losses = []
    for _ in range(EPOCHS):
        total = 0.0
        for b in train_dl:
            optimizer.zero_grad()
            loss = nn.nnf_cross_entropy(model(b["x"]), b["y"])
            loss.backward()
            optimizer.step()
            total += loss.item()
        losses.append(total / len(train_dl))
        scheduler.step()
    model.eval()
    pred = model(rt.torch_tensor(x, dtype="float32")).argmax(dim=1).data
    return {"dataloader": {"length(train_dl)": len(train_dl)},
            "train": {"losses": losses},
            "accuracy": {"accuracy": float(np.mean(pred == y))}}


# ---------------------------------------------------------------- PyTorch

def pytorch() -> dict:
    import torch

    class Swish(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, input: Any) -> Any:
            s = torch.sigmoid(input)
            ctx.save_for_backward(input, s)
            return input * s

        @staticmethod
        def backward(ctx: Any, grad_output: Any) -> Any:
            input, s = ctx.saved_tensors
            return grad_output * s * (1 + input * (1 - s))

    class Net(torch.nn.Module):
        def __init__(self, hidden: int = 32) -> None:
            super().__init__()
            self.fc1 = torch.nn.Linear(2, hidden)
            self.fc2 = torch.nn.Linear(hidden, hidden)
            self.out = torch.nn.Linear(hidden, 3)

        def forward(self, x: Any) -> Any:
            return self.out(Swish.apply(self.fc2(Swish.apply(self.fc1(x)))))

    x, y = spirals()
    tx, ty = torch.tensor(x, dtype=torch.float32), torch.tensor(y)
    torch.manual_seed(SEED)
    model = Net()
    params = list(model.parameters())
    optimizer = torch.optim.Adam(params, lr=LR)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
    losses = []
    batches = math.ceil(len(x) / BATCH)
    for _ in range(EPOCHS):
        total = 0.0
        # R torch's shuffle: torch_randperm(n) from the default generator each epoch
        for rows in torch.randperm(len(x)).split(BATCH):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(tx[rows]), ty[rows])
            loss.backward()
            optimizer.step()
            total += loss.item()
        losses.append(total / batches)
        scheduler.step()
    model.eval()
    pred = model(torch.tensor(x, dtype=torch.float32)).argmax(dim=1).numpy()
    return {"dataloader": {"length(train_dl)": batches},
            "train": {"losses": losses},
            "accuracy": {"accuracy": float(np.mean(pred == y))}}


if __name__ == "__main__":
    ours, theirs = rtorch(), pytorch()
    a, b = np.array(ours["train"]["losses"]), np.array(theirs["train"]["losses"])
    print("max |loss difference|:", np.abs(a - b).max(), " accuracy:",
          ours["accuracy"], theirs["accuracy"])
