"""Differentiable primitives the nn layers need that the tensor ops lack.

Each is a `Function`: forward and derivative on NumPy arrays (first order only:
asking for a graph of their derivative is an error). Pointwise primitives with
tensor-op derivatives (erf, silu) are registry ops in
`rtorch_py/ops/nn_functional.py`. Convolutions loop over kernel offsets, each
one strided slice and one matmul for the whole batch, never over pixels.
"""
from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..autograd import is_grad_enabled
from ..function import Function
from ..tensor import Tensor, wrap

def _first_order(what: str) -> None:
    """These derivatives run on arrays: refuse to build a graph of them (rather
    than give a wrong second derivative)."""
    if is_grad_enabled():
        raise RuntimeError(f"{what}: second derivatives (create_graph = TRUE) are not "
                           f"supported through {what}; its derivative is computed outside "
                           "autograd")


def _t(arr: np.ndarray, like: Any) -> Tensor:
    """A tensor of `arr` with the dtype of `like` (an array or a dtype)."""
    dt = like.dtype if hasattr(like, "dtype") else like
    return wrap(np.ascontiguousarray(arr, dtype=dt))


class Sparsemax(Function):
    """Euclidean projection onto the simplex along `dim` (Martins & Astudillo)."""

    @staticmethod
    def forward(ctx, x, dim):
        z = np.moveaxis(x.data, dim, -1)
        srt = -np.sort(-z, axis=-1)
        k = np.arange(1, z.shape[-1] + 1, dtype=z.dtype)
        cums = np.cumsum(srt, axis=-1)
        support = 1 + k * srt > cums
        k_max = support.sum(axis=-1, keepdims=True)
        tau = (np.take_along_axis(cums, k_max - 1, axis=-1) - 1) / k_max
        out = np.maximum(z - tau, 0)
        ctx.save_for_backward(dim, out)
        return _t(np.moveaxis(out, -1, dim), x.data)

    @staticmethod
    def backward(ctx, g):
        _first_order("sparsemax")
        dim, out = ctx.saved_variables
        gz = np.moveaxis(g.data, dim, -1)
        nz = out > 0
        mean = (gz * nz).sum(axis=-1, keepdims=True) / nz.sum(axis=-1, keepdims=True)
        return _t(np.moveaxis(nz * (gz - mean), -1, dim), g.data), None


def sparsemax(x: Tensor, dim: int = -1) -> Tensor:
    return Sparsemax.apply(x, dim)


# --------------------------------------------------------------------------
# Padding


def _windows(xp: np.ndarray, k: tuple, stride: tuple, dilation: tuple) -> np.ndarray:
    """(N, C, *S) -> (N, C, *O, *K) strided view of every kernel window."""
    nd = len(k)
    span = tuple((kk - 1) * d + 1 for kk, d in zip(k, dilation))
    w = sliding_window_view(xp, span, axis=tuple(range(2, 2 + nd)))
    key = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride) + \
        tuple(slice(None, None, d) for d in dilation)
    return w[key]


# Each kernel offset is one strided slice of the (padded) input and one
# batched matmul over channels: Python loops over kernel offsets, NumPy over
# pixels (faster here than an im2col copy of every window).


def _offsets(k: tuple):
    return product(*(range(kk) for kk in k))


def _window_key(offs: tuple, dilation: tuple, osz: tuple, stride: tuple) -> tuple:
    """The input positions that kernel offset `offs` meets, for every output position."""
    return (slice(None), slice(None)) + tuple(
        slice(of * d, of * d + (o - 1) * s + 1, s)
        for of, d, o, s in zip(offs, dilation, osz, stride))


def _out_size(size: tuple, k: tuple, stride: tuple, dilation: tuple) -> tuple:
    return tuple((sz - ((kk - 1) * d + 1)) // s + 1
                 for sz, kk, s, d in zip(size, k, stride, dilation))


def _cols(xp: np.ndarray, key: tuple, groups: int) -> np.ndarray:
    """The input values one kernel offset meets, as (groups, C/groups, N * outputs):
    channels first, so one matmul per group covers the whole batch."""
    xs = xp[key]
    n, c = xs.shape[:2]
    return np.ascontiguousarray(xs.swapaxes(0, 1)).reshape(groups, c // groups, -1)


def _conv_forward(xp: np.ndarray, w: np.ndarray, stride, dilation, groups) -> np.ndarray:
    n, c = xp.shape[:2]
    o, k = w.shape[0], w.shape[2:]
    g = groups
    osz = _out_size(xp.shape[2:], k, stride, dilation)
    wg = w.reshape((g, o // g, c // g) + k)
    out = np.zeros((g, o // g, n * int(np.prod(osz))), dtype=np.result_type(xp, w))
    for offs in _offsets(k):
        cols = _cols(xp, _window_key(offs, dilation, osz, stride), g)
        wk = wg[(slice(None),) * 3 + offs]
        # one input channel per group: a broadcast product (BLAS is slow for inner size 1)
        out += wk * cols if c // g == 1 else np.matmul(wk, cols)
    return np.ascontiguousarray(out.reshape((o, n) + osz).swapaxes(0, 1))


def _grad_rows(g: np.ndarray, groups: int) -> np.ndarray:
    """(N, Out, *O) output gradient as (groups, Out/groups, N * outputs)."""
    o = g.shape[1]
    return np.ascontiguousarray(g.swapaxes(0, 1)).reshape(groups, o // groups, -1)


def _conv_grad_weight(xp: np.ndarray, g: np.ndarray, kshape: tuple, stride, dilation,
                      groups) -> np.ndarray:
    """d(loss)/d(weight) for output gradient `g` (N, Out, *O) and padded input `xp`."""
    c = xp.shape[1]
    o, osz = g.shape[1], g.shape[2:]
    gr = _grad_rows(g, groups)
    gw = np.empty((groups, o // groups, c // groups) + tuple(kshape), dtype=g.dtype)
    for offs in _offsets(tuple(kshape)):
        cols = _cols(xp, _window_key(offs, dilation, osz, stride), groups)
        gw[(slice(None),) * 3 + offs] = np.matmul(gr, cols.swapaxes(-1, -2))
    return gw.reshape((o, c // groups) + tuple(kshape))


def _conv_scatter(g: np.ndarray, w: np.ndarray, xshape: tuple, stride, dilation,
                  groups) -> np.ndarray:
    """The transpose of `_conv_forward` for the input: (N, Out, *O) -> (N, C, *S)."""
    n, o, osz = g.shape[0], g.shape[1], g.shape[2:]
    c = xshape[1]
    k = w.shape[2:]
    gr = _grad_rows(g, groups)
    wg = w.reshape((groups, o // groups, c // groups) + k)
    out = np.zeros((xshape[1], xshape[0]) + tuple(xshape[2:]), dtype=g.dtype)  # C, N, *S
    for offs in _offsets(k):
        wk = wg[(slice(None),) * 3 + offs].swapaxes(-1, -2)
        contrib = wk * gr if o // groups == 1 else np.matmul(wk, gr)
        out[_window_key(offs, dilation, osz, stride)] += contrib.reshape((c, n) + osz)
    return np.ascontiguousarray(out.swapaxes(0, 1))


def _tuple(v, nd: int) -> tuple:
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return tuple(int(v[0]) for _ in range(nd))
        if len(v) != nd:
            raise ValueError(f"expected {nd} values, got {len(v)}")
        return tuple(int(i) for i in v)
    return tuple(int(v) for _ in range(nd))


# --------------------------------------------------------------------------
# Pooling


def _ceil_extra(size, k, stride, padding, dilation, ceil_mode) -> list:
    extra = []
    for s, kk, st, p, d in zip(size, k, stride, padding, dilation):
        span = (kk - 1) * d + 1
        n = s + 2 * p - span
        if ceil_mode:
            o = -(-n // st) + 1
            if (o - 1) * st >= s + p:  # the last window must start inside the input
                o -= 1
        else:
            o = n // st + 1
        extra.append(max((o - 1) * st + span - (s + 2 * p), 0))
    return extra


def _flat_index(arg, xshape, k, stride, padding, dilation) -> np.ndarray:
    """Window argmax (the j-th kernel offset) -> flat position in the input plane:
    the window's corner plus offset j, both linear in the coordinates."""
    nd = len(k)
    mult = np.cumprod((1,) + tuple(xshape[2:][::-1]))[:nd][::-1]   # row-major strides
    table = np.array([sum(o * d * m for o, d, m in zip(offs, dilation, mult))
                      for offs in _offsets(tuple(k))], dtype=np.int64)
    corner = np.zeros(arg.shape[2:], dtype=np.int64)
    for i in range(nd):
        o = np.arange(arg.shape[2 + i]) * stride[i] - padding[i]
        corner = corner + (o * mult[i]).reshape((-1,) + (1,) * (nd - 1 - i))
    return corner + table[arg]


def max_positions(x: np.ndarray, k, stride, padding, dilation, ceil_mode) -> np.ndarray:
    """For each pooling window, the flat position (in its input plane) of the maximum."""
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    extra = _ceil_extra(x.shape[2:], k, stride, padding, dilation, ceil_mode)
    widths = [(0, 0), (0, 0)] + [(p, p + e) for p, e in zip(padding, extra)]
    xp = np.pad(x, widths, constant_values=fill) if any(padding) or any(extra) else x
    osz = _out_size(xp.shape[2:], k, stride, dilation)
    # one pass per kernel offset (argmax over a short last axis is slow in NumPy);
    # strictly greater keeps the first maximum, as torch does
    best, arg = None, np.zeros(x.shape[:2] + osz, dtype=np.int64)
    for j, offs in enumerate(_offsets(tuple(k))):
        v = xp[_window_key(offs, dilation, osz, stride)]
        if best is None:
            best = v.copy()
            continue
        more = v > best
        np.copyto(best, v, where=more)
        arg[more] = j
    # (a window's maximum is never padding: padding is at most half a window)
    return _flat_index(arg, x.shape, k, stride, padding, dilation)


def _avg_divisor(size, osz, k, stride, padding, count_include_pad, divisor):
    if divisor:
        return float(divisor)
    # per output position: the window clipped to the padded (or real) input
    parts = []
    for s, o, kk, st, p in zip(size, osz, k, stride, padding):
        start = np.arange(o) * st - p
        end = np.minimum(start + kk, s + p)
        if count_include_pad:
            n = end - start
        else:
            n = np.minimum(end, s) - np.maximum(start, 0)
        parts.append(n)
    div = parts[0]
    for q in parts[1:]:
        div = np.multiply.outer(div, q)
    return div.astype(np.float64)


# --------------------------------------------------------------------------
# LSTM: a whole layer (one direction) as one node. Unrolled with tensor ops it
# is ~15 nodes per time step; here the time loop runs on arrays, forward and
# backward (backpropagation through time), so its derivative is first order only.


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * z) + 1.0)  # no overflow warning for large |z|


class LSTMLayer(Function):
    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        xs, h, c = x.data, h0.data, c0.data
        wi, wh = w_ih.data, w_hh.data
        steps, hid = xs.shape[0], wh.shape[1]
        pre = xs @ wi.T                                  # all input projections at once
        if b_ih is not None:
            pre = pre + b_ih.data + b_hh.data
        gates = np.empty(pre.shape, dtype=pre.dtype)     # activated i, f, g, o per step
        cs = np.empty((steps,) + c.shape, dtype=pre.dtype)
        hs = np.empty((steps,) + h.shape, dtype=pre.dtype)
        for t in range(steps):
            z = pre[t] + h @ wh.T
            a = gates[t]
            a[:, :2 * hid] = _sigmoid(z[:, :2 * hid])
            a[:, 2 * hid:3 * hid] = np.tanh(z[:, 2 * hid:3 * hid])
            a[:, 3 * hid:] = _sigmoid(z[:, 3 * hid:])
            c = a[:, hid:2 * hid] * c + a[:, :hid] * a[:, 2 * hid:3 * hid]
            cs[t] = c
            h = a[:, 3 * hid:] * np.tanh(c)
            hs[t] = h
        ctx.save_for_backward(x, h0, c0, w_ih, w_hh, b_ih is not None, gates, cs, hs)
        return _t(hs, xs), _t(h, xs), _t(c, xs)

    @staticmethod
    def backward(ctx, g_out, g_h, g_c):
        _first_order("lstm")
        x, h0, c0, w_ih, w_hh, has_bias, gates, cs, hs = ctx.saved_variables
        # The loop runs in float64: float32 gradients fading through many steps
        # become subnormal numbers, which CPUs process many times slower.
        wh = w_hh.data.astype(np.float64)
        steps, hid = gates.shape[0], wh.shape[1]
        dt = gates.dtype
        f8 = np.float64
        go = np.zeros(hs.shape, f8) if g_out is None else g_out.data.astype(f8)
        dh = np.zeros(hs.shape[1:], f8) if g_h is None else g_h.data.astype(f8)
        dc = np.zeros(hs.shape[1:], f8) if g_c is None else g_c.data.astype(f8)
        dz = np.empty(gates.shape, f8)
        for t in range(steps - 1, -1, -1):
            a = gates[t]
            i, f, g, o = a[:, :hid], a[:, hid:2 * hid], a[:, 2 * hid:3 * hid], a[:, 3 * hid:]
            dh = dh + go[t]
            tc = np.tanh(cs[t])
            dc = dc + dh * o * (1.0 - tc * tc)
            c_prev = cs[t - 1] if t > 0 else c0.data
            d = dz[t]
            d[:, :hid] = dc * g * i * (1.0 - i)
            d[:, hid:2 * hid] = dc * c_prev * f * (1.0 - f)
            d[:, 2 * hid:3 * hid] = dc * i * (1.0 - g * g)
            d[:, 3 * hid:] = dh * tc * o * (1.0 - o)
            dc = dc * f
            dh = d @ wh
        h_prev = np.concatenate([h0.data[None], hs[:-1]], axis=0)
        flat = dz.reshape(-1, dz.shape[-1])
        g_x = _t((flat @ w_ih.data).reshape(x.shape), dt)
        g_wih = _t(flat.T @ x.data.reshape(-1, x.shape[-1]), dt)
        g_whh = _t(flat.T @ h_prev.reshape(-1, hid), dt)
        g_b = _t(flat.sum(axis=0), dt) if has_bias else None
        return g_x, _t(dh, dt), _t(dc, dt), g_wih, g_whh, g_b, g_b


def lstm_layer(x: Tensor, h0: Tensor, c0: Tensor, w_ih: Tensor, w_hh: Tensor,
               b_ih: Tensor | None, b_hh: Tensor | None) -> tuple:
    """(T, N, I) sequence through one LSTM layer: (outputs, h_T, c_T)."""
    return LSTMLayer.apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh)
