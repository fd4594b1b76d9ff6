"""Upsampling (and downsampling) of the spatial dims of (N, C, *S) inputs:
nearest (1-3 d), linear (1 d), bilinear and bicubic (2 d), trilinear (3 d),
with PyTorch's names, arguments and node names, and their `_backward` ops.

Every mode is separable: along each spatial dim an output position reads a
few input positions ("taps": nearest one, linear two, cubic four) with
weights. The forward gathers the taps dim by dim (last dim first, the order
libtorch's kernel sums in); the backward scatters the gradient back with
`np.add.reduceat` (taps are non-decreasing along each dim). Each op's
derivative is its `_backward` op and the `_backward` op's derivative is the
forward again, so every order works.

Source positions follow libtorch: a scale is `1 / scales` when a scale is
given, else input / output size; with `align_corners` the corner pixels'
centres are matched instead ((in - 1) / (out - 1)), and given scales are
ignored. Nearest computes in float32 whatever the dtype, as libtorch does.

One difference, on purpose: libtorch's nearest and bicubic backward kernels
take shortcuts (output = input size: copy; nearest, output = 2 x input: halve
the index) that its forward kernels (nearest 1-d and 3-d, bicubic) don't, so
where a given scale disagrees with the sizes (4 -> 8 positions with
scale_factors = 2.034; bicubic 5 -> 5 with 1.188) its gradient is not its
forward's (torch.autograd.gradcheck fails there). Here the `_backward` ops are
always the forward's exact adjoint, and the forwards are libtorch's.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..tensor import Tensor
from .operands import whole
from .recording import formula, record
from .dispatch import op
from .samples import upsample as S

_A = -0.75  # the cubic convolution's parameter, as in libtorch


class _Plan(NamedTuple):
    """What one upsample call does (kept by its nodes)."""
    name: str                 # the forward op's name (upsample_bilinear2d)
    mode: str                 # "nearest", "linear" or "cubic"
    input_size: tuple         # the full input shape (N, C, *S)
    output_size: tuple        # the spatial output sizes
    align_corners: bool
    scales: tuple             # one per spatial dim, None where not given


# --------------------------------------------------------------------------
# Taps: per output position, the input positions read and their weights.


def _scale(n_in: int, n_out: int, align_corners: bool, scale: float | None, dt: Any) -> Any:
    if align_corners:
        return dt((n_in - 1) / (n_out - 1)) if n_out > 1 else dt(0)
    if scale is not None and scale > 0:
        return dt(1.0 / scale)
    return dt(n_in) / dt(n_out)


def _taps(mode: str, n_in: int, n_out: int, align_corners: bool, scale: float | None,
          dt: Any, shortcuts: bool = False) -> list:
    """[(indices, weights or None)] along one dim: weights in the data's
    precision (float32 for float32 data), as libtorch computes them."""
    o = np.arange(n_out)
    if mode == "nearest":
        if shortcuts and n_out == n_in:
            return [(o, None)]
        if shortcuts and n_out == 2 * n_in:
            return [(o >> 1, None)]
        s = _scale(n_in, n_out, False, scale, np.float32)
        idx = np.floor(o.astype(np.float32) * s).astype(np.int64)
        return [(np.minimum(idx, n_in - 1), None)]
    s = _scale(n_in, n_out, align_corners, scale, dt)
    od = o.astype(dt)
    if mode == "linear":
        if n_out == n_in:
            return [(o, np.ones(n_out, dt)), (o, np.zeros(n_out, dt))]
        src = s * od if align_corners else np.maximum(s * (od + dt(0.5)) - dt(0.5), dt(0))
        i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
        l1 = np.clip(src - i0.astype(dt), 0, 1).astype(dt)
        i1 = i0 + (i0 < n_in - 1)
        return [(i0, (1 - l1).astype(dt)), (i1, l1)]
    # cubic: four taps around floor(src), clamped at the borders
    src = s * od if align_corners else s * (od + dt(0.5)) - dt(0.5)
    i = np.floor(src).astype(np.int64)
    t = (src - i.astype(dt)).astype(dt)

    def near(x):  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):   # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A
    ws = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    return [(np.clip(i - 1 + k, 0, n_in - 1), np.asarray(w, dtype=dt)) for k, w in enumerate(ws)]


def _plan_taps(plan: _Plan, dt: Any) -> list:
    sizes = plan.input_size[2:]
    # (libtorch's 2-d nearest kernel copies equal sizes and halves indices for
    # twice the size whatever the scale; its 1-d and 3-d kernels don't)
    shortcuts = plan.name == "upsample_nearest2d"
    return [_taps(plan.mode, n_in, n_out, plan.align_corners, sc, dt, shortcuts)
            for n_in, n_out, sc in zip(sizes, plan.output_size, plan.scales)]


def _weights_along(w: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    return w.reshape((-1,) + (1,) * (ndim - axis - 1))


def _gather(a: np.ndarray, plan: _Plan) -> np.ndarray:
    """The forward on arrays: along each spatial dim, last first."""
    taps = _plan_taps(plan, a.dtype.type)
    for k in reversed(range(len(taps))):
        axis, out = 2 + k, None
        for idx, w in taps[k]:
            part = np.take(a, idx, axis=axis)
            if w is not None:
                part = part * _weights_along(w, axis, a.ndim)
            out = part if out is None else out + part
        a = out
    return np.ascontiguousarray(a)


def _scatter(g: np.ndarray, plan: _Plan) -> np.ndarray:
    """The backward on arrays: each tap's weighted gradient summed back onto
    the input positions it read (first spatial dim first, the reverse of
    _gather)."""
    taps = _plan_taps(plan, g.dtype.type)
    sizes = plan.input_size[2:]
    for k in range(len(taps)):
        axis = 2 + k
        shape = list(g.shape)
        shape[axis] = sizes[k]
        out = np.zeros(shape, dtype=g.dtype)
        if g.shape[axis] and g.size:
            for idx, w in taps[k]:
                vals = g if w is None else g * _weights_along(w, axis, g.ndim)
                starts = np.flatnonzero(np.r_[True, idx[1:] != idx[:-1]])
                sums = np.add.reduceat(vals, starts, axis=axis)
                where = [slice(None)] * g.ndim
                where[axis] = idx[starts]
                out[tuple(where)] += sums
        g = out
    return g


# --------------------------------------------------------------------------
# The two recorded functions every op below is made of; node names per op.


def _node_names(name: str) -> tuple[str, str]:
    """upsample_bilinear2d -> (UpsampleBilinear2DBackward0, UpsampleBilinear2DBackwardBackward0)"""
    base = "".join(p.capitalize() for p in name.split("_")).replace("1d", "1D") \
        .replace("2d", "2D").replace("3d", "3D")
    return base + "Backward0", base + "BackwardBackward0"


_NODE_NAMES = {name: _node_names(name) for name in (
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "upsample_linear1d",
    "upsample_bilinear2d", "upsample_bicubic2d", "upsample_trilinear3d")}


@formula
def UpsampleBackward(n, g, plan):
    # (recorded under the op's name: UpsampleBilinear2DBackward0, ...)
    return (_down(g, plan),)


@formula
def UpsampleBackwardBackward(n, g, plan):
    # (UpsampleBilinear2DBackwardBackward0, ...)
    return (_up(g, plan),)


def _up(x: Tensor, plan: _Plan) -> Tensor:
    return record(_gather(x.data, plan), UpsampleBackward, (x,), (plan,),
                  name=_NODE_NAMES[plan.name][0])


def _down(g: Tensor, plan: _Plan) -> Tensor:
    return record(_scatter(g.data, plan), UpsampleBackwardBackward, (g,), (plan,),
                  name=_NODE_NAMES[plan.name][1])


# --------------------------------------------------------------------------
# Arguments, checked as libtorch checks them.


def _ints(v: Any, what: str) -> tuple:
    if isinstance(v, Tensor):
        v = v.data
    return tuple(whole(x, what) for x in np.asarray(v).reshape(-1))


def _floats(v: Any) -> tuple:
    if isinstance(v, Tensor):
        v = v.data
    return tuple(float(x) for x in np.asarray(v, dtype=np.float64).reshape(-1))


def _check_input(name: str, x: Any, nd: int, mode: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: input must be a tensor, got {type(x).__name__}")
    if x.ndim != nd + 2:
        raise ValueError(f"{name}: expected a {nd + 2}-D input (batch, channels, {nd} spatial "
                         f"dim{'s' if nd > 1 else ''}), got shape {list(x.shape)}")
    if x.data.size == 0 and 0 in x.shape[1:]:
        raise ValueError(f"{name}: expected a non-empty input (only the batch may be 0), got "
                         f"shape {list(x.shape)}")
    kind = x.data.dtype.kind
    if kind != "f" and not (mode == "nearest" and x.data.dtype == np.uint8):
        what = "floating or uint8" if mode == "nearest" else "floating"
        raise TypeError(f"{name}: expected a {what} input, got {x.dtype}; convert it first, "
                        f"e.g. x$to(dtype = torch_float())")


def _check_sizes(name: str, sizes: tuple, out: tuple) -> None:
    if any(s <= 0 for s in sizes) or any(o <= 0 for o in out):
        raise ValueError(f"{name}: input and output sizes must be greater than 0, got input "
                         f"{list(sizes)} and output {list(out)}")


def _plan(name: str, mode: str, nd: int, input: Any, self: Any, output_size: Any,
          scale_factors: Any, scales: tuple, align_corners: Any = False) -> tuple:
    """(the input, its plan) for a forward op called either way libtorch
    takes it: output_size and per-dim scales, or scale_factors alone."""
    if input is None and self is None:
        raise TypeError(f"{name}: missing the input tensor (`input` or `self`)")
    if input is not None and self is not None:
        raise TypeError(f"{name}: give the input once, as `input` or as `self`, not both")
    x = input if input is not None else self
    _check_input(name, x, nd, mode)
    sizes = tuple(x.shape[2:])
    if (output_size is None) == (scale_factors is None):
        raise ValueError(f"{name}: give exactly one of output_size and scale_factors")
    if output_size is not None:
        out = _ints(output_size, "output_size")
        if len(out) != nd:
            raise ValueError(f"{name}: output_size must have {nd} element"
                             f"{'s' if nd > 1 else ''} (one per spatial dim), got {list(out)}")
        scales = tuple(None if s is None else float(np.asarray(s).reshape(-1)[0])
                       for s in scales)
    else:
        sf = _floats(scale_factors)
        if len(sf) != nd:
            raise ValueError(f"{name}: scale_factors must have {nd} element"
                             f"{'s' if nd > 1 else ''} (one per spatial dim), got {list(sf)}")
        out = tuple(int(math.floor(s * f)) for s, f in zip(sizes, sf))
        scales = sf
    _check_sizes(name, sizes, out)
    return x, _Plan(name, mode, tuple(x.shape), out, bool(align_corners), scales)


def _back_plan(name: str, mode: str, nd: int, grad_output: Any, output_size: Any,
               input_size: Any, scales: tuple, align_corners: Any = False) -> _Plan:
    if not isinstance(grad_output, Tensor):
        raise TypeError(f"{name}_backward: grad_output must be a tensor, got "
                        f"{type(grad_output).__name__}")
    out = _ints(output_size, "output_size")
    full = _ints(input_size, "input_size")
    if len(out) != nd or len(full) != nd + 2:
        raise ValueError(f"{name}_backward: expected output_size of {nd} and input_size of "
                         f"{nd + 2} elements, got {list(out)} and {list(full)}")
    if tuple(grad_output.shape) != full[:2] + out:
        raise ValueError(f"{name}_backward: grad_output must have the output's shape "
                         f"{list(full[:2] + out)}, got {list(grad_output.shape)}")
    if grad_output.data.dtype.kind != "f":
        raise TypeError(f"{name}_backward: expected a floating grad_output, got "
                        f"{grad_output.dtype}")
    _check_sizes(name + "_backward", full[2:], out)
    scales = tuple(None if s is None else float(np.asarray(s).reshape(-1)[0]) for s in scales)
    return _Plan(name, mode, full, out, bool(align_corners), scales)


# --------------------------------------------------------------------------
# The ops. Each forward takes PyTorch's two forms: (input, output_size,
# scales...) or (input, None, scale_factors); R torch's `self =` names the
# input of the first form.

_TORCH = "_C._nn."


@op(method=False, samples=S.nearest1d, torch_name=_TORCH + "upsample_nearest1d")
def upsample_nearest1d(input: Tensor | None = None, output_size: Any = None,
                       scale_factors: Any = None, scales: float | None = None, *,
                       self: Tensor | None = None) -> Tensor:
    return _up(*_plan("upsample_nearest1d", "nearest", 1, input, self, output_size,
                      scale_factors, (scales,)))


@op(method=False, samples=S.nearest2d, torch_name=_TORCH + "upsample_nearest2d")
def upsample_nearest2d(input: Tensor | None = None, output_size: Any = None,
                       scale_factors: Any = None, scales_h: float | None = None,
                       scales_w: float | None = None, *, self: Tensor | None = None) -> Tensor:
    return _up(*_plan("upsample_nearest2d", "nearest", 2, input, self, output_size,
                      scale_factors, (scales_h, scales_w)))


@op(method=False, samples=S.nearest3d, torch_name=_TORCH + "upsample_nearest3d")
def upsample_nearest3d(input: Tensor | None = None, output_size: Any = None,
                       scale_factors: Any = None, scales_d: float | None = None,
                       scales_h: float | None = None, scales_w: float | None = None, *,
                       self: Tensor | None = None) -> Tensor:
    return _up(*_plan("upsample_nearest3d", "nearest", 3, input, self, output_size,
                      scale_factors, (scales_d, scales_h, scales_w)))


@op(method=False, samples=S.linear1d, torch_name=_TORCH + "upsample_linear1d")
def upsample_linear1d(input: Tensor | None = None, output_size: Any = None,
                      align_corners: bool = False, scale_factors: Any = None,
                      scales: float | None = None, *, self: Tensor | None = None) -> Tensor:
    return _up(*_plan("upsample_linear1d", "linear", 1, input, self, output_size,
                      scale_factors, (scales,), align_corners))


@op(method=False, samples=S.bilinear2d, torch_name=_TORCH + "upsample_bilinear2d")
def upsample_bilinear2d(input: Tensor | None = None, output_size: Any = None,
                        align_corners: bool = False, scale_factors: Any = None,
                        scales_h: float | None = None, scales_w: float | None = None, *,
                        self: Tensor | None = None) -> Tensor:
    return _up(*_plan("upsample_bilinear2d", "linear", 2, input, self, output_size,
                      scale_factors, (scales_h, scales_w), align_corners))


@op(method=False, samples=S.bicubic2d, torch_name=_TORCH + "upsample_bicubic2d")
def upsample_bicubic2d(input: Tensor | None = None, output_size: Any = None,
                       align_corners: bool = False, scale_factors: Any = None,
                       scales_h: float | None = None, scales_w: float | None = None, *,
                       self: Tensor | None = None) -> Tensor:
    return _up(*_plan("upsample_bicubic2d", "cubic", 2, input, self, output_size,
                      scale_factors, (scales_h, scales_w), align_corners))


@op(method=False, samples=S.trilinear3d, torch_name=_TORCH + "upsample_trilinear3d")
def upsample_trilinear3d(input: Tensor | None = None, output_size: Any = None,
                         align_corners: bool = False, scale_factors: Any = None,
                         scales_d: float | None = None, scales_h: float | None = None,
                         scales_w: float | None = None, *,
                         self: Tensor | None = None) -> Tensor:
    return _up(*_plan("upsample_trilinear3d", "linear", 3, input, self, output_size,
                      scale_factors, (scales_d, scales_h, scales_w), align_corners))


# The backward ops: the forward's gradient for a given output gradient.

_ATEN = "ops.aten."


@op(method=False, samples=S.nearest1d_backward,
    torch_name=_ATEN + "upsample_nearest1d_backward")
def upsample_nearest1d_backward(grad_output: Tensor, output_size: Any, input_size: Any,
                                scales: float | None = None) -> Tensor:
    return _down(grad_output, _back_plan("upsample_nearest1d", "nearest", 1, grad_output,
                                         output_size, input_size, (scales,)))


@op(method=False, samples=S.nearest2d_backward,
    torch_name=_ATEN + "upsample_nearest2d_backward")
def upsample_nearest2d_backward(grad_output: Tensor, output_size: Any, input_size: Any,
                                scales_h: float | None = None,
                                scales_w: float | None = None) -> Tensor:
    return _down(grad_output, _back_plan("upsample_nearest2d", "nearest", 2, grad_output,
                                         output_size, input_size, (scales_h, scales_w)))


@op(method=False, samples=S.nearest3d_backward,
    torch_name=_ATEN + "upsample_nearest3d_backward")
def upsample_nearest3d_backward(grad_output: Tensor, output_size: Any, input_size: Any,
                                scales_d: float | None = None, scales_h: float | None = None,
                                scales_w: float | None = None) -> Tensor:
    return _down(grad_output, _back_plan("upsample_nearest3d", "nearest", 3, grad_output,
                                         output_size, input_size,
                                         (scales_d, scales_h, scales_w)))


@op(method=False, samples=S.linear1d_backward, torch_name=_ATEN + "upsample_linear1d_backward")
def upsample_linear1d_backward(grad_output: Tensor, output_size: Any, input_size: Any,
                               align_corners: bool = False,
                               scales: float | None = None) -> Tensor:
    return _down(grad_output, _back_plan("upsample_linear1d", "linear", 1, grad_output,
                                         output_size, input_size, (scales,), align_corners))


@op(method=False, samples=S.bilinear2d_backward,
    torch_name=_ATEN + "upsample_bilinear2d_backward")
def upsample_bilinear2d_backward(grad_output: Tensor, output_size: Any, input_size: Any,
                                 align_corners: bool = False, scales_h: float | None = None,
                                 scales_w: float | None = None) -> Tensor:
    return _down(grad_output, _back_plan("upsample_bilinear2d", "linear", 2, grad_output,
                                         output_size, input_size, (scales_h, scales_w),
                                         align_corners))


@op(method=False, samples=S.bicubic2d_backward,
    torch_name=_ATEN + "upsample_bicubic2d_backward")
def upsample_bicubic2d_backward(grad_output: Tensor, output_size: Any, input_size: Any,
                                align_corners: bool = False, scales_h: float | None = None,
                                scales_w: float | None = None) -> Tensor:
    return _down(grad_output, _back_plan("upsample_bicubic2d", "cubic", 2, grad_output,
                                         output_size, input_size, (scales_h, scales_w),
                                         align_corners))


@op(method=False, samples=S.trilinear3d_backward,
    torch_name=_ATEN + "upsample_trilinear3d_backward")
def upsample_trilinear3d_backward(grad_output: Tensor, output_size: Any, input_size: Any,
                                  align_corners: bool = False, scales_d: float | None = None,
                                  scales_h: float | None = None,
                                  scales_w: float | None = None) -> Tensor:
    return _down(grad_output, _back_plan("upsample_trilinear3d", "linear", 3, grad_output,
                                         output_size, input_size,
                                         (scales_d, scales_h, scales_w), align_corners))
