"""The array work of the nn primitives (their ops, with derivatives, are in
`nn_primitives.py`): convolutions as one matmul per group on im2col columns,
never a loop over pixels (float32 ones through oneDNN where it is installed:
`onednn.py`); pooling windows;
the LSTM layer's time loops, forward and backward, on arrays; and the
matrix product everything on the hot path calls (`matmul`).

Only NumPy here: no tensors, no graph.
"""
from __future__ import annotations

from itertools import product

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from . import lstm_kernel, onednn


# --------------------------------------------------------------------------
# Matrix products: every product of the hot path (mm, matmul, bmm, addmm and
# their backwards, linear layers, attention, the LSTM loops) is made here.


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """np.matmul(a, b[, out]). Fast path: float32 products large enough for
    OpenBLAS to wake its threads run on oneDNN's (onednn.matmul), so that a
    step's products and convolutions share one thread pool."""
    res = onednn.matmul(a, b, out)
    if res is not None:
        return res
    return np.matmul(a, b) if out is None else np.matmul(a, b, out=out)


# --------------------------------------------------------------------------
# Distances


def pnorm_distance_grad(diff: np.ndarray, dist: np.ndarray, g: np.ndarray,
                        p: float) -> np.ndarray:
    """d(dist)/d(diff) times g, for dist = ||diff||_p over the last axis (dist and g
    broadcast against diff): libtorch's cases, 0 where the distance is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            return np.zeros_like(diff)
        if p == 1:
            return g * np.sign(diff)
        if p == 2:
            return np.where(dist == 0, 0, g * diff / dist)
        if np.isinf(p):
            return g * np.sign(diff) * (np.abs(diff) == dist)
        if p < 2:
            return np.where((dist == 0) | ((diff == 0) & (p < 1)), 0,
                            np.sign(diff) * np.abs(diff) ** (p - 1) * g / dist ** (p - 1))
        return np.where(dist == 0, 0, diff * np.abs(diff) ** (p - 2) * g / dist ** (p - 1))


# --------------------------------------------------------------------------
# Convolution


def _windows(xp: np.ndarray, k: tuple, stride: tuple, dilation: tuple) -> np.ndarray:
    """(N, C, *S) -> (N, C, *O, *K) strided view of every kernel window."""
    nd = len(k)
    span = tuple((kk - 1) * d + 1 for kk, d in zip(k, dilation))
    w = sliding_window_view(xp, span, axis=tuple(range(2, 2 + nd)))
    key = (slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride) + \
        tuple(slice(None, None, d) for d in dilation)
    return w[key]


def pad_zeros(a: np.ndarray, widths: list) -> np.ndarray:
    """np.pad with zeros, (before, after) per dim: one fill and one copy."""
    out = np.zeros(tuple(n + b + e for n, (b, e) in zip(a.shape, widths)), dtype=a.dtype)
    out[tuple(slice(b, b + n) for n, (b, _) in zip(a.shape, widths))] = a
    return out


# Each convolution is one large matmul per group: im2col copies every window
# of the (padded) input, through a strided view, into one contiguous buffer of
# columns, rows (channel, kernel offset) and columns (sample, output
# position). The forward is weights @ columns, the weight gradient output
# gradient @ columns^T (the same columns), the input gradient with stride 1
# a convolution of the output gradient by the flipped kernels, otherwise
# weights^T @ output gradient added back window by window (col2im: a loop over
# kernel offsets only, each one add of whole strided slices). The batch is taken a
# piece at a time so that the columns stay a few MB (in cache: faster; and
# little memory on top of the activations), in one reused buffer: several
# samples, or, when one sample's columns are larger, a run of rows (the first
# output dim) of one sample, whose products then go straight into the output.
# Half precisions compute in float32 and round once, as libtorch's CPU kernels
# do (its opmath type).

_COLS_BYTES = 4 << 20   # columns per piece of the batch (a few MB measured fastest: caches)


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


def _opmath(dtype: np.dtype) -> np.dtype:
    """The dtype the products and sums are done in: float32 for half precisions
    (bfloat16's kind is V)."""
    return np.dtype(np.float32) if dtype.itemsize == 2 and dtype.kind in "fV" else dtype


def _chunks(n: int, per_sample: int, budget: int | None = None) -> list:
    """Batch ranges whose columns take about `budget` (_COLS_BYTES) each."""
    step = max(1, min(n, (budget or _COLS_BYTES) // max(per_sample, 1)))
    return [(i, min(i + step, n)) for i in range(0, n, step)]


def _pieces(n: int, rows: int, per_sample: int) -> list:
    """(a, b, r0, r1): samples a..b, rows r0..r1 of the first output dim, whose
    columns take about _COLS_BYTES each; whole samples unless one is larger."""
    if per_sample <= _COLS_BYTES or rows <= 1:
        return [(a, b, 0, rows) for a, b in _chunks(n, per_sample)]
    step = max(1, _COLS_BYTES * rows // per_sample)
    return [(a, a + 1, r, min(r + step, rows)) for a in range(n) for r in range(0, rows, step)]


def _one_sample(sample: np.ndarray, r0: int, r1: int, groups: int) -> np.ndarray:
    """Rows r0..r1 of one C-contiguous (Out, *O) sample as a (groups, Out/groups,
    positions) view (slicing only: never a copy)."""
    o, rows = sample.shape[:2]
    per_row = int(np.prod(sample.shape[2:]))
    flat = sample.reshape(groups, o // groups, rows * per_row)
    return flat[:, :, r0 * per_row:r1 * per_row]


class _Columns:
    """im2col of one piece of the batch into a buffer reused across pieces."""

    def __init__(self, xp: np.ndarray, k: tuple, stride: tuple, dilation: tuple, dtype,
                 osz: tuple | None = None) -> None:
        """`osz`: the first output positions only (all that fit by default)."""
        self.k = k
        self.osz = osz or _out_size(xp.shape[2:], k, stride, dilation)
        self.c, self.kk, self.p = xp.shape[1], int(np.prod(k)), int(np.prod(self.osz))
        self.dtype = dtype
        self.ranges = _pieces(xp.shape[0], self.osz[0],
                              self.c * self.kk * self.p * dtype.itemsize)
        most = max(((b - a) * (r1 - r0) for a, b, r0, r1 in self.ranges), default=0)
        self.buf = np.empty(self.c * self.kk * most * (self.p // max(self.osz[0], 1)),
                            dtype=dtype)
        nd = len(k)
        win = _windows(xp, k, stride, dilation)                   # N, C, *O, *K (a view)
        win = win[(slice(None),) * 2 + tuple(slice(0, o) for o in self.osz)]
        self.win = win.transpose((1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,)
                                 + tuple(range(2, 2 + nd)))       # C, *K, N, *O

    def __call__(self, a: int, b: int, r0: int, r1: int, groups: int) -> np.ndarray:
        """Columns of samples a..b, rows r0..r1, (groups, C/groups * prod(K), positions)."""
        shape = (self.c,) + self.k + (b - a, r1 - r0) + self.osz[1:]
        cols = self.buf[:int(np.prod(shape))].reshape(shape)
        rows = (slice(r0, r1),) if r1 - r0 < self.osz[0] else ()  # (whole: copies faster)
        src = self.win[(slice(None),) * (1 + len(self.k)) + (slice(a, b),) + rows]
        np.copyto(cols, src, casting="unsafe")
        return cols.reshape(groups, self.c // groups * self.kk, -1)


def _grad_rows(g: np.ndarray, a: int, b: int, r0: int, r1: int, groups: int,
               dtype) -> np.ndarray:
    """Output gradient (N, Out, *O) of samples a..b, rows r0..r1, as
    (groups, Out/groups, positions): a view of one C-contiguous sample."""
    if b - a == 1 and g.dtype == dtype and g[a].flags.c_contiguous:
        return _one_sample(g[a], r0, r1, groups)
    part = g[a:b, :, r0:r1]
    rows = np.empty((part.shape[1], part.shape[0]) + part.shape[2:], dtype=dtype)
    np.copyto(rows, part.swapaxes(0, 1), casting="unsafe")
    return rows.reshape(groups, g.shape[1] // groups, -1)


def _conv_forward(xp: np.ndarray, w: np.ndarray, stride, dilation, groups) -> np.ndarray:
    """Convolution of the padded input (N, C, *S) by w (Out, C/groups, *K)."""
    low = np.result_type(xp, w)
    dt = _opmath(low)
    n, o, k = xp.shape[0], w.shape[0], tuple(w.shape[2:])
    cols = _Columns(xp, k, tuple(stride), tuple(dilation), dt)
    wg = w.astype(dt, copy=False).reshape(groups, o // groups, -1)
    out = np.empty((n, o) + cols.osz, dtype=low)
    flat = out.reshape(n, o, cols.p)
    per_row = cols.p // max(cols.osz[0], 1)
    for a, b, r0, r1 in cols.ranges:
        c = cols(a, b, r0, r1, groups)
        if b - a == 1 and low == dt:
            # fast path: one sample's products straight into the output
            matmul(wg, c, out=_one_sample(out[a], r0, r1, groups))
            continue
        res = matmul(wg, c).reshape(o, b - a, (r1 - r0) * per_row)
        np.copyto(flat[a:b, :, r0 * per_row:r1 * per_row], res.swapaxes(0, 1),
                  casting="unsafe")
    return out


def _conv_grad_weight(xp: np.ndarray, g: np.ndarray, kshape: tuple, stride, dilation,
                      groups) -> np.ndarray:
    """d(loss)/d(weight) for output gradient `g` (N, Out, *O) and padded input `xp`."""
    low = np.result_type(xp, g)
    dt = _opmath(low)
    o = g.shape[1]
    cols = _Columns(xp, tuple(kshape), tuple(stride), tuple(dilation), dt, tuple(g.shape[2:]))
    # Accumulated transposed, columns @ gradient^T: the product OpenBLAS runs
    # fastest on these shapes (10-50% over gradient @ columns^T, measured, same
    # bits); two weight-sized arrays at most at a time, the sum and one product.
    gwt = part = None
    for a, b, r0, r1 in cols.ranges:
        rows = _grad_rows(g, a, b, r0, r1, groups, dt).swapaxes(-1, -2)
        if gwt is None:
            gwt = matmul(cols(a, b, r0, r1, groups), rows)
            continue
        part = matmul(cols(a, b, r0, r1, groups), rows, out=part)
        gwt += part
    del part
    if gwt is None:                                           # (an empty batch)
        gwt = np.zeros((groups, cols.c // groups * cols.kk, o // groups), dtype=dt)
    gw = gwt.swapaxes(-1, -2).astype(low)
    return gw.reshape((o, xp.shape[1] // groups) + tuple(kshape))


def _conv_scatter(g: np.ndarray, w: np.ndarray, xshape: tuple, stride, dilation,
                  groups) -> np.ndarray:
    """The transpose of `_conv_forward` for the input: (N, Out, *O) -> (N, C, *S)."""
    low = np.result_type(g, w)
    dt = _opmath(low)
    n, o, osz = g.shape[0], g.shape[1], tuple(g.shape[2:])
    c, k = xshape[1], tuple(w.shape[2:])
    p, kk = int(np.prod(osz)), int(np.prod(k))
    wt = w.astype(dt, copy=False).reshape(groups, o // groups, -1).swapaxes(-1, -2)
    out = np.zeros((c, n) + tuple(xshape[2:]), dtype=dt)       # C, N, *S
    for a, b in _chunks(n, c * kk * p * dt.itemsize):
        cols = matmul(wt, _grad_rows(g, a, b, 0, osz[0], groups, dt))  # groups, C/g * K, n * P
        cols = cols.reshape((c, kk, b - a) + osz)
        dst = out[:, a:b]
        for j, offs in enumerate(_offsets(k)):
            dst[_window_key(offs, dilation, osz, stride)] += cols[:, j]
    res = np.empty(xshape, dtype=low)
    np.copyto(res, out.swapaxes(0, 1), casting="unsafe")
    return res


def _conv_grad_input(g: np.ndarray, w: np.ndarray, size: tuple, stride, padding, dilation,
                     groups) -> np.ndarray:
    """The input gradient (N, C, *size) of a convolution of an input of that
    (unpadded) size, for the output gradient g (N, Out, *O); also the forward
    of the transposed convolution."""
    nd = len(size)
    o, cg, k = w.shape[0], w.shape[1], tuple(w.shape[2:])
    # (with many more output channels than input ones, col2im's passes are
    # fewer than the flipped convolution's columns: measured faster from 4x)
    if any(s != 1 for s in stride) or o > 2 * cg * groups:
        full = tuple(s + 2 * p for s, p in zip(size, padding))
        out = _conv_scatter(g, w, (g.shape[0], w.shape[1] * groups) + full, stride, dilation,
                            groups)
        return out[(slice(None), slice(None)) + tuple(slice(p, p + s)
                                                      for p, s in zip(padding, size))]
    # Fast path, stride 1: a plain convolution of g, padded by the kernel's span
    # less the padding, by the flipped kernels with in and out channels swapped
    # (one im2col and one large matmul, instead of col2im's passes).
    wf = w.reshape((groups, o // groups, cg) + k).swapaxes(1, 2)
    flip = (slice(None),) * 2 + (slice(None, None, -1),) * nd
    wf = wf.reshape((groups * cg, o // groups) + k)[flip]
    left = [d * (kk - 1) - p for d, kk, p in zip(dilation, k, padding)]
    right = [s + d * (kk - 1) - q - lf
             for s, d, kk, q, lf in zip(size, dilation, k, g.shape[2:], left)]
    if any(v < 0 for v in left + right):
        g = g[(slice(None),) * 2 + tuple(slice(max(-a, 0), q - max(-b, 0))
                                         for a, b, q in zip(left, right, g.shape[2:]))]
    if any(v > 0 for v in left + right):
        g = pad_zeros(g, [(0, 0)] * 2 + [(max(a, 0), max(b, 0)) for a, b in zip(left, right)])
    return _conv_forward(g, wf, (1,) * nd, dilation, groups)


# The three convolution kernels as the primitives call them, on the unpadded
# input. Fast path, in these three places only: float32 runs through oneDNN
# (ops/onednn.py: libtorch's own convolution library) where it is installed;
# every other dtype, or without the library, im2col above.


def _padded(x: np.ndarray, padding) -> np.ndarray:
    """x (N, C, *S) zero-padded by `padding` on both sides of each spatial dim."""
    return pad_zeros(x, [(0, 0), (0, 0)] + [(p, p) for p in padding]) if any(padding) else x


def conv_forward(x: np.ndarray, w: np.ndarray, stride, padding, dilation, groups,
                 osz: tuple | None = None, bias: np.ndarray | None = None) -> np.ndarray:
    """Convolution of x (N, C, *S), zero-padded by `padding` on both sides, by w
    (Out, C/groups, *K), plus `bias` (Out,) if given; `osz`: only the first
    output positions (all by default)."""
    k = tuple(w.shape[2:])
    full = _out_size(tuple(s + 2 * p for s, p in zip(x.shape[2:], padding)), k, stride,
                     dilation)
    osz = tuple(osz or full)
    # (oneDNN adds the bias inside the kernel, as libtorch's oneDNN convolutions do)
    res = onednn.convolution("forward", x, w, x.shape, w.shape, (x.shape[0], w.shape[0]) + osz,
                             stride, padding, dilation, groups, bias)
    if res is not None:
        return res
    out = _conv_forward(_padded(x, padding), w, stride, dilation, groups)
    out = out if osz == full else out[(slice(None),) * 2 + tuple(slice(0, o) for o in osz)]
    if bias is not None:  # (in place: `out` is the kernels' fresh array, or a view of it)
        np.add(out, bias.reshape((1, -1) + (1,) * len(k)), out=out)
    return out


def conv_grad_input(g: np.ndarray, w: np.ndarray, size: tuple, stride, padding, dilation,
                    groups) -> np.ndarray:
    """The input gradient (N, C, *size) of `conv_forward` for the output gradient g."""
    src = (g.shape[0], w.shape[1] * groups) + tuple(size)
    res = onednn.convolution("input", g, w, src, w.shape, g.shape, stride, padding, dilation,
                             groups)
    if res is not None:
        return res
    return _conv_grad_input(g, w, tuple(size), stride, padding, dilation, groups)


_WEIGHT_GRAD_BYTES = 16 << 20  # input + output gradient a piece of the weight gradient


def conv_grad_weight(x: np.ndarray, g: np.ndarray, kshape: tuple, stride, padding, dilation,
                     groups, bias: bool = False) -> np.ndarray | tuple:
    """The weight gradient (Out, C/groups, *kshape) of `conv_forward` for the
    output gradient g (N, Out, *O), whose sizes may be the first positions only;
    with `bias`, (weight gradient, bias gradient or None: the caller sums g)."""
    wshape = (g.shape[1], x.shape[1] // groups) + tuple(kshape)
    # oneDNN reorders input and output gradient into its layout: a large batch in
    # pieces keeps those copies (a training step's peak of memory) to a piece's size
    n = x.shape[0]
    pieces = max(1, min(n, -(-(x.nbytes + g.nbytes) // _WEIGHT_GRAD_BYTES)))
    bounds = [n * k // pieces for k in range(pieces + 1)]
    # the bias's gradient from the same kernel, as libtorch's (its order of
    # summation: in one piece only)
    want_bias, bias = bias, bias and pieces == 1
    res = None
    for lo, hi in zip(bounds, bounds[1:]):
        part = onednn.convolution("weight", x[lo:hi], g[lo:hi], (hi - lo,) + x.shape[1:], wshape,
                                  (hi - lo,) + g.shape[1:], stride, padding, dilation, groups,
                                  bias)
        if part is None:
            break
        res = part if res is None else np.add(res, part, out=res)
    else:
        return res if bias or not want_bias else (res, None)
    gw = _conv_grad_weight(_padded(x, padding), g, tuple(kshape), stride, dilation, groups)
    return (gw, None) if want_bias else gw


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

# window copies per piece of max pooling's input: 1 MB measured the MNIST pool
# 1.5x faster than one whole copy, a 3x3 stride-1 one ~10% slower
_POOL_BYTES = 1 << 20


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


def _corners(osz: tuple, xshape: tuple, stride, padding) -> tuple:
    """Flat position (in the input plane) of each window's corner, (*O), and
    the row-major strides of the plane."""
    nd = len(osz)
    mult = np.cumprod((1,) + tuple(xshape[2:][::-1]))[:nd][::-1]
    corner = np.zeros(osz, dtype=np.int64)
    for i in range(nd):
        o = np.arange(osz[i]) * stride[i] - padding[i]
        corner = corner + (o * mult[i]).reshape((-1,) + (1,) * (nd - 1 - i))
    return corner, mult


def max_pool_arrays(x: np.ndarray, k, stride, padding, dilation, ceil_mode) -> tuple:
    """For each pooling window, the flat position (in its input plane) of the
    maximum, and the maximum."""
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    extra = _ceil_extra(x.shape[2:], k, stride, padding, dilation, ceil_mode)
    widths = [(0, 0), (0, 0)] + [(p, p + e) for p, e in zip(padding, extra)]
    nd, k = len(k), tuple(k)
    osz = _out_size(tuple(s + b + e for s, (b, e) in zip(x.shape[2:], widths[2:])), k,
                    tuple(stride), tuple(dilation))
    n, c = x.shape[:2]
    corner, mult = _corners(osz, x.shape, stride, padding)
    table = np.array([sum(o * d * m for o, d, m in zip(offs, dilation, mult))
                      for offs in _offsets(k)], dtype=np.int64)
    # Fast path: float32 through oneDNN (in its thread pool), its kernel offsets
    # made flat positions as below. It skips NaN and starts from the lowest
    # finite float: inputs with NaN or infinities (their sum is not finite; nor
    # is a sum that overflows) take the NumPy path.
    fast = onednn.max_pool(x, k, tuple(stride), tuple(padding), tuple(dilation), osz)
    if fast is not None and np.isfinite(np.sum(x)):
        best, offsets = fast
        return np.add(np.take(table, offsets), corner), best
    best = np.empty((n, c) + osz, dtype=x.dtype)
    pos = np.empty((n, c) + osz, dtype=np.int64)
    # A few samples (or channels of one sample) at a time, so that the copy of
    # their windows below stays about a MB on top of the input and output (not
    # kernel-size times the output); each piece's results are then contiguous.
    per_channel = int(np.prod(osz)) * len(table) * x.dtype.itemsize
    if per_channel * c <= _POOL_BYTES:
        pieces = [(a, b, 0, c) for a, b in _chunks(n, per_channel * c, _POOL_BYTES)]
    else:
        step = max(1, _POOL_BYTES // max(per_channel, 1))
        pieces = [(a, a + 1, c0, min(c0 + step, c)) for a in range(n) for c0 in range(0, c, step)]
    nan = x.dtype.kind in "fc"
    for a, b, c0, c1 in pieces:
        part = x[a:b, c0:c1]
        xp = np.pad(part, widths, constant_values=fill) if any(padding) or any(extra) else part
        # Every window as one contiguous copy, kernel offsets first: each offset's
        # pass below then runs on contiguous memory (NumPy's strided loops over a
        # short last axis are many times slower). Without overlap it is one
        # rearranged copy of the input.
        win = _windows(xp, k, tuple(stride), tuple(dilation))      # N, C, *O, *K
        axes = tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2 + nd))
        cols = np.ascontiguousarray(win.transpose(axes)).reshape((-1,) + win.shape[:2 + nd])
        # One pass per kernel offset (argmax over a short last axis is slow in
        # NumPy), arithmetic only (masked copies are many times slower). A larger
        # value or a NaN takes the window, as in torch: the offset kept is the
        # last that did, the largest j with `more`, since j only grows.
        top = best[a:b, c0:c1]
        np.copyto(top, cols[0])
        arg = np.zeros(top.shape, dtype=np.int64)
        for j in range(1, cols.shape[0]):
            v = cols[j]
            more = v > top
            if nan:
                more |= np.isnan(v)
            np.maximum(top, v, out=top)
            np.maximum(arg, more * j, out=arg)
        np.add(np.take(table, arg), corner, out=pos[a:b, c0:c1])
    # (a window's maximum is never padding: padding is at most half a window)
    return pos, best


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
# LSTM: a whole layer (one direction) as one node with several outputs, like
# PyTorch's fused cells. Unrolled with tensor ops it is ~15 nodes per time
# step; here the time loop runs on arrays, forward and backward
# (backpropagation through time), a handful of NumPy calls per step. For
# create_graph the derivative is taken through an unrolled re-run of the
# forward with tensor ops, so every order works.
#
# Inside, the gates are reordered from PyTorch's (i, f, g, o) to (o, i, f, g):
# the three sigmoid gates are then adjacent (one tanh call activates all four
# gates, with sigmoid(z) = (tanh(z / 2) + 1) / 2 and the halving folded into
# the weights, exact in binary floating point), and so are the three gates
# whose gradient is scaled by the cell's gradient (i, f, g).


def _gate_order(hid: int) -> np.ndarray:
    """Rows of PyTorch's (i, f, g, o) weights in the internal order (o, i, f, g)."""
    return np.r_[3 * hid:4 * hid, 0:3 * hid]


def _lstm_forward(xs: np.ndarray, h0: np.ndarray, c0: np.ndarray, wi: np.ndarray,
                  wh: np.ndarray, bias: np.ndarray | None) -> tuple:
    """(T, N, I) input -> per step the activated gates and the cell before it,
    `buf` (T + 1, 5H, N): rows (o, i, f, g, c_{t-1}), the last step holding
    just c_T; tanh of the cells (T, H, N); hidden states (T, N, H).

    The loop works on transposed states (features x batch), so each gate is a
    contiguous block of rows (NumPy's fast loops), and the cell sits under g
    so that (i, f) * (g, c) is one product."""
    steps, n = xs.shape[:2]
    hid = wh.shape[1]
    dt = np.result_type(xs, wh)
    order = _gate_order(hid)
    half = np.ones(4 * hid, dtype=dt)
    half[:3 * hid] = 0.5                                  # the sigmoid gates' z / 2
    wi_s = wi[order] * half[:, None]
    wh_s = wh[order] * half[:, None]
    # all input projections before the loop, (T, 4H, N): one contiguous block a step
    pre = matmul(wi_s, xs.transpose(0, 2, 1))
    if bias is not None:
        pre += (bias[order] * half)[:, None]
    buf = np.empty((steps + 1, 5 * hid, n), dtype=dt)
    tcs = np.empty((steps, hid, n), dtype=dt)
    hs = np.empty((steps, hid, n), dtype=dt)
    prod = np.empty((2 * hid, n), dtype=dt)
    buf[0, 4 * hid:] = c0.T
    h = np.ascontiguousarray(h0.T)
    s3, s4 = 3 * hid, 4 * hid
    ig, fc = prod[:hid], prod[hid:]
    mm, tanh, mul, add = matmul, np.tanh, np.multiply, np.add  # (outputs positional:
    for t in range(steps):                                        # the cheapest call)
        a = buf[t]
        z = a[:s4]
        mm(wh_s, h, z)
        z += pre[t]
        tanh(z, z)
        sig = a[:s3]
        sig *= 0.5
        sig += 0.5
        mul(a[hid:s3], a[s3:], prod)                      # (i * g, f * c)
        ct = buf[t + 1, s4:]
        add(ig, fc, ct)
        tc = tcs[t]
        tanh(ct, tc)
        h = hs[t]
        mul(a[:hid], tc, h)                               # o * tanh(c)
    return buf, tcs, np.ascontiguousarray(hs.transpose(0, 2, 1))


def _lstm_factors(a: np.ndarray, tcs: np.ndarray, hid: int, fac: np.ndarray) -> None:
    """The backward's per-step factors of steps `a` (their slice of `buf`) into
    fac (steps, 5, H, N), each slot made in place (no scratch arrays)."""
    steps, n = a.shape[0], a.shape[2]
    o, i, g = a[:, :hid], a[:, hid:2 * hid], a[:, 3 * hid:4 * hid]
    np.subtract(1, o, out=fac[:, 1])
    fac[:, 1] *= o                            # sigmoid' = s (1 - s)
    fac[:, 1] *= tcs
    s_if = a[:, hid:3 * hid].reshape(steps, 2, hid, n)
    np.subtract(1, s_if, out=fac[:, 2:4])
    fac[:, 2:4] *= s_if
    fac[:, 2:4] *= a[:, 3 * hid:].reshape(steps, 2, hid, n)   # i: g, f: c_{t-1}
    np.multiply(tcs, tcs, out=fac[:, 0])
    np.subtract(1, fac[:, 0], out=fac[:, 0])
    fac[:, 0] *= o
    np.multiply(g, g, out=fac[:, 4])
    np.subtract(1, fac[:, 4], out=fac[:, 4])
    fac[:, 4] *= i


def _lstm_bptt(a, tcs, g_out, live, w_t, dh, dc, dz) -> None:
    """The backward's time loop on NumPy: the gates' gradients into dz, dh and dc
    carried back to the first step (in place).

    Every per-step factor that does not depend on the incoming gradient is made
    for a chunk of steps at once (a few large passes, but not all steps' factors
    held: they would be the step's largest array), so that the loop is one small
    matmul and five products per step (in the input's dtype, as PyTorch does).
    Slots: 0 dc/dh (through h = o tanh c), 1 the o gate's pre-activation / dh,
    2-4 the i, f, g gates' / dc."""
    steps, hid, n = tcs.shape
    f = a[:, 2 * hid:3 * hid]
    chunk = max(1, min(steps, 16))
    fac = np.empty((chunk, 5, hid, n), dtype=dh.dtype)
    via_h = np.empty((hid, n), dtype=dh.dtype)
    mm, mul = matmul, np.multiply
    for first in range((steps - 1) // chunk * chunk, -1, -chunk):  # chunks, the last first
        last = min(steps, first + chunk)
        _lstm_factors(a[first:last], tcs[first:last], hid, fac[:last - first])
        for t in range(last - 1, first - 1, -1):
            if live is not None and live[t]:
                dh += g_out[t].T
            d = dz[:, :, t]
            ft = fac[t - first]
            mul(ft[0], dh, via_h)
            mul(ft[1], dh, d[0])
            dc += via_h
            mul(ft[2:], dc, d[1:])
            dc *= f[t]
            mm(w_t, d.reshape(4 * hid, n), dh)


def _lstm_backward_arrays(g_out, g_h, g_c, xs, h0, wi, wh, buf, tcs, hs,
                          has_bias: bool, needs: tuple = (True,) * 6) -> tuple:
    """Backpropagation through time on what `_lstm_forward` kept; gradients
    for (x, h0, c0, w_ih, w_hh, b) in PyTorch's layout and gate order, None
    for those `needs` says are not wanted (each a large matmul saved)."""
    steps, n, hid = hs.shape
    dt = buf.dtype
    order = _gate_order(hid)
    a = buf[:steps]
    w_t = np.ascontiguousarray(wh[order].T)
    # steps whose output got a gradient (often only the last one is used)
    live = None if g_out is None else g_out.any(axis=(1, 2))
    # (row-major copies: they change in place)
    dh = np.zeros((hid, n), dt) if g_h is None else np.array(g_h.T, dtype=dt, order="C")
    dc = np.zeros((hid, n), dt) if g_c is None else np.array(g_c.T, dtype=dt, order="C")
    # The gates' gradients (o, i, f, g), steps inside each row, so that all steps'
    # gate gradients are one (4H, T * N) matrix without a copy; a step's (4H, N)
    # block is then strided, which BLAS takes as it is
    dz = np.empty((4, hid, steps, n), dt)
    step = lstm_kernel.backward_step()
    if step is not None and (g_out is None or g_out.dtype == dt):
        # FAST PATH: a step's elementwise work in one compiled pass (lstm_kernel.py)
        none, one = np.empty((0, 0), dt), dt.type(1)
        for t in range(steps - 1, -1, -1):
            step(a[t].reshape(5, hid, n), tcs[t], dh, dc,
                 g_out[t] if live is not None and live[t] else none, dz, t, one)
            matmul(w_t, dz[:, :, t].reshape(4 * hid, n), dh)
    else:
        _lstm_bptt(a, tcs, g_out, live, w_t, dh, dc, dz)
    # the gate gradients of all steps as one (4H, T * N) matrix, internal order
    rows = dz.reshape(4 * hid, steps * n)
    back = np.argsort(order)                  # internal order -> PyTorch's
    g_x = matmul(rows.T, wi[order]).reshape(xs.shape) if needs[0] else None
    g_wih = matmul(rows, xs.reshape(steps * n, -1))[back] if needs[3] else None
    g_whh = g_b = None
    if needs[4]:
        h_prev = np.concatenate([h0[None].astype(dt), hs[:-1]], axis=0)
        g_whh = matmul(rows, h_prev.reshape(steps * n, hid))[back]
    if has_bias and needs[5]:
        g_b = rows.sum(axis=1)[back]
    return g_x, dh.T, dc.T, g_wih, g_whh, g_b
