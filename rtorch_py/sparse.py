"""Sparse tensors' user API: `torch_sparse_coo_tensor()`,
`torch_sparse_sampled_addmm()` (and R's creation
functions' `layout =` check, `strided_only`). The sparse layouts themselves,
their tensors (`SparseTensor`) and their ops are in `rtorch_py/ops/sparse.py`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .constructors import device_type, no_device, strided_only
from .ops.recording import formula, record
from .ops.sparse import SparseTensor, make_sparse, format_sparse, sparse_sampled_addmm
from .tensor import Tensor, as_dtype, sparse_coo, to_array, wrap

__all__ = ["torch_sparse_coo_tensor", "torch_sparse_sampled_addmm", "strided_only",
           "SparseTensor",
           "format_sparse"]  # (the last two: what R's tensor API prints with)


def _as_int_array(v: Any, what: str) -> np.ndarray:
    arr = v.data if isinstance(v, Tensor) else np.asarray(to_array(v))
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and (arr == np.round(arr)).all():
            return arr.astype(np.int64)  # (whole numbers: R passes doubles)
        raise RuntimeError(f"{what} must be an integer tensor (torch_long()), got {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def _check_coo(indices: np.ndarray, vshape: tuple, size: tuple | None) -> tuple:
    """PyTorch's checks of COO parts (with its invariant checks on); the size,
    inferred from the indices and values when not given."""
    if indices.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: "
                           f"[{', '.join(map(str, indices.shape))}]")
    sd, nnz = indices.shape
    if not vshape:
        raise RuntimeError("values must have at least one dim (nnz, followed by the dense "
                           "dims); got a 0-d tensor")
    if vshape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {vshape[0]}")
    if nnz and indices.min() < 0:
        bad = np.argwhere(indices < 0)[0]
        raise RuntimeError(f"found negative index {indices[tuple(bad)]} for dim {bad[0]}")
    dense = tuple(vshape[1:])
    if size is None:
        sparse = tuple(int(m) + 1 for m in indices.max(axis=1)) if nnz else (0,) * sd
        return sparse + dense
    if len(size) != sd + len(dense):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                           f"len(size) = {len(size)}, sparse_dim = {sd}, dense_dim = "
                           f"{len(dense)}")
    if tuple(size[sd:]) != dense:
        raise RuntimeError(f"values has incorrect size, expected [{', '.join(map(str, (nnz,) + tuple(size[sd:])))}], "
                           f"got [{', '.join(map(str, vshape))}]")
    if nnz:
        top = indices.max(axis=1)
        for d in range(sd):
            if top[d] >= size[d]:
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                                   f"{size[d]} but found index {top[d]}")
    return tuple(size)


@formula
def SparseCooTensorWithDimsAndTensorsBackward0(n, g, flat, sparse_shape):
    # the value at each entry gets the gradient at its position (duplicates each get it)
    rows = g.reshape((int(np.prod(sparse_shape, dtype=np.int64)),) + tuple(g.shape[len(sparse_shape):]))
    return (rows.index_select(0, wrap(flat)),)


def torch_sparse_coo_tensor(indices: Any, values: Any, size: Any = None, dtype: Any = None,
                            device: Any = None, requires_grad: bool = False) -> Tensor:
    """A COO tensor with `values` at `indices` (0-based, sparse_dim x nnz), as
    PyTorch's sparse_coo_tensor: uncoalesced, the size inferred when not given;
    values that require grad receive the gradient (SparseCooTensorWithDimsAndTensorsBackward0)."""
    if device is not None and device_type(device) != "cpu":
        raise no_device(device)
    idx = _as_int_array(indices, "indices")
    vals = values if isinstance(values, Tensor) else wrap(to_array(values))
    if isinstance(vals, SparseTensor):
        raise RuntimeError("values must be a dense tensor")
    if dtype is not None and vals.dtype is not as_dtype(dtype):
        vals = vals.to(dtype=as_dtype(dtype))
    shape = _check_coo(idx, tuple(vals.shape), None if size is None else
                       tuple(int(s) for s in np.asarray(size).reshape(-1)))
    # (PyTorch calls at most one entry coalesced)
    out = make_sparse(sparse_coo, shape, vals.data, indices=idx.copy(), coalesced=idx.shape[1] <= 1)
    sd = idx.shape[0]
    flat = np.ravel_multi_index(tuple(idx), shape[:sd]) if idx.shape[1] and sd else \
        np.zeros(idx.shape[1], dtype=np.int64)
    if requires_grad:  # a new leaf of its own (PyTorch copies the values)
        out._vals = wrap(vals.data.copy())
        out.requires_grad = True
        return out
    out._vals = vals.detach()
    return record(out, SparseCooTensorWithDimsAndTensorsBackward0, (vals,),
                  (flat, shape[:sd]))


def torch_sparse_sampled_addmm(self: Tensor, mat1: Tensor, mat2: Tensor, beta: Any = 1,
                               alpha: Any = 1) -> Tensor:
    """beta * self + alpha * (mat1 @ mat2) where the sparse CSR tensor `self` stores
    values (a CSR tensor of its pattern)."""
    return sparse_sampled_addmm(self, mat1, mat2, beta, alpha)
