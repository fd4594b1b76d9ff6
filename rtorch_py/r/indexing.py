"""R torch's `[` and `[<-` on tensors: 1-based, per-dim vector indices (as R's
`[`), `..`, `newaxis`, negative indices from the end, boolean masks.
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import ops as _ops
from ..tensor import MODES, Tensor, converted, wrap
from . import one_based
from .convert import UNDEFINED, _list

# --------------------------------------------------------------------------
# Indexing: R torch's `[` and `[<-`
#
# The R side evaluates each index expression (with `:`, `N`, `newaxis`, `..`
# masked as R torch does) and sends a spec: a list of [kind, value] pairs,
# kind one of "all" (empty), "fill" (`..`), "new" (NULL/newaxis), "slice"
# (c(start, end, step) already 0-based as slc() gives it), "value".


_INT_MAX = 2**31 - 1
# the ops' public functions (an active mode, a trace, sees their calls)
_index, _index_put_ = _ops.REGISTRY["index"].fn, _ops.REGISTRY["index_put_"].fn


def _index_value(v: Any, size: int | None) -> Any:
    """One R index value -> ("int", k) | ("array", ndarray) | ("mask", ndarray)."""
    if isinstance(v, Tensor):
        if MODES:
            converted(v, "an R index")
        d = v.data
        if d.dtype.kind == "b":
            return ("mask", d)
        if d.dtype.kind not in "iu":
            raise IndexError(f"tensors used as indices must be long, int or bool tensors, "
                             f"got {v.dtype}")
        if d.ndim == 0:
            return ("int", one_based.position(int(d)))
        return ("array", one_based.positions(d))
    if isinstance(v, (bool, np.bool_)):
        return ("mask", np.asarray([bool(v)] * (size if size is not None else 1)))
    if isinstance(v, (int, float, np.integer, np.floating)):
        return ("int", one_based.position(one_based.integer(v, "index")))
    if isinstance(v, np.ndarray):
        # an R matrix or array keeps its shape (as R torch's tensor of it would)
        flat = v if v.ndim > 1 else v.reshape(-1)
        if v.dtype == np.bool_:
            return ("mask", flat)
        return ("array", one_based.positions(flat))
    raise IndexError(f"can't index a tensor with an object of type {type(v).__name__}")


def _slice(v: Any) -> slice:
    start, end, step = (np.asarray(v, dtype=np.float64).reshape(-1).tolist() + [1, 1, 1])[:3]
    end = None if end >= _INT_MAX else int(end)
    return slice(int(start), end, int(step))


def _parse_spec(x: Tensor, spec: Any, drop: bool) -> tuple[tuple, list, Any]:
    """Split R indices into a basic key, then orthogonal advanced indices.

    Returns (basic key, [(output axis, int array)], whole-tensor mask or None).
    """
    items = [_list(s) for s in _list(spec)]
    kinds = [it[0] for it in items]
    n_fill = kinds.count("fill")
    if n_fill > 1:
        raise IndexError("only one `..` is allowed in an index")
    consumed = builtins.sum(1 for k in kinds if k not in ("fill", "new"))
    # A multi-dimensional boolean mask consumes as many dims as it has.
    for it in items:
        v = it[1] if it[0] == "value" else None
        d = v.data if isinstance(v, Tensor) else v
        if isinstance(d, np.ndarray) and d.dtype == np.bool_:
            consumed += builtins.max(d.ndim, 1) - 1
    if consumed > x.ndim:
        raise IndexError(f"too many indices for a tensor of dimension {x.ndim} "
                         f"({consumed} given)")
    basic: list = []
    advanced: list = []
    whole_mask = None
    in_dim = 0
    out_axis = 0
    for kind, *rest in items:
        if kind == "fill":
            n = x.ndim - consumed
            basic.extend([slice(None)] * n)
            in_dim += n
            out_axis += n
        elif kind == "new":
            basic.append(None)
            out_axis += 1
        elif kind == "all":
            basic.append(slice(None))
            in_dim += 1
            out_axis += 1
        elif kind == "slice":
            basic.append(_slice(rest[0]))
            in_dim += 1
            out_axis += 1
        else:
            size = x.shape[in_dim] if in_dim < x.ndim else None
            what, val = _index_value(rest[0], size)
            if what == "int":
                if size is not None and not -size <= val < size:
                    raise _out_of_bounds(val, in_dim, size)
                if drop:
                    basic.append(val)
                else:
                    basic.append(slice(val, val + 1 if val != -1 else None))
                    out_axis += 1
                in_dim += 1
            elif what == "mask" and val.ndim > 1:
                if len(items) != 1:
                    raise IndexError("a multi-dimensional boolean mask must be the only index")
                whole_mask = val
                in_dim += val.ndim
            else:
                if what == "mask":
                    if size is not None and val.shape[0] != size:
                        raise IndexError(f"The shape of the mask [{val.shape[0]}] at "
                                         f"dimension {one_based.dim_to_r(in_dim)} does not "
                                         f"match the size {size} of the indexed tensor at "
                                         "that dimension")
                    val = np.nonzero(val)[0]
                if size is not None and val.size and (val.max() >= size or val.min() < -size):
                    raise _out_of_bounds(val[(val >= size) | (val < -size)][0], in_dim, size)
                basic.append(slice(None))
                advanced.append((out_axis, val))
                in_dim += 1
                out_axis += builtins.max(val.ndim, 1)  # (a matrix index adds its dims)
    return tuple(basic), advanced, whole_mask


def _out_of_bounds(k: int, dim: int, size: int) -> IndexError:
    return one_based.in_r_counting(IndexError(
        f"index {one_based.position_to_r(k)} is out of bounds for dimension "
        f"{one_based.dim_to_r(dim)} with size {size}"))


_ALL = slice(None)


def _simple_key(x: Tensor, spec: list, drop: bool) -> tuple | None:
    """The key for the common basic indices — `x[i, ]`, `x[, j]`, `x[i, j]`,
    `x[1:n, ]`, `x[, NULL]` (whole numbers, empties, ranges, new axes) — or
    None when the full parser is needed (it also words the errors)."""
    if not drop:
        return None
    key = []
    d = 0
    for item in spec:
        kind = item[0]
        if kind == "new":
            key.append(None)
            continue
        if d >= x.ndim:
            return None
        if kind == "all":
            key.append(_ALL)
        elif kind == "slice":
            key.append(_slice(item[1]))
        elif kind != "value":
            return None
        else:
            v = item[1]
            if type(v) is float:
                k = int(v)
                if k != v:
                    return None
            elif type(v) is int:
                k = v
            else:
                return None
            if k == 0:
                return None
            k = one_based.position(k)
            if not -x.shape[d] <= k < x.shape[d]:
                return None
            key.append(k)
        d += 1
    return tuple(key)


def index(x: Tensor, spec: Any, drop: bool = True) -> Tensor:
    """x[...] with R torch's semantics; vector indices act per dim (as R's `[`)."""
    if x is UNDEFINED:
        raise RuntimeError("can't index an undefined tensor")
    if type(spec) is list:
        key = _simple_key(x, spec, drop)
        if key is not None:
            return _index(x, key)
    basic, advanced, mask = _parse_spec(x, spec, bool(drop))
    if mask is not None:
        if mask.shape != x.shape[:mask.ndim]:
            raise IndexError(f"The shape of the mask {list(mask.shape)} does not match the "
                             f"shape of the indexed tensor {list(x.shape)}")
        return _index(x, wrap(mask))
    out = x if all(k == slice(None) for k in basic) and len(basic) == x.ndim else \
        _index(x, basic)
    for axis, arr in advanced:
        out = _index(out, (slice(None),) * axis + (wrap(arr),))
    return out


def _fit_value(value: Any, target: tuple) -> Any:
    """Drop a value's extra leading 1-sized dims, as torch does when it copies
    `torch_tensor(0)` (shape [1]) into a single element."""
    if isinstance(value, Tensor) and value.ndim > len(target):
        lead = value.ndim - len(target)
        if all(s == 1 for s in value.shape[:lead]):
            return value.reshape(value.shape[lead:])
    return value


def index_put(x: Tensor, spec: Any, value: Any) -> Tensor:
    """x[...] <- value, in place, recorded for autograd."""
    basic, advanced, mask = _parse_spec(x, spec, True)
    if len(advanced) > 1:
        # as R torch: two vector indices would select R's cross product but
        # PyTorch's pairs, so assignment refuses them rather than guess
        raise IndexError("Only one tensor is allowed in the index: assign through one "
                         "vector or tensor index at a time (e.g. loop over the rows), or "
                         "use one boolean mask of the tensor's shape")
    if isinstance(value, np.ndarray):
        value = wrap(value.astype(x.data.dtype))
    elif isinstance(value, Tensor) and value.data.dtype != x.data.dtype:
        value = value.to(dtype=x.dtype)
    if mask is not None:
        _index_put_(x, wrap(mask), _fit_value(value, (int(mask.sum()),)))
        return x
    if not advanced:
        _index_put_(x, basic, _fit_value(value, np.shape(x.data[basic])))
        return x
    # Orthogonal advanced indices: express them as one NumPy-style key whose
    # arrays broadcast against each other (np.ix_), on the non-dropped dims.
    key = list(basic)
    out_axis = 0
    positions = []
    for i, k in enumerate(key):
        if isinstance(k, (int, np.integer)):
            continue
        positions.append((out_axis, i))
        out_axis += 1
    axis_to_key = dict(positions)
    arrays = [arr for _, arr in advanced]
    grids = np.ix_(*arrays) if len(arrays) > 1 else arrays
    for (axis, _), g in zip(advanced, grids):
        key[axis_to_key[axis]] = wrap(np.asarray(g))
    _index_put_(x, tuple(key), value)
    return x


