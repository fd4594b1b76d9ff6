"""libtorch's CPU random transformations (libtorch 2.8 on x86-64), one function
each, drawing from a `Generator` exactly as libtorch draws: the same seed and
the same calls give the same bits.

The in-place forms (`uniform_`, `normal_`, `random_`, `bernoulli_`, ...) fill a
NumPy array of any strides in TensorIterator's order (`kernel_arith.iteration_view`)
and return it. Sources mirrored: aten/src/ATen/core/TransformationHelper.h and
DistributionsHelper.h (per-element transformations),
native/cpu/DistributionTemplates.h (kernels), native/DistributionTemplates.h
(argument handling), native/TensorFactories.cpp (randperm),
native/cpu/MultinomialKernel.cpp and native/Distributions.cpp (multinomial,
poisson).
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Callable

import numpy as np

from . import mt_kernel
from .generator import Generator
from .kernel_arith import (f32, fma32, fma64, iteration_view, lgamma, libm, libm_float, log_avx2,
                           sincos_avx2)

_TWO_PI = 2.0 * math.pi
_BLOCK = 16 * 2048    # values transformed at once (a multiple of 16)


# ----------------------------------------------------------------------------
# dtypes

def _is_bfloat16(dtype: np.dtype) -> bool:
    return dtype.name == "bfloat16"   # ml_dtypes' type


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or _is_bfloat16(dtype)


def _digits(dtype: np.dtype) -> int:
    """std::numeric_limits<T>::digits: significand bits."""
    return 8 if _is_bfloat16(dtype) else {2: 11, 4: 24, 8: 53}[dtype.itemsize]


def _cast(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """static_cast<scalar_t>(value): Half and BFloat16 are built from a float,
    so a double goes through float first."""
    if dtype.itemsize == 2 and _is_float(dtype):
        values = values.astype(np.float32)
    return values.astype(dtype)


def _as_real(out: np.ndarray) -> np.ndarray:
    """view_as_real: a complex array as its (..., 2) real and imaginary parts."""
    return out[..., None].view(out.real.dtype)


def _fill(out: np.ndarray, draw: Callable[[int], np.ndarray]) -> np.ndarray:
    """out's elements, in TensorIterator's order, from draw(n) (cpu_serial_kernel)."""
    if out.size:
        (view,) = iteration_view(out)
        view[...] = draw(view.size).reshape(view.shape)
    return out


# ----------------------------------------------------------------------------
# uniform: uniform_real_distribution<T> / transformation::uniform_real

def _unit_float(gen: Generator, n: int, digits: int, into: np.ndarray | None = None
                ) -> np.ndarray:
    """(random() & (2^digits - 1)) * 2^-digits, in float32, into `into` if given
    (exact: an integer below 2^digits times a power of two)."""
    raw = gen.random32(n)
    raw &= np.uint32((1 << digits) - 1)
    if into is None:
        into = np.empty(n, f32)
    return np.multiply(raw, 2.0 ** -digits, out=into, casting="unsafe")


def _unit_double(gen: Generator, n: int, into: np.ndarray | None = None) -> np.ndarray:
    """(random64() & (2^53 - 1)) * 2^-53, into `into` if given."""
    raw = gen.random64(n)
    raw &= np.uint64((1 << 53) - 1)
    return np.multiply(raw, 2.0 ** -53, out=into)


def _exact_affine32(lo: np.float32, span: np.float32) -> bool:
    """Whether k * (span * 2^-24) + lo is exact in float64 for every k below
    2^24: then one rounding to float32 is fma's (no tie can be mis-broken).
    The values are multiples of the finer of span's ulp / 2^24 and lo's ulp,
    and below |lo| + |span| in magnitude."""
    def ulp_exponent(v: np.float32) -> int:
        return max(math.frexp(float(v))[1] - 24, -149)
    if not span:
        return True   # every value is lo
    grid = ulp_exponent(span) - 24
    if lo:
        grid = min(grid, ulp_exponent(lo))
    return abs(float(lo)) + abs(float(span)) <= math.ldexp(1.0, 53 + grid)


def _fill_blocks(out: np.ndarray, draw: Callable[[np.ndarray], None]) -> np.ndarray:
    """`_fill` for transformations that take the same engine outputs per value
    (so a block at a time gives the same stream): draw(into) fills each block,
    which stays in the CPU's cache."""
    if not out.size:
        return out
    (view,) = iteration_view(out)
    flat = view.reshape(-1) if view.flags.c_contiguous else np.empty(view.size, out.dtype)
    for start in range(0, flat.size, _BLOCK):
        draw(flat[start:start + _BLOCK])
    if not view.flags.c_contiguous:
        view[...] = flat.reshape(view.shape)
    return out


def uniform_(gen: Generator, out: np.ndarray, low: float = 0.0,
             high: float = 1.0) -> np.ndarray:
    """uniform_kernel: x * (to - from) + from (fused), x on the dtype's significand
    bits (float16/bfloat16: 11/8 bits, in float arithmetic after rounding from,
    to and to - from to the dtype, as libtorch 2.8's Half/BFloat16 operators do).
    Complex arrays: their real and imaginary parts."""
    if not low <= high:
        raise ValueError(f"uniform_ expects to return a [from, to) range, but found "
                         f"from={low} > to={high}")
    if out.dtype.kind == "c":
        uniform_(gen, _as_real(out), low, high)
        return out
    dtype = out.dtype
    unit = low == 0 and high == 1    # x * 1 + 0 is x: no arithmetic
    if dtype == np.float64:
        def draw64(into: np.ndarray) -> None:
            if unit:
                _unit_double(gen, into.size, into)
            else:
                into[...] = fma64(_unit_double(gen, into.size), high - low, low)
        return _fill_blocks(out, draw64)
    if dtype == np.float32:
        lo, hi = f32(low), f32(high)
        span = hi - lo
        exact = _exact_affine32(lo, span)
        scale = float(span) * 2.0 ** -24

        def draw32(into: np.ndarray) -> None:
            if unit:
                _unit_float(gen, into.size, 24, into)
            elif exact:   # (fast path: the same value as fma32, one float64 pass)
                raw = gen.random32(into.size)
                raw &= np.uint32((1 << 24) - 1)
                affine = np.multiply(raw, scale)
                affine += float(lo)
                into[...] = affine
            else:
                into[...] = fma32(_unit_float(gen, into.size, 24), span, lo)
        return _fill_blocks(out, draw32)
    lo, hi = np.array([low, high]).astype(np.float32).astype(dtype).astype(f32)
    span = np.asarray(hi - lo).astype(dtype).astype(f32)
    return _fill(out, lambda n: fma32(_unit_float(gen, n, _digits(dtype)), span, lo)
                 .astype(dtype))


# ----------------------------------------------------------------------------
# normal: normal_kernel (Box-Muller on 16 values at a time, or one pair at a time)

def _box_muller_avx2(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """normal_fill_16_AVX2 on rows of 16 float32 uniforms: u[:8] give the
    radius, u[8:] the angle."""
    rows = u.shape[0]
    radius = np.sqrt(f32(-2) * log_avx2(f32(1) - u[:, :8].ravel(), on_grid=True))
    sin, cos = sincos_avx2(f32(_TWO_PI) * u[:, 8:].ravel(), on_grid=True)   # (contiguous:
    # faster; the uniforms are multiples of 2^-24, which spares checks: kernel_arith)
    pair = np.concatenate([(radius * cos).reshape(rows, 8), (radius * sin).reshape(rows, 8)],
                          axis=1)
    if mean == 0 and std == 1:
        return pair + f32(0)      # fma(n, 1, 0): -0 becomes +0
    return fma32(pair, f32(std), f32(mean))


def _box_muller_double(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """normal_fill_16<double> on rows of 16 uniforms (glibc's log; NumPy's
    float64 cos and sin are glibc's)."""
    radius = np.sqrt(-2 * libm(math.log, 1 - u[:, :8]))
    theta = _TWO_PI * u[:, 8:]
    pair = np.concatenate([radius * np.cos(theta), radius * np.sin(theta)], axis=1)
    return pair + 0.0 if mean == 0 and std == 1 else fma64(pair, std, mean)


def _normal_fill(gen: Generator, out: np.ndarray, mean: float, std: float) -> np.ndarray:
    """normal_fill into the 1-d contiguous `out` (n >= 16): n uniforms,
    Box-Muller on each whole block of 16, then the last 16 values recomputed
    from 16 new uniforms when n is not a multiple of 16."""
    n, dtype = out.size, out.dtype
    if dtype == np.float32:
        unit, transform = (lambda k: _unit_float(gen, k, 24)), _box_muller_avx2
    elif dtype == np.float64:
        unit, transform = (lambda k: _unit_double(gen, k)), _box_muller_double
    else:   # float16, bfloat16: the uniforms' raw bits index tables (_box_muller_reduced)
        unit = lambda k: (gen.random(k) & np.uint64((1 << _digits(dtype)) - 1)).astype(np.intp)
        transform = functools.partial(_box_muller_reduced, dtype=dtype)
    data = unit(n)
    whole = n // 16 * 16
    for start in range(0, whole, _BLOCK):   # blocks that stay in the CPU's cache
        stop = min(start + _BLOCK, whole)
        out[start:stop] = transform(data[start:stop].reshape(-1, 16), mean, std).ravel()
    if n % 16:   # (the uniforms past the last whole block are all overwritten)
        out[n - 16:] = transform(unit(16).reshape(1, 16), mean, std).ravel()
    return out


@functools.lru_cache(maxsize=None)
def _reduced_box_muller_tables(dtype: np.dtype) -> tuple:
    """normal_fill_16<Half/BFloat16> computes in the dtype: every step rounds
    to it, and std::log/cos/sin on it are glibc's logf/cosf/sinf of the
    value as a float. The uniforms take 2^digits values, so the radius (from
    u1 = 1 - u) and the cosine and sine (of theta = 2 pi u, in double) are
    tables over them."""
    def rounded(values):
        return np.asarray(values, f32).astype(dtype).astype(f32)

    digits = _digits(dtype)
    u = np.arange(1 << digits, dtype=f32) * f32(2.0 ** -digits)   # exact in the dtype
    logs = rounded(libm_float("logf", rounded(f32(1) - u)))
    radius = rounded(np.sqrt(rounded(f32(-2) * logs)))
    theta = rounded((_TWO_PI * u.astype(np.float64)).astype(f32))
    return radius, rounded(libm_float("cosf", theta)), rounded(libm_float("sinf", theta))


def _box_muller_reduced(k: np.ndarray, mean: float, std: float, dtype: np.dtype) -> np.ndarray:
    """normal_fill_16<Half/BFloat16> on rows of 16 uniforms' raw bits."""
    def rounded(values):
        return values.astype(dtype).astype(f32)

    radius, cos, sin = _reduced_box_muller_tables(dtype)
    r = radius[k[:, :8]]
    pair = np.concatenate([rounded(r * cos[k[:, 8:]]), rounded(r * sin[k[:, 8:]])], axis=1)
    mean, std = np.array([mean, std]).astype(f32).astype(dtype).astype(f32)
    return (rounded(pair * std) + mean).astype(dtype)


def _normal_pairs(gen: Generator, n: int) -> np.ndarray:
    """n standard normals from normal_distribution<double>: a cached sample
    first, then pairs (r cos, r sin) from two uniforms each; a pair's unused
    sine is cached in the generator for the next draw."""
    cached = gen.next_double_normal
    if n == 0:
        return np.empty(0)
    fresh = n - (cached is not None)
    pairs = (fresh + 1) // 2
    u = _unit_double(gen, 2 * pairs)
    radius = np.sqrt(-2.0 * libm(math.log1p, -u[1::2]))
    theta = _TWO_PI * u[0::2]
    values = np.empty(2 * pairs + 1)
    values[1::2] = radius * np.cos(theta)
    values[2::2] = radius * np.sin(theta)
    gen.next_double_normal = float(values[-1]) if fresh % 2 else None
    if cached is None:
        return values[1:n + 1]
    values[0] = cached
    return values[:n]


def normal_scalar(gen: Generator, n: int, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
    """n draws of normal_distribution<double>(mean, std): val * std + mean."""
    return fma64(_normal_pairs(gen, n), std, mean)


def normal_(gen: Generator, out: np.ndarray, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
    """normal_kernel: 16 or more contiguous values take normal_fill (for float32
    the AVX2 kernel; for float16/bfloat16 arithmetic in the dtype), fewer or
    strided ones normal_distribution<double> one by one. Complex arrays: their
    real and imaginary parts, with std / sqrt(2)."""
    if not std >= 0:
        raise ValueError(f"normal expects std >= 0.0, but found std {std}")
    if out.dtype.kind == "c":   # each part gets half the variance
        normal_(gen, _as_real(out), mean, std / math.sqrt(2))
        return out
    n = out.size
    if n >= 16 and out.flags.c_contiguous:
        _normal_fill(gen, out.reshape(-1), mean, std)
        return out
    return _fill(out, lambda k: _cast(normal_scalar(gen, k, mean, std), out.dtype))


def normal(gen: Generator, mean, std) -> np.ndarray:
    """torch.normal with a tensor mean and/or std (normal_out_impl): standard
    (or std-scaled) normals into a new contiguous array, then `* std` and
    `+ mean` in the result's dtype (mean's, else std's)."""
    mean_is_array, std_is_array = isinstance(mean, np.ndarray), isinstance(std, np.ndarray)
    if not (mean_is_array or std_is_array):
        raise TypeError("normal(gen, mean, std) takes an array mean or std; "
                        "use normal_ on an array for two floats")
    if std_is_array and std.size and not np.all(std >= 0):
        raise ValueError("normal expects all elements of std >= 0.0")
    dtype = mean.dtype if mean_is_array else std.dtype
    shape = np.broadcast_shapes(np.shape(mean), np.shape(std))
    out = np.empty(shape, dtype)
    if not std_is_array:                 # normal(Tensor mean, double std)
        normal_(gen, out, 0.0, std)
        np.add(out, mean, out=out, casting="unsafe")
        return out
    normal_(gen, out, 0.0, 1.0)
    np.multiply(out, std, out=out, casting="unsafe")   # in the promoted dtype, as mul_
    np.add(out, np.asarray(mean, dtype) if not mean_is_array else mean, out=out,
           casting="unsafe")
    return out


def log_normal_(gen: Generator, out: np.ndarray, mean: float = 1.0,
                std: float = 2.0) -> np.ndarray:
    """log_normal_kernel: exp(normal_distribution<double>(mean, std))."""
    if not std > 0:
        raise ValueError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _fill(out, lambda n: _cast(libm(math.exp, normal_scalar(gen, n, mean, std)),
                                      out.dtype))


# ----------------------------------------------------------------------------
# integers: random_, random_(from, to), randint

def _int_min_max(dtype: np.dtype) -> tuple:
    """The dtype's lowest and largest values, as integers."""
    if dtype == np.bool_:
        return 0, 1
    if _is_float(dtype):
        top_exponent = {2: 127 if _is_bfloat16(dtype) else 15, 4: 127, 8: 1023}[dtype.itemsize]
        largest = ((1 << _digits(dtype)) - 1) << (top_exponent + 1 - _digits(dtype))
        return -largest, largest
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _from_int64(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """static_cast<scalar_t>(int64): integers wrap, floats round."""
    if dtype == np.bool_:
        return values != 0
    if _is_float(dtype):
        return _cast(values.astype(np.float64) if dtype.itemsize == 8 else
                     values.astype(np.float32), dtype)
    return values.astype(dtype)


def _as_float_int(value: int, dtype: np.dtype) -> int | None:
    """static_cast<int64_t>(static_cast<scalar_t>(value)), None if that overflows."""
    wide = np.array(value, np.int64).astype(np.float64 if dtype.itemsize == 8 else np.float32)
    rounded = float(wide.astype(dtype))
    return int(rounded) if math.isfinite(rounded) else None


def _update_from(low: int, dtype: np.dtype) -> int:
    """native::templates::update_from: move `from` up to where from + 1 cast to
    the floating dtype does not fall below it."""
    plus_1 = _as_float_int(low + 1, dtype)
    if plus_1 is not None and plus_1 < low:
        low = plus_1 + (1 << (abs(low + 1).bit_length() - 1 - _digits(dtype) + 1))
    return low


def _update_to(high: int, dtype: np.dtype) -> int:
    """update_to: move `to` down to where to - 1 cast to the dtype stays below it."""
    minus_1 = _as_float_int(high - 1, dtype)
    if minus_1 is not None and minus_1 >= high:
        high = minus_1 - (1 << (abs(high - 1).bit_length() - 1 - _digits(dtype) + 1))
    return high


def _uniform_int(gen: Generator, n: int, dtype: np.dtype) -> np.ndarray:
    """uniform_int_distribution<T> (random_() with no range)."""
    if dtype == np.bool_:
        return (gen.random(n) & np.uint64(1)).astype(np.bool_)
    if _is_float(dtype):
        wide = dtype.itemsize == 8
        raw = gen.random64(n) if wide else gen.random(n)
        return _cast(raw % np.uint64((1 << _digits(dtype)) + 1), dtype)
    if dtype == np.int64:
        return (gen.random64(n) % np.uint64(1 << 63)).astype(np.int64)
    return (gen.random(n) % np.uint64(int(np.iinfo(dtype).max) + 1)).astype(dtype)


def _uniform_int_from_to(gen: Generator, n: int, span: int, low: int) -> np.ndarray:
    """uniform_int_from_to_distribution: (random % span) + from, as int64;
    spans of 2^28 or more take random64."""
    raw = gen.random64(n) if span >= 1 << 28 else gen.random(n)
    return ((raw % np.uint64(span)) + np.uint64(low % (1 << 64))).view(np.int64)


def random_(gen: Generator, out: np.ndarray, low: int | None = None,
            high: int | None = None) -> np.ndarray:
    """random_kernel / random_from_to_kernel. No bounds: [0, 2^digits] for
    floats, [0, max] for integers. `low` alone: [low, max]. Both: [low, high).
    low = -2^63 with no high: the full 64-bit range."""
    dtype = out.dtype
    if low is None and high is None:
        return _fill(out, lambda n: _uniform_int(gen, n, dtype))
    low = 0 if low is None else int(low)
    if high is None and low == -(1 << 63):
        return _fill(out, lambda n: _from_int64(gen.random64(n).view(np.int64), dtype))
    if high is not None:
        high = int(high)
        if not low < high:
            raise ValueError(f"random_ expects 'from' to be less than 'to', but got "
                             f"from={low} >= to={high}")
        if _is_float(dtype):
            low, high = _update_from(low, dtype), _update_to(high, dtype)
            if not low < high:
                raise ValueError(f"random_ expects 'from' casted to dtype to be less than "
                                 f"'to' casted to dtype, but got from={low} >= to={high}")
        top = high - 1
    elif _is_float(dtype):
        top = min(1 << _digits(dtype), (1 << 63) - 1)
        low = _update_from(low, dtype)
    else:
        top = _int_min_max(dtype)[1]
    smallest, largest = _int_min_max(dtype)
    for name, value in (("from", low), ("to - 1", top)):
        if not smallest <= value <= largest:
            raise ValueError(f"{name} is out of bounds for {dtype}")
        if _is_float(dtype) and abs(value) > 1 << _digits(dtype):   # libtorch warns too
            warnings.warn(f"{name} is out of bounds [-(2^{_digits(dtype)}), 2^{_digits(dtype)}]. "
                          f"Due to precision limitations {dtype} can support discrete uniform "
                          "distribution only within this range.", stacklevel=2)
    span = top - low + 1
    return _fill(out, lambda n: _from_int64(_uniform_int_from_to(gen, n, span, low), dtype))


# ----------------------------------------------------------------------------
# randperm

def _after_swaps(targets: np.ndarray, n: int) -> np.ndarray:
    """arange(n) after swapping positions i and targets[i] (>= i) for i = 0, 1, ...
    in turn, without a loop: position i is final after step i and receives
    what sits at targets[i] then, which is the value an earlier step with the
    same target carried there, or targets[i] itself; a step k carries the value
    found at position k, which is again the value carried by the last earlier
    step targeting k, or k. Following those links to their ends (pointer
    jumping) gives every carried value at once."""
    m = targets.size
    steps = np.arange(m)
    order = np.argsort(targets * max(m, 1) + steps)   # by target, then by step
    sorted_targets = targets[order]
    same = sorted_targets[1:] == sorted_targets[:-1]
    previous = np.full(m, -1)                        # the last earlier step with my target
    previous[order[1:]] = np.where(same, order[:-1], -1)
    ends = np.r_[~same, True] if m else np.zeros(0, bool)
    last = np.full(n, -1)                            # the last step targeting each position
    last[sorted_targets[ends]] = order[ends]
    feeder = np.where(targets == steps, previous, last[:m])   # last step k' < k targeting k
    carried = np.where(feeder < 0, steps, feeder)
    while True:
        jumped = carried[carried]
        if np.array_equal(jumped, carried):
            break
        carried = jumped
    source = np.r_[previous, last[m:]]
    out = np.arange(n)
    moved = source >= 0
    out[moved] = carried[source[moved]]
    untouched = ~moved[:m]
    out[:m][untouched] = targets[untouched]
    return out


def _inside_out(picks: np.ndarray) -> np.ndarray:
    """The inside-out shuffle (value i goes to picks[i] <= i, whose value moves
    to i): the same as the front-to-back swaps mirrored in time and place,
    then inverted."""
    n = picks.size
    mirrored = n - 1 - _after_swaps(n - 1 - picks[::-1], n)[::-1]
    perm = np.empty(n, np.int64)
    perm[mirrored] = np.arange(n)
    return perm


def randperm(gen: Generator, n: int, dtype: np.dtype = np.dtype(np.int64)) -> np.ndarray:
    """randperm_cpu: for n < 2^32 / 20, Fisher-Yates from the front, swapping i
    with i + random() % (n - i); above, the inside-out shuffle with
    random64() % (i + 1)."""
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    if n < 0xFFFFFFFF // 20:
        steps = max(n - 1, 0)
        offsets = gen.random(steps) % np.arange(n, n - steps, -1, dtype=np.uint64)
        perm = _after_swaps(np.arange(steps) + offsets.astype(np.int64), n)
    else:
        perm = _inside_out((gen.random64(n) % np.arange(1, n + 1, dtype=np.uint64))
                           .astype(np.int64))
    return _from_int64(perm, np.dtype(dtype))


# ----------------------------------------------------------------------------
# Bernoulli, exponential, geometric, Cauchy (one double uniform per element)

def _check_unit(p: float, name: str = "bernoulli_") -> None:
    if not 0 <= p <= 1:
        raise ValueError(f"{name} expects p to be in [0, 1], but got p={p}")


def bernoulli_(gen: Generator, out: np.ndarray, p) -> np.ndarray:
    """bernoulli_kernel: with a float p, uniform double < p; with an array p
    (broadcast to out), uniform double < p for float64 p, else a float32
    uniform < p, walking out and p together."""
    if not isinstance(p, np.ndarray):
        _check_unit(p)
        if out.size and out.dtype in (np.float32, np.float64):
            (view,) = iteration_view(out)
            if view.flags.c_contiguous:   # (dense: a transposed input's noise too)
                _bernoulli_blocks(gen, view, p)
                return out
        return _fill(out, lambda n: _cast(_unit_double(gen, n) < p, out.dtype))
    if out.size == 0:
        return out
    view, probs = iteration_view(out, p)
    n = view.size
    if p.dtype == np.float64:
        hits = _unit_double(gen, n) < probs.ravel()
    else:
        hits = _unit_float(gen, n, 24) < probs.astype(f32).ravel()
    view[...] = _cast(hits, out.dtype).reshape(view.shape)
    return out


def _bernoulli_blocks(gen: Generator, out: np.ndarray, p: float) -> np.ndarray:
    """(fast path of bernoulli_ with a float p, for dropout) the same draws and
    results as `_unit_double(gen, n) < p`, block by block so each pass stays in
    cache: u = k 2^-53 (k the low 53 bits of random64()) is below p exactly
    when the integer k is below ceil(p 2^53) (p 2^53 is exact)."""
    flat = out.reshape(-1)
    limit = np.uint64(math.ceil(p * 2.0 ** 53))
    if flat.size >= mt_kernel.MIN_SIZE and gen.draw_into(
            lambda bits: mt_kernel.bernoulli_into(bits, flat, int(limit))):
        return out   # FAST PATH: the same draws, compiled (mt_kernel.py)
    low53 = np.uint64((1 << 21) - 1)      # the high word's bits kept in k
    k = np.empty(min(flat.size, _BLOCK), np.uint64)
    for start in range(0, flat.size, _BLOCK):
        m = min(_BLOCK, flat.size - start)
        raw = gen.random(2 * m)             # pairs: high word, then low word
        km = k[:m]
        np.bitwise_and(raw[0::2], low53, out=km)
        km <<= np.uint64(32)
        km |= raw[1::2]
        np.less(km, limit, out=flat[start:start + m])
    return out


def bernoulli(gen: Generator, p: np.ndarray) -> np.ndarray:
    """torch.bernoulli(p): a new array like p (contiguous) filled by bernoulli_."""
    return bernoulli_(gen, np.empty(p.shape, p.dtype), p)


def exponential_(gen: Generator, out: np.ndarray, lambd: float = 1.0) -> np.ndarray:
    """exponential_kernel: -1 / lambda * log1p(-u) in double."""
    if not lambd > 0:
        raise ValueError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    if not _is_float(out.dtype):
        raise TypeError("Exponential distribution is a continuous probability distribution. "
                        f"dtype must be a floating point but you specified {out.dtype}")
    return _fill(out, lambda n: _cast(
        (-1.0 / lambd) * libm(math.log1p, -_unit_double(gen, n)), out.dtype))


def geometric_(gen: Generator, out: np.ndarray, p: float) -> np.ndarray:
    """geometric_kernel: ceil(log(u) / log1p(-p)) in double."""
    if not 0 < p < 1:
        raise ValueError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill(out, lambda n: _cast(
        np.ceil(libm(_log_or_minus_inf, _unit_double(gen, n)) / math.log1p(-p)), out.dtype))


def _log_or_minus_inf(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def cauchy_(gen: Generator, out: np.ndarray, median: float = 0.0,
            sigma: float = 1.0) -> np.ndarray:
    """cauchy_kernel: median + sigma * tan(pi * (u - 0.5)) in double."""
    if not sigma > 0:
        raise ValueError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return _fill(out, lambda n: _cast(
        fma64(sigma, libm(math.tan, math.pi * (_unit_double(gen, n) - 0.5)), median), out.dtype))


# ----------------------------------------------------------------------------
# multinomial, poisson

def multinomial(gen: Generator, probs: np.ndarray, num_samples: int,
                replacement: bool = False) -> np.ndarray:
    """multinomial (1-d or 2-d probs, rows need not sum to 1): with replacement,
    per row a cumulative sum in the probs' dtype (float for bfloat16), divided
    by the total, last bucket set to 1, and for each sample the first bucket
    >= a double uniform; without (or for one sample), argmax / top-k of p / q
    with q ~ Exp(1) drawn into an array like probs."""
    if probs.ndim not in (1, 2):
        raise ValueError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise ValueError("cannot sample n_sample <= 0 samples")
    rows = probs.reshape(1, -1) if probs.ndim == 1 else probs
    if not replacement and num_samples > rows.shape[1]:
        raise ValueError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if rows.shape[0] == 0:
        return np.empty(probs.shape[:-1] + (num_samples,), np.int64)
    if not (np.all(np.isfinite(rows)) and np.all(rows >= 0)):
        raise ValueError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.astype(np.float64).sum(axis=1) == 0):
        raise ValueError("invalid multinomial distribution (sum of probabilities <= 0)")
    if replacement and num_samples > 1:
        work = np.float32 if rows.dtype.itemsize <= 4 else np.float64
        cumulative = np.cumsum(rows.astype(work), axis=1, dtype=work)   # sequential sums
        cumulative /= cumulative[:, -1:]
        cumulative[:, -1] = 1
        u = _unit_double(gen, rows.shape[0] * num_samples).reshape(rows.shape[0], num_samples)
        picks = np.stack([np.searchsorted(c.astype(np.float64), draws, side="left")
                          for c, draws in zip(cumulative, u)])
    else:
        q = exponential_(gen, np.empty(rows.shape, rows.dtype))
        keys = rows / q
        # top-k: largest first, the lower index first among equal keys
        picks = np.argsort(-keys.astype(np.float64), axis=1, kind="stable")[:, :num_samples]
    return picks.reshape(probs.shape[:-1] + (num_samples,)).astype(np.int64)


def _poisson_one(gen: Generator, lam: float) -> int:
    """sample_poisson: Hoermann's transformed rejection for lambda >= 10, else
    multiplying uniforms until the product falls to exp(-lambda)."""
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u, v = _unit_double(gen, 2)
            u -= 0.5
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (_log_or_minus_inf(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - lgamma(k + 1.0)):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    count, product = 0, 1.0
    while True:
        product *= float(_unit_double(gen, 1)[0])
        if product <= enlam:
            return count
        count += 1


def poisson(gen: Generator, rates: np.ndarray) -> np.ndarray:
    """_s_poisson_cpu: one sample per rate, in TensorIterator's order. Each
    sample draws until accepted, so this walks the elements one by one."""
    if rates.size and not np.all(rates >= 0):
        raise ValueError("invalid Poisson rate, expected rate to be non-negative")
    out = np.zeros(rates.shape, rates.dtype)
    if out.size:
        view, lam = iteration_view(out, rates)
        view[...] = np.array([_poisson_one(gen, float(x)) for x in lam.ravel()],
                             dtype=np.float64).reshape(view.shape).astype(out.dtype)
    return out


def _gamma_one(gen: Generator, alpha: float, single: bool) -> float:
    """sample_gamma (Marsaglia and Tsang's method, boosted below alpha = 1) with
    libtorch's arithmetic: alpha and `alpha - 1/3` in the sample's dtype
    (`single`: float32), the rest in double; per attempt, normals until
    1 + c x > 0, then a uniform."""
    in_dtype = f32 if single else float
    third = float(np.float32(1.0) / np.float32(3.0))   # (1.0f / 3.0f)
    scale = 1.0
    if alpha < 1:
        if alpha == 0:
            return 0.0
        exponent = float(np.float32(1.0) / np.float32(alpha)) if single else 1.0 / alpha
        scale *= math.pow(1 - float(_unit_double(gen, 1)[0]), exponent)
        alpha = float(in_dtype(alpha) + in_dtype(1.0))
    d = float(in_dtype(alpha) - in_dtype(third))
    c = 1.0 / math.sqrt(9.0 * d)
    squeeze = float(np.float32(0.0331))
    while True:
        while True:
            x = float(_normal_pairs(gen, 1)[0])
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1 - float(_unit_double(gen, 1)[0])
        xx = x * x
        if u < 1.0 - squeeze * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def standard_gamma(gen: Generator, alpha: np.ndarray) -> np.ndarray:
    """_s_gamma_cpu: one Gamma(alpha, 1) sample per element, in TensorIterator's
    order, at least the dtype's smallest normal number."""
    if alpha.size and not np.all(alpha >= 0):
        raise ValueError("invalid Gamma concentration, expected it to be non-negative")
    out = np.zeros(alpha.shape, alpha.dtype)
    if out.size:
        single = alpha.dtype != np.float64
        view, a = iteration_view(out, alpha)
        draws = np.array([_gamma_one(gen, float(x), single) for x in a.ravel()])
        view[...] = np.maximum(draws.astype(out.dtype), np.finfo(out.dtype).tiny).reshape(
            view.shape)
    return out
