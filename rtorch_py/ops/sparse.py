"""Sparse tensors' methods, declared in the registry (their implementations and
the representation are in `rtorch_py/sparse.py`).

They are methods only (`x$to_dense()`, `x.coalesce()`), as in R torch; every
tensor has them (a dense tensor's `to_dense()` is itself). The conversions from
dense tensors have samples (the generated tests compare sparse results through
their dense values and layout); the rest need sparse operands, which samples
cannot describe: tests/test_sparse.py checks them against PyTorch.
"""
from __future__ import annotations

from typing import Any

from .. import sparse as _sp
from ..tensor import Tensor
from .registry import op
from .samples import sparse as S


@op(function=False)
def to_dense(self: Tensor, dtype: Any = None, masked_grad: Any = None) -> Tensor:
    return _sp.to_dense(self, dtype, masked_grad)


@op(function=False, samples=S.to_sparse)
def to_sparse(self: Tensor, sparse_dim: Any = None, layout: Any = None, blocksize: Any = None,
              dense_dim: Any = None) -> Tensor:
    return _sp.to_sparse(self, sparse_dim, layout, blocksize, dense_dim)


@op(function=False, samples=S.to_sparse_csr)
def to_sparse_csr(self: Tensor, dense_dim: Any = None) -> Tensor:
    return _sp.to_sparse_csr(self, dense_dim)


@op(function=False)
def coalesce(self: Tensor) -> Tensor:
    return _sp.coalesce(self)


@op(function=False, differentiable=False)
def is_coalesced(self: Tensor) -> bool:
    return _sp.is_coalesced(self)


# R torch gives a COO tensor's indices 1-based (its crow/col indices stay 0-based)
@op(function=False, differentiable=False, returns_indices=True)
def indices(self: Tensor) -> Tensor:
    return _sp.indices(self)


@op(function=False)
def values(self: Tensor) -> Tensor:
    return _sp.values(self)


@op(function=False, differentiable=False)
def crow_indices(self: Tensor) -> Tensor:
    return _sp.crow_indices(self)


@op(function=False, differentiable=False)
def col_indices(self: Tensor) -> Tensor:
    return _sp.col_indices(self)


@op(function=False, differentiable=False)
def sparse_dim(self: Tensor) -> int:
    return _sp.sparse_dim(self)


@op(function=False, differentiable=False)
def dense_dim(self: Tensor) -> int:
    return _sp.dense_dim(self)


@op("_nnz", function=False, differentiable=False)
def _nnz(self: Tensor) -> int:
    return _sp.nnz(self)


@op(function=False, differentiable=False)
def is_sparse(self: Tensor) -> bool:
    return _sp.is_sparse(self)


@op(function=False, differentiable=False)
def is_sparse_csr(self: Tensor) -> bool:
    return _sp.is_sparse_csr(self)


# The raw parts, coalesced or not (0-based in R too, as R torch gives them), no history
@op("_indices", function=False, differentiable=False)
def _indices(self: Tensor) -> Tensor:
    return _sp.raw_indices(self)


@op("_values", function=False, differentiable=False)
def _values(self: Tensor) -> Tensor:
    return _sp.raw_values(self)
