"""Indexing and selection: `x[key]`, `x[key] = v`, gather, where, masked_fill."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..engine import bump_version
from ..tensor import Tensor, _dim, wrap
from .samples import indexing as S
from .operands import _bool_mask, _broadcast_error, _data, _fill_value, _float_result, _shape, _t
from .recording import _state, formula, record
from .shape import SliceBackward0
from .registry import op
from .views import _check_inplace, _index_backward, _is_basic, _record_inplace, _view, _wrap_key


@formula
def GatherBackward0(n, g, idx, dim, shape):
    return (_scatter_add_along(g, idx, dim, shape),)


@op(dims=("dim",), indices=("index",), samples=S.gather)
def gather(self: Tensor, dim: int, index: Tensor) -> Tensor:
    d = _dim(dim, self.ndim)
    idx = index.data
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"gather(): Expected dtype int64 for index, got "
                           f"{index.dtype!r}")
    return record(np.take_along_axis(self.data, idx, axis=d), GatherBackward0, (self,),
                  (idx, d, self.shape))


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


@op(method=False, samples=S.where)
def where(condition: Any, self: Any, other: Any) -> Tensor:
    cond = _data(condition)
    if isinstance(condition, Tensor) and cond.dtype != np.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype.r_name}; compare first, e.g. x > 0")
    if not isinstance(cond, np.ndarray) or cond.dtype != np.bool_:
        cond = np.asarray(cond).astype(bool)
    try:
        out = np.where(cond, _data(self), _data(other))
    except ValueError:
        raise _broadcast_error(self, other, "where") from None
    out = _float_result(out, self, other)  # (NumPy >= 2 treats numbers as weak, like torch)
    return record(out, WhereBackward0, (None, _t(self), _t(other)), (wrap(cond),))


@formula
def MaskedFillBackward0(n, g, mask):
    return (g.masked_fill(mask, 0),)


@formula
def MaskedFillBackward1(n, g, mask, vshape):
    gx = g.masked_fill(mask, 0) if n.needs(0) else None
    gv = where(mask, g, wrap(np.zeros((), g.data.dtype))).sum().reshape(vshape) \
        if n.needs(1) else None
    return gx, gv


@op(samples=S.masked_fill)
def masked_fill(self: Tensor, mask: Any, value: Any) -> Tensor:
    m = _bool_mask(mask, "masked_fill")
    v = _fill_value(value, "masked_fill")
    try:  # out of place, tensor and mask broadcast together (as in PyTorch)
        out = np.where(m, np.asarray(v, dtype=self.data.dtype), self.data)
    except ValueError:
        raise _broadcast_error(self, mask, "masked_fill") from None
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
        return IndexError(f"index out of range: {msg} (tensor of shape {_shape(x.shape)})")
    return IndexError(f"can't index a tensor of shape {_shape(x.shape)} that way: {msg}")


@formula
def IndexBackward0(n, g, shape, key):
    return (_index_backward(g, key, shape, True),)


@op(function=False, method=False, operators=("__getitem__",))
def index(self: Tensor, key: Any) -> Tensor:
    if type(key) is int:  # fast path: x[i]
        try:
            arr = self.data[key, ...]
        except IndexError as e:
            raise _index_error(e, self, (key,)) from None
        return record(_view(self, arr), SliceBackward0, (self,), (self.shape, (key,)),
                      name="SelectBackward0")
    k = _np_key(key, self)
    try:
        arr = self.data[k]
    except (IndexError, ValueError) as e:
        raise _index_error(e, self, k) from None
    basic = _is_basic(k)
    if basic:
        if type(arr) is not np.ndarray:  # an int for every dim: a 0-d view, not a copy
            arr = self.data[k + (Ellipsis,)]
        out = _view(self, arr)
    else:
        out = wrap(arr)
    return record(out, IndexBackward0 if not basic else SliceBackward0, (self,), (self.shape, k),
                  name=_index_name(k, basic))


@formula
def IndexPutBackward0(n, g, key, vshape):
    gx = g.clone() if n.needs(0) else None
    if gx is not None:
        gx = _zero_at(gx, key)
    gv = g[_wrap_key(key)] if n.needs(1) else None
    return gx, gv


@formula
def ZeroAtBackward(n, g, key):
    return (_zero_at(g, key),)


def _zero_at(g: Tensor, key: tuple) -> Tensor:
    d = g.data.copy()
    d[key] = 0
    return record(d, ZeroAtBackward, (g,), (key,))


@op(function=False, operators=("__setitem__",))
def index_put_(self: Tensor, key: Any, value: Any) -> Tensor:
    """`x[key] = value` in place, recorded for autograd."""
    k = _np_key(key, self)
    v = value if isinstance(value, Tensor) else None
    vd = _data(value)
    _check_inplace(self, v)
    try:
        self.data[k] = vd
    except (IndexError, ValueError) as e:
        if "broadcast" in str(e) or "shape" in str(e):
            raise RuntimeError(
                f"index assignment: a value of shape {_shape(np.shape(vd))} can't be put into "
                f"the selected elements of shape {_shape(np.shape(self.data[k]))}") from None
        raise _index_error(e, self, k) from None
    bump_version(self)
    name = "IndexPutBackward0" if not _is_basic(k) else "CopySlices"
    return _record_inplace(self, IndexPutBackward0, (self, v), (k, np.shape(vd)), name)


@op(function=False)
def masked_fill_(self: Tensor, mask: Any, value: Any) -> Tensor:
    m = _bool_mask(mask, "masked_fill_")
    v = _fill_value(value, "masked_fill_")
    t = value if isinstance(value, Tensor) else None
    _check_inplace(self, t)
    try:
        np.copyto(self.data, np.asarray(v, dtype=self.data.dtype), where=m)
    except ValueError:
        raise RuntimeError(f"masked_fill_: the mask of shape {_shape(m.shape)} must "
                           f"broadcast to the tensor's shape {_shape(self.shape)}") from None
    bump_version(self)
    if t is not None:
        return _record_inplace(self, MaskedFillBackward1, (self, t), (wrap(m), t.shape))
    return _record_inplace(self, MaskedFillBackward0, (self,), (wrap(m),))


