"""Indexing and selection: `x[key]`, `x[key] = v`, gather, where, masked_fill."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..engine import bump_version
from ..tensor import Tensor, wrap_dim, wrap
from .samples import indexing as S
from .operands import (as_result_dtype, as_tensor, bool_mask, broadcast_error, data_of, fill_scalar,
                       positional_error, shape_str, tensor_of, whole)
from .recording import OUTPUT, grad_state, formula, record
from .dispatch import op
from .views import (SliceBackward0, check_inplace, index_backward, is_basic_key, record_inplace,
                    view_of, wrap_key, write_inplace, zero_at)


@formula
def GatherBackward0(n, g, idx, dim, shape):
    return (_scatter_add_along(g, idx, dim, shape),)


@op(dims=("dim",), indices=("index",), samples=S.gather, forward="linear",
    complex_half="scatter_gather_tensor_cpu")
def gather(self: Tensor, dim: int, index: Tensor, sparse_grad: bool = False) -> Tensor:
    """(`sparse_grad`: libtorch's gradient as a sparse tensor; here it is dense.)"""
    d = wrap_dim(dim, self.ndim)
    idx = index.data
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"gather(): Expected dtype int64 for index, got "
                           f"{index.dtype!r}")
    if idx.ndim != self.ndim and not (idx.ndim <= 1 and self.ndim <= 1):
        raise RuntimeError("gather(): Index tensor must have the same number of dimensions as "
                           f"input tensor ({idx.ndim} vs {self.ndim})")
    _check_bounds(idx, self.shape[d] if self.ndim else 1, d, "gather", negative=False)
    # (the index may be smaller than the input in the other dims: their leading corner)
    part = self.data[tuple(slice(None) if k == d else slice(0, s)
                           for k, s in enumerate(idx.shape))] if self.ndim else self.data
    if any(s > p for k, (s, p) in enumerate(zip(idx.shape, part.shape)) if k != d):
        raise positional_error(RuntimeError, "gather(): Size does not match at dimension "
                               "{k} expected index " + shape_str(idx.shape) + " to be smaller "
                               "than self " + shape_str(self.shape) + " apart from dimension {d}",
                               k=next(k for k, (s, p) in enumerate(zip(idx.shape, part.shape))
                                      if k != d and s > p), d=d)
    return record(np.take_along_axis(part, idx, axis=d) if self.ndim else
                  self.data.reshape(1)[idx].reshape(idx.shape),
                  GatherBackward0, (self,), (idx, d, self.shape))


@formula
def ScatterAddBackward(n, g, idx, dim):
    return (gather(g, dim, wrap(idx)),)


def _scatter_add_along(g: Tensor, idx: np.ndarray, dim: int, shape: tuple) -> Tensor:
    z = np.zeros(shape, dtype=g.data.dtype)
    grid = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    np.add.at(z, tuple(grid), g.data)
    return record(z, ScatterAddBackward, (g,), (idx, dim))


# ==========================================================================
# Selection by condition

@formula
def WhereBackward0(n, g, cond):
    z = wrap(np.zeros((), dtype=g.data.dtype))
    return None, (where(cond, g, z) if n.needs(1) else None), \
        (where(cond, z, g) if n.needs(2) else None)


def _where_jvp(p: dict, t: dict, result: Tensor) -> Any:
    """The forward rule of where: the tangents chosen as the values are (a number's is 0)."""
    ts, to = t["self"], t["other"]
    if ts is None and to is None:
        return None
    return where(p["condition"], 0.0 if ts is None else ts, 0.0 if to is None else to)


# where(condition) alone gives positions (1-based in R, as R torch gives them)
@op(method=False, samples=S.where, returns_indices=lambda out: isinstance(out, (list, tuple)),
    forward=_where_jvp, complex_half=True)
def where(condition: Tensor, self: Tensor | float = None, other: Tensor | float = None) -> Any:
    if self is None and other is None:  # where(condition): the positions, one tensor a dim
        return nonzero(as_tensor(condition), as_list=True)
    if self is None or other is None:
        raise RuntimeError("where: give both `self` and `other` (the values where condition "
                           "is TRUE and FALSE), or neither (for the positions)")
    cond = data_of(condition)
    if isinstance(condition, Tensor) and cond.dtype != np.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype.r_name}; compare first, e.g. x > 0")
    if not isinstance(cond, np.ndarray) or cond.dtype != np.bool_:
        cond = np.asarray(cond).astype(bool)
    try:
        out = np.where(cond, data_of(self), data_of(other))
    except ValueError:
        raise broadcast_error(self, other, "where") from None
    out = as_result_dtype(out, self, other)  # (NumPy >= 2 treats numbers as weak, like torch)
    return record(out, WhereBackward0, (None, tensor_of(self), tensor_of(other)), (wrap(cond),))


def where_method(self: Tensor, condition: Any, other: Any) -> Tensor:
    """`x$where(condition, other)` (PyTorch's and R torch's method): x where the
    condition is TRUE, other elsewhere."""
    return where(condition, self, other)


@formula
def MaskedFillBackward0(n, g, mask):
    return (g.masked_fill(mask, 0),)


@formula
def MaskedFillBackward1(n, g, mask, vshape):
    gx = g.masked_fill(mask, 0) if n.needs(0) else None
    gv = where(mask, g, wrap(np.zeros((), g.data.dtype))).sum().reshape(vshape) \
        if n.needs(1) else None
    return gx, gv


@op(samples=S.masked_fill, names="keep", complex_half=True)
def masked_fill(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    m = bool_mask(mask, "masked_fill")
    v = fill_scalar(value, "masked_fill")
    try:  # out of place, tensor and mask broadcast together (as in PyTorch)
        out = np.where(m, np.asarray(v, dtype=self.data.dtype), self.data)
    except ValueError:
        raise broadcast_error(self, mask, "masked_fill") from None
    if isinstance(value, Tensor):  # a 0-d/1-element tensor value gets a gradient too
        return record(out, MaskedFillBackward1, (self, value), (wrap(m), value.shape))
    return record(out, MaskedFillBackward0, (self,), (wrap(m),))


# ==========================================================================
# Indexing (getitem) and index assignment (setitem)

def _np_key(key: Any, x: Tensor) -> tuple:
    """Turn a Python index into a NumPy one (tensors -> arrays), checking bounds."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            if k.data.dtype.kind not in "biu":
                raise IndexError("tensors used as indices must be long, int or bool tensors, "
                                 f"got {k.dtype}")
            # a 0-d integer tensor indexes like an int (a view, SelectBackward0)
            out.append(int(k.data) if k.data.ndim == 0 and k.data.dtype.kind != "b"
                       else k.data)
        elif isinstance(k, (list,)) and k and not isinstance(k[0], slice):
            out.append(np.asarray(k))
        elif k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer, np.ndarray)):
            out.append(k)
        elif isinstance(k, (bool, np.bool_)):
            out.append(k)
        else:
            raise IndexError(f"can't index a tensor with a {type(k).__name__}")
    return tuple(out)



def _index_name(key: tuple, basic: builtins.bool) -> str:
    """PyTorch's node for a basic index: that of the last view op it applies, left to
    right (full slices are skipped, unless the slice is the whole key)."""
    if not basic:
        return "IndexBackward0"
    if len(key) == 1 and type(key[0]) is slice:
        return "SliceBackward0"
    name = "AliasBackward0"
    for k in key:
        if k is None:
            name = "UnsqueezeBackward0"
        elif type(k) is slice:
            if k != slice(None):
                name = "SliceBackward0"
        elif k is not Ellipsis:
            name = "SelectBackward0"
    return name


def _index_error(e: Exception, x: Tensor, key: tuple) -> IndexError:
    msg = str(e)
    if "out of bounds" in msg:
        return IndexError(f"index out of range: {msg} (tensor of shape {shape_str(x.shape)})")
    return IndexError(f"can't index a tensor of shape {shape_str(x.shape)} that way: {msg}")


_ALL = slice(None)


def _gather(data: np.ndarray, key: tuple) -> np.ndarray:
    """data[key]. Fast path: one integer array among full slices (`x[idx, ]`) is
    np.take along its dim, the same elements as NumPy's advanced indexing but
    several times faster when the dims after it are short (rows of 4 boxes'
    coordinates: ~10 times)."""
    axis = None
    if type(data) is np.ndarray and len(key) <= data.ndim:
        for i, k in enumerate(key):
            if type(k) is np.ndarray and k.ndim and k.dtype.kind in "iu" and axis is None:
                axis = i
            elif not (type(k) is slice and k == _ALL):
                axis = None
                break
    if axis is None:
        return data[key]
    return np.take(data, key[axis], axis=axis)


@formula
def IndexBackward0(n, g, shape, key):
    return (index_backward(g, key, shape, True),)


@op(operators=("__getitem__",), indices=("indices",), samples=S.index,
    torch_name="ops.aten.index.Tensor", names="index", forward="linear", complex_half=True)
def index(self: Tensor, indices: Any) -> Tensor:
    """`x[indices]`; also R torch's `torch_index(x, list(i, j))` (a list of index
    tensors, one per leading dim, as PyTorch's `aten::index`)."""
    key = indices
    if type(key) is int:  # fast path: x[i]
        try:
            arr = self.data[key, ...]
        except IndexError as e:
            raise _index_error(e, self, (key,)) from None
        return record(view_of(self, arr), SliceBackward0, (self,), (self.shape, (key,)),
                      name="SelectBackward0")
    if type(key) is list and key and all(k is None or isinstance(k, Tensor) for k in key):
        key = tuple(slice(None) if k is None else k for k in key)  # (aten::index's list)
    k = _np_key(key, self)
    basic = is_basic_key(k)
    try:
        arr = self.data[k] if basic else _gather(self.data, k)
    except (IndexError, ValueError) as e:
        raise _index_error(e, self, k) from None
    if basic:
        if type(arr) is not np.ndarray:  # an int for every dim: a 0-d view, not a copy
            arr = self.data[k + (Ellipsis,)]
        out = view_of(self, arr)
    else:
        out = wrap(arr)
    return record(out, IndexBackward0 if not basic else SliceBackward0, (self,), (self.shape, k),
                  name=_index_name(k, basic))


@formula
def IndexPutBackward0(n, g, key, vshape):
    gx = g.clone() if n.needs(0) else None
    if gx is not None:
        gx = zero_at(gx, key)
    gv = g[wrap_key(key)] if n.needs(1) else None
    return gx, gv


@op(operators=("__setitem__",), indices=("indices",), samples=S.inplace, invisible=True,
    complex_half=True)
def index_put_(self: Tensor, indices: Any, values: Tensor,
                accumulate: builtins.bool = False) -> Tensor:
    """`x[indices] = values` in place (added up with accumulate), recorded for autograd."""
    return _index_put(self, indices, values, accumulate, inplace=True)


def _index_put(self: Tensor, indices: Any, values: Any, accumulate: Any, inplace: builtins.bool
               ) -> Tensor:
    if isinstance(indices, list) and indices and all(
            i is None or isinstance(i, Tensor) for i in indices):
        indices = tuple(slice(None) if i is None else i for i in indices)  # (PyTorch's form)
    k = _np_key(indices, self)
    v = values if isinstance(values, Tensor) else None
    vd = data_of(values)
    if isinstance(vd, np.ndarray) and vd.dtype != self.data.dtype:
        vd = vd.astype(self.data.dtype)
    if inplace:
        check_inplace(self, v)
        target = self.data
    else:
        target = self.data.copy()
    try:
        if accumulate:
            np.add.at(target, k, np.broadcast_to(vd, np.shape(target[k])))
        else:
            target[k] = vd
    except (IndexError, ValueError) as e:
        if "broadcast" in str(e) or "shape" in str(e):
            raise RuntimeError(
                f"index assignment: a value of shape {shape_str(np.shape(vd))} can't be put into "
                f"the selected elements of shape {shape_str(np.shape(self.data[k]))}") from None
        raise _index_error(e, self, k) from None
    fn = IndexPutAccumulateBackward if accumulate else IndexPutBackward0
    if not inplace:
        return record(target, fn, (self, v), (k,) if accumulate else (k, np.shape(vd)),
                      name="IndexPutBackward0")
    bump_version(self)
    name = "IndexPutBackward0" if not is_basic_key(k) else "CopySlices"
    return record_inplace(self, fn, (self, v), (k,) if accumulate else (k, np.shape(vd)), name)


@op(function=False, complex_half=True)
def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    m = bool_mask(mask, "masked_fill_")
    v = fill_scalar(value, "masked_fill_")
    t = value if isinstance(value, Tensor) else None
    check_inplace(self, t)
    try:
        np.copyto(self.data, np.asarray(v, dtype=self.data.dtype), where=m)
    except ValueError:
        raise RuntimeError(f"masked_fill_: the mask of shape {shape_str(m.shape)} must "
                           f"broadcast to the tensor's shape {shape_str(self.shape)}") from None
    bump_version(self)
    if t is not None:
        return record_inplace(self, MaskedFillBackward1, (self, t), (wrap(m), t.shape))
    return record_inplace(self, MaskedFillBackward0, (self,), (wrap(m),))


# ==========================================================================
# Selecting and writing along a dim by index: index_select, take, scatter,
# index_add/copy/fill/put, masked_select/scatter, nonzero

def _int_index(index: Any, op: str) -> np.ndarray:
    idx = data_of(index)
    idx = np.asarray(idx)
    if idx.dtype.kind not in "iu":
        if idx.dtype.kind == "f" and idx.size and (idx == np.round(idx)).all():
            return idx.astype(np.int64)  # (whole numbers: R passes doubles)
        raise RuntimeError(f"{op}(): Expected dtype int64 for index, got "
                           f"{getattr(index, 'dtype', idx.dtype)!r}")
    return idx.astype(np.int64, copy=False)


def _check_bounds(idx: np.ndarray, size: int, dim: int, op: str,
                  negative: builtins.bool = False) -> None:
    low = -size if negative else 0
    if idx.size and (idx.min() < low or idx.max() >= size):
        bad = int(idx[(idx < low) | (idx >= size)].reshape(-1)[0])
        raise positional_error(IndexError, f"{op}(): index {{bad}} is out of bounds for "
                               f"dimension {{dim}} with size {size}", bad=bad, dim=dim)


def _along(arr: np.ndarray, d: int) -> np.ndarray:
    """`arr` with dim d first (a view): writing into it writes into arr."""
    return np.moveaxis(arr, d, 0) if arr.ndim else arr.reshape(1)


@formula
def IndexSelectBackward0(n, g, shape, dim, idx):
    return (index_add_into(g, shape, dim, idx),)


@formula
def IndexAddIntoBackward(n, g, dim, idx):
    return (index_select(g, dim, wrap(idx)),)


def index_add_into(g: Tensor, shape: tuple, dim: int, idx: np.ndarray) -> Tensor:
    """Zeros of `shape` with g's slices added at idx along dim (differentiably)."""
    z = np.zeros(shape, dtype=g.data.dtype)
    np.add.at(_along(z, dim), idx, _along(g.data.reshape(_keep(g.shape, shape, dim, idx)), dim))
    return record(z, IndexAddIntoBackward, (g,), (dim, idx))


def _keep(gshape: tuple, shape: tuple, dim: int, idx: np.ndarray) -> tuple:
    """The shape of g as a slice-stack along dim (a 0-d input's gradient: 1 slice)."""
    if not shape:
        return (idx.size,)
    return tuple(gshape)


def index_select_args(self: Tensor, dim: int, index: Any) -> tuple:
    """index_select's dim (0-based, non-negative) and positions, checked (its
    implementation for sparse tensors shares them: ops/sparse.py)."""
    d = wrap_dim(dim, self.ndim)
    idx = _int_index(index, "index_select")
    if idx.ndim > 1:
        raise RuntimeError("index_select(): Index is supposed to be a vector")
    idx = idx.reshape(-1)
    size = self.shape[d] if self.ndim else 1
    _check_bounds(idx, size, d, "index_select")
    return d, idx


@op(dims=("dim",), indices=("index",), samples=S.index_select, names="keep", forward="linear",
    complex_half=True)
def index_select(self: Tensor, dim: int, index: Tensor) -> Tensor:
    d, idx = index_select_args(self, dim, index)
    out = np.take(self.data, idx, axis=d) if self.ndim else self.data.reshape(1)[idx].reshape(
        np.shape(data_of(index)))
    return record(out, IndexSelectBackward0, (self,), (self.shape, d, idx))


@formula
def TakeBackward0(n, g, shape, idx):
    size = int(np.prod(shape))
    flat = np.where(idx < 0, idx + size, idx).reshape(-1)
    return (index_add_into(g.reshape(-1), (size,), 0, flat).reshape(shape),)


@op(indices=("index",), samples=S.take, forward="linear")
def take(self: Tensor, index: Tensor) -> Tensor:
    idx = _int_index(index, "take")
    size = self.numel()
    _check_bounds(idx, size, 0, "take", negative=True)
    return record(self.data.reshape(-1)[idx], TakeBackward0, (self,), (self.shape, idx))


# put: self seen as 1-d, source's values written (or added) at `index`


@formula
def PutBackward0(n, g, idx, sshape, accumulate):
    gs = None
    if n.needs(0):
        gs = g if accumulate else put(g, wrap(idx), g.new_zeros(sshape))
    return (gs, take(g, wrap(idx)).reshape(sshape) if n.needs(1) else None)


def _put(self: Tensor, index: Any, source: Any, accumulate: bool, op_name: str) -> tuple:
    idx = _int_index(index, op_name).reshape(-1)
    src = as_tensor(source)
    if src.numel() != idx.size:
        raise RuntimeError(f"{op_name}(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {src.numel()}, index.numel() = "
                           f"{idx.size}")
    size = self.numel()
    _check_bounds(idx, size, 0, op_name, negative=True)
    out = self.data.copy()
    flat = out.reshape(-1)
    values = src.data.reshape(-1).astype(out.dtype, copy=False)
    if accumulate:
        np.add.at(flat, idx, values)
    else:
        flat[idx] = values
    return out, PutBackward0, (self, src), (idx, src.shape, bool(accumulate))


@op(function=False, indices=("index",), samples=S.put)
def put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    return record(*_put(self, index, source, accumulate, "put"))


@op(function=False, indices=("index",), samples=S.inplace, invisible=True)
def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    return write_inplace(self, *_put(self, index, source, accumulate, "put_"))


@op(dims=("dim",), indices=("indices",), samples=S.take_along_dim, forward="linear")
def take_along_dim(self: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    idx = indices if isinstance(indices, Tensor) else wrap(_int_index(indices, "take_along_dim"))
    if dim is None:
        return gather(self.reshape(-1), 0, idx.reshape(-1))
    d = wrap_dim(dim, self.ndim)
    if idx.ndim != self.ndim:
        raise RuntimeError("take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {self.ndim} and {idx.ndim} dimensions")
    shape = list(np.broadcast_shapes(*(tuple(1 if k == d else s for k, s in enumerate(t.shape))
                                       for t in (self, idx))))
    xs = tuple(shape[:d] + [self.shape[d]] + shape[d + 1:])
    ixs = tuple(shape[:d] + [idx.shape[d]] + shape[d + 1:])
    x = self if self.shape == xs else self.expand(xs)
    i = idx if idx.shape == ixs else wrap(np.broadcast_to(idx.data, ixs))
    return gather(x, d, i)


def _scatter_key(idx: np.ndarray, d: int) -> tuple:
    grid = list(np.indices(idx.shape, sparse=True))
    grid[d] = idx
    return tuple(grid)


def _scatter_checks(self: Tensor, d: int, idx: np.ndarray, src: Any, op: str) -> None:
    if idx.ndim != self.ndim and not (idx.ndim <= 1 and self.ndim <= 1):
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"self tensor ({idx.ndim} vs {self.ndim})")
    for k, s in enumerate(idx.shape):
        if k != d and self.ndim and s > self.shape[k]:
            raise positional_error(RuntimeError, f"{op}(): Expected index {shape_str(idx.shape)} "
                                   f"to be smaller than self {shape_str(self.shape)} apart from "
                                   "dimension {d}", d=d)
        if isinstance(src, Tensor) and src.ndim and s > src.shape[k]:
            raise RuntimeError(f"{op}(): Expected index {shape_str(idx.shape)} to be smaller than "
                               f"src {shape_str(src.shape)}")
    _check_bounds(idx, self.shape[d] if self.ndim else 1, d, op)


def _src_part(src: Tensor, idx: np.ndarray) -> np.ndarray:
    """The part of src that index covers (its leading corner)."""
    return src.data[tuple(slice(0, s) for s in idx.shape)] if src.ndim else src.data


@formula
def ScatterBackward0(n, g, dim, idx):
    return (scatter(g, dim, wrap(idx), value=0) if n.needs(0) else None,
            gather(g, dim, wrap(idx)) if n.needs(1) else None)


@formula
def ScatterBackward1(n, g, dim, idx):
    return (scatter(g, dim, wrap(idx), value=0),)


def _scatter(self: Tensor, dim: int, index: Any, src: Any, value: Any, reduce: Any,
             op_name: str) -> tuple:
    """(result array, derivative, inputs, saved) of scatter."""
    if src is not None and not isinstance(src, Tensor):  # a number: R's `x$scatter(1, i, 1)`
        src, value = None, src
    if (src is None) == (value is None):
        raise RuntimeError(f"{op_name}(): give exactly one of `src` (a tensor) or `value` "
                           "(a number)")
    d = wrap_dim(dim, self.ndim)
    idx = _int_index(index, op_name)
    _scatter_checks(self, d, idx, src, op_name)
    out = self.data.copy()
    key = _scatter_key(idx, d) if self.ndim else (idx.reshape(-1),)
    target = out if self.ndim else out.reshape(1)
    vals = _src_part(src, idx) if src is not None else fill_scalar(value, op_name)
    if reduce is None:
        target[key] = vals
    elif reduce in ("add", "multiply"):
        if needs_grad_any(self, src):
            raise RuntimeError(f"{op_name}() with reduce is not differentiable here; use "
                               "scatter_add() (reduce = \"add\") for gradients")
        (np.add if reduce == "add" else np.multiply).at(target, key, vals)
    else:
        raise RuntimeError(f'{op_name}(): reduce argument must be either "add" or "multiply", '
                           f'got "{reduce}"')
    if src is not None:
        return out, ScatterBackward0, (self, src), (d, idx)
    return out, ScatterBackward1, (self,), (d, idx)


def needs_grad_any(*ts: Any) -> builtins.bool:
    return grad_state.grad and any(isinstance(t, Tensor) and t._rg for t in ts)


# (`src` a number is the value, as R torch's `x$scatter(dim, index, 1)`: so not cast to a tensor)
@op(dims=("dim",), indices=("index",), samples=S.scatter)
def scatter(self: Tensor, dim: int, index: Tensor, src: Any = None, value: float | None = None,
            reduce: str | None = None) -> Tensor:
    out, fn, inputs, saved = _scatter(self, dim, index, src, value, reduce, "scatter")
    return record(out, fn, inputs, saved)


@op(function=False, dims=("dim",), indices=("index",), samples=S.inplace, invisible=True)
def scatter_(self: Tensor, dim: int, index: Tensor, src: Any = None, value: float | None = None,
             reduce: str | None = None) -> Tensor:
    out, fn, inputs, saved = _scatter(self, dim, index, src, value, reduce, "scatter_")
    return write_inplace(self, out, fn, inputs, saved)


@formula
def ScatterAddBackward0(n, g, dim, idx):
    return (g if n.needs(0) else None, gather(g, dim, wrap(idx)) if n.needs(1) else None)


def _scatter_add(self: Tensor, dim: int, index: Any, src: Any, op_name: str) -> tuple:
    src = src if isinstance(src, Tensor) else wrap(np.asarray(data_of(src), self.data.dtype))
    d = wrap_dim(dim, self.ndim)
    idx = _int_index(index, op_name)
    _scatter_checks(self, d, idx, src, op_name)
    out = self.data.copy()
    key = _scatter_key(idx, d) if self.ndim else (idx.reshape(-1),)
    np.add.at(out if self.ndim else out.reshape(1), key, _src_part(src, idx))
    return out, ScatterAddBackward0, (self, src), (d, idx)


@op(dims=("dim",), indices=("index",), samples=S.scatter_add)
def scatter_add(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    out, fn, inputs, saved = _scatter_add(self, dim, index, src, "scatter_add")
    return record(out, fn, inputs, saved)


@op(function=False, dims=("dim",), indices=("index",), samples=S.inplace, invisible=True)
def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    out, fn, inputs, saved = _scatter_add(self, dim, index, src, "scatter_add_")
    return write_inplace(self, out, fn, inputs, saved)


def _along_index(self: Tensor, dim: int, index: Any, op_name: str) -> tuple:
    d = wrap_dim(dim, self.ndim)
    idx = _int_index(index, op_name)
    if idx.ndim > 1:
        raise RuntimeError(f"{op_name}(): Index is supposed to be a vector")
    idx = idx.reshape(-1)
    _check_bounds(idx, self.shape[d] if self.ndim else 1, d, op_name)
    return d, idx


def _source_for(self: Tensor, source: Any, d: int, idx: np.ndarray, op_name: str) -> Tensor:
    source = source if isinstance(source, Tensor) else \
        wrap(np.asarray(data_of(source), self.data.dtype))
    want = self.shape[:d] + (idx.size,) + self.shape[d + 1:] if self.ndim else (idx.size,)
    if source.shape != want and not (source.ndim == 0 and idx.size == 1):
        raise RuntimeError(f"{op_name}(): source of shape {shape_str(source.shape)} must have the "
                           f"shape of self with dim {d} of size len(index) = {idx.size}: "
                           f"{shape_str(want)}")
    return source


@formula
def IndexAddBackward0(n, g, dim, idx, alpha, sshape):
    gs = None
    if n.needs(1):
        gs = index_select(g, dim, wrap(idx)).reshape(sshape)
        gs = gs * alpha if alpha != 1 else gs
    return (g if n.needs(0) else None, gs)


def _index_add(self: Tensor, dim: int, index: Any, source: Any, alpha: Any, op_name: str) -> tuple:
    d, idx = _along_index(self, dim, index, op_name)
    src = _source_for(self, source, d, idx, op_name)
    out = self.data.copy()
    add = src.data.reshape(-1) if not self.ndim else _along(src.data, d)
    np.add.at(_along(out, d), idx, add * alpha if alpha != 1 else add)
    return out, IndexAddBackward0, (self, src), (d, idx, alpha, src.shape)


@op(dims=("dim",), indices=("index",), samples=S.index_add, forward="linear")
def index_add(self: Tensor, dim: int, index: Tensor, source: Tensor, alpha: float = 1) -> Tensor:
    return record(*_index_add(self, dim, index, source, alpha, "index_add"))


@op(function=False, dims=("dim",), indices=("index",), samples=S.inplace, invisible=True)
def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, alpha: float = 1) -> Tensor:
    return write_inplace(self, *_index_add(self, dim, index, source, alpha, "index_add_"))


@formula
def IndexCopyBackward0(n, g, dim, idx, sshape):
    return (index_fill(g, dim, wrap(idx), 0) if n.needs(0) else None,
            index_select(g, dim, wrap(idx)).reshape(sshape) if n.needs(1) else None)


def _index_copy(self: Tensor, dim: int, index: Any, source: Any, op_name: str) -> tuple:
    d, idx = _along_index(self, dim, index, op_name)
    src = _source_for(self, source, d, idx, op_name)
    out = self.data.copy()
    _along(out, d)[idx] = src.data.reshape(-1) if not self.ndim else _along(src.data, d)
    return out, IndexCopyBackward0, (self, src), (d, idx, src.shape)


@op(dims=("dim",), indices=("index",), samples=S.index_copy, forward="linear", autocast="promote")
def index_copy(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    return record(*_index_copy(self, dim, index, source, "index_copy"))


@op(function=False, dims=("dim",), indices=("index",), samples=S.inplace, invisible=True)
def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    return write_inplace(self, *_index_copy(self, dim, index, source, "index_copy_"))


@formula
def IndexFillBackward0(n, g, dim, idx):
    return (index_fill(g, dim, wrap(idx), 0),)


def _index_fill(self: Tensor, dim: int, index: Any, value: Any, op_name: str) -> tuple:
    d, idx = _along_index(self, dim, index, op_name)
    out = self.data.copy()
    _along(out, d)[idx] = fill_scalar(value, op_name)
    return out, IndexFillBackward0, (self,), (d, idx)


@op(dims=("dim",), indices=("index",), samples=S.index_fill, names="keep")
def index_fill(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    return record(*_index_fill(self, dim, index, value, "index_fill"))


@op(function=False, dims=("dim",), indices=("index",), samples=S.inplace, invisible=True)
def index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    return write_inplace(self, *_index_fill(self, dim, index, value, "index_fill_"))


@formula
def IndexPutAccumulateBackward(n, g, key):
    return (g if n.needs(0) else None, g[wrap_key(key)] if n.needs(1) else None)


@op(indices=("indices",), samples=S.index_put)
def index_put(self: Tensor, indices: Any, values: Tensor,
              accumulate: builtins.bool = False) -> Tensor:
    return _index_put(self, indices, values, accumulate, inplace=False)


@formula
def MaskedSelectBackward0(n, g, mask, shape):
    z = np.zeros(shape, dtype=g.data.dtype)
    z[mask] = g.data
    return (record(z, MaskedSelectGradBackward, (g,), (mask,)),)


@formula
def MaskedSelectGradBackward(n, g, mask):
    return (g[wrap(mask)],)


@op(samples=S.masked_select, forward="linear")
def masked_select(self: Tensor, mask: Tensor) -> Tensor:
    m = bool_mask(mask, "masked_select")
    try:
        shape = np.broadcast_shapes(self.shape, m.shape)
    except ValueError:
        raise broadcast_error(self, mask, "masked_select") from None
    mb = np.broadcast_to(m, shape)
    return record(np.broadcast_to(self.data, shape)[mb], MaskedSelectBackward0, (self,),
                  (mb, shape))


@formula
def MaskedScatterBackward0(n, g, mask, sshape):
    gx = g.masked_fill(wrap(mask), 0) if n.needs(0) else None
    gs = None
    if n.needs(1):
        size = int(np.prod(sshape))
        picked = g[wrap(mask)]  # the source's first elements; zeros for the others
        gs = picked if picked.shape[0] == size else \
            index_add_into(picked, (size,), 0, np.arange(picked.shape[0]))
        gs = gs.reshape(sshape)
    return gx, gs


def _masked_scatter(self: Tensor, mask: Any, source: Any, op_name: str, inplace: builtins.bool) -> tuple:
    m = bool_mask(mask, op_name)
    try:
        shape = np.broadcast_shapes(self.shape, m.shape)
    except ValueError:
        raise broadcast_error(self, mask, op_name) from None
    if inplace and shape != self.shape:
        raise RuntimeError(f"{op_name}: the mask of shape {shape_str(m.shape)} must broadcast to "
                           f"the tensor's shape {shape_str(self.shape)}")
    src = source if isinstance(source, Tensor) else \
        wrap(np.asarray(data_of(source), self.data.dtype))
    mb = np.broadcast_to(m, shape)
    k = int(mb.sum())
    if src.numel() < k:
        raise RuntimeError(f"{op_name}: Number of elements of source < number of ones in mask "
                           f"({src.numel()} < {k})")
    out = np.array(np.broadcast_to(self.data, shape))
    out[mb] = src.data.reshape(-1)[:k]
    return out, MaskedScatterBackward0, (self, src), (mb, src.shape)


@op(samples=S.masked_scatter)
def masked_scatter(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    return record(*_masked_scatter(self, mask, source, "masked_scatter", False))


@op(function=False, samples=S.inplace, invisible=True)
def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    return write_inplace(self, *_masked_scatter(self, mask, source, "masked_scatter_", True))


@op(returns_indices=True, differentiable=False, samples=S.nonzero, complex_half=True)
def nonzero(self: Tensor, as_list: builtins.bool = False) -> Any:
    d = data_of(self)
    if as_list:
        return tuple(wrap(i.astype(np.int64)) for i in np.nonzero(np.atleast_1d(d)))
    return wrap(np.argwhere(d).astype(np.int64))


@op(returns_indices=True, differentiable=False, samples=S.nonzero_only)
def argwhere(self: Tensor) -> Tensor:
    return nonzero(self)


def _triangle_indices(row: Any, col: Any, offset: Any, upper: builtins.bool, dtype: Any) -> Tensor:
    row, col, offset = whole(row, "row"), whole(col, "col"), whole(offset, "offset")
    if row < 0 or col < 0:
        raise RuntimeError(f"row and col must be non-negative, got row {row} and col {col}")
    r, c = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    out = wrap(np.stack([r, c]).astype(np.int64).reshape(2, -1))
    return out if dtype is None else out.to(dtype=dtype)


@op(method=False, returns_indices=True, differentiable=False, samples=S.triangle_indices)
def tril_indices(row: int, col: int, offset: int = 0, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The positions (2 x n: rows, then columns) of a row x col matrix's lower triangle."""
    return _triangle_indices(row, col, offset, False, dtype)


@op(method=False, returns_indices=True, differentiable=False, samples=S.triangle_indices)
def triu_indices(row: int, col: int, offset: int = 0, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The positions (2 x n: rows, then columns) of a row x col matrix's upper triangle."""
    return _triangle_indices(row, col, offset, True, dtype)


# ==========================================================================
# scatter_reduce: src's values combined into self's positions by index

_REDUCE_START = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}
_REDUCE_AT = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
              "amin": np.minimum}


@formula
def ScatterReduceBackward0(n, g, dim, idx, reduce, include_self, touched, counts,
                           self_, src, result):
    ix = wrap(idx)
    keep = wrap(~touched) if not include_self else None
    gx = gs = None
    if reduce in ("sum", "mean"):
        gm = g / wrap(counts.astype(g.data.dtype)) if reduce == "mean" else g
        if n.needs(0):
            gx = gm if keep is None else gm * keep
        if n.needs(1):
            gs = gather(gm, dim, ix)
    elif reduce in ("amax", "amin"):
        # the gradient is shared evenly by every element equal to the result
        hit_self = (self_ == result) if include_self else None
        picked = gather(result, dim, ix)
        hit_src = _src_corner(src, idx) == picked
        ties = scatter_add(wrap(np.zeros(result.shape, result.data.dtype)), dim, ix,
                           hit_src.to(dtype=result.dtype))
        if hit_self is not None:
            ties = ties + hit_self.to(dtype=result.dtype)
        share = g / ties.clamp(min=1)
        if n.needs(0):
            gx = share * hit_self.to(dtype=g.dtype) if hit_self is not None else g * keep
        if n.needs(1):
            gs = gather(share, dim, ix) * hit_src.to(dtype=g.dtype)
    else:  # prod: each contributor's gradient is the product of the others
        if n.needs(0):
            gx = g * result / self_ if include_self else g * keep
        if n.needs(1):
            gs = gather(g * result, dim, ix) / _src_corner(src, idx)
    if gs is not None and src.shape != tuple(idx.shape):
        z = wrap(np.zeros(src.shape, gs.data.dtype))
        gs = _put_corner(z, gs, idx)
    return gx, gs


def _src_corner(src: Tensor, idx: np.ndarray) -> Tensor:
    return src[tuple(slice(0, s) for s in idx.shape)] if src.shape != tuple(idx.shape) else src


def _put_corner(z: Tensor, part: Tensor, idx: np.ndarray) -> Tensor:
    return index_put(z, tuple(slice(0, s) for s in idx.shape), part)


def _scatter_reduce(self: Tensor, dim: int, index: Any, src: Any, reduce: str,
                    include_self: builtins.bool, op_name: str) -> tuple:
    if reduce not in _REDUCE_AT:
        raise RuntimeError(f'{op_name}(): reduce argument must be one of "sum", "prod", '
                           f'"mean", "amax", "amin", got "{reduce}"')
    src = src if isinstance(src, Tensor) else wrap(np.asarray(data_of(src), self.data.dtype))
    d = wrap_dim(dim, self.ndim)
    idx = _int_index(index, op_name)
    _scatter_checks(self, d, idx, src, op_name)
    key = _scatter_key(idx, d) if self.ndim else (idx.reshape(-1),)
    vals = _src_part(src, idx)
    touched = np.zeros(self.shape, dtype=bool)
    (touched if self.ndim else touched.reshape(1))[key] = True
    out = self.data.copy()
    flat = out if self.ndim else out.reshape(1)
    if not include_self:
        start = _REDUCE_START[reduce]
        if out.dtype.kind != "f" and not np.isfinite(start):
            start = np.iinfo(out.dtype).min if reduce == "amax" else np.iinfo(out.dtype).max
        flat[key] = start
    _REDUCE_AT[reduce].at(flat, key, vals)
    counts = np.zeros(self.shape, dtype=np.int64)
    np.add.at(counts if self.ndim else counts.reshape(1), key, 1)
    counts = counts + (1 if include_self else 0)
    counts = np.maximum(counts, 1)
    if reduce == "mean":
        out = np.where(touched, out / counts if out.dtype.kind == "f" else out // counts, out)
        out = out.astype(self.data.dtype)
    if reduce == "prod" and needs_grad_any(self, src) and (
            (include_self and (self.data[touched] == 0).any()) or (vals == 0).any()):
        raise RuntimeError(f"{op_name}(): the gradient of reduce = \"prod\" with a zero among "
                           "the combined values is not supported here")
    return out, ScatterReduceBackward0, (self, src), \
        (d, idx, reduce, builtins.bool(include_self), touched, counts, self, src, OUTPUT)


@op(dims=("dim",), indices=("index",), samples=S.scatter_reduce)
def scatter_reduce(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                   include_self: builtins.bool = True) -> Tensor:
    return record(*_scatter_reduce(self, dim, index, src, reduce, include_self,
                                   "scatter_reduce"))


@op(function=False, dims=("dim",), indices=("index",), samples=S.inplace, invisible=True)
def scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str,
                    include_self: builtins.bool = True) -> Tensor:
    out, fn, inputs, saved = _scatter_reduce(self, dim, index, src, reduce, include_self,
                                             "scatter_reduce_")
    return write_inplace(self, out, fn, inputs, saved)


# index_reduce: source's slices combined into self's slices at index along dim; it is
# scatter_reduce with each position of index spread over its slice of source (the
# same derivative, PyTorch's IndexReduceBackward0)

def _index_reduce(self: Tensor, dim: int, index: Any, source: Any, reduce: str,
                  include_self: builtins.bool, op_name: str) -> tuple:
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f'{op_name}(): reduce argument must be one of "prod", "mean", '
                           f'"amax", "amin", got "{reduce}"')
    d, idx = _along_index(self, dim, index, op_name)
    src = _source_for(self, source, d, idx, op_name)
    spread = idx.reshape([-1 if k == d else 1 for k in range(src.ndim)]) if self.ndim else idx
    return _scatter_reduce(self, d, wrap(np.broadcast_to(spread, src.shape)), src, reduce,
                           include_self, op_name)


@op(function=False, dims=("dim",), indices=("index",), samples=S.index_reduce)
def index_reduce(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str,
                 include_self: builtins.bool = True) -> Tensor:
    return record(*_index_reduce(self, dim, index, source, reduce, include_self,
                                 "index_reduce"), name="IndexReduceBackward0")


@op(function=False, dims=("dim",), indices=("index",), samples=S.inplace, invisible=True)
def index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str,
                  include_self: builtins.bool = True) -> Tensor:
    return write_inplace(self, *_index_reduce(self, dim, index, source, reduce, include_self,
                                              "index_reduce_"), name="IndexReduceBackward0")
