"""The sparse layouts: COO (`torch_sparse_coo_tensor()`, `x$to_sparse()`) and 2-d
CSR (`x$to_sparse_csr()`), with PyTorch's semantics: their tensors and their ops.

A sparse tensor is a `Tensor` subclass that holds its parts instead of one
array: for COO the indices (int64, sparse_dim x nnz, 0-based), the values (a
tensor, nnz x dense dims) and the size; for CSR the compressed row offsets,
the column of each value and the values. Dense tensors pay nothing for it:
their `layout` is a class constant, and ops look at their operands' layouts
only once a sparse tensor exists (ops/dispatch.py).

What works on them: conversions (`to_dense`, `to_sparse`, `to_sparse_csr`,
`coalesce`), their parts (`indices`, `values`, `crow_indices`, `col_indices`),
`index_select` (so R's `head()`/`tail()`: its implementation for COO tensors,
registered on the op), printing as R torch prints them, and autograd through
construction (rtorch_py/sparse.py), `to_dense()`, `values()`, `coalesce()`,
`to_sparse()` and `index_select()`. The gradient that flows into a sparse
tensor is dense (an array of its shape), so the engine needs no sparse
arithmetic; a sparse leaf's `.grad` is therefore a dense tensor (PyTorch's is
sparse, with the same values). Any other op refuses a sparse operand with a
NotImplementedError that names the op and says to call `to_dense()` first.

These ops are methods only (`x$to_dense()`, `x.coalesce()`), as in R torch;
every tensor has them (a dense tensor's `to_dense()` is itself). The
conversions from dense tensors have samples (the generated tests compare
sparse results through their dense values and layout); the rest need sparse
operands, which samples cannot describe: tests/test_sparse.py checks them
against PyTorch.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..formals import r_formals
from ..engine import NEW_VERSION, version_box
from ..printing import format_sparse as _format_coo
from ..printing import format_tensor
from ..tensor import (Layout, Tensor, _dim, sparse_coo, sparse_csr, special_tensors_exist,
                      strided, wrap)
from .dispatch import implements, op, running_op
from .indexing import IndexSelectBackward0, _index_add_into, index_select_args
from .recording import formula, record
from .samples import sparse as S

_new = object.__new__


# --------------------------------------------------------------------------
# The representation


class SparseTensor(Tensor):
    """A COO or CSR tensor. Its parts are in `_ind` (COO) or `_crow`/`_col`
    (CSR), `_vals`, `_size`; `data` (a dense tensor's array) does not exist."""

    layout: Layout = sparse_coo

    @property
    def data(self) -> np.ndarray:  # type: ignore[override]
        raise NotImplementedError(_unsupported_message(self, _calling_op()))

    @property
    def device(self) -> str:
        return self._vals.device

    def memory_order(self) -> str:
        return "C"  # (its gradient is dense: see the README's known differences)

    @data.setter
    def data(self, value: Any) -> None:
        raise NotImplementedError(_unsupported_message(self, "assigning data"))

    # -- what a dense tensor reads from its array --------------------------
    @property
    def shape(self) -> tuple:
        return self._size

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return self._size
        return self._size[_dim(dim, len(self._size))]

    @property
    def dtype(self) -> dtype:
        return self._vals.dtype

    @property
    def ndim(self) -> int:
        return len(self._size)

    def dim(self) -> int:
        return len(self._size)

    def numel(self) -> int:
        return int(np.prod(self._size, dtype=np.int64))

    def is_floating_point(self) -> bool:
        return self._vals.is_floating_point()

    def is_complex(self) -> bool:
        return self._vals.is_complex()

    def element_size(self) -> int:
        return self._vals.element_size()

    def __len__(self) -> int:
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def _type_string(self) -> str:
        return "Sparse" + super()._type_string()

    @property
    def grad(self) -> "Tensor | None":
        return self._grad

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        # (dense: the gradient that reaches a sparse tensor; see the module docstring)
        if value is not None and tuple(value.shape) != self._size:
            raise RuntimeError(
                f"assigned grad has data of a different size: the tensor has shape "
                f"[{', '.join(map(str, self._size))}] but the gradient has shape "
                f"[{', '.join(map(str, value.shape))}]")
        self._grad = value

    def _alias(self) -> "SparseTensor":
        out = _copy_parts(self)
        out._version = version_box(self)
        return out

    def item(self) -> Any:
        raise NotImplementedError(_unsupported_message(self, "item"))

    def numpy(self) -> np.ndarray:
        raise NotImplementedError(_unsupported_message(self, "numpy"))

    as_array = numpy

    def tolist(self) -> Any:
        raise NotImplementedError(_unsupported_message(self, "tolist"))

    def __repr__(self) -> str:
        return format_sparse(self).rstrip("\n")

    __str__ = __repr__


def _copy_parts(x: SparseTensor) -> SparseTensor:
    """A new sparse tensor with x's parts (shared) and no history."""
    out = _new(SparseTensor)
    out.__dict__.update({k: v for k, v in x.__dict__.items()
                         if k in ("layout", "_size", "_ind", "_crow", "_col", "_vals",
                                  "_coalesced")})
    out._rg, out.grad_fn, out._version = False, None, NEW_VERSION
    return out


def _make(layout: Layout, size: tuple, values: np.ndarray, coalesced: bool = False,
          indices: np.ndarray | None = None, crow: np.ndarray | None = None,
          col: np.ndarray | None = None) -> SparseTensor:
    special_tensors_exist()  # (ops now look at their operands' layouts)
    out = _new(SparseTensor)
    out._rg, out.grad_fn, out._version = False, None, NEW_VERSION
    if layout is not sparse_coo:
        out.layout = layout
        out._crow, out._col = crow, col
    else:
        out._ind = indices
    out._vals = wrap(values)
    out._size = tuple(int(s) for s in size)
    out._coalesced = coalesced
    return out


def _sparse_dim(x: SparseTensor) -> int:
    return x._ind.shape[0] if x.layout is sparse_coo else 2


# --------------------------------------------------------------------------
# What a dense op says when it meets a sparse tensor


def _unsupported_message(x: SparseTensor, what: str | None) -> str:
    op = f"{what}()" if what and not what.startswith("assigning") else (what or "this op")
    return (f"{op} is not supported for sparse tensors (layout {x.layout!r}); "
            "convert the tensor with to_dense() first")


def _calling_op() -> str | None:
    """The op whose public function was called on a sparse tensor (dispatch.py),
    else the function that asked for its array."""
    name = running_op() or sys._getframe(2).f_code.co_name
    return name.lstrip("_") if name.isidentifier() else None


# --------------------------------------------------------------------------
# To and from dense


def _coo_dense(x: SparseTensor) -> np.ndarray:
    """The dense array of a COO tensor (duplicate entries summed)."""
    vals = x._vals.data
    out = np.zeros(x._size, dtype=vals.dtype)
    if vals.shape[0]:
        np.add.at(out, tuple(x._ind), vals)
    return out


def _csr_to_coo_indices(crow: np.ndarray, col: np.ndarray) -> np.ndarray:
    rows = np.repeat(np.arange(crow.size - 1, dtype=np.int64), np.diff(crow))
    return np.stack([rows, col])


def _dense_array(x: SparseTensor) -> np.ndarray:
    if x.layout is sparse_coo:
        return _coo_dense(x)
    out = np.zeros(x._size, dtype=x._vals.data.dtype)
    rows, cols = _csr_to_coo_indices(x._crow, x._col)
    out[rows, cols] = x._vals.data
    return out


def _mask(x: SparseTensor) -> np.ndarray:
    """Where x stores values, as a dense boolean array (whole dense slices)."""
    m = np.zeros(x._size[:_sparse_dim(x)], dtype=bool)
    idx = x._ind if x.layout is sparse_coo else _csr_to_coo_indices(x._crow, x._col)
    m[tuple(idx)] = True
    return m.reshape(m.shape + (1,) * (len(x._size) - m.ndim))


@formula(arrays=True)
def ToDenseBackward0(n, g, mask):
    # PyTorch's gradient for a sparse input is masked to its stored entries
    return (g * mask,)


@op(function=False, forward="linear")
def to_dense(self: Tensor, dtype: Any = None, masked_grad: Any = None) -> Tensor:
    if self.layout is strided:
        return self if dtype is None else self.to(dtype=dtype)
    out = record(wrap(_dense_array(self)), ToDenseBackward0, (self,), (_mask(self),))
    return out if dtype is None else out.to(dtype=dtype)


@formula(arrays=True)
def ToSparseBackward0(n, g):
    # (to_sparse() without sparse_dim records it as ToSparseBackward1, to_sparse_csr() as
    # ToSparseCsrBackward0)
    return (g,)


def _dense_to_coo(arr: np.ndarray, sparse_dim: int) -> tuple:
    """(indices, values) of the slices of arr (split after sparse_dim dims) that
    are not all zero, in row-major order."""
    lead = arr.shape[:sparse_dim]
    flat = arr.reshape((int(np.prod(lead, dtype=np.int64)),) + arr.shape[sparse_dim:])
    keep = flat.reshape(flat.shape[0], -1).any(axis=1) if flat.ndim > 1 else flat != 0
    where = np.flatnonzero(keep)
    indices = np.array(np.unravel_index(where, lead), dtype=np.int64).reshape(sparse_dim, -1)
    return indices, flat[where]


@op(function=False, samples=S.to_sparse)
@r_formals("self, layout = NULL, sparse_dim, blocksize = NULL, dense_dim = NULL")
def to_sparse(self: Tensor, sparse_dim: Any = None, layout: Any = None, blocksize: Any = None,
              dense_dim: Any = None) -> Tensor:
    """COO from a dense tensor (its non-zero entries: slices when `sparse_dim` or
    `dense_dim` leaves trailing dims dense) or from CSR."""
    if layout is not None and layout is not sparse_coo:
        if layout is sparse_csr:
            return to_sparse_csr(self, dense_dim)
        raise NotImplementedError(f"to_sparse(): layout {layout!r} is not supported; "
                                  "use torch_sparse_coo() or x$to_sparse_csr()")
    if blocksize is not None:
        raise NotImplementedError("to_sparse(): blocksize (BSR/BSC layouts) is not supported")
    ndim = self.ndim
    if sparse_dim is not None and dense_dim is not None:
        raise RuntimeError("to_sparse(): give sparse_dim or dense_dim, not both")
    sd = ndim if sparse_dim is None else int(sparse_dim)
    if dense_dim is not None:
        sd = ndim - int(dense_dim)
    if not 0 <= sd <= ndim:
        raise RuntimeError(f"to_sparse(): sparse_dim must be in [0, {ndim}] for a tensor of "
                           f"{ndim} dims, got {sd}")
    node = "ToSparseBackward0" if sparse_dim is not None else "ToSparseBackward1"
    if self.layout is sparse_coo:
        if sd != _sparse_dim(self):
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim "
                               "argument !=self.sparse_dim() is not supported")
        return self
    if self.layout is sparse_csr:
        out = _make(sparse_coo, self._size, self._vals.data,
                    indices=_csr_to_coo_indices(self._crow, self._col), coalesced=True)
        return record(out, ToSparseBackward0, (self,), name=node)
    indices, values = _dense_to_coo(self.data, sd)
    return record(_make(sparse_coo, self.shape, values, indices=indices, coalesced=True),
                  ToSparseBackward0, (self,), name=node)


@op(function=False, samples=S.to_sparse_csr)
def to_sparse_csr(self: Tensor, dense_dim: Any = None) -> Tensor:
    """Compressed sparse rows of a 2-d tensor (dense or COO)."""
    if dense_dim:
        raise NotImplementedError("to_sparse_csr(): dense dims are not supported (CSR here "
                                  "is 2-d with scalar values)")
    if self.layout is sparse_csr:
        return self
    if self.ndim != 2:
        raise NotImplementedError(f"to_sparse_csr(): only 2-d tensors are supported here, "
                                  f"got {self.ndim} dims")
    if self.layout is sparse_coo:
        c = coalesce(self)
        indices, values = c._ind, c._vals.data
    else:
        indices, values = _dense_to_coo(self.data, 2)
    crow = np.zeros(self.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(indices[0], minlength=self.shape[0]), out=crow[1:])
    out = _make(sparse_csr, self.shape, values, crow=crow, col=indices[1].copy())
    return record(out, ToSparseBackward0, (self,), name="ToSparseCsrBackward0")


# --------------------------------------------------------------------------
# sampled_addmm: beta * self + alpha * (mat1 @ mat2), computed only where the
# CSR tensor self stores values (the result has its pattern)


@formula
def SparseSampledAddmmBackward0(n, g, mask, mat1, mat2, beta, alpha):
    sampled = g * wrap(mask)  # (the gradient that reaches the pattern, dense)
    return (sampled * beta if n.needs(0) else None,
            sampled.matmul(mat2.t()) * alpha if n.needs(1) else None,
            mat1.t().matmul(sampled) * alpha if n.needs(2) else None)


@op(function=False, method=False)
def sparse_sampled_addmm(self: Tensor, mat1: Tensor, mat2: Tensor, beta: Any = 1,
                         alpha: Any = 1) -> Tensor:
    if self.layout is not sparse_csr:
        raise RuntimeError(f"sampled_addmm: Expected self to be a sparse CSR tensor (made with "
                           f"x$to_sparse_csr()), got layout {self.layout!r}")
    m1, m2 = mat1.data, mat2.data
    if m1.ndim != 2 or m2.ndim != 2 or m1.shape[1] != m2.shape[0] or \
            (m1.shape[0], m2.shape[1]) != self._size:
        raise RuntimeError(f"sampled_addmm: mat1 {list(m1.shape)} @ mat2 {list(m2.shape)} must "
                           f"give self's shape {list(self._size)}")
    rows, cols = _csr_to_coo_indices(self._crow, self._col)
    products = np.einsum("ij,ij->i", m1[rows], m2[:, cols].T)
    values = (beta * self._vals.data + alpha * products).astype(self._vals.data.dtype)
    out = _make(sparse_csr, self._size, values, crow=self._crow.copy(), col=self._col.copy())
    return record(out, SparseSampledAddmmBackward0, (self, mat1, mat2),
                  (_mask(self), mat1, mat2, beta, alpha))


# --------------------------------------------------------------------------
# Coalescing and the parts


@formula(arrays=True)
def CoalesceBackward0(n, g):
    return (g,)


@op(function=False)
def coalesce(self: Tensor) -> Tensor:
    """Entries sorted by index, duplicates summed (the tensor itself when it is)."""
    _need_coo(self, "coalesce")
    if self._coalesced:
        return self
    idx, vals = self._ind, self._vals.data
    sd = idx.shape[0]
    if idx.shape[1] and sd:
        flat = np.ravel_multi_index(tuple(idx), self._size[:sd])
        keys, inverse = np.unique(flat, return_inverse=True)
        summed = np.zeros((keys.size,) + vals.shape[1:], dtype=vals.dtype)
        np.add.at(summed, inverse.reshape(-1), vals)
        new_idx = np.array(np.unravel_index(keys, self._size[:sd]), dtype=np.int64)
        new_idx = new_idx.reshape(sd, -1)
    elif sd == 0 and idx.shape[1]:  # every entry is the one position
        summed, new_idx = vals.sum(axis=0, keepdims=True), idx[:, :1]
    else:
        summed, new_idx = vals, idx
    out = _make(sparse_coo, self._size, summed, indices=new_idx, coalesced=True)
    return record(out, CoalesceBackward0, (self,))


@op(function=False, differentiable=False)
def is_coalesced(self: Tensor) -> bool:
    _need_coo(self, "is_coalesced")
    return bool(self._coalesced)


def _need_coo(x: Tensor, what: str) -> None:
    if x.layout is not sparse_coo:
        name = "SparseCsr" if x.layout is sparse_csr else "Strided"
        raise RuntimeError(f"{what} expected sparse coordinate tensor layout but got {name}")


# R torch gives a COO tensor's indices 1-based (its crow/col indices stay 0-based)
@op(function=False, differentiable=False, returns_indices=True)
def indices(self: Tensor) -> Tensor:
    _need_coo(self, "indices")
    if not self._coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return wrap(self._ind)


# The raw parts, coalesced or not (0-based in R too, as R torch gives them), no history
@op("_indices", function=False, differentiable=False)
def raw_indices(self: Tensor) -> Tensor:
    _need_coo(self, "_indices")
    return wrap(self._ind)


@op("_values", function=False, differentiable=False)
def raw_values(self: Tensor) -> Tensor:
    _need_coo(self, "_values")
    return self._vals.detach()


@formula
def ValuesBackward0(n, g, flat, shape, sparse_dim):
    rows = (int(np.prod(shape[:sparse_dim], dtype=np.int64)),) + tuple(shape[sparse_dim:])
    return (_index_add_into(g, rows, 0, flat).reshape(shape),)


@op(function=False)
def values(self: Tensor) -> Tensor:
    if self.layout is sparse_coo:
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        idx, sd = self._ind, self._ind.shape[0]
    elif self.layout is sparse_csr:
        idx, sd = _csr_to_coo_indices(self._crow, self._col), 2
    else:
        raise RuntimeError("values expected sparse tensor layout but got Strided")
    flat = np.ravel_multi_index(tuple(idx), self._size[:sd]) if idx.shape[1] and sd else \
        np.zeros(idx.shape[1], dtype=np.int64)
    out = wrap(self._vals.data)
    out._version = version_box(self._vals)
    return record(out, ValuesBackward0, (self,), (flat, self._size, sd))


def _need_csr(x: Tensor, what: str) -> None:
    if x.layout is not sparse_csr:
        name = "Sparse" if x.layout is sparse_coo else "Strided"
        raise RuntimeError(f"{what} expected sparse row compressed tensor layout but got "
                           f"{name}")


@op(function=False, differentiable=False)
def crow_indices(self: Tensor) -> Tensor:
    _need_csr(self, "crow_indices")
    return wrap(self._crow)


@op(function=False, differentiable=False)
def col_indices(self: Tensor) -> Tensor:
    _need_csr(self, "col_indices")
    return wrap(self._col)


@op(function=False, differentiable=False)
def sparse_dim(self: Tensor) -> int:
    return 0 if self.layout is strided else _sparse_dim(self)


@op(function=False, differentiable=False)
def dense_dim(self: Tensor) -> int:
    return 0 if self.layout is strided else self.ndim - _sparse_dim(self)


@op("_nnz", function=False, differentiable=False)
def nnz(self: Tensor) -> int:
    if self.layout is strided:
        raise RuntimeError("_nnz expected sparse tensor layout but got Strided")
    return int(self._vals.shape[0])


@op(function=False, differentiable=False)
def is_sparse(self: Tensor) -> bool:
    return self.layout is sparse_coo


@op(function=False, differentiable=False)
def is_sparse_csr(self: Tensor) -> bool:
    return self.layout is sparse_csr


# --------------------------------------------------------------------------
# Ops PyTorch runs on sparse tensors


@implements("index_select", sparse_coo)
def index_select_coo(self: SparseTensor, dim: int, index: Any) -> Tensor:
    """index_select on a COO tensor: a COO result; its gradient is the dense
    one's (IndexSelectBackward0)."""
    dim, idx = index_select_args(self, dim, index)
    ind, vals = self._ind, self._vals.data
    sd = ind.shape[0]
    size = list(self._size)
    size[dim] = idx.size
    if dim >= sd:  # a dense dim: select within every value
        out = _make(sparse_coo, size, np.take(vals, idx, axis=dim - sd + 1), indices=ind.copy(),
                    coalesced=self._coalesced)
    else:
        # each entry appears once per position of idx that names its index along dim
        hits = ind[dim][None, :] == idx[:, None]
        pos, entry = np.nonzero(hits)
        new = ind[:, entry].copy()
        new[dim] = pos
        coalesced = self._coalesced and bool(np.all(np.diff(idx) > 0))
        out = _make(sparse_coo, size, vals[entry], indices=new, coalesced=coalesced)
    return record(out, IndexSelectBackward0, (self,), (self._size, dim, idx))


# --------------------------------------------------------------------------
# Printing


def format_sparse(x: SparseTensor, n: int = 30) -> str:
    """What R torch prints: libtorch's sparse form for COO; CSR as its dense
    values (R torch densifies it before printing)."""
    name = x.grad_fn.name if x.grad_fn is not None else None
    rg = x._rg and name is None
    if x.layout is sparse_csr:
        return format_tensor(_dense_array(x), x.dtype.name, rg, name, n=n)
    return _format_coo(x._ind, x._vals.data, x.dtype.name, x._size, rg, name, n=n)
