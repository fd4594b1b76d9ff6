"""Sampling an input at the points of a grid (`grid_sampler_2d`/`_3d`, R torch's
`nnf_grid_sample`) and the grids of affine maps (`affine_grid_generator`,
`nnf_affine_grid`), with libtorch's arithmetic and node names.

A grid holds, per output point, coordinates in [-1, 1] (x first: the last
spatial dim), mapped to input positions by `_unnormalize` (libtorch's unnormalize),
then by `_pad` (the padding mode: "border" clamps, "reflection" mirrors at the edges;
with "zeros" points outside read 0). Each output point reads a few input positions
("taps") with weights: bilinear the 2**d corners around it, nearest the one
rounded to, bicubic (2-d only) 4 x 4 with the cubic convolution (A = -0.75).
The forward gathers the taps; its node scatters the gradient back to the input
and differentiates the weights for the grid (libtorch has no second derivative
here either).
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..tensor import Tensor
from .operands import whole
from .recording import formula, record
from .dispatch import op
from .samples import grid_sample as S

_MODES = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDINGS = {0: "zeros", 1: "border", 2: "reflection"}
_A = -0.75  # the cubic convolution's parameter, as in libtorch


# --------------------------------------------------------------------------
# Grid coordinates -> input positions (with d position / d coordinate)


def _clip(i: np.ndarray, size: int) -> tuple:
    """Clamped to [0, size - 1]; the gradient stops where it clamps."""
    hi = i.dtype.type(size - 1)
    out = np.minimum(np.maximum(i, i.dtype.type(0)), hi)
    return out, ((i > 0) & (i < hi)).astype(i.dtype)


def _reflect(i: np.ndarray, twice_low: int, twice_high: int) -> tuple:
    """Mirrored into [low, high] (given doubled, so half-way edges are whole)."""
    if twice_low == twice_high:
        return np.zeros_like(i), np.zeros_like(i)
    t = i.dtype.type
    low, span = t(twice_low / 2), t((twice_high - twice_low) / 2)
    d = i - low
    sign = np.where(d < 0, t(-1), t(1))
    d = np.abs(d)
    extra = np.fmod(d, span)
    even = np.floor(d / span) % 2 == 0
    return (np.where(even, extra + low, span - extra + low),
            np.where(even, sign, -sign))


def _unnormalize(coord: np.ndarray, size: int, align_corners: bool, nd: int) -> tuple:
    """Input position of a grid coordinate, and d position / d coordinate. (libtorch's
    2-d CPU kernel and its 3-d one round these in different orders: both kept.)"""
    t = coord.dtype.type
    if nd == 2:
        scale = t((size - 1) / 2) if align_corners else t(size / 2)
        i = (coord + t(1)) * scale
        return (i if align_corners else i - t(0.5)), scale
    if align_corners:
        return (coord + t(1)) / t(2) * t(size - 1), t((size - 1) / 2)
    return ((coord + t(1)) * t(size) - t(1)) / t(2), t(size / 2)


def _pad(i: np.ndarray, size: int, padding: str, align_corners: bool) -> tuple:
    """The padding mode applied to input positions: (positions, their gradient)."""
    one = np.ones_like(i)
    if padding == "border":
        return _clip(i, size)
    if padding == "reflection":
        r, gr = _reflect(i, 0, 2 * (size - 1)) if align_corners else \
            _reflect(i, -1, 2 * size - 1)
        c, gc = _clip(r, size)
        return c, gr * gc
    return i, one


# --------------------------------------------------------------------------
# Taps: [(input positions per spatial dim, weight, d weight / d position per dim)]


def _linear_taps(pos: list, nd: int) -> list:
    lo = [np.floor(p) for p in pos]
    if nd == 2:  # the vectorized 2-d kernel: 1 - t, and the y factor first
        frac = [p - f for p, f in zip(pos, lo)]
        factors = [(1 - t, t) for t in frac]
    else:
        factors = [((f + 1) - p, p - f) for p, f in zip(pos, lo)]
    taps = []
    for bits in itertools.product((0, 1), repeat=nd):
        bits = bits[::-1]  # (x fastest, as libtorch's corner order)
        parts = [factors[k][bits[k]] for k in range(nd)]
        order = range(nd - 1, -1, -1) if nd == 2 else range(nd)
        w = None
        for k in order:
            w = parts[k] if w is None else w * parts[k]
        dw = []
        for k in range(nd):
            others = [parts[j] for j in order if j != k]
            g = np.ones_like(pos[0]) if not others else others[0]
            for o in others[1:]:
                g = g * o
            dw.append(g if bits[k] else -g)
        taps.append(([(f + b).astype(np.int64) for f, b in zip(lo, bits)], w, dw))
    return taps


def _cubic_weights(t: np.ndarray) -> tuple:
    """The four cubic convolution weights at offset t in [0, 1), and their derivatives."""
    def near(x):   # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):    # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    def d_near(x):
        return (3 * (_A + 2) * x - 2 * (_A + 3)) * x

    def d_far(x):
        return (3 * _A * x - 10 * _A) * x + 8 * _A
    w = (far(t + 1), near(t), near(1 - t), far(2 - t))
    dw = (d_far(t + 1), d_near(t), -d_near(1 - t), -d_far(2 - t))
    return tuple(np.asarray(v, t.dtype) for v in w), tuple(np.asarray(v, t.dtype) for v in dw)


def _bicubic_taps(pos: list) -> list:
    (x, y) = pos
    fx, fy = np.floor(x), np.floor(y)
    (wx, dwx), (wy, dwy) = _cubic_weights(x - fx), _cubic_weights(y - fy)
    taps = []
    for j in range(4):        # rows (y), then x within a row, as libtorch sums them
        for i in range(4):
            idx = [(fx - 1 + i).astype(np.int64), (fy - 1 + j).astype(np.int64)]
            taps.append((idx, wx[i] * wy[j], [dwx[i] * wy[j], wx[i] * dwy[j]]))
    return taps


class _Plan:
    """Where and how much each output point reads, for one call."""

    def __init__(self, input_shape: tuple, grid: np.ndarray, mode: str, padding: str,
                 align_corners: bool) -> None:
        sizes = input_shape[2:][::-1]  # x first (the last dim), as the grid's coordinates
        nd = len(sizes)
        self.nd, self.mode, self.padding, self.sizes = nd, mode, padding, sizes
        pos, self.dpos = [], []
        for k in range(nd):
            i, scale = _unnormalize(grid[..., k], sizes[k], align_corners, nd)
            if mode == "bicubic":  # (its padding is applied to each tap instead)
                pos.append(i)
                self.dpos.append(np.full_like(i, scale))
                continue
            i, g = _pad(i, sizes[k], padding, align_corners)
            pos.append(i)
            self.dpos.append(g * scale)
        if mode == "nearest":
            self.taps = [([np.rint(p).astype(np.int64) for p in pos], None, None)]
        elif mode == "bicubic":
            self.taps = [([self._tap_index(ix, k, align_corners) for k, ix in enumerate(idx)],
                          w, dw) for idx, w, dw in _bicubic_taps(pos)]
        else:
            self.taps = _linear_taps(pos, nd)

    def _tap_index(self, idx: np.ndarray, k: int, align_corners: bool) -> np.ndarray:
        p, _ = _pad(idx.astype(self.dpos[0].dtype), self.sizes[k], self.padding, align_corners)
        return p.astype(np.int64)

    def flat(self, idx: list) -> tuple:
        """(index into the flattened spatial dims, where it is inside the input)."""
        inside = np.ones(idx[0].shape, bool)
        flat = np.zeros(idx[0].shape, np.int64)
        for k in range(self.nd - 1, -1, -1):  # z, y, x: row-major over (D, H, W)
            inside &= (idx[k] >= 0) & (idx[k] < self.sizes[k])
            flat = flat * self.sizes[k] + np.clip(idx[k], 0, self.sizes[k] - 1)
        return flat, inside


def _points(a: np.ndarray) -> np.ndarray:
    """(N, *O) -> (N, 1, P): one row of output points per batch item."""
    return a.reshape(a.shape[0], 1, -1)


def _gather(x: np.ndarray, plan: _Plan, grid_shape: tuple) -> np.ndarray:
    n, c = x.shape[:2]
    points = (n, c, int(np.prod(grid_shape[1:-1])))
    # Fast path: one input expanded over the batch (torchvision's ROI pooling
    # samples one feature map per box this way) is read in place, not copied n times.
    shared = n > 1 and x.strides[0] == 0
    src = x[0].reshape(c, -1) if shared else x.reshape(n, c, -1)
    out = np.zeros(points, x.dtype)
    for idx, w, _ in plan.taps:
        flat, inside = plan.flat(idx)
        if shared:
            vals = src[:, flat.reshape(-1)].reshape(c, n, -1).transpose(1, 0, 2)
        else:
            vals = np.take_along_axis(src, np.broadcast_to(_points(flat), points), axis=2)
        weight = _points(inside.astype(x.dtype) if w is None else np.where(inside, w, 0))
        out = out + vals * weight
    return out.reshape((n, c) + grid_shape[1:-1])


def _sampler_grads(g: np.ndarray, x: np.ndarray, plan: _Plan, need_input: bool,
                   need_grid: bool, grid_shape: tuple) -> tuple:
    n, c = x.shape[:2]
    gp = g.reshape(n, c, -1)
    src = x.reshape(n, c, -1)
    # (C order: add.at below writes through a flat view, which an expanded input's
    # zeros_like layout would make a copy)
    gx = np.zeros(src.shape, x.dtype) if need_input else None
    ggrid = [np.zeros(gp.shape[::2], x.dtype) for _ in range(plan.nd)] if need_grid else None
    rows = (np.arange(n)[:, None, None] * c + np.arange(c)[None, :, None]) * src.shape[2]
    for idx, w, dw in plan.taps:
        flat, inside = plan.flat(idx)
        weight = _points(inside.astype(x.dtype) if w is None else np.where(inside, w, 0))
        if need_input:
            np.add.at(gx.reshape(-1), (rows + _points(flat)).reshape(-1),
                      (gp * weight).reshape(-1))
        if need_grid and dw is not None:
            vals = np.take_along_axis(src, np.broadcast_to(_points(flat), gp.shape), axis=2)
            through = (vals * gp).sum(axis=1) * inside.reshape(n, -1)
            for k in range(plan.nd):
                ggrid[k] += through * dw[k].reshape(n, -1)
    if need_grid:
        ggrid = np.stack([gk.reshape(grid_shape[:-1]) * plan.dpos[k]
                          for k, gk in enumerate(ggrid)], axis=-1)
    return (None if gx is None else gx.reshape(x.shape), ggrid)


# --------------------------------------------------------------------------
# The ops


def _check(input: Tensor, grid: Tensor, nd: int, mode: str, name: str) -> None:
    if input.ndim != nd + 2 or grid.ndim != nd + 2 or grid.shape[-1] != nd:
        raise RuntimeError(f"{name}: expected a {nd + 2}-D input (N, C, *spatial) and a "
                           f"{nd + 2}-D grid ending in {nd} coordinates, got input "
                           f"{list(input.shape)} and grid {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"{name}: expected grid and input to have same batch size, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if nd == 3 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.data.dtype.kind != "f" or input.dtype != grid.dtype:
        raise RuntimeError(f"{name}: expected input and grid of the same floating dtype, got "
                           f"{input.dtype} and {grid.dtype}")


def _options(interpolation_mode: Any, padding_mode: Any) -> tuple:
    mode, padding = whole(interpolation_mode, "interpolation_mode"), \
        whole(padding_mode, "padding_mode")
    if mode not in _MODES or padding not in _PADDINGS:
        raise ValueError(f"grid_sampler: interpolation_mode must be 0 (bilinear), 1 (nearest) "
                         f"or 2 (bicubic) and padding_mode 0 (zeros), 1 (border) or 2 "
                         f"(reflection); got {mode} and {padding}")
    return _MODES[mode], _PADDINGS[padding]


@formula
def GridSamplerBackward(n, g, x, grid, mode, padding, align_corners):
    plan = _Plan(x.shape, grid.data, mode, padding, align_corners)
    gx, ggrid = _sampler_grads(g.data, x.data, plan, n.needs(0), n.needs(1), grid.shape)
    return (None if gx is None else Tensor(gx), None if ggrid is None else Tensor(ggrid))


def _grid_sampler(nd: int, input: Tensor, grid: Tensor, interpolation_mode: Any,
                  padding_mode: Any, align_corners: Any) -> Tensor:
    name = f"grid_sampler_{nd}d"
    mode, padding = _options(interpolation_mode, padding_mode)
    _check(input, grid, nd, mode, name)
    align_corners = bool(align_corners)
    plan = _Plan(input.shape, grid.data, mode, padding, align_corners)
    out = _gather(input.data, plan, grid.shape)
    return record(out, GridSamplerBackward, (input, grid),
                  (input, grid, mode, padding, align_corners), name=f"GridSampler{nd}DBackward0")


@op(samples=S.grid_sampler_2d, method=False, second_order=False)
def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    return _grid_sampler(2, input, grid, interpolation_mode, padding_mode, align_corners)


@op(samples=S.grid_sampler_3d, method=False, second_order=False)
def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    return _grid_sampler(3, input, grid, interpolation_mode, padding_mode, align_corners)


@op(samples=S.grid_sampler, method=False, second_order=False, autocast="fp32")
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """grid_sampler_2d for 4-d inputs, grid_sampler_3d for 5-d ones."""
    if input.ndim == 5:
        return grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners)
    return grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)


# --------------------------------------------------------------------------
# Affine grids: each output point's coordinates in [-1, 1] through theta


def _base_axis(n: int, align_corners: bool, dt: Any) -> np.ndarray:
    if n <= 1:
        return np.zeros(max(n, 0), dt)
    r = np.linspace(-1, 1, n, dtype=dt)
    return r if align_corners else r * dt(n - 1) / dt(n)


def _base_grid(size: tuple, align_corners: bool, dt: Any) -> np.ndarray:
    """(prod(spatial), nd + 1) rows of [x, y, (z,) 1]."""
    spatial = size[2:]
    axes = [_base_axis(s, align_corners, dt) for s in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # over (D,) H, W
    cols = [m.reshape(-1) for m in mesh[::-1]] + [np.ones(mesh[0].size, dt)]
    return np.stack(cols, axis=-1)


@formula
def AffineGridGeneratorBackward0(n, g, size, align_corners):
    nd = len(size) - 2
    base = Tensor(_base_grid(size, align_corners, g.data.dtype.type))
    gm = g.reshape(size[0], -1, nd)  # (N, points, nd)
    return (gm.transpose(1, 2).matmul(base),)  # (N, nd, nd + 1)


@op(samples=S.affine_grid_generator, method=False)
def affine_grid_generator(theta: Tensor, size: Any, align_corners: bool) -> Tensor:
    size = tuple(whole(s, "size") for s in np.asarray(size).reshape(-1))
    nd = len(size) - 2
    if nd not in (2, 3) or theta.ndim != 3 or tuple(theta.shape) != (size[0], nd, nd + 1):
        raise ValueError(f"affine_grid: expected theta of shape (N, {max(nd, 2)}, "
                         f"{max(nd, 2) + 1}) for a size (N, C, {'D, ' if nd == 3 else ''}H, W),"
                         f" got theta {list(theta.shape)} and size {list(size)}")
    if theta.data.dtype.kind != "f":
        raise TypeError(f"affine_grid: theta must be floating point, got {theta.dtype}")
    base = _base_grid(size, bool(align_corners), theta.data.dtype.type)
    out = np.matmul(base, theta.data.transpose(0, 2, 1))  # (N, points, nd)
    out = out.reshape((size[0],) + size[2:] + (nd,))
    return record(out, AffineGridGeneratorBackward0, (theta,), (size, bool(align_corners)))
