"""Arithmetic exactly as libtorch's compiled CPU kernels do it, on NumPy arrays.

- `fma32`/`fma64`: a*b+c rounded once. GCC builds libtorch's AVX2/AVX512
  kernels with FMA and contracts a product feeding a sum into one fused
  instruction, so the kernels round there once, not twice.
- `log_avx2`/`sincos_avx2`: the float32 log and sin/cos of
  `aten/src/ATen/native/cpu/avx_mathfun.h` (Cephes polynomials, after GCC's
  contraction), which the AVX2 normal kernel uses.
- `libm`: glibc's double functions, which libtorch's scalar code calls; NumPy's
  own SIMD log/log1p/exp/tan can differ from glibc's in the last bit.
- `iteration_view`: TensorIterator's element order, in which the serial kernels
  draw one number per element.
"""
from __future__ import annotations

import ctypes
import ctypes.util
from typing import Callable

import numpy as np

f32 = np.float32

# ----------------------------------------------------------------------------
# one rounding for a*b + c

_F32_TIE = np.uint64(1 << 28)          # float64 bits below float32's last bit:
_F32_BELOW = np.uint64((1 << 29) - 1)  # a value exactly halfway between two floats


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple:
    """s, e with s = fl(a + b) and s + e = a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fma32(a, b, c, exact_sum: bool = False) -> np.ndarray:
    """float32 a*b + c rounded once. The product is exact in float64; the float64
    sum can round only onto a float32 tie, where its error breaks the tie (the
    operands are taken again there: the common case makes one float64 array).
    `exact_sum`: the caller knows the float64 sum is exact, so no tie check."""
    s = np.multiply(a, b, dtype=np.float64)
    if np.ndim(c) == 0 or np.shape(c) == s.shape:
        s += c
    else:
        s = s + c
    out = s.astype(f32)
    if exact_sum:
        return out
    ties = (s.view(np.uint64) & _F32_BELOW) == _F32_TIE
    if ties.any():   # (most are exact sums, rounded to even as fma rounds them)
        at = np.flatnonzero(ties)
        p = (np.broadcast_to(a, s.shape).reshape(-1)[at].astype(np.float64) *
             np.broadcast_to(b, s.shape).reshape(-1)[at])
        c = np.broadcast_to(np.asarray(c, np.float64), s.shape).reshape(-1)[at]
        _, err = _two_sum(p, c)
        flat = out.reshape(-1)
        wrong = (err != 0) & ((err > 0) != (flat[at] > s.reshape(-1)[at]))
        flat[at[wrong]] = np.nextafter(flat[at[wrong]],
                                       np.where(err[wrong] > 0, f32(np.inf), f32(-np.inf)))
    return out


def _split(a: np.ndarray) -> tuple:
    t = a * 134217729.0                # 2^27 + 1 (Veltkamp)
    hi = t - (t - a)
    return hi, a - hi


def fma64(a, b, c) -> np.ndarray:
    """float64 a*b + c rounded once: the product split exactly (Dekker), the
    three parts summed without error but for the last rounding."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    pe = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s, se = _two_sum(p, c)
    t, te = _two_sum(se, pe)
    out, rest = _two_sum(s, t)
    # out + rest + te is exact: te decides only when rest is a tie
    neighbour = np.nextafter(out, np.where(rest > 0, np.inf, -np.inf))
    tie = (np.abs(rest) * 2 == np.abs(neighbour - out)) & (te != 0) & (
        np.sign(te) == np.sign(rest))
    return np.where(tie, neighbour, out)


# ----------------------------------------------------------------------------
# avx_mathfun.h's float32 log and sincos, with GCC's contractions

_LOG_POLY = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
             1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
             3.3333331174E-1)
_MIN_NORMAL = np.array(0x00800000, np.uint32).view(f32)


def log_avx2(x: np.ndarray, on_grid: bool = False) -> np.ndarray:
    """log256_ps: split x into 2^e * m with m in [sqrt(1/2), sqrt(2)), then a
    degree-9 polynomial in m - 1. `on_grid`: x is a multiple of 2^-24 in
    (0, 1] (Box-Muller's 1 - u), where the polynomial's float64 sums are all
    exact (a test checks every such x), so its fused steps need no tie check."""
    invalid = x <= 0
    bits = np.maximum(x, _MIN_NORMAL).view(np.uint32)
    e = ((bits >> 23).astype(np.int32) - 0x7F).astype(f32) + f32(1)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(f32)   # in [0.5, 1)
    small = m < f32(0.707106781186547524)
    e = e - small.astype(f32)
    m = (m - f32(1)) + np.where(small, m, f32(0))
    z = m * m
    y = fma32(f32(_LOG_POLY[0]), m, f32(_LOG_POLY[1]), on_grid)
    for coef in _LOG_POLY[2:]:
        y = fma32(y, m, f32(coef), on_grid)
    y = fma32(y * m, z, e * f32(-2.12194440e-4))
    # fused steps whose product is exact in float32 (z / 2; an exponent of at
    # most 8 bits times ln 2's 9-bit head) round once unfused too
    y = y - z * f32(0.5)
    out = e * f32(0.693359375) + (m + y)
    return np.where(invalid, f32(np.nan), out)


def sincos_avx2(x: np.ndarray, on_grid: bool = False) -> tuple:
    """sincos256_ps: reduce |x| by multiples of pi/4 (octant j, in three
    pieces of pi/4), then the Cephes sine and cosine polynomials. `on_grid`:
    x is float(2 pi) * u for a multiple u of 2^-24 in [0, 1) (Box-Muller's
    angles), where the last reduction step's float64 sum is exact (a test
    checks every such x)."""
    sin_sign = x.view(np.uint32) & np.uint32(0x80000000)
    x = np.abs(x)
    j = (x * f32(1.27323954473516)).astype(np.int32)      # 4/pi, truncated
    j = (j + 1) & ~1
    y = j.astype(f32)
    # the first two pieces of pi/4 have 8 and 11 bits: for octants below 2^13
    # (|x| < 6434; Box-Muller's angles are below 2 pi) their products with y
    # are exact, and the fused steps round once unfused too
    exact = j.size == 0 or int(j.max()) < 1 << 13
    for piece in (-0.78515625, -2.4187564849853515625e-4):
        x = x + y * f32(piece) if exact else fma32(y, f32(piece), x)
    x = fma32(y, f32(-3.77489497744594108e-8), x, on_grid)
    sin_sign = sin_sign ^ ((j & 4) << 29).astype(np.uint32)
    cos_sign = ((~(j - 2) & 4) << 29).astype(np.uint32)
    z = x * x
    cos_poly = fma32(f32(2.443315711809948E-005), z, f32(-1.388731625493765E-003))
    cos_poly = fma32(cos_poly, z, f32(4.166664568298827E-002))
    cos_poly = fma32(cos_poly * z, z, -(z * f32(0.5))) + f32(1)
    sin_poly = fma32(f32(-1.9515295891E-4), z, f32(8.3321608736E-3))
    sin_poly = fma32(sin_poly, z, f32(-1.6666654611E-1))
    sin_poly = fma32(sin_poly * z, x, x)
    first = (j & 2) == 0
    s = np.where(first, sin_poly, cos_poly)
    c = np.where(first, cos_poly, sin_poly)
    return (s.view(np.uint32) ^ sin_sign).view(f32), (c.view(np.uint32) ^ cos_sign).view(f32)


# ----------------------------------------------------------------------------
# glibc's double functions, element by element in C (map over the values)

def libm(fn: Callable[[float], float], x: np.ndarray) -> np.ndarray:
    """fn (math.log, math.log1p, math.exp, math.tan: CPython calls glibc's) on
    every element of a float64 array."""
    x = np.asarray(x, np.float64)
    return np.fromiter(map(fn, x.ravel().tolist()), np.float64, count=x.size).reshape(x.shape)


_libm_so = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


def _c_function(name: str, c_type: type) -> Callable:
    fn = getattr(_libm_so, name)
    fn.restype, fn.argtypes = c_type, (c_type,)
    return fn


_lgamma = _c_function("lgamma", ctypes.c_double)
_FLOAT_FUNCTIONS = {name: _c_function(name, ctypes.c_float) for name in ("logf", "cosf", "sinf")}


def lgamma(x: float) -> float:
    """glibc's lgamma (CPython's math.lgamma is its own)."""
    return _lgamma(x)


def libm_float(name: str, x: np.ndarray) -> np.ndarray:
    """glibc's float function (logf, cosf, sinf) on each element of a small
    float32 array (one C call per element: for tables)."""
    fn = _FLOAT_FUNCTIONS[name]
    return np.array([fn(v) for v in np.asarray(x, f32).tolist()], dtype=f32)


# ----------------------------------------------------------------------------
# TensorIterator's order

def _swap(shape: tuple, strides: list, dim0: int, dim1: int) -> int:
    """TensorIterator::reorder_dimensions' comparison: 1 if dim0 should be
    inner to dim1, -1 if not, 0 if no operand decides."""
    for st in strides:
        s0, s1 = st[dim0], st[dim1]
        if s0 == 0 or s1 == 0:        # a broadcast operand does not decide
            continue
        if s0 != s1:
            return 1 if s0 > s1 else -1
        if shape[dim0] > shape[dim1]:
            return 1
    return 0


def iteration_axes(shape: tuple, *strides: tuple) -> tuple:
    """The axes from outermost to innermost in the order TensorIterator walks
    operands with these strides (the output's first): increasing stride
    innermost, ties left as they are."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))      # perm[0] is the innermost axis
    strides = [list(s) for s in strides]
    for i in range(1, ndim):                  # insertion sort, as libtorch does
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            comparison = _swap(shape, strides, perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    return tuple(reversed(perm))


def iteration_view(out: np.ndarray, *inputs: np.ndarray) -> tuple:
    """(out, inputs...) transposed so that C order is TensorIterator's order for
    an output with `out`'s strides and inputs broadcast to its shape."""
    if out.flags.c_contiguous and not inputs:
        return (out,)
    broadcast = [np.broadcast_to(a, out.shape) for a in inputs]
    axes = iteration_axes(out.shape, out.strides, *(a.strides for a in broadcast))
    return tuple(a.transpose(axes) for a in (out, *broadcast))
