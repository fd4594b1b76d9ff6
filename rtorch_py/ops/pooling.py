"""Pooling ops beyond max/avg pooling's own (nn_primitives.py): avg_pool1d as
libtorch composes it, max_unpool (max pooling's positions filled back), and
fractional max pooling (windows placed by random samples).

Unpooling scatters into the output's planes and pooling gathers out of the
input's, each the other's derivative (nn_primitives' pool_gather and
pool_scatter), so every order of derivative works.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor, wrap
from .dispatch import op
from .nn_primitives import global_index, int_tuple, avg_pool_conv, pool_gather, pool_scatter
from .recording import formula, record
from .samples import pooling as S
from .shape import squeeze, unsqueeze


@op(method=False, samples=S.avg_pool1d)
def avg_pool1d(self: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """Average pooling over the last dim, as libtorch does it: 2-d pooling of a
    height-1 input, squeezed back."""
    if self.ndim not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(self.shape)}")
    k = int_tuple(kernel_size, 1)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else int_tuple(stride, 1)
    p = int_tuple(padding, 1)
    if p[0] * 2 > k[0]:
        raise RuntimeError("pad should be at most half of effective kernel size, but got "
                           f"pad={p[0]}, kernel_size={k[0]} and dilation=1")
    x = unsqueeze(self, -2)
    batched = x.ndim == 4
    x = x if batched else unsqueeze(x, 0)
    out = avg_pool_conv(x, (1,) + k, (1,) + s, (0,) + p, bool(ceil_mode),
                        bool(count_include_pad), None)
    return squeeze(out if batched else squeeze(out, 0), -2)


# --------------------------------------------------------------------------
# The derivatives: a scatter into planes and a gather out of them, on the
# (n, c, ...) planes whether or not the input had a batch dim. `idx` holds the
# positions with the batch dim.


@formula
def ScatterPlanesBackward(n, g, idx, shape):
    """The gradient of a gather out of the input's planes (pooling)."""
    batched = shape if len(shape) == idx.ndim else (1,) + shape
    return (pool_scatter(g.reshape(idx.shape), idx, batched, False).reshape(shape),)


@formula
def GatherPlanesBackward(n, g, idx, shape):
    """The gradient of a scatter into the output's planes (unpooling)."""
    nd = idx.ndim - 2
    planes = g.reshape(idx.shape[:2] + tuple(g.shape[g.ndim - nd:]))
    return (pool_gather(planes, idx, False).reshape(shape),)


# --------------------------------------------------------------------------
# max_unpool: each input value put at its position (max pooling's indices,
# counted within each output plane); the rest zeros


def _unpool(x: Tensor, indices: Tensor, size: tuple, name: str) -> Tensor:
    nd = len(size)
    if indices.data.dtype != np.int64:
        raise RuntimeError(f"{name}(): elements in indices should be type int64 but got: "
                           f"{indices.dtype.r_name}")
    if tuple(x.shape) != tuple(indices.shape):
        raise RuntimeError(f"{name}(): Expected shape of indices to be same as that of the "
                           f"input tensor ({list(x.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    if x.ndim not in (nd + 1, nd + 2) or 0 in x.shape[-nd:]:
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor with non-zero "
                           f"spatial sizes, but got {list(x.shape)}")
    batched = x.ndim == nd + 2
    xb = x.data if batched else x.data[None]
    idx = indices.data if batched else indices.data[None]
    plane = int(np.prod(size))
    bad = idx[(idx < 0) | (idx >= plane)]
    if bad.size:
        raise RuntimeError(f"Found an invalid max index: {int(bad.reshape(-1)[0])} (output "
                           f"volumes are of size {'x'.join(map(str, size))})")
    shape = xb.shape[:2] + size
    out = np.zeros(shape, dtype=xb.dtype)
    out.reshape(-1)[global_index(idx, shape).reshape(-1)] = xb.reshape(-1)
    return record(out if batched else out[0], GatherPlanesBackward, (x,), (idx, x.shape),
                  name=name)


def _output_size(output_size: Any, nd: int, name: str) -> tuple:
    size = int_tuple(output_size, nd)
    if len(size) != nd:
        raise RuntimeError(f"{name}(): There should be exactly {nd} elements but got "
                           f"{len(size)}")
    return size


@op(method=False, samples=S.max_unpool2d, indices=("indices",), torch_name="_C._nn.max_unpool2d")
def max_unpool2d(self: Tensor, indices: Tensor, output_size: Any) -> Tensor:
    size = _output_size(output_size, 2, "max_unpooling2d_forward_out")
    return _unpool(self, indices, size, "MaxUnpool2DBackward0")


@op(method=False, samples=S.max_unpool3d, indices=("indices",), torch_name="_C._nn.max_unpool3d")
def max_unpool3d(self: Tensor, indices: Tensor, output_size: Any, stride: Any,
                 padding: Any) -> Tensor:
    size = _output_size(output_size, 3, "max_unpooling3d_forward_out")
    for v, what in ((stride, "stride"), (padding, "padding")):
        if len(int_tuple(v, 3)) != 3:
            raise RuntimeError(f"max_unpooling3d_forward_out(): There should be exactly three "
                               f"elements (depth, height, width) in {what}")
    return _unpool(self, indices, size, "MaxUnpool3DBackward0")


# --------------------------------------------------------------------------
# Fractional max pooling: along each spatial dim the windows start at
# positions a random sample in [0, 1) spreads out (one sample per plane and
# dim, libtorch's sequence), and the maximum of each window is taken


def _starts(sample: np.ndarray, size: int, out: int, pool: int) -> np.ndarray:
    """Each plane's window starts along one dim (samples: one per plane), in the
    samples' dtype as libtorch computes them."""
    starts = np.full(sample.shape + (out,), size - pool, dtype=np.int64)
    if out > 1:
        dt = sample.dtype.type
        alpha = dt(size - pool) / dt(out - 1)
        i = np.arange(out - 1, dtype=sample.dtype)
        first = (sample[..., None] * alpha).astype(np.int64)
        starts[..., :-1] = ((i + sample[..., None]) * alpha).astype(np.int64) - first
    return starts


def _fractional(x: Tensor, kernel_size: Any, output_size: Any, samples: Tensor,
                nd: int) -> tuple:
    name = f"fractional_max_pool{nd}d"
    pool, size = int_tuple(kernel_size, nd), int_tuple(output_size, nd)
    if len(pool) != nd or len(size) != nd:
        raise RuntimeError(f"{name}(): kernel_size and output_size must each be one int or "
                           f"{nd} ints")
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(x.shape)}")
    batched = x.ndim == nd + 2
    xb = x.data if batched else x.data[None]
    n, c, spatial = xb.shape[0], xb.shape[1], xb.shape[2:]
    for o, k, i, what in zip(size, pool, spatial, ("depth", "height", "width")[3 - nd:]):
        if o + k - 1 > i:
            raise RuntimeError(f"{name}_out(): pool {what} {k} too large relative to input "
                               f"{what} {i}")
    r = samples.data
    if r.shape != (n, c, nd):
        raise RuntimeError(f"{name}(): random_samples must be of shape [{n}, {c}, {nd}] (one "
                           f"sample per plane and spatial dim), got {list(r.shape)}")
    # libtorch's sample order per plane: (width, height) in 2-d, (depth, height, width) in 3-d
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_starts(r[..., order[d]], spatial[d], size[d], pool[d]) for d in range(nd)]
    # every window's positions, flat within the plane: (n, c, *size, *pool)
    strides = np.cumprod((1,) + spatial[::-1])[:-1][::-1]
    flat = np.zeros((n, c) + size + pool, dtype=np.int64)
    for d in range(nd):
        along = starts[d].reshape((n, c) + tuple(size[d] if e == d else 1 for e in range(nd))
                                  + (1,) * nd)
        offsets = np.arange(pool[d]).reshape((1,) * (2 + nd) + tuple(
            pool[d] if e == d else 1 for e in range(nd)))
        flat = flat + (along + offsets) * strides[d]
    windows = flat.reshape((n, c) + size + (-1,))
    values = np.take(xb, global_index(windows, xb.shape))
    # the first maximum of each window (a NaN wins), as libtorch's loop keeps it
    pick = np.where(np.isnan(values).any(-1), np.isnan(values).argmax(-1), values.argmax(-1))
    idx = np.take_along_axis(windows, pick[..., None], -1)[..., 0]
    best = np.take_along_axis(values, pick[..., None], -1)[..., 0]
    out = record(best if batched else best[0], ScatterPlanesBackward, (x,), (idx, x.shape),
                 name=f"FractionalMaxPool{nd}DBackward0")
    return out, wrap(idx if batched else idx[0])


@op(method=False, samples=S.fractional_max_pool2d, returns_indices=1,
    torch_name="_C._nn.fractional_max_pool2d")
def fractional_max_pool2d(self: Tensor, kernel_size: Any, output_size: Any,
                          random_samples: Tensor) -> tuple:
    return _fractional(self, kernel_size, output_size, random_samples, 2)


@op(method=False, samples=S.fractional_max_pool3d, returns_indices=1,
    torch_name="_C._nn.fractional_max_pool3d")
def fractional_max_pool3d(self: Tensor, kernel_size: Any, output_size: Any,
                          random_samples: Tensor) -> tuple:
    return _fractional(self, kernel_size, output_size, random_samples, 3)


# --------------------------------------------------------------------------
# Sliding windows as columns: im2col (R torch's nnf_unfold) and its adjoint
# col2im (nnf_fold), each the other's derivative. A column holds one window:
# channel by channel, its kernel_size[0] x kernel_size[1] values row by row.


def _window_args(kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple:
    k, d, p, s = (int_tuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    if any(len(v) != 2 for v in (k, d, p, s)):
        raise RuntimeError("kernel_size, dilation, padding and stride must be one int or two")
    if min(k + d + s) <= 0 or min(p) < 0:
        raise RuntimeError(f"kernel size, dilation and stride should be greater than zero and "
                           f"padding non-negative, but got kernel_size: {k}, dilation: {d}, "
                           f"padding: {p}, stride: {s}")
    return k, d, p, s


def _blocks(size: tuple, k: tuple, d: tuple, p: tuple, s: tuple) -> tuple:
    return tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2))


def _window(k: tuple, d: tuple, s: tuple, blocks: tuple, i: int, j: int) -> tuple:
    """The padded plane's positions that kernel offset (i, j) visits."""
    return (slice(i * d[0], i * d[0] + s[0] * (blocks[0] - 1) + 1, s[0]),
            slice(j * d[1], j * d[1] + s[1] * (blocks[1] - 1) + 1, s[1]))


@formula
def Im2ColBackward0(n, g, size, k, d, p, s):
    return (col2im(g, size, k, d, p, s),)


@op(method=False, samples=S.im2col, torch_name="_C._nn.im2col")
def im2col(self: Tensor, kernel_size: Any, dilation: Any, padding: Any,
           stride: Any) -> Tensor:
    """(N, C, H, W) (or (C, H, W)) to (N, C * kh * kw, blocks): every window a column."""
    k, d, p, s = _window_args(kernel_size, dilation, padding, stride)
    if self.ndim not in (3, 4) or 0 in self.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{list(self.shape)}")
    x = self.data if self.ndim == 4 else self.data[None]
    blocks = _blocks(x.shape[2:], k, d, p, s)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size {list(x.shape[2:])}, kernel_size="
                           f"{list(k)}, dilation={list(d)}, padding={list(p)}, calculated "
                           f"shape of the array of sliding blocks as {list(blocks)}, but its "
                           "components must be at least one.")
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])]) if any(p) else x
    cols = np.empty(x.shape[:2] + k + blocks, dtype=x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            cols[:, :, i, j] = xp[(slice(None), slice(None)) + _window(k, d, s, blocks, i, j)]
    out = cols.reshape(x.shape[0], -1, blocks[0] * blocks[1])
    return record(out if self.ndim == 4 else out[0], Im2ColBackward0, (self,),
                  (self.shape[-2:], k, d, p, s))


@formula
def Col2ImBackward0(n, g, k, d, p, s):
    return (im2col(g, k, d, p, s),)


@op(method=False, samples=S.col2im, torch_name="_C._nn.col2im")
def col2im(self: Tensor, output_size: Any, kernel_size: Any, dilation: Any, padding: Any,
           stride: Any) -> Tensor:
    """im2col's adjoint: (N, C * kh * kw, blocks) columns summed back into
    (N, C, *output_size) planes (overlapping windows add up)."""
    k, d, p, s = _window_args(kernel_size, dilation, padding, stride)
    size = int_tuple(output_size, 2)
    if self.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions, but got: {list(self.shape)}")
    x = self.data if self.ndim == 3 else self.data[None]
    per = k[0] * k[1]
    if x.shape[1] % per:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={list(k)}")
    blocks = _blocks(size, k, d, p, s)
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"Given output_size={list(size)}, kernel_size={list(k)}, "
                           f"dilation={list(d)}, padding={list(p)}, stride={list(s)}, expected "
                           f"size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={x.shape[2]}.")
    c = x.shape[1] // per
    cols = x.reshape((x.shape[0], c) + k + blocks)
    out = np.zeros((x.shape[0], c, size[0] + 2 * p[0], size[1] + 2 * p[1]), dtype=x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[(slice(None), slice(None)) + _window(k, d, s, blocks, i, j)] += cols[:, :, i, j]
    out = out[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]
    return record(np.ascontiguousarray(out if self.ndim == 3 else out[0]), Col2ImBackward0,
                  (self,), (k, d, p, s))
