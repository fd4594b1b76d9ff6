"""Special functions on NumPy arrays (NumPy has none of them): erf, erfc,
erfinv, lgamma, digamma, polygamma, i0/i1, the incomplete gamma functions.

Each works in float64 (1e-12 relative or better: PyTorch's float64 accuracy,
tests/test_pointwise_math.py) and returns the input's floating dtype. Each
costs a fixed number of NumPy calls, so small tensors stay cheap. Only arrays here: the ops, their
derivatives and their dtypes live in `pointwise.py`.
"""
from __future__ import annotations

import functools
import math

import numpy as np

_2_SQRTPI = 2.0 / math.sqrt(math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _f64(x: np.ndarray) -> np.ndarray:
    """The input as a flat float64 array (0-d ones too: they get `_like`'s shape back)."""
    if np.asarray(x).dtype.kind == "c":
        raise TypeError("this special function is defined here for real tensors only, "
                        "not complex ones")
    return np.asarray(x, dtype=np.float64).reshape(-1)


def _like(out: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The result in the input's shape, and its floating dtype."""
    out = np.asarray(out).reshape(np.shape(x))
    return out.astype(x.dtype, copy=False) if x.dtype.kind == "f" else out


# --------------------------------------------------------------------------
# Sums over a run of shifted arguments, sum_k f(x + k) for k < K: one 2-d NumPy
# call for small arrays (the per-call cost dominates there), a loop for large ones.

def _shift_sum(f, x: np.ndarray, K: int) -> np.ndarray:
    if K <= 0:
        return np.zeros_like(x)
    if x.size * K <= 1 << 16:
        return f(x[..., None] + np.arange(K, dtype=np.float64)).sum(axis=-1)
    total = np.zeros_like(x)
    for k in range(K):
        total += f(x + k)
    return total


# --------------------------------------------------------------------------
# erf and erfc: a series where |x| < 2.5, a continued fraction in the tails

_ERF_SPLIT = 2.5
_ERF_TERMS = 70    # the series' terms for |x| < 2.5 (the last ones < 1e-17 of the sum)
_ERFC_DEPTH = 40   # the continued fraction's depth for x >= 2.5 (converged to 3e-16)
_BLOCK = 32768     # elements per block of a large array (its temporaries stay in cache)


def _erf_series(x: np.ndarray, large: bool | None = None) -> np.ndarray:
    """erf(x) = 2/sqrt(pi) exp(-x^2) sum_n 2^n x^(2n+1) / (2n+1)!! (all terms of one
    sign: no cancellation). Large arrays (`large`: a block of one) take the fast path."""
    if large is None:
        large = x.size * _ERF_TERMS > 1 << 16
    if large:
        return _erf_taylor(x)
    x2 = 2 * (x * x)
    odd = np.arange(3, 2 * _ERF_TERMS + 3, 2, dtype=np.float64)
    total = 1 + np.cumprod(x2[..., None] / odd, axis=-1).sum(axis=-1)
    return _2_SQRTPI * np.exp(-x * x) * x * total


# Fast path for large arrays: erf's Taylor polynomial (degree 12) about the nearest
# of the centres 0, 1/32, ..., 2.5, whose coefficients come from the series above
# (erf(c)) and from erf's derivatives, 2/sqrt(pi) exp(-c^2) (-1)^(n-1) H_(n-1)(c)
# with H the Hermite polynomials. |x - c| <= 1/64 makes the remainder < 1e-20: as
# accurate as the series, with 12 multiply-adds in place of its 70 terms.
_TAYLOR_STEP = 1 / 32
_TAYLOR_DEGREE = 12
_taylor_table: list = []


def _erf_taylor_table() -> np.ndarray:
    """(degree + 1, centres): row n holds the n-th Taylor coefficient at each centre."""
    if not _taylor_table:
        c = np.arange(0, _ERF_SPLIT + _TAYLOR_STEP, _TAYLOR_STEP)
        rows = [_erf_series(c, large=False)]
        gauss = _2_SQRTPI * np.exp(-c * c)
        h_prev, h = np.zeros_like(c), np.ones_like(c)  # H_(-1) (unused), H_0
        factorial = 1.0
        for n in range(1, _TAYLOR_DEGREE + 1):
            factorial *= n
            rows.append((-1) ** (n - 1) * gauss * h / factorial)
            h_prev, h = h, 2 * c * h - 2 * (n - 1) * h_prev  # H_n from H_(n-1), H_(n-2)
        _taylor_table.append(np.array(rows))
    return _taylor_table[0]


def _erf_taylor(x: np.ndarray) -> np.ndarray:
    """erf(x) for |x| < 2.5 (odd: computed at |x|)."""
    table = _erf_taylor_table()
    a = np.abs(x)
    at = np.rint(a * (1 / _TAYLOR_STEP)).astype(np.intp)
    dx = a - at * _TAYLOR_STEP
    out = table[_TAYLOR_DEGREE].take(at)
    for n in range(_TAYLOR_DEGREE - 1, -1, -1):
        out = out * dx + table[n].take(at)
    return np.copysign(out, x)


def _erfc_fraction(x: np.ndarray) -> np.ndarray:
    """erfc(x) for x >= 2.5: exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))."""
    f = x.copy()
    for k in range(_ERFC_DEPTH, 0, -1):
        f = x + (k / 2) / f
    return np.exp(-x * x) / (math.sqrt(math.pi) * f)


def _blockwise(f, d: np.ndarray) -> np.ndarray:
    """f(d) of a flat float64 array, a block at a time when it is large (fast path:
    NumPy's passes over a large array are memory-bound; f is elementwise, and is told
    that the array is large, so each block takes erf's fast path as the whole would)."""
    if d.size <= _BLOCK:
        return f(d, None)
    out = np.empty_like(d)
    for start in range(0, d.size, _BLOCK):
        out[start:start + _BLOCK] = f(d[start:start + _BLOCK], True)
    return out


def _erf_parts(d: np.ndarray, upper: bool, large: bool | None = None) -> np.ndarray:
    a = np.abs(d)
    small = a < _ERF_SPLIT
    if small.all():  # (the common case: no tails)
        s = _erf_series(d, large)
        return 1 - s if upper else s
    out = np.full_like(d, np.nan)
    if small.any():
        s = _erf_series(d[small], large)
        out[small] = 1 - s if upper else s
    big = ~small & ~np.isnan(d)
    if big.any():
        tail = _erfc_fraction(a[big])
        db = d[big]
        out[big] = np.where(db > 0, tail, 2 - tail) if upper else np.copysign(1 - tail, db)
    return out


def erf(x: np.ndarray) -> np.ndarray:
    return _like(_blockwise(lambda d, large: _erf_parts(d, False, large), _f64(x)),
                 np.asarray(x))


def erfc(x: np.ndarray) -> np.ndarray:
    return _like(_blockwise(lambda d, large: _erf_parts(d, True, large), _f64(x)),
                 np.asarray(x))


# Acklam's rational approximation of the normal quantile (relative error < 1.2e-9),
# the first guess that one Halley step on erf/erfc then makes exact (the error cubes).
_ACKLAM_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
_ACKLAM_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
             6.680131188771972e+01, -1.328068155288572e+01)
_ACKLAM_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
_ACKLAM_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
             3.754408661907416e+00)


def _poly(coefs: tuple, x: np.ndarray) -> np.ndarray:
    """Horner's rule, in place in one array."""
    out = np.full_like(x, coefs[0])
    for c in coefs[1:]:
        out *= x
        out += c
    return out


_ACKLAM_SPLIT = 0.02425  # p below this: the tail's rational function


def _normal_upper_quantile(p: np.ndarray) -> np.ndarray:
    """z > 0 with P(N > z) = p, for p in (0, 1/2]; the tail's function only where
    it is needed (a few values as nn_init_trunc_normal_ draws them)."""
    q = p - 0.5
    r = q * q
    z = _poly(_ACKLAM_A, r)
    z *= -q
    z /= _poly(_ACKLAM_B + (0.0,), r) + 1
    tail = p < _ACKLAM_SPLIT
    if tail.any():
        t = np.sqrt(-2 * np.log(p[tail]))
        z[tail] = -_poly(_ACKLAM_C, t) / (_poly(_ACKLAM_D + (0.0,), t) + 1)
    return z


_ERFC_FROM = 0.5  # |y| above this: the Halley step on erfc, which keeps 1 - |y|'s digits


def erfinv(y: np.ndarray) -> np.ndarray:
    """The inverse of erf on [-1, 1]: Taylor tables where |y| < 0.959 (see
    `_erfinv_taylor`), else Acklam's quantile as first guess, then a Halley step
    on erf (centre) or on erfc (tails, where 1 - |y| keeps its digits)."""
    return _like(_blockwise(_erfinv_fast, _f64(y)), np.asarray(y))


# Fast path: erfinv's Taylor polynomial (degree 13) about the nearest of the centres
# 0, 1/256, ..., 245/256. With x = erfinv(y), x' = sqrt(pi)/2 exp(x^2) and each
# derivative is P_n(x) x'^n, where P_1 = 1 and P_(n+1) = P_n' + 2 n x P_n; the
# values at the centres come from the Halley method below, refined on libm's erf.
# |y - c| <= 1/512 and 1 - c >= 0.04 keep the remainder under 1e-17.
_ERFINV_STEP = 1 / 256
_ERFINV_CENTRES = 246
_ERFINV_DEGREE = 13
_ERFINV_TABLE_MAX = (_ERFINV_CENTRES - 0.5) * _ERFINV_STEP


@functools.cache
def _erfinv_taylor_table() -> np.ndarray:
    """(degree + 1, centres): row n holds the n-th Taylor coefficient at each centre."""
    c = np.arange(_ERFINV_CENTRES) * _ERFINV_STEP
    x = np.array([_erfinv_refined(v, x0) for v, x0 in zip(c, _erfinv(c, False))])
    slope = math.sqrt(math.pi) / 2 * np.exp(x * x)
    rows = [x]
    p = np.polynomial.Polynomial([1.0])
    power, factorial = np.ones_like(x), 1.0
    for n in range(1, _ERFINV_DEGREE + 1):
        power = power * slope
        factorial *= n
        rows.append(p(x) * power / factorial)
        p = p.deriv() + np.polynomial.Polynomial([0.0, 2.0 * n]) * p
    return np.array(rows)


def _erfinv_refined(y: float, x: float) -> float:
    """x = erfinv(y) to within an ulp: Newton steps on libm's erf, or on its erfc
    where 1 - y keeps the digits (y >= 1/2; the table's centres are exact)."""
    for _ in range(2):
        slope = _2_SQRTPI * math.exp(-x * x)
        x -= ((1 - y) - math.erfc(x)) / slope if y >= 0.5 else (math.erf(x) - y) / slope
    return x


def _erfinv_taylor(a: np.ndarray) -> np.ndarray:
    """erfinv(a) for 0 <= a < _ERFINV_TABLE_MAX."""
    table = _erfinv_taylor_table()
    at = np.rint(a * (1 / _ERFINV_STEP)).astype(np.intp)
    dy = a - at * _ERFINV_STEP
    out = table[_ERFINV_DEGREE].take(at)
    row = np.empty_like(out)
    for n in range(_ERFINV_DEGREE - 1, -1, -1):
        out *= dy
        out += table[n].take(at, out=row)
    return out


def _erfinv_fast(d: np.ndarray, large: bool | None) -> np.ndarray:
    a = np.abs(d)
    central = a < _ERFINV_TABLE_MAX  # (NaN is not)
    if central.all():  # the common case
        return np.copysign(_erfinv_taylor(a), d)
    out = np.empty_like(d)
    out[central] = np.copysign(_erfinv_taylor(a[central]), d[central])
    rest = ~central
    out[rest] = _erfinv(d[rest], large)
    return out


def _erfinv(d: np.ndarray, large: bool | None) -> np.ndarray:
    a = np.abs(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = (a > 0) & (a < 1)
        every = inside.all()  # (the common case: no 0, ±1, NaN or out of range)
        ai = a if every else a[inside]
        x = _normal_upper_quantile((1 - ai) / 2)
        x *= 1 / math.sqrt(2)
        f = _erf_parts(x, False, large)  # erf(x) - a, a Halley step's residual
        f -= ai
        tail = ai > _ERFC_FROM
        if tail.any():
            f[tail] = (1 - ai[tail]) - _erf_parts(x[tail], True, large)
        ratio = f / (_2_SQRTPI * np.exp(-x * x))
        x -= ratio / (1 + x * ratio)
        if every:
            return np.copysign(x, d)
        out = np.where(a == 1, np.inf, np.where(a > 1, np.nan, 0.0))
        out[inside] = x
    out = np.copysign(out, d)
    out[np.isnan(d)] = np.nan
    return out


# --------------------------------------------------------------------------
# The gamma family. lgamma and digamma: Lanczos' approximation (g = 7, 9 terms:
# about 1e-15 relative for Gamma) and its derivative from 1/2 up, the reflection
# formulas below. polygamma: the Hurwitz zeta function.

_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)
# Bernoulli numbers B_2, B_4, ... for the Hurwitz zeta tail
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330)


_LANCZOS_C = np.array(_LANCZOS[1:])
_LANCZOS_I = np.arange(1.0, 9.0)


def _lanczos_sums(z: np.ndarray, derivative: bool = False) -> tuple:
    """(w, A, A') at w = z - 1: A = c0 + sum_i c_i / (w + i), A' its derivative
    (None unless asked)."""
    w = z - 1
    if 0 < w.ndim and w.size <= 1 << 13:  # small: two matrix products instead of a loop
        inv = 1 / (w[..., None] + _LANCZOS_I)
        return w, _LANCZOS[0] + inv @ _LANCZOS_C, \
            -(inv * inv) @ _LANCZOS_C if derivative else None
    a = np.full_like(w, _LANCZOS[0])
    da = np.zeros_like(w) if derivative else None
    for i in range(1, 9):
        inv = 1 / (w + i)
        a += _LANCZOS[i] * inv
        if derivative:
            da -= _LANCZOS[i] * inv * inv
    return w, a, da


def _lgamma_half_up(z: np.ndarray) -> np.ndarray:
    """log Gamma(z) for z >= 1/2."""
    w, a, _ = _lanczos_sums(z)
    t = w + 7.5
    return _HALF_LOG_2PI + (w + 0.5) * np.log(t) - t + np.log(a)


def _digamma_half_up(z: np.ndarray) -> np.ndarray:
    w, a, da = _lanczos_sums(z, derivative=True)
    t = w + 7.5
    return np.log(t) - 7 / t + da / a


def _sinpi(v: np.ndarray) -> np.ndarray:
    """sin(pi v), exact at the integers and accurate for large |v|."""
    r = v - 2 * np.round(v / 2)  # in [-1, 1]
    return np.sin(math.pi * r)


def _tanpi(v: np.ndarray) -> np.ndarray:
    r = v - np.round(v)  # in [-1/2, 1/2]
    return np.tan(math.pi * r)


def lgamma(x: np.ndarray) -> np.ndarray:
    """log |Gamma(x)|; +inf at 0, the negative integers and +-inf."""
    d = _f64(x)
    with np.errstate(all="ignore"):
        low = d < 0.5
        if not low.any():  # (the common case)
            out = _lgamma_half_up(d)
        else:
            # reflection: Gamma(x) Gamma(1-x) = pi / sin(pi x)
            lg = _lgamma_half_up(np.where(low, 1 - d, d))
            out = np.where(low, math.log(math.pi) - np.log(np.abs(_sinpi(d))) - lg, lg)
            out[low & (d == np.floor(d))] = np.inf  # the poles
        out[np.isinf(d)] = np.inf
    return _like(out, np.asarray(x))


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) = d/dx log Gamma(x): -inf at 0 (as PyTorch), NaN at negative integers."""
    d = _f64(x)
    with np.errstate(all="ignore"):
        low = d < 0.5
        if not low.any():  # (the common case)
            out = _digamma_half_up(d)
        else:
            dg = _digamma_half_up(np.where(low, 1 - d, d))
            out = np.where(low, dg - math.pi / _tanpi(d), dg)
            out[low & (d == np.floor(d))] = np.nan  # the poles
        out[d == -np.inf] = np.nan
    zero = d == 0
    out[zero] = np.copysign(np.inf, -d[zero])  # -inf at +0, +inf at -0 (as PyTorch)
    out[d == np.inf] = np.inf
    return _like(out, np.asarray(x))


def _hurwitz_zeta(s: int, q: np.ndarray) -> np.ndarray:
    """zeta(s, q) = sum_k (q + k)^-s for an integer s >= 2: the first K terms summed
    directly (K the same for every element, so that q + K >= 15 + s), then
    Euler-Maclaurin's tail at z = q + K."""
    if q.size == 0:
        return q.copy()
    K = max(0, math.ceil(15 + s - float(np.min(q))))
    z = q + K
    tail = z ** (1 - s) / (s - 1) + 0.5 * z ** -s
    # sum_j B_2j / (2j)! * s (s+1) ... (s+2j-2) * z^(-s-2j+1)
    rising = float(s)              # s (s+1) ... (s+2j-2), for j = 1
    fact = 2.0                     # (2j)!
    zpow = z ** (-s - 1)
    for j, b in enumerate(_BERNOULLI, start=1):
        tail = tail + b / fact * rising * zpow
        rising *= (s + 2 * j - 1) * (s + 2 * j)
        fact *= (2 * j + 1) * (2 * j + 2)
        zpow = zpow / (z * z)
    return _shift_sum(lambda v: v ** -s, q, K) + tail


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n+1, x) for n >= 1."""
    if n == 0:
        return digamma(x)
    d = _f64(x)
    with np.errstate(all="ignore"):
        finite = np.isfinite(d)
        out = np.full_like(d, np.nan)
        out[finite] = (-1.0) ** (n + 1) * math.factorial(n) * _hurwitz_zeta(n + 1, d[finite])
        pole = (d <= 0) & (d == np.floor(d))
        out = np.where(pole, np.inf if n % 2 else -np.inf, out)
        out[d == np.inf] = 0.0
    return _like(out, np.asarray(x))


# --------------------------------------------------------------------------
# Modified Bessel functions of the first kind, orders 0 and 1 (i0 and its
# derivative i1): the power series where |x| <= 30, the asymptotic series above.

def _bessel_i(order: int, x: np.ndarray) -> np.ndarray:
    d = _f64(x)
    a = np.abs(d)
    out = np.empty_like(d)
    small = a <= 30
    h = a[small] / 2
    term = h ** order / math.factorial(order)  # k = 0: (x/2)^v / (0! v!)
    total = term.copy()
    for k in range(1, 120):
        term = term * h * h / (k * (k + order))
        total += term
        if not np.any(term > 1e-17 * total):
            break
    out[small] = total
    big = ~small & ~np.isnan(d)
    z = a[big]
    mu = 4.0 * order * order
    term = np.ones_like(z)
    total = np.ones_like(z)
    for k in range(1, 20):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8 * z)
        total += term
    with np.errstate(over="ignore"):
        out[big] = np.exp(z) / np.sqrt(2 * math.pi * z) * total
    out[np.isnan(d)] = np.nan
    if order % 2:
        out = np.copysign(out, d)  # i1 is odd
    return _like(out, np.asarray(x))


def i0(x: np.ndarray) -> np.ndarray:
    return _bessel_i(0, x)


def i1(x: np.ndarray) -> np.ndarray:
    return _bessel_i(1, x)


# --------------------------------------------------------------------------
# The regularized incomplete gamma functions P(a, x) (igamma) and Q(a, x) = 1 - P
# (igammac): a series where x < a + 1, a continued fraction (modified Lentz)
# for Q elsewhere, each computing the smaller of the two without cancellation.

def _lgamma_any(a: np.ndarray) -> np.ndarray:
    return lgamma(a) if a.size else a


def _gamma_p_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    term = 1 / a
    total = term.copy()
    ap = a.copy()
    for _ in range(5000):
        ap = ap + 1
        term = term * x / ap
        total += term
        if not np.any(np.abs(term) > 1e-16 * np.abs(total)):
            break
    with np.errstate(divide="ignore"):
        return total * np.exp(-x + a * np.log(x) - _lgamma_any(a))


def _gamma_q_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    tiny = 1e-300
    b = x + 1 - a
    c = np.full_like(x, 1 / tiny)
    d = 1 / b
    h = d.copy()
    for i in range(1, 5000):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1 / d
        delta = d * c
        h = h * delta
        if not np.any(np.abs(delta - 1) > 1e-16):
            break
    return np.exp(-x + a * np.log(x) - _lgamma_any(a)) * h


def _incomplete_gamma(a: np.ndarray, x: np.ndarray, upper: bool) -> np.ndarray:
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    shape = a.shape
    a, x = a.reshape(-1), x.reshape(-1)
    out = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        ok = (a >= 0) & (x >= 0)
        zero_a = ok & (a == 0)
        out[zero_a & (x > 0)] = 0.0 if upper else 1.0
        zero_x = ok & (x == 0) & (a > 0)
        out[zero_x] = 1.0 if upper else 0.0
        inf_x = ok & (x == np.inf) & (a > 0)
        out[inf_x] = 0.0 if upper else 1.0
        rest = ok & (a > 0) & (x > 0) & (x < np.inf)
        series = rest & (x < a + 1)
        p = _gamma_p_series(a[series], x[series])
        out[series] = 1 - p if upper else p
        frac = rest & ~series
        q = _gamma_q_fraction(a[frac], x[frac])
        out[frac] = q if upper else 1 - q
    return out.reshape(shape)


def gammainc(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x) = gamma(a, x) / Gamma(a), the regularized lower incomplete gamma."""
    return _incomplete_gamma(a, x, upper=False)


def gammaincc(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma."""
    return _incomplete_gamma(a, x, upper=True)
