"""Pointwise ops: arithmetic, math functions, comparisons and logic, and the
in-place arithmetic. Each derivative, named after PyTorch's node, sits just
above its op.

A number operand (`other` a Python bool, int or float: what an R number
becomes) of add, sub, mul and div takes libtorch's Scalar overload, as R torch
calls it for R numbers: `x * 2` records MulBackward1 (`mul.Scalar`), `x * y`
MulBackward0 (`mul.Tensor`), from Python and R alike. A float tensor with such a
number takes a fast path (`cached_number`).
"""
from __future__ import annotations

import inspect
import math
from typing import Any, Callable

import numpy as np

from ..formals import r_formals
from ..engine import bump_version
from ..tensor import Tensor, bf16_as_f32, wrap
from . import onednn, parallel, special
from .samples import pointwise as S
from .indexing import where
from .operands import (as_result_dtype, as_tensor, broadcast_error, cached_number, clamp_bound,
                       data_of, elementwise, float_data, is_number, needs_promotion,
                       no_bool_minus, shape_str, tensor_of, whole)
from .recording import OUTPUT, formula, needs_grad, record, record_one
from .dispatch import op
from .views import check_inplace, record_inplace


# ==========================================================================
# Pointwise binary ops

@formula(arrays=True)
def AddBackward0(n, g, alpha):
    return g, (g if alpha == 1 else g * alpha) if n.needs(1) else None


# A number operand (`x + 2`: the Scalar overload) is no input of the node: its
# one input is the tensor, as in libtorch (R torch's AddBackward1 has one edge).
@formula(arrays=True)
def AddBackward1(n, g):
    return (g,)


def _add_jvp(p: dict, t: dict, result: Tensor) -> Any:
    """The forward rule of add and sub (alpha: -alpha): tangent self + alpha * other."""
    ts, to = t["self"], t["other"]
    if to is not None and p["alpha"] != 1:
        to = to * p["alpha"]
    return to if ts is None else ts if to is None else ts + to


def _sub_jvp(p: dict, t: dict, result: Tensor) -> Any:
    return _add_jvp({"alpha": -p["alpha"]}, t, result)


@op(operators=("__add__", "__radd__"), r_operators=("+",), samples=S.add_sub, names="unify",
    forward=_add_jvp, complex_half=True, onnx="Add",
    mobile={"Tensor": "self, other: Tensor, *, alpha=1", "Scalar": "self, other: Scalar, alpha=1"})
def add(self: Tensor, other: Tensor | float, alpha: float = 1) -> Tensor:
    if type(self) is Tensor and alpha == 1:
        c = cached_number(other, self.data)
        if c is not None:  # tensor + number (the fast path)
            return record_one(np.add(self.data, c), AddBackward1, self)
    ta = self if type(self) is Tensor else None
    tb = other if type(other) is Tensor else None
    db = tb.data if tb is not None else data_of(other)
    try:
        out = elementwise(np.add, ta.data if ta is not None else data_of(self),
                          db if alpha == 1 else db * alpha)
    except ValueError:
        raise broadcast_error(self, other, "add") from None
    if needs_promotion(out.dtype, ta, tb):
        out = as_result_dtype(out, self, other)
    if tb is None and ta is not None and is_number(other):
        return record(out, AddBackward1, (ta,))
    return record(out, AddBackward0, (ta, tb), (alpha,))


@formula(arrays=True)
def SubBackward0(n, g, alpha):
    return g, (-g if alpha == 1 else g * -alpha) if n.needs(1) else None


@op(operators=("__sub__",), r_operators=("-",), samples=S.add_sub, names="unify",
    forward=_sub_jvp, complex_half=True, onnx="Sub",
    mobile={"Tensor": "self, other: Tensor, *, alpha=1", "Scalar": "self, other: Scalar, alpha=1"})
def sub(self: Tensor, other: Tensor | float, alpha: float = 1) -> Tensor:
    if type(self) is Tensor and alpha == 1:
        c = cached_number(other, self.data)
        if c is not None:  # tensor - number (the fast path)
            return record_one(np.subtract(self.data, c), AddBackward1, self,
                              name="SubBackward1")
    try:
        out = elementwise(np.subtract, data_of(self),
                          data_of(other) if alpha == 1 else data_of(other) * alpha)
    except ValueError:
        raise broadcast_error(self, other, "sub") from None
    except TypeError:
        no_bool_minus(self, other, "Subtraction")
        raise
    if out.dtype.kind != "f":  # (a float result with a bool operand is let through)
        no_bool_minus(self, other, "Subtraction")
    out = as_result_dtype(out, self, other)
    if type(other) is not Tensor and isinstance(self, Tensor) and is_number(other):
        return record(out, AddBackward1, (self,), name="SubBackward1")
    return record(out, SubBackward0, (tensor_of(self), tensor_of(other)), (alpha,))


@op(method=False, operators=("__rsub__",), samples=S.tensor_number, names="unify",
    complex_half=True)
def rsub(self: Tensor, other: Tensor | float, alpha: float = 1) -> Tensor:
    """other - alpha * self, self the tensor (for `2 - x`)."""
    try:
        out = np.subtract(data_of(other), data_of(self) if alpha == 1 else data_of(self) * alpha)
    except TypeError:
        no_bool_minus(self, other, "Subtraction")
        raise
    if out.dtype.kind != "f":
        no_bool_minus(self, other, "Subtraction")
    return record(as_result_dtype(out, self, other), RsubBackward1, (self,), (alpha,))


@formula(arrays=True)
def RsubBackward1(n, g, alpha):
    return (-g if alpha == 1 else g * -alpha,)


@formula(arrays=True)
def MulBackward1(n, g, c):
    return (g * c,)


@formula(arrays=True)
def MulBackward0(n, g, a, b):
    return (g * b if n.needs(0) else None), (g * a if n.needs(1) else None)


@op(operators=("__mul__", "__rmul__"), r_operators=("*",), samples=S.binary_arith, names="unify",
    forward="multilinear", complex_half=True, onnx="Mul",
    mobile={"Tensor": "self, other: Tensor", "Scalar": "self, other: Scalar"})
def mul(self: Tensor, other: Tensor | float) -> Tensor:
    if type(self) is Tensor:
        c = cached_number(other, self.data)
        if c is not None:  # tensor * number (the fast path)
            return record_one(np.multiply(self.data, c), MulBackward1, self, (c,))
    ta = self if type(self) is Tensor else None
    tb = other if type(other) is Tensor else None
    try:
        out = elementwise(np.multiply, ta.data if ta is not None else data_of(self),
                          tb.data if tb is not None else data_of(other))
    except ValueError:
        raise broadcast_error(self, other, "mul") from None
    if needs_promotion(out.dtype, ta, tb):
        out = as_result_dtype(out, self, other)
    if tb is None and ta is not None and is_number(other):
        return record(out, MulBackward1, (ta,), (other,))
    # Save only what the other side's gradient needs.
    return record(out, MulBackward0, (ta, tb),
                         (self if tb is not None and tb._rg else None,
                          other if ta is not None and ta._rg else None))


@formula(arrays=True)
def DivBackward1(n, g, c):
    return (g / c,)


@formula(arrays=True)
def DivBackward0(n, g, a, b):
    ga = g / b if n.needs(0) else None
    gb = -g * a / (b * b) if n.needs(1) else None
    return ga, gb


def _div_jvp(p: dict, t: dict, result: Tensor) -> Any:
    """The forward rule of div: (t_self - t_other * result) / other; rounded, none."""
    if p["rounding_mode"] is not None:
        return None  # (piecewise constant: a zero tangent)
    ts, to = t["self"], t["other"]
    out = None if ts is None else ts / p["other"]
    if to is not None:
        term = to * result / p["other"]
        out = -term if out is None else out - term
    return out


@op(operators=("__truediv__",), r_operators={"/": {}, "%/%": {"rounding_mode": "trunc"}},
    samples=S.binary_div, names="unify", forward=_div_jvp, complex_half="div_cpu", onnx="Div",
    mobile={"Tensor": "self, other: Tensor", "Scalar": "self, other: Scalar"})
def div(self: Tensor, other: Tensor | float, rounding_mode: str | None = None) -> Tensor:
    if type(self) is Tensor and rounding_mode is None:
        c = cached_number(other, self.data)
        if c is not None:  # tensor / number (the fast path)
            return record(np.true_divide(self.data, c), DivBackward1, (self,), (c,))
    da, db = data_of(self), data_of(other)
    if rounding_mode is not None:
        _no_integer_zero_division(da, db, "div")
    try:
        if rounding_mode is None:
            out = elementwise(np.true_divide, da, db)
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
        raise broadcast_error(self, other, "div") from None
    out = as_result_dtype(out, self, other)
    if rounding_mode is not None:
        return wrap(out.astype(np.result_type(da, db)) if np.result_type(da, db).kind != "f"
                    else out)
    if type(other) is not Tensor and isinstance(self, Tensor) and is_number(other):
        return record(out, DivBackward1, (self,), (other,))
    return record(out, DivBackward0, (tensor_of(self), tensor_of(other)), (self, other))


def _no_integer_zero_division(da: Any, db: Any, opname: str) -> None:
    """Integers have no inf or NaN: dividing them by zero is an error, as in libtorch."""
    if np.asarray(db).dtype.kind in "iub" and np.asarray(da).dtype.kind in "iub" and \
            not np.all(db):
        raise RuntimeError(f"{opname}: integer division by zero (ZeroDivisionError); make "
                           "the divisor nonzero, or convert to a floating dtype first")


@formula
def RemainderBackward1(n, g, a, b):
    gb = -g * div(a, b, rounding_mode="floor") if n.needs(1) else None
    return g, gb


@op(operators=("__mod__",), samples=S.binary_div, names="unify", onnx="Mod")
def remainder(self: Tensor | float, other: Tensor | float) -> Tensor:
    """a - floor(a / b) * b: the result has the sign of b (R's `%%`, Python's `%`)."""
    _no_integer_zero_division(data_of(self), data_of(other), "remainder")
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.remainder(data_of(self), data_of(other))
    except ValueError:
        raise broadcast_error(self, other, "remainder") from None
    return record(as_result_dtype(out, self, other), RemainderBackward1,
                  (tensor_of(self), tensor_of(other)), (self, other),
                  name=None if isinstance(other, Tensor) else "RemainderBackward0")


@op(operators=("__floordiv__",), samples=S.binary_div, differentiable=False, names="unify")
def floor_divide(self: Tensor, other: Tensor | float) -> Tensor:
    """floor(a / b), not differentiable (R's `%/%`, Python's `//`)."""
    return div(self, other, rounding_mode="floor")


# Reflected Python operators (`2 / x`, `2 % x`, `2 // x`): the number comes first.
@op(function=False, method=False, operators=("__rtruediv__",), names="unify")
def rdiv(self: Tensor, other: Tensor | float) -> Tensor:
    return div(other, self)


@op(function=False, method=False, operators=("__rmod__",), names="unify")
def rremainder(self: Tensor, other: Tensor | float) -> Tensor:
    return remainder(other, self)


@op(function=False, method=False, operators=("__rfloordiv__",), names="unify")
def rfloor_divide(self: Tensor, other: Tensor | float) -> Tensor:
    return floor_divide(other, self)


@formula(arrays=True)
def FmodBackward0(n, g):
    return g, None


@formula
def FmodBackward1(n, g, a, b):
    gb = -g * div(a, b, rounding_mode="trunc") if n.needs(1) else None
    return g, gb


@op(r_operators=("%%",), samples=S.binary_div, names="unify", onnx=False)
def fmod(self: Tensor, other: Tensor | float) -> Tensor:
    """self - trunc(self / other) * other: the result has the sign of self (C's fmod,
    R torch's `%%`)."""
    _no_integer_zero_division(data_of(self), data_of(other), "fmod")
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.fmod(data_of(self), data_of(other))
    except ValueError:
        raise broadcast_error(self, other, "fmod") from None
    out = as_result_dtype(out, self, other)
    if isinstance(other, Tensor):
        return record(out, FmodBackward1, (tensor_of(self), other), (self, other))
    return record(out, FmodBackward0, (self, None))


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
        gb = where(a.eq(0) & (as_tensor(b) >= 0), 0.0, gb) if (a.data == 0).any() else gb
    return ga, gb


@formula
def PowBackward2(n, g, base, b, result):
    return None, g * result * float(np.log(base))


@op(operators=("__pow__",), r_operators=("^",), samples=S.binary_pow, names="unify", onnx="Pow",
    mobile={"Tensor_Tensor": "self, exponent: Tensor", "Tensor_Scalar": "self, exponent: Scalar"})
def pow(self: Tensor | float, exponent: Tensor | float) -> Tensor:
    if isinstance(self, Tensor) and not isinstance(exponent, Tensor):
        try:
            out = np.power(self.data, exponent)
        except ValueError as e:  # integers to negative integer powers
            raise RuntimeError(str(e)) from None
        if self.data.dtype.kind in "iub":
            if isinstance(exponent, (float, np.floating)):
                out = out.astype(np.float32)
            elif self.data.dtype.kind == "b" and isinstance(exponent, (bool, np.bool_)):
                out = out.astype(np.bool_)
        return record(out, PowBackward0, (self,), (self, exponent))
    if not isinstance(self, Tensor):  # number ** tensor
        out = as_result_dtype(np.power(float(self) if isinstance(exponent.data.dtype.kind, str) and
                                       exponent.data.dtype.kind == "f" else self, exponent.data),
                            self, exponent)
        return record(out, PowBackward2, (None, exponent), (self, exponent, OUTPUT))
    try:
        out = as_result_dtype(_power(self.data, exponent.data), self, exponent)
    except ValueError:
        raise broadcast_error(self, exponent, "pow") from None
    return record(out, PowBackward1, (self, exponent), (self, exponent, OUTPUT))


def _power(base: np.ndarray, exp: np.ndarray) -> np.ndarray:
    """NumPy's power, but integers to negative integer powers as libtorch gives
    them (NumPy refuses): 1 for base 1, +-1 for base -1, else 0."""
    if base.dtype.kind not in "iu" or exp.dtype.kind not in "iu" or not (exp < 0).any():
        return np.power(base, exp)
    neg = exp < 0
    out = np.power(base, np.where(neg, 0, exp))
    small = np.where(base == 1, 1, np.where(base == -1, np.where(exp % 2 == 0, 1, -1), 0))
    return np.where(neg, small, out).astype(out.dtype)


@op(function=False, method=False, operators=("__rpow__",), names="unify")
def rpow(self: Tensor, base: Any) -> Tensor:
    return pow(base, self)


@formula
def MaximumBackward0(n, g, a, b):
    ma = (a.data > b.data) + 0.5 * (a.data == b.data)
    return (g * wrap(ma.astype(g.data.dtype)) if n.needs(0) else None,
            g * wrap((1 - ma).astype(g.data.dtype)) if n.needs(1) else None)


@op(samples=S.binary_float, names="unify", onnx="Max")
def maximum(self: Tensor, other: Tensor) -> Tensor:
    try:
        out = as_result_dtype(elementwise(np.maximum, self.data, other.data), self, other)
    except ValueError:
        raise broadcast_error(self, other, "maximum") from None
    return record(out, MaximumBackward0, (self, other), (self, other))


@formula
def MinimumBackward0(n, g, a, b):
    ma = (a.data < b.data) + 0.5 * (a.data == b.data)
    return (g * wrap(ma.astype(g.data.dtype)) if n.needs(0) else None,
            g * wrap((1 - ma).astype(g.data.dtype)) if n.needs(1) else None)


@op(samples=S.binary_float, names="unify", onnx="Min")
def minimum(self: Tensor, other: Tensor) -> Tensor:
    try:
        out = as_result_dtype(elementwise(np.minimum, self.data, other.data), self, other)
    except ValueError:
        raise broadcast_error(self, other, "minimum") from None
    return record(out, MinimumBackward0, (self, other), (self, other))


# ==========================================================================
# Pointwise unary ops

@formula(arrays=True)
def NegBackward0(n, g):
    return (-g,)


@op(operators=("__neg__",), r_operators=("unary -",), samples=S.unary, names="keep",
    forward="linear", complex_half=True, onnx="Neg", mobile="self")
def neg(self: Tensor) -> Tensor:
    return record(np.negative(self.data), NegBackward0, (self,))


@formula(arrays=True)
def ExpBackward0(n, g, result):
    return (g * result,)


@op(r_math=("exp",), samples=S.unary, names="keep", forward="elementwise",
    complex_half="exp_vml_cpu", onnx="Exp", mobile="self")
def exp(self: Tensor) -> Tensor:
    return record(np.exp(float_data(self)), ExpBackward0, (self,), (OUTPUT,))


@formula(arrays=True)
def LogBackward0(n, g, x):
    return (g / x,)


@op(r_math=("log",), samples=S.positive, names="keep", forward="elementwise",
    complex_half="log_vml_cpu", onnx="Log", mobile="self")
def log(self: Tensor) -> Tensor:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(float_data(self))
    return record(out, LogBackward0, (self,), (self,))


@formula(arrays=True)
def SqrtBackward0(n, g, result):
    return (g / (2 * result),)


@op(r_math=("sqrt",), samples=S.positive, names="keep", forward="elementwise",
    complex_half="sqrt_vml_cpu", onnx="Sqrt", mobile="self")
def sqrt(self: Tensor) -> Tensor:
    with np.errstate(invalid="ignore"):
        out = np.sqrt(float_data(self))
    return record(out, SqrtBackward0, (self,), (OUTPUT,))


@formula
def AbsBackward0(n, g, x):
    return (g * (x.sgn() if x.is_complex() else x.sign()),)  # (complex: x / |x|)


@op(operators=("__abs__",), r_math=("abs",), samples=S.unary, names="keep", forward="elementwise",
    complex_half="real", onnx="Abs", mobile="self")
def abs(self: Tensor) -> Tensor:
    d = self.data
    if d.dtype.kind == "b":
        raise RuntimeError("abs: not implemented for bool tensors; convert first, e.g. "
                           "x.to(dtype=torch_long())")
    return record(np.abs(d), AbsBackward0, (self,), (self,))


@formula
def SignBackward0(n, g):
    return (g * 0,)


def _sign(d: np.ndarray) -> np.ndarray:
    """-1, 0 or 1; 0 for NaN, as PyTorch gives."""
    if d.dtype.kind == "b":
        return d.copy()
    out = np.sign(d, out=np.empty_like(d))  # (an array also when 0-d)
    if d.dtype.kind == "f":
        out[np.isnan(out)] = 0
    return out


@op(r_math=("sign",), samples=S.unary, names="keep", forward="elementwise", onnx="Sign")
def sign(self: Tensor) -> Tensor:
    if self.data.dtype.kind == "c":
        raise RuntimeError("sign is not defined for complex tensors; use sgn() (x / |x|)")
    return record(_sign(self.data), SignBackward0, (self,))


@formula
def SinBackward0(n, g, x):
    return (g * x.cos(),)


@op(r_math=("sin",), samples=S.unary, names="keep", forward="elementwise",
    complex_half="sin_vml_cpu", onnx="Sin", mobile="self")
def sin(self: Tensor) -> Tensor:
    return record(np.sin(float_data(self)), SinBackward0, (self,), (self,))


@formula
def CosBackward0(n, g, x):
    return (-g * x.sin(),)


@op(r_math=("cos",), samples=S.unary, names="keep", forward="elementwise",
    complex_half="cos_vml_cpu", onnx="Cos", mobile="self")
def cos(self: Tensor) -> Tensor:
    return record(np.cos(float_data(self)), CosBackward0, (self,), (self,))


# FAST PATH (array formulas' `1 - x`): 1 as a read-only 0-d array of x's float dtype.
# NumPy converts a Python 1 on every call: a third of tanh's backward on small arrays.
# The same values: the ufunc runs in x's dtype either way.
_ONE = {np.dtype(t): np.array(1, t) for t in (np.float16, np.float32, np.float64)}
for _c in _ONE.values():
    _c.flags.writeable = False


@formula(arrays=True)
def TanhBackward0(n, g, result):
    one = _ONE.get(result.dtype, 1) if type(result) is np.ndarray else 1
    return (g * (one - result * result),)


@op(r_math=("tanh",), samples=S.unary, names="keep", forward="elementwise",
    complex_half="tanh_vml_cpu", onnx="Tanh", mobile="self")
def tanh(self: Tensor) -> Tensor:
    d = self.data  # (float_data(), its common case inline)
    return record_one(np.tanh(d if d.dtype.kind in "fc" else float_data(self)), TanhBackward0,
                      self, OUTPUT)


@formula(arrays=True)
def SigmoidBackward0(n, g, result):
    one = _ONE.get(result.dtype, 1) if type(result) is np.ndarray else 1
    return (g * result * (one - result),)


@op(samples=S.unary, names="keep", forward="elementwise", complex_half="sigmoid_cpu",
    onnx="Sigmoid", mobile="self")
def sigmoid(self: Tensor) -> Tensor:
    d = self.data
    if d.dtype.kind == "c":
        return record(1 / (1 + np.exp(-d)), SigmoidBackward0, (self,), (OUTPUT,))
    if d.dtype.kind != "f":
        d = d.astype(np.float32)
    # Stable on both tails: exp only of non-positive numbers.
    e = np.exp(-np.abs(d))
    out = np.where(d >= 0, 1 / (1 + e), e / (1 + e)).astype(d.dtype, copy=False)
    return record(out, SigmoidBackward0, (self,), (OUTPUT,))


@formula(arrays=True)
def ReluBackward0(n, g, result):
    if type(g) is np.ndarray and g.size > parallel.BLOCK:
        return (_where_positive(g, result),)  # fast path: no mask of the whole size
    return (g * (result > 0),)


def _where_positive(g: np.ndarray, result: np.ndarray) -> np.ndarray:
    """g * (result > 0), a block at a time: the mask is one block long (the ReLU
    backward of a large activation is a training step's peak of memory)."""
    out = onednn.relu_backward(g, result)    # fast path: float32 on oneDNN's threads
    if out is not None:
        return out
    out = np.empty(g.shape, g.dtype)
    if result.shape != g.shape:
        return np.multiply(g, result > 0, out=out)

    def step(o: np.ndarray, gb: np.ndarray, rb: np.ndarray, mask: np.ndarray) -> None:
        np.greater(rb, 0, out=mask)
        np.multiply(gb, mask, out=o)
    parallel.blockwise(step, [out, g, result], np.dtype(bool))
    return out


@op(samples=S.unary, names="keep", forward="elementwise", onnx="Relu", mobile="self")
def relu(self: Tensor) -> Tensor:
    if self.data.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return record(np.maximum(self.data, 0, dtype=self.data.dtype), ReluBackward0, (self,), (OUTPUT,))


def _clip_scalars(d: np.ndarray, lo: Any, hi: Any, inplace: bool = False) -> np.ndarray:
    """libtorch's clamp with number bounds, min(max(x, lo), hi): NaN in x or a
    bound gives NaN, lo > hi gives hi, and a zero x against a zero bound keeps
    its own sign (NumPy's clip, the fast loop for number bounds, takes the
    bound's there, so those zeros are left out of it)."""
    keep_zeros = d.dtype.kind == "f" and (lo == 0 or hi == 0) and \
        (lo is None or lo <= 0) and (hi is None or hi >= 0)
    if inplace:
        return np.clip(d, lo, hi, out=d, where=d != 0) if keep_zeros else \
            np.clip(d, lo, hi, out=d)
    out = np.clip(d, lo, hi)
    if keep_zeros:
        np.copyto(out, d, where=d == 0)
    return out


def _clip_tensors(d: np.ndarray, lo: Tensor | None, hi: Tensor | None) -> np.ndarray:
    """libtorch's clamp with tensor bounds, minimum(maximum(x, lo), hi) as its
    vector loop does it (NaN from any operand; a tie of zeros takes the bound's).
    Two passes: NumPy's clip with array bounds is several times slower."""
    out = d if lo is None else np.maximum(d, lo.data)
    if hi is None:
        return out.copy() if out is d else out
    into = None if out is d or np.result_type(out, hi.data) != out.dtype else out
    return np.minimum(out, hi.data, out=into)


@formula(arrays=True)
def ClampBackward1(n, g, x, lo, hi):
    keep = x <= hi if lo is None else x >= lo if hi is None else (x >= lo) & (x <= hi)
    return (g * keep,)


@op(samples=S.clamp, names="keep",
    mobile={"Tensor": "self, min: Tensor=None, max: Tensor=None",
            "": "self, min: Scalar=None, max: Scalar=None"})
def clamp(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    if min is None and max is None:
        raise ValueError("clamp: at least one of min or max must be given")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(self, min, max)
    lo = clamp_bound(min, "min")
    hi = clamp_bound(max, "max")
    out = _clip_scalars(self.data, lo, hi)
    if out.dtype is not self.data.dtype:
        out = as_result_dtype(out, self)
    return record(out, ClampBackward1, (self,), (self, lo, hi))


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
    lo = None if min is None else as_tensor(min)
    hi = None if max is None else as_tensor(max)
    try:
        out = _clip_tensors(x.data, lo, hi)
    except ValueError:
        raise broadcast_error(x, lo if lo is not None else hi, "clamp") from None
    out = as_result_dtype(out, x, lo if lo is not None else hi)
    return record(out, ClampBackward0, (x, lo, hi), (x, lo, hi))


def _clamp_tensor_(x: Tensor, min: Any, max: Any) -> Tensor:
    """clamp_ with tensor bounds: they broadcast to x's shape, x keeps its dtype."""
    lo = None if min is None else as_tensor(min)
    hi = None if max is None else as_tensor(max)
    bounds = [b for b in (lo, hi) if b is not None]
    check_inplace(x, *bounds)
    if np.broadcast_shapes(x.shape, *(b.shape for b in bounds)) != tuple(x.shape):
        raise RuntimeError(f"clamp_: can't update a tensor of shape {shape_str(x.shape)} in "
                           f"place with bounds of shape {shape_str(bounds[0].shape)}: the "
                           "bounds must broadcast to the tensor's shape")
    out = as_result_dtype(_clip_tensors(x.data, lo, hi), x, bounds[0])
    if not np.can_cast(out.dtype, x.data.dtype, "same_kind"):
        raise RuntimeError(f"clamp_: result type {wrap(out).dtype.r_name} can't be cast to "
                           f"the desired output type {x.dtype.r_name}")
    old = x.detach().clone() if needs_grad(x, *bounds) else x  # (what the node reads)
    x.data[...] = out
    bump_version(x)
    return record_inplace(x, ClampBackward0, (x, lo, hi), (old, lo, hi))


@formula(arrays=True)
def TanBackward0(n, g, result):
    return (g * (1 + result * result),)


@op(r_math=("tan",), samples=S.unary, names="keep", forward="elementwise",
    complex_half="tan_vml_cpu", onnx="Tan", mobile="self")
def tan(self: Tensor) -> Tensor:
    return record(np.tan(float_data(self)), TanBackward0, (self,), (OUTPUT,))


_LN2, _LN10 = float(np.log(2)), float(np.log(10))


@formula(arrays=True)
def Log2Backward0(n, g, x):
    return (g / (x * _LN2),)


@op(r_math=("log2",), samples=S.positive, names="keep", forward="elementwise", onnx=False)
def log2(self: Tensor) -> Tensor:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log2(float_data(self))
    return record(out, Log2Backward0, (self,), (self,))


@formula(arrays=True)
def Log10Backward0(n, g, x):
    return (g / (x * _LN10),)


@op(r_math=("log10",), samples=S.positive, names="keep", forward="elementwise", onnx=False)
def log10(self: Tensor) -> Tensor:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log10(float_data(self))
    return record(out, Log10Backward0, (self,), (self,))


@formula(arrays=True)
def Log1PBackward0(n, g, x):
    return (g / (x + 1),)


@op(r_math=("log1p",), samples=S.positive, names="keep", forward="elementwise",
    complex_half="log1p_vml_cpu", onnx=False)
def log1p(self: Tensor) -> Tensor:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log1p(float_data(self))
    return record(out, Log1PBackward0, (self,), (self,))


@formula(arrays=True)
def Expm1Backward0(n, g, result):
    return (g * (result + 1),)


@op(r_math=("expm1",), samples=S.unary, names="keep", forward="elementwise", onnx=False)
def expm1(self: Tensor) -> Tensor:
    return record(np.expm1(float_data(self)), Expm1Backward0, (self,), (OUTPUT,))


@formula(arrays=True)
def _ZeroBackward(n, g):
    # the derivative of a step: recorded under each op's own name
    return (g * 0,)


# Rounding: piecewise constant, so the gradient is zero (PyTorch's nodes).
def _rounding(ufunc: Callable, name: str, r_name: str, **facts: Any) -> Callable:
    def rounding(self: Tensor) -> Tensor:
        d = self.data
        if d.dtype.kind != "f":
            d = bf16_as_f32(d)
        return record(ufunc(d) if d.dtype.kind == "f" else d.copy(), _ZeroBackward, (self,),
                      name=name)
    rounding.__name__ = rounding.__qualname__ = name[:-len("Backward0")].lower()
    return op(r_math=(r_name,), samples=S.unary, names="keep", forward="elementwise",
              **facts)(rounding)


floor = _rounding(np.floor, "FloorBackward0", "floor", onnx="Floor")
ceil = _rounding(np.ceil, "CeilBackward0", "ceiling", onnx="Ceil")
trunc = _rounding(np.trunc, "TruncBackward0", "trunc", onnx=False)


@formula
def RoundBackward0(n, g):
    return (g * 0,)


@formula
def RoundBackward1(n, g):
    return (g * 0,)


@op(r_math=("round",), samples=S.unary, names="keep", forward="elementwise", onnx="Round")
@r_formals("self, decimals")
def round(self: Tensor, decimals: int = 0) -> Tensor:
    """Halves to even, as PyTorch (and NumPy) round."""
    d = self.data
    if d.dtype.kind != "f":
        return record(d.copy(), RoundBackward0, (self,))
    if decimals:
        return record(np.round(d, int(decimals)), RoundBackward1, (self,))
    return record(np.round(d), RoundBackward0, (self,))


@op(samples=S.unary, names="keep", forward="elementwise", complex_half="pow")
def square(self: Tensor) -> Tensor:
    return pow(self, 2)


# ==========================================================================
# Comparisons and logic (bool results, not differentiable)

def _compare(ufunc: Callable, name: str, self_type: str = "Tensor",
             other_type: str = "Tensor | float") -> Callable:
    """A comparison, logical or bitwise op; `self_type`, `other_type`: its operands' declared
    types (a comparison's second takes a number too, a logical op's a tensor only;
    a bitwise op's first a number too)."""
    def compare(self: Tensor, other: Tensor | float) -> Tensor:
        try:
            out = elementwise(ufunc, data_of(self), data_of(other))
            return wrap(np.asanyarray(out))  # (meta stays)
        except ValueError:
            raise broadcast_error(self, other, name) from None
        except TypeError:
            if other is None and name in ("eq", "ne"):
                return NotImplemented  # `x == None` is False, as in PyTorch
            raise
    compare.__name__ = compare.__qualname__ = name
    compare.__annotations__.update(self=self_type, other=other_type)
    return compare


_cmp = dict(samples=S.compare, differentiable=False, names="unify")
gt = op(operators=("__gt__",), r_operators=(">",), **_cmp, onnx="Greater")(
    _compare(np.greater, "gt"))
ge = op(operators=("__ge__",), r_operators=(">=",), **_cmp, onnx="GreaterOrEqual")(
    _compare(np.greater_equal, "ge"))
lt = op(operators=("__lt__",), r_operators=("<",), **_cmp, onnx="Less")(
    _compare(np.less, "lt"))
le = op(operators=("__le__",), r_operators=("<=",), **_cmp, onnx="LessOrEqual")(
    _compare(np.less_equal, "le"))
eq = op(operators=("__eq__",), r_operators=("==",), **_cmp, complex_half=True, onnx="Equal")(
    _compare(np.equal, "eq"))
ne = op(operators=("__ne__",), r_operators=("!=",), **_cmp, complex_half=True, onnx="Equal")(
    _compare(np.not_equal, "ne"))
_logic = dict(samples=S.logical, differentiable=False, names="unify")
logical_and = op(r_operators=("&",), **_logic, onnx="And")(
    _compare(np.logical_and, "logical_and", other_type="Tensor"))
logical_or = op(r_operators=("|",), **_logic, onnx="Or")(
    _compare(np.logical_or, "logical_or", other_type="Tensor"))
bitwise_and = op(**_logic)(_compare(np.bitwise_and, "bitwise_and", self_type="Tensor | float"))
bitwise_or = op(**_logic)(_compare(np.bitwise_or, "bitwise_or", self_type="Tensor | float"))


@op(r_operators=("!",), samples=S.logical_unary, differentiable=False, names="keep", onnx="Not")
def logical_not(self: Tensor) -> Tensor:
    return wrap(np.logical_not(self.data))


@op(samples=S.unary, differentiable=False, names="keep", complex_half=True, onnx="IsNaN")
def isnan(self: Tensor) -> Tensor:
    return wrap(np.isnan(self.data))


@op(samples=S.binary_float, differentiable=False, names="unnamed", complex_half="equal_notnan_cpu")
def equal(self: Tensor, other: Tensor) -> bool:
    return self.shape == other.shape and bool(np.array_equal(self.data, other.data))


@op(samples=S.binary_float, differentiable=False, names="unnamed", complex_half=True)
def allclose(self: Tensor, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> bool:
    return bool(np.allclose(self.data, data_of(other), rtol=rtol, atol=atol, equal_nan=equal_nan))


# ==========================================================================
# In-place ops (bump the version counter so saved copies are caught)

def _inplace_binary(x: Tensor, other: Any, ufunc: Callable, fn: Callable, saved: tuple,
                    name: str, node: str | None = None) -> Tensor:
    o = other if isinstance(other, Tensor) else None
    check_inplace(x, o)
    try:
        ufunc(x.data, data_of(other), out=x.data, casting="same_kind")
    except ValueError:
        raise RuntimeError(f"{name}: can't update a tensor of shape {shape_str(x.shape)} in "
                           f"place with a value of shape {shape_str(np.shape(data_of(other)))}: "
                           "the value must broadcast to the tensor's shape") from None
    except TypeError:
        promoted = as_result_dtype(np.empty(0, np.result_type(x.data, data_of(other))), x, other)
        raise RuntimeError(f"{name}: result type {wrap(promoted).dtype.r_name} can't be cast "
                           f"to the desired output type {x.dtype.r_name}") from None
    bump_version(x)
    # (a number operand is no input of the node: the Scalar overload's one edge)
    inputs = (x,) if o is None and is_number(other) else (x, o)
    return record_inplace(x, fn, inputs, saved, name=node)


@op(operators=("__iadd__",), function=False, complex_half=True)
def add_(self: Tensor, other: Tensor | float, alpha: float = 1) -> Tensor:
    other = other if alpha == 1 else (other * alpha)
    if is_number(other):
        return _inplace_binary(self, other, np.add, AddBackward1, (), "add_")
    return _inplace_binary(self, other, np.add, AddBackward0, (1,), "add_")


@op(operators=("__isub__",), function=False, complex_half=True)
def sub_(self: Tensor, other: Tensor | float, alpha: float = 1) -> Tensor:
    other = other if alpha == 1 else (other * alpha)
    if is_number(other):
        return _inplace_binary(self, other, np.subtract, AddBackward1, (), "sub_",
                               node="SubBackward1")
    return _inplace_binary(self, other, np.subtract, SubBackward0, (1,), "sub_")


@op(operators=("__imul__",), function=False, complex_half=True)
def mul_(self: Tensor, other: Tensor | float) -> Tensor:
    if is_number(other):
        return _inplace_binary(self, other, np.multiply, MulBackward1, (other,), "mul_")
    o = other if isinstance(other, Tensor) else None
    # other's gradient needs self's old value: a differentiable copy (higher order)
    old = self.clone() if o is not None and needs_grad(o) else None
    return _inplace_binary(self, other, np.multiply, MulBackward0, (old, other), "mul_")


@op(operators=("__itruediv__",), function=False, complex_half="div_cpu")
def div_(self: Tensor, other: Tensor | float, rounding_mode: str | None = None) -> Tensor:
    if rounding_mode is not None:
        return _div_rounded_(self, other, rounding_mode=rounding_mode)
    o = other if isinstance(other, Tensor) else None
    old = self.clone() if o is not None and needs_grad(o) else None
    if self.data.dtype.kind != "f":
        raise RuntimeError(f"div_: result type Float can't be cast to the desired output "
                           f"type {self.dtype.r_name}")
    if is_number(other):
        return _inplace_binary(self, other, np.true_divide, DivBackward1, (other,), "div_")
    return _inplace_binary(self, other, np.true_divide, DivBackward0, (old, other), "div_")


@op(function=False)
def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    if min is None and max is None:
        raise ValueError("clamp_: at least one of min or max must be given")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor_(self, min, max)
    check_inplace(self)
    lo, hi = clamp_bound(min, "min"), clamp_bound(max, "max")
    old = self.detach().clone() if needs_grad(self) else None
    _clip_scalars(self.data, lo, hi, inplace=True)
    bump_version(self)
    return record_inplace(self, ClampBackward1, (self,), (old, lo, hi))




# ==========================================================================
# More math: trig and hyperbolic inverses, exp/log variants, special
# functions, and each one's in-place form. A floating op computes ints and
# bools in float32 (`float_data`), as PyTorch does with its default dtype.

def _floating(self: Tensor, compute: Callable, backward: Callable, save: str | None) -> Tensor:
    """A floating unary op; `save` is what its derivative needs: "self", "result" or None."""
    with np.errstate(all="ignore"):
        out = compute(float_data(self))
    saved = (self,) if save == "self" else (OUTPUT,) if save == "result" else ()
    return record(out, backward, (self,), saved)


@formula(arrays=True)
def _InplaceBackward(n, g):
    # inputs (x's old value, the result computed from its copy): the old value
    # was overwritten, so its gradient flows only through the result's graph
    return None, g


def inplace_form(fn: Callable, name: str, node: str | None = None) -> Callable:
    """`x.fn_(...)`: fn computed on x, written back into x.

    With grad, fn runs on a differentiable copy of x (so what its node saves is
    the old value, and higher orders work), and x takes a node named as fn's
    own (or `node`, where PyTorch names the in-place form's apart) that passes
    the gradient on to it."""
    def inplace(self: Tensor, *args: Any, **kw: Any) -> Tensor:
        tensors = [a for a in (*args, *kw.values()) if isinstance(a, Tensor)]
        check_inplace(self, *tensors)
        grad = needs_grad(self, *tensors)
        out = fn(self.clone() if grad else self, *args, **kw)
        if out.shape != self.shape:
            raise RuntimeError(f"{name}: the result's shape {shape_str(out.shape)} doesn't match "
                               f"the tensor's {shape_str(self.shape)}: an in-place op can't "
                               "broadcast the tensor it changes")
        if not np.can_cast(out.data.dtype, self.data.dtype, "same_kind"):
            raise RuntimeError(f"{name}: result type {out.dtype.r_name} can't be cast to the "
                               f"desired output type {self.dtype.r_name}")
        self.data[...] = out.data
        bump_version(self)
        if out.grad_fn is None:
            return self
        return record_inplace(self, _InplaceBackward, (self, out), (),
                              name=node or out.grad_fn.name)
    inplace.__name__ = inplace.__qualname__ = name
    inplace.__signature__ = inspect.signature(fn)  # (its arguments are fn's: R translates them)
    if hasattr(fn, "__r_formals__"):  # (and R torch's formals, where declared)
        inplace.__r_formals__ = fn.__r_formals__
    return inplace


def _declare(fn: Callable, *, aliases: tuple = (), inplace: bool = True,
             inplace_node: str | None = None, **fields: Any) -> Callable:
    """Declare fn an op, with its in-place form `name_` (a method) and its
    aliases (R torch's and PyTorch's other names, e.g. arccos for acos)."""
    op(fn.__name__, **fields)(fn)
    if inplace:
        op(fn.__name__ + "_", function=False)(inplace_form(fn, fn.__name__ + "_", inplace_node))
    _aliases(fn, aliases, inplace, inplace_node, samples=fields.get("samples"),
             differentiable=fields.get("differentiable", True), names=fields.get("names"),
             forward=fields.get("forward"))
    return fn


def _aliases(fn: Callable, aliases: tuple, inplace: bool = True, inplace_node: str | None = None,
             **fields: Any) -> None:
    """Other names of an op (and of its in-place form), declared as ops of their own."""
    for name in aliases:
        op(name, **fields)(fn)
        if inplace:
            op(name + "_", function=False)(inplace_form(fn, name + "_", inplace_node))


def _unary(name: str, compute: Callable, backward: Callable, save: str | None,
           **fields: Any) -> Callable:
    def unary(self: Tensor) -> Tensor:
        return _floating(self, compute, backward, save)
    unary.__name__ = unary.__qualname__ = name
    fields.setdefault("samples", S.unary)
    return _declare(unary, names="keep", **fields)


@formula
def AsinBackward0(n, g, x):
    return (g / (1 - x * x).sqrt(),)


@formula
def AcosBackward0(n, g, x):
    return (-g / (1 - x * x).sqrt(),)


@formula(arrays=True)
def AtanBackward0(n, g, x):
    return (g / (1 + x * x),)


@formula
def SinhBackward0(n, g, x):
    return (g * x.cosh(),)


@formula
def CoshBackward0(n, g, x):
    return (g * x.sinh(),)


@formula
def AsinhBackward0(n, g, x):
    return (g / (x * x + 1).sqrt(),)


@formula
def AcoshBackward0(n, g, x):
    return (g / ((x - 1) * (x + 1)).sqrt(),)


@formula(arrays=True)
def AtanhBackward0(n, g, x):
    return (g / (1 - x * x),)


asin = _unary("asin", np.arcsin, AsinBackward0, "self", r_math=("asin",), samples=S.unit,
              aliases=("arcsin",), forward="elementwise", onnx=False)
acos = _unary("acos", np.arccos, AcosBackward0, "self", r_math=("acos",), samples=S.unit,
              aliases=("arccos",), forward="elementwise", onnx=False)
atan = _unary("atan", np.arctan, AtanBackward0, "self", r_math=("atan",), aliases=("arctan",),
              forward="elementwise", onnx=False)
sinh = _unary("sinh", np.sinh, SinhBackward0, "self", r_math=("sinh",), forward="elementwise",
              onnx=False)
cosh = _unary("cosh", np.cosh, CoshBackward0, "self", r_math=("cosh",), forward="elementwise",
              onnx=False)
# (PyTorch names the in-place forms' nodes of these three, and polygamma_'s, apart)
asinh = _unary("asinh", np.arcsinh, AsinhBackward0, "self", aliases=("arcsinh",),
               inplace_node="AsinhBackward1", forward="elementwise")
acosh = _unary("acosh", np.arccosh, AcoshBackward0, "self", samples=S.above_one,
               aliases=("arccosh",), inplace_node="AcoshBackward1", forward="elementwise")
atanh = _unary("atanh", np.arctanh, AtanhBackward0, "self", samples=S.unit,
               aliases=("arctanh",), inplace_node="AtanhBackward1", forward="elementwise")


@formula(arrays=True)
def Exp2Backward0(n, g, result):
    return (g * result * _LN2,)


@formula(arrays=True)
def RsqrtBackward0(n, g, result):
    return (-0.5 * g * result * result * result,)


@formula(arrays=True)
def ReciprocalBackward0(n, g, result):
    return (-g * result * result,)


@formula(arrays=True)
def Deg2RadBackward0(n, g):
    return (g * (np.pi / 180),)


@formula(arrays=True)
def Rad2DegBackward0(n, g):
    return (g * (180 / np.pi),)


@formula
def SincBackward0(n, g, x):
    px = x * np.pi
    d = (px.cos() * px - px.sin()) / (px * x)
    return (g * where(x.eq(0), 0.0, d),)


exp2 = _unary("exp2", np.exp2, Exp2Backward0, "result", forward="elementwise")
rsqrt = _unary("rsqrt", lambda d: 1 / np.sqrt(d), RsqrtBackward0, "result", samples=S.positive,
               forward="elementwise", complex_half="rsqrt_cpu", mobile="self")
reciprocal = _unary("reciprocal", lambda d: 1 / d, ReciprocalBackward0, "result",
                    samples=S.nonzero, forward="elementwise", complex_half="reciprocal_cpu",
                    onnx="Reciprocal")
def _times(factor: float) -> Callable:
    """x * factor as libtorch multiplies by a Scalar: the factor in float32 below
    double (NumPy's rad2deg rounds otherwise: 6.283 gives 359.98935, not 359.98938)."""
    def compute(a: np.ndarray) -> np.ndarray:
        if a.dtype == np.float64:
            return a * factor
        return (a.astype(np.float32, copy=False) * np.float32(factor)).astype(a.dtype, copy=False)
    return compute


deg2rad = _unary("deg2rad", _times(math.pi / 180), Deg2RadBackward0, None, forward="elementwise")
rad2deg = _unary("rad2deg", _times(180 / math.pi), Rad2DegBackward0, None, forward="elementwise")
sinc = _unary("sinc", np.sinc, SincBackward0, "self", forward="elementwise")


@formula(arrays=True)
def FracBackward0(n, g):
    return (g,)


def frac(self: Tensor) -> Tensor:
    """x - trunc(x), the sign of x kept."""
    if self.data.dtype.kind != "f":
        raise RuntimeError(f"frac: not implemented for {self.dtype.r_name} tensors (only "
                           "floating ones have a fractional part)")
    return record(self.data - np.trunc(self.data), FracBackward0, (self,))


_declare(frac, names="keep", samples=S.floats, forward="elementwise")


@formula
def SgnBackward0(n, g):
    return (g * 0,)


def sgn(self: Tensor) -> Tensor:
    """sign(x) for real tensors (x / |x| for complex ones)."""
    return record(_sign(self.data), SgnBackward0, (self,))


_declare(sgn, names="keep", samples=S.unary, complex_half=True)


def positive(self: Tensor) -> Tensor:
    """The tensor itself (`+x`)."""
    if self.data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


_declare(positive, names="keep", samples=S.unary, inplace=False, forward="linear")

# In-place forms of the math above (`x$exp_()`), and the other names of ops
for _fn in (neg, exp, log, sqrt, abs, sign, sin, cos, tan, tanh, sigmoid, log2, log10,
            log1p, expm1, floor, ceil, trunc, round, square):  # (relu_: ops/activation.py)
    op(_fn.__name__ + "_", function=False,
       complex_half=_fn is neg)(inplace_form(_fn, _fn.__name__ + "_"))
_aliases(neg, ("negative",), samples=S.unary, names="keep", forward="linear")
_aliases(abs, ("absolute",), samples=S.unary, names="keep", forward="elementwise")
_aliases(trunc, ("fix",), samples=S.unary, names="keep", forward="elementwise")


# --- special functions ------------------------------------------------------

_2_SQRTPI = 2 / float(np.sqrt(np.pi))


@formula
def ErfcBackward0(n, g, x):
    return (-g * _2_SQRTPI * (-x * x).exp(),)


@formula
def ErfinvBackward0(n, g, result):
    return (g * (np.sqrt(np.pi) / 2) * (result * result).exp(),)


@formula
def LgammaBackward0(n, g, x):
    return (g * digamma(x),)


@formula
def DigammaBackward0(n, g, x):
    return (g * polygamma(1, x),)


@formula
def ErfBackward0(n, g, x):
    return (g * _2_SQRTPI * (-x * x).exp(),)


erf = _unary("erf", special.erf, ErfBackward0, "self", forward="elementwise", onnx="Erf")
erfc = _unary("erfc", special.erfc, ErfcBackward0, "self", forward="elementwise")
erfinv = _unary("erfinv", special.erfinv, ErfinvBackward0, "result", samples=S.unit,
                forward="elementwise")
lgamma = _unary("lgamma", special.lgamma, LgammaBackward0, "self", samples=S.gamma,
                forward="elementwise")
digamma = _unary("digamma", special.digamma, DigammaBackward0, "self", samples=S.gamma,
                 forward="elementwise")


@formula
def PolygammaBackward0(n, g, k, x):
    return (None, g * polygamma(k + 1, x))


def polygamma(n: Any, input: Tensor | float) -> Tensor:
    """The n-th derivative of digamma. R torch and PyTorch call the function as
    polygamma(n, x) and the method as x$polygamma(n): the tensor may come first."""
    if isinstance(n, Tensor) and not isinstance(input, Tensor):
        n, input = input, n
    self = input
    k = whole(n, "polygamma: n")
    if k < 0:
        raise ValueError(f"polygamma: n must be a non-negative integer, got {k}")
    with np.errstate(all="ignore"):
        out = special.polygamma(k, float_data(self))
    return record(out, PolygammaBackward0, (None, self), (k, self))


def _polygamma_of(self: Tensor, n: Any) -> Tensor:
    return polygamma(n, self)


_declare(polygamma, names="keep", samples=S.polygamma, inplace=False, forward="elementwise")
op("polygamma_", function=False)(inplace_form(_polygamma_of, "polygamma_", "PolygammaBackward1"))


@formula
def MvlgammaBackward0(n, g, x, p):
    return (g * sum(digamma(x - j / 2) for j in range(p)),)


def mvlgamma(self: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension p (every element > (p-1)/2)."""
    p = whole(p, "mvlgamma: p")
    if p < 1:
        raise ValueError(f"mvlgamma: p must be at least 1, got {p}")
    d = float_data(self)
    if (d <= (p - 1) / 2).any():
        raise ValueError(f"mvlgamma: all elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    out = sum(special.lgamma(d - j / 2) for j in range(p)) + p * (p - 1) / 4 * np.log(np.pi)
    return record(out.astype(d.dtype), MvlgammaBackward0, (self,), (self, p))


_declare(mvlgamma, names="keep", samples=S.mvlgamma, forward="elementwise")


@formula
def LogitBackward0(n, g, x, eps):
    d = g / (x * (1 - x))
    if eps is None:
        return (d,)
    return (where((x < eps) | (x > 1 - eps), 0.0, d),)


def logit(self: Tensor, eps: float | None = None) -> Tensor:
    """log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given."""
    d = float_data(self)
    if eps is not None:
        d = np.clip(d, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(d / (1 - d))
    return record(out, LogitBackward0, (self,), (self, eps))


_declare(logit, names="keep", samples=S.logit, forward="elementwise")


# --- binary math ------------------------------------------------------------

def _binary_arrays(self: Any, other: Any, opname: str) -> tuple:
    """Both operands' arrays (a floating op's ints and bools as float32)."""
    da, db = data_of(self), data_of(other)
    if isinstance(da, np.ndarray) and da.dtype.kind != "f":
        da = da.astype(np.float32)
    if isinstance(db, np.ndarray) and db.dtype.kind != "f" and not (
            isinstance(da, np.ndarray) and da.dtype == np.float64):
        db = db.astype(np.float32)
    try:
        np.broadcast_shapes(np.shape(da), np.shape(db))
    except ValueError:
        raise broadcast_error(self, other, opname) from None
    return da, db


def _floating_binary(self: Any, other: Any, ufunc: Callable, opname: str) -> np.ndarray:
    da, db = _binary_arrays(self, other, opname)
    with np.errstate(all="ignore"):
        return as_result_dtype(np.asarray(ufunc(da, db)), self, other)


@formula
def Atan2Backward0(n, g, a, b):
    r = a * a + b * b
    return (g * b / r if n.needs(0) else None), (-g * a / r if n.needs(1) else None)


def atan2(self: Tensor, other: Tensor) -> Tensor:
    out = _floating_binary(self, other, np.arctan2, "atan2")
    return record(out, Atan2Backward0, (tensor_of(self), tensor_of(other)), (self, other))


_declare(atan2, names="unify", aliases=("arctan2",), samples=S.binary_float)


@formula
def HypotBackward0(n, g, a, b, result):
    return (g * a / result if n.needs(0) else None), (g * b / result if n.needs(1) else None)


def hypot(self: Tensor, other: Tensor) -> Tensor:
    out = _floating_binary(self, other, np.hypot, "hypot")
    return record(out, HypotBackward0, (tensor_of(self), tensor_of(other)), (self, other, OUTPUT))


_declare(hypot, names="unify", samples=S.binary_float)


@formula
def LogaddexpBackward0(n, g, a, b):
    return ((g / (1 + (b - a).exp()) if n.needs(0) else None),
            (g / (1 + (a - b).exp()) if n.needs(1) else None))


@formula
def Logaddexp2Backward0(n, g, a, b):
    return ((g / (1 + pow(2.0, b - a)) if n.needs(0) else None),
            (g / (1 + pow(2.0, a - b)) if n.needs(1) else None))


def logaddexp(self: Tensor, other: Tensor) -> Tensor:
    """log(exp(a) + exp(b)), without overflow."""
    out = _floating_binary(self, other, np.logaddexp, "logaddexp")
    return record(out, LogaddexpBackward0, (tensor_of(self), tensor_of(other)), (self, other))


def logaddexp2(self: Tensor, other: Tensor) -> Tensor:
    """log2(2^a + 2^b), without overflow."""
    out = _floating_binary(self, other, np.logaddexp2, "logaddexp2")
    return record(out, Logaddexp2Backward0, (tensor_of(self), tensor_of(other)), (self, other))


_declare(logaddexp, names="unify", samples=S.binary_float, inplace=False)
_declare(logaddexp2, names="unify", samples=S.binary_float, inplace=False)


@formula
def XlogyBackward0(n, g, a, b):
    ga = gb = None
    if n.needs(0):
        ga = where(a.eq(0) & (b <= 0), 0.0, g * b.log())
    if n.needs(1):
        gb = g * a / b
    return ga, gb


@formula
def XlogyBackward2(n, g, a, b):
    if b > 0:
        return g * float(np.log(b)), None
    return where(a.eq(0), 0.0, g * (-np.inf if b == 0 else np.nan)), None


def xlogy(self: Tensor | float, other: Tensor | float) -> Tensor:
    """self * log(other), 0 where self is 0 (unless other is NaN)."""
    def compute(a, b):
        return np.where((a == 0) & ~np.isnan(b), 0.0, a * np.log(b))
    out = _floating_binary(self, other, compute, "xlogy")
    if not isinstance(self, Tensor):  # a number times the log of a tensor
        return record(out, XlogyBackward0, (None, other), (as_tensor(self), other),
                      name="XlogyBackward1")
    if not isinstance(other, Tensor):
        return record(out, XlogyBackward2, (self, None), (self, other))
    return record(out, XlogyBackward0, (self, other), (self, other))


_declare(xlogy, names="unify", samples=S.xlogy)


@formula
def CopysignBackward0(n, g, a, result):
    ratio = where(a.eq(0), 0.0, result / a)
    return (g * ratio if n.needs(0) else None), (g * 0 if n.needs(1) else None)


def copysign(self: Tensor, other: Tensor | float) -> Tensor:
    """|self| with the sign of other (-0.0 counts as negative)."""
    out = _floating_binary(self, other, np.copysign, "copysign")
    return record(out, CopysignBackward0, (tensor_of(self), tensor_of(other)), (self, OUTPUT),
                  name=None if isinstance(other, Tensor) else "CopysignBackward1")


_declare(copysign, names="unify", samples=S.copysign)


def float_power(self: Tensor | float, exponent: Tensor | float) -> Tensor:
    """pow in float64, whatever the operands' dtypes."""
    f64 = lambda v: v.double() if isinstance(v, Tensor) else float(v)  # noqa: E731
    return pow(f64(self), f64(exponent))


_declare(float_power, names="unify", samples=S.binary_pow)


def true_divide(self: Tensor, other: Tensor | float) -> Tensor:
    return div(self, other)


_declare(true_divide, names="unify", samples=S.binary_div,
         forward=lambda p, t, result: _div_jvp({**p, "rounding_mode": None}, t, result),
         complex_half="div_cpu")
_aliases(mul, ("multiply",), samples=S.binary_arith, names="unify", forward="multilinear")
_aliases(div, ("divide",), samples=S.binary_div, names="unify", forward=_div_jvp)
_aliases(sub, ("subtract",), samples=S.add_sub, names="unify", forward=_sub_jvp)
for _name, _fn in (("pow_", pow), ("fmod_", fmod), ("remainder_", remainder)):
    op(_name, function=False)(inplace_form(_fn, _name))


@formula
def LerpBackward0(n, g, weight):
    return (g * (1 - weight) if n.needs(0) else None), (g * weight if n.needs(1) else None)


@formula
def LerpBackward1(n, g, a, end, weight):
    return ((g * (1 - weight) if n.needs(0) else None), (g * weight if n.needs(1) else None),
            (g * (end - a) if n.needs(2) else None))


def lerp(self: Tensor, end: Tensor, weight: Tensor | float) -> Tensor:
    """self + weight * (end - self)."""
    da, de = data_of(self), data_of(end)
    try:
        out = da + data_of(weight) * (de - da)
    except ValueError:
        raise broadcast_error(self, end, "lerp") from None
    if isinstance(weight, Tensor):
        out = as_result_dtype(out, self, end)
        return record(out, LerpBackward1, (tensor_of(self), tensor_of(end), weight),
                      (self, end, weight))
    out = out.astype(np.result_type(da, de), copy=False)
    return record(out, LerpBackward0, (tensor_of(self), tensor_of(end)), (weight,))


_declare(lerp, names="unify", samples=S.lerp, complex_half="lerp_kernel_scalar")


@formula
def AddcmulBackward0(n, g, t1, t2, value):
    return (g, g * t2 * value if n.needs(1) else None, g * t1 * value if n.needs(2) else None)


@formula
def AddcdivBackward0(n, g, t1, t2, value):
    return (g, g * value / t2 if n.needs(1) else None,
            -g * value * t1 / (t2 * t2) if n.needs(2) else None)


def addcmul(self: Tensor, tensor1: Tensor, tensor2: Tensor, value: float = 1) -> Tensor:
    """self + value * tensor1 * tensor2."""
    try:
        out = data_of(self) + value * (data_of(tensor1) * data_of(tensor2))
    except ValueError:
        raise broadcast_error(tensor1, tensor2, "addcmul") from None
    out = out.astype(np.result_type(data_of(self), data_of(tensor1), data_of(tensor2)), copy=False)
    return record(out, AddcmulBackward0, (self, tensor1, tensor2), (tensor1, tensor2, value))


def addcdiv(self: Tensor, tensor1: Tensor, tensor2: Tensor, value: float = 1) -> Tensor:
    """self + value * tensor1 / tensor2."""
    if data_of(tensor1).dtype.kind in "iub" and data_of(tensor2).dtype.kind in "iub":
        raise RuntimeError("addcdiv: integer division of tensors isn't supported; make "
                           "tensor1 or tensor2 floating, e.g. tensor1$to(dtype = torch_float())")
    try:
        out = data_of(self) + value * (data_of(tensor1) / data_of(tensor2))
    except ValueError:
        raise broadcast_error(tensor1, tensor2, "addcdiv") from None
    out = out.astype(np.result_type(data_of(self), data_of(tensor1), data_of(tensor2)), copy=False)
    return record(out, AddcdivBackward0, (self, tensor1, tensor2), (tensor1, tensor2, value))


_declare(addcmul, samples=S.addcmul, complex_half=True)
_declare(addcdiv, samples=S.addcdiv)


@formula(arrays=True)
def ClampMinBackward0(n, g, x, lo):
    return (g * (x >= lo),)


@formula(arrays=True)
def ClampMaxBackward0(n, g, x, hi):
    return (g * (x <= hi),)


@formula
def ClampMinBackward1(n, g, x, lo):
    keep = x >= lo
    return (where(keep, g, 0.0) if n.needs(0) else None), \
        (where(keep, 0.0, g) if n.needs(1) else None)


@formula
def ClampMaxBackward1(n, g, x, hi):
    keep = x <= hi
    return (where(keep, g, 0.0) if n.needs(0) else None), \
        (where(keep, 0.0, g) if n.needs(1) else None)


def _clamp_one(self: Tensor, bound: Tensor, ufunc: Callable, backward: Callable,
               opname: str) -> Tensor:
    try:
        out = as_result_dtype(ufunc(self.data, bound.data), self, bound)
    except ValueError:
        raise broadcast_error(self, bound, opname) from None
    return record(out, backward, (self, bound), (self, bound))


def clamp_min(self: Tensor, min: Any) -> Tensor:
    if isinstance(min, Tensor):
        return _clamp_one(self, min, np.maximum, ClampMinBackward1, "clamp_min")
    lo = clamp_bound(min, "min")
    out = np.maximum(self.data, lo)
    out = out if out.dtype is self.data.dtype else as_result_dtype(out, self)
    return record(out, ClampMinBackward0, (self,), (self, lo))


def clamp_max(self: Tensor, max: Any) -> Tensor:
    if isinstance(max, Tensor):
        return _clamp_one(self, max, np.minimum, ClampMaxBackward1, "clamp_max")
    hi = clamp_bound(max, "max")
    out = np.minimum(self.data, hi)
    out = out if out.dtype is self.data.dtype else as_result_dtype(out, self)
    return record(out, ClampMaxBackward0, (self,), (self, hi))


_declare(clamp_min, names="keep", samples=S.clamp_min)
_declare(clamp_max, names="keep", samples=S.clamp_max)
_aliases(clamp, ("clip",), samples=S.clamp, names="keep")


@formula(arrays=True)
def NanToNumBackward0(n, g, finite):
    return (g * finite,)


@r_formals("self, nan = NULL, posinf = NULL, neginf = NULL")
def nan_to_num(self: Tensor, nan: float | None = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest values
    unless given)."""
    d = self.data
    if d.dtype.kind != "f":
        return wrap(d.copy())
    out = np.nan_to_num(d, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)
    return record(out, NanToNumBackward0, (self,), (np.isfinite(d),))


_declare(nan_to_num, names="keep", samples=S.nan_to_num, forward="elementwise")


@formula
def LdexpBackward0(n, g, other, result):
    return (g * pow(2.0, other) if n.needs(0) else None), \
        (g * result * _LN2 if n.needs(1) else None)


def ldexp(self: Tensor, other: Tensor) -> Tensor:
    """self * 2^other."""
    out = _floating_binary(self, other, lambda a, b: a * np.exp2(b), "ldexp")
    return record(out, LdexpBackward0, (tensor_of(self), tensor_of(other)), (other, OUTPUT))


_declare(ldexp, names="unify", samples=S.ldexp)


# --- not differentiable: rounding to neighbours, steps, tests of values --------

def nextafter(self: Tensor, other: Tensor) -> Tensor:
    """The next floating value after self towards other."""
    return wrap(_floating_binary(self, other, np.nextafter, "nextafter"))


def heaviside(self: Tensor, values: Tensor) -> Tensor:
    """0 where self < 0, 1 where self > 0, values where self == 0."""
    da, dv = data_of(self), data_of(values)
    if np.result_type(da) != np.result_type(dv):
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different "
                           f"dtypes; convert values to {as_tensor(self).dtype.r_name} first")
    try:
        out = np.heaviside(da, dv) if da.dtype.kind == "f" else \
            np.where(da == 0, dv, (da > 0)).astype(da.dtype)
    except ValueError:
        raise broadcast_error(self, values, "heaviside") from None
    return wrap(np.asarray(out))


_nd = dict(differentiable=False)
_declare(nextafter, names="unify", samples=S.binary_float, **_nd)
_declare(heaviside, names="unify", samples=S.heaviside, **_nd)
bitwise_xor = op(**_logic)(_compare(np.bitwise_xor, "bitwise_xor", self_type="Tensor | float"))
logical_xor = op(**_logic)(_compare(np.logical_xor, "logical_xor", other_type="Tensor"))
for _fn in (bitwise_and, bitwise_or, bitwise_xor, logical_and, logical_or, logical_xor):
    op(_fn.__name__ + "_", function=False,
       complex_half=_fn is neg)(inplace_form(_fn, _fn.__name__ + "_"))


def _shift(ufunc: Callable, name: str) -> Callable:
    def shift(self: Tensor | float, other: Tensor | float) -> Tensor:
        da, db = data_of(self), data_of(other)
        for d in (da, db):
            if np.asarray(d).dtype.kind not in "iu":
                raise RuntimeError(f"{name}: only integer tensors can be shifted")
        return wrap(np.asarray(ufunc(da, db)))
    shift.__name__ = shift.__qualname__ = name
    return shift


bitwise_left_shift = _declare(_shift(np.left_shift, "bitwise_left_shift"),
                              samples=S.shifts, names="unify", **_nd)
bitwise_right_shift = _declare(_shift(np.right_shift, "bitwise_right_shift"),
                               samples=S.shifts, names="unify", **_nd)


def bitwise_not(self: Tensor) -> Tensor:
    if self.data.dtype.kind not in "iub":
        raise RuntimeError("bitwise_not: only integer and bool tensors are supported")
    return wrap(np.invert(self.data))


_declare(bitwise_not, names="keep", samples=S.bits_unary, **_nd)
op("logical_not_", function=False)(inplace_form(logical_not, "logical_not_"))

# The Python operators on bits (`a & b`, `~a`), and R torch's methods of the same
# names (`x$`__and__`(y)`): bitwise, which on bools is the logical op.
# (R torch has them as functions too: `torch___and__(x, y)`)
_bits = dict(differentiable=False)
op("__and__", operators=("__rand__",), samples=S.bits, names="unify", **_bits,
   onnx="And")(bitwise_and)
op("__or__", operators=("__ror__",), samples=S.bits, names="unify", **_bits, onnx="Or")(bitwise_or)
op("__xor__", operators=("__rxor__",), samples=S.bits, names="unify", **_bits,
   onnx="Xor")(bitwise_xor)
op("__lshift__", samples=S.shifts, names="unify", **_bits)(bitwise_left_shift)
op("__rshift__", samples=S.shifts, names="unify", **_bits)(bitwise_right_shift)
op("__invert__", function=False, **_bits)(bitwise_not)
for _name, _fn in (("__iand__", bitwise_and), ("__ior__", bitwise_or),
                   ("__ixor__", bitwise_xor), ("__ilshift__", bitwise_left_shift),
                   ("__irshift__", bitwise_right_shift)):
    op(_name, function=False, **_bits)(inplace_form(_fn, _name))


def _test(ufunc: Callable, name: str, **facts: Any) -> Callable:
    def test(self: Tensor) -> Tensor:
        return wrap(np.asanyarray(ufunc(self.data)))  # (meta stays)
    test.__name__ = test.__qualname__ = name
    return _declare(test, samples=S.special_values, inplace=False, names="keep", **_nd, **facts)


isfinite = _test(np.isfinite, "isfinite", complex_half=True)
isinf = _test(np.isinf, "isinf")
isposinf = _test(np.isposinf, "isposinf")
isneginf = _test(np.isneginf, "isneginf")
isreal = _test(lambda d: np.ones(d.shape, dtype=np.bool_) if d.dtype.kind != "c"
               else d.imag == 0, "isreal")
signbit = _test(np.signbit, "signbit")


def isclose(self: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|self - other| <= atol + rtol * |other|, elementwise."""
    try:
        return wrap(np.asarray(np.isclose(self.data, data_of(other), rtol=rtol, atol=atol,
                                          equal_nan=equal_nan)))
    except ValueError:
        raise broadcast_error(self, other, "isclose") from None


_declare(isclose, samples=S.isclose, inplace=False, **_nd, complex_half=True)
_aliases(gt, ("greater",), inplace=False, samples=S.compare, differentiable=False,
         names="unify")
_aliases(ge, ("greater_equal",), inplace=False, samples=S.compare, differentiable=False,
         names="unify")
_aliases(lt, ("less",), inplace=False, samples=S.compare, differentiable=False,
         names="unify")
_aliases(le, ("less_equal",), inplace=False, samples=S.compare, differentiable=False,
         names="unify")
_aliases(ne, ("not_equal",), inplace=False, samples=S.compare, differentiable=False,
         names="unify")


def _inplace_compare(fn: Callable) -> Callable:
    """`x.gt_(y)`: x becomes 0/1, a step: its gradient is zero from here on (the
    node named as PyTorch names it: GtBackward0 for a number y, GtBackward1 for a
    tensor)."""
    write = inplace_form(fn, fn.__name__ + "_")

    def compare_(self: Tensor, other: Tensor | float) -> Tensor:
        write(self, other)
        if needs_grad(self):
            name = f"{fn.__name__.capitalize()}Backward{int(isinstance(other, Tensor))}"
            record_inplace(self, _ZeroBackward, (self,), (), name=name)
        return self
    compare_.__name__ = compare_.__qualname__ = fn.__name__ + "_"
    return compare_


for _fn in (gt, ge, lt, le, eq, ne):
    op(_fn.__name__ + "_", function=False)(_inplace_compare(_fn))
for _fn, _alias in ((gt, "greater"), (ge, "greater_equal"), (lt, "less"), (le, "less_equal"),
                   (ne, "not_equal")):
    op(_alias + "_", function=False)(_inplace_compare(_fn))
op("floor_divide_", function=False)(inplace_form(floor_divide, "floor_divide_"))


_div_rounded_ = inplace_form(div, "div_")


# --- more: fmax/fmin, gcd/lcm, i0, frexp ----------------------------------------

@formula
def FmaxBackward0(n, g, a, b):
    take_a = (a >= b) | b.isnan()
    return (where(take_a, g, 0.0) if n.needs(0) else None), \
        (where(take_a, 0.0, g) if n.needs(1) else None)


@formula
def FminBackward0(n, g, a, b):
    take_a = (a <= b) | b.isnan()
    return (where(take_a, g, 0.0) if n.needs(0) else None), \
        (where(take_a, 0.0, g) if n.needs(1) else None)


def fmax(self: Tensor, other: Tensor) -> Tensor:
    """The larger of the two, elementwise; NaN only where both are NaN."""
    try:
        out = as_result_dtype(np.fmax(self.data, other.data), self, other)
    except ValueError:
        raise broadcast_error(self, other, "fmax") from None
    return record(out, FmaxBackward0, (self, other), (self, other))


def fmin(self: Tensor, other: Tensor) -> Tensor:
    """The smaller of the two, elementwise; NaN only where both are NaN."""
    try:
        out = as_result_dtype(np.fmin(self.data, other.data), self, other)
    except ValueError:
        raise broadcast_error(self, other, "fmin") from None
    return record(out, FminBackward0, (self, other), (self, other))


_declare(fmax, names="unify", samples=S.binary_float, inplace=False)
_declare(fmin, names="unify", samples=S.binary_float, inplace=False)


def _integer_binary(ufunc: Callable, name: str) -> Callable:
    def integer_op(self: Tensor, other: Tensor) -> Tensor:
        da, db = data_of(self), data_of(other)
        if np.asarray(da).dtype.kind not in "iu" or np.asarray(db).dtype.kind not in "iu":
            raise RuntimeError(f"{name}: only integer tensors are supported")
        try:
            return wrap(np.asarray(ufunc(da, db)))
        except ValueError:
            raise broadcast_error(self, other, name) from None
    integer_op.__name__ = integer_op.__qualname__ = name
    return _declare(integer_op, samples=S.integers, differentiable=False)


gcd = _integer_binary(np.gcd, "gcd")
lcm = _integer_binary(np.lcm, "lcm")


@formula
def I0Backward0(n, g, x):
    return (g * _i1(x),)


@formula
def SpecialI1Backward0(n, g, x, result):
    # i1'(x) = i0(x) - i1(x) / x, which is 1/2 at 0
    d = where(x.eq(0), 0.5, i0(x) - result / where(x.eq(0), 1.0, x))
    return (g * d,)


def _i1(self: Tensor) -> Tensor:
    """i1 (PyTorch's special_i1): the derivative of i0."""
    return record(special.i1(float_data(self)), SpecialI1Backward0, (self,), (self, OUTPUT))


i0 = _unary("i0", special.i0, I0Backward0, "self", forward="elementwise")


@formula
def FrexpBackward0(n, g, exponent):
    return (g / pow(2.0, exponent),)


def frexp(self: Tensor) -> tuple:
    """(mantissa, exponent): self = mantissa * 2^exponent, |mantissa| in [0.5, 1)."""
    if self.data.dtype.kind != "f":
        raise RuntimeError(f"frexp: only floating tensors are supported, got "
                           f"{self.dtype.r_name}")
    m, e = np.frexp(self.data)
    exponent = wrap(e.astype(np.int32))
    return record(m, FrexpBackward0, (self,), (exponent,)), exponent


_declare(frexp, names="keep", samples=S.floats, inplace=False)


@formula
def IgammaBackward0(n, g, a, x):
    if n.needs(0):
        raise NotImplementedError("the derivative of igamma with respect to its first "
                                  "argument (input) is not implemented, as in PyTorch")
    return None, g * ((a - 1) * x.log() - x - lgamma(a)).exp()


@formula
def IgammacBackward0(n, g, a, x):
    if n.needs(0):
        raise NotImplementedError("the derivative of igammac with respect to its first "
                                  "argument (input) is not implemented, as in PyTorch")
    return None, -g * ((a - 1) * x.log() - x - lgamma(a)).exp()


def igamma(self: Tensor, other: Tensor) -> Tensor:
    """The regularized lower incomplete gamma function P(self, other)."""
    out = _floating_binary(self, other, special.gammainc, "igamma")
    return record(out, IgammaBackward0, (tensor_of(self), tensor_of(other)), (self, other))


def igammac(self: Tensor, other: Tensor) -> Tensor:
    """The regularized upper incomplete gamma function Q(self, other) = 1 - P."""
    out = _floating_binary(self, other, special.gammaincc, "igammac")
    return record(out, IgammacBackward0, (tensor_of(self), tensor_of(other)), (self, other))


_declare(igamma, names="unify", samples=S.igamma)
_declare(igammac, names="unify", samples=S.igamma)
