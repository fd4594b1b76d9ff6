"""Special functions on NumPy arrays (NumPy has none of them): erf, erfc,
erfinv, lgamma, digamma, polygamma.

Each works in float64 (to about 1e-14 relative, near PyTorch's float64) and
returns the input's floating dtype. Only arrays here: the ops, their
derivatives and their dtypes live in `pointwise.py`.
"""
from __future__ import annotations

import math

import numpy as np

_2_SQRTPI = 2.0 / math.sqrt(math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _f64(x: np.ndarray) -> np.ndarray:
    if np.asarray(x).dtype.kind == "c":
        raise TypeError("this special function is defined here for real tensors only, "
                        "not complex ones")
    return np.asarray(x, dtype=np.float64)


def _like(out: np.ndarray, x: np.ndarray) -> np.ndarray:
    return out.astype(x.dtype, copy=False) if x.dtype.kind == "f" else out


# --------------------------------------------------------------------------
# erf and erfc: a series where |x| is small, a continued fraction in the tails

_ERF_SPLIT = 2.5


def _erf_series(x: np.ndarray) -> np.ndarray:
    """erf(x) = 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (2n+1)!! (terms all positive:
    no cancellation; converges in < 80 terms for |x| < 2.5)."""
    term = x.copy()
    total = x.copy()
    x2 = 2 * x * x
    for n in range(1, 100):
        term = term * x2 / (2 * n + 1)
        total += term
        if not np.any(np.abs(term) > 1e-17 * np.abs(total)):
            break
    return _2_SQRTPI * np.exp(-x * x) * total


def _erfc_fraction(x: np.ndarray) -> np.ndarray:
    """erfc(x) for x >= 2.5: exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))."""
    f = x.copy()
    for k in range(80, 0, -1):
        f = x + (k / 2) / f
    return np.exp(-x * x) / (math.sqrt(math.pi) * f)


def erf(x: np.ndarray) -> np.ndarray:
    d = _f64(x)
    a = np.abs(d)
    out = np.empty_like(d)
    small = a < _ERF_SPLIT
    out[small] = _erf_series(d[small])
    big = ~small & ~np.isnan(d)
    out[big] = np.copysign(1 - _erfc_fraction(a[big]), d[big])
    out[np.isnan(d)] = np.nan
    return _like(out, np.asarray(x))


def erfc(x: np.ndarray) -> np.ndarray:
    d = _f64(x)
    a = np.abs(d)
    out = np.empty_like(d)
    small = a < _ERF_SPLIT
    out[small] = 1 - _erf_series(d[small])
    big = ~small & ~np.isnan(d)
    tail = _erfc_fraction(a[big])
    out[big] = np.where(d[big] > 0, tail, 2 - tail)
    out[np.isnan(d)] = np.nan
    return _like(out, np.asarray(x))


def erfinv(y: np.ndarray) -> np.ndarray:
    """The inverse of erf on [-1, 1]: a closed-form first guess (Winitzki's),
    then Newton steps on erf (centre) or on erfc (tails, where 1 - |y| keeps
    its digits)."""
    d = _f64(y)
    a = np.abs(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        ln = np.log((1 - a) * (1 + a))
        k = 2 / (math.pi * 0.147) + ln / 2
        x = np.sqrt(np.sqrt(k * k - ln / 0.147) - k)
        tail = a > 0.5
        inside = (a < 1) & (a > 0)
        for _ in range(6):
            dx = np.where(tail, -(erfc(x) - (1 - a)), erf(x) - a) / (_2_SQRTPI * np.exp(-x * x))
            x = np.where(inside, x - dx, x)
    x = np.where(a == 1, np.inf, np.where(a == 0, 0.0, x))
    out = np.where(a > 1, np.nan, np.copysign(x, d))
    return _like(out, np.asarray(y))


# --------------------------------------------------------------------------
# The gamma family: shift the argument up to where the asymptotic (Stirling)
# series is exact in double precision, reflect negative arguments.

_SHIFT = 12.0  # the asymptotic series is used from here up
# B_2k / (2k (2k-1)): Stirling's series for lgamma
_LGAMMA_C = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)
# B_2k / (2k): the series for digamma
_DIGAMMA_C = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
# Bernoulli numbers B_2, B_4, ... for the Hurwitz zeta tail
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330)


def _lgamma_positive(x: np.ndarray) -> np.ndarray:
    """log Gamma(x) for x > 0."""
    prod = np.ones_like(x)
    z = x.copy()
    for _ in range(int(_SHIFT)):
        low = z < _SHIFT
        if not low.any():
            break
        prod = np.where(low, prod * z, prod)
        z = np.where(low, z + 1, z)
    r = 1 / (z * z)
    series = np.zeros_like(z)
    for c in reversed(_LGAMMA_C):
        series = series * r + c
    return (z - 0.5) * np.log(z) - z + _HALF_LOG_2PI + series / z - np.log(prod)


def lgamma(x: np.ndarray) -> np.ndarray:
    """log |Gamma(x)|; +inf at 0 and the negative integers."""
    d = _f64(x)
    out = np.full_like(d, np.inf)  # (also at +-inf)
    with np.errstate(all="ignore"):
        pos = (d > 0) & (d < np.inf)
        out[pos] = _lgamma_positive(d[pos])
        neg = (d < 0) & (d != np.floor(d))
        v = d[neg]
        # reflection: Gamma(x) Gamma(1-x) = pi / sin(pi x)
        out[neg] = math.log(math.pi) - np.log(np.abs(_sinpi(v))) - _lgamma_positive(1 - v)
    out[np.isnan(d)] = np.nan
    return _like(out, np.asarray(x))


def _sinpi(v: np.ndarray) -> np.ndarray:
    """sin(pi v), exact at the integers and accurate for large |v|."""
    r = v - 2 * np.round(v / 2)  # in [-1, 1]
    return np.sin(math.pi * r)


def _tanpi(v: np.ndarray) -> np.ndarray:
    r = v - np.round(v)  # in [-1/2, 1/2]
    return np.tan(math.pi * r)


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    acc = np.zeros_like(x)
    z = x.copy()
    for _ in range(int(_SHIFT)):
        low = z < _SHIFT
        if not low.any():
            break
        acc = np.where(low, acc - 1 / z, acc)
        z = np.where(low, z + 1, z)
    r = 1 / (z * z)
    series = np.zeros_like(z)
    for c in reversed(_DIGAMMA_C):
        series = series * r + c
    return acc + np.log(z) - 0.5 / z - series * r


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) = d/dx log Gamma(x): -inf at 0 (as PyTorch), NaN at negative integers."""
    d = _f64(x)
    out = np.full_like(d, np.nan)
    with np.errstate(all="ignore"):
        pos = (d > 0) & (d < np.inf)
        out[pos] = _digamma_positive(d[pos])
        neg = (d < 0) & (d != np.floor(d))
        v = d[neg]
        out[neg] = _digamma_positive(1 - v) - math.pi / _tanpi(v)
    zero = d == 0
    out[zero] = np.copysign(np.inf, -d[zero])  # -inf at +0, +inf at -0 (as PyTorch)
    out[d == np.inf] = np.inf
    return _like(out, np.asarray(x))


def _hurwitz_zeta(s: int, q: np.ndarray) -> np.ndarray:
    """zeta(s, q) = sum_k (q + k)^-s for an integer s >= 2: the first terms
    summed directly until q + k >= 15, then Euler-Maclaurin's tail."""
    acc = np.zeros_like(q)
    z = q.copy()
    for _ in range(64):
        low = z < 15.0 + s
        if not low.any():
            break
        acc = np.where(low, acc + z ** -s, acc)
        z = np.where(low, z + 1, z)
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
    return acc + tail


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n+1, x) for n >= 1."""
    if n == 0:
        return digamma(x)
    d = _f64(x)
    with np.errstate(all="ignore"):
        out = (-1.0) ** (n + 1) * math.factorial(n) * _hurwitz_zeta(n + 1, d)
        pole = (d <= 0) & (d == np.floor(d))
        out = np.where(pole, np.inf if n % 2 else -np.inf, out)
    out[np.isnan(d)] = np.nan
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
    a, x = np.broadcast_arrays(_f64(a), _f64(x))
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
    return out


def gammainc(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x) = gamma(a, x) / Gamma(a), the regularized lower incomplete gamma."""
    return _incomplete_gamma(a, x, upper=False)


def gammaincc(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma."""
    return _incomplete_gamma(a, x, upper=True)
