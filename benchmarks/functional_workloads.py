"""Issue 22's rows: the functional API beside torch.func, each on identical values.

`hessian100`: the Hessian of a 100-parameter scalar function (every parameter
coupled to its neighbours); `jacobian_mlp`: the 64x64 Jacobian of a 64 -> 64 -> 64
tanh MLP w.r.t. its input. PyTorch's side is torch.func (hessian, jacrev: vmap'd);
ours `vectorize = TRUE` (one batched walk) and, as the `_loop` rows, one walk per row.
"""
from __future__ import annotations

import numpy as np
import torch

import rtorch_py as rt

from .workloads import Workload, _pair


def _coupled(x):
    return (x.sin() * x ** 2).sum(dim=-1) + (x[..., :-1] * x[..., 1:]).sum(dim=-1)


def hessian100(vectorize: bool):
    def setup(quick: bool) -> tuple:
        x, tx = _pair(np.random.default_rng(3).standard_normal(10 if quick else 100))
        theirs = torch.func.hessian(_coupled)
        return (lambda: rt.autograd_hessian(_coupled, x, vectorize=vectorize)), \
            (lambda: theirs(tx))
    return setup


def jacobian_mlp(vectorize: bool):
    def setup(quick: bool) -> tuple:
        rng = np.random.default_rng(4)
        d = 8 if quick else 64
        (w1, tw1), (w2, tw2) = (_pair(rng.standard_normal((d, d)) / np.sqrt(d))
                                for _ in range(2))
        (b1, tb1), (b2, tb2) = (_pair(rng.standard_normal(d) * 0.1) for _ in range(2))
        x, tx = _pair(rng.standard_normal(d))

        def ours_mlp(x):
            return (x.matmul(w1) + b1).tanh().matmul(w2) + b2

        def torch_mlp(x):
            return (x.matmul(tw1) + tb1).tanh().matmul(tw2) + tb2
        theirs = torch.func.jacrev(torch_mlp)
        return (lambda: rt.autograd_jacobian(ours_mlp, x, vectorize=vectorize)), \
            (lambda: theirs(tx))
    return setup


def functional_workloads() -> list[Workload]:
    return [
        Workload("hessian100", "autograd_hessian, 100 parameters (vectorize) vs "
                 "torch.func.hessian", hessian100(True)),
        Workload("hessian100_loop", "autograd_hessian, 100 parameters, a walk per row",
                 hessian100(False)),
        Workload("jacobian_mlp", "autograd_jacobian, 64->64->64 MLP (vectorize) vs "
                 "torch.func.jacrev", jacobian_mlp(True)),
        Workload("jacobian_mlp_loop", "autograd_jacobian, 64->64->64 MLP, a walk per row",
                 jacobian_mlp(False)),
    ]
