"""Batch normalization's training statistics, output and gradients in libtorch's
CPU order, in few passes over memory (FAST PATH, compiled with numba).

libtorch's float kernels (aten/src/ATen/native/cpu/batch_norm_kernel.cpp) for a
contiguous input seen as (N, C, S), S the product of the dims after the channel:

- S > 1 ("contiguous"): each channel on its own. Statistics: a left-to-right sum
  of the channel's values in float64 over (n, i), the mean rounded to the data's
  type, then a float64 sum of the rounded squares (x - mean)^2. Gradients: per
  (n, c) plane, the sums of g and of (x - mean) * g in the data's type over a
  SIMD vector's lanes (16 float32 or 8 float64 here: AVX-512), the lanes then
  added as a tree (float32) or in order (float64); the plane sums added up in
  float64.
- S == 1 (an (N, C) input: "channels last"): per channel, a running sum down the
  rows in the data's type (its one-thread order; libtorch splits the rows across
  threads), then widened to float64.
- The output is fma(x, alpha, beta), alpha and beta one per channel; the input's
  gradient ((g - mean(g)) - (x - mean) * k) * invstd * w with the first
  product fused too, as the compiler fuses libtorch's vector expressions.

Each kernel reads x (and g) once from memory: a channel's passes run while its
values are in cache. numba is imported on the first call, not with the package;
its machine code is cached (cache=True). Without numba `compiled()` is None and
the caller keeps its NumPy path.
"""
from __future__ import annotations

import types

import numpy as np

from . import parallel

_jit: list = []  # [the compiled kernels (a namespace), or None without numba], once tried
_fma = None  # fused multiply-add, an LLVM intrinsic once numba is loaded


def _fma_intrinsic(typingctx, a, b, c):
    """numba intrinsic: a * b + c rounded once (llvm.fma), in a's float type."""
    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return a(a, b, c), codegen


def _plane_stats(x: np.ndarray, mean: np.ndarray, var_sum: np.ndarray, first: int,
                 last: int) -> None:
    """mean and sum of squared deviations of x (N, C, S)'s channels first..last-1:
    four channels at a time, so that four float64 sums run side by side (each
    still left to right)."""
    n_batch, _, size = x.shape
    count = n_batch * size
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
                s0 / count, s1 / count, s2 / count, s3 / count)
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
            c += 4
        else:
            s = 0.0
            for n in range(n_batch):
                for i in range(size):
                    s += x[n, c, i]
            mean[c] = s / count
            m = mean[c]
            s = 0.0
            for n in range(n_batch):
                for i in range(size):
                    d = x[n, c, i] - m
                    s += d * d
            var_sum[c] = s
            c += 1


def _row_stats(x: np.ndarray, mean: np.ndarray, var_sum: np.ndarray) -> None:
    """The same for x (N, C): running sums down the rows in x's type."""
    n_batch, n_chan = x.shape
    acc = np.zeros(n_chan, x.dtype)
    for n in range(n_batch):
        for c in range(n_chan):
            acc[c] += x[n, c]
    for c in range(n_chan):
        mean[c] = np.float64(acc[c]) / n_batch
        acc[c] = 0
    for n in range(n_batch):
        for c in range(n_chan):
            d = x[n, c] - mean[c]
            acc[c] = _fma(d, d, acc[c])
    var_sum[:] = acc


def _affine(x: np.ndarray, mean: np.ndarray, invstd: np.ndarray, w: np.ndarray,
            b: np.ndarray, out: np.ndarray, first: int, last: int) -> None:
    """out = fma(x, alpha, beta) for x (N, C, S)'s channels first..last-1, with
    alpha = invstd * w and beta = fma(-mean, alpha, b)."""
    n_batch, _, size = x.shape
    for c in range(first, last):
        a = invstd[c] * w[c]
        beta = _fma(-mean[c], a, b[c])
        for n in range(n_batch):
            for i in range(size):
                out[n, c, i] = _fma(x[n, c, i], a, beta)


def _rounded(scratch: np.ndarray, v):
    """v rounded to scratch's type (what a C++ cast to float does)."""
    scratch[0] = v
    return scratch[0]


def _lanes_sum(acc: np.ndarray, count: int):
    """libtorch's vec_reduce_all of a vector's first `count` lanes: as a tree
    (float32: halves added, then quarters, ...) when they are all the vector's,
    else in order."""
    if count < acc.shape[0] or acc.itemsize != 4:
        s = acc[0]
        for j in range(1, count):
            s += acc[j]
        return s
    h = acc.shape[0] // 2
    while h > 0:
        for j in range(h):
            acc[j] += acc[j + h]
        h //= 2
    return acc[0]


def _vectors8(x: np.ndarray, g: np.ndarray, mean, acc: np.ndarray, acc2: np.ndarray,
              stop: int) -> None:
    """acc[j] += g[i + j] and acc2[j] += (x[i + j] - mean) * g[i + j] for the
    8-lane vectors i = 8, 16, ... below stop: the lanes spelled out (rows of 8,
    indexed by constants) so that they stay in registers and LLVM's SLP pass
    makes each line of eight one vector operation."""
    xs, gs = x[:stop].reshape(stop // 8, 8), g[:stop].reshape(stop // 8, 8)
    a0, a1, a2, a3, a4, a5, a6, a7 = acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], \
        acc[6], acc[7]
    b0, b1, b2, b3, b4, b5, b6, b7 = acc2[0], acc2[1], acc2[2], acc2[3], acc2[4], acc2[5], \
        acc2[6], acc2[7]
    for r in range(1, stop // 8):
        a0 += gs[r, 0]
        a1 += gs[r, 1]
        a2 += gs[r, 2]
        a3 += gs[r, 3]
        a4 += gs[r, 4]
        a5 += gs[r, 5]
        a6 += gs[r, 6]
        a7 += gs[r, 7]
        b0 += (xs[r, 0] - mean) * gs[r, 0]
        b1 += (xs[r, 1] - mean) * gs[r, 1]
        b2 += (xs[r, 2] - mean) * gs[r, 2]
        b3 += (xs[r, 3] - mean) * gs[r, 3]
        b4 += (xs[r, 4] - mean) * gs[r, 4]
        b5 += (xs[r, 5] - mean) * gs[r, 5]
        b6 += (xs[r, 6] - mean) * gs[r, 6]
        b7 += (xs[r, 7] - mean) * gs[r, 7]
    acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7] = a0, a1, a2, a3, a4, a5, \
        a6, a7
    acc2[0], acc2[1], acc2[2], acc2[3], acc2[4], acc2[5], acc2[6], acc2[7] = b0, b1, b2, b3, \
        b4, b5, b6, b7


def _vectors4(x: np.ndarray, g: np.ndarray, mean, acc: np.ndarray, acc2: np.ndarray,
              stop: int) -> None:
    """The same for 4-lane vectors (float64)."""
    xs, gs = x[:stop].reshape(stop // 4, 4), g[:stop].reshape(stop // 4, 4)
    a0, a1, a2, a3 = acc[0], acc[1], acc[2], acc[3]
    b0, b1, b2, b3 = acc2[0], acc2[1], acc2[2], acc2[3]
    for r in range(1, stop // 4):
        a0 += gs[r, 0]
        a1 += gs[r, 1]
        a2 += gs[r, 2]
        a3 += gs[r, 3]
        b0 += (xs[r, 0] - mean) * gs[r, 0]
        b1 += (xs[r, 1] - mean) * gs[r, 1]
        b2 += (xs[r, 2] - mean) * gs[r, 2]
        b3 += (xs[r, 3] - mean) * gs[r, 3]
    acc[0], acc[1], acc[2], acc[3] = a0, a1, a2, a3
    acc2[0], acc2[1], acc2[2], acc2[3] = b0, b1, b2, b3


def _plane_sums(x: np.ndarray, g: np.ndarray, mean, acc: np.ndarray, acc2: np.ndarray,
                lanes: int):
    """(sum of g, sum of (x - mean) * g) over one plane (S values), in vectors of
    `lanes` lanes as libtorch's reduce_all and map2_reduce_all."""
    size = x.shape[0]
    if size < lanes:
        for j in range(size):
            acc[j] = g[j]
            acc2[j] = (x[j] - mean) * g[j]
        return _lanes_sum(acc, size), _lanes_sum(acc2, size)
    for j in range(lanes):
        acc[j] = g[j]
        acc2[j] = (x[j] - mean) * g[j]
    full = size - size % lanes
    if lanes == 8:
        _vectors8(x, g, mean, acc, acc2, full)
    else:
        _vectors4(x, g, mean, acc, acc2, full)
    for j in range(size - full):
        acc[j] += g[full + j]
        acc2[j] = _fma(x[full + j] - mean, g[full + j], acc2[j])
    return _lanes_sum(acc, lanes), _lanes_sum(acc2, lanes)


def _plane_grads(x: np.ndarray, g: np.ndarray, mean: np.ndarray, invstd: np.ndarray,
                 w: np.ndarray, train: bool, want_gx: bool, gx: np.ndarray,
                 sum_g: np.ndarray, dot: np.ndarray, first: int, last: int) -> None:
    """Per channel of x (N, C, S) from first to last-1: the sums of g and of
    (x - mean) * g into sum_g and dot (float64), then, if wanted, the input's
    gradient into gx while the channel's values are still in cache."""
    n_batch, _, size = x.shape
    lanes = 8 if x.itemsize == 4 else 4  # Vectorized<float>, <double> (AVX2's, as libtorch's)
    acc = np.empty(lanes, x.dtype)
    acc2 = np.empty(lanes, x.dtype)
    count = _rounded(acc, n_batch * size)
    for c in range(first, last):
        m = mean[c]
        s = 0.0
        d = 0.0
        for n in range(n_batch):
            if x.itemsize == 4:  # (the lanes a constant: the loops unrolled)
                a, b = _plane_sums(x[n, c], g[n, c], m, acc, acc2, 8)
            else:
                a, b = _plane_sums(x[n, c], g[n, c], m, acc, acc2, 4)
            s += a
            d += b
        sum_g[c], dot[c] = s, d
        if not want_gx:
            continue
        sc, wc = invstd[c], w[c]
        if train:
            k = _rounded(acc, d) * sc * sc / count
            gm = _rounded(acc, s / (n_batch * size))
            for n in range(n_batch):
                for i in range(size):
                    gx[n, c, i] = _fma(m - x[n, c, i], k, g[n, c, i] - gm) * sc * wc
        else:
            for n in range(n_batch):
                for i in range(size):
                    gx[n, c, i] = g[n, c, i] * sc * wc


def _row_grads(x: np.ndarray, g: np.ndarray, mean: np.ndarray, invstd: np.ndarray,
               w: np.ndarray, train: bool, want_gx: bool, gx: np.ndarray,
               sum_g: np.ndarray, dot: np.ndarray) -> None:
    """The same for x (N, C): running sums down the rows in x's type."""
    n_batch, n_chan = x.shape
    acc = np.zeros(n_chan, x.dtype)
    acc2 = np.zeros(n_chan, x.dtype)
    for n in range(n_batch):
        for c in range(n_chan):
            acc[c] += g[n, c]
            acc2[c] = _fma(x[n, c] - mean[c], g[n, c], acc2[c])
    sum_g[:] = acc
    dot[:] = acc2
    if not want_gx:
        return
    count = _rounded(np.empty(1, x.dtype), n_batch)
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
    by default): that turns `_vectors8`'s lanes into vector operations, which
    add the same values in the same order (the tests check PyTorch's bits)."""
    if not _jit:
        try:
            import numba
            from numba.extending import intrinsic
        except ImportError:
            _jit.append(None)
        else:
            global _fma, _rounded, _lanes_sum, _vectors8, _vectors4, _plane_sums
            _fma = intrinsic(_fma_intrinsic)
            jit = numba.njit(cache=True, nogil=True)
            # the helpers first: the kernels call them by their global names
            _rounded, _lanes_sum, _vectors8, _vectors4, _plane_sums = (
                jit(_rounded), jit(_lanes_sum), jit(_vectors8), jit(_vectors4), jit(_plane_sums))
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
