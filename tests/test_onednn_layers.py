"""Max pooling (forward, with its positions) and ReLU's backward through oneDNN
(`ops/onednn.py`, the fast paths of `nn_kernels.max_pool_arrays` and of
ReluBackward0) against their NumPy paths, bit for bit, and against PyTorch: the
zoo's shapes, odd sizes, padding, ceil_mode, dilation, 1-d and 3-d, ties,
non-contiguous input, NaN and infinities, overlapping windows, 1 and 2 threads,
second order, a forked child. And the convolution's bias inside oneDNN's
kernels: PyTorch's bits at the VGG zoo's shapes.
"""
from __future__ import annotations


import numpy as np
import pytest
import torch

import rtorch_py as rt
from rtorch_py import runtime
from rtorch_py.nn import functional as F
from rtorch_py.ops import onednn

from helpers import onednn_platform, passes_in_forked_child

pytestmark = onednn_platform


@pytest.fixture
def routed(monkeypatch):
    """Whether oneDNN ran each pooling / ReLU backward call (not None), in order."""
    calls = []
    for name in ("max_pool", "relu_backward"):
        real = getattr(onednn, name)

        def spy(*args, _real=real, _name=name):
            res = _real(*args)
            calls.append((_name, res is not None))
            return res
        monkeypatch.setattr(onednn, name, spy)
    return calls


def _bits(a) -> np.ndarray:
    a = np.asarray(a)
    return a.view(np.int32 if a.dtype == np.float32 else np.int64)


def _pool(x: np.ndarray, g: np.ndarray, nd: int, kw: dict) -> tuple:
    """(output, indices, input gradient) of nnf_max_pool{nd}d on our engine."""
    t = rt.torch_tensor(x, requires_grad=True)
    out, idx = getattr(F, f"nnf_max_pool{nd}d")(t, return_indices=True, **kw)
    out.backward(rt.torch_tensor(g))
    return out.data, idx.data, t.grad.data


def _torch_pool(x: np.ndarray, g: np.ndarray, nd: int, kw: dict) -> tuple:
    t = torch.tensor(x, requires_grad=True)
    out, idx = getattr(torch.nn.functional, f"max_pool{nd}d")(t, return_indices=True, **kw)
    out.backward(torch.tensor(g))
    return out.detach().numpy(), idx.numpy(), t.grad.numpy()


POOLS = [  # (input shape, arguments)
    ((32, 32, 32, 32), dict(kernel_size=2)),                      # the VGG zoo's
    ((1, 64, 112, 112), dict(kernel_size=3, stride=2, padding=1)),  # ResNet-18's stem
    ((3, 5, 9, 11), dict(kernel_size=2)),                         # odd sizes: a row left over
    ((2, 3, 10, 9), dict(kernel_size=3, stride=2, ceil_mode=True)),
    ((2, 3, 11, 12), dict(kernel_size=(3, 2), stride=(3, 2), padding=1)),
    ((2, 3, 13, 13), dict(kernel_size=2, stride=3, dilation=2)),
    ((2, 4, 17), dict(kernel_size=3, stride=3)),                  # 1-d
    ((2, 3, 6, 7, 8), dict(kernel_size=2)),                       # 3-d
    ((2, 3, 9, 9), dict(kernel_size=3, stride=1, padding=1)),     # overlapping windows
]


@pytest.mark.parametrize("shape,kw", POOLS, ids=[f"{s}-{sorted(k.items())}" for s, k in POOLS])
@pytest.mark.parametrize("ties", [False, True])
def test_max_pool_matches_numpy_and_pytorch(shape, kw, ties, routed, monkeypatch) -> None:
    rng = np.random.default_rng(len(shape) + sum(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    if ties:                                  # small integers: many equal maxima in a window
        x = np.floor(x * 2)
    nd = len(shape) - 2
    t_out = getattr(torch.nn.functional, f"max_pool{nd}d")(torch.tensor(x), **kw)
    g = rng.standard_normal(tuple(t_out.shape)).astype(np.float32)
    fast = _pool(x, g, nd, kw)
    # (dilated windows: oneDNN has its reference loops only, NumPy runs them)
    assert routed == [("max_pool", "dilation" not in kw)]
    monkeypatch.setattr(onednn, "ENABLED", False)
    slow = _pool(x, g, nd, kw)
    ref = _torch_pool(x, g, nd, kw)
    for name, f, s, r in zip(("output", "indices", "input gradient"), fast, slow, ref):
        assert np.array_equal(_bits(f), _bits(s)), name
        assert np.array_equal(f, r), name


def test_max_pool_non_contiguous_input_and_two_threads(routed) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 6, 10, 12)).astype(np.float32).transpose(0, 1, 3, 2)
    g = rng.standard_normal((8, 6, 6, 5)).astype(np.float32)
    before = runtime.torch_get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            runtime.torch_set_num_threads(threads)
            results.append(_pool(x, g, 2, dict(kernel_size=2)))
    finally:
        runtime.torch_set_num_threads(before)
    ref = _torch_pool(np.ascontiguousarray(x), g, 2, dict(kernel_size=2))
    for res in results:
        for f, r in zip(res, ref):
            assert np.array_equal(f, r)
    assert [ok for _, ok in routed] == [True, True]


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_max_pool_nan_and_infinities_as_pytorch(special) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    x[0, 1, 2, 3] = special
    x[1, 2, :2, :2] = special                  # a whole window of it
    g = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    for f, r in zip(_pool(x, g, 2, dict(kernel_size=2)),
                    _torch_pool(x, g, 2, dict(kernel_size=2))):
        np.testing.assert_array_equal(f, r)


def test_max_pool_second_order_and_other_dtypes(routed) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 6))
    for dt in (np.float64, np.float32):
        t = rt.torch_tensor(x.astype(dt), requires_grad=True)
        out = F.nnf_max_pool2d(t, 2)
        (gx,) = rt.autograd_grad((out * out).sum(), [t], create_graph=True)
        (gg,) = rt.autograd_grad(gx.sum(), [t])
        tt = torch.tensor(x.astype(dt), requires_grad=True)
        tout = torch.nn.functional.max_pool2d(tt, 2)
        (tgx,) = torch.autograd.grad((tout * tout).sum(), [tt], create_graph=True)
        (tgg,) = torch.autograd.grad(tgx.sum(), [tt])
        np.testing.assert_array_equal(gx.data, tgx.detach().numpy())
        np.testing.assert_array_equal(gg.data, tgg.numpy())
    assert [ok for name, ok in routed if name == "max_pool"] == [False, True]


def test_relu_backward_matches_numpy_and_pytorch(routed, monkeypatch) -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((7, 33, 17, 19)).astype(np.float32)   # above one block
    x[0, 0, 0, :4] = [0.0, -0.0, np.nan, np.inf]
    g = rng.standard_normal(x.shape).astype(np.float32)
    g[0, 0, 1, :3] = [np.nan, -0.0, np.inf]

    def grads():
        t = rt.torch_tensor(x, requires_grad=True)
        F.nnf_relu(t).backward(rt.torch_tensor(g))
        return t.grad.data
    fast = grads()
    assert routed == [("relu_backward", True)]
    monkeypatch.setattr(onednn, "ENABLED", False)
    slow = grads()
    t = torch.tensor(x, requires_grad=True)
    torch.relu(t).backward(torch.tensor(g))
    # PyTorch's values (signed zeros aside), but where a NaN or infinite gradient meets a
    # result <= 0: the mask multiplies it on both our paths (NaN), libtorch selects 0
    masked_nan = ~np.isfinite(g) & ~(x > 0)
    np.testing.assert_array_equal(fast[~masked_nan], t.grad.numpy()[~masked_nan])
    assert np.isnan(fast[masked_nan]).all() and np.isnan(slow[masked_nan]).all()
    # NumPy's bits everywhere but where the result is NaN: there oneDNN passes the
    # gradient, as libtorch's threshold_backward (NaN <= 0 is false), NumPy's 0 does not
    nan = np.isnan(x)
    assert np.array_equal(_bits(fast)[~nan], _bits(slow)[~nan])
    assert fast[0, 0, 0, 2] == g[0, 0, 0, 2] == t.grad.numpy()[0, 0, 0, 2]


def test_small_and_float64_relu_backwards_stay_on_numpy(routed) -> None:
    for shape, dt in (((4, 5), np.float32), ((7, 33, 17, 19), np.float64)):
        t = rt.torch_tensor(np.ones(shape, dt), requires_grad=True)
        F.nnf_relu(t).sum().backward()
        assert np.array_equal(t.grad.data, np.ones(shape, dt))
    assert [ok for _, ok in routed] == [False]       # (the small one never asks)


def test_a_forked_child_pools_with_numpy() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    g = np.ones((2, 3, 4, 4), np.float32)
    want = _pool(x, g, 2, dict(kernel_size=2))                    # the parent's pool started
    assert passes_in_forked_child(
        lambda: not onednn.available() and all(
            np.array_equal(a, b) for a, b in zip(_pool(x, g, 2, dict(kernel_size=2)), want)),
        "max pooling")


# The convolution's bias inside oneDNN's kernels, as libtorch's oneDNN
# convolutions: the output and the bias's gradient are PyTorch's bit for bit at
# the VGG zoo's shapes (added and summed apart, they were not).

VGG_CONVS = [((32, 3, 32, 32), 32), ((32, 32, 32, 32), 32), ((8, 64, 16, 16), 64),
             ((8, 128, 8, 8), 128)]


def _conv(x, w, b, g, kw) -> tuple:
    X, W, B = (rt.torch_tensor(a, requires_grad=True) for a in (x, w, b))
    F.nnf_conv2d(X, W, B, **kw).backward(rt.torch_tensor(g))
    return F.nnf_conv2d(X, W, B, **kw).data, B.grad.data, W.grad.data


def _torch_conv(x, w, b, g, kw) -> tuple:
    X, W, B = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    y = torch.nn.functional.conv2d(X, W, B, **kw)
    y.backward(torch.tensor(g))
    return y.detach().numpy(), B.grad.numpy(), W.grad.numpy()


def _conv_arrays(shape, out, kw, seed=6) -> tuple:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.standard_normal((out, shape[1], 3, 3)) * 0.1).astype(np.float32)
    b = rng.standard_normal(out).astype(np.float32)
    y = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), **kw)
    return x, w, b, rng.standard_normal(tuple(y.shape)).astype(np.float32)


@pytest.mark.parametrize("shape,out", VGG_CONVS, ids=[str(s) for s, _ in VGG_CONVS])
def test_conv_bias_inside_the_kernel_is_pytorchs(shape, out, monkeypatch) -> None:
    kw = dict(padding=1)
    x, w, b, g = _conv_arrays(shape, out, kw)
    fast = _conv(x, w, b, g, kw)
    for name, f, r in zip(("output", "bias gradient", "weight gradient"), fast,
                          _torch_conv(x, w, b, g, kw)):
        assert np.array_equal(_bits(f), _bits(r)), name
    monkeypatch.setattr(onednn, "ENABLED", False)                # im2col, added and summed
    for f, s in zip(fast, _conv(x, w, b, g, kw)):     # (sums of up to 32K float32 terms)
        np.testing.assert_allclose(f, s, rtol=1e-4, atol=1e-5 * np.abs(s).max())


def test_conv_bias_in_pieces_transposed_and_float64(monkeypatch) -> None:
    kw = dict(stride=2, padding=1)
    x, w, b, g = _conv_arrays((6, 4, 9, 9), 5, kw)
    monkeypatch.setattr("rtorch_py.ops.nn_kernels._WEIGHT_GRAD_BYTES", 1 << 12)  # 3 pieces
    for f, r in zip(_conv(x, w, b, g, kw), _torch_conv(x, w, b, g, kw)):
        np.testing.assert_allclose(f, r, rtol=1e-4, atol=1e-5)
    for f, r in zip(_conv(*(a.astype(np.float64) for a in (x, w, b, g)), kw),
                    _torch_conv(*(a.astype(np.float64) for a in (x, w, b, g)), kw)):
        np.testing.assert_allclose(f, r, rtol=1e-10, atol=1e-12)
    # transposed: w (5, 4, 3, 3) maps g's 5 channels to 4, the bias added apart
    X, W, B = (rt.torch_tensor(a, requires_grad=True) for a in (g, w, b[:4]))
    y = F.nnf_conv_transpose2d(X, W, B, **kw)
    tX, tW, tB = (torch.tensor(a, requires_grad=True) for a in (g, w, b[:4]))
    ty = torch.nn.functional.conv_transpose2d(tX, tW, tB, **kw)
    np.testing.assert_allclose(y.data, ty.detach().numpy(), rtol=1e-4, atol=1e-5)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(B.grad.data, tB.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_batch_norm_takes_its_mean_once_with_numpys_bits(monkeypatch) -> None:
    """(NumPy's var given the mean: the same bits as var making its own.) On the
    NumPy path, which batch norm takes without numba."""
    from rtorch_py.ops import bn_kernel, nn_primitives as P
    monkeypatch.setattr(bn_kernel, "_jit", [None])
    x = np.random.default_rng(7).standard_normal((16, 8, 12, 10)).astype(np.float32) * 3 + 1
    rv = rt.torch_ones(8)
    _, mean, invstd, _, _ = P._batch_norm_impl_index(rt.torch_tensor(x), None, None, None, rv,
                                                     True, 1.0, 1e-5, False)
    var = x.var(axis=(0, 2, 3))
    assert np.array_equal(_bits(mean.data), _bits(x.mean(axis=(0, 2, 3))))
    assert np.array_equal(_bits(invstd.data), _bits(1.0 / np.sqrt(var + 1e-5)))
    assert np.array_equal(_bits(rv.data), _bits(var * np.float32(x.size / 8 / (x.size / 8 - 1))))
