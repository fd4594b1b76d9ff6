"""Single convolution layers at realistic sizes, rtorch-py against
torch.nn.functional.conv2d, forward alone and forward + backward (input and
weight gradients), paired interleaved rounds as the runner times them.

    python -m benchmarks.conv_layers [--threads N] [--rounds R] [--clock cpu]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import rtorch_py as rt
from rtorch_py import nn

from .runner import _CLOCK, measure
from .zoo import set_threads

# (label, input shape, weight shape, stride, padding, groups)
LAYERS = [
    ("32x64x32x32, 3x3 64->64, pad 1", (32, 64, 32, 32), (64, 64, 3, 3), 1, 1, 1),
    ("128x1x28x28, 5x5 1->32", (128, 1, 28, 28), (32, 1, 5, 5), 1, 0, 1),
    ("128x32x26x26, 3x3 32->64 (MNIST conv2)", (128, 32, 26, 26), (64, 32, 3, 3), 1, 0, 1),
    ("32x128x16x16, 3x3 128->128 stride 2", (32, 128, 16, 16), (128, 128, 3, 3), 2, 1, 1),
    ("32x64x32x32, depthwise 3x3", (32, 64, 32, 32), (64, 1, 3, 3), 1, 1, 64),
    ("1x3x224x224, 7x7 3->64 stride 2 (ResNet stem)", (1, 3, 224, 224), (64, 3, 7, 7), 2, 3, 1),
]


def pair(shape_x, shape_w, stride, padding, groups, backward: bool) -> tuple:
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape_x).astype(np.float32)
    w = rng.standard_normal(shape_w).astype(np.float32)
    X, W = rt.torch_tensor(x, requires_grad=backward), rt.torch_tensor(w, requires_grad=backward)
    tX, tW = torch.tensor(x, requires_grad=backward), torch.tensor(w, requires_grad=backward)
    out_shape = torch.nn.functional.conv2d(tX, tW, stride=stride, padding=padding,
                                           groups=groups).shape
    g = rng.standard_normal(tuple(out_shape)).astype(np.float32)
    G, tG = rt.torch_tensor(g), torch.tensor(g)

    def ours():
        y = nn.nnf_conv2d(X, W, stride=stride, padding=padding, groups=groups)
        if backward:
            rt.autograd_grad(y, [X, W], G)

    def theirs():
        y = torch.nn.functional.conv2d(tX, tW, stride=stride, padding=padding, groups=groups)
        if backward:
            torch.autograd.grad(y, [tX, tW], tG)
    return ours, theirs


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = p.parse_args()
    _CLOCK["now"] = time.process_time if args.clock == "cpu" else time.perf_counter
    set_threads(args.threads)
    print(f"| layer ({args.threads} thread(s)) | pass | rtorch-py ms | PyTorch ms | ratio |")
    print("|---|---|---|---|---|")
    for label, *spec in LAYERS:
        for backward in (False, True):
            ours, theirs = pair(*spec, backward)
            ours(), theirs()
            a, b, r = measure(ours, theirs, args.rounds, 0.1)
            print(f"| {label} | {'fwd + bwd' if backward else 'fwd'} | {a * 1e3:.2f} | "
                  f"{b * 1e3:.2f} | {r:.2f} |", flush=True)


if __name__ == "__main__":
    main()
