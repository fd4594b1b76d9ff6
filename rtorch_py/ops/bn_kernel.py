"""Batch normalization's training statistics, output and gradients in libtorch's
CPU order and bits, in few passes over memory (FAST PATH, compiled with numba).

libtorch's float kernels (aten/src/ATen/native/cpu/batch_norm_kernel.cpp) for a
contiguous input seen as (N, C, S), S the product of the dims after the channel:

- S > 1 ("contiguous"): each channel on its own. Statistics: a left-to-right sum
  of the channel's values in float64 over (n, i), the mean rounded to the data's
  type, then a float64 sum of the rounded squares (x - mean)^2. Gradients: per
  (n, c) plane, the sums of g and of (x - mean) * g in the data's type, lane by
  lane over SIMD vectors (8 float32 or 4 float64 lanes: AVX2's, which the kernel
  runs here, as its bits show), the last partial vector's products fused (fma);
  then the lanes added as a tree (float32) or in order (float64), and the plane
  sums added up in float64.
- S == 1 (an (N, C) input, which libtorch walks as channels last): per channel,
  running sums down each thread's run of rows in the data's type (the squares and
  products fused), the runs then added in float64: the order depends on the
  thread count, which the caller passes (`torch_get_num_threads()`).
- The output is fma(x, alpha, beta) with alpha = 1/std * w, beta = b - mean * alpha
  (fused too); the input's gradient is ((g - mean(g)) - (x - mean) * k) / std * w,
  the product fused into the subtraction (but in the partial vector of an (N, C)
  input's channels), as the compiler fuses libtorch's vector expressions.

Each kernel reads x (and g) from memory once: a channel's second pass finds its
values in cache. The kernels over planes take a run of channels, so that
`by_channels` spreads them over the threads with the same bits. numba is
imported on the first call, not with the package, and its machine code is
cached (cache=True). Without numba `compiled()` is None and the caller keeps its
NumPy path.
"""
from __future__ import annotations

import types

import numpy as np

from . import parallel

_jit: list = []  # [the compiled kernels (a namespace), or None without numba], once tried
_fma = None  # fused multiply-add, an LLVM intrinsic once numba is loaded


def _fma_intrinsic(typingctx, a, b, c):
    """numba intrinsic: a * b + c rounded once (llvm.fma), three floats of one type."""
    from numba.core import types as nb  # (called by numba while it compiles)
    if not (a == b == c and isinstance(a, nb.Float)):
        return None  # (numba then reports the call as untyped)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return a(a, b, c), codegen


def _inv_std(var_sum, count, eps: float) -> float:
    """libtorch's 1/std from a channel's sum of squared deviations: the variance
    divided in the data's type (count is of that type), 1/sqrt in float64 (0 for
    a zero variance without eps)."""
    var = np.float64(var_sum / count)
    if var == 0 and eps == 0:
        return 0.0
    return 1 / np.sqrt(var + eps)


def _plane_stats(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float, mean: np.ndarray,
                 var_sum: np.ndarray, invstd: np.ndarray, out: np.ndarray, first: int,
                 last: int) -> None:
    """mean, sum of squared deviations, 1/std and the output of x (N, C, S)'s
    channels first..last-1: four channels at a time, so that four float64 sums run
    side by side (each still left to right), their squares and output while the
    four are in cache."""
    n_batch, _, size = x.shape
    count = _rounded(np.empty(1, x.dtype), n_batch * size)
    c = first
    while c < last:
        if c + 4 <= last:
            s0 = s1 = s2 = s3 = 0.0
            for n in range(n_batch):
                for i in range(size):
                    s0 += x[n, c, i]
                    s1 += x[n, c + 1, i]
                    s2 += x[n, c + 2, i]
                    s3 += x[n, c + 3, i]
            mean[c], mean[c + 1], mean[c + 2], mean[c + 3] = (
                s0 / (n_batch * size), s1 / (n_batch * size), s2 / (n_batch * size),
                s3 / (n_batch * size))
            m0, m1, m2, m3 = mean[c], mean[c + 1], mean[c + 2], mean[c + 3]
            s0 = s1 = s2 = s3 = 0.0
            for n in range(n_batch):
                for i in range(size):
                    d0 = x[n, c, i] - m0
                    d1 = x[n, c + 1, i] - m1
                    d2 = x[n, c + 2, i] - m2
                    d3 = x[n, c + 3, i] - m3
                    s0 += d0 * d0
                    s1 += d1 * d1
                    s2 += d2 * d2
                    s3 += d3 * d3
            var_sum[c], var_sum[c + 1], var_sum[c + 2], var_sum[c + 3] = s0, s1, s2, s3
            step = 4
        else:
            s = 0.0
            for n in range(n_batch):
                for i in range(size):
                    s += x[n, c, i]
            mean[c] = s / (n_batch * size)
            m = mean[c]
            s = 0.0
            for n in range(n_batch):
                for i in range(size):
                    d = x[n, c, i] - m
                    s += d * d
            var_sum[c] = s
            step = 1
        for k in range(c, c + step):
            invstd[k] = _inv_std(var_sum[k], count, eps)
            _scale_shift(x, k, mean, invstd, w, b, out)
        c += step


def _row_stats(x: np.ndarray, eps: float, mean: np.ndarray, var_sum: np.ndarray,
               invstd: np.ndarray, threads: int) -> None:
    """The statistics of x (N, C), as libtorch's channels-last kernel with
    `threads` threads: each thread's run of rows summed down in x's type, the
    runs' sums then added in float64 (with no more rows than threads, float64
    sums). (The output is `_affine`'s.)"""
    n_batch, n_chan = x.shape
    total = np.zeros(n_chan)
    if n_batch <= threads:
        for n in range(n_batch):
            for c in range(n_chan):
                total[c] += x[n, c]
        for c in range(n_chan):
            mean[c] = total[c] / n_batch
            total[c] = 0
        for n in range(n_batch):
            for c in range(n_chan):
                d = x[n, c] - mean[c]
                total[c] += d * d
        var_sum[:] = total
        _row_inv_std(var_sum, n_batch, eps, invstd)
        return
    part = np.empty(n_chan, x.dtype)
    step = -(-n_batch // threads)  # (at::parallel_for's chunk a thread)
    for first in range(0, n_batch, step):
        part[:] = 0
        for n in range(first, min(first + step, n_batch)):
            for c in range(n_chan):
                part[c] += x[n, c]
        total += part
    for c in range(n_chan):
        mean[c] = total[c] / n_batch
        total[c] = 0
    for first in range(0, n_batch, step):
        part[:] = 0
        for n in range(first, min(first + step, n_batch)):
            for c in range(n_chan):
                d = x[n, c] - mean[c]
                part[c] = _fma(d, d, part[c])
        total += part
    var_sum[:] = total
    _row_inv_std(var_sum, n_batch, eps, invstd)


def _row_inv_std(var_sum: np.ndarray, count: int, eps: float, invstd: np.ndarray) -> None:
    n = _rounded(np.empty(1, var_sum.dtype), count)
    for c in range(var_sum.shape[0]):
        invstd[c] = _inv_std(var_sum[c], n, eps)


def _scale_shift(x: np.ndarray, c: int, mean: np.ndarray, invstd: np.ndarray, w: np.ndarray,
                 b: np.ndarray, out: np.ndarray) -> None:
    """out = fma(x, alpha, beta) for channel c of x (N, C, S), with alpha = invstd * w
    and beta = fma(-mean, alpha, b)."""
    a = invstd[c] * w[c]
    beta = _fma(-mean[c], a, b[c])
    for n in range(x.shape[0]):
        for i in range(x.shape[2]):
            out[n, c, i] = _fma(x[n, c, i], a, beta)


def _affine(x: np.ndarray, mean: np.ndarray, invstd: np.ndarray, w: np.ndarray,
            b: np.ndarray, out: np.ndarray) -> None:
    """The output of every channel of x (N, C, S) from given statistics."""
    for c in range(x.shape[1]):
        _scale_shift(x, c, mean, invstd, w, b, out)


def _rounded(scratch: np.ndarray, v):
    """v rounded to scratch's type (what a C++ cast to float does)."""
    scratch[0] = v
    return scratch[0]


def _sums8(x: np.ndarray, g: np.ndarray, mean) -> tuple:
    """(sum of g, sum of (x - mean) * g) over one plane of at least 8 float32
    values, as libtorch's reduce_all and map2_reduce_all: 8-lane vectors added
    lane by lane (the last, partial one fused: fma), then the lanes as a tree.
    The lanes are spelled out so that they stay in registers and LLVM's SLP pass
    makes each line of eight one vector operation."""
    full = x.shape[0] - x.shape[0] % 8
    a0, a1, a2, a3, a4, a5, a6, a7 = g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]
    b0, b1, b2, b3 = ((x[0] - mean) * g[0], (x[1] - mean) * g[1],
                      (x[2] - mean) * g[2], (x[3] - mean) * g[3])
    b4, b5, b6, b7 = ((x[4] - mean) * g[4], (x[5] - mean) * g[5],
                      (x[6] - mean) * g[6], (x[7] - mean) * g[7])
    for r in range(1, full // 8):
        a0 += g[8 * r]
        a1 += g[8 * r + 1]
        a2 += g[8 * r + 2]
        a3 += g[8 * r + 3]
        a4 += g[8 * r + 4]
        a5 += g[8 * r + 5]
        a6 += g[8 * r + 6]
        a7 += g[8 * r + 7]
        b0 += (x[8 * r] - mean) * g[8 * r]
        b1 += (x[8 * r + 1] - mean) * g[8 * r + 1]
        b2 += (x[8 * r + 2] - mean) * g[8 * r + 2]
        b3 += (x[8 * r + 3] - mean) * g[8 * r + 3]
        b4 += (x[8 * r + 4] - mean) * g[8 * r + 4]
        b5 += (x[8 * r + 5] - mean) * g[8 * r + 5]
        b6 += (x[8 * r + 6] - mean) * g[8 * r + 6]
        b7 += (x[8 * r + 7] - mean) * g[8 * r + 7]
    tail = x.shape[0] - full
    if tail > 0:
        a0 += g[full]
        b0 = _fma(x[full] - mean, g[full], b0)
    if tail > 1:
        a1 += g[full + 1]
        b1 = _fma(x[full + 1] - mean, g[full + 1], b1)
    if tail > 2:
        a2 += g[full + 2]
        b2 = _fma(x[full + 2] - mean, g[full + 2], b2)
    if tail > 3:
        a3 += g[full + 3]
        b3 = _fma(x[full + 3] - mean, g[full + 3], b3)
    if tail > 4:
        a4 += g[full + 4]
        b4 = _fma(x[full + 4] - mean, g[full + 4], b4)
    if tail > 5:
        a5 += g[full + 5]
        b5 = _fma(x[full + 5] - mean, g[full + 5], b5)
    if tail > 6:
        a6 += g[full + 6]
        b6 = _fma(x[full + 6] - mean, g[full + 6], b6)
    # the tree: lane j with lane j + 4, then j with j + 2, then 0 with 1
    return (((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)),
            ((b0 + b4) + (b2 + b6)) + ((b1 + b5) + (b3 + b7)))


def _sums4(x: np.ndarray, g: np.ndarray, mean) -> tuple:
    """The same for float64: 4-lane vectors, the lanes added in order."""
    full = x.shape[0] - x.shape[0] % 4
    a0, a1, a2, a3 = g[0], g[1], g[2], g[3]
    b0, b1, b2, b3 = ((x[0] - mean) * g[0], (x[1] - mean) * g[1],
                      (x[2] - mean) * g[2], (x[3] - mean) * g[3])
    for r in range(1, full // 4):
        a0 += g[4 * r]
        a1 += g[4 * r + 1]
        a2 += g[4 * r + 2]
        a3 += g[4 * r + 3]
        b0 += (x[4 * r] - mean) * g[4 * r]
        b1 += (x[4 * r + 1] - mean) * g[4 * r + 1]
        b2 += (x[4 * r + 2] - mean) * g[4 * r + 2]
        b3 += (x[4 * r + 3] - mean) * g[4 * r + 3]
    tail = x.shape[0] - full
    if tail > 0:
        a0 += g[full]
        b0 = _fma(x[full] - mean, g[full], b0)
    if tail > 1:
        a1 += g[full + 1]
        b1 = _fma(x[full + 1] - mean, g[full + 1], b1)
    if tail > 2:
        a2 += g[full + 2]
        b2 = _fma(x[full + 2] - mean, g[full + 2], b2)
    return ((a0 + a1) + a2) + a3, ((b0 + b1) + b2) + b3


def _plane_sums(x: np.ndarray, g: np.ndarray, mean, lanes: int) -> tuple:
    """(sum of g, sum of (x - mean) * g) over one plane in vectors of `lanes`
    lanes; a plane shorter than one vector: its lanes added in order."""
    size = x.shape[0]
    if size >= lanes:
        return _sums8(x, g, mean) if lanes == 8 else _sums4(x, g, mean)
    s, d = g[0], (x[0] - mean) * g[0]
    for j in range(1, size):
        s += g[j]
        d += (x[j] - mean) * g[j]
    return s, d


def _plane_grads(x: np.ndarray, g: np.ndarray, mean: np.ndarray, invstd: np.ndarray,
                 w: np.ndarray, train: bool, want_gx: bool, gx: np.ndarray,
                 sum_g: np.ndarray, dot: np.ndarray, first: int, last: int) -> None:
    """Per channel of x (N, C, S) from first to last-1: the sums of g and of
    (x - mean) * g into sum_g and dot (float64), then, if wanted, the input's
    gradient into gx while the channel's values are still in cache."""
    n_batch, _, size = x.shape
    scratch = np.empty(1, x.dtype)
    count = _rounded(scratch, n_batch * size)
    for c in range(first, last):
        m = mean[c]
        s = 0.0
        d = 0.0
        for n in range(n_batch):
            # Vectorized<float>, <double>: AVX2's, as libtorch's kernel runs here
            a, b = _plane_sums(x[n, c], g[n, c], m, 8 if x.itemsize == 4 else 4)
            s += a
            d += b
        sum_g[c], dot[c] = s, d
        if not want_gx:
            continue
        sc, wc = invstd[c], w[c]
        if train:
            k = _rounded(scratch, d) * sc * sc / count
            gm = _rounded(scratch, s / (n_batch * size))
            for n in range(n_batch):
                for i in range(size):
                    gx[n, c, i] = _fma(m - x[n, c, i], k, g[n, c, i] - gm) * sc * wc
        else:
            for n in range(n_batch):
                for i in range(size):
                    gx[n, c, i] = g[n, c, i] * sc * wc


def _row_grads(x: np.ndarray, g: np.ndarray, mean: np.ndarray, invstd: np.ndarray,
               w: np.ndarray, train: bool, want_gx: bool, gx: np.ndarray,
               sum_g: np.ndarray, dot: np.ndarray, threads: int) -> None:
    """The same for x (N, C): each thread's run of rows summed down in x's type,
    the runs' sums added in float64 and rounded to x's type."""
    n_batch, n_chan = x.shape
    acc = np.zeros(n_chan, x.dtype)
    acc2 = np.zeros(n_chan, x.dtype)
    part = np.empty(n_chan, x.dtype)
    part2 = np.empty(n_chan, x.dtype)
    sum_g[:] = 0
    dot[:] = 0
    step = -(-n_batch // threads)
    for first in range(0, n_batch, step):
        part[:] = 0
        part2[:] = 0
        for n in range(first, min(first + step, n_batch)):
            for c in range(n_chan):
                part[c] += g[n, c]
                part2[c] = _fma(x[n, c] - mean[c], g[n, c], part2[c])
        sum_g += part
        dot += part2
    acc[:] = sum_g  # (libtorch keeps the totals in x's type)
    acc2[:] = dot
    sum_g[:] = acc
    dot[:] = acc2
    if not want_gx:
        return
    count = _rounded(part, n_batch)
    for c in range(n_chan):  # k and the mean of g per channel, in x's type
        acc2[c] = acc2[c] * invstd[c] * invstd[c] / count
        acc[c] = acc[c] / count
    fused = n_chan - n_chan % (8 if x.itemsize == 4 else 4)  # (the tail vector's is not)
    for n in range(n_batch):
        for c in range(n_chan):
            if not train:
                gx[n, c] = g[n, c] * invstd[c] * w[c]
            elif c < fused:
                gx[n, c] = _fma(mean[c] - x[n, c], acc2[c], g[n, c] - acc[c]) * invstd[c] * w[c]
            else:
                gx[n, c] = (g[n, c] - acc[c] - (x[n, c] - mean[c]) * acc2[c]) \
                    * invstd[c] * w[c]


def by_channels(kernel: object, x: np.ndarray, *args: object) -> None:
    """kernel(x, *args, first, last) over runs of x's channels (dim 1), one run a
    thread as `torch_set_num_threads` allows: a channel's work is its own, so
    the bits do not depend on the split."""
    n_chan = x.shape[1]
    parallel.spread(lambda first, last: kernel(x, *args, first, last), n_chan,
                    min(parallel.threads_for(x.size), n_chan))


def compiled() -> types.SimpleNamespace | None:
    """The compiled kernels (plane_stats, row_stats, affine, plane_grads,
    row_grads), or None when numba is not installed. plane_grads is compiled
    at once for C-contiguous writable float32 and float64 arrays (its callers
    pass no other), with LLVM's SLP vectoriser on for it alone (numba has it off
    by default): that turns `_sums8`'s lanes into vector operations, which
    add the same values in the same order (the tests check PyTorch's bits)."""
    if not _jit:
        try:
            import numba
            from numba.extending import intrinsic
        except ImportError:
            _jit.append(None)
        else:
            global _fma, _rounded, _inv_std, _row_inv_std, _scale_shift, _sums8, _sums4, \
                _plane_sums
            _fma = intrinsic(_fma_intrinsic)
            jit = numba.njit(cache=True, nogil=True)
            # the helpers first: the kernels call them by their global names (a plane's
            # sums inlined, so that its lanes meet the SLP pass inside plane_grads)
            inline = numba.njit(cache=True, nogil=True, inline="always")
            _rounded, _inv_std, _row_inv_std, _scale_shift = (
                jit(_rounded), jit(_inv_std), jit(_row_inv_std), jit(_scale_shift))
            _sums8, _sums4, _plane_sums = inline(_sums8), inline(_sums4), inline(_plane_sums)
            grads_types = [f"void({t}[:, :, ::1], {t}[:, :, ::1], {t}[::1], {t}[::1], {t}[::1], "
                           f"b1, b1, {t}[:, :, ::1], f8[::1], f8[::1], i8, i8)"
                           for t in ("f4", "f8")]
            slp = numba.config.SLP_VECTORIZE
            numba.config.SLP_VECTORIZE = 1
            try:
                plane_grads = numba.njit(grads_types, cache=True, nogil=True)(_plane_grads)
            finally:
                numba.config.SLP_VECTORIZE = slp
            _jit.append(types.SimpleNamespace(
                plane_stats=jit(_plane_stats), row_stats=jit(_row_stats),
                affine=jit(_affine), plane_grads=plane_grads, row_grads=jit(_row_grads)))
    return _jit[0]
