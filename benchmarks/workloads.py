"""The workloads of issue 5, each written once for rtorch-py and once for PyTorch.

A workload's `setup(quick)` builds its inputs (the same values for both
engines) and returns `(ours, theirs)`: two zero-argument callables doing one
iteration of identical work. `per` says how many units one call is worth
(the scaling rows report time per op, not per chain).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

import rtorch_py as rt


@dataclass
class Workload:
    name: str
    label: str
    setup: Callable[[bool], tuple]
    target: float | None = None   # ratio rtorch/PyTorch to meet (None: no ratio target)
    per: int = 1                   # units per call
    unit: str = "iter"


def _pair(arr: np.ndarray, requires_grad: bool = False) -> tuple:
    """The same float32 values as an rtorch tensor and a torch tensor."""
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    return (rt.torch_tensor(arr.copy(), requires_grad=requires_grad),
            torch.tensor(arr.copy(), requires_grad=requires_grad))


# --------------------------------------------------------------------------
# Tiny op: 2 * x on a 1-element tensor that requires grad.

def tiny_fwd(quick: bool) -> tuple:
    x, tx = _pair(np.ones(1), requires_grad=True)
    return (lambda: 2 * x), (lambda: 2 * tx)


def tiny_fwd_bwd(quick: bool) -> tuple:
    x, tx = _pair(np.ones(1), requires_grad=True)
    return (lambda: (2 * x).backward()), (lambda: (2 * tx).backward())


# --------------------------------------------------------------------------
# Custom function: the seeds' exp2, R-style vs torch.autograd.Function.

def _exp2_forward(ctx, i):
    result = i.exp()
    ctx.save_for_backward(result=result)
    return result


def _exp2_backward(ctx, grad_output):
    return {"i": grad_output * ctx.saved_variable.result}


exp2 = rt.autograd_function(forward=_exp2_forward, backward=_exp2_backward)


class TorchExp2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


def custom_fn(quick: bool) -> tuple:
    x, tx = _pair(np.ones(1), requires_grad=True)
    return (lambda: exp2(x).backward()), (lambda: TorchExp2.apply(tx).backward())


# --------------------------------------------------------------------------
# Chains of elementwise ops.

def _chain100(x):
    y = x
    for i in range(33):            # 99 elementwise ops, then a sum: 100 ops
        y = (y * 0.9 + 0.1).tanh()
    return y.sum()


def chain100(quick: bool) -> tuple:
    x, tx = _pair(np.linspace(-1, 1, 10), requires_grad=True)
    return (lambda: _chain100(x).backward()), (lambda: _chain100(tx).backward())


def _scaled_chain(x, n: int):
    y = x
    for i in range(n // 2):
        y = y * 1.0001 + 0.0001
    return y


SCALING_LENGTHS = (10, 1_000, 100_000)
QUICK_SCALING_LENGTHS = (10, 100, 1_000)


def scaling(n: int) -> Callable[[bool], tuple]:
    def setup(quick: bool) -> tuple:
        x, tx = _pair(np.ones(1), requires_grad=True)
        return (lambda: _scaled_chain(x, n).backward()), (lambda: _scaled_chain(tx, n).backward())
    return setup


# --------------------------------------------------------------------------
# MLP training step, 64x784 -> 256 -> 10, plain SGD as in R torch's
# "using autograd" article.

def _mlp_step(X, Y, params, no_grad, lr=1e-3):
    w1, b1, w2, b2 = params
    h = (X.mm(w1) + b1).clamp(min=0)
    out = h.mm(w2) + b2
    loss = ((out - Y) ** 2).mean()
    loss.backward()
    with no_grad():
        for p in params:
            p.sub_(lr * p.grad)
            p.grad.zero_()


def mlp(quick: bool) -> tuple:
    rng = np.random.default_rng(0)
    n, d_in, d_h, d_out = 64, 784, 256, 10
    X, tX = _pair(rng.standard_normal((n, d_in)))
    Y, tY = _pair(rng.standard_normal((n, d_out)))
    ours, theirs = [], []
    for shape in ((d_in, d_h), (d_h,), (d_h, d_out), (d_out,)):
        a, b = _pair(rng.standard_normal(shape) * 0.05, requires_grad=True)
        ours.append(a)
        theirs.append(b)
    return ((lambda: _mlp_step(X, Y, ours, rt.with_no_grad)),
            (lambda: _mlp_step(tX, tY, theirs, torch.no_grad)))


# --------------------------------------------------------------------------
# Matmul-bound: 512x2048 @ 2048x2048, forward + backward (grads set to None
# each step, as zero_grad(set_to_none=True) does).

def matmul(quick: bool) -> tuple:
    rng = np.random.default_rng(1)
    m, k = (64, 128) if quick else (512, 2048)
    A, tA = _pair(rng.standard_normal((m, k)), requires_grad=True)
    B, tB = _pair(rng.standard_normal((k, k)) / np.sqrt(k), requires_grad=True)
    G, tG = _pair(np.ones((m, k)))

    def ours():
        A.mm(B).backward(G)
        A.grad = B.grad = None

    def theirs():
        tA.mm(tB).backward(tG)
        tA.grad = tB.grad = None
    return ours, theirs


def workloads(quick: bool) -> list[Workload]:
    from .functional_workloads import functional_workloads  # (they import this module)
    from .nn_workloads import nn_workloads
    from .random_rows import random_rows
    lengths = QUICK_SCALING_LENGTHS if quick else SCALING_LENGTHS
    return [
        Workload("tiny", "tiny op `2 * x` (1 elt, grad), forward", tiny_fwd, 0.5),
        Workload("tiny_bwd", "tiny op `2 * x`, forward + backward", tiny_fwd_bwd, 0.5),
        Workload("custom_fn", "custom function exp2, fwd + bwd", custom_fn, 0.4),
        Workload("chain100", "100-op chain, fwd + bwd", chain100, 0.5),
        Workload("mlp", "MLP step 64x784x256x10 (SGD)", mlp, 0.8),
        Workload("matmul", "matmul " + ("64x128 @ 128x128" if quick else "512x2048 @ 2048x2048")
                 + ", fwd + bwd", matmul, 1.1),
    ] + [Workload(f"scaling_{n}", f"scaling: chain of {n:,} ops, fwd + bwd", scaling(n),
                  None, per=n, unit="op") for n in lengths] + nn_workloads(quick) + \
        random_rows(quick, runner=True) + functional_workloads()
