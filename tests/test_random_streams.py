"""libtorch's CPU random streams (rtorch_py.random) against PyTorch 2.13, bit
for bit: every transformation of tests/random_cases.py for each dtype, seed
and size, twice in a row and then followed by other draws, with the
generator's state bytes compared after each sequence; non-contiguous outputs
in TensorIterator's order; the state layout both ways; what the dropout
family, rrelu and nn.init.sparse_ draw.

Where libtorch 2.8 (R torch 0.17's, the target) and PyTorch 2.13 differ
(float16/bfloat16 uniform_ and normal_ of 16 or more values), the oracle is
libtorch 2.8's code transcribed element by element onto PyTorch's own raw
stream (see docs/random.md)."""
from __future__ import annotations

import ctypes
import ctypes.util
import math
from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import rtorch_py.random as R
from random_cases import (BFLOAT16, CASES, F16, F32, TORCH_DTYPE,
                          probabilities, to_numpy)
from rtorch_py.random import distributions as D, mt_kernel
from rtorch_py.random import nn as RN
from rtorch_py.random.kernel_arith import fma32, fma64, iteration_axes, log_avx2, sincos_avx2

SEEDS = (0, 1, 2024)
SIZES = (0, 1, 7, 15, 16, 17, 100, 1000, 1001, (3, 5), (4, 17), (2, 3, 8))


def same_bits(ours: np.ndarray, theirs: np.ndarray) -> bool:
    return (ours.shape == theirs.shape and ours.dtype == theirs.dtype and np.array_equal(
        np.ascontiguousarray(ours).view(np.uint8), np.ascontiguousarray(theirs).view(np.uint8)))


def assert_same_state(gen: R.Generator) -> None:
    assert np.array_equal(gen.get_state(), torch.get_rng_state().numpy()), \
        "the generators' states differ after the same draws"


def _sizes(kind: str) -> list:
    """The sizes a case takes: any, lengths only ("1d"), or 1-d and 2-d shapes
    of at least one sample ("rows")."""
    if kind == "1d":
        return [s for s in SIZES if isinstance(s, int)]
    if kind == "rows":
        return [s for s in SIZES if (isinstance(s, int) and s > 0) or
                (isinstance(s, tuple) and len(s) == 2)]
    return list(SIZES)


PARAMS = [pytest.param(case, dtype, seed, size, id=f"{case.name}-{dtype.name}-{seed}-{size}")
          for case in CASES for dtype in case.dtypes for seed in SEEDS
          for size in _sizes(case.shapes)]


@pytest.mark.parametrize("case,dtype,seed,shape", PARAMS)
def test_transformation_matches_pytorch(case, dtype, seed, shape) -> None:
    torch.manual_seed(seed)
    gen = R.Generator(seed)
    for _ in range(2):   # twice in a row: the stream moves on exactly as libtorch's
        theirs = to_numpy(case.theirs(shape, dtype))
        ours = case.ours(gen, shape, dtype)
        assert same_bits(ours, theirs), f"{case.name} {dtype} seed {seed} size {shape}"
    # then uniforms and scalar-path normals (which use the cached normal)
    assert same_bits(R.uniform_(gen, np.empty(5, np.float32)), torch.rand(5).numpy())
    assert same_bits(R.normal_(gen, np.empty(3, np.float32)), torch.randn(3).numpy())
    assert_same_state(gen)


# ----------------------------------------------------------------------------
# float16 / bfloat16 as libtorch 2.8 computes them (PyTorch 2.13 changed this)

def _raw_low_bits(n: int, bits: int) -> np.ndarray:
    """The low bits of the next n 32-bit outputs of PyTorch's generator, each
    drawn by random() as randint(0, 2^27) draws them."""
    return torch.randint(0, 1 << 27, (n,)).numpy() & ((1 << bits) - 1)


def _uniform_2_8(k: np.ndarray, low: float, high: float, tdtype) -> torch.Tensor:
    """uniform_real<Half/BFloat16>: x = k / 2^digits (float), to - from in the
    dtype, x * (to - from) + from rounded once to float, then to the dtype."""
    digits = 11 if tdtype == torch.float16 else 8
    lo, hi = torch.tensor(low, dtype=tdtype), torch.tensor(high, dtype=tdtype)
    span = (hi - lo).double()
    exact = torch.from_numpy(k.astype(np.float64) * 2.0 ** -digits) * span + lo.double()
    return exact.float().to(tdtype)   # (exact in float64: k and span are short)


@pytest.mark.parametrize("bounds", [(0, 1), (-3, 5.5), (-1.3, 2.7)])
@pytest.mark.parametrize("n", [1, 17, 1000])
@pytest.mark.parametrize("dtype", [F16, BFLOAT16], ids=["float16", "bfloat16"])
def test_reduced_uniform_as_libtorch_2_8(dtype, n, bounds) -> None:
    tdtype = TORCH_DTYPE[dtype]
    torch.manual_seed(5)
    expected = _uniform_2_8(_raw_low_bits(n, 11 if dtype == F16 else 8), *bounds, tdtype)
    gen = R.Generator(5)
    assert same_bits(R.uniform_(gen, np.empty(n, dtype), *bounds), to_numpy(expected))
    assert_same_state(gen)


_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


def _glibc_float(name: str, value: float) -> float:
    fn = getattr(_LIBM, name)
    fn.restype, fn.argtypes = ctypes.c_float, (ctypes.c_float,)
    return fn(value)


def _normal_fill_16_2_8(u: list, mean: float, std: float, tdtype) -> list:
    """normal_fill_16<Half/BFloat16> of libtorch 2.8, line by line: every
    Half/BFloat16 operation rounds to the dtype, std::log/cos/sin of one are
    glibc's float functions, theta is computed in double."""
    def h(value: float) -> float:
        return torch.tensor(value, dtype=torch.float32).to(tdtype).item()

    mean, std = h(mean), h(std)
    out = list(u)
    for j in range(8):
        u1 = h(1 - u[j])
        radius = h(math.sqrt(h(-2 * h(_glibc_float("logf", u1)))))
        theta = h(float(np.float32(2.0 * math.pi * u[j + 8])))
        for slot, fn in ((j, "cosf"), (j + 8, "sinf")):
            out[slot] = h(h(h(radius * h(_glibc_float(fn, theta))) * std) + mean)
    return out


@pytest.mark.parametrize("moments", [(0, 1), (1.5, 0.7)])
@pytest.mark.parametrize("n", [16, 17, 40, 64])
@pytest.mark.parametrize("dtype", [F16, BFLOAT16], ids=["float16", "bfloat16"])
def test_reduced_normal_as_libtorch_2_8(dtype, n, moments) -> None:
    tdtype, digits = TORCH_DTYPE[dtype], (11 if dtype == F16 else 8)
    torch.manual_seed(9)
    u = list(_raw_low_bits(n, digits) * 2.0 ** -digits)
    tail = list(_raw_low_bits(16, digits) * 2.0 ** -digits) if n % 16 else []
    whole = n // 16 * 16
    for start in range(0, whole, 16):
        u[start:start + 16] = _normal_fill_16_2_8(u[start:start + 16], *moments, tdtype)
    if tail:
        u[n - 16:] = _normal_fill_16_2_8(tail, *moments, tdtype)
    expected = torch.tensor(u, dtype=torch.float32).to(tdtype)
    gen = R.Generator(9)
    assert same_bits(R.normal_(gen, np.empty(n, dtype), *moments), to_numpy(expected))
    assert_same_state(gen)


# ----------------------------------------------------------------------------
# non-contiguous outputs: TensorIterator's order

VIEWS = {
    "transposed": ((5, 7), lambda a: a.T),
    "every-other-column": ((6, 8), lambda a: a[:, ::2]),
    "permuted-3d": ((4, 5, 6), lambda a: a.transpose(2, 0, 1)),
    "permuted-sliced-3d": ((4, 5, 6), lambda a: a.transpose(1, 2, 0)[::2]),
    "tall-transposed": ((20, 3), lambda a: a.T),
}
INPLACE = {
    "uniform_": (lambda t: t.uniform_(-2, 3), lambda g, a: R.uniform_(g, a, -2, 3)),
    "normal_": (lambda t: t.normal_(1, 2), lambda g, a: R.normal_(g, a, 1, 2)),
    "bernoulli_": (lambda t: t.bernoulli_(0.4), lambda g, a: R.bernoulli_(g, a, 0.4)),
    "random_": (lambda t: t.random_(0, 10), lambda g, a: R.random_(g, a, 0, 10)),
    "exponential_": (lambda t: t.exponential_(), lambda g, a: R.exponential_(g, a)),
    "geometric_": (lambda t: t.geometric_(0.2), lambda g, a: R.geometric_(g, a, 0.2)),
    "cauchy_": (lambda t: t.cauchy_(), lambda g, a: R.cauchy_(g, a)),
    "log_normal_": (lambda t: t.log_normal_(), lambda g, a: R.log_normal_(g, a)),
}


def _torch_view(base: torch.Tensor, view: np.ndarray, base_np: np.ndarray) -> torch.Tensor:
    """The torch view with the same shape, strides and offset as a NumPy view."""
    size = base_np.itemsize
    offset = (view.__array_interface__["data"][0] - base_np.__array_interface__["data"][0]) // size
    return base.as_strided(view.shape, tuple(s // size for s in view.strides), offset)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("view", VIEWS, ids=str)
@pytest.mark.parametrize("op", INPLACE, ids=str)
def test_strided_output_is_filled_in_tensor_iterator_order(op, view, seed) -> None:
    shape, make = VIEWS[view]
    theirs_fn, ours_fn = INPLACE[op]
    base_t, base_o = torch.zeros(shape), np.zeros(shape, np.float32)
    torch.manual_seed(seed)
    theirs_fn(_torch_view(base_t, make(base_t.numpy()), base_t.numpy()))
    gen = R.Generator(seed)
    ours_fn(gen, make(base_o))
    assert same_bits(base_o, base_t.numpy())
    assert_same_state(gen)


@pytest.mark.parametrize("view", VIEWS, ids=str)
def test_bernoulli_with_broadcast_probabilities_walks_both(view) -> None:
    shape, make = VIEWS[view]
    base_t, base_o = torch.zeros(shape), np.zeros(shape, np.float32)
    out_o = make(base_o)
    p = probabilities((out_o.shape[-1],), F32)     # broadcast along the last axis
    torch.manual_seed(3)
    _torch_view(base_t, make(base_t.numpy()), base_t.numpy()).bernoulli_(torch.from_numpy(p))
    gen = R.Generator(3)
    R.bernoulli_(gen, out_o, p)
    assert same_bits(base_o, base_t.numpy())
    assert_same_state(gen)


def test_iteration_axes_sort_by_stride() -> None:
    assert iteration_axes((4, 5), (20, 4)) == (0, 1)
    assert iteration_axes((4, 5), (4, 16)) == (1, 0)
    assert iteration_axes((2, 3, 4), (4, 32, 8)) == (1, 2, 0)
    # a broadcast (stride 0) operand does not decide; the output does
    assert iteration_axes((3, 4), (4, 12), (0, 4)) == (1, 0)


# ----------------------------------------------------------------------------
# the generator: seeds, state bytes, cached normals

@pytest.mark.parametrize("seed", [0, 5, 2**32 + 7, 2**40 + 3, 2**64 - 1])
def test_state_bytes_match_pytorch_as_the_stream_moves(seed) -> None:
    torch.manual_seed(seed)
    gen = R.Generator(seed)
    assert gen.initial_seed() == torch.initial_seed()
    for n in (3, 624, 1, 5, 700, 2, 0, 623):
        assert_same_state(gen)
        torch.randn(n)
        R.normal_(gen, np.empty(n, np.float32))
    assert_same_state(gen)


def test_negative_seed_wraps_to_uint64_as_in_pytorch() -> None:
    torch.manual_seed(-7)
    gen = R.Generator(-7)
    assert gen.initial_seed() == torch.initial_seed() == 2**64 - 7
    assert same_bits(R.uniform_(gen, np.empty(10, np.float32)), torch.rand(10).numpy())


def test_state_restores_both_ways() -> None:
    torch.manual_seed(11)
    torch.randn(3)                      # leaves a cached normal in the state
    saved = torch.get_rng_state()
    gen = R.Generator().set_state(saved.numpy())
    assert gen.next_double_normal is not None
    assert same_bits(R.normal_(gen, np.empty(5, np.float32)), torch.randn(5).numpy())
    ours = gen.get_state()
    torch.set_rng_state(torch.from_numpy(ours.copy()))
    assert same_bits(R.uniform_(gen, np.empty(7, np.float64), -1, 1),
                     torch.empty(7, dtype=torch.float64).uniform_(-1, 1).numpy())
    assert_same_state(gen)


def test_cached_normal_is_shared_and_cleared_as_in_libtorch() -> None:
    torch.manual_seed(3)
    gen = R.Generator(3)
    for kind, n in [("normal", 3), ("normal", 1), ("log_normal", 3), ("normal", 20),
                    ("double", 5), ("normal", 1)]:
        if kind == "normal":
            ours, theirs = R.normal_(gen, np.empty(n, np.float32)), torch.randn(n)
        elif kind == "log_normal":
            ours, theirs = R.log_normal_(gen, np.empty(n, np.float32)), torch.empty(n).log_normal_()
        else:
            ours, theirs = R.normal_(gen, np.empty(n)), torch.randn(n, dtype=torch.float64)
        assert same_bits(ours, theirs.numpy()), (kind, n)
        assert_same_state(gen)
    torch.randn(1)
    R.normal_(gen, np.empty(1, np.float32))
    torch.manual_seed(3)                  # reseeding drops the cached normal
    gen.manual_seed(3)
    assert gen.next_double_normal is None
    assert_same_state(gen)


def test_new_generators_and_clones() -> None:
    assert R.Generator().initial_seed() == torch.Generator().initial_seed() == R.DEFAULT_SEED
    assert R.fresh_seed() != R.fresh_seed()
    gen = R.Generator(8)
    R.normal_(gen, np.empty(3))
    twin = gen.clone()
    assert np.array_equal(twin.get_state(), gen.get_state())
    assert same_bits(R.normal_(twin, np.empty(4)), R.normal_(gen, np.empty(4)))
    R.uniform_(twin, np.empty(2))
    assert not np.array_equal(twin.get_state(), gen.get_state())


def test_bad_states_and_seeds_are_refused() -> None:
    with pytest.raises(ValueError, match="5056 bytes"):
        R.Generator().set_state(np.zeros(10, np.uint8))
    with pytest.raises(ValueError, match="invalid mt19937 state"):
        R.Generator().set_state(np.zeros(R.STATE_SIZE, np.uint8))
    with pytest.raises(ValueError, match="64 bits"):
        R.Generator(2**64)


# ----------------------------------------------------------------------------
# the dropout family, rrelu, nn.init.sparse_

SHAPES = [(5,), (4, 3), (2, 3, 4, 5), (3, 50),
          (130, 129)]   # (above mt_kernel.MIN_SIZE: the compiled draws)


@pytest.mark.parametrize("p", [0.2, 0.5])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dropout_family_draws_as_libtorch(dtype, shape, p) -> None:
    x = torch.randn(shape, generator=torch.Generator().manual_seed(99), dtype=TORCH_DTYPE[
        np.dtype(dtype)])
    xn = x.numpy()
    torch.manual_seed(4)
    gen = R.Generator(4)
    assert same_bits(xn * RN.dropout_noise(gen, xn, p), F.dropout(x, p, True).numpy())
    a, b = RN.alpha_dropout_noise(gen, xn, p)
    assert same_bits(xn * a + b, F.alpha_dropout(x, p, True).numpy())
    if len(shape) >= 2:
        assert same_bits(xn * RN.dropout_noise(gen, xn, p, feature=True),
                         torch.feature_dropout(x, p, True).numpy())
        a, b = RN.alpha_dropout_noise(gen, xn, p, feature=True)
        assert same_bits(xn * a + b, F.feature_alpha_dropout(x, p, True).numpy())
    assert same_bits(xn * RN.rrelu_noise(gen, xn, 0.1, 0.3), F.rrelu(x, 0.1, 0.3, True).numpy())
    assert_same_state(gen)


@pytest.mark.parametrize("skip", [0, 1, 623, 624])
@pytest.mark.parametrize("n", [mt_kernel.MIN_SIZE, mt_kernel.MIN_SIZE + 311, 100_003])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_bernoulli_draws_as_the_numpy_path(dtype, n, skip, monkeypatch) -> None:
    """mt_kernel's Bernoulli draws (its pairs of words crossing the engine's
    624-word blocks at every offset) against bernoulli_'s NumPy path: the
    same elements, then the same state and the same draws after it."""
    if mt_kernel._kernel() is None:
        pytest.skip("numba is not installed: there is no compiled path")
    fast, plain = R.Generator(7), R.Generator(7)
    for p in (0.9, 0.5, 1 - 2.0 ** -40, 0.0, 1.0):
        for g in (fast, plain):
            g.random(skip + (n & 1))
        ours = D.bernoulli_(fast, np.empty(n, dtype), p)
        monkeypatch.setattr(mt_kernel, "MIN_SIZE", 1 << 62)
        theirs = D.bernoulli_(plain, np.empty(n, dtype), p)
        monkeypatch.undo()
        assert same_bits(ours, theirs)
        assert np.array_equal(fast.get_state(), plain.get_state())
        assert np.array_equal(fast.random(5), plain.random(5))


@pytest.mark.parametrize("shape", [(6, 9), (130, 129)], ids=str)
def test_dropout_of_a_transposed_input_draws_in_its_memory_order(shape) -> None:
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1)).t()
    torch.manual_seed(2)
    gen = R.Generator(2)
    xn = x.numpy()
    assert same_bits(xn * RN.dropout_noise(gen, xn, 0.3), F.dropout(x, 0.3, True).numpy())
    y = torch.randn(4, 5, 6, generator=torch.Generator().manual_seed(3)).permute(2, 0, 1)
    yn = y.numpy()
    assert same_bits(yn * RN.dropout_noise(gen, yn, 0.6), F.dropout(y, 0.6, True).numpy())
    assert_same_state(gen)


@pytest.mark.parametrize("rows,cols,sparsity", [(10, 4, 0.3), (7, 3, 0.5), (1, 5, 0.9)])
def test_sparse_init_draws_as_pytorch(rows, cols, sparsity) -> None:
    torch.manual_seed(6)
    gen = R.Generator(6)
    theirs = torch.nn.init.sparse_(torch.empty(rows, cols), sparsity).numpy()
    assert same_bits(RN.sparse_(gen, np.empty((rows, cols), np.float32), sparsity), theirs)
    assert_same_state(gen)


# ----------------------------------------------------------------------------
# randperm's two shuffles, exact arithmetic

def _swap_loop(targets: list, n: int) -> np.ndarray:
    values = list(range(n))
    for i, j in enumerate(targets):
        values[i], values[j] = values[j], values[i]
    return np.array(values)


def _inside_out_loop(picks: list) -> np.ndarray:
    """randperm_cpu's shuffle for large n, as its loop writes it."""
    values = [0] * len(picks)
    for i, z in enumerate(picks):
        values[i] = values[z]
        values[z] = i
    return np.array(values)


@pytest.mark.parametrize("seed", range(5))
def test_randperm_shuffles_match_their_loops(seed) -> None:
    rng = np.random.default_rng(seed)
    for n in (1, 2, 3, 10, 257):
        targets = np.array([rng.integers(i, n) for i in range(n - 1)], dtype=np.int64)
        assert np.array_equal(D._after_swaps(targets, n), _swap_loop(list(targets), n))
        picks = np.array([rng.integers(0, i + 1) for i in range(n)], dtype=np.int64)
        assert np.array_equal(D._inside_out(picks), _inside_out_loop(list(picks)))


def _exact_fma(a: float, b: float, c: float, to: type) -> np.ndarray:
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    candidate = to(float(exact))    # float() rounds the fraction correctly to double
    if to is np.float32:            # then pick the nearer float32 neighbour exactly
        below, above = np.nextafter(candidate, to(-np.inf)), np.nextafter(candidate, to(np.inf))
        candidate = min((below, candidate, above),
                        key=lambda v: (abs(Fraction(float(v)) - exact),
                                       int(np.array(v).view(np.uint32)) & 1))
    return candidate


def test_fused_multiply_add_rounds_once() -> None:
    rng = np.random.default_rng(0)
    a32 = rng.standard_normal(3000).astype(np.float32)
    b32 = rng.standard_normal(3000).astype(np.float32)
    c32 = (rng.standard_normal(3000) * 2.0 ** rng.integers(-30, 5, 3000)).astype(np.float32)
    c32[:1000] = -(a32[:1000].astype(np.float64) * b32[:1000]).astype(np.float32)  # cancellation
    got = fma32(a32, b32, c32)
    assert all(got[i] == _exact_fma(a32[i], b32[i], c32[i], np.float32) for i in range(3000))
    a64, b64 = rng.standard_normal(3000), rng.standard_normal(3000)
    c64 = rng.standard_normal(3000) * 2.0 ** rng.integers(-60, 5, 3000)
    c64[:1000] = -(a64[:1000] * b64[:1000])
    got = fma64(a64, b64, c64)
    assert all(got[i] == _exact_fma(a64[i], b64[i], c64[i], np.float64) for i in range(3000))


def test_bad_arguments_say_what_is_wrong() -> None:
    gen = R.Generator(0)
    with pytest.raises(ValueError, match="from=2 > to=1"):
        R.uniform_(gen, np.empty(3), 2, 1)
    with pytest.raises(ValueError, match="std >= 0.0"):
        R.normal_(gen, np.empty(3), 0, -1)
    with pytest.raises(ValueError, match=r"p to be in \[0, 1\]"):
        R.bernoulli_(gen, np.empty(3), 1.5)
    with pytest.raises(ValueError, match="from=5 >= to=5"):
        R.random_(gen, np.empty(3, np.int64), 5, 5)
    with pytest.raises(ValueError, match="out of bounds"):
        R.random_(gen, np.empty(3, np.int8), 0, 1000)
    with pytest.raises(ValueError, match="non-negative"):
        R.randperm(gen, -1)
    with pytest.raises(ValueError, match="without replacement"):
        R.multinomial(gen, np.ones(3, np.float32), 4)
    with pytest.raises(TypeError, match="floating point"):
        R.exponential_(gen, np.empty(3, np.int64))


def test_box_muller_fast_steps_hold_on_every_uniform() -> None:
    """log_avx2 and sincos_avx2 skip their tie checks on Box-Muller's inputs
    (on_grid): over all 2^24 float32 uniforms u, log(1 - u) and sincos(2 pi u)
    come out the same as with every check."""
    step = 1 << 21
    for start in range(0, 1 << 24, step):
        u = (np.arange(start, start + step) * 2.0 ** -24).astype(np.float32)
        x = np.float32(1) - u
        assert np.array_equal(log_avx2(x, on_grid=True), log_avx2(x))
        angle = np.float32(2 * math.pi) * u
        for fast, checked in zip(sincos_avx2(angle, on_grid=True), sincos_avx2(angle)):
            assert np.array_equal(fast.view(np.uint32), checked.view(np.uint32))


@pytest.mark.parametrize("seed", [0, 2024])
def test_float32_normal_kernel_on_two_million_values(seed) -> None:
    torch.manual_seed(seed)
    gen = R.Generator(seed)
    assert same_bits(R.normal_(gen, np.empty(2 * 10 ** 6 + 3, np.float32)),
                     torch.randn(2 * 10 ** 6 + 3).numpy())
    assert_same_state(gen)


# bounds through uniform_'s one-pass float32 path (k * span / 2^24 + from exact in
# float64) and through its fused multiply-add (1000..1000.5, 1e-3..7e7: not exact)
UNIFORM_BOUNDS = [(-0.0361, 0.0361), (-3, 5.5), (0, 7.25), (1000, 1000.5), (1e-3, 7e7),
                  (-2.5e-38, 1e-38), (0, 0), (2.5, 2.5), (-1e38, 1e38)]


@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("bounds", UNIFORM_BOUNDS, ids=str)
def test_uniform_over_several_blocks_matches_pytorch(bounds, dtype, transposed) -> None:
    """78,000 values: more than two of the blocks uniform_ transforms at once."""
    torch.manual_seed(7)
    theirs = torch.empty(300, 260, dtype=TORCH_DTYPE[np.dtype(dtype)])
    theirs = (theirs.t() if transposed else theirs).uniform_(*bounds)
    gen = R.Generator(7)
    ours = np.empty((300, 260), dtype)
    R.uniform_(gen, ours.T if transposed else ours, *bounds)
    # PyTorch 2.13's kernel (not libtorch 2.8's) returns `from` where a value
    # rounds up to `to` (docs/random.md); 1000..1000.5 meets it 3 times
    low, high = (np.asarray(b, dtype) for b in bounds)
    ours = np.where(ours == high, low, ours)
    assert same_bits(ours.T if transposed else ours, theirs.numpy())
    assert_same_state(gen)


def test_one_pass_uniform_is_the_fused_multiply_add_on_every_draw() -> None:
    """Where uniform_ takes its one-pass float32 path, the draws give what fma32
    (which checks float64 ties) gives: every 5th of the 2^24 and the last 1000."""
    k = np.r_[np.arange(0, 1 << 24, 5), np.arange((1 << 24) - 1000, 1 << 24)].astype(np.uint64)
    for low, high in [(-0.0361, 0.0361), (-3, 5.5), (0, 7.25), (0.75, 1)]:
        lo, span = np.float32(low), np.float32(high) - np.float32(low)
        assert D._exact_affine32(lo, span)
        one_pass = (k * (float(span) * 2.0 ** -24) + float(lo)).astype(np.float32)
        fused = fma32((k * 2.0 ** -24).astype(np.float32), span, lo)
        assert np.array_equal(one_pass.view(np.uint32), fused.view(np.uint32))
    assert not D._exact_affine32(np.float32(1000), np.float32(0.5))
    assert not D._exact_affine32(np.float32(-1e-30), np.float32(3))
