"""Sorting and order statistics: sort/argsort/msort, topk, kthvalue,
median/nanmedian, mode, quantile/nanquantile, cummax/cummin, unique and
bincount.

Positions returned to R: R torch adds 1 in its own wrappers for sort,
argsort and topk (as for max/min/argmax/argmin), so these declare
`returns_indices`; kthvalue, median, nanmedian, mode, cummax and cummin come
straight from libtorch in R torch, 0-based, and so they do here. bincount
takes 1-based values from R (R torch's `to_index_tensor`). The values'
gradient goes back to the positions they came from (a scatter-add; its own
derivative is a gather).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..formals import r_formals
from ..tensor import Tensor, wrap
from .operands import whole
from .recording import OUTPUT, formula, record
from .reduction import ScatterAlongBackward, one_dim
from .dispatch import op
from .samples import sorting as S


# ==========================================================================
# The gradient of values picked out by positions

def scatter_add_along(g: Tensor, idx: np.ndarray, dim: int, shape: tuple) -> Tensor:
    """Zeros of `shape` plus g added at positions idx along dim (repeats add up)."""
    z = np.zeros(shape, dtype=g.data.dtype)
    if z.ndim == 0:
        z[()] = g.data.sum()
    else:
        where = list(np.indices(idx.shape, sparse=True))
        where[dim] = idx
        np.add.at(z, tuple(where), g.data)
    return record(z, ScatterAlongBackward, (g,), (idx, dim), name="ScatterAddBackward0")


@formula
def SortBackward0(n, g, idx, dim, shape, keepdim):
    """For values taken at idx along dim (idx kept with the dim, size 1 when reduced)."""
    if not keepdim and len(shape):
        g = g.unsqueeze(dim)
    return (scatter_add_along(g, idx, dim, shape),)


# (the node of every op below that picks values along a dim, each under its own
# name: SortBackward1, TopkBackward0, KthvalueBackward0, MedianBackward1, ...)


@formula
def MedianBackward0(n, g, x, result):
    """A whole-tensor median spreads the gradient evenly over the elements equal
    to it (over the NaNs when it is NaN), as PyTorch does."""
    d = x.data
    mask = np.isnan(d) if np.isnan(result.data) else d == result.data
    mask = mask.astype(d.dtype)
    return (g * wrap(mask / mask.sum()),)



def _with_indices(x: Tensor, vals: np.ndarray, idx: np.ndarray, dim: int, keepdim: bool,
                  node: str) -> tuple:
    """(values, int64 positions) of an op that picks elements along dim; idx
    keeps the dim (size 1 for a reduction) and is squeezed unless keepdim."""
    values = record(vals if keepdim else np.squeeze(vals, dim) if x.ndim else vals,
                    SortBackward0, (x,), (idx, dim, x.shape, keepdim), name=node)
    out_idx = idx if keepdim or not x.ndim else np.squeeze(idx, dim)
    return values, wrap(np.array(out_idx, dtype=np.int64))


def _order(d: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Stable sort order along dim; NaN sorts as the largest value (PyTorch)."""
    if not descending:
        return np.argsort(d, axis=dim, kind="stable")
    # descending and stable: sort the reversed array, then reverse back
    n = d.shape[dim]
    rev = np.argsort(np.flip(d, dim), axis=dim, kind="stable")
    return np.flip(n - 1 - rev, dim)


def _as_1d(x: Tensor) -> np.ndarray:
    return x.data.reshape(1) if x.ndim == 0 else x.data


# ==========================================================================
# sort, argsort, msort, topk, kthvalue

@op(dims=("dim",), returns_indices=1, samples=S.sort, names="keep")
def sort(self: Tensor, dim: int = -1, descending: bool = False, stable: Any = None) -> tuple:
    """(values, indices), ascending unless `descending`. The sort is always
    stable; giving `stable` selects PyTorch's other overload (SortBackward1)."""
    dm = one_dim(dim, self.ndim)
    idx = _order(_as_1d(self), dm, bool(descending)).reshape(self.shape)
    vals = np.take_along_axis(_as_1d(self), idx.reshape(_as_1d(self).shape), axis=dm)
    return _with_indices(self, vals.reshape(self.shape), idx, dm, True,
                         "SortBackward0" if stable is None else "SortBackward1")


@op(dims=("dim",), returns_indices=True, samples=S.sort, differentiable=False, names="keep")
@r_formals("self, dim = -1, descending = FALSE")
def argsort(self: Tensor, dim: int = -1, descending: bool = False,
            stable: bool = False) -> Tensor:
    dm = one_dim(dim, self.ndim)
    idx = _order(_as_1d(self), dm, bool(descending)).reshape(self.shape)
    return wrap(idx.astype(np.int64))


@op(samples=S.msort)
def msort(self: Tensor) -> Tensor:
    return sort(self, 0)[0]


@op(dims=("dim",), returns_indices=1, samples=S.topk, names="keep")
def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> tuple:
    k = whole(k, "topk: k")
    dm = one_dim(dim, self.ndim)
    d = _as_1d(self)
    if not 0 <= k <= d.shape[dm]:
        raise RuntimeError(f"topk: k ({k}) must be between 0 and the size of the dim "
                           f"({d.shape[dm]})")
    idx = np.take(_order(d, dm, bool(largest)), np.arange(k), axis=dm)
    vals = np.take_along_axis(d, idx, axis=dm)
    if self.ndim == 0:
        vals, idx = vals.reshape(()), idx.reshape(())
    return _with_indices(self, vals, idx, dm, True, "TopkBackward0")


def _pick(x: Tensor, dim: int, position: Callable, keepdim: bool, node: str,
          nan_last: bool = False) -> tuple:
    """(values, indices) of the element at sorted position `position(n_valid)`
    of each line along dim (median, kthvalue)."""
    d = _as_1d(x)
    order = _order(d, dim, False)
    valid = (~np.isnan(d)).sum(axis=dim, keepdims=True) if nan_last and d.dtype.kind == "f" \
        else np.full([1 if i == dim else s for i, s in enumerate(d.shape)], d.shape[dim])
    pos = position(valid)
    if not nan_last and d.dtype.kind == "f":
        # a line with NaN gives NaN (its first NaN), as PyTorch's median does
        has_nan = np.isnan(d).any(axis=dim, keepdims=True)
        pos = np.where(has_nan, (~np.isnan(d)).sum(axis=dim, keepdims=True), pos)
    pos = np.clip(pos, 0, d.shape[dim] - 1)
    idx = np.take_along_axis(order, pos, axis=dim)
    vals = np.take_along_axis(d, idx, axis=dim)
    if x.ndim == 0:
        vals, idx = vals.reshape(()), idx.reshape(())
    return _with_indices(x, vals, idx, dim, keepdim, node)


@op(dims=("dim",), samples=S.kthvalue, names="reduce")
def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple:
    k = whole(k, "kthvalue: k")
    dm = one_dim(dim, self.ndim)
    n = _as_1d(self).shape[dm]
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dm}: "
                           f"k = {k}, but the dim has {n} elements")
    return _pick(self, dm, lambda valid: np.full_like(valid, k - 1), keepdim,
                 "KthvalueBackward0")


def _median(self: Tensor, dim: Any, keepdim: bool, nan: bool) -> Any:
    name = "nanmedian" if nan else "median"
    if dim is None:
        if self.data.size == 0:
            return record(np.asarray(np.nan, dtype=self.data.dtype), MedianBackward0, ())
        flat = self.data.reshape(-1)
        if nan:
            ok = flat[~np.isnan(flat)] if flat.dtype.kind == "f" else flat
            v = np.sort(ok)[(ok.size - 1) // 2] if ok.size else np.asarray(np.nan, flat.dtype)
        elif flat.dtype.kind == "f" and np.isnan(flat).any():
            v = np.asarray(np.nan, flat.dtype)
        else:
            v = np.sort(flat)[(flat.size - 1) // 2]
        return record(np.asarray(v, dtype=self.data.dtype),
                      MedianBackward0, (self,), (self, OUTPUT),
                      name="NanmedianBackward0" if nan else None)
    dm = one_dim(dim, self.ndim)
    if _as_1d(self).shape[dm] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dm} to have non-zero size.")
    return _pick(self, dm, lambda valid: np.maximum(valid - 1, 0) // 2, keepdim,
                 "NanmedianBackward1" if nan else "MedianBackward1", nan_last=nan)


@op(dims=("dim",), samples=S.median, names="reduce")
def median(self: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """The lower of the two middle values; with dim, (values, indices)."""
    return _median(self, dim, keepdim, False)


@op(dims=("dim",), samples=S.median, names="reduce")
def nanmedian(self: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """median() ignoring NaN values."""
    return _median(self, dim, keepdim, True)


@op(dims=("dim",), samples=S.mode, names="reduce")
def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> tuple:
    """The most frequent value along dim (the smallest among equally frequent
    ones) and the position of its last occurrence, as PyTorch gives them."""
    dm = one_dim(dim, self.ndim)
    d = np.moveaxis(_as_1d(self), dm, -1)
    lines = d.reshape(-1, d.shape[-1])
    vals = np.empty(lines.shape[0], d.dtype)
    idx = np.empty(lines.shape[0], np.int64)
    for i, line in enumerate(lines):
        u, counts = np.unique(line, return_counts=True)
        vals[i] = u[np.argmax(counts)]  # (np.unique sorts: the first max is the smallest)
        idx[i] = np.flatnonzero(line == vals[i])[-1]
    shape = d.shape[:-1] + (1,)
    vals = np.moveaxis(vals.reshape(shape), -1, dm)
    idx = np.moveaxis(idx.reshape(shape), -1, dm)
    if self.ndim == 0:
        vals, idx = vals.reshape(()), idx.reshape(())
    return _with_indices(self, vals, idx, dm, keepdim, "ModeBackward0")


# ==========================================================================
# cummax, cummin

def _cumulative_extreme(x: Tensor, dim: int, accumulate: Any,
                        node: str) -> tuple:
    dm = one_dim(dim, x.ndim)
    d = _as_1d(x)
    vals = accumulate.accumulate(d, axis=dm)
    # the position of the latest element equal to the running extreme (NaN sticks)
    hit = d == vals
    if d.dtype.kind == "f":
        hit |= np.isnan(d)
    pos = np.arange(d.shape[dm]).reshape([-1 if i == dm else 1 for i in range(d.ndim)])
    idx = np.maximum.accumulate(np.where(hit, pos, 0), axis=dm)
    if x.ndim == 0:
        vals, idx = vals.reshape(()), idx.reshape(())
    return _with_indices(x, vals, idx, dm, True, node)


@op(dims=("dim",), samples=S.cumulative, names="keep")
def cummax(self: Tensor, dim: int) -> tuple:
    return _cumulative_extreme(self, dim, np.maximum, "CummaxBackward0")


@op(dims=("dim",), samples=S.cumulative, names="keep")
def cummin(self: Tensor, dim: int) -> tuple:
    return _cumulative_extreme(self, dim, np.minimum, "CumminBackward0")


# ==========================================================================
# quantile, nanquantile

@formula
def SqueezeBackward4(n, g, nq, lo, hi, frac, perm, work_shape, x_shape):
    """quantile's gradient: each result is (1 - frac) lo + frac hi of two sorted
    elements, so it goes back to their positions. PyTorch builds quantile from
    sort, lerp and squeeze: its outermost node gives the name.

    The work layout has the reduced dim last; q's results sit side by side there."""
    others = work_shape[:-1]
    g = g.reshape((nq,) + others).permute(*range(1, len(others) + 1), 0)
    gw = (scatter_add_along(g * wrap(1 - frac), lo, len(others), work_shape) +
          scatter_add_along(g * wrap(frac), hi, len(others), work_shape))
    if perm is None:
        return (gw.reshape(x_shape),)
    return (gw.permute(*np.argsort(perm).tolist()),)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(self: Tensor, q: Any, dim: Any, keepdim: bool, interpolation: str,
              nan: bool, name: str) -> Tensor:
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{name}(): interpolation must be one of "
                         f"{', '.join(_INTERPOLATIONS)}, got {interpolation!r}")
    d = self.data
    if d.dtype.kind != "f":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype, "
                           f"got {self.dtype.r_name}")
    qs = np.asarray(q.data if isinstance(q, Tensor) else q, dtype=d.dtype)
    if qs.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    if ((qs < 0) | (qs > 1)).any():
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if d.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    # the work layout: the reduced dim last (every element, flattened, for dim = None)
    if dim is None:
        perm, work = None, d.reshape(-1)
        res_shape = (1,) * self.ndim if keepdim else ()
    else:
        dm = one_dim(dim, self.ndim)
        perm = [i for i in range(self.ndim) if i != dm] + [dm] if self.ndim else None
        work = np.transpose(d, perm) if perm else d.reshape(1)
        res_shape = tuple(1 if i == dm else s for i, s in enumerate(self.shape)) if keepdim \
            else tuple(s for i, s in enumerate(self.shape) if i != dm)
    order = np.argsort(work, axis=-1, kind="stable")   # NaN last
    srt = np.take_along_axis(work, order, axis=-1)
    n = srt.shape[-1]
    n_valid = (~np.isnan(srt)).sum(axis=-1, keepdims=True)
    # ranks (..., nq): one slot per q along the last axis. A line that gives NaN
    # (any NaN for quantile, only NaN for nanquantile) takes its last sorted
    # element, a NaN, as PyTorch does (the gradient goes there too).
    gives_nan = (n_valid == 0) if nan else (n_valid < n)
    rank = np.where(gives_nan, n - 1, qs.reshape(-1) * np.maximum(n_valid - 1, 0))
    if interpolation == "lower":
        rank = np.floor(rank)
    elif interpolation == "higher":
        rank = np.ceil(rank)
    elif interpolation == "nearest":
        rank = np.round(rank)  # (halves to even, as PyTorch)
    lo = np.floor(rank).astype(np.int64)
    hi = np.minimum(np.ceil(rank).astype(np.int64), n - 1)
    frac = rank - lo if interpolation == "linear" else \
        np.where(hi > lo, 0.5, 0.0) if interpolation == "midpoint" else np.zeros_like(rank)
    frac = frac.astype(d.dtype)
    lo_v, hi_v = np.take_along_axis(srt, lo, axis=-1), np.take_along_axis(srt, hi, axis=-1)
    out = (lo_v + frac * (hi_v - lo_v)).astype(d.dtype)
    # the result: q's dim first, then the input's dims with dim reduced
    out = np.moveaxis(out, -1, 0).reshape(qs.shape + res_shape)
    saved = (int(qs.size), np.take_along_axis(order, lo, axis=-1),
             np.take_along_axis(order, hi, axis=-1), frac, perm, work.shape, self.shape)
    return record(np.array(out), SqueezeBackward4, (self,), saved)


@op(dims=("dim",), samples=S.quantile, autocast="fp32")
def quantile(self: Tensor, q: Any, dim: Any = None, keepdim: bool = False,
             interpolation: str = "linear") -> Tensor:
    return _quantile(self, q, dim, keepdim, interpolation, False, "quantile")


@op(dims=("dim",), samples=S.quantile, autocast="fp32")
def nanquantile(self: Tensor, q: Any, dim: Any = None, keepdim: bool = False,
                interpolation: str = "linear") -> Tensor:
    return _quantile(self, q, dim, keepdim, interpolation, True, "nanquantile")


# ==========================================================================
# unique, unique_consecutive, bincount

def _unique_out(vals: np.ndarray, inverse: np.ndarray, counts: np.ndarray,
                return_inverse: bool, return_counts: bool) -> Any:
    out = [wrap(vals)]
    if return_inverse:
        out.append(wrap(inverse.astype(np.int64)))
    if return_counts:
        out.append(wrap(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


@op(dims=("dim",), samples=S.unique, differentiable=False, torchscript=False)
def unique(self: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: Any = None) -> Any:
    """The distinct values (sorted), or distinct slices along dim."""
    d = self.data
    if dim is None:
        vals, inv, counts = np.unique(d, return_inverse=True, return_counts=True)
        inv = inv.reshape(d.shape)
    else:
        dm = one_dim(dim, self.ndim)
        vals, inv, counts = np.unique(d, axis=dm, return_inverse=True, return_counts=True)
        inv = inv.reshape(-1)
    return _unique_out(vals, inv, counts, return_inverse, return_counts)


@op(dims=("dim",), samples=S.unique, differentiable=False, r_conventions=("every_output",),
    torchscript=False)
def unique_consecutive(self: Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim: Any = None) -> Any:
    """Collapse runs of equal values (or equal slices along dim)."""
    d = self.data
    if dim is None:
        flat = d.reshape(-1)
        change = np.concatenate(([True], flat[1:] != flat[:-1])) if flat.size else \
            np.zeros(0, bool)
        vals = flat[change]
        inv = (np.cumsum(change) - 1).reshape(d.shape)
    else:
        dm = one_dim(dim, self.ndim)
        lines = np.moveaxis(d, dm, 0).reshape(d.shape[dm], -1)
        change = np.concatenate(([True], (lines[1:] != lines[:-1]).any(axis=1))) \
            if lines.shape[0] else np.zeros(0, bool)
        vals = np.compress(change, d, axis=dm)
        inv = np.cumsum(change) - 1
    starts = np.flatnonzero(change)
    counts = np.diff(np.append(starts, change.size))
    return _unique_out(vals, inv, counts, return_inverse, return_counts)


@op(indices=("self",), samples=S.bincount, differentiable=False)
def bincount(self: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How many times each value 0, 1, ... occurs (1, 2, ... in R, as R torch)."""
    d = self.data
    if d.ndim != 1 or d.dtype.kind not in "iu":
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if d.size and d.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    minlength = whole(minlength, "bincount: minlength")
    if weights is None:
        return wrap(np.bincount(d, minlength=minlength).astype(np.int64))
    w = weights.data if isinstance(weights, Tensor) else np.asarray(weights)
    out = np.bincount(d, weights=w, minlength=minlength)
    return wrap(out.astype(w.dtype if w.dtype.kind == "f" else np.float64))


# ==========================================================================
# histc, bucketize, searchsorted (insertion points stay 0-based in R, as R torch)

@op(samples=S.histc, differentiable=False)
def histc(self: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """Counts in `bins` equal bins over [min, max] (the data's range when both are 0)."""
    d = self.data
    if d.dtype.kind != "f":
        raise RuntimeError(f"histc: expected a floating point tensor, got {self.dtype.r_name}")
    bins = whole(bins, "histc: bins")
    if bins <= 0:
        raise RuntimeError("histc: bins must be > 0")
    lo, hi = float(min), float(max)
    if lo == hi and d.size:
        lo, hi = float(d.min()), float(d.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("histc: max must be larger than min")
    inside = d[(d >= lo) & (d <= hi)]
    # the bin of x is floor((x - min) * bins / (max - min)); x == max goes in the last one
    which = np.minimum(((inside - lo) * bins / (hi - lo)).astype(np.int64), bins - 1)
    return wrap(np.bincount(which, minlength=bins).astype(d.dtype))


def _linspace_as_libtorch(start: float, end: float, steps: int, dtype: Any) -> np.ndarray:
    """linspace computed in `dtype` as libtorch's kernel does (from both ends, the first
    half forward and the second backward): the same edges, to the last bit."""
    lo, hi = np.asarray(start, dtype), np.asarray(end, dtype)
    step = (hi - lo) / dtype.type(steps - 1)
    i = np.arange(steps)
    forward = lo + step * i.astype(dtype)
    backward = hi - step * (steps - 1 - i).astype(dtype)
    return np.where(i < steps // 2, forward, backward).astype(dtype)


@op(function=False, samples=S.histogram, differentiable=False)
def histogram(self: Tensor, bins: Any = 100, range: Any = None, weight: Tensor | None = None,
              density: bool = False) -> tuple:
    """(hist, bin_edges) of all of self's values: `bins` equal bins over `range` (the
    data's range by default; one of width 1 around a single value), or the bin edges
    given as a tensor. Each bin holds [left, right), the last also its right edge; the
    values outside are left out. Weighted by `weight`; `density` divides by the total
    and the bins' widths."""
    d = self.data.reshape(-1)
    if d.dtype.kind != "f":
        raise RuntimeError(f"histogram: expected a floating point tensor, got "
                           f"{self.dtype.r_name}")
    if isinstance(bins, Tensor):
        edges = bins.data.astype(d.dtype)
        if edges.ndim != 1 or edges.size < 1:
            raise RuntimeError("histogram: bins must be a 1-d tensor of bin edges or a count")
    else:
        count = whole(bins, "histogram: bins")
        if count <= 0:
            raise RuntimeError("histogram: bins must be > 0")
        lo, hi = (float(v) for v in range) if range is not None else \
            (float(d.min()), float(d.max())) if d.size else (0.0, 0.0)
        if not lo <= hi:
            raise RuntimeError(f"histogram: the range's min ({lo}) must not exceed its max ({hi})")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = _linspace_as_libtorch(lo, hi, count + 1, d.dtype)
    inside = (d >= edges[0]) & (d <= edges[-1])
    which = np.minimum(np.searchsorted(edges, d[inside], side="right") - 1, edges.size - 2)
    w = None if weight is None else np.asarray(weight.data, d.dtype).reshape(-1)[inside]
    hist = np.bincount(which, weights=w, minlength=edges.size - 1).astype(d.dtype)
    if density:
        hist = (hist / (hist.sum() * np.diff(edges))).astype(d.dtype)
    return wrap(hist), wrap(edges)


def _search(seq: np.ndarray, values: np.ndarray, right: bool, out_int32: bool) -> np.ndarray:
    side = "right" if right else "left"
    if seq.ndim <= 1:
        out = np.searchsorted(seq, values, side=side)
    else:
        if seq.shape[:-1] != values.shape[:-1]:
            raise RuntimeError("searchsorted: boundaries and input must have the same leading "
                               f"dims, got {list(seq.shape)} and {list(values.shape)}")
        s2, v2 = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
        out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(s2, v2)])
        out = out.reshape(values.shape)
    return np.asarray(out, dtype=np.int32 if out_int32 else np.int64)


def _values(x: Any) -> np.ndarray:
    return x.data if isinstance(x, Tensor) else np.asarray(x)


@op(samples=S.bucketize, differentiable=False)
def bucketize(self: Tensor | float, boundaries: Tensor, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The bucket of each value among the sorted 1-d `boundaries`."""
    b = _values(boundaries)
    if b.ndim != 1:
        raise RuntimeError(f"bucketize: boundaries must be 1-d, got {b.ndim} dims")
    return wrap(_search(b, _values(self), bool(right), bool(out_int32)))


@op(samples=S.searchsorted, method=False, differentiable=False)
def searchsorted(sorted_sequence: Tensor, self: Tensor | float, out_int32: bool = False,
                 right: bool = False, side: str | None = None,
                 sorter: Tensor | None = None) -> Tensor:
    """Where each value would be inserted in the (last dim of the) sorted sequence."""
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise RuntimeError("searchsorted: right = TRUE contradicts side = 'left'")
        right = side == "right"
    seq = _values(sorted_sequence)
    if sorter is not None:
        seq = np.take_along_axis(seq, _values(sorter).astype(np.int64), axis=-1)
    return wrap(_search(seq, _values(self), bool(right), bool(out_int32)))
