"""The meta device: tensors with a shape and a dtype and no data (PyTorch's and
R torch's `device = "meta"`), to work out what shapes and dtypes ops give
without computing anything that is kept.

A meta tensor's array is a `MetaArray`: a zero seen through zero strides, so it
holds no memory of its size. NumPy hands every ufunc and array function that
meets one to the hooks below, which run it on those zeros (any memory a result
needs is held only for the call) and return meta arrays of the result's shape
and dtype. So an op on meta tensors gives a meta tensor, with no change to the
op. Writing into a meta array does nothing (it has no data); reading its values
is refused.

This module imports only NumPy (the tensor module imports it).
"""
from __future__ import annotations

from typing import Any

import numpy as np

# Set (by watch_operands) once a meta array or a bfloat16 tensor may exist: only
# then does the op recorder (ops.recording) look at an op's operands for them.
WATCH = [False]


def watch_operands() -> None:
    """From now on ops look at their operands for meta arrays and bfloat16."""
    WATCH[0] = True

NO_DATA = ("a meta tensor has only a shape and a dtype, no values; create it on the "
           "cpu device to compute values")


class MetaArray(np.ndarray):
    """An array of a shape and a dtype with no data (see the module doc)."""

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = kwargs.get("out")
        if out is not None and any(isinstance(o, MetaArray) for o in out):
            return out[0] if len(out) == 1 else out  # (in place: nothing to write)
        return _run(getattr(ufunc, method), inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _run(func, args, kwargs)

    def __setitem__(self, key: Any, value: Any) -> None:
        pass  # no data to write

    def astype(self, dtype: Any, *args: Any, **kwargs: Any) -> "MetaArray":
        return meta_array(self.shape, dtype)

    def copy(self, order: str = "C") -> "MetaArray":
        return meta_array(self.shape, self.dtype)

    def item(self, *args: Any) -> Any:
        raise RuntimeError(f"item() of a meta tensor: {NO_DATA}")

    def tolist(self) -> Any:
        raise RuntimeError(f"tolist() of a meta tensor: {NO_DATA}")


def meta_array(shape: Any, dtype: Any) -> MetaArray:
    """A meta array: no memory whatever its shape."""
    watch_operands()
    return np.broadcast_to(np.zeros((), dtype), tuple(shape)).view(MetaArray)


def _run(fn: Any, args: Any, kwargs: Any) -> Any:
    """fn on the zeros meta arrays stand for; where zeros don't do (a singular
    matrix, an empty mode...), on random values; the result as meta arrays."""
    with np.errstate(all="ignore"):
        try:
            res = fn(*_plain(args), **_plain(kwargs))
        except Exception:
            rng = np.random.default_rng(0)
            res = fn(*_plain(args, rng), **_plain(kwargs, rng))
    return _as_meta(res)


def _plain(v: Any, rng: Any = None) -> Any:
    """Arguments with meta arrays seen as the plain arrays of zeros they are (or,
    given a generator, as arrays of random floats)."""
    if isinstance(v, MetaArray):
        if rng is None or v.dtype.kind not in "fc":
            return v.view(np.ndarray)
        return rng.standard_normal(v.shape).astype(v.dtype)
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x, rng) for x in v)
    if isinstance(v, dict):
        return {k: _plain(x, rng) for k, x in v.items()}
    return v


def _as_meta(res: Any) -> Any:
    if isinstance(res, np.ndarray):
        return res if isinstance(res, MetaArray) else meta_array(res.shape, res.dtype)
    if isinstance(res, np.generic):
        return meta_array((), res.dtype)
    if isinstance(res, tuple) and hasattr(res, "_fields"):  # (NumPy's named results)
        return type(res)(*(_as_meta(x) for x in res))
    if isinstance(res, (list, tuple)):
        return type(res)(_as_meta(x) for x in res)
    return res
