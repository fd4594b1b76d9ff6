"""How an op's operands become arrays, and PyTorch's result dtypes.

Numbers, tensors and nested lists are all operands; these helpers give the
array to compute on, the dtype PyTorch would give the result, and the errors
for operands that don't fit.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..tensor import BF16, Tensor, F32, F64, get_default_dtype, result_type, to_array

Number = (int, float, bool, np.number, np.bool_)

# The plain numbers: Python's own (what an R number becomes on its way in).
_PLAIN_NUMBERS = frozenset({float, int, bool})


def is_number(v: Any) -> bool:
    """Whether v is a plain number operand, for which an op with a Scalar overload
    (add, sub, mul, div) records that overload's node, as libtorch does when R
    torch passes it an R number (`x * 2`: MulBackward1). Decided here only, so
    Python and R record the same node for the same call."""
    return type(v) in _PLAIN_NUMBERS


def as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def as_result_dtype(out: np.ndarray, a: Any, b: Any = None) -> np.ndarray:
    """Fix NumPy's result dtype to PyTorch's for a binary op on `a` and `b`.

    PyTorch's rules (tensor.result_type): a 0-d tensor or a number only promotes
    the result across categories; ints divided give the default float dtype."""
    dt = out.dtype
    if type(a) is Tensor and type(b) is Tensor and a.data.dtype is b.data.dtype:
        # the common case: one dtype, or NumPy's float64 for ints divided
        if dt is not F64 or a.data.dtype is F64:
            return out
        return out.astype(get_default_dtype().np)
    try:
        target = (result_type(a) if b is None else result_type(a, b)).np
    except TypeError:  # (lists or R vectors among the operands: NumPy's rules)
        target = dt if dt is not F64 else get_default_dtype().np
    if dt.kind in "fc" and target.kind not in "fc":  # ints or bools divided
        target = get_default_dtype().np
    return out if dt == target else out.astype(target)


def needs_promotion(dt: np.dtype, ta: Tensor | None, tb: Tensor | None) -> bool:
    """False when NumPy's result dtype is already PyTorch's: float32, or the dtype
    every tensor operand has (then no 0-d or int/float mixing is involved)."""
    return dt is not F32 and not ((ta is None or ta.data.dtype is dt) and
                                  (tb is None or tb.data.dtype is dt))


def float_data(x: Tensor) -> np.ndarray:
    """The input of a floating op (exp, sin, ...): floating and complex arrays as
    they are, ints and bools in the default float dtype (as PyTorch computes them)."""
    d = x.data
    if d.dtype.kind in "fc" or d.dtype == BF16:  # (ml_dtypes' bfloat16 ufuncs round
        return d                                   # each result, as libtorch does)
    return d.astype(get_default_dtype().np)


def no_bool_minus(a: Any, b: Any, what: str) -> None:
    """PyTorch refuses `-` with a bool operand. Checked only when the result isn't
    floating, to keep the float fast path lean: `x - True` and float - bool work."""
    for v in (a, b):
        if type(v) is bool or (isinstance(v, Tensor) and v.data.dtype.kind == "b"):
            raise RuntimeError(
                f"{what}, the `-` operator, with a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def data_of(x: Any) -> Any:
    t = type(x)
    if t is Tensor:
        return x.data
    if t is float or t is int:  # the common scalar operand
        return x
    if isinstance(x, Tensor):
        return x.data
    if isinstance(x, (list, tuple, np.ndarray)):
        return to_array(x)
    if isinstance(x, Number):
        return x
    raise TypeError(f"expected a tensor or a number, got {type(x).__name__}")


_NUMBERS: dict = {}


def cached_number(v: Any, arr: np.ndarray) -> np.ndarray | None:
    """A plain Python number operand of a float array, as the 0-d array of the
    array's dtype that NumPy would convert it to anyway, or None for anything
    else. Cached: NumPy's own conversion costs about as much as a small op."""
    t = type(v)
    if t is float or t is int:
        dt = arr.dtype
        c = _NUMBERS.get((v, dt))  # (only float dtypes are ever cached)
        return c if c is not None or dt.kind != "f" else _new_number(v, dt)
    return None


def _new_number(v: Any, dt: np.dtype) -> np.ndarray:
    c = np.array(v, dt)
    if v == v and v != 0:  # NaN and ±0.0 don't key a dict reliably: not cached
        c.flags.writeable = False
        if len(_NUMBERS) >= 256:
            _NUMBERS.clear()
        _NUMBERS[(v, dt)] = c
    return c


# A broadcast pair whose last dim is this short, over this many elements, is
# computed a last-dim column at a time (see `elementwise`).
_NARROW = 4
_NARROW_MIN = 1 << 13


def elementwise(ufunc: np.ufunc, a: Any, b: Any) -> np.ndarray:
    """ufunc(a, b), NumPy's values and dtype.

    Fast path: where the operands' layouts differ (a broadcast, a strided view:
    `boxes[, NULL, 1:2]` against `box[, 1:2]`) NumPy can't merge a short last dim
    into the others and calls its inner loop once per row, a few elements at a
    time (~5 ns a row); one call per last-dim column instead runs long strided
    loops, 3-10 times faster. The result is C-contiguous, as NumPy's would be."""
    if (type(a) is np.ndarray and type(b) is np.ndarray
            and (a.size >= _NARROW_MIN or b.size >= _NARROW_MIN) and a.ndim and b.ndim
            and 1 < max(a.shape[-1], b.shape[-1]) <= _NARROW
            and not (a.shape == b.shape and a.flags.c_contiguous and b.flags.c_contiguous)):
        shape = np.broadcast_shapes(a.shape, b.shape)
        first = ufunc(_column(a, 0), _column(b, 0))
        out = np.empty(shape, first.dtype)
        out[..., 0] = first
        for j in range(1, shape[-1]):
            ufunc(_column(a, j), _column(b, j), out=out[..., j])
        return out
    return ufunc(a, b)


def _column(x: np.ndarray, j: int) -> np.ndarray:
    return x[..., j] if x.shape[-1] > 1 else x[..., 0]


def tensor_of(x: Any) -> Tensor | None:
    """The tensor among an op's operands (None for a plain number)."""
    return x if isinstance(x, Tensor) else None


def shape_str(shape: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def broadcast_error(a: Any, b: Any, opname: str) -> RuntimeError:
    sa, sb = np.shape(data_of(a)), np.shape(data_of(b))
    return RuntimeError(
        f"{opname}: the shapes {shape_str(sa)} and {shape_str(sb)} can't be broadcast together: "
        "each dimension, aligned from the right, must be equal or 1")


def clamp_bound(v: Any, what: str) -> Any:
    if v is None or isinstance(v, Number):
        return v
    if isinstance(v, Tensor) and v.numel() == 1:
        return v.item()
    raise TypeError(f"clamp: {what} must be a number, got {type(v).__name__}")


def bool_mask(mask: Any, op: str) -> np.ndarray:
    m = data_of(mask)
    if not isinstance(m, np.ndarray) or m.dtype != np.bool_:
        raise TypeError(f"{op}: the mask must be a bool tensor (e.g. x > 0), got "
                        f"{getattr(getattr(mask, 'dtype', None), 'r_name', type(mask).__name__)}")
    return m


def fill_scalar(value: Any, op: str) -> Any:
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"{op} only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        return value.item()
    if not isinstance(value, Number):
        raise TypeError(f"{op}: value must be a number, got {type(value).__name__}")
    return value




def whole(v: Any, what: str) -> int:
    """An integer argument given as any whole number (R passes doubles)."""
    if isinstance(v, Tensor):
        v = v.item()
    try:
        i = int(v)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be an integer, got {type(v).__name__}") from None
    if i != v:
        raise ValueError(f"{what} must be a whole number, got {v}")
    return i


def positional_error(cls: type, template: str, **positions: int) -> Exception:
    """An error whose message names dims or positions (the `{fields}` of
    `template`): 0-based as Python counts; its `one_based` attribute is the same
    message as R counts (non-negative values + 1), which the R layer shows."""
    err = cls(template.format(**positions))
    err.one_based = template.format(**{k: v + 1 if v >= 0 else v
                                       for k, v in positions.items()})
    return err
