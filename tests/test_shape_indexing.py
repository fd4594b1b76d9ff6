"""Shape and indexing ops: what the generated registry tests can't express
(positions returned as lists, negative positions, in-place views, errors), and
R torch's own conventions for them from R."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import check_vs_torch, needs_r, rand, run_r


def test_where_with_only_a_condition_gives_positions():
    c = rand(3, 4) > 0
    got = rt.torch_where(rt.torch_tensor(c))
    want = torch.where(torch.tensor(c))
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        np.testing.assert_array_equal(rt.as_array(g), w.numpy())
        assert g.dtype == rt.torch_long()


def test_nonzero_as_list_is_pytorchs_as_tuple():
    x = np.array([[0, 1, 2], [3, 0, 0]])
    got = rt.torch_tensor(x).nonzero(as_list=True)
    want = torch.tensor(x).nonzero(as_tuple=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(rt.as_array(g), w.numpy())
    assert rt.torch_nonzero(rt.torch_tensor([0.0, 0.0])).shape == (0, 1)


def test_take_counts_negative_positions_from_the_end():
    check_vs_torch(lambda T, x: x.take(T.tensor([-1, 0, -12])) if T is torch else
                   x.take(rt.torch_tensor([-1, 0, -12])), rand(3, 4))


def test_diagonal_is_a_view_that_writes_through():
    x = rt.torch_zeros(3, 3)
    d = x.diagonal()
    d.fill_(2.0)
    np.testing.assert_array_equal(rt.as_array(x), np.diag([2.0, 2.0, 2.0]))
    assert d._version is x._version


def test_repeat_interleave_with_a_repeat_each():
    check_vs_torch(lambda T, x: x.repeat_interleave(
        (T.tensor if T is torch else rt.torch_tensor)([2, 0, 1]), dim=0), rand(3, 2))


@pytest.mark.parametrize("call, message", [
    (lambda x: x.index_select(0, rt.torch_tensor([3])), "index 3 is out of bounds for "
                                                         "dimension 0 with size 3"),
    (lambda x: x.scatter(0, rt.torch_tensor([[0]]), 1.0, reduce="max"), "reduce argument must "
                                                                          "be either"),
    (lambda x: x.scatter(0, rt.torch_tensor([[0]])), "exactly one of `src`"),
    (lambda x: x.movedim((0, 1), 0), "same number of dims"),
    (lambda x: x.tensor_split(), "exactly one of `indices`"),
    (lambda x: x.unsqueeze(0).diag(), "Supports 1D or 2D tensors"),
    (lambda x: x.roll((1, 2), 0), "same length"),
    (lambda x: x.repeat(2), "can not be smaller"),
    (lambda x: x.masked_scatter(x == x, rt.torch_zeros(1)), "Number of elements of source"),
    (lambda x: x.index_copy(0, rt.torch_tensor([0]), rt.torch_zeros(2, 3)), "must have the shape"),
    (lambda x: rt.torch_where(x > 0, x), "give both `self` and `other`"),
    (lambda x: rt.torch_meshgrid([x]), "expects 0D or 1D tensors"),
    (lambda x: rt.torch_cat(x), "expected a list of tensors, got a tensor"),
    (lambda x: rt.torch_stack(x), "expected a list of tensors, got a tensor"),
    (lambda x: rt.torch_hstack(x), "expected a list of tensors, got a tensor"),
])
def test_bad_arguments_say_what_is_wrong(call, message):
    x = rt.torch_tensor(rand(3, 3))
    before = rt.as_array(x).copy()
    with pytest.raises((RuntimeError, IndexError, TypeError), match=message):
        call(x)
    np.testing.assert_array_equal(rt.as_array(x), before)


def test_in_place_scatter_leaves_the_tensor_intact_on_error():
    x = rt.torch_zeros(2, 3)
    with pytest.raises(IndexError, match="out of bounds"):
        x.scatter_(0, rt.torch_tensor([[0, 5, 0]]), 1.0)
    with pytest.raises(IndexError, match="out of bounds"):
        x.index_fill_(1, rt.torch_tensor([0, 3]), 1.0)
    assert rt.as_array(x).sum() == 0 and x._version[0] == 0


R_SCRIPT = r'''
library(torch)
ok <- function(cond, what) if (!isTRUE(cond)) stop("not as R torch: ", what)
x <- torch_tensor(matrix(1:9, ncol = 3, byrow = TRUE))
# positions 1-based in, 1-based out
ok(all(as_array(torch_index_select(x, 2, torch_tensor(c(1L, 3L)))) == cbind(c(1, 4, 7), c(3, 6, 9))), "index_select")
ok(all(as_array(torch_take(x, torch_tensor(c(1L, 9L)))) == c(1, 9)), "take")
ok(all(as_array(torch_nonzero(torch_tensor(c(0, 1, 2, 0, 3)))) == c(2, 3, 5)), "nonzero")
ok(all(as_array(x$nonzero()) == as_array(torch_argwhere(x))), "argwhere")
z <- torch_zeros(3, 5)
ok(all(as_array(z$scatter(1, torch_tensor(matrix(c(1L, 2L), ncol = 1)), 1)[, 1]) == c(1, 1, 0)), "scatter")
z$scatter_(1, torch_tensor(matrix(c(3L), ncol = 1)), 5)
ok(as_array(z[3, 1]) == 5, "scatter_")
ok(all(as_array(x$index_fill(1, torch_tensor(2L), 0L)[2, ]) == 0), "index_fill")
# R torch's narrow: 1-based start for torch_narrow and the methods, 0-based for torch_narrow_copy
ok(all(as_array(torch_narrow(x, 1, 1, 2)) == as_array(x[1:2, ])), "narrow")
ok(all(as_array(x$narrow_copy(1, 1, 2)) == as_array(x[1:2, ])), "x$narrow_copy")
ok(all(as_array(torch_narrow_copy(torch_tensor(1:10), dim = 1, start = 1, length = 3)) == 2:4), "torch_narrow_copy")
# dims 1-based
y <- torch_randn(3, 2, 1)
ok(all(torch_movedim(y, c(1, 2), c(2, 3))$shape == c(1, 3, 2)), "movedim")
ok(all(y$movedim(1, 2)$shape == c(2, 3, 1)), "movedim method")
ok(all(as_array(torch_flip(x, 1)[1, ]) == c(7, 8, 9)), "flip")
ok(all(as_array(torch_diagonal(x, offset = 1)) == c(2, 6)), "diagonal")
ok(all(as_array(torch_diagonal(x, dim1 = 2, dim2 = 1)) == c(1, 5, 9)), "diagonal dims")
ok(all(torch_diag_embed(torch_ones(2, 3), dim1 = 1, dim2 = 3)$shape == c(3, 2, 3)), "diag_embed")
ok(all(as_array(torch_roll(x, 1, 2)[1, ]) == c(3, 1, 2)), "roll")
ok(all(as_array(torch_tril(x, 1)) == rbind(c(1, 2, 0), c(4, 5, 6), c(7, 8, 9))), "tril")
ok(all(torch_unflatten(torch_zeros(2, 6), 2, c(2, 3))$shape == c(2, 2, 3)), "unflatten")
ok(all(x$`repeat`(c(1, 2))$shape == c(3, 6)), "repeat")
ok(all(as_array(torch_repeat_interleave(torch_tensor(1:3), 2)) == c(1, 1, 2, 2, 3, 3)), "repeat_interleave")
ok(all(torch_repeat_interleave(x, torch_tensor(c(1L, 2L, 0L)), dim = 1)$shape == c(3, 3)), "repeat_interleave tensor")
ok(all(x$expand(c(2, 3, 3), TRUE)$shape == c(2, 3, 3)), "expand implicit")
ok(length(torch_split(torch_tensor(1:5), c(2, 3))) == 2, "split sizes")
ok(length(torch_tensor_split(torch_arange(1, 7), sections = 3)) == 3, "tensor_split")
ok(all(sapply(torch_atleast_2d(list(torch_randn(2), torch_scalar_tensor(1), torch_randn(2, 2, 2))), function(a) a$ndim) == c(2, 2, 3)), "atleast_2d list")
g <- torch_meshgrid(list(torch_tensor(1:2), torch_tensor(1:3)), indexing = "xy")
ok(all(g[[1]]$shape == c(3, 2)) && all(as_array(g[[1]][1, ]) == c(1, 2)), "meshgrid xy")
ok(all(torch_hstack(list(torch_ones(2, 1), torch_zeros(2, 2)))$shape == c(2, 3)), "hstack")
ok(all(torch_broadcast_tensors(list(torch_ones(2, 1), torch_zeros(3)))[[2]]$shape == c(2, 3)), "broadcast_tensors")
ok(all(as_array(x$masked_select(x > 7)) == c(8, 9)), "masked_select")
cat("all as R torch\n")
'''


@needs_r
def test_from_r_as_r_torch(tmp_path):
    script = tmp_path / "shape.R"
    script.write_text(R_SCRIPT)
    res = run_r(str(script))
    assert res.returncode == 0, res.stderr[-3000:]
    assert "all as R torch" in res.stdout


@pytest.mark.parametrize("fn", [
    lambda T, x: x.permute(2, 0, 1), lambda T, x: x.reshape(4, 6), lambda T, x: x.view(6, 4),
    lambda T, x: x.unsqueeze(0).expand(2, 2, 3, 4), lambda T, x: x.repeat(1, 2, 1),
])
def test_sizes_as_separate_arguments(fn):
    """The methods' own form, sizes one by one (PyTorch's functions take a tuple)."""
    check_vs_torch(fn, rand(2, 3, 4), second_order=True)


@pytest.mark.parametrize("view", [
    lambda x: x.diagonal(), lambda x: x.diagonal(1), lambda x: x.movedim(0, 1),
    lambda x: x.unflatten(1, (2, 2)), lambda x: x.swapaxes(0, 1), lambda x: x.narrow(1, 1, 2),
    lambda x: x.view_as(x.t()), lambda x: x.tensor_split(2, dim=1)[1],
])
def test_in_place_through_a_new_view_reaches_the_base(view):
    """The view ops share data and history: an in-place change through one is seen
    by the base, with PyTorch's gradients."""
    def fn(T, a):
        y = a * 1.0
        v = view(y)
        v.mul_(3.0)
        return y * a
    check_vs_torch(fn, rand(4, 4), second_order=True, check_names=False)


def test_as_strided_of_a_view_reads_the_storage():
    """Sizes and strides count in the storage (the base's elements), as PyTorch's."""
    check_vs_torch(lambda T, x: x.t().as_strided((2, 2), (1, 2)), rand(3, 4), second_order=True)
    check_vs_torch(lambda T, x: x[1:].as_strided((2, 2), (1, 4)), rand(3, 4), second_order=True)
    check_vs_torch(lambda T, x: x.as_strided((3, 3), (1, 1), 2) * 2, rand(3, 4),
                   second_order=True, scalar_nodes=True)
    with pytest.raises(RuntimeError, match="the storage has 12"):
        rt.torch_zeros(3, 4).as_strided((3, 3), (4, 2))
    # overlapping windows are read-only: writing through one would be ambiguous
    with pytest.raises(RuntimeError, match="single memory location"):
        rt.torch_zeros(6).as_strided((4, 3), (1, 1)).fill_(1.0)


def test_slice_is_a_view_and_refuses_a_step_below_one():
    x = rt.torch_zeros(4, 3)
    x.slice(0, 1, None, 2).fill_(1.0)  # rows 1 and 3, written through the view
    t = torch.zeros(4, 3)
    torch.ops.aten.slice(t, 0, 1, None, 2).fill_(1.0)
    np.testing.assert_array_equal(rt.as_array(x), t.numpy())
    with pytest.raises(RuntimeError, match="step must be positive, got 0"):
        x.slice(0, step=0)


def test_index_reduce_names_the_reductions_it_takes():
    x, s = rt.torch_zeros(3, 2), rt.torch_ones(2, 2)
    with pytest.raises(RuntimeError, match='"prod", "mean", "amax", "amin", got "sum"'):
        x.index_reduce(0, rt.torch_tensor([0, 1]), s, "sum")
    with pytest.raises(RuntimeError, match="source of shape"):
        x.index_reduce(0, rt.torch_tensor([0, 1]), rt.torch_ones(3, 2), "amax")


def test_index_reduce_in_place_as_pytorch():
    x, t = rand(4, 3), rand(2, 3)
    got = rt.torch_tensor(x)
    got.index_reduce_(0, rt.torch_tensor([3, 0]), rt.torch_tensor(t), "amin",
                      include_self=False)
    want = torch.tensor(x).index_reduce_(0, torch.tensor([3, 0]), torch.tensor(t), "amin",
                                         include_self=False)
    np.testing.assert_array_equal(rt.as_array(got), want.numpy())


def test_histogram_counts_values_on_the_edges_as_pytorch():
    x = np.array([0.0, 0.25, 0.5, 0.5, 1.0, 1.5, -0.1], dtype=np.float32)
    for args in ((4,), (rt.torch_tensor(np.array([0.0, 0.5, 1.0], np.float32)),)):
        got = rt.torch_tensor(x).histogram(*args)
        targs = [torch.tensor(a.data) if isinstance(a, rt.Tensor) else a for a in args]
        want = torch.tensor(x).histogram(*targs)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(rt.as_array(g), w.numpy())


def test_histogram_errors():
    with pytest.raises(RuntimeError, match="floating point tensor, got Long"):
        rt.torch_tensor([1, 2]).histogram()
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        rt.torch_tensor([1.0]).histogram(0)
    with pytest.raises(RuntimeError, match=r"min \(2.0\) must not exceed its max \(1.0\)"):
        rt.torch_tensor([1.0]).histogram(3, range=(2.0, 1.0))


@needs_r
def test_tensor_methods_from_r_as_r_torch():
    res = run_r("-e", """
        library(torch)
        x <- torch_arange(1, 12)$view(c(3, 4))
        cat(as_array(x$slice(2, 1, 3)), "|")
        cat(as_array(x$index(list(torch_tensor(c(3L, 1L))))), "|")
        y <- torch_zeros(3)
        y$index_reduce_(1, torch_tensor(c(3L, 3L)), torch_tensor(c(2, 5)), "amax",
                        include_self = FALSE)
        cat(as_array(y), "|")
        g <- torch_ones(3)$hardshrink_backward(torch_tensor(c(1, 2, 3)), 0.5)
        cat(as_array(g), "|")
        cat(x$new_empty_strided(c(2, 3), c(1, 2))$stride())
    """)
    assert res.returncode == 0, res.stderr[-3000:]
    # (as_array is column-major: x's columns 1 and 2 counted from 0; rows 3 and 1)
    assert [p.strip() for p in res.stdout.split("|")] == [
        "2 6 10 3 7 11", "9 1 10 2 11 3 12 4", "0 0 5", "1 2 3", "1 2"]
