"""The sparse layouts: COO (`torch_sparse_coo_tensor()`, `x$to_sparse()`) and the
compressed ones, CSR, CSC, BSR and BSC (`x$to_sparse_csr()`, `x$to_sparse_csc()`,
`x$to_sparse_bsr(blocksize)`, `x$to_sparse_bsc(blocksize)`: batch dims, two sparse
dims, dense dims), with PyTorch's semantics: their tensors and ops.

A sparse tensor is a `Tensor` subclass that holds its parts instead of one
array: for COO the indices (int64, sparse_dim x nnz, 0-based), the values (a
tensor, nnz x dense dims) and the size; for a compressed layout the compressed
indices (`crow_indices` of CSR/BSR, `ccol_indices` of CSC/BSC: where each row's
or column's entries start), the plain ones (`col_indices`, `row_indices`: one
per stored value or block) and the values (nnz x dense dims, nnz x block rows x
block cols x dense dims for BSR/BSC), each with the batch dims in front (every
batch holds as many values). Dense tensors pay nothing for it:
their `layout` is a class constant, and ops look at their operands' layouts
only once a sparse tensor exists (ops/dispatch.py).

What works on them: conversions between every two layouts (`to_dense`,
`to_sparse`, `to_sparse_csr`/`csc`/`bsr`/`bsc` and their private `_` forms,
`coalesce`), their parts (`indices`, `values`, `crow_indices`, `col_indices`,
`ccol_indices`, `row_indices`), `sparse_mask`, `smm`, `sspaddmm`, the resizes,
`to_mkldnn()` (an MKLDNN tensor: its values are the whole tensor, `to_dense()` only),
`index_select` (so R's `head()`/`tail()`: its implementation for COO tensors,
registered on the op), printing as R torch prints them, and autograd through
construction (rtorch_py/sparse.py), `to_dense()`, `values()`, `coalesce()`,
every conversion, `sparse_mask()` and `index_select()` (`smm()` and `sspaddmm()`
have no derivative, as in PyTorch). The gradient that flows into a sparse
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
from typing import Any, Callable

import numpy as np

from ..engine import NEW_VERSION, bump_version, version_box
from ..formals import r_formals
from ..modes import LAYOUT, switch_on
from ..printing import format_sparse as _format_coo
from ..printing import format_tensor
from ..tensor import (Layout, Tensor, as_dtype, bfloat16, float16, float32, int8, mkldnn,
                      sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr,
                      strided, uint8, wrap, wrap_dim)
from .dispatch import implements, op, running_op
from .indexing import IndexSelectBackward0, index_add_into, index_select_args
from .linalg import NoDerivative
from .recording import formula, record
from .samples import sparse as S

_new = object.__new__


# --------------------------------------------------------------------------
# The representation


class SparseTensor(Tensor):
    """A COO or compressed tensor. Its parts are in `_ind` (COO) or
    `_cidx`/`_pidx` (compressed, plain indices), `_vals`, `_size`; `data` (a
    dense tensor's array) does not exist."""

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
        return self._size[wrap_dim(dim, len(self._size))]

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
        # (libtorch's: its dispatch key's name, one for every compressed layout)
        return _BACKEND.get(self.layout, "SparseCsrCPU")[:-3] + super()._type_string()

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
                         if k in ("layout", "_size", "_ind", "_cidx", "_pidx", "_vals",
                                  "_coalesced")})
    out._rg, out.grad_fn, out._version = False, None, NEW_VERSION
    return out


def make_sparse(layout: Layout, size: tuple, values: np.ndarray, coalesced: bool = False,
                indices: np.ndarray | None = None, cidx: np.ndarray | None = None,
                pidx: np.ndarray | None = None) -> SparseTensor:
    switch_on(LAYOUT)  # (ops now look at their operands' layouts)
    out = _new(SparseTensor)
    out._rg, out.grad_fn, out._version = False, None, NEW_VERSION
    if layout is not sparse_coo:
        out.layout = layout
        out._cidx, out._pidx = cidx, pidx
    else:
        out._ind = indices
    out._vals = wrap(values)
    out._size = tuple(int(s) for s in size)
    out._coalesced = coalesced
    return out


def _sparse_dim(x: SparseTensor) -> int:
    return x._ind.shape[0] if x.layout is sparse_coo else 2


def _nbatch(x: SparseTensor) -> int:
    """A compressed tensor's batch dims (those before its two sparse ones)."""
    return x._cidx.ndim - 1 if x.layout in COMPRESSED else 0


def _index_dims(x: SparseTensor) -> int:
    """The dims a stored value's position names (batch and sparse dims)."""
    return _sparse_dim(x) + _nbatch(x)


COMPRESSED = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
_ROW_MAJOR = (sparse_csr, sparse_bsr)
_BLOCKED = (sparse_bsr, sparse_bsc)
# libtorch's names of the layouts in its messages
_LAYOUT_NAME = {strided: "Strided", sparse_coo: "Sparse", sparse_csr: "SparseCsr",
                sparse_csc: "SparseCsc", sparse_bsr: "SparseBsr", sparse_bsc: "SparseBsc",
                mkldnn: "Mkldnn"}
_BACKEND = {strided: "CPU", sparse_coo: "SparseCPU", mkldnn: "MkldnnCPU"}  # (else SparseCsrCPU)
_NODE = {sparse_csr: "ToSparseCsrBackward0", sparse_csc: "ToSparseCscBackward0",
         sparse_bsr: "ToSparseBsrBackward0", sparse_bsc: "ToSparseBscBackward0"}


def _blocksize(x: SparseTensor) -> tuple:
    nb = _nbatch(x)
    return tuple(x._vals.shape[nb + 1:nb + 3]) if x.layout in _BLOCKED else (1, 1)


def _block_coords(x: SparseTensor) -> tuple:
    """(block row, block column) of each stored value (block) of a compressed
    tensor, one row per batch."""
    cidx = x._cidx.reshape(-1, x._cidx.shape[-1])
    pidx = x._pidx.reshape(cidx.shape[0], x._pidx.shape[-1])
    major = np.stack([np.repeat(np.arange(c.size - 1, dtype=np.int64), np.diff(c))
                      for c in cidx]).reshape(pidx.shape)
    return (major, pidx) if x.layout in _ROW_MAJOR else (pidx, major)


# --------------------------------------------------------------------------
# What a dense op says when it meets a sparse tensor


def _unsupported_message(x: SparseTensor, what: str | None) -> str:
    op = f"{what}()" if what and not what.startswith("assigning") else (what or "this op")
    kind = "MKLDNN tensors" if x.layout is mkldnn else f"sparse tensors (layout {x.layout!r})"
    return f"{op} is not supported for {kind}; convert the tensor with to_dense() first"


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


def _elements(x: SparseTensor) -> tuple:
    """(indices, values) of x as COO parts, in x's storage order: a block's
    elements one by one (row by row), each with the values' dense dims."""
    if x.layout is sparse_coo:
        return x._ind, x._vals.data
    (bh, bw), (br, bc) = _blocksize(x), _block_coords(x)  # (batches x nnz)
    rows = br[..., None, None] * bh + np.arange(bh)[:, None] + np.zeros(bw, np.int64)
    cols = bc[..., None, None] * bw + np.arange(bw) + np.zeros((bh, 1), np.int64)
    nb = _nbatch(x)
    batch = np.unravel_index(np.repeat(np.arange(br.shape[0]), rows[0].size),
                             x._size[:nb]) if nb else ()
    return (np.stack([*batch, rows.reshape(-1), cols.reshape(-1)]).astype(np.int64),
            x._vals.data.reshape((rows.size,) + x._size[nb + 2:]))


def _dense_array(x: SparseTensor) -> np.ndarray:
    if x.layout is sparse_coo:
        return _coo_dense(x)
    if x.layout is mkldnn:  # (its values are the whole tensor)
        return x._vals.data.copy()
    out = np.zeros(x._size, dtype=x._vals.data.dtype)
    idx, vals = _elements(x)
    out[tuple(idx)] = vals  # (a compressed tensor stores each position once)
    return out


def _counts(x: SparseTensor) -> np.ndarray:
    """How many stored values x has at each position of its sparse dims."""
    m = np.zeros(x._size[:_index_dims(x)], dtype=np.int64)
    np.add.at(m, tuple(_elements(x)[0]), 1)
    return m


def _mask(x: SparseTensor) -> np.ndarray:
    """Where x stores values, as a dense boolean array (whole dense slices)."""
    if x.layout is mkldnn:
        return np.ones((1,) * x.ndim, dtype=bool)
    m = _counts(x) > 0
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


# MKLDNN (oneDNN's CPU layout): its values are the whole tensor; to_dense() gives them back

_MKLDNN_DTYPES = (float32, bfloat16, float16, uint8, int8)


@formula(arrays=True)
def ToMkldnnBackward0(n, g):
    return (g,)


@op(function=False)  # (no samples: it refuses float64, which the generated tests run)
def to_mkldnn(self: Tensor, dtype: Any = None) -> Tensor:
    """self as an MKLDNN tensor (of `dtype`): float32, bfloat16, float16, uint8 or int8."""
    if self.layout is not strided:
        raise RuntimeError(f"Could not run 'aten::to_mkldnn' with arguments from the "
                           f"'{_BACKEND.get(self.layout, 'SparseCsrCPU')}' backend (to_mkldnn() "
                           "takes a dense tensor: to_dense() first)")
    if self.dtype not in _MKLDNN_DTYPES:
        raise RuntimeError("dense_to_mkldnn expects float, bfloat16, half, uint8, int8 tensor "
                           f"input (got {self.dtype.r_name})")
    target = self.dtype if dtype is None else as_dtype(dtype)
    if target not in _MKLDNN_DTYPES:
        raise RuntimeError("cpu tensor only can be converted to be a float, bfloat16, half, "
                           "uint8, int8 mkldnn tensor")
    arr = self.data
    if target in (int8, uint8) and arr.dtype.kind == "f":  # (oneDNN's reorder rounds, saturates)
        info = np.iinfo(target.np)
        arr = np.clip(np.rint(arr), info.min, info.max)
    out = make_sparse(mkldnn, self.shape, arr.astype(target.np))
    return record(out, ToMkldnnBackward0, (self,))


@op("_to_dense", function=False, forward="linear")
def to_dense_private(self: Tensor, dtype: Any = None, masked_grad: Any = None) -> Tensor:
    """to_dense() of a sparse tensor (libtorch's kernel: none for a dense one)."""
    if self.layout is strided:
        raise RuntimeError("Could not run 'aten::_to_dense' with arguments from the 'CPU' "
                           "backend (the tensor is dense already; to_dense() gives it back)")
    return to_dense(self, dtype, masked_grad)


@formula(arrays=True)
def ToSparseBackward0(n, g):
    # (recorded under each conversion's name: ToSparseBackward1 for to_sparse() without
    # sparse_dim, ToSparseCsrBackward0, ToSparseCscBackward0, ...)
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


def _to_coo(self: Tensor, sparse_dim: Any, dense_dim: Any, name: str) -> Tensor:
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
        if name.startswith("_"):
            raise RuntimeError("sparse_coo_to_sparse: unexpected same input and output layout")
        if sd != _sparse_dim(self):
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim "
                               "argument !=self.sparse_dim() is not supported")
        return self
    if self.layout is not strided:  # compressed: its elements in storage order (as PyTorch)
        idx, vals = _elements(self)
        # (PyTorch calls it coalesced for CSR, and BSR of one-row blocks without batches)
        row_by_row = self.layout is sparse_csr or (self.layout is sparse_bsr and not
                                                   _nbatch(self) and _blocksize(self)[0] == 1)
        out = make_sparse(sparse_coo, self._size, vals, indices=idx.copy(), coalesced=row_by_row)
        return record(out, ToSparseBackward0, (self,), name=node)
    indices, values = _dense_to_coo(self.data, sd)
    return record(make_sparse(sparse_coo, self.shape, values, indices=indices, coalesced=True),
                  ToSparseBackward0, (self,), name=node)


def _blocksize_arg(blocksize: Any, name: str) -> tuple:
    b = np.asarray(blocksize.data if isinstance(blocksize, Tensor) else blocksize).reshape(-1)
    if b.size == 1:
        b = np.repeat(b, 2)
    if b.size != 2:
        raise RuntimeError(f"{name}: blocksize needs to be a tuple of size 2, but got {b.size}")
    return tuple(int(v) for v in b)


def _compress(layout: Layout, arr: np.ndarray, keep: np.ndarray, blocksize: tuple,
              nb: int) -> tuple:
    """(compressed indices, plain indices, values) of the blocks of arr (nb batch
    dims, 2 sparse dims, then dense ones) that hold a position `keep` marks, in
    layout's order, batch by batch (each batch as many: libtorch's rule)."""
    batch, rest = arr.shape[:nb], arr.shape[nb:]
    n = int(np.prod(batch, dtype=np.int64))
    parts = [_compress_matrix(layout, a, k, blocksize)
             for a, k in zip(arr.reshape((n,) + rest), keep.reshape((n,) + rest[:2]))]
    if len({p[1].size for p in parts}) > 1:
        raise RuntimeError("Expect the same number of specified elements per batch.")
    return tuple(np.stack([p[i] for p in parts]).reshape(batch + parts[0][i].shape)
                 for i in range(3))


def _compress_matrix(layout: Layout, arr: np.ndarray, keep: np.ndarray,
                     blocksize: tuple) -> tuple:
    """_compress() of one matrix (2 sparse dims, then dense ones)."""
    (bh, bw), (R, C), dense = blocksize, arr.shape[:2], arr.shape[2:]
    blocks = keep.reshape(R // bh, bh, C // bw, bw).any(axis=(1, 3))
    if layout in _ROW_MAJOR:
        br, bc = np.nonzero(blocks)
        major, minor, n_major = br, bc, R // bh
    else:
        bc, br = np.nonzero(blocks.T)
        major, minor, n_major = bc, br, C // bw
    cidx = np.zeros(n_major + 1, dtype=np.int64)
    np.cumsum(np.bincount(major, minlength=n_major), out=cidx[1:])
    tiles = arr.reshape((R // bh, bh, C // bw, bw) + dense).swapaxes(1, 2)
    values = tiles[br, bc]
    if layout not in _BLOCKED:
        values = values.reshape((br.size,) + dense)
    return cidx, minor.astype(np.int64), values


def _to_compressed(self: Tensor, layout: Layout, blocksize: Any, dense_dim: Any,
                   name: str, entry: str | None = None) -> Tensor:
    """self (of any layout) as a tensor of the compressed `layout` (PyTorch's
    conversions: the stored pattern kept, explicit zeros too); `entry`, the
    function called when not `name` (to_sparse(layout = ))."""
    _refuse_mkldnn(self, name)
    src = self.layout
    private = name.startswith("_")
    fname = name.lstrip("_")
    size = None if blocksize is None else _blocksize_arg(blocksize, name)
    if src is layout and (layout not in _BLOCKED or size == _blocksize(self)):
        if private:
            raise RuntimeError(f"sparse_compressed_{fname}: unexpected same input and output "
                               "layout")
        return self
    if src in _BLOCKED and layout not in _BLOCKED:
        raise RuntimeError(f"sparse_compressed_{fname}: expected SparseCsr or SparseCsc layout "
                           f"but got {_LAYOUT_NAME[src]}")
    if src in COMPRESSED and src not in _BLOCKED and layout in _BLOCKED and _nbatch(self):
        raise RuntimeError(f"sparse_compressed_{fname}: conversion from {_LAYOUT_NAME[src]} to "
                           f"{_LAYOUT_NAME[layout]} for batched inputs is not supported")
    if src in _BLOCKED and size != _blocksize(self):
        raise RuntimeError(f"{'sparse_compressed_' if src is not layout else ''}"
                           f"{(entry or name).lstrip('_')}: "
                           f"conversion from {_LAYOUT_NAME[src]} to {_LAYOUT_NAME[layout]} "
                           f"with blocksize changed from {list(_blocksize(self))} to "
                           f"{list(size)} is not supported")
    prefix = {strided: "dense", sparse_coo: "coo"}.get(src, "sparse_compressed")
    if src is strided:
        dd = 0 if dense_dim is None else int(dense_dim)
        if self.ndim < 2:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-max(self.ndim, 1)}, {max(self.ndim, 1) - 1}], but got 1)")
        if not 0 <= dd <= self.ndim - 2:
            raise RuntimeError(f"{prefix}_{fname}: dense_dim argument must be in "
                               f"[0,{self.ndim - 2}] range, but {dd} is given")
        arr, nb = self.data, self.ndim - 2 - dd
        flat = arr.reshape(arr.shape[:nb + 2] + (int(np.prod(arr.shape[nb + 2:])),))
        keep = (flat != 0).any(axis=-1)
    else:
        if dense_dim is not None and src is sparse_coo:
            raise RuntimeError(f"coo_{fname}: conversion from Sparse to {_LAYOUT_NAME[layout]} "
                               "with dense_dim argument given is not supported")
        if _sparse_dim(self) != 2:
            raise RuntimeError(f"{prefix}_{fname}: conversion from Sparse to "
                               f"{_LAYOUT_NAME[layout]} for input tensors with sparse_dim()!=2 "
                               "is not supported")
        arr, keep, nb = _dense_array(self), _counts(self) > 0, _nbatch(self)
    if layout in _BLOCKED:
        if size is None:
            raise RuntimeError(f"{prefix}_to_sparse: conversion from {_LAYOUT_NAME[src]} to "
                               f"{_LAYOUT_NAME[layout]} without blocksize argument given is "
                               "not supported")
        rows, cols = arr.shape[nb:nb + 2]
        if any(b <= 0 or s % b for s, b in zip((rows, cols), size)):
            raise RuntimeError(f"{prefix}_{fname}: tensor sparse size ({rows},{cols}) must be "
                               f"divisible by given blocksize ({size[0]},{size[1]})")
    elif size is not None:
        raise RuntimeError(f"{prefix}_to_sparse: conversion from {_LAYOUT_NAME[src]} to "
                           f"{_LAYOUT_NAME[layout]} with blocksize argument given is not "
                           "supported")
    cidx, pidx, values = _compress(layout, arr, keep, size or (1, 1), nb)
    out = make_sparse(layout, self.shape, values, cidx=cidx, pidx=pidx)
    return record(out, ToSparseBackward0, (self,), name=_NODE[layout])


def _refuse_mkldnn(x: Tensor, name: str) -> None:
    if x.layout is mkldnn:
        raise RuntimeError(f"Could not run 'aten::{name}' with arguments from the 'MkldnnCPU' "
                           "backend (an MKLDNN tensor converts to_dense() only)")


@op(function=False, samples=S.to_sparse)
@r_formals("self, layout = NULL, sparse_dim, blocksize = NULL, dense_dim = NULL")
def to_sparse(self: Tensor, sparse_dim: Any = None, layout: Any = None, blocksize: Any = None,
              dense_dim: Any = None) -> Tensor:
    """COO from any layout (a dense tensor's non-zero entries: slices when
    `sparse_dim` or `dense_dim` leaves trailing dims dense), or the `layout` given."""
    return _to_sparse_as(self, layout, sparse_dim, blocksize, dense_dim, "to_sparse")


@op("_to_sparse", function=False, samples=S.to_sparse_private)
def to_sparse_private(self: Tensor, layout: Any = None, sparse_dim: Any = None,
                      blocksize: Any = None, dense_dim: Any = None) -> Tensor:
    return _to_sparse_as(self, layout, sparse_dim, blocksize, dense_dim, "_to_sparse")


def _to_sparse_as(self: Tensor, layout: Any, sparse_dim: Any, blocksize: Any, dense_dim: Any,
                  name: str) -> Tensor:
    _refuse_mkldnn(self, "_to_sparse")
    if layout is not None and layout is not sparse_coo:
        if layout not in COMPRESSED:
            raise RuntimeError(f"{name}(): layout {layout!r} is not a sparse layout; give "
                               "torch_sparse_coo() or a compressed one (x$layout of a sparse "
                               "tensor)")
        return _to_compressed(self, layout, blocksize, dense_dim,
                              name.replace("to_sparse", f"to_{layout.name}"), name)
    if blocksize is not None:
        prefix = {strided: "dense", sparse_coo: "coo"}.get(self.layout, "sparse_compressed")
        raise RuntimeError(f"{prefix}_to_sparse: conversion from {_LAYOUT_NAME[self.layout]} "
                           "to Sparse with blocksize argument given is not supported")
    return _to_coo(self, sparse_dim, dense_dim, name)


def _compressed_op(layout: Layout, name: str, blocked: bool) -> Callable:
    """The conversion to `layout` as an op (`to_sparse_csr`, `_to_sparse_csr`, ...)."""
    if blocked:
        def convert(self: Tensor, blocksize: Any, dense_dim: Any = None) -> Tensor:
            return _to_compressed(self, layout, blocksize, dense_dim, name)
    else:
        def convert(self: Tensor, dense_dim: Any = None) -> Tensor:  # type: ignore[misc]
            return _to_compressed(self, layout, None, dense_dim, name)
    convert.__name__ = convert.__qualname__ = name.lstrip("_") + ("_private" * (name[0] == "_"))
    convert.__doc__ = f"self as a sparse {layout.name[7:].upper()} tensor."
    return op(name, function=False, samples=getattr(S, name.lstrip("_")))(convert)


to_sparse_csr = _compressed_op(sparse_csr, "to_sparse_csr", False)
to_sparse_csc = _compressed_op(sparse_csc, "to_sparse_csc", False)
to_sparse_bsr = _compressed_op(sparse_bsr, "to_sparse_bsr", True)
to_sparse_bsc = _compressed_op(sparse_bsc, "to_sparse_bsc", True)
to_sparse_csr_private = _compressed_op(sparse_csr, "_to_sparse_csr", False)
to_sparse_csc_private = _compressed_op(sparse_csc, "_to_sparse_csc", False)
to_sparse_bsr_private = _compressed_op(sparse_bsr, "_to_sparse_bsr", True)
to_sparse_bsc_private = _compressed_op(sparse_bsc, "_to_sparse_bsc", True)


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
    rows, cols = _elements(self)[0]
    products = np.einsum("ij,ij->i", m1[rows], m2[:, cols].T)
    values = (beta * self._vals.data + alpha * products).astype(self._vals.data.dtype)
    out = make_sparse(sparse_csr, self._size, values, cidx=self._cidx.copy(),
                      pidx=self._pidx.copy())
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
    out = make_sparse(sparse_coo, self._size, summed, indices=new_idx, coalesced=True)
    return record(out, CoalesceBackward0, (self,))


@op(function=False, differentiable=False)
def is_coalesced(self: Tensor) -> bool:
    _need_coo(self, "is_coalesced")
    return bool(self._coalesced)


def _need_coo(x: Tensor, what: str) -> None:
    if x.layout is not sparse_coo:
        raise RuntimeError(f"{what} expected sparse coordinate tensor layout but got "
                           f"{_LAYOUT_NAME[x.layout]}")


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
    g = g.reshape((flat.size,) + rows[1:])  # (a BSR/BSC block's values one by one)
    return (index_add_into(g, rows, 0, flat).reshape(shape),)


@op(function=False)
def values(self: Tensor) -> Tensor:
    if self.layout is sparse_coo:
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        idx, sd = self._ind, self._ind.shape[0]
    elif self.layout in COMPRESSED:
        idx, sd = _elements(self)[0], _index_dims(self)
    else:
        raise RuntimeError(f"values expected sparse tensor layout but got "
                           f"{_LAYOUT_NAME[self.layout]}")
    flat = np.ravel_multi_index(tuple(idx), self._size[:sd]) if idx.shape[1] and sd else \
        np.zeros(idx.shape[1], dtype=np.int64)
    out = wrap(self._vals.data)
    out._version = version_box(self._vals)
    return record(out, ValuesBackward0, (self,), (flat, self._size, sd))


def _compressed_part(x: Tensor, what: str, row_major: bool, part: str) -> Tensor:
    if x.layout not in COMPRESSED or (x.layout in _ROW_MAJOR) != row_major:
        raise RuntimeError(f"{what} expected sparse {'row' if row_major else 'column'} "
                           f"compressed tensor layout but got {_LAYOUT_NAME[x.layout]}")
    return wrap(getattr(x, part))


@op(function=False, differentiable=False)
def crow_indices(self: Tensor) -> Tensor:
    """Where each row's (CSR) or block row's (BSR) values start (0-based, as R torch)."""
    return _compressed_part(self, "crow_indices", True, "_cidx")


@op(function=False, differentiable=False)
def col_indices(self: Tensor) -> Tensor:
    """The column (block column) of each value (block) of a CSR (BSR) tensor."""
    return _compressed_part(self, "col_indices", True, "_pidx")


@op(function=False, differentiable=False)
def ccol_indices(self: Tensor) -> Tensor:
    """Where each column's (CSC) or block column's (BSC) values start."""
    return _compressed_part(self, "ccol_indices", False, "_cidx")


@op(function=False, differentiable=False)
def row_indices(self: Tensor) -> Tensor:
    """The row (block row) of each value (block) of a CSC (BSC) tensor."""
    return _compressed_part(self, "row_indices", False, "_pidx")


def _not_mkldnn(x: Tensor, what: str) -> None:
    if x.layout is mkldnn:
        raise RuntimeError(f"{what} expected sparse or strided tensor layout but got Mkldnn")


@op(function=False, differentiable=False)
def sparse_dim(self: Tensor) -> int:
    _not_mkldnn(self, "sparse_dim")
    return 0 if self.layout is strided else _sparse_dim(self)


@op(function=False, differentiable=False)
def dense_dim(self: Tensor) -> int:
    _not_mkldnn(self, "dense_dim")
    return 0 if self.layout is strided else self.ndim - _index_dims(self)


@op("_nnz", function=False, differentiable=False)
def nnz(self: Tensor) -> int:
    if self.layout is strided or self.layout is mkldnn:
        raise RuntimeError(f"_nnz expected sparse tensor layout but got "
                           f"{_LAYOUT_NAME[self.layout]}")
    return int(self._vals.shape[_nbatch(self)])


@op(function=False, differentiable=False)
def is_sparse(self: Tensor) -> bool:
    return self.layout is sparse_coo


@op(function=False, differentiable=False)
def is_sparse_csr(self: Tensor) -> bool:
    return self.layout is sparse_csr


# --------------------------------------------------------------------------
# sparse_mask: self's values where a sparse mask stores its own (mask's
# layout and pattern, duplicates too); smm and sspaddmm: a COO matrix times a
# dense one, as a COO tensor


def _need_sparse_mask(mask: Tensor, what: str) -> None:
    if mask.layout is strided:
        raise RuntimeError(f"{what}(): mask must be a sparse tensor (got layout torch_strided); "
                           "make it with x$to_sparse() or x$to_sparse_csr()")


@formula
def SparseMaskBackward0(n, g, counts):
    # each stored value of the result is self's at its position (a duplicate: once more)
    return (g * wrap(counts),)


@op(function=False)
def sparse_mask(self: Tensor, mask: Tensor) -> Tensor:
    """self's values at the positions mask stores, as a tensor of mask's layout,
    pattern and coalesced flag."""
    _need_sparse_mask(mask, "sparse_mask")
    if tuple(self.shape) != mask._size:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask._size)}")
    if self.layout in COMPRESSED or (self.layout is sparse_coo and mask.layout is not sparse_coo):
        raise RuntimeError(f"sparse_mask_sparse_compressed expects mask to have sparse compressed "
                           f"layout, got {_LAYOUT_NAME[mask.layout]}" if mask.layout is sparse_coo
                           else f"sparse_mask(): a {_LAYOUT_NAME[self.layout]} self takes a "
                           f"Sparse (COO) mask, got {_LAYOUT_NAME[mask.layout]}")
    arr = self.data if self.layout is strided else _dense_array(self)
    idx = _elements(mask)[0]
    values = arr[tuple(idx)].reshape(mask._vals.shape)
    if mask.layout is sparse_coo:
        out = make_sparse(sparse_coo, mask._size, values, indices=mask._ind.copy(),
                          coalesced=mask._coalesced)
    else:
        out = make_sparse(mask.layout, mask._size, values, cidx=mask._cidx.copy(),
                          pidx=mask._pidx.copy())
    counts = _counts(mask)
    counts = counts.reshape(counts.shape + (1,) * (len(mask._size) - counts.ndim))
    return record(out, SparseMaskBackward0, (self,), (counts.astype(arr.dtype),))


@op("_sparse_mask_projection", function=False, differentiable=False)
def sparse_mask_projection(self: Tensor, mask: Tensor, accumulate_matches: bool = False) -> Tensor:
    """self (COO) with its values kept where mask stores one (times the number of
    mask's entries there when accumulate_matches), zero elsewhere."""
    _need_coo(self, "_sparse_mask_projection")
    _need_coo(mask, "_sparse_mask_projection")
    if self._size != mask._size:
        raise RuntimeError(f"_sparse_mask_projection(): operands have incompatible sizes; self "
                           f"has size {list(self._size)} but mask has size {list(mask._size)}")
    hits = _counts(mask)[tuple(self._ind)]
    weight = hits if accumulate_matches else hits > 0
    vals = self._vals.data
    values = (vals * weight.reshape((-1,) + (1,) * (vals.ndim - 1))).astype(vals.dtype)
    return make_sparse(sparse_coo, self._size, values, indices=self._ind.copy(),
                       coalesced=self._coalesced)


_SSPADDMM_NO_GRAD = "derivative for aten::sspaddmm is not implemented (as in PyTorch)"


def _sspaddmm(self: Tensor, mat1: Tensor, mat2: Tensor, beta: Any, alpha: Any,
              name: str) -> Tensor:
    """beta * self + alpha * (mat1 @ mat2) as libtorch's kernel builds it: self's
    entries (times beta), then for each row mat1 stores values in, one entry per
    column of mat2; uncoalesced."""
    if mat1.layout is not sparse_coo:
        raise RuntimeError(f"{name}: expected 'mat1' to be a sparse COO tensor (made with "
                           f"x$to_sparse()), got layout {_LAYOUT_NAME[mat1.layout]}")
    if mat2.layout is not strided:
        raise RuntimeError(f"sspaddmm: expected 'mat2' to have strided layout, got 'mat2' with "
                           f"layout {_LAYOUT_NAME[mat2.layout]}")
    if _sparse_dim(mat1) != 2 or mat1.ndim != 2:
        raise RuntimeError(f"sspaddmm: Argument #2: scalar values expected, got "
                           f"{mat1.ndim - _sparse_dim(mat1) + 1}D values"
                           if mat1.ndim > 2 else "sspaddmm: mat1 must be a matrix")
    if mat2.ndim != 2 or mat2.shape[0] != mat1._size[1]:
        raise RuntimeError(f"sspaddmm: Argument #3: Expected dim 0 size {mat1._size[1]}, got "
                           f"{mat2.shape[0] if mat2.ndim else 0}")
    if self._size != (mat1._size[0], mat2.shape[1]):
        raise RuntimeError(f"sspaddmm: Argument #1: Expected dim 1 size {mat2.shape[1]}, got "
                           f"{self._size[1] if len(self._size) > 1 else 0}"
                           if len(self._size) == 2 and self._size[0] == mat1._size[0] else
                           f"sspaddmm: self must be a {mat1._size[0]} x {mat2.shape[1]} sparse "
                           f"matrix, got size {list(self._size)}")
    if mat2.dtype is not mat1.dtype or self.dtype is not mat1.dtype:
        other = mat2.dtype if mat2.dtype is not mat1.dtype else self.dtype
        raise RuntimeError(f"expected scalar type {mat1.dtype.r_name} but found "
                           f"{other.r_name}")
    c = coalesce(mat1)
    rows = np.unique(c._ind[0])
    dense = np.zeros((mat1._size[0],) + mat1._size[1:], dtype=c._vals.data.dtype)
    dense[tuple(c._ind)] = c._vals.data
    k = mat2.shape[1]
    product = alpha * (dense[rows] @ mat2.data)  # (the rows mat1 stores values in)
    new = np.stack([np.repeat(rows, k), np.tile(np.arange(k), rows.size)])
    indices = np.concatenate([self._ind, new], axis=1)
    values = np.concatenate([beta * self._vals.data, product.reshape(-1)])
    values = values.astype(c._vals.data.dtype)
    out = make_sparse(sparse_coo, self._size, values, indices=indices.astype(np.int64))
    return record(out, NoDerivative, (self, mat1, mat2), (_SSPADDMM_NO_GRAD,),
                  name="NotImplemented")


@op(function=False)
def sspaddmm(self: Tensor, mat1: Tensor, mat2: Tensor, beta: float = 1, alpha: float = 1) -> Tensor:
    """beta * self + alpha * (mat1 @ mat2) for COO self and mat1 and a dense mat2,
    a COO result (not coalesced); PyTorch has no derivative for it."""
    if self.layout is not sparse_coo:
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    return _sspaddmm(self, mat1, mat2, beta, alpha, "sspaddmm")


@op(function=False)
def smm(self: Tensor, mat2: Tensor) -> Tensor:
    """The COO matrix self times the dense mat2, as a COO tensor (libtorch's
    sspaddmm into an empty one); PyTorch has no derivative for it."""
    if self.layout is not sparse_coo:
        raise RuntimeError(f"smm: expected self to be a sparse COO tensor (made with "
                           f"x$to_sparse()), got layout {_LAYOUT_NAME[self.layout]}")
    rows = self._size[0]
    cols = mat2.shape[1] if mat2.ndim == 2 else 0
    empty = make_sparse(sparse_coo, (rows, cols), np.zeros(0, dtype=self._vals.data.dtype),
                        indices=np.zeros((2, 0), dtype=np.int64))
    return _sspaddmm(empty, self, mat2, 0, 1, "smm")


# --------------------------------------------------------------------------
# Resizing a COO tensor in place, as libtorch's sparse_resize_ (its entries
# kept) and sparse_resize_and_clear_ (none kept)


def _resize_sizes(size: Any, sparse_dim: Any, dense_dim: Any) -> tuple:
    size = tuple(int(s) for s in np.asarray(size).reshape(-1))
    sd, dd = int(sparse_dim), int(dense_dim)
    if len(size) != sd + dd:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = "
                           f"{len(size)}, sparse_dim = {sd}, dense_dim = {dd}")
    return size, sd, dd


def _resize(x: Tensor, size: tuple, sd: int, clear: bool) -> Tensor:
    if clear or x._vals.shape[0] == 0:
        x._ind = np.zeros((sd, 0), dtype=np.int64)
        x._vals = wrap(np.zeros((0,) + size[sd:], dtype=x._vals.data.dtype))
        x._coalesced = True if clear else x._coalesced
    else:
        old, osd = x._size, _sparse_dim(x)
        for what, was, now in (("sparse", osd, sd), ("dense", len(old) - osd, len(size) - sd)):
            if was != now:
                raise RuntimeError(f"changing the number of {what} dimensions (from {was} to "
                                   f"{now}) on a non-empty sparse tensor is not supported.")
        if any(n < o for n, o in zip(size[:sd], old[:sd])):
            raise RuntimeError(f"shrinking the size of sparse dimensions (from {list(old[:sd])} "
                               f"to {list(size[:sd])}) on a non-empty sparse tensor is not "
                               "supported.")
        if size[sd:] != old[sd:]:
            raise RuntimeError(f"changing the size of dense dimensions (from {list(old[sd:])} to "
                               f"{list(size[sd:])}) on a non-empty sparse tensor is not "
                               "supported here")
    x._size = size
    bump_version(x)
    return x


@op(function=False, differentiable=False)
def sparse_resize_(self: Tensor, size: Any, sparse_dim: int, dense_dim: int) -> Tensor:
    """Resize the COO tensor self in place, keeping its entries (its sparse dims
    may only grow while it has any)."""
    _need_coo(self, "sparse_resize_")
    size, sd, _ = _resize_sizes(size, sparse_dim, dense_dim)
    return _resize(self, size, sd, clear=False)


@op(function=False, differentiable=False)
def sparse_resize_and_clear_(self: Tensor, size: Any, sparse_dim: int, dense_dim: int) -> Tensor:
    """Resize the COO tensor self in place to any size, removing its entries."""
    _need_coo(self, "sparse_resize_and_clear_")
    size, sd, _ = _resize_sizes(size, sparse_dim, dense_dim)
    return _resize(self, size, sd, clear=True)


@op(function=False, differentiable=False)
def resize_as_sparse_(self: Tensor, the_template: Tensor) -> Tensor:
    """self (COO) resized as sparse_resize_ does to the_template's size and dims."""
    _need_coo(self, "resize_as_sparse_")
    _need_coo(the_template, "resize_as_sparse_")
    t = the_template
    if self._size == t._size and _sparse_dim(self) == _sparse_dim(t):
        return self
    return _resize(self, t._size, _sparse_dim(t), clear=False)


@op("_coalesced_", function=False, differentiable=False)
def set_coalesced(self: Tensor, coalesced: bool) -> Tensor:
    """Mark the COO tensor self coalesced or not (its entries unchanged: saying so
    of entries that are not sorted and unique is the caller's promise)."""
    _need_coo(self, "_coalesced_")
    self._coalesced = bool(coalesced)
    return self


def _need_coo_backend(x: Tensor, what: str) -> None:
    """libtorch's _dimI/_dimV exist for COO tensors only."""
    if x.layout is not sparse_coo:
        backend = "CPU" if x.layout is strided else "SparseCsrCPU"
        raise RuntimeError(f"Could not run 'aten::{what}' with arguments from the '{backend}' "
                           f"backend ({what} is for sparse COO tensors; see sparse_dim() and "
                           "dense_dim() for any layout)")


@op("_dimI", function=False, differentiable=False)
def dim_i(self: Tensor) -> int:
    """The COO tensor's sparse dims (sparse_dim())."""
    _need_coo_backend(self, "_dimI")
    return _sparse_dim(self)


@op("_dimV", function=False, differentiable=False)
def dim_v(self: Tensor) -> int:
    """The COO tensor's dense dims (dense_dim())."""
    _need_coo_backend(self, "_dimV")
    return self.ndim - _sparse_dim(self)


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
        out = make_sparse(sparse_coo, size, np.take(vals, idx, axis=dim - sd + 1),
                          indices=ind.copy(), coalesced=self._coalesced)
    else:
        # each entry appears once per position of idx that names its index along dim
        hits = ind[dim][None, :] == idx[:, None]
        pos, entry = np.nonzero(hits)
        new = ind[:, entry].copy()
        new[dim] = pos
        coalesced = self._coalesced and bool(np.all(np.diff(idx) > 0))
        out = make_sparse(sparse_coo, size, vals[entry], indices=new, coalesced=coalesced)
    return record(out, IndexSelectBackward0, (self,), (self._size, dim, idx))


# --------------------------------------------------------------------------
# Printing


def format_sparse(x: SparseTensor, n: int = 30) -> str:
    """What R torch prints: libtorch's sparse form for COO; CSR as its dense
    values (R torch densifies it before printing); CSC, BSR and BSC not at all
    (libtorch's print asks them for is_contiguous(), which they refuse)."""
    name = x.grad_fn.name if x.grad_fn is not None else None
    rg = x._rg and name is None
    if x.layout in (sparse_csc, sparse_bsr, sparse_bsc):
        raise RuntimeError(f"Sparse {x.layout.name[7:].upper()} tensors do not have "
                           "is_contiguous (R torch cannot print them: print x$to_dense() "
                           "or its parts)")
    if x.layout is sparse_csr:
        return format_tensor(_dense_array(x), x.dtype.name, rg, name, n=n)
    if x.layout is mkldnn:  # libtorch's print: a prefix, the values, its own type name
        text = format_tensor(x._vals.data, x.dtype.name, rg, name, n=n)
        head, body = text.split("\n", 1)
        footer = f"[ {x._vals._type_string()}{{"
        cut = body.rfind(footer)
        body = body[:cut] + "[ Mkldnn" + body[cut + 2:] if cut >= 0 else body
        return f"{head}\nMKLDNN Tensor: {body}"
    return _format_coo(x._ind, x._vals.data, x.dtype.name, x._size, rg, name, n=n)
