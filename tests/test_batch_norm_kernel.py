"""Batch norm's compiled kernel (rtorch_py/ops/bn_kernel.py, the FAST PATH of
`_batch_norm_impl_index`): PyTorch's bits in float32 and float64, training and
evaluation, for every layout libtorch's CPU kernel walks in its own order; close
to the plain NumPy path; gradients by finite differences; and the cases that
keep the NumPy path (a non-contiguous input)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from rtorch_py import runtime
from rtorch_py.nn import functional as F
from rtorch_py.ops import bn_kernel

from helpers import gradcheck

pytest.importorskip("numba")

# (N, C, S) as the kernel sees them: S of 1 (rows), below one vector, whole vectors
# with and without a tail, and 2-d to 5-d inputs
SHAPES = [(6, 5), (64, 10), (8, 6, 1, 1), (3, 5, 7), (5, 7, 9, 11), (4, 3, 2, 2, 5),
          (4, 9, 8, 8), (2, 4, 33)]


@pytest.fixture
def one_thread():
    """libtorch sums an (N, C) input's rows by thread: both sides at one thread."""
    before, torch_before = runtime.torch_get_num_threads(), torch.get_num_threads()
    runtime.torch_set_num_threads(1)
    torch.set_num_threads(1)
    yield
    runtime.torch_set_num_threads(before)
    torch.set_num_threads(torch_before)


def _case(shape: tuple, dtype: type, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    c = shape[1]
    return ((rng.standard_normal(shape) * 3 + 1).astype(dtype),
            rng.standard_normal(shape).astype(dtype), rng.standard_normal(c).astype(dtype),
            rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype),
            (rng.random(c) + 0.5).astype(dtype))


def _ours(x, g, w, b, rm, rv, training, with_affine=True, needs=(True, True, True)) -> list:
    X = rt.torch_tensor(x, requires_grad=needs[0])
    W = rt.torch_tensor(w, requires_grad=needs[1]) if with_affine else None
    B = rt.torch_tensor(b, requires_grad=needs[2]) if with_affine else None
    RM, RV = rt.torch_tensor(rm.copy()), rt.torch_tensor(rv.copy())
    y = F.nnf_batch_norm(X, RM, RV, W, B, training, 0.1, 1e-5)
    grads = [None] * 3
    wanted = [t for t, need in zip((X, W, B), needs) if t is not None and need]
    if wanted:
        got = iter(rt.autograd_grad(y, wanted, rt.torch_tensor(g)))
        grads = [next(got) if t is not None and need else None
                 for t, need in zip((X, W, B), needs)]
    return [y.data, RM.data, RV.data] + [None if t is None else t.data for t in grads]


def _torch(x, g, w, b, rm, rv, training, with_affine=True, needs=(True, True, True)) -> list:
    X = torch.tensor(x, requires_grad=needs[0])
    W = torch.tensor(w, requires_grad=needs[1]) if with_affine else None
    B = torch.tensor(b, requires_grad=needs[2]) if with_affine else None
    RM, RV = torch.tensor(rm), torch.tensor(rv)
    y = torch.nn.functional.batch_norm(X, RM, RV, W, B, training, 0.1, 1e-5)
    grads = [None] * 3
    wanted = [t for t, need in zip((X, W, B), needs) if t is not None and need]
    if wanted:
        got = iter(torch.autograd.grad(y, wanted, torch.tensor(g)))
        grads = [next(got) if t is not None and need else None
                 for t, need in zip((X, W, B), needs)]
    return [y.detach().numpy(), RM.numpy(), RV.numpy()] + \
        [None if t is None else t.numpy() for t in grads]


NAMES = ("output", "running_mean", "running_var", "input grad", "weight grad", "bias grad")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
def test_pytorchs_bits(shape, training, dtype, one_thread) -> None:
    case = _case(shape, dtype)
    for name, a, t in zip(NAMES, _ours(*case, training), _torch(*case, training)):
        assert a.dtype == t.dtype and np.array_equal(a, t), f"{name} differs from PyTorch's"


@pytest.mark.parametrize("needs", [(True, False, False), (False, True, False),
                                   (False, False, True), (False, True, True)])
def test_some_gradients_only_and_no_affine(needs, one_thread) -> None:
    case = _case((4, 6, 5, 5), np.float32, seed=1)
    for got, want in zip(_ours(*case, True, needs=needs), _torch(*case, True, needs=needs)):
        assert (got is None) == (want is None)
        assert got is None or np.array_equal(got, want)
    for got, want in zip(_ours(*case, True, False, (True, True, True)),
                         _torch(*case, True, False, (True, True, True))):
        assert (got is None) == (want is None)
        assert got is None or np.array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 10), (5, 7, 9, 11), (4, 3, 2, 2, 5)])
def test_close_to_the_numpy_path(shape, dtype, monkeypatch) -> None:
    """(The NumPy path: the kernel reported missing, as without numba.)"""
    case = _case(shape, dtype, seed=2)
    for training in (True, False):
        fast = _ours(*case, training)
        monkeypatch.setattr(bn_kernel, "_jit", [None])
        slow = _ours(*case, training)
        monkeypatch.undo()
        tol = 2e-5 if dtype == np.float32 else 1e-12
        for name, a, s in zip(NAMES, fast, slow):
            np.testing.assert_allclose(a, s, rtol=tol, atol=tol, err_msg=name)


def test_finite_differences() -> None:
    x, _, w, b, rm, rv = _case((3, 4, 5), np.float64, seed=3)
    for training in (True, False):
        assert gradcheck(lambda T, x, w, b: F.nnf_batch_norm(
            x, rt.torch_tensor(rm), rt.torch_tensor(rv), w, b, training), x, w, b)


def test_a_non_contiguous_input_keeps_the_numpy_path(one_thread) -> None:
    """A non-contiguous input takes the NumPy path: close to PyTorch, not its bits."""
    x, g, w, b, rm, rv = _case((4, 6, 5, 5), np.float32, seed=4)
    xt = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    assert not xt.flags.c_contiguous
    for got, want in zip(_ours(xt, g, w, b, rm, rv, True), _torch(x, g, w, b, rm, rv, True)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_no_running_stats_and_a_constant_channel_without_eps(one_thread) -> None:
    """libtorch's 1/std of a zero variance with eps 0 is 0: the output is the bias."""
    x, g, w, b, _, _ = _case((4, 3, 5, 5), np.float32, seed=5)
    x[:, 1] = 2.5
    X, W, B = (rt.torch_tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.nnf_batch_norm(X, None, None, W, B, True, 0.1, 0.0)
    y.backward(rt.torch_tensor(g))
    tX, tW, tB = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = torch.native_batch_norm(tX, tW, tB, None, None, True, 0.1, 0.0)[0]  # (eps 0:
    ty.backward(torch.tensor(g))  # refused by PyTorch's Python layer, not by R torch)
    assert np.array_equal(y.data, ty.detach().numpy())
    assert np.all(y.data[:, 1] == b[1])
    for ours, theirs in ((X, tX), (W, tW), (B, tB)):
        assert np.array_equal(ours.grad.data, theirs.grad.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(16, 18, 32, 32), (67, 10), (8, 6, 1, 1)])
def test_two_threads_as_pytorchs_two(shape, dtype) -> None:
    """Two threads on both sides: runs of channels (large enough to be split) keep
    the bits; an (N, C) input sums each thread's rows apart, as libtorch does."""
    case = _case(shape, dtype, seed=6)
    before, torch_before = runtime.torch_get_num_threads(), torch.get_num_threads()
    runtime.torch_set_num_threads(2)
    torch.set_num_threads(2)
    try:
        ours, theirs = _ours(*case, True), _torch(*case, True)
    finally:
        runtime.torch_set_num_threads(before)
        torch.set_num_threads(torch_before)
    for name, a, t in zip(NAMES, ours, theirs):
        assert np.array_equal(a, t), f"{name} differs from PyTorch's"
