"""Reductions and sorting: what the generated registry tests can't express —
ties, NaN, zeros in products, interpolation modes, one of two outputs used,
errors, and R torch's 1-based positions seen from R."""
from __future__ import annotations

import numpy as np
import pytest

import rtorch_py as rt
import torch
from helpers import check_vs_torch, gradcheck, needs_r, rand, run_r


# --------------------------------------------------------------------------
# ties and NaN follow PyTorch

def test_stable_sort_keeps_ties_in_order():
    x = np.array([[2, 1, 2, 1, 0, 2], [1, 1, 1, 0, 0, 0]])
    for desc in (False, True):
        check_vs_torch(lambda T, x: tuple(T.sort(x, dim=1, descending=desc, stable=True)), x)
        check_vs_torch(lambda T, x: T.argsort(x, dim=1, descending=desc, stable=True), x)


def test_sort_puts_nan_last_ascending_first_descending():
    x = np.array([1.0, np.nan, -2.0, 3.0])
    check_vs_torch(lambda T, x: tuple(x.sort()), x)
    check_vs_torch(lambda T, x: tuple(x.sort(descending=True)), x)


def test_median_takes_the_lower_middle_and_propagates_nan():
    check_vs_torch(lambda T, x: x.median(), np.array([4.0, 1.0, 3.0, 2.0]))
    check_vs_torch(lambda T, x: tuple(x.median(0)), np.array([4.0, 1.0, 3.0, 2.0]))
    check_vs_torch(lambda T, x: x.median(), np.array([1.0, np.nan, 2.0]))
    check_vs_torch(lambda T, x: tuple(x.median(1)), np.array([[1.0, np.nan, 2.0],
                                                             [3.0, 1.0, 2.0]]))


def test_nanmedian_and_nanquantile_skip_nan():
    x = np.array([[1.0, np.nan, 2.0, 5.0], [np.nan, 3.0, 1.0, np.nan]])
    check_vs_torch(lambda T, x: x.nanmedian(), x)
    check_vs_torch(lambda T, x: tuple(x.nanmedian(1)), x)
    check_vs_torch(lambda T, x: x.nanquantile(0.4, dim=1), x)
    check_vs_torch(lambda T, x: x.quantile(0.4, dim=1), x)  # NaN where a line has one


def test_mode_and_cummax_tie_rules():
    x = np.array([[3.0, 1.0, 2.0, 1.0, 2.0], [2.0, 2.0, 5.0, 5.0, 1.0]])
    check_vs_torch(lambda T, x: tuple(x.mode(1)), x)
    check_vs_torch(lambda T, x: tuple(x.cummax(1)), x)
    check_vs_torch(lambda T, x: tuple(x.cummin(1)), x)
    check_vs_torch(lambda T, x: tuple(x.cummax(0)), np.array([1.0, np.nan, 3.0]))


def test_amax_and_norm_inf_share_the_gradient_over_ties():
    x = np.array([[1.0, 3.0, 3.0], [-2.0, 2.0, 0.5]])
    check_vs_torch(lambda T, x: x.amax(1), x)
    check_vs_torch(lambda T, x: x.amin(), x)
    check_vs_torch(lambda T, x: x.norm(p=float("inf"), dim=1), x)
    check_vs_torch(lambda T, x: tuple(T.aminmax(x)), x)


# --------------------------------------------------------------------------
# zeros, modes, options

@pytest.mark.parametrize("dim", [0, 1])
def test_prod_and_cumprod_with_zeros(dim):
    x = np.array([[1.5, 0.0, -2.0], [0.0, 0.0, 3.0], [2.0, -1.0, 0.5]])
    check_vs_torch(lambda T, x: x.prod(dim), x)
    check_vs_torch(lambda T, x: x.prod(dim, keepdim=True), x)
    check_vs_torch(lambda T, x: x.cumprod(dim), x)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_interpolation_modes(interpolation):
    x = rand(3, 5)
    q = np.array([0.0, 0.25, 0.5, 0.9])
    check_vs_torch(lambda T, x, q: T.quantile(x, q, dim=1, interpolation=interpolation),
                   x, q, requires_grad=[True, False])
    gradcheck(lambda T, x: T.quantile(x, 0.3, interpolation=interpolation), x)


def test_std_var_correction_and_unbiased():
    x = rand(3, 4)
    check_vs_torch(lambda T, x: x.std(1, False), x, second_order=True)
    check_vs_torch(lambda T, x: x.var(dim=0, correction=0), x, second_order=True)
    check_vs_torch(lambda T, x: x.var(unbiased=False), x)
    check_vs_torch(lambda T, x: T.std(x, True), x)


def test_one_output_of_a_two_output_node():
    x = rand(3, 4)
    check_vs_torch(lambda T, x: T.std_mean(x, 1)[0], x, second_order=True)
    check_vs_torch(lambda T, x: T.var_mean(x, 1)[1], x, second_order=True)
    check_vs_torch(lambda T, x: T.aminmax(x, dim=0)[1], x)


def test_unique_variants():
    x = np.array([3, 1, 2, 2, 1, 1])
    check_vs_torch(lambda T, x: tuple(T.unique(x, return_inverse=True, return_counts=True)), x)
    check_vs_torch(lambda T, x: tuple(T.unique_consecutive(x, return_inverse=True,
                                                             return_counts=True)), x)
    m = np.array([[1, 2], [1, 2], [0, 5], [1, 2]])
    check_vs_torch(lambda T, m: tuple(T.unique_consecutive(m, return_counts=True, dim=0)), m)


def test_bincount_with_weights():
    x, w = np.array([0, 3, 3, 1]), np.array([0.5, 1.0, 2.0, -1.0])
    check_vs_torch(lambda T, x, w: T.bincount(x, w, minlength=6), x, w, requires_grad=False)


# --------------------------------------------------------------------------
# errors say what was wrong

def test_errors():
    x = rt.torch_randn(2, 3)
    with pytest.raises(RuntimeError, match="k"):
        x.topk(4)
    with pytest.raises(RuntimeError, match="out of range"):
        x.kthvalue(0)
    with pytest.raises(RuntimeError, match=r"range \[0, 1\]"):
        x.quantile(1.5)
    with pytest.raises(ValueError, match="interpolation must be one of"):
        x.quantile(0.5, interpolation="cubic")
    with pytest.raises(RuntimeError, match="non-negative"):
        rt.torch_bincount(rt.torch_tensor(np.array([1, -1])))
    with pytest.raises(RuntimeError, match="floating point"):
        rt.torch_tensor(np.array([1, 2])).std()
    with pytest.raises(ValueError, match="'fro'"):
        x.norm(p="nuc")
    for f in (lambda: x.sum(dim="a"), lambda: x.sort(dim="a"), lambda: x.var(dim=("a",))):
        with pytest.raises(RuntimeError, match="dim = 'a': this tensor has no dim names"):
            f()  # (dims by name: tests/test_named_tensors.py)
    with pytest.raises(ValueError, match="whole number"):
        x.cumsum(1.5)


# --------------------------------------------------------------------------
# from R: R torch's argument names, 1-based positions in and out

@needs_r
def test_r_positions_and_argument_names():
    code = r"""
library(torch)
x <- torch_tensor(matrix(c(3, 1, 2, 5, 4, 6), 2))   # rows 3 2 4 / 1 5 6
stopifnot(identical(as_array(torch_argsort(x, dim = 2)), matrix(c(2L, 1L, 1L, 2L, 3L, 3L), 2)))
stopifnot(identical(as_array(x$sort(descending = TRUE)[[2]][1, ]), c(3L, 1L, 2L)))
stopifnot(identical(as_array(torch_topk(x, 1)[[2]]), matrix(c(3L, 3L), 2)))
# R torch passes these positions on from libtorch unchanged: 0-based
stopifnot(identical(as_array(torch_kthvalue(x, 1, 2)[[2]]), c(1L, 0L)))
stopifnot(identical(as_array(torch_median(x, dim = 2)[[2]]), c(0L, 1L)))
stopifnot(identical(as_array(torch_cummax(x, dim = 2)[[2]][1, ]), c(0L, 0L, 2L)))
stopifnot(identical(as_array(torch_mode(torch_tensor(c(2, 1, 2)))[[2]]), 2L))
stopifnot(as_array(torch_prod(x, 1))[3] == 24)
a <- torch_tensor(matrix(c(TRUE, FALSE, TRUE, TRUE), 2))
stopifnot(identical(as_array(a$all(dim = 2)), c(TRUE, FALSE)))
stopifnot(identical(as_array(a$any(2)), c(TRUE, TRUE)))
stopifnot(identical(as_array(torch_bincount(torch_tensor(c(1L, 3L, 1L)))), c(2L, 0L, 1L)))
msg <- tryCatch(torch_bincount(torch_tensor(c(1L, 0L))), error = conditionMessage)
stopifnot(grepl("Indexing starts at 1", msg))
msg <- tryCatch(torch_sort(x, dim = 3), error = conditionMessage)
stopifnot(grepl("Dimension out of range", msg))
stopifnot(abs(as_array(torch_std(torch_tensor(c(1, 2, 3, 4)))) - sd(1:4)) < 1e-6)
m <- torch_tensor(matrix(1:6, 2))
stopifnot(identical(as_array(cumsum(m)), apply(matrix(1:6, 2), 2, cumsum)))  # along dim 1
cat("ok\n")
"""
    res = run_r("-e", code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith("ok")


def test_cumsum_and_cumprod_in_place():
    x = rand(3, 4)
    check_vs_torch(lambda T, x: (x * 1).cumsum_(1), x, second_order=True)
    check_vs_torch(lambda T, x: (x * 1).cumprod_(0), x, second_order=True)
    y = rt.torch_tensor(np.array([1.0, 2.0, 3.0]))
    assert y.cumprod_(0) is y and y.data.tolist() == [1.0, 2.0, 6.0]
    with pytest.raises(RuntimeError, match="leaf Variable"):
        rt.torch_ones(2, requires_grad=True).cumsum_(0)


def test_bucketize_searchsorted_histc_with_real_boundaries():
    edges = np.array([-1.0, 0.0, 0.5, 2.0])
    x = np.array([[-3.0, 0.0, 0.2], [0.5, 2.0, 9.0]])
    for right in (False, True):
        check_vs_torch(lambda T, x, e: T.bucketize(x, e, right=right), x, edges,
                       requires_grad=False)
        check_vs_torch(lambda T, e, x: T.searchsorted(e, x, right=right), edges, x,
                       requires_grad=False)
    rows = np.sort(np.random.default_rng(1).standard_normal((2, 5)), axis=1)
    check_vs_torch(lambda T, e, x: T.searchsorted(e, x, side="right"), rows, x,
                   requires_grad=False)
    order = np.array([2, 0, 3, 1])
    check_vs_torch(lambda T, e, x, s: T.searchsorted(e, x, sorter=s), edges[order], x,
                   np.argsort(edges[order]), requires_grad=False)
    check_vs_torch(lambda T, x: T.histc(x, 4, -1.0, 1.0),
                   np.array([-1.0, -0.5, 0.0, 0.25, 0.999, 1.0, 1.5]), requires_grad=False)


def test_norm_and_std_at_zero_have_pytorch_gradients():
    z = np.zeros((2, 3))
    z[1] = [1.0, -2.0, 0.5]
    for p in (2, 3, 1, float("inf")):
        check_vs_torch(lambda T, x: x.norm(p=p, dim=1), z)
    check_vs_torch(lambda T, x, y: T.dist(x, y), z, z.copy())
    check_vs_torch(lambda T, x: x.logsumexp(1), np.array([[-np.inf, -np.inf], [0.0, 1.0]]))
    same = np.array([[2.0, 2.0, 2.0], [1.0, 0.0, 3.0]])
    check_vs_torch(lambda T, x: x.std(1), same)
    check_vs_torch(lambda T, x: T.std_mean(x, 1)[0], same)


@pytest.mark.parametrize("shape, dim", [((3, 0), 1), ((0,), 0), ((2, 0, 3), 1), ((0, 4), 1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_empty_tensors_is_empty(name, shape, dim):
    # (the max along an empty dim has no value: an empty result, as PyTorch's)
    out = getattr(rt.torch_empty(*shape), name)(dim)
    assert out.shape == tuple(getattr(torch.empty(*shape), name)(dim).shape)


# --------------------------------------------------------------------------
# float sums in libtorch's order: bit for bit, whatever the layout

@pytest.fixture
def one_thread():
    # (libtorch splits full reductions of 32768+ values across threads; one thread is
    # the order rtorch-py reproduces)
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


SUM_SHAPES = [(), (1,), (6,), (100,), (12345,), (100000,), (3, 4, 5), (7, 1000), (1000, 7),
              (33, 65), (64, 40), (2, 100000), (5, 3, 130), (130, 3, 9), (17, 1, 200),
              (4, 5, 6, 7), (0, 3), (1 << 20,), (300, 4000)]


def _layouts(x: np.ndarray):
    yield x, lambda t: t
    if x.ndim > 1:
        yield x.T, lambda t: t.permute(*reversed(range(x.ndim)))
        yield x[..., ::2], lambda t: t[..., ::2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SUM_SHAPES, ids=str)
def test_sum_and_mean_add_in_libtorchs_order(shape, dtype, one_thread):
    rng = np.random.default_rng(len(shape) * 100 + sum(shape))
    x = np.asarray(rng.standard_normal(shape) * rng.uniform(0, 100, shape)).astype(dtype)
    dims = [None] + [(d,) for d in range(x.ndim)] + \
        [(a, b) for a in range(x.ndim) for b in range(a + 1, x.ndim)]
    for arr, same_in_torch in _layouts(x):
        ours, theirs = rt.torch_tensor(arr), same_in_torch(torch.from_numpy(x))
        for d in dims:
            for name in ("sum", "mean"):
                got = getattr(ours, name)() if d is None else getattr(ours, name)(dim=d)
                want = getattr(theirs, name)() if d is None else getattr(theirs, name)(dim=d)
                np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=f"{name} {d}")


@pytest.mark.parametrize("shape", [(1 << 20,), (70000, 3), (300, 400), (17, 1, 20000),
                                   (6, 200, 90)], ids=str)
def test_compiled_cascade_adds_as_numpys_does(shape, monkeypatch):
    # the compiled loops (FAST PATH in ops/sum_kernel.py) against NumPy's passes,
    # bit for bit and sign of zero too, in every layout and choice of dims
    pytest.importorskip("numba")
    from rtorch_py.ops import sum_kernel
    rng = np.random.default_rng(sum(shape))
    for dtype in (np.float32, np.float64):
        x = (rng.standard_normal(shape) * rng.uniform(0, 100, shape)).astype(dtype)
        x[..., :3] = -0.0
        for arr, _ in _layouts(x):
            for d in [None] + [(k,) for k in range(x.ndim)] + [(0, x.ndim - 1)]:
                monkeypatch.setattr(sum_kernel, "_JIT_MIN", 1 << 62)
                want = sum_kernel.libtorch_sum(arr, d)
                monkeypatch.setattr(sum_kernel, "_JIT_MIN", 1)  # (every cascade)
                got = sum_kernel.libtorch_sum(arr, d)
                np.testing.assert_array_equal(got, want, err_msg=f"{dtype} {d}")
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert sum_kernel._compiled() is not None


def test_float32_sum_differs_from_numpys_pairwise_order(one_thread):
    # what the order changes: the 8th digit of a long float32 sum (luz's AUC metric)
    x = np.random.default_rng(0).standard_normal(100000).astype(np.float32) * 100
    ours = rt.torch_tensor(x).sum().item()
    assert ours == torch.from_numpy(x).sum().item()
    assert ours != float(x.sum())


# --------------------------------------------------------------------------
# libtorch_sum's short rows (log_softmax's backward): the fast path is the general order

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_short_rows_fast_path_is_the_general_sum_bit_for_bit(dtype):
    """libtorch_sum's short-row fast path (few classes a row, as log_softmax's
    backward sums: a column at a time) gives the general path's libtorch-order
    sums to the bit, signed zeros, infinities and NaN included; other shapes
    take the general path."""
    from rtorch_py.ops.sum_kernel import _general_sum, libtorch_sum
    rng = np.random.default_rng(5)
    for c in range(1, 10):
        for rows in (1, 3, 32, 100):
            g = (rng.standard_normal((rows, c)) *
                 10.0 ** rng.integers(-20, 20, (rows, c))).astype(dtype)
            u = rng.random((rows, c))
            g[u < 0.05] = -0.0
            g[(u > 0.05) & (u < 0.07)] = np.inf
            g[(u > 0.07) & (u < 0.08)] = -np.inf
            g[(u > 0.08) & (u < 0.09)] = np.nan
            for a in (g, np.asfortranarray(g)):
                got, want = libtorch_sum(a, (1,)), _general_sum(a, {1})
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want)
                assert np.array_equal(np.signbit(got), np.signbit(want))
