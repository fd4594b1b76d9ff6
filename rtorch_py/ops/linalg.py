"""Linear algebra: matrix products."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from .samples import linalg as S
from .operands import _shape
from .recording import formula, record, sum_to
from .registry import op


# ==========================================================================
# Linear algebra

@formula(arrays=True)
def MmBackward0(n, g, a, b):
    return (g @ b.T if n.needs(0) else None), (a.T @ g if n.needs(1) else None)


@op(samples=S.mm)
def mm(self: Tensor, mat2: Tensor) -> Tensor:
    if self.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: both arguments must be 2-d matrices, got {self.ndim}-d "
                           f"{_shape(self.shape)} and {mat2.ndim}-d {_shape(mat2.shape)}")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]}): the columns of the first must equal the rows of "
            "the second")
    if self.data.dtype is not mat2.data.dtype:
        _dtype_mismatch(self, mat2)
    out = np.matmul(self.data, mat2.data)
    return record(out, MmBackward0, (self, mat2), (self if mat2._rg else None, mat2 if self._rg else None))


@formula
def MatmulBackward0(n, g, a, b):
    if a.ndim == 1 and b.ndim == 1:
        return (g * b if n.needs(0) else None), (g * a if n.needs(1) else None)
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    b2 = b.unsqueeze(-1) if b.ndim == 1 else b
    g2 = g.unsqueeze(-2) if a.ndim == 1 else g
    g2 = g2.unsqueeze(-1) if b.ndim == 1 else g2
    ga = gb = None
    if n.needs(0):
        ga = sum_to(g2.matmul(b2.transpose(-1, -2)), a2.shape)
        ga = ga.squeeze(0) if a.ndim == 1 else ga
    if n.needs(1):
        gb = sum_to(a2.transpose(-1, -2).matmul(g2), b2.shape)
        gb = gb.squeeze(-1) if b.ndim == 1 else gb
    return ga, gb


@op(operators=("__matmul__",), samples=S.matmul)
def matmul(self: Tensor, other: Tensor) -> Tensor:
    if self.ndim == 0 or other.ndim == 0:
        raise RuntimeError("matmul: both arguments need at least 1 dimension, got a 0-d tensor")
    if self.data.dtype is not other.data.dtype:
        _dtype_mismatch(self, other)
    try:
        out = np.matmul(self.data, other.data)
    except ValueError:
        raise RuntimeError(
            f"matmul: shapes {_shape(self.shape)} and {_shape(other.shape)} don't match: the last "
            "dim of the first must equal the second-to-last (or only) dim of the second")\
            from None
    if self.ndim == 2 and other.ndim == 2:
        return record(out, MmBackward0, (self, other), (self if other._rg else None, other if self._rg else None))
    name = ("DotBackward0" if self.ndim == 1 and other.ndim == 1 else
            "MvBackward0" if self.ndim == 2 and other.ndim == 1 else None)
    return record(out, MatmulBackward0, (self, other), (self, other), name=name)


def _dtype_mismatch(a: Tensor, b: Tensor) -> None:
    raise RuntimeError(f"expected both matrices to have the same dtype, but got "
                       f"{a.dtype.r_name} and {b.dtype.r_name}; convert one first, e.g. "
                       "x.to(dtype=y.dtype)")


@op(samples=S.dot)
def dot(self: Tensor, tensor: Tensor) -> Tensor:
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError("dot: 1D tensors expected, but got "
                           f"{self.ndim}D and {tensor.ndim}D tensors")
    return matmul(self, tensor)


