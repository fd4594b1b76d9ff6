"""Every differentiable op, its forward beside its derivative.

An op is a plain function: one NumPy call, then `record_unary` /
`record_binary` / `record_number` (the hot ops) or `record` (the rest), which
make the result tensor and attach a graph node when grad mode is on and an
input requires grad. A derivative is a function named after PyTorch's node
(`MulBackward0`) taking the node, the output gradient and the saved values,
and returning one gradient per input (None where not needed). Derivatives are
written with tensor ops, so they are themselves differentiable
(`create_graph=True` gives higher order for free); those marked
`@formula(arrays=True)` also run on the raw arrays the walk carries when
create_graph is off. Broadcast gradients need no care here: the engine sums
them back to each input's shape.

The API here is 0-based (Python/PyTorch); the R layer translates dims.
"""
from __future__ import annotations

import builtins
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from .tensor import OUTPUT, Tensor, _dim, _F32, _F64, needs_grad, record, wrap, as_dtype
from .tensor import record_unary, record_binary, record_number
from .tensor import to_array, is_grad_enabled, _state
from . import engine
from .engine import Node, bump_version, edge, version_box

Number = (int, float, bool, np.number, np.bool_)


def formula(fn: Callable | None = None, *, arrays: bool = False,
            name: str | None = None) -> Callable:
    """Adapt `fn(node, grad, *saved)` to the engine's `backward_fn(node, grads)`.

    `arrays=True` marks a formula written only with operators (+ - * / ** @,
    comparisons, `.T`, `.reshape`) and `_expand`, which NumPy arrays and tensors
    share: when create_graph is off it runs on the raw arrays, skipping the
    per-op tensor overhead; with create_graph on it runs on tensors and so
    records its own graph. One formula either way. `name` names the node
    (default: the function's name), for a formula specialised to one case of
    an op.
    """
    if fn is None:
        return lambda f: formula(f, arrays=arrays, name=name)
    # In backward, grad mode is on exactly when gradients are tensors (create_graph);
    # otherwise they are arrays.
    if arrays:
        def backward_fn(node, grads):
            if _state.grad:
                return fn(node, grads[0], *node.unpack_saved())
            return fn(node, grads[0], *node.unpack_saved_data())
    else:
        def backward_fn(node, grads):
            if _state.grad:
                return fn(node, grads[0], *node.unpack_saved())
            outs = fn(node, wrap(grads[0]), *node.unpack_saved())
            return [None if o is None else o.data for o in outs]
    backward_fn.__name__ = name or fn.__name__
    backward_fn.__qualname__ = fn.__qualname__
    if arrays:
        engine.array_formulas[backward_fn] = fn
    return backward_fn


def _expand(g: Any, shape: tuple) -> Any:
    """Broadcast g to shape: for arrays a read-only view, for tensors an op."""
    return g.expand(shape) if type(g) is Tensor else np.broadcast_to(g, shape)


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _float_result(out: np.ndarray, a: Any, b: Any = None) -> np.ndarray:
    """Fix NumPy's result dtype to PyTorch's for a binary op on `a` and `b`.

    Mixing ints with floats (or dividing ints) gives float32, not NumPy's float64,
    unless a float64 tensor took part; a 0-d tensor only promotes the result across
    categories (bool < int < float), like a number."""
    dt = out.dtype
    if type(b) is Tensor and type(a) is Tensor:
        da, db = a.data.dtype, b.data.dtype
        if da is db:  # the common case
            return out if dt is not _F64 or da is _F64 else out.astype(np.float32)
        if (a.data.ndim == 0) is not (b.data.ndim == 0):
            return _zero_dim_promote(out, a.data, b.data)
        return out if dt is not _F64 or da is _F64 or db is _F64 else out.astype(np.float32)
    if dt is _F64 and not ((type(a) is Tensor and a.data.dtype is _F64) or
                           (type(b) is Tensor and b.data.dtype is _F64)):
        return out.astype(np.float32)
    return out


def _needs_promotion(dt: np.dtype, ta: Tensor | None, tb: Tensor | None) -> bool:
    """False when NumPy's result dtype is already PyTorch's: float32, or the dtype
    every tensor operand has (then no 0-d or int/float mixing is involved)."""
    return dt is not _F32 and not ((ta is None or ta.data.dtype is dt) and
                                   (tb is None or tb.data.dtype is dt))


_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2}


def _zero_dim_promote(out: np.ndarray, da: np.ndarray, db: np.ndarray) -> np.ndarray:
    dim, zero = (da, db) if db.ndim == 0 else (db, da)
    target = dim.dtype if _CATEGORY[zero.dtype.kind] <= _CATEGORY[dim.dtype.kind] else zero.dtype
    if out.dtype.kind == "f" and target.kind != "f":
        target = _F32  # true division of ints
    return out if out.dtype is target else out.astype(target)


def _fdata(x: Tensor) -> np.ndarray:
    """The input of a floating op (exp, log, ...): ints and bools compute in float32."""
    d = x.data
    return d if d.dtype.kind == "f" else d.astype(np.float32)


def _no_bool(a: Any, b: Any, what: str) -> None:
    """PyTorch refuses `-` with a bool operand. Checked only when the result isn't
    floating, to keep the float fast path lean: `x - True` and float - bool work."""
    for v in (a, b):
        if type(v) is bool or (isinstance(v, Tensor) and v.data.dtype.kind == "b"):
            raise RuntimeError(
                f"{what}, the `-` operator, with a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _data(x: Any) -> Any:
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


def _number(v: Any, arr: np.ndarray) -> np.ndarray | None:
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


def _t(x: Any) -> Tensor | None:
    """The tensor among an op's operands (None for a plain number)."""
    return x if isinstance(x, Tensor) else None


def _shape(shape: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


def _broadcast_error(a: Any, b: Any, opname: str) -> RuntimeError:
    sa, sb = np.shape(_data(a)), np.shape(_data(b))
    return RuntimeError(
        f"{opname}: the shapes {_shape(sa)} and {_shape(sb)} can't be broadcast together: "
        "each dimension, aligned from the right, must be equal or 1")


def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """Sum a broadcast gradient back down to `shape` (differentiably)."""
    if g.shape == shape:
        return g
    axes = engine.broadcast_axes(g.shape, shape)
    out = g.sum(dim=axes, keepdim=True) if axes else g
    return out.reshape(shape) if out.shape != shape else out


# ==========================================================================
# Pointwise binary ops

@formula(arrays=True)
def AddBackward0(n, g, alpha):
    return g, (g if alpha == 1 else g * alpha) if n.needs(1) else None


def add(a: Any, b: Any, alpha: Any = 1) -> Tensor:
    if type(a) is Tensor and alpha == 1:
        c = _number(b, a.data)
        if c is not None:  # tensor + number
            return record_number(np.add(a.data, c), AddNumberBackward, a, ())
    ta = a if type(a) is Tensor else None
    tb = b if type(b) is Tensor else None
    db = tb.data if tb is not None else _data(b)
    try:
        out = np.add(ta.data if ta is not None else _data(a), db if alpha == 1 else db * alpha)
    except ValueError:
        raise _broadcast_error(a, b, "add") from None
    if _needs_promotion(out.dtype, ta, tb):
        out = _float_result(out, a, b)
    return record_binary(out, AddBackward0, ta, tb, (alpha,))


# A tensor with a number (`x * 2`, `x + 1`): only the tensor gets a gradient.
@formula(arrays=True, name="AddBackward0")
def AddNumberBackward(n, g):
    return g, None


@formula(arrays=True, name="MulBackward0")
def MulNumberBackward(n, g, c):
    return g * c, None


@formula(arrays=True, name="DivBackward0")
def DivNumberBackward(n, g, c):
    return g / c, None


@formula(arrays=True)
def SubBackward0(n, g, alpha):
    return g, (-g if alpha == 1 else g * -alpha) if n.needs(1) else None


def sub(a: Any, b: Any, alpha: Any = 1) -> Tensor:
    if type(a) is Tensor and alpha == 1:
        c = _number(b, a.data)
        if c is not None:  # tensor - number
            return record_number(np.subtract(a.data, c), AddNumberBackward, a, (),
                                 name="SubBackward0")
    try:
        out = np.subtract(_data(a), _data(b) if alpha == 1 else _data(b) * alpha)
    except ValueError:
        raise _broadcast_error(a, b, "sub") from None
    except TypeError:
        _no_bool(a, b, "Subtraction")
        raise
    if out.dtype.kind != "f":  # (a float result with a bool operand is let through)
        _no_bool(a, b, "Subtraction")
    return record_binary(_float_result(out, a, b), SubBackward0, _t(a), _t(b), (alpha,))


def rsub(a: Any, b: Any) -> Tensor:
    """b - a with a the tensor (for `2 - x`)."""
    try:
        out = np.subtract(_data(b), _data(a))
    except TypeError:
        _no_bool(a, b, "Subtraction")
        raise
    if out.dtype.kind != "f":
        _no_bool(a, b, "Subtraction")
    return record_unary(_float_result(out, a, b), RsubBackward1, a)


@formula(arrays=True)
def RsubBackward1(n, g):
    return (-g,)


@formula(arrays=True)
def MulBackward0(n, g, a, b):
    return (g * b if n.needs(0) else None), (g * a if n.needs(1) else None)


def mul(a: Any, b: Any) -> Tensor:
    if type(a) is Tensor:
        c = _number(b, a.data)
        if c is not None:  # tensor * number
            return record_number(np.multiply(a.data, c), MulNumberBackward, a, (c,))
    ta = a if type(a) is Tensor else None
    tb = b if type(b) is Tensor else None
    try:
        out = np.multiply(ta.data if ta is not None else _data(a),
                          tb.data if tb is not None else _data(b))
    except ValueError:
        raise _broadcast_error(a, b, "mul") from None
    if _needs_promotion(out.dtype, ta, tb):
        out = _float_result(out, a, b)
    # Save only what the other side's gradient needs.
    return record_binary(out, MulBackward0, ta, tb,
                         (a if tb is not None and tb._rg else None,
                          b if ta is not None and ta._rg else None))


@formula(arrays=True)
def DivBackward0(n, g, a, b):
    ga = g / b if n.needs(0) else None
    gb = -g * a / (b * b) if n.needs(1) else None
    return ga, gb


def div(a: Any, b: Any, rounding_mode: str | None = None) -> Tensor:
    if type(a) is Tensor and rounding_mode is None:
        c = _number(b, a.data)
        if c is not None:  # tensor / number
            return record_number(np.true_divide(a.data, c), DivNumberBackward, a, (c,))
    da, db = _data(a), _data(b)
    try:
        if rounding_mode is None:
            out = np.true_divide(da, db)
        elif rounding_mode == "trunc":
            out = np.trunc(np.true_divide(da, db))
        elif rounding_mode == "floor":
            out = np.floor_divide(da, db)
        else:
            raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', "
                             f"got {rounding_mode!r}")
    except (ValueError, FloatingPointError) as e:
        if "rounding_mode" in str(e):
            raise
        raise _broadcast_error(a, b, "div") from None
    out = _float_result(out, a, b)
    if rounding_mode is not None:
        return wrap(out.astype(np.result_type(da, db)) if np.result_type(da, db).kind != "f"
                    else out)
    return record_binary(out, DivBackward0, _t(a), _t(b), (a, b))


@formula
def RemainderBackward1(n, g, a, b):
    gb = -g * div(a, b, rounding_mode="floor") if n.needs(1) else None
    return g, gb


def remainder(a: Any, b: Any) -> Tensor:
    """a - floor(a / b) * b: the result has the sign of b (R's `%%`, Python's `%`)."""
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.remainder(_data(a), _data(b))
    except ValueError:
        raise _broadcast_error(a, b, "remainder") from None
    return record(wrap(_float_result(out, a, b)), RemainderBackward1, (_t(a), _t(b)),
                  (a, b), name=None if isinstance(b, Tensor) else "RemainderBackward0")


def floor_divide(a: Any, b: Any) -> Tensor:
    """floor(a / b), not differentiable (R's `%/%`, Python's `//`)."""
    return div(a, b, rounding_mode="floor")


@formula(arrays=True)
def PowBackward0(n, g, a, p):
    if p == 0:
        return (g * 0,)
    return (g * p * a ** (p - 1),)


@formula
def PowBackward1(n, g, a, b, result):
    ga = g * b * a.pow(b - 1) if n.needs(0) else None
    gb = g * result * a.log() if n.needs(1) else None
    if gb is not None:
        # d/db a^b at a = 0 is 0 where b >= 0 (PyTorch masks the log(0))
        gb = where(a.eq(0) & (_as_tensor(b) >= 0), 0.0, gb) if (a.data == 0).any() else gb
    return ga, gb


@formula
def PowBackward2(n, g, base, b, result):
    return None, g * result * float(np.log(base))


def pow(a: Any, exponent: Any) -> Tensor:
    if isinstance(a, Tensor) and not isinstance(exponent, Tensor):
        try:
            out = np.power(a.data, exponent)
        except ValueError as e:  # integers to negative integer powers
            raise RuntimeError(str(e)) from None
        if a.data.dtype.kind in "iub":
            if isinstance(exponent, (float, np.floating)):
                out = out.astype(np.float32)
            elif a.data.dtype.kind == "b" and isinstance(exponent, (bool, np.bool_)):
                out = out.astype(np.bool_)
        return record_unary(out, PowBackward0, a, (a, exponent))
    if not isinstance(a, Tensor):  # number ** tensor
        out = _float_result(np.power(float(a) if isinstance(exponent.data.dtype.kind, str) and
                                     exponent.data.dtype.kind == "f" else a, exponent.data),
                            a, exponent)
        return record(wrap(out), PowBackward2, (None, exponent), (a, exponent, OUTPUT))
    try:
        out = _float_result(np.power(a.data, exponent.data), a, exponent)
    except ValueError:
        raise _broadcast_error(a, exponent, "pow") from None
    return record(wrap(out), PowBackward1, (a, exponent), (a, exponent, OUTPUT))


def rpow(a: Tensor, base: Any) -> Tensor:
    return pow(base, a)


@formula
def MaximumBackward0(n, g, a, b):
    ma = (a.data > b.data) + 0.5 * (a.data == b.data)
    return (g * wrap(ma.astype(g.data.dtype)) if n.needs(0) else None,
            g * wrap((1 - ma).astype(g.data.dtype)) if n.needs(1) else None)


def maximum(a: Tensor, b: Tensor) -> Tensor:
    try:
        out = _float_result(np.maximum(a.data, b.data), a, b)
    except ValueError:
        raise _broadcast_error(a, b, "maximum") from None
    return record(wrap(out), MaximumBackward0, (a, b), (a, b))


@formula
def MinimumBackward0(n, g, a, b):
    ma = (a.data < b.data) + 0.5 * (a.data == b.data)
    return (g * wrap(ma.astype(g.data.dtype)) if n.needs(0) else None,
            g * wrap((1 - ma).astype(g.data.dtype)) if n.needs(1) else None)


def minimum(a: Tensor, b: Tensor) -> Tensor:
    try:
        out = _float_result(np.minimum(a.data, b.data), a, b)
    except ValueError:
        raise _broadcast_error(a, b, "minimum") from None
    return record(wrap(out), MinimumBackward0, (a, b), (a, b))


# ==========================================================================
# Pointwise unary ops

@formula(arrays=True)
def NegBackward0(n, g):
    return (-g,)


def neg(x: Tensor) -> Tensor:
    return record_unary(np.negative(x.data), NegBackward0, x)


@formula(arrays=True)
def ExpBackward0(n, g, result):
    return (g * result,)


def exp(x: Tensor) -> Tensor:
    return record_unary(np.exp(_fdata(x)), ExpBackward0, x, (OUTPUT,))


@formula(arrays=True)
def LogBackward0(n, g, x):
    return (g / x,)


def log(x: Tensor) -> Tensor:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(_fdata(x))
    return record_unary(out, LogBackward0, x, (x,))


@formula(arrays=True)
def SqrtBackward0(n, g, result):
    return (g / (2 * result),)


def sqrt(x: Tensor) -> Tensor:
    with np.errstate(invalid="ignore"):
        out = np.sqrt(_fdata(x))
    return record_unary(out, SqrtBackward0, x, (OUTPUT,))


@formula
def AbsBackward0(n, g, x):
    return (g * x.sign(),)


def abs(x: Tensor) -> Tensor:
    d = x.data
    if d.dtype.kind == "b":
        raise RuntimeError("abs: not implemented for bool tensors; convert first, e.g. "
                           "x.to(dtype=torch_long())")
    return record(wrap(np.abs(d)), AbsBackward0, (x,), (x,))


@formula
def SignBackward0(n, g):
    return (g * 0,)


def sign(x: Tensor) -> Tensor:
    d = x.data
    out = d.copy() if d.dtype.kind == "b" else np.sign(d)
    return record(wrap(out), SignBackward0, (x,))


@formula
def SinBackward0(n, g, x):
    return (g * x.cos(),)


def sin(x: Tensor) -> Tensor:
    return record_unary(np.sin(_fdata(x)), SinBackward0, x, (x,))


@formula
def CosBackward0(n, g, x):
    return (-g * x.sin(),)


def cos(x: Tensor) -> Tensor:
    return record_unary(np.cos(_fdata(x)), CosBackward0, x, (x,))


@formula(arrays=True)
def TanhBackward0(n, g, result):
    return (g * (1 - result * result),)


def tanh(x: Tensor) -> Tensor:
    return record_unary(np.tanh(_fdata(x)), TanhBackward0, x, (OUTPUT,))


@formula(arrays=True)
def SigmoidBackward0(n, g, result):
    return (g * result * (1 - result),)


def sigmoid(x: Tensor) -> Tensor:
    d = x.data
    if d.dtype.kind != "f":
        d = d.astype(np.float32)
    # Stable on both tails: exp only of non-positive numbers.
    e = np.exp(-np.abs(d))
    out = np.where(d >= 0, 1 / (1 + e), e / (1 + e)).astype(d.dtype, copy=False)
    return record_unary(out, SigmoidBackward0, x, (OUTPUT,))


@formula(arrays=True)
def ReluBackward0(n, g, result):
    return (g * (result > 0),)


def relu(x: Tensor) -> Tensor:
    if x.data.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return record_unary(np.maximum(x.data, 0, dtype=x.data.dtype), ReluBackward0, x, (OUTPUT,))


@formula(arrays=True)
def ClampBackward1(n, g, x, lo, hi):
    keep = x <= hi if lo is None else x >= lo if hi is None else (x >= lo) & (x <= hi)
    return (g * keep,)


def clamp(x: Tensor, min: Any = None, max: Any = None) -> Tensor:
    if min is None and max is None:
        raise ValueError("clamp: at least one of min or max must be given")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(x, min, max)
    lo = _scalar(min, "min")
    hi = _scalar(max, "max")
    out = np.clip(x.data, lo, hi)
    if out.dtype is not x.data.dtype:
        out = _float_result(out, x)
    return record_unary(out, ClampBackward1, x, (x, lo, hi))


@formula
def ClampBackward0(n, g, x, lo, hi):
    d, z = x.data, np.zeros((), dtype=g.data.dtype)
    lod = None if lo is None else lo.data
    hid = None if hi is None else hi.data
    keep = np.ones(d.shape, dtype=np.bool_)
    if lod is not None:
        keep = keep & (d >= lod)
    if hid is not None:
        keep = keep & (d <= hid)
    gx = where(wrap(keep), g, wrap(z)) if n.needs(0) else None
    glo = ghi = None
    if n.needs(1):
        m = d < lod
        if hid is not None:
            m = m & (lod < hid)
        glo = where(wrap(m), g, wrap(z))
    if n.needs(2):
        m = d > hid
        if lod is not None:
            m = m | (hid < lod)
        ghi = where(wrap(m), g, wrap(z))
    return gx, glo, ghi


def _clamp_tensor(x: Tensor, min: Any, max: Any) -> Tensor:
    """clamp with tensor bounds (broadcast elementwise, gradients to the bounds too)."""
    lo = None if min is None else _as_tensor(min)
    hi = None if max is None else _as_tensor(max)
    try:
        out = np.clip(x.data, None if lo is None else lo.data, None if hi is None else hi.data)
    except ValueError:
        raise _broadcast_error(x, lo if lo is not None else hi, "clamp") from None
    out = _float_result(out, x, lo if lo is not None else hi)
    return record(wrap(out), ClampBackward0, (x, lo, hi), (x, lo, hi))


def _scalar(v: Any, what: str) -> Any:
    if v is None or isinstance(v, Number):
        return v
    if isinstance(v, Tensor) and v.numel() == 1:
        return v.item()
    raise TypeError(f"clamp: {what} must be a number, got {type(v).__name__}")


def square(x: Tensor) -> Tensor:
    return pow(x, 2)


# ==========================================================================
# Comparisons and logic (bool results, not differentiable)

def _compare(ufunc: Callable, name: str) -> Callable:
    def op(a: Any, b: Any) -> Tensor:
        try:
            return wrap(np.asarray(ufunc(_data(a), _data(b))))
        except ValueError:
            raise _broadcast_error(a, b, name) from None
        except TypeError:
            if b is None and name in ("eq", "ne"):
                return NotImplemented  # `x == None` is False, as in PyTorch
            raise
    op.__name__ = name
    return op


gt = _compare(np.greater, "gt")
ge = _compare(np.greater_equal, "ge")
lt = _compare(np.less, "lt")
le = _compare(np.less_equal, "le")
eq = _compare(np.equal, "eq")
ne = _compare(np.not_equal, "ne")
logical_and = _compare(np.logical_and, "logical_and")
logical_or = _compare(np.logical_or, "logical_or")
bitwise_and = _compare(np.bitwise_and, "bitwise_and")
bitwise_or = _compare(np.bitwise_or, "bitwise_or")


def logical_not(x: Tensor) -> Tensor:
    return wrap(np.logical_not(x.data))


def isnan(x: Tensor) -> Tensor:
    return wrap(np.isnan(x.data))


def equal(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a.data, b.data))


def allclose(a: Tensor, b: Tensor, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
    return bool(np.allclose(a.data, b.data, rtol=rtol, atol=atol))


# ==========================================================================
# Linear algebra

@formula(arrays=True)
def MmBackward0(n, g, a, b):
    return (g @ b.T if n.needs(0) else None), (a.T @ g if n.needs(1) else None)


def mm(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mm: both arguments must be 2-d matrices, got {a.ndim}-d "
                           f"{_shape(a.shape)} and {b.ndim}-d {_shape(b.shape)}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]}): the columns of the first must equal the rows of "
            "the second")
    if a.data.dtype is not b.data.dtype:
        _dtype_mismatch(a, b)
    out = np.matmul(a.data, b.data)
    return record_binary(out, MmBackward0, a, b, (a if b._rg else None, b if a._rg else None))


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


def matmul(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError("matmul: both arguments need at least 1 dimension, got a 0-d tensor")
    if a.data.dtype is not b.data.dtype:
        _dtype_mismatch(a, b)
    try:
        out = np.matmul(a.data, b.data)
    except ValueError:
        raise RuntimeError(
            f"matmul: shapes {_shape(a.shape)} and {_shape(b.shape)} don't match: the last "
            "dim of the first must equal the second-to-last (or only) dim of the second") \
            from None
    if a.ndim == 2 and b.ndim == 2:
        return record(wrap(out), MmBackward0, (a, b), (a if b._rg else None, b if a._rg else None))
    name = ("DotBackward0" if a.ndim == 1 and b.ndim == 1 else
            "MvBackward0" if a.ndim == 2 and b.ndim == 1 else None)
    return record(wrap(out), MatmulBackward0, (a, b), (a, b), name=name)


def _dtype_mismatch(a: Tensor, b: Tensor) -> None:
    raise RuntimeError(f"expected both matrices to have the same dtype, but got "
                       f"{a.dtype.r_name} and {b.dtype.r_name}; convert one first, e.g. "
                       "x.to(dtype=y.dtype)")


def dot(a: Tensor, b: Tensor) -> Tensor:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError("dot: 1D tensors expected, but got "
                           f"{a.ndim}D and {b.ndim}D tensors")
    return matmul(a, b)


# ==========================================================================
# Shape ops (views share data and the version counter)

def _view(x: Tensor, arr: np.ndarray) -> Tensor:
    out = wrap(arr)
    out._version = version_box(x)
    base = out._base = x if x._base is None else x._base
    if x._rg and base.grad_fn is not None:
        # its history must follow later in-place changes of the base (a leaf that
        # requires grad can't be changed in place with grad on: nothing to follow)
        _register_view(base, out)
    return out


# Views of tensors that require grad, by id of their base, so that an in-place op
# that gives the base a new history can point every live view at it (PyTorch
# regenerates a view's grad_fn the same way).
_VIEWS: dict = {}


def _register_view(base: Tensor, view: Tensor) -> None:
    entry = _VIEWS.get(id(base))
    if entry is None or entry[0]() is not base:
        key = id(base)
        entry = _VIEWS[key] = [weakref.ref(base, lambda _, k=key: _VIEWS.pop(k, None)), [], 32]
    views = entry[1]
    if len(views) > entry[2]:  # drop the dead ones (amortised: the limit doubles)
        views[:] = [r for r in views if r() is not None]
        entry[2] = builtins.max(32, 2 * len(views))
    views.append(weakref.ref(view))


@formula(arrays=True)
def TBackward0(n, g):
    return (g.T,)


def t(x: Tensor) -> Tensor:
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return record(_view(x, x.data.T), TBackward0, (x,))


@formula
def TransposeBackward0(n, g, d0, d1):
    return (g.transpose(d0, d1),)


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    d0, d1 = _dim(dim0, x.ndim), _dim(dim1, x.ndim)
    return record(_view(x, np.swapaxes(x.data, d0, d1)) if x.ndim else _view(x, x.data),
                  TransposeBackward0, (x,), (d0, d1))


@formula
def PermuteBackward0(n, g, dims):
    return (g.permute(*np.argsort(dims).tolist()),)


def permute(x: Tensor, *dims: Any) -> Tensor:
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    if len(dims) != x.ndim:
        raise RuntimeError(f"permute: number of dims don't match: the tensor has {x.ndim} "
                           f"dims but {len(dims)} were given")
    d = tuple(_dim(i, x.ndim) for i in dims)
    if len(set(d)) != len(d):
        raise RuntimeError("permute: repeated dim in permutation")
    return record(_view(x, np.transpose(x.data, d)), PermuteBackward0, (x,), (d,))


def _shape_arg(shape: tuple) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


@formula(arrays=True)
def ViewBackward0(n, g, shape):
    return (g.reshape(shape),)


def reshape(x: Tensor, *shape: Any) -> Tensor:
    shape = _shape_arg(shape)
    try:
        arr = x.data.reshape(shape)
    except ValueError:
        raise RuntimeError(f"shape '{_shape(shape)}' is invalid for input of size "
                           f"{x.data.size}") from None
    out = _view(x, arr) if np.shares_memory(arr, x.data) else wrap(arr)
    return record(out, ViewBackward0 if out._base is not None else UnsafeViewBackward0,
                  (x,), (x.shape,))


@formula(arrays=True)
def UnsafeViewBackward0(n, g, shape):
    return (g.reshape(shape),)  # reshape had to copy (PyTorch: clone + _unsafe_view)


def view(x: Tensor, *shape: Any) -> Tensor:
    shape = _shape_arg(shape)
    try:
        arr = x.data.view()
        arr.shape = shape  # refuses (like torch's view) when a copy would be needed
    except (ValueError, AttributeError):
        try:
            np.broadcast_to(np.zeros((), np.bool_), x.shape).reshape(shape)  # size check only
        except ValueError:
            raise RuntimeError(f"shape '{_shape(shape)}' is invalid for input of size "
                               f"{x.data.size}") from None
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.") from None
    return record(_view(x, arr), ViewBackward0, (x,), (x.shape,))


@formula
def UnsqueezeBackward0(n, g, d):
    return (g.squeeze(d),)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    d = _dim(dim, x.ndim + 1)
    return record(_view(x, np.expand_dims(x.data, d)), UnsqueezeBackward0, (x,), (d,))


@formula
def SqueezeBackward0(n, g, shape):
    return (g.reshape(shape),)


def squeeze(x: Tensor, dim: int | None = None) -> Tensor:
    if dim is None:
        arr = x.data.reshape(tuple(s for s in x.shape if s != 1))
    else:
        d = _dim(dim, x.ndim)
        arr = np.squeeze(x.data, d) if x.ndim and x.shape[d] == 1 else x.data.view()
    return record(_view(x, arr), SqueezeBackward0 if dim is None else SqueezeBackward1,
                  (x,), (x.shape,))


@formula
def SqueezeBackward1(n, g, shape):
    return (g.reshape(shape),)


@formula
def ExpandBackward0(n, g, shape):
    return (sum_to(g, shape),)


def expand(x: Tensor, *sizes: Any) -> Tensor:
    sizes = _shape_arg(sizes)
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({x.ndim})")
    target = tuple(x.shape[i - lead] if s == -1 and i >= lead else s
                   for i, s in enumerate(sizes))
    try:
        arr = np.broadcast_to(x.data, target)
    except ValueError:
        raise RuntimeError(
            f"expand: the expanded size {_shape(target)} doesn't fit the tensor's size "
            f"{_shape(x.shape)}: only dims of size 1 can grow (and new dims go in front)") \
            from None
    return record(_view(x, arr), ExpandBackward0, (x,), (x.shape,))


def expand_as(x: Tensor, other: Tensor) -> Tensor:
    return expand(x, other.shape)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if x.ndim == 0:
        return reshape(x, (1,))
    s, e = _dim(start_dim, x.ndim), _dim(end_dim, x.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = x.shape[:s] + (int(np.prod(x.shape[s:e + 1])),) + x.shape[e + 1:]
    return reshape(x, shape)


def contiguous(x: Tensor) -> Tensor:
    return x if x.data.flags.c_contiguous else clone(x)


# ==========================================================================
# Reductions

def _dims(dim: Any, ndim: int) -> tuple:
    if isinstance(dim, (list, tuple)):
        if not dim:  # dim=() reduces over every dim, as in PyTorch
            return tuple(range(ndim))
        dims = tuple(sorted(_dim(int(d), ndim) for d in dim))
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    else:
        dims = (_dim(int(dim), ndim),)
    return dims if ndim else ()  # a 0-d tensor accepts dim 0 or -1: nothing to reduce


def _unreduce(g: Tensor, shape: tuple, dims: tuple | None, keepdim: bool) -> Tensor:
    """Bring a reduced gradient back to the input's shape."""
    if dims is not None and not keepdim:
        kept = list(shape)
        for d in dims:
            kept[d] = 1
        g = g.reshape(tuple(kept))
    return g.expand(shape)


@formula(arrays=True)
def SumBackward0(n, g, shape):
    return (_expand(g, shape),)


@formula
def SumBackward1(n, g, shape, dims, keepdim):
    return (_unreduce(g, shape, dims, keepdim),)


def sum(x: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    d = x.data
    if d.dtype.kind in "biu":
        d = d.astype(np.int64)
    if dtype is not None:
        d = d.astype(as_dtype(dtype).np)
    if dim is None:
        return record_unary(d.sum(), SumBackward0, x, (x.shape,))
    dims = _dims(dim, x.ndim)
    out = np.asarray(d.sum(axis=dims, keepdims=keepdim))
    return record(wrap(out), SumBackward1, (x,), (x.shape, dims, keepdim))


@formula(arrays=True)
def MeanBackward0(n, g, shape, count):
    return (_expand(g, shape) / count,)


@formula
def MeanBackward1(n, g, shape, dims, keepdim, count):
    return (_unreduce(g, shape, dims, keepdim) / count,)


def mean(x: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    d = x.data
    if dtype is not None:
        d = d.astype(as_dtype(dtype).np)
    if d.dtype.kind != "f":
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {x.dtype.r_name}")
    if dim is None:
        return record_unary(d.mean(dtype=d.dtype), MeanBackward0, x,
                            (x.shape, builtins.max(d.size, 1)))
    dims = _dims(dim, x.ndim)
    count = int(np.prod([x.shape[i] for i in dims])) if x.ndim else 1
    out = np.asarray(d.mean(axis=dims, keepdims=keepdim, dtype=d.dtype))
    return record(wrap(out), MeanBackward1, (x,), (x.shape, dims, keepdim, count))


@formula
def ProdBackward0(n, g, x, result):
    d = x.data
    if d.all():
        return (g * result / x,)
    # with zeros: the product of all the other elements (no higher order here)
    flat = d.reshape(-1)
    before = np.concatenate(([1], np.cumprod(flat)[:-1])).astype(d.dtype)
    after = np.concatenate((np.cumprod(flat[::-1])[-2::-1], [1])).astype(d.dtype) \
        if flat.size > 1 else np.ones(1, d.dtype)
    return (g * wrap((before * after).reshape(d.shape)),)


def prod(x: Tensor) -> Tensor:
    return record(wrap(np.asarray(x.data.prod())), ProdBackward0, (x,), (x, OUTPUT))


@formula
def MaxBackward1(n, g, x, result):
    # Ties share the gradient evenly, as PyTorch's full max/min do.
    mask = (x.data == result.data).astype(g.data.dtype)
    return (g * wrap(mask / mask.sum()),)


@formula
def MaxBackward0(n, g, idx, shape, dim, keepdim):
    g = g if keepdim else g.unsqueeze(dim)
    return (_scatter_along(g, idx if keepdim else np.expand_dims(idx, dim), dim, shape),)


def _reduce_extreme(x: Tensor, dim: Any, keepdim: bool, arg: Callable, name: str,
                    full_name: str) -> Any:
    if dim is None:
        if x.data.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the "
                               "'dim' argument.")
        val = np.asarray(getattr(x.data, name)())
        return record(wrap(val), MaxBackward1, (x,), (x, OUTPUT), name=full_name)
    d = _dim(int(dim), x.ndim)
    if x.ndim == 0:
        return (record(wrap(x.data.copy()), CloneBackward0, (x,), name=full_name[:-1] + "0"),
                wrap(np.zeros((), dtype=np.int64)))
    idx = arg(x.data, axis=d)
    vals = np.take_along_axis(x.data, np.expand_dims(idx, d), axis=d)
    if not keepdim:
        vals = np.squeeze(vals, d)
    else:
        idx = np.expand_dims(idx, d)
    values = record(wrap(vals), MaxBackward0, (x,), (idx, x.shape, d, keepdim),
                    name=full_name.replace("1", "0"))
    return values, wrap(idx.astype(np.int64))


def max(x: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """Whole-tensor max, or (values, indices) along `dim`; `max(a, b)` elementwise."""
    if isinstance(dim, Tensor):
        return maximum(x, dim)
    return _reduce_extreme(x, dim, keepdim, np.argmax, "max", "MaxBackward1")


def min(x: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    if isinstance(dim, Tensor):
        return minimum(x, dim)
    return _reduce_extreme(x, dim, keepdim, np.argmin, "min", "MinBackward1")


def argmax(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if dim is None:
        return wrap(np.asarray(np.argmax(x.data), dtype=np.int64))
    d = _dim(dim, x.ndim)
    out = np.argmax(x.data, axis=d)
    return wrap((np.expand_dims(out, d) if keepdim else out).astype(np.int64))


def argmin(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if dim is None:
        return wrap(np.asarray(np.argmin(x.data), dtype=np.int64))
    d = _dim(dim, x.ndim)
    out = np.argmin(x.data, axis=d)
    return wrap((np.expand_dims(out, d) if keepdim else out).astype(np.int64))


@formula
def ScatterAlongBackward(n, g, idx, dim):
    return (wrap(np.take_along_axis(g.data, idx, axis=dim)) if not is_grad_enabled()
            else gather(g, dim, wrap(idx)),)


def _scatter_along(g: Tensor, idx: np.ndarray, dim: int, shape: tuple) -> Tensor:
    """Zeros of `shape` with g placed at idx along dim (max/min's backward)."""
    z = np.zeros(shape, dtype=g.data.dtype)
    np.put_along_axis(z, idx, g.data, axis=dim)
    return record(wrap(z), ScatterAlongBackward, (g,), (idx, dim))


@formula
def GatherBackward0(n, g, idx, dim, shape):
    return (_scatter_add_along(g, idx, dim, shape),)


def gather(x: Tensor, dim: int, index: Tensor) -> Tensor:
    d = _dim(dim, x.ndim)
    idx = index.data
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"gather(): Expected dtype int64 (Long) for index, got "
                           f"{index.dtype!r}")
    return record(wrap(np.take_along_axis(x.data, idx, axis=d)), GatherBackward0, (x,),
                  (idx, d, x.shape))


@formula
def ScatterAddBackward(n, g, idx, dim):
    return (gather(g, dim, wrap(idx)),)


def _scatter_add_along(g: Tensor, idx: np.ndarray, dim: int, shape: tuple) -> Tensor:
    z = np.zeros(shape, dtype=g.data.dtype)
    grid = list(np.indices(idx.shape, sparse=True))
    grid[dim] = idx
    np.add.at(z, tuple(grid), g.data)
    return record(wrap(z), ScatterAddBackward, (g,), (idx, dim))


@formula
def SoftmaxBackward0(n, g, result, dim):
    gy = g * result
    return (gy - result * gy.sum(dim=dim, keepdim=True),)


def softmax(x: Tensor, dim: int, dtype: Any = None) -> Tensor:
    d = _dim(dim, x.ndim)
    a = x.data if dtype is None else x.data.astype(as_dtype(dtype).np)
    if a.dtype.kind != "f":
        raise RuntimeError(f"softmax: expected a floating point tensor, got {x.dtype}")
    e = np.exp(a - a.max(axis=d, keepdims=True))
    e /= e.sum(axis=d, keepdims=True)
    return record(wrap(e), SoftmaxBackward0, (x,), (OUTPUT, d))


@formula
def LogSoftmaxBackward0(n, g, result, dim):
    return (g - result.exp() * g.sum(dim=dim, keepdim=True),)


def log_softmax(x: Tensor, dim: int, dtype: Any = None) -> Tensor:
    d = _dim(dim, x.ndim)
    a = x.data if dtype is None else x.data.astype(as_dtype(dtype).np)
    if a.dtype.kind != "f":
        raise RuntimeError(f"log_softmax: expected a floating point tensor, got {x.dtype}")
    s = a - a.max(axis=d, keepdims=True)
    s = s - np.log(np.exp(s).sum(axis=d, keepdims=True))
    return record(wrap(s), LogSoftmaxBackward0, (x,), (OUTPUT, d))


# ==========================================================================
# Joining and splitting

@formula
def CatBackward0(n, g, dim, sizes):
    out, start = [], 0
    for i, s in enumerate(sizes):
        out.append(narrow(g, dim, start, s) if n.needs(i) else None)
        start += s
    return tuple(out)


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = [_as_tensor(t) for t in tensors]
    if not tensors:
        raise RuntimeError("cat: expected a non-empty list of tensors")
    # PyTorch skips 1-d empty tensors in cat
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    for i, t in enumerate(parts):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated; unsqueeze() it or use torch_stack()")
    d = _dim(dim, parts[0].ndim)
    for i, t in enumerate(parts):
        if t.ndim != parts[0].ndim or any(
                a != b for k, (a, b) in enumerate(zip(t.shape, parts[0].shape)) if k != d):
            raise RuntimeError(
                f"cat: sizes of tensors must match except in dimension {d}: tensor 0 has "
                f"shape {_shape(parts[0].shape)} but tensor {i} has shape {_shape(t.shape)}")
    out = np.concatenate([t.data for t in parts], axis=d)
    out = _float_result(out, *parts[:2]) if out.dtype == _F64 and not any(
        t.data.dtype == _F64 for t in parts) else out
    return record(wrap(out), CatBackward0, parts, (d, [t.shape[d] for t in parts]))


@formula
def StackBackward0(n, g, dim, count):
    return tuple(select(g, dim, i) if n.needs(i) else None for i in range(count))


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = [_as_tensor(t) for t in tensors]
    if not tensors:
        raise RuntimeError("stack: expected a non-empty list of tensors")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{_shape(tensors[0].shape)} at entry 0 and {_shape(t.shape)} "
                               f"at entry {i}")
    d = _dim(dim, tensors[0].ndim + 1)
    out = np.stack([t.data for t in tensors], axis=d)
    return record(wrap(out), StackBackward0, tensors, (d, len(tensors)))


@formula
def SliceBackward0(n, g, shape, key):
    return (_index_backward(g, key, shape, False),)


@formula
def SelectBackward0(n, g, shape, key):
    return (_index_backward(g, key, shape, False),)


def narrow(x: Tensor, dim: int, start: int, length: int, *, name: str | None = None) -> Tensor:
    d = _dim(dim, x.ndim)
    size = x.shape[d]
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds dimension "
                           f"size ({size}) of dim {d} (or is negative)")
    key = (slice(None),) * d + (slice(start, start + length),)
    return record(_view(x, x.data[key]), SliceBackward0, (x,), (x.shape, key), name=name)


def select(x: Tensor, dim: int, index: int, *, name: str | None = None) -> Tensor:
    d = _dim(dim, x.ndim)
    size = x.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{_shape(x.shape)} at dimension {d}")
    key = (slice(None),) * d + (index,)
    return record(_view(x, x.data[key]), SelectBackward0, (x,), (x.shape, key), name=name)


def split(x: Tensor, split_size: Any, dim: int = 0) -> list:
    d = _dim(dim, x.ndim)
    size = x.shape[d]
    if isinstance(split_size, (list, tuple)):
        sizes = [int(s) for s in split_size]
        if builtins.sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={_shape(sizes)}")
    else:
        step = int(split_size)
        if step <= 0:
            raise RuntimeError("split: split_size must be a positive integer")
        sizes = [builtins.min(step, size - i) for i in range(0, size, step)] or [0]
    name = "SplitWithSizesBackward0" if isinstance(split_size, (list, tuple)) else \
        "SplitBackward0"
    out, start = [], 0
    for s in sizes:
        out.append(narrow(x, d, start, s, name=name))
        start += s
    return out


def chunk(x: Tensor, chunks: int, dim: int = 0) -> list:
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    d = _dim(dim, x.ndim)
    step = -(-x.shape[d] // chunks) if x.shape[d] else 1
    return split(x, step, d)


def unbind(x: Tensor, dim: int = 0) -> list:
    if x.ndim == 0:
        raise RuntimeError("unbind: dimension specified as 0 but the tensor has no dimensions")
    d = _dim(dim, x.ndim)
    return [select(x, d, i, name="UnbindBackward0") for i in range(x.shape[d])]


# ==========================================================================
# Selection by condition

@formula
def WhereBackward0(n, g, cond):
    z = wrap(np.zeros((), dtype=g.data.dtype))
    return None, (where(cond, g, z) if n.needs(1) else None), \
        (where(cond, z, g) if n.needs(2) else None)


def where(condition: Any, input: Any, other: Any) -> Tensor:
    cond = _data(condition)
    if isinstance(condition, Tensor) and cond.dtype != np.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype.r_name}; compare first, e.g. x > 0")
    if not isinstance(cond, np.ndarray) or cond.dtype != np.bool_:
        cond = np.asarray(cond).astype(bool)
    try:
        out = np.where(cond, _data(input), _data(other))
    except ValueError:
        raise _broadcast_error(input, other, "where") from None
    out = _float_result(out, input, other)  # (NumPy >= 2 treats numbers as weak, like torch)
    return record(wrap(out), WhereBackward0, (None, _t(input), _t(other)), (wrap(cond),))


@formula
def MaskedFillBackward0(n, g, mask):
    return (g.masked_fill(mask, 0),)


@formula
def MaskedFillBackward1(n, g, mask, vshape):
    gx = g.masked_fill(mask, 0) if n.needs(0) else None
    gv = where(mask, g, wrap(np.zeros((), g.data.dtype))).sum().reshape(vshape) \
        if n.needs(1) else None
    return gx, gv


def masked_fill(x: Tensor, mask: Any, value: Any) -> Tensor:
    m = _bool_mask(mask, "masked_fill")
    v = _fill_value(value, "masked_fill")
    try:  # out of place, tensor and mask broadcast together (as in PyTorch)
        out = np.where(m, np.asarray(v, dtype=x.data.dtype), x.data)
    except ValueError:
        raise _broadcast_error(x, mask, "masked_fill") from None
    if isinstance(value, Tensor):  # a 0-d/1-element tensor value gets a gradient too
        return record(wrap(out), MaskedFillBackward1, (x, value), (wrap(m), value.shape))
    return record(wrap(out), MaskedFillBackward0, (x,), (wrap(m),))


def _bool_mask(mask: Any, op: str) -> np.ndarray:
    m = _data(mask)
    if not isinstance(m, np.ndarray) or m.dtype != np.bool_:
        raise TypeError(f"{op}: the mask must be a bool tensor (e.g. x > 0), got "
                        f"{getattr(getattr(mask, 'dtype', None), 'r_name', type(mask).__name__)}")
    return m


def _fill_value(value: Any, op: str) -> Any:
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"{op} only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        return value.item()
    if not isinstance(value, Number):
        raise TypeError(f"{op}: value must be a number, got {type(value).__name__}")
    return value


# ==========================================================================
# Copies and conversions

@formula(arrays=True)
def CloneBackward0(n, g):
    return (g,)


def clone(x: Tensor) -> Tensor:
    return record(wrap(x.data.copy()), CloneBackward0, (x,))


@formula(arrays=True)
def ToCopyBackward0(n, g):
    return (g,)  # the engine casts back to the input's dtype


def to(x: Tensor, dtype: Any = None, device: Any = None, copy: bool = False) -> Tensor:
    if isinstance(dtype, str) and dtype == "cpu":
        dtype, device = None, dtype
    if device is not None and str(device) != "cpu":
        raise RuntimeError(f"only the 'cpu' device exists here, got {device!r}")
    if dtype is None:
        return clone(x) if copy else x
    target = as_dtype(dtype).np
    if target == x.data.dtype and not copy:
        return x
    out = wrap(x.data.astype(target))
    if target.kind != "f":
        return out
    return record(out, ToCopyBackward0, (x,))


def float_(x: Tensor) -> Tensor:
    return to(x, "float32")


def double(x: Tensor) -> Tensor:
    return to(x, "float64")


def long(x: Tensor) -> Tensor:
    return to(x, "int64")


def int_(x: Tensor) -> Tensor:
    return to(x, "int32")


def bool_(x: Tensor) -> Tensor:
    return to(x, "bool")


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


def _is_basic(key: tuple) -> builtins.bool:
    return all(k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))
               and not isinstance(k, (bool, np.bool_)) for k in key)


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


def index(x: Tensor, key: Any) -> Tensor:
    if type(key) is int:  # fast path: x[i]
        try:
            arr = x.data[key, ...]
        except IndexError as e:
            raise _index_error(e, x, (key,)) from None
        return record(_view(x, arr), SliceBackward0, (x,), (x.shape, (key,)),
                      name="SelectBackward0")
    k = _np_key(key, x)
    try:
        arr = x.data[k]
    except (IndexError, ValueError) as e:
        raise _index_error(e, x, k) from None
    basic = _is_basic(k)
    if basic:
        if type(arr) is not np.ndarray:  # an int for every dim: a 0-d view, not a copy
            arr = x.data[k + (Ellipsis,)]
        out = _view(x, arr)
    else:
        out = wrap(arr)
    return record(out, IndexBackward0 if not basic else SliceBackward0, (x,), (x.shape, k),
                  name=_index_name(k, basic))


@formula
def IndexGradBackward(n, g, key):
    return (g[key] if len(key) != 1 else g[key[0]],)


def _index_backward(g: Tensor, key: tuple, shape: tuple, accumulate: builtins.bool) -> Tensor:
    """Zeros of `shape` with g scattered (added, for repeated indices) at `key`."""
    z = np.zeros(shape, dtype=g.data.dtype)
    if accumulate and not _is_basic(key):
        np.add.at(z, key, g.data)
    else:
        z[key] = g.data
    return record(wrap(z), IndexGradBackward, (g,), (_wrap_key(key),))


def _wrap_key(key: tuple) -> tuple:
    return tuple(wrap(k) if isinstance(k, np.ndarray) else k for k in key)


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
    return record(wrap(d), ZeroAtBackward, (g,), (key,))


def index_put_(x: Tensor, key: Any, value: Any) -> Tensor:
    """`x[key] = value` in place, recorded for autograd."""
    k = _np_key(key, x)
    v = value if isinstance(value, Tensor) else None
    vd = _data(value)
    _check_inplace(x, v)
    try:
        x.data[k] = vd
    except (IndexError, ValueError) as e:
        if "broadcast" in str(e) or "shape" in str(e):
            raise RuntimeError(
                f"index assignment: a value of shape {_shape(np.shape(vd))} can't be put into "
                f"the selected elements of shape {_shape(np.shape(x.data[k]))}") from None
        raise _index_error(e, x, k) from None
    bump_version(x)
    name = "IndexPutBackward0" if not _is_basic(k) else "CopySlices"
    return _record_inplace(x, IndexPutBackward0, (x, v), (k, np.shape(vd)), name)


def _check_inplace(x: Tensor, *others: Any) -> None:
    if x._rg and is_grad_enabled():
        if x.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation. Do it under with_no_grad(), or clone() the tensor "
                               "first.")
        b = x._base
        if b is not None and b.grad_fn is None and b._rg:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation. Do it under with_no_grad(), or clone() "
                               "the tensor first.")
    if not x.data.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location (an expand()ed tensor?). "
                           "Please clone() the tensor before performing the operation.")


def _record_inplace(x: Tensor, fn: Callable, inputs: tuple, saved: tuple,
                    name: str | None = None) -> Tensor:
    if needs_grad(*inputs):
        old, old_nr = x.grad_fn, x._output_nr
        if x._base is not None:
            _record_on_base(x, fn, inputs, saved, name)
        else:
            record(x, fn, inputs, saved, name=name)
            x._output_nr = 0
            if id(x) in _VIEWS:
                _refresh_views(x, None)
        if old is not None and old.retain_refs:
            _carry_retain_grad(x, old, old_nr)
    return x


def _carry_retain_grad(x: Tensor, old: Node, old_nr: int) -> None:
    """retain_grad() follows the tensor to its new history, as in PyTorch."""
    ref = old.retain_refs.get(old_nr)
    if ref is not None and ref() is x:
        del old.retain_refs[old_nr]
        x.grad_fn.retain(x._output_nr, ref)


# In-place on a view: the op is recorded on the base as a CopySlices node (the
# base's new history), and the view reads its gradient out of the base's, as in
# PyTorch. A view's elements are located in its base by their memory addresses,
# so any view (slices, select, transpose, permute, view...) works the same way.

def _view_key(arr: np.ndarray, base: np.ndarray) -> np.ndarray:
    """The flat (C-order) position in `base` of each element of its view `arr`."""
    addr = np.asarray(arr.__array_interface__["data"][0] - base.__array_interface__["data"][0],
                      dtype=np.int64)
    for k, (n, st) in enumerate(zip(arr.shape, arr.strides)):
        addr = addr + (np.arange(n, dtype=np.int64) * st).reshape(
            (n,) + (1,) * (arr.ndim - k - 1))
    if base.flags.c_contiguous:
        return addr // base.itemsize
    baddr = np.zeros((), dtype=np.int64)
    for k, (n, st) in enumerate(zip(base.shape, base.strides)):
        baddr = baddr + (np.arange(n, dtype=np.int64) * st).reshape(
            (n,) + (1,) * (base.ndim - k - 1))
    order = np.argsort(baddr, axis=None)
    return order[np.searchsorted(baddr.reshape(-1)[order], addr)]


def CopySlices(node: Node, grads: list) -> tuple:
    # saved: (the op's node, key, *the op's saved tensors) - the latter listed here
    # so that releasing this node frees them too
    op, key = node.saved[0], node.saved[1]
    g = grads[0]
    tensors = _state.grad  # tensors under create_graph, else arrays
    k = wrap(key) if tensors else key
    region = g.reshape(-1)[k]
    outs = op.backward_fn(op, [region])
    flat = g.reshape(-1).clone() if tensors else g.reshape(-1).copy()
    flat[k] = outs[0] if outs[0] is not None else 0.0
    return (flat.reshape(g.shape),) + tuple(outs[1:])


@formula
def AsStridedBackward0(n, g, key, base_shape):
    size = int(np.prod(base_shape))
    return (_index_backward(g, (key,), (size,), False).reshape(base_shape),)


def _record_on_base(v: Tensor, fn: Callable, inputs: tuple, saved: tuple,
                    name: str | None) -> Tensor:
    base = v._base
    key = _view_key(v.data, base.data)
    tmp = wrap(v.data)
    record(tmp, fn, inputs, saved, name=name)  # the op's own node, run by CopySlices
    op = tmp.grad_fn
    bmeta = (base.data.shape, base.data.dtype) if base._rg else None
    node = Node("CopySlices", CopySlices, (edge(base),) + op.next_functions[1:],
                (bmeta,) + op.input_meta[1:], [op, key, *op.saved])
    old, old_nr = base.grad_fn, base._output_nr
    base.grad_fn, base._rg, base._output_nr = node, True, 0
    if old is not None and old.retain_refs:
        _carry_retain_grad(base, old, old_nr)
    _as_view_of(v, base, key)
    _refresh_views(base, v)
    return v


def _as_view_of(v: Tensor, base: Tensor, key: np.ndarray | None = None) -> None:
    """Give view `v` a fresh history: its elements, read out of `base`'s gradient."""
    if key is None:
        key = _view_key(v.data, base.data)
    v.grad_fn = Node("AsStridedBackward0", AsStridedBackward0, ((base.grad_fn, 0),),
                     ((base.data.shape, base.data.dtype),), (key, base.data.shape))
    v._rg, v._output_nr = True, 0


def _refresh_views(base: Tensor, skip: Tensor | None) -> None:
    """After `base` got a new history in place, its live views follow it."""
    entry = _VIEWS.get(id(base))
    if entry is None or entry[0]() is not base:
        return
    for r in entry[1]:
        w = r()
        if w is not None and w is not skip and w._base is base:
            _as_view_of(w, base)


# ==========================================================================
# In-place ops (bump the version counter so saved copies are caught)

def _inplace_binary(x: Tensor, other: Any, ufunc: Callable, fn: Callable, saved: tuple,
                    name: str) -> Tensor:
    o = other if isinstance(other, Tensor) else None
    _check_inplace(x, o)
    try:
        ufunc(x.data, _data(other), out=x.data, casting="same_kind")
    except ValueError:
        raise RuntimeError(f"{name}: can't update a tensor of shape {_shape(x.shape)} in "
                           f"place with a value of shape {_shape(np.shape(_data(other)))}: "
                           "the value must broadcast to the tensor's shape") from None
    except TypeError:
        promoted = _float_result(np.empty(0, np.result_type(x.data, _data(other))), x, other)
        raise RuntimeError(f"{name}: result type {wrap(promoted).dtype.r_name} can't be cast "
                           f"to the desired output type {x.dtype.r_name}") from None
    bump_version(x)
    return _record_inplace(x, fn, (x, o), saved)


def add_(x: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    other = other if alpha == 1 else (other * alpha)
    return _inplace_binary(x, other, np.add, AddBackward0, (1,), "add_")


def sub_(x: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    other = other if alpha == 1 else (other * alpha)
    return _inplace_binary(x, other, np.subtract, SubBackward0, (1,), "sub_")


def mul_(x: Tensor, other: Any) -> Tensor:
    o = other if isinstance(other, Tensor) else None
    # other's gradient needs self's old value: a differentiable copy (higher order)
    old = x.clone() if o is not None and needs_grad(o) else None
    return _inplace_binary(x, other, np.multiply, MulBackward0, (old, other), "mul_")


def div_(x: Tensor, other: Any) -> Tensor:
    o = other if isinstance(other, Tensor) else None
    old = x.clone() if o is not None and needs_grad(o) else None
    if x.data.dtype.kind != "f":
        raise RuntimeError(f"div_: result type Float can't be cast to the desired output "
                           f"type {x.dtype.r_name}")
    return _inplace_binary(x, other, np.true_divide, DivBackward0, (old, other), "div_")


@formula
def ZeroBackward0(n, g):
    return (g * 0,)


def zero_(x: Tensor) -> Tensor:
    _check_inplace(x)
    x.data[...] = 0
    bump_version(x)
    return _record_inplace(x, ZeroBackward0, (x,), ())


@formula
def FillBackward2(n, g):
    return (g * 0,)


@formula
def FillBackward3(n, g, vshape):
    return (g * 0 if n.needs(0) else None), (g.sum().reshape(vshape) if n.needs(1) else None)


def fill_(x: Tensor, value: Any) -> Tensor:
    t = value if isinstance(value, Tensor) else None
    if t is not None and t.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{t.ndim} dimensions.")
    v = _fill_value(value, "fill_")
    _check_inplace(x, t)
    x.data[...] = v
    bump_version(x)
    if t is not None:
        return _record_inplace(x, FillBackward3, (x, t), (t.shape,))
    return _record_inplace(x, FillBackward2, (x,), ())


def clamp_(x: Tensor, min: Any = None, max: Any = None) -> Tensor:
    if min is None and max is None:
        raise ValueError("clamp_: at least one of min or max must be given")
    _check_inplace(x)
    lo, hi = _scalar(min, "min"), _scalar(max, "max")
    old = x.detach().clone() if needs_grad(x) else None
    np.clip(x.data, lo, hi, out=x.data)
    bump_version(x)
    return _record_inplace(x, ClampBackward1, (x,), (old, lo, hi))


@formula
def CopyBackwards(n, g):
    return (g * 0 if n.needs(0) else None), g


def copy_(x: Tensor, src: Any) -> Tensor:
    s = src if isinstance(src, Tensor) else None
    _check_inplace(x, s)
    try:
        np.copyto(x.data, _data(src), casting="unsafe")
    except ValueError:
        raise RuntimeError(f"copy_: the source of shape {_shape(np.shape(_data(src)))} "
                           f"doesn't broadcast to the destination's shape {_shape(x.shape)}") \
            from None
    bump_version(x)
    return _record_inplace(x, CopyBackwards, (x, s), ())


def masked_fill_(x: Tensor, mask: Any, value: Any) -> Tensor:
    m = _bool_mask(mask, "masked_fill_")
    v = _fill_value(value, "masked_fill_")
    t = value if isinstance(value, Tensor) else None
    _check_inplace(x, t)
    try:
        np.copyto(x.data, np.asarray(v, dtype=x.data.dtype), where=m)
    except ValueError:
        raise RuntimeError(f"masked_fill_: the mask of shape {_shape(m.shape)} must "
                           f"broadcast to the tensor's shape {_shape(x.shape)}") from None
    bump_version(x)
    if t is not None:
        return _record_inplace(x, MaskedFillBackward1, (x, t), (wrap(m), t.shape))
    return _record_inplace(x, MaskedFillBackward0, (x,), (wrap(m),))


# ==========================================================================
# Attaching ops to the Tensor class

def _binary_method(op: Callable, swap: builtins.bool = False) -> Callable:
    if swap:
        def method(self, other):
            return op(other, self)
    else:
        def method(self, other):
            return op(self, other)
    return method


def _rsub(self: Tensor, other: Any) -> Tensor:
    return rsub(self, other)


def _rdiv(self: Tensor, other: Any) -> Tensor:
    return div(other, self)


METHODS: dict[str, Callable] = {
    "add": add, "sub": sub, "mul": mul, "div": div, "pow": pow, "neg": neg,
    "exp": exp, "log": log, "sqrt": sqrt, "abs": abs, "sign": sign, "sin": sin, "cos": cos,
    "tanh": tanh, "sigmoid": sigmoid, "relu": relu, "clamp": clamp, "square": square,
    "maximum": maximum, "minimum": minimum, "remainder": remainder,
    "floor_divide": floor_divide,
    "gt": gt, "ge": ge, "lt": lt, "le": le, "eq": eq, "ne": ne,
    "logical_and": logical_and, "logical_or": logical_or, "logical_not": logical_not,
    "isnan": isnan, "equal": equal, "allclose": allclose,
    "mm": mm, "matmul": matmul, "dot": dot, "t": t, "transpose": transpose,
    "permute": permute, "reshape": reshape, "view": view, "unsqueeze": unsqueeze,
    "squeeze": squeeze, "expand": expand, "expand_as": expand_as, "flatten": flatten,
    "contiguous": contiguous, "narrow": narrow, "select": select,
    "sum": sum, "mean": mean, "prod": prod, "max": max, "min": min, "argmax": argmax,
    "argmin": argmin, "gather": gather, "softmax": softmax, "log_softmax": log_softmax,
    "chunk": chunk, "split": split, "unbind": unbind, "masked_fill": masked_fill,
    "clone": clone, "to": to, "float": float_, "double": double, "long": long,
    "int": int_, "bool": bool_,
    "add_": add_, "sub_": sub_, "mul_": mul_, "div_": div_, "zero_": zero_, "fill_": fill_,
    "clamp_": clamp_, "copy_": copy_, "masked_fill_": masked_fill_, "index_put_": index_put_,
}

OPERATORS: dict[str, Callable] = {
    "__add__": add, "__radd__": add,  # `2 + x` is add(x, 2), as in PyTorch
    "__sub__": sub, "__rsub__": _rsub,
    "__mul__": mul, "__rmul__": mul,
    "__truediv__": div, "__rtruediv__": _rdiv,
    "__mod__": remainder, "__rmod__": _binary_method(remainder, swap=True),
    "__floordiv__": floor_divide, "__rfloordiv__": _binary_method(floor_divide, swap=True),
    "__pow__": pow, "__rpow__": rpow, "__matmul__": matmul,
    "__neg__": neg, "__abs__": abs,
    "__gt__": gt, "__ge__": ge, "__lt__": lt, "__le__": le, "__eq__": eq, "__ne__": ne,
    "__and__": logical_and, "__or__": logical_or, "__invert__": logical_not,
    "__getitem__": index, "__setitem__": index_put_,
    "__iadd__": add_, "__isub__": sub_, "__imul__": mul_, "__itruediv__": div_,
}

for _name, _fn in {**METHODS, **OPERATORS}.items():
    setattr(Tensor, _name, _fn)
