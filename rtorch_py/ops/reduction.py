"""Reductions (sum, mean, prod, max/min and their arg forms) and the
normalisations along a dim (softmax, log_softmax)."""
from __future__ import annotations

import builtins
from typing import Any, Callable

import numpy as np

from ..engine import bump_version
from ..formals import r_formals
from ..tensor import Tensor, bf16_as_f32, wrap_dim, as_dtype, wrap
from .samples import reduction as S
from .conversion import CloneBackward0
from .indexing import gather
from .shape import narrow, select
from .pointwise import maximum, minimum
from .operands import whole
from .recording import (OUTPUT, expand_to, formula, grad_state, multi_formula, needs_grad, record,
                        record_many)
from .dispatch import op
from .sum_kernel import libtorch_sum
from .views import check_inplace, record_inplace


# ==========================================================================
# Reductions

def one_dim(dim: Any, ndim: int) -> int:
    """A single 0-based dim (a name was made a position before the op ran: ops/dispatch.py)."""
    if isinstance(dim, str):
        raise TypeError(f"dim {dim!r}: a dim given by name reached an op whose declaration "
                        "doesn't say this argument is a dim (@op(dims=...)); give its number")
    return wrap_dim(whole(dim, "dim"), ndim)


def _dims(dim: Any, ndim: int) -> tuple:
    if isinstance(dim, (list, tuple)):
        if not dim:  # dim=() reduces over every dim, as in PyTorch
            return tuple(range(ndim))
        dims = tuple(sorted(one_dim(d, ndim) for d in dim))
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    else:
        dims = (one_dim(dim, ndim),)
    return dims if ndim else ()  # a 0-d tensor accepts dim 0 or -1: nothing to reduce


def _unreduce(g: Tensor, shape: tuple, dims: tuple | None, keepdim: bool) -> Tensor:
    """Bring a reduced gradient back to the input's shape."""
    if dims is not None and not keepdim:
        kept = list(shape)
        for d in dims:
            kept[d] = 1
        g = g.reshape(tuple(kept))
    return g.expand(shape)


def _sum(d: np.ndarray, dims: tuple | None, keepdim: bool = False) -> np.ndarray:
    """d summed over dims (all: None); float32 and float64 in libtorch's order."""
    if d.dtype not in (np.float32, np.float64):
        return np.asarray(d.sum(axis=dims, keepdims=keepdim))
    out = libtorch_sum(d, dims)
    if keepdim:
        out = out.reshape([1 if dims is None or i in dims else n for i, n in enumerate(d.shape)])
    return out


@formula(arrays=True)
def SumBackward0(n, g, shape):
    return (expand_to(g, shape),)


@formula
def SumBackward1(n, g, shape, dims, keepdim):
    return (_unreduce(g, shape, dims, keepdim),)


@op(dims=("dim",), r_summary=("sum",), samples=S.sum_, names="reduce", forward="linear",
    complex_half="sum_cpu",
    mobile={"": "self, *, dtype=None",
            "dim_IntList": "self, dim: int[1], keepdim=False, *, dtype=None"})
def sum(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    d = self.data
    if d.dtype.kind not in "fc":  # ints and bools sum in int64, bfloat16 in float32
        d = bf16_as_f32(d) if d.dtype.kind == "V" else d.astype(np.int64)
    if dtype is not None:
        d = d.astype(as_dtype(dtype).np)
    if dim is None:
        return record(_sum(d, None), SumBackward0, (self,), (self.shape,))
    dims = _dims(dim, self.ndim)
    return record(_sum(d, dims, keepdim), SumBackward1, (self,), (self.shape, dims, keepdim))


@formula(arrays=True)
def MeanBackward0(n, g, shape, count):
    return (expand_to(g, shape) / count,)


@formula
def MeanBackward1(n, g, shape, dims, keepdim, count):
    return (_unreduce(g, shape, dims, keepdim) / count,)


@op(dims=("dim",), samples=S.reduction, names="reduce", forward="linear", complex_half="sum_cpu",
    mobile={"": "self, *, dtype=None", "dim": "self, dim: int[1], keepdim=False, *, dtype=None"})
def mean(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    d = self.data
    if dtype is not None:
        d = d.astype(as_dtype(dtype).np)
    if d.dtype.kind != "f":
        d = bf16_as_f32(d)
    if d.dtype.kind != "f":
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {self.dtype.r_name}")
    # libtorch's CPU mean: the sum, divided in the data's precision (0/0: NaN, as PyTorch's)
    if dim is None:
        with np.errstate(invalid="ignore", divide="ignore"):
            out = _sum(d, None) / d.dtype.type(d.size)
        return record(out, MeanBackward0, (self,), (self.shape, builtins.max(d.size, 1)))
    dims = _dims(dim, self.ndim)
    count = int(np.prod([self.shape[i] for i in dims])) if self.ndim else 1
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.asarray(_sum(d, dims, keepdim) / d.dtype.type(count))
    return record(out, MeanBackward1, (self,), (self.shape, dims, keepdim, count))


@formula
def ProdBackward0(n, g, x, result):
    if x.data.all():
        return (g * result / x,)
    # with zeros: the product of all the other elements (no higher order here)
    flat = x.data.reshape(-1)
    return (g * wrap(_prod_others(flat, 0).reshape(x.shape)),)


def _prod_others(d: np.ndarray, axis: int) -> np.ndarray:
    """For each element, the product of the others along axis (exclusive
    cumulative products from both sides: exact with zeros)."""
    d = np.moveaxis(d, axis, -1)
    ones = np.ones(d.shape[:-1] + (1,), d.dtype)
    before = np.concatenate((ones, np.cumprod(d, axis=-1)[..., :-1]), axis=-1)
    after = np.concatenate((np.cumprod(d[..., ::-1], axis=-1)[..., :-1][..., ::-1], ones),
                           axis=-1)
    return np.moveaxis(before * after, -1, axis)


@formula
def ProdBackward1(n, g, x, result, dim, keepdim):
    if not keepdim and x.ndim:
        g, result = g.unsqueeze(dim), result.unsqueeze(dim)
    if x.data.all():
        return (g * result / x,)
    return (g * wrap(_prod_others(x.data, dim) if x.ndim else np.ones((), x.data.dtype)),)


@op(dims=("dim",), r_summary=("prod",), samples=S.prod, names="reduce",
    complex_half="prod_out_cpu", autocast="fp32")
def prod(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    d = self.data
    if dtype is not None:
        d = d.astype(as_dtype(dtype).np)
    elif d.dtype.kind in "biu":
        d = d.astype(np.int64)
    src = self if d is self.data else wrap(d)
    if dim is None:
        return record(np.asarray(d.prod()), ProdBackward0, (self,), (src, OUTPUT))
    if isinstance(dim, (list, tuple)):
        raise TypeError("prod: dim must be a single dimension, got several")
    dm = one_dim(dim, self.ndim)
    out = np.asarray(d.prod(axis=dm, keepdims=keepdim)) if self.ndim else d.copy()
    return record(out, ProdBackward1, (self,), (src, OUTPUT, dm, keepdim))


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
        return record(val, MaxBackward1, (x,), (x, OUTPUT), name=full_name)
    d = one_dim(dim, x.ndim)
    if x.ndim == 0:
        return (record(x.data.copy(), CloneBackward0, (x,), name=full_name[:-1] + "0"),
                wrap(np.zeros((), dtype=np.int64)))
    idx = arg(x.data, axis=d)
    vals = np.take_along_axis(x.data, np.expand_dims(idx, d), axis=d)
    if not keepdim:
        vals = np.squeeze(vals, d)
    else:
        idx = np.expand_dims(idx, d)
    values = record(vals, MaxBackward0, (x,), (idx, x.shape, d, keepdim),
                    name=full_name.replace("1", "0"))
    return values, wrap(idx.astype(np.int64))


@op(dims=("dim",), returns_indices=1, r_summary=("max",), samples=S.extreme, names="reduce",
    complex_half="max_all")
@r_formals("self, dim, other, keepdim = FALSE")
def max(self: Tensor, dim: Any = None, keepdim: bool = False, other: Tensor = None) -> Any:
    """Whole-tensor max, or (values, indices) along `dim`; with a tensor `other`
    (or a tensor in place of `dim`), the elementwise maximum."""
    if isinstance(dim, Tensor) and other is None:
        dim, other = None, dim
    if other is not None:
        if dim is not None:
            raise ValueError("max: give either `dim` or `other`, not both")
        return maximum(self, other if isinstance(other, Tensor) else Tensor(other))
    return _reduce_extreme(self, dim, keepdim, np.argmax, "max", "MaxBackward1")


@op(dims=("dim",), returns_indices=1, r_summary=("min",), samples=S.extreme, names="reduce",
    complex_half="min_all")
@r_formals("self, dim, other, keepdim = FALSE")
def min(self: Tensor, dim: Any = None, keepdim: bool = False, other: Tensor = None) -> Any:
    if isinstance(dim, Tensor) and other is None:
        dim, other = None, dim
    if other is not None:
        if dim is not None:
            raise ValueError("min: give either `dim` or `other`, not both")
        return minimum(self, other if isinstance(other, Tensor) else Tensor(other))
    return _reduce_extreme(self, dim, keepdim, np.argmin, "min", "MinBackward1")


@op(dims=("dim",), returns_indices=True, samples=S.arg_reduction, differentiable=False,
    names="reduce")
def argmax(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if dim is None:
        return wrap(np.asarray(np.argmax(self.data), dtype=np.int64))
    d = one_dim(dim, self.ndim)
    out = np.argmax(self.data, axis=d)
    return wrap((np.expand_dims(out, d) if keepdim else out).astype(np.int64))


@op(dims=("dim",), returns_indices=True, samples=S.arg_reduction, differentiable=False,
    names="reduce")
def argmin(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if dim is None:
        return wrap(np.asarray(np.argmin(self.data), dtype=np.int64))
    d = one_dim(dim, self.ndim)
    out = np.argmin(self.data, axis=d)
    return wrap((np.expand_dims(out, d) if keepdim else out).astype(np.int64))


@formula
def ScatterAlongBackward(n, g, idx, dim):
    if g.data.ndim == 0:  # (of a 0-d tensor: the scatter placed g as it is)
        return (g,)
    return (wrap(np.take_along_axis(g.data, idx, axis=dim)) if not grad_state.grad
            else gather(g, dim, wrap(idx)),)


def _scatter_along(g: Tensor, idx: np.ndarray, dim: int, shape: tuple) -> Tensor:
    """Zeros of `shape` with g placed at idx along dim (max/min's backward)."""
    z = np.zeros(shape, dtype=g.data.dtype)
    np.put_along_axis(z, idx, g.data, axis=dim)
    return record(z, ScatterAlongBackward, (g,), (idx, dim))


@formula
def SoftmaxBackward0(n, g, result, dim):
    gy = g * result
    return (gy - result * gy.sum(dim=dim, keepdim=True),)


def _softmax_jvp(p: dict, t: dict, result: Tensor) -> Tensor:
    """softmax's forward rule: result * (t - sum(result * t)) along dim."""
    ts = t["self"].to(dtype=result.dtype)
    return result * (ts - (result * ts).sum(dim=p["dim"], keepdim=True))


@op(dims=("dim",), samples=S.softmax, names="keep", forward=_softmax_jvp,
    mobile={"int": "self, dim, dtype=None"})
def softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    d = one_dim(dim, self.ndim)
    a = self.data if dtype is None else self.data.astype(as_dtype(dtype).np)
    if a.dtype.kind != "f":
        a = bf16_as_f32(a)
    if a.dtype.kind != "f":
        raise RuntimeError(f"softmax: expected a floating point tensor, got {self.dtype}")
    e = np.asanyarray(a - a.max(axis=d, keepdims=True, initial=-np.inf))  # (a meta array stays one)
    np.exp(e, out=e)  # in place: one fresh array for the whole op
    e /= e.sum(axis=d, keepdims=True)
    return record(e, SoftmaxBackward0, (self,), (OUTPUT, d))


@formula(arrays=True)
def LogSoftmaxBackward0(n, g, result, dim):
    if type(g) is not np.ndarray:
        return (g - result.exp() * g.sum(dim=dim, keepdim=True),)
    if g.dtype == np.float32 or g.dtype == np.float64:
        # the walk's fast path: the tensor formula's own arithmetic on the arrays
        # (exp, the libtorch-order sum of the sum op, product, difference)
        return (g - np.exp(result) * _sum(g, (dim,), True),)
    return (LogSoftmaxBackward0.formula(n, wrap(g), wrap(result), dim)[0].data,)


def _log_softmax_jvp(p: dict, t: dict, result: Tensor) -> Tensor:
    """log_softmax's forward rule: t - sum(softmax * t) along dim."""
    ts = t["self"].to(dtype=result.dtype)
    return ts - (result.exp() * ts).sum(dim=p["dim"], keepdim=True)


@op(dims=("dim",), samples=S.softmax, names="keep", forward=_log_softmax_jvp,
    mobile={"int": "self, dim, dtype=None"})
def log_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    d = one_dim(dim, self.ndim)
    a = self.data if dtype is None else self.data.astype(as_dtype(dtype).np)
    if a.dtype.kind != "f":
        a = bf16_as_f32(a)
    if a.dtype.kind != "f":
        raise RuntimeError(f"log_softmax: expected a floating point tensor, got {self.dtype}")
    s = a - a.max(axis=d, keepdims=True, initial=-np.inf)
    s -= np.log(np.exp(s).sum(axis=d, keepdims=True))
    return record(s, LogSoftmaxBackward0, (self,), (OUTPUT, d))




def _logical_reduction(reduce: Callable, name: str, **facts: Any) -> Callable:
    def reduction(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        if dim is None:
            return wrap(np.asarray(reduce(self.data)))
        return wrap(np.asarray(reduce(self.data, axis=_dims(dim, self.ndim),
                                      keepdims=keepdim)))
    reduction.__name__ = reduction.__qualname__ = name
    return op(dims=("dim",), r_summary=(name,), samples=S.logical_reduction,
              differentiable=False, names="reduce", **facts)(reduction)


any = _logical_reduction(np.any, "any", complex_half=True)
all = _logical_reduction(np.all, "all")


# ==========================================================================
# More reductions: nan-aware sums, moments, logsumexp, norms, cumulative ops

def float_input(x: Tensor, name: str, dtype: Any = None) -> np.ndarray:
    d = x.data if dtype is None else x.data.astype(as_dtype(dtype).np)
    if d.dtype.kind != "f":
        d = bf16_as_f32(d)
    if d.dtype.kind != "f":
        raise RuntimeError(f"{name}(): expected a floating point tensor (e.g. "
                           f"x$to(dtype = torch_float())), got {x.dtype.r_name}")
    return d


def _axes(dim: Any, ndim: int) -> tuple:
    """The dims a reduction runs over: every dim when dim is None."""
    return tuple(range(ndim)) if dim is None else _dims(dim, ndim)


def _count(shape: tuple, axes: tuple) -> int:
    return int(np.prod([shape[i] for i in axes])) if axes else 1


@formula
def NansumBackward0(n, g, x, dims, keepdim):
    g = _unreduce(g, x.shape, dims, keepdim)
    return (g * wrap(~np.isnan(x.data)),)


@op(dims=("dim",), samples=S.reduction, names="reduce")
def nansum(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    d = self.data if dtype is None else self.data.astype(as_dtype(dtype).np)
    if d.dtype.kind in "biu":
        d = d.astype(np.int64)
    axes = _axes(dim, self.ndim)
    keep = keepdim and dim is not None
    out = np.asarray(np.nansum(d, axis=axes, keepdims=keep)).astype(d.dtype, copy=False)
    return record(out, NansumBackward0, (self,), (self, axes, keep))


@op(dims=("dim",), samples=S.reduction, names="reduce")
def nanmean(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    float_input(self, "nanmean", dtype)
    # as PyTorch: the nan-free sum over the count of non-nan values (DivBackward0)
    count = sum(~self.isnan(), dim=dim, keepdim=keepdim)
    return nansum(self, dim, keepdim, dtype) / count


def _moment_args(dim: Any, unbiased: Any, correction: Any) -> tuple:
    """std/var's (dim, correction): `std(x, TRUE)` gives unbiased by position."""
    if isinstance(dim, (bool, np.bool_)):
        dim, unbiased = None, bool(dim)
    if correction is None:
        correction = 1 if unbiased else 0
    return dim, float(correction)


def _var_data(d: np.ndarray, axes: tuple, keepdim: bool, correction: float) -> np.ndarray:
    n = _count(d.shape, axes)
    dev = d - d.mean(axis=axes, keepdims=True)
    s = (dev * dev).sum(axis=axes, keepdims=keepdim)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(s / builtins.max(n - correction, 0), dtype=d.dtype)


def _var_grad(g: Tensor, x: Tensor, axes: tuple, keepdim: bool, correction: float) -> Tensor:
    """d var / dx times g: 2 (x - mean) / (N - correction)."""
    n = _count(x.shape, axes)
    g = _unreduce(g, x.shape, axes, keepdim)
    return g * (2.0 / builtins.max(n - correction, 0)) * (x - x.mean(dim=axes, keepdim=True))


@formula
def VarBackward0(n, g, x, axes, keepdim, correction):
    return (_var_grad(g, x, axes, keepdim, correction),)


def _nonzero_std(s: Tensor) -> Tensor:
    """std where it is 0 made infinite, so the gradient there is 0 (PyTorch's)."""
    return s.masked_fill(s == 0, float("inf")) if (s.data == 0).any() else s


@formula
def StdBackward0(n, g, x, result, axes, keepdim, correction):
    return (_var_grad(g / (2 * _nonzero_std(result)), x, axes, keepdim, correction),)


@op(dims=("dim",), samples=S.moments, names="reduce")
@r_formals("self, dim, unbiased = TRUE, keepdim = FALSE")
def var(self: Tensor, dim: Any = None, unbiased: bool = True, keepdim: bool = False,
        correction: Any = None) -> Tensor:
    dim, c = _moment_args(dim, unbiased, correction)
    d = float_input(self, "var")
    axes = _axes(dim, self.ndim)
    keep = keepdim and dim is not None
    return record(_var_data(d, axes, keep, c), VarBackward0, (self,), (self, axes, keep, c))


@op(dims=("dim",), samples=S.moments, names="reduce")
@r_formals("self, dim, unbiased = TRUE, keepdim = FALSE")
def std(self: Tensor, dim: Any = None, unbiased: bool = True, keepdim: bool = False,
        correction: Any = None) -> Tensor:
    dim, c = _moment_args(dim, unbiased, correction)
    d = float_input(self, "std")
    axes = _axes(dim, self.ndim)
    keep = keepdim and dim is not None
    return record(np.sqrt(_var_data(d, axes, keep, c)), StdBackward0, (self,),
                  (self, OUTPUT, axes, keep, c))


@multi_formula
def VarMeanBackward0(n, grads, x, axes, keepdim, correction, take_sqrt):
    # (std_mean's too, StdMeanBackward0: its first output the square root)
    gv, gm = grads
    out = None
    if gv is not None:
        if take_sqrt:
            s = x.var(dim=axes, keepdim=keepdim, correction=correction).sqrt()
            gv = gv / (2 * _nonzero_std(s))
        out = _var_grad(gv, x, axes, keepdim, correction)
    if gm is not None:
        gm = _unreduce(gm, x.shape, axes, keepdim) / _count(x.shape, axes)
        out = gm if out is None else out + gm
    return (out,)



def _moment_mean(self: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any,
                 name: str, take_sqrt: bool) -> tuple:
    dim, c = _moment_args(dim, unbiased, correction)
    d = float_input(self, name)
    axes = _axes(dim, self.ndim)
    keep = keepdim and dim is not None
    v = _var_data(d, axes, keep, c)
    m = np.asarray(d.mean(axis=axes, keepdims=keep), dtype=d.dtype)
    return record_many([np.sqrt(v) if take_sqrt else v, m], VarMeanBackward0, (self,),
                       (self, axes, keep, c, take_sqrt),
                       name="StdMeanBackward0" if take_sqrt else None)


@op(dims=("dim",), method=False, samples=S.moments, names="reduce")
@r_formals("self, dim, unbiased = TRUE, keepdim = FALSE")
def var_mean(self: Tensor, dim: Any = None, unbiased: bool = True, keepdim: bool = False,
             correction: Any = None) -> tuple:
    return _moment_mean(self, dim, unbiased, keepdim, correction, "var_mean",
                        False)


@op(dims=("dim",), method=False, samples=S.moments, names="reduce")
@r_formals("self, dim, unbiased = TRUE, keepdim = FALSE")
def std_mean(self: Tensor, dim: Any = None, unbiased: bool = True, keepdim: bool = False,
             correction: Any = None) -> tuple:
    return _moment_mean(self, dim, unbiased, keepdim, correction, "std_mean",
                        True)


def _logsumexp_data(d: np.ndarray, axes: tuple, keepdim: bool) -> np.ndarray:
    m = d.max(axis=axes, keepdims=True) if d.size else np.zeros((1,) * d.ndim, d.dtype)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(d - m).sum(axis=axes, keepdims=True)) + m
    return np.asarray(out if keepdim else out.reshape(
        [s for i, s in enumerate(d.shape) if i not in axes]), dtype=d.dtype)


@formula
def LogsumexpBackward0(n, g, x, result, axes, keepdim):
    g = _unreduce(g, x.shape, axes, keepdim)
    r = _unreduce(result, x.shape, axes, keepdim)
    return (g * (x - r).exp(),)


@op(dims=("dim",), samples=S.logsumexp, names="reduce")
def logsumexp(self: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    d = self.data if self.data.dtype.kind == "f" else self.data.astype(np.float32)
    axes = _axes(dim, self.ndim)
    return record(_logsumexp_data(d, axes, keepdim), LogsumexpBackward0, (self,),
                  (self, OUTPUT, axes, keepdim))


def _norm_p(p: Any) -> float:
    if isinstance(p, str):
        if p == "fro":
            return 2.0
        raise ValueError(f"norm: p = {p!r} is not supported here; use a number, Inf or 'fro'"
                         " (for matrix norms use linalg_matrix_norm())")
    return float(p)


def vector_norm_array(d: np.ndarray, p: float, axes: tuple, keepdim: bool) -> np.ndarray:
    a = np.abs(d)
    if p == np.inf:
        out = a.max(axis=axes, keepdims=keepdim, initial=0)
    elif p == -np.inf:
        out = a.min(axis=axes, keepdims=keepdim)
    elif p == 0:
        out = (a != 0).sum(axis=axes, keepdims=keepdim)
    elif p == 1:
        out = a.sum(axis=axes, keepdims=keepdim)
    elif p == 2:
        out = np.sqrt((a * a).sum(axis=axes, keepdims=keepdim))
    else:
        out = (a ** p).sum(axis=axes, keepdims=keepdim) ** (1 / p)
    return np.asarray(out, dtype=d.dtype)


def _norm_grad(g: Tensor, x: Tensor, result: Tensor, p: float, axes: tuple,
               keepdim: bool) -> Tensor:
    g = _unreduce(g, x.shape, axes, keepdim)
    r = _unreduce(result, x.shape, axes, keepdim)
    if p == 0:
        return g * 0
    if p == 1:
        return g * x.sign()
    if p in (np.inf, -np.inf):
        # ties share the gradient evenly, as PyTorch does
        mask = wrap((np.abs(x.data) == r.data).astype(x.data.dtype))
        return g * x.sign() * mask / mask.sum(dim=axes, keepdim=True)
    if p == 2:
        safe = r.masked_fill(r == 0, 1) if (r.data == 0).any() else r
        return g * x / safe * wrap(r.data != 0)
    safe = r.masked_fill(r == 0, 1) if (r.data == 0).any() else r
    return g * x * x.abs() ** (p - 2) / safe ** (p - 1) * wrap(r.data != 0)


@formula
def LinalgVectorNormBackward0(n, g, x, result, p, axes, keepdim):
    return (_norm_grad(g, x, result, p, axes, keepdim),)


@op(dims=("dim",), samples=S.norm)
def norm(self: Tensor, p: float | str = 2, dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """The vector p-norm over `dim` (every element when dim is None)."""
    pv = _norm_p(p)
    src = self if dtype is None else self.to(dtype=dtype)
    d = float_input(src, "norm")
    axes = _axes(dim, self.ndim)
    keep = keepdim and dim is not None
    return record(vector_norm_array(d, pv, axes, keep), LinalgVectorNormBackward0, (src,),
                  (src, OUTPUT, pv, axes, keep))



@op(dims=("dim",), samples=S.frobenius_norm)
def frobenius_norm(self: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """The 2-norm over `dim` (PyTorch keeps it for old code: norm() is the same)."""
    d = float_input(self, "frobenius_norm")
    axes = _axes(dim, self.ndim)
    return record(vector_norm_array(d, 2.0, axes, keepdim), LinalgVectorNormBackward0,
                  (self,), (self, OUTPUT, 2.0, axes, keepdim), name="NormBackward1")


@formula
def DistBackward0(n, g, x, y, result, p):
    diff = x - y
    gx = _norm_grad(g, diff, result, p, tuple(range(diff.ndim)), False)
    return (gx if n.needs(0) else None, -gx if n.needs(1) else None)


@op(samples=S.dist)
def dist(self: Tensor, other: Tensor, p: float = 2) -> Tensor:
    pv = _norm_p(p)
    diff = float_input(self, "dist") - float_input(other, "dist")
    out = vector_norm_array(diff, pv, tuple(range(diff.ndim)), False)
    return record(out, DistBackward0, (self, other), (self, other, OUTPUT, pv))


# Cumulative ops along a dim ------------------------------------------------

def _cum_input(self: Tensor, dtype: Any) -> np.ndarray:
    d = self.data
    if dtype is not None:
        return d.astype(as_dtype(dtype).np)
    return d.astype(np.int64) if d.dtype.kind in "biu" else d


@formula
def CumsumBackward0(n, g, dim):
    return (_reverse_cumsum(g, dim),)


def _reverse_cumsum(g: Tensor, dim: int) -> Tensor:
    """Sums from each position to the end along dim (differentiable)."""
    return g.sum(dim=dim, keepdim=True) - g.cumsum(dim) + g


@op(dims=("dim",), samples=S.cumulative, names="keep", forward="linear",
    complex_half="cumsum_out_cpu")
def cumsum(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    d = _cum_input(self, dtype)
    dm = one_dim(dim, self.ndim)
    out = np.cumsum(d, axis=dm, dtype=d.dtype) if self.ndim else d.copy()
    return record(out, CumsumBackward0, (self,), (dm if self.ndim else 0,))


# R's `cumsum(x)` (the Math group): R torch's is torch_cumsum(x, dim = 1).
@op(function=False, method=False, r_math=("cumsum",), onnx=False)
def r_cumsum(self: Tensor) -> Tensor:
    return cumsum(self, 0)


@formula
def CumprodBackward0(n, g, x, result, dim):
    if x.ndim == 0:
        return (g,)
    if x.data.all():
        # sum over later positions k >= i of g_k * result_k, divided by x_i
        return (_reverse_cumsum(g * result, dim) / x,)
    # with zeros: each element's derivative by products of the others (no higher order)
    d, gd = np.moveaxis(x.data, dim, -1), np.moveaxis(g.data, dim, -1)
    m = d.shape[-1]
    out = np.zeros_like(d)
    for i in range(m):
        others = d.copy()
        others[..., i] = 1
        out[..., i] = (gd[..., i:] * np.cumprod(others, axis=-1)[..., i:]).sum(axis=-1)
    return (wrap(np.moveaxis(out, -1, dim)),)


@op(dims=("dim",), samples=S.cumulative, names="keep", complex_half="cumprod_out_cpu")
def cumprod(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    d = _cum_input(self, dtype)
    dm = one_dim(dim, self.ndim)
    out = np.cumprod(d, axis=dm, dtype=d.dtype) if self.ndim else d.copy()
    return record(out, CumprodBackward0, (self,), (self, OUTPUT, dm if self.ndim else 0))


@formula
def LogcumsumexpBackward0(n, g, x, result, dim):
    if x.ndim == 0:
        return (g,)
    # d out_k / d x_i = exp(x_i - out_k) for k >= i (an m x m weight per row)
    xm = x.transpose(dim, -1)
    rm = result.transpose(dim, -1)
    gm = g.transpose(dim, -1)
    m = xm.shape[-1]
    tri = wrap(np.triu(np.ones((m, m), dtype=x.data.dtype)))  # [i, k]: k >= i
    w = (xm.unsqueeze(-1) - rm.unsqueeze(-2)).exp() * tri
    return ((w * gm.unsqueeze(-2)).sum(dim=-1).transpose(dim, -1),)


@op(dims=("dim",), samples=S.cumulative_float, names="keep")
def logcumsumexp(self: Tensor, dim: int) -> Tensor:
    d = float_input(self, "logcumsumexp")
    dm = one_dim(dim, self.ndim)
    out = np.logaddexp.accumulate(d, axis=dm) if self.ndim else d.copy()
    return record(np.asarray(out, dtype=d.dtype), LogcumsumexpBackward0, (self,),
                  (self, OUTPUT, dm if self.ndim else 0))


# amax / amin / aminmax ------------------------------------------------------

def _extreme_grad(g: Tensor, x: Tensor, result: Tensor, axes: tuple, keepdim: bool) -> Tensor:
    """Ties share the gradient evenly (PyTorch's amax/amin)."""
    r = _unreduce(result, x.shape, axes, keepdim)
    mask = wrap((x.data == r.data).astype(x.data.dtype))
    return _unreduce(g, x.shape, axes, keepdim) * mask / mask.sum(dim=axes, keepdim=True)


@formula
def AmaxBackward0(n, g, x, result, axes, keepdim):
    return (_extreme_grad(g, x, result, axes, keepdim),)



def _amax(self: Tensor, dim: Any, keepdim: bool, reduce: Callable, name: str) -> np.ndarray:
    axes = _axes(None if isinstance(dim, (list, tuple)) and not dim else dim, self.ndim)
    if self.data.size == 0 and builtins.any(self.shape[a] == 0 for a in axes):
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                           "input.numel() == 0, over a dim of non-zero size.")
    return np.asarray(reduce(self.data, axis=axes, keepdims=keepdim)), axes


@op(dims=("dim",), samples=S.amax, names="reduce")
def amax(self: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    out, axes = _amax(self, dim, keepdim, np.max, "amax")
    return record(out, AmaxBackward0, (self,), (self, OUTPUT, axes, keepdim))


@op(dims=("dim",), samples=S.amax, names="reduce")
def amin(self: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    out, axes = _amax(self, dim, keepdim, np.min, "amin")
    return record(out, AmaxBackward0, (self,), (self, OUTPUT, axes, keepdim),
                  name="AminBackward0")


@multi_formula
def AminmaxBackward0(n, grads, x, mn, mx, axes, keepdim):
    gmin, gmax = grads
    out = None
    for g, r in ((gmin, mn), (gmax, mx)):
        if g is not None:
            part = _extreme_grad(g, x, wrap(r), axes, keepdim)
            out = part if out is None else out + part
    return (out,)



@op(dims=("dim",), samples=S.aminmax, names="reduce")
def aminmax(self: Tensor, dim: Any = None, keepdim: bool = False) -> tuple:
    mn, axes = _amax(self, dim, keepdim and dim is not None, np.min, "aminmax")
    mx, _ = _amax(self, dim, keepdim and dim is not None, np.max, "aminmax")
    return record_many([mn, mx], AminmaxBackward0, (self,),
                       (self, mn, mx, axes, keepdim and dim is not None))


@op(dims=("dim",), samples=S.count_nonzero, differentiable=False, names="reduce")
def count_nonzero(self: Tensor, dim: Any = None) -> Tensor:
    axes = _axes(dim, self.ndim)
    return wrap(np.asarray(np.count_nonzero(self.data, axis=axes), dtype=np.int64))


def _cumulative_inplace(self: Tensor, dim: Any, dtype: Any, name: str,
                        accumulate: Callable) -> tuple:
    """cumsum_/cumprod_: accumulate along dim in place; (the input's old value
    when a gradient will need it, the 0-based dim)."""
    dm = one_dim(dim, self.ndim)
    check_inplace(self)
    if dtype is not None and as_dtype(dtype).np != self.data.dtype:
        raise RuntimeError(f"{name}: dtype must be the tensor's own ({self.dtype.r_name}) "
                           "for an in-place op")
    old = self.clone() if needs_grad(self) else None
    if self.ndim:
        accumulate(self.data, axis=dm, out=self.data)
    bump_version(self)
    return old, dm if self.ndim else 0


@op(dims=("dim",), function=False)
def cumsum_(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    _, dm = _cumulative_inplace(self, dim, dtype, "cumsum_", np.cumsum)
    return record_inplace(self, CumsumBackward0, (self,), (dm,))


@op(dims=("dim",), function=False)
def cumprod_(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    old, dm = _cumulative_inplace(self, dim, dtype, "cumprod_", np.cumprod)
    return record_inplace(self, CumprodBackward0, (self,), (old, OUTPUT, dm))


# --------------------------------------------------------------------------
# trapz: the trapezoid rule along a dim, composed of ops as libtorch does it
# (its last node: the product with dx, or the division by 2 with `x`)


@op(dims=("dim",), method=False, samples=S.trapz)
def trapz(y: Tensor, dx: float = 1, x: Tensor | None = None, dim: int = -1) -> Tensor:
    """The integral of y along `dim`: sample points `dx` apart, or at `x` (a
    vector of one point per sample, or broadcast against y)."""
    dim = wrap_dim(dim, y.ndim)
    n = y.shape[dim]
    if n == 0:  # no samples: nothing to integrate
        shape = y.shape[:dim] + y.shape[dim + 1:]
        return wrap(np.zeros(shape, dtype=float_input(y, "trapz").dtype))
    if x is None:
        return (sum(y, dim) - (select(y, dim, 0) + select(y, dim, -1)) * 0.5) * dx
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        x = x.reshape((1,) * dim + (n,) + (1,) * (y.ndim - dim - 1))
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    spacing = narrow(x, dim, 1, n - 1) - narrow(x, dim, 0, n - 1)
    return sum(spacing * (narrow(y, dim, 1, n - 1) + narrow(y, dim, 0, n - 1)), dim) / 2.0
