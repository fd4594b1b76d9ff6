"""Reductions (sum, mean, prod, max/min and their arg forms) and the
normalisations along a dim (softmax, log_softmax)."""
from __future__ import annotations

import builtins
from typing import Any, Callable

import numpy as np

from ..tensor import Tensor, _dim, as_dtype, wrap
from .samples import reduction as S
from .conversion import CloneBackward0
from .indexing import gather
from .pointwise import maximum, minimum
from .recording import OUTPUT, _state, expand_to, formula, record
from .registry import op


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
    return (expand_to(g, shape),)


@formula
def SumBackward1(n, g, shape, dims, keepdim):
    return (_unreduce(g, shape, dims, keepdim),)


@op(dims=("dim",), r_summary=("sum",), samples=S.reduction)
def sum(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    d = self.data
    if d.dtype.kind in "biu":
        d = d.astype(np.int64)
    if dtype is not None:
        d = d.astype(as_dtype(dtype).np)
    if dim is None:
        return record(d.sum(), SumBackward0, (self,), (self.shape,))
    dims = _dims(dim, self.ndim)
    out = np.asarray(d.sum(axis=dims, keepdims=keepdim))
    return record(out, SumBackward1, (self,), (self.shape, dims, keepdim))


@formula(arrays=True)
def MeanBackward0(n, g, shape, count):
    return (expand_to(g, shape) / count,)


@formula
def MeanBackward1(n, g, shape, dims, keepdim, count):
    return (_unreduce(g, shape, dims, keepdim) / count,)


@op(dims=("dim",), samples=S.reduction)
def mean(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    d = self.data
    if dtype is not None:
        d = d.astype(as_dtype(dtype).np)
    if d.dtype.kind != "f":
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {self.dtype.r_name}")
    if dim is None:
        return record(d.mean(dtype=d.dtype), MeanBackward0, (self,),
                      (self.shape, builtins.max(d.size, 1)))
    dims = _dims(dim, self.ndim)
    count = int(np.prod([self.shape[i] for i in dims])) if self.ndim else 1
    out = np.asarray(d.mean(axis=dims, keepdims=keepdim, dtype=d.dtype))
    return record(out, MeanBackward1, (self,), (self.shape, dims, keepdim, count))


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


@op(r_summary=("prod",), samples=S.unary)
def prod(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    if dim is not None:
        raise NotImplementedError("prod(dim =) is not supported by the engine yet; use prod()")
    if dtype is not None:
        self = self.to(dtype=dtype)
    return record(wrap(np.asarray(self.data.prod())), ProdBackward0, (self,), (self, OUTPUT))


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
    d = _dim(int(dim), x.ndim)
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


@op(dims=("dim",), returns_indices=1, r_summary=("max",), samples=S.extreme)
def max(self: Tensor, dim: Any = None, keepdim: bool = False, other: Any = None) -> Any:
    """Whole-tensor max, or (values, indices) along `dim`; with a tensor `other`
    (or a tensor in place of `dim`), the elementwise maximum."""
    if isinstance(dim, Tensor) and other is None:
        dim, other = None, dim
    if other is not None:
        if dim is not None:
            raise ValueError("max: give either `dim` or `other`, not both")
        return maximum(self, other)
    return _reduce_extreme(self, dim, keepdim, np.argmax, "max", "MaxBackward1")


@op(dims=("dim",), returns_indices=1, r_summary=("min",), samples=S.extreme)
def min(self: Tensor, dim: Any = None, keepdim: bool = False, other: Any = None) -> Any:
    if isinstance(dim, Tensor) and other is None:
        dim, other = None, dim
    if other is not None:
        if dim is not None:
            raise ValueError("min: give either `dim` or `other`, not both")
        return minimum(self, other)
    return _reduce_extreme(self, dim, keepdim, np.argmin, "min", "MinBackward1")


@op(dims=("dim",), returns_indices=True, samples=S.arg_reduction, differentiable=False)
def argmax(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if dim is None:
        return wrap(np.asarray(np.argmax(self.data), dtype=np.int64))
    d = _dim(dim, self.ndim)
    out = np.argmax(self.data, axis=d)
    return wrap((np.expand_dims(out, d) if keepdim else out).astype(np.int64))


@op(dims=("dim",), returns_indices=True, samples=S.arg_reduction, differentiable=False)
def argmin(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if dim is None:
        return wrap(np.asarray(np.argmin(self.data), dtype=np.int64))
    d = _dim(dim, self.ndim)
    out = np.argmin(self.data, axis=d)
    return wrap((np.expand_dims(out, d) if keepdim else out).astype(np.int64))


@formula
def ScatterAlongBackward(n, g, idx, dim):
    return (wrap(np.take_along_axis(g.data, idx, axis=dim)) if not _state.grad
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


@op(dims=("dim",), samples=S.dim_op)
def softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    d = _dim(dim, self.ndim)
    a = self.data if dtype is None else self.data.astype(as_dtype(dtype).np)
    if a.dtype.kind != "f":
        raise RuntimeError(f"softmax: expected a floating point tensor, got {self.dtype}")
    e = np.exp(a - a.max(axis=d, keepdims=True))
    e /= e.sum(axis=d, keepdims=True)
    return record(e, SoftmaxBackward0, (self,), (OUTPUT, d))


@formula
def LogSoftmaxBackward0(n, g, result, dim):
    return (g - result.exp() * g.sum(dim=dim, keepdim=True),)


@op(dims=("dim",), samples=S.dim_op)
def log_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    d = _dim(dim, self.ndim)
    a = self.data if dtype is None else self.data.astype(as_dtype(dtype).np)
    if a.dtype.kind != "f":
        raise RuntimeError(f"log_softmax: expected a floating point tensor, got {self.dtype}")
    s = a - a.max(axis=d, keepdims=True)
    s = s - np.log(np.exp(s).sum(axis=d, keepdims=True))
    return record(s, LogSoftmaxBackward0, (self,), (OUTPUT, d))




def _logical_reduction(reduce: Callable, name: str) -> Callable:
    def reduction(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        if dim is None:
            return wrap(np.asarray(reduce(self.data)))
        return wrap(np.asarray(reduce(self.data, axis=_dim(int(dim), self.ndim),
                                      keepdims=keepdim)))
    reduction.__name__ = reduction.__qualname__ = name
    return op(dims=("dim",), r_summary=(name,), samples=S.logical_reduction,
              differentiable=False)(reduction)


any = _logical_reduction(np.any, "any")
all = _logical_reduction(np.all, "all")
