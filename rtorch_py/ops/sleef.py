"""libtorch's vectorised float32 exp and log1p, to the last bit.

libtorch's CPU kernels that work on `Vectorized<float>` (log_sigmoid among them)
call Sleef's `expf_u10` and `log1pf_u10`, not the C library: polynomials
evaluated in float32 with fused multiply-adds (every SIMD build libtorch ships
has FMA, so x86-64 and arm64 give the same bits). NumPy's float32 exp and log1p
are as accurate but round differently in about a third of log_sigmoid's values
(`tests/test_sleef.py` measures it against PyTorch), which moves the 7th
digit of a mean loss. The functions here follow Sleef's algorithm step by step
(its `sleefsimdsp.c` and double-float helpers `df.h`), on NumPy arrays.
"""
from __future__ import annotations

import numpy as np

_F = np.float32


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 a * b + c rounded once, as an FMA instruction does.

    The product of two float32 is exact in float64; the sum is rounded to odd
    (round to nearest, then, when inexact, the neighbour with an odd last bit),
    which makes the final rounding to float32 the correct one."""
    p = np.multiply(a, b, dtype=np.float64)
    c = np.asarray(c, np.float64)
    s = p + c
    v = s - p
    err = (p - (s - v)) + (c - v)  # the exact error of s (two-sum)
    even = (s.view(np.int64) & 1) == 0
    s = np.where((err != 0) & even, np.nextafter(s, np.copysign(np.inf, err)), s)
    return s.astype(_F)


def _pow2(e: np.ndarray) -> np.ndarray:
    """2**e as float32, for integer e within the normal exponents."""
    return ((e + 127) << 23).astype(np.int32).view(_F)


def expf(d: np.ndarray) -> np.ndarray:
    """Sleef's expf_u10 of a float32 array."""
    d = np.asarray(d, _F)
    finite = np.where(np.isnan(d), _F(0), np.clip(d, _F(-104), _F(100)))  # beyond: 0, inf
    q = np.rint(finite * _F(1.442695040888963407359924681001892137426645954152985934135449406931))
    qf = q.astype(_F)
    s = _fma(qf, _F(-0.693145751953125), finite)  # finite - q ln 2 in two parts
    s = _fma(qf, _F(-1.428606765330187045e-06), s)
    u = np.full(d.shape, _F(0.000198527617612853646278381))
    for c in (0.00139304355252534151077271, 0.00833336077630519866943359,
              0.0416664853692054748535156, 0.166666671633720397949219, 0.5):
        u = _fma(u, s, _F(c))
    u = _F(1) + _fma(s * s, u, s)
    q = q.astype(np.int32)
    half = q >> 1
    u = u * _pow2(half) * _pow2(q - half)  # ldexp in two steps (q may pass 127)
    u = np.where(d < -104, _F(0), u)
    u = np.where(d > 100, _F(np.inf), u)
    return np.where(np.isnan(d), d, u)


def log1pf(d: np.ndarray) -> np.ndarray:
    """Sleef's log1pf_u10 of a float32 array with values in [0, 1] (its core
    approximation; log_sigmoid asks no more of it)."""
    d = np.asarray(d, _F)
    dp1 = d + _F(1)
    e = ((dp1 * _F(1.0 / 0.75)).view(np.int32) >> 23 & 0xFF) - 127  # ilogb(dp1 / 0.75)
    t = _pow2(-e)
    m = _fma(d, t, t - _F(1))  # dp1 / 2**e - 1, without the rounding of dp1
    ef = e.astype(_F)
    # s = e * ln 2 as a double-float (hi, lo)
    ln2_hi, ln2_lo = _F(0.69314718246459960938), _F(-1.904654323148236017e-09)
    s_hi = ln2_hi * ef
    s_lo = _fma(np.full(d.shape, ln2_lo), ef, _fma(np.full(d.shape, ln2_hi), ef, -s_hi))
    # x = m / (2 + m) as a double-float
    den_hi = _F(2) + m
    den_lo = (_F(2) - den_hi) + m
    rec = _F(1) / den_hi
    x_hi = m * rec
    x_lo = _fma(x_hi, _fma(-den_lo, rec, _fma(-den_hi, rec, _F(1))), _fma(m, rec, -x_hi))
    x2 = x_hi * x_hi
    poly = np.full(d.shape, _F(0.3027294874))
    poly = _fma(poly, x2, _F(0.3996108174))
    poly = _fma(poly, x2, _F(0.6666694880))
    # s += 2 x (double-float sum), then s += x^3 poly
    two_hi, two_lo = x_hi * _F(2), x_lo * _F(2)
    total = s_hi + two_hi
    s_lo = (((s_hi - total) + two_hi) + s_lo) + two_lo
    s_hi = total
    tail = (x2 * x_hi) * poly
    total = s_hi + tail
    s_lo = ((s_hi - total) + tail) + s_lo
    return total + s_lo


def log_sigmoid(x: np.ndarray) -> np.ndarray:
    """min(x, 0) - log1p(exp(-|x|)) as libtorch's float32 log_sigmoid kernel."""
    x = np.asarray(x, _F)
    return np.minimum(x, _F(0)) - log1pf(expf(-np.abs(x)))
