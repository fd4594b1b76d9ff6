"""Primitives of the nn layers (`rtorch_py.nn`) that are ops of their own.

Declared like every op (see docs/adding-an-op.md): forward beside derivative,
the derivative written with tensor ops so higher orders come for free.
"""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from .operands import _fdata
from .recording import formula, record
from .registry import op
from .samples import nn_functional as S

_erf = np.frompyfunc(math.erf, 1, 1)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


@formula
def ErfBackward0(n, g, x):
    return (g * _TWO_OVER_SQRT_PI * (-(x * x)).exp(),)


@op(samples=S.float_unary)
def erf(self: Tensor) -> Tensor:
    d = _fdata(self)
    return record(np.asarray(_erf(d), dtype=d.dtype), ErfBackward0, (self,), (self,))


@formula
def SiluBackward0(n, g, x):
    s = x.sigmoid()
    return (g * (s * (x * (1 - s) + 1)),)


# R torch has no torch_silu (only nnf_silu, in rtorch_py.nn): no R form, so no
# generated samples; tests/test_nn.py checks it against PyTorch, second order too.
@op(function=False, method=False, torch_name="nn.functional.silu")
def silu(self: Tensor) -> Tensor:
    # x / (1 + exp(-x)) in double precision, rounded once (as libtorch's result is)
    d = _fdata(self)
    a = d.astype(np.float64)
    return record((a / (1.0 + np.exp(-a))).astype(d.dtype), SiluBackward0, (self,), (self,))
