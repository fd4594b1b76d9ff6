"""What the generated op tests (tests/test_op_registry.py) can't check for
adaptive pooling, _batch_norm_impl_index, _cdist_backward,
_cholesky_solve_helper, scaled_dot_product_attention, multi_margin_loss,
one_hot and stft: side effects, random dropout, derivatives PyTorch refuses,
second derivatives PyTorch lacks (by finite differences), errors, and the
nnf_* forms that share these ops.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import check_vs_torch
from rtorch_py.nn import functional as F


def _t(a, requires_grad=False):
    return rt.torch_tensor(np.array(a), requires_grad=requires_grad)


def _second_order_check(fn, *arrays) -> None:
    """The gradient of sum(fn(x) * w) is itself right: gradcheck of it."""
    w = np.random.default_rng(1).standard_normal(np.shape(fn(*[_t(a) for a in arrays]).data))

    def grads(*xs):
        with rt.with_enable_grad():  # (gradcheck's finite differences run without grad)
            out = fn(*xs)
            return rt.autograd_grad([(out * _t(w)).sum()], list(xs), create_graph=True)
    assert rt.autograd_gradcheck(grads, [_t(a, True) for a in arrays])


# --------------------------------------------------------------------------
# adaptive pooling: the nnf forms share the ops (PyTorch's nodes)

@pytest.mark.parametrize("nd,shape,size", [(1, (2, 3, 7), 3), (1, (3, 7), 1),
                                           (2, (3, 5, 7), (2, None)), (3, (1, 2, 4, 5, 6),
                                                                       (2, 3, 4)),
                                           (3, (2, 4, 5, 6), 1)])
def test_nnf_adaptive_avg_pool_matches_pytorch(nd, shape, size) -> None:
    a = np.random.default_rng(0).standard_normal(shape)
    name = f"adaptive_avg_pool{nd}d"
    check_vs_torch(lambda T, x: (getattr(F, "nnf_" + name)(x, size) if T is not torch else
                                 getattr(torch.nn.functional, name)(x, size)), a)


def test_adaptive_avg_pool_errors() -> None:
    with pytest.raises(RuntimeError, match="3D or 4D"):
        rt.torch_adaptive_avg_pool2d(rt.torch_randn(4, 4), (2, 2))
    with pytest.raises(RuntimeError, match="output_size must be 2"):
        rt.torch_adaptive_avg_pool2d(rt.torch_randn(1, 4, 4), (2, 2, 2))
    with pytest.raises(RuntimeError, match="floating"):
        rt.torch_adaptive_avg_pool2d(rt.torch_ones(1, 4, 4, dtype=rt.torch_long()), 2)


# --------------------------------------------------------------------------
# _batch_norm_impl_index: the running statistics, updated as PyTorch's

@pytest.mark.parametrize("momentum", [0.1, 1.0])
def test_batch_norm_impl_index_updates_running_stats(momentum) -> None:
    rng = np.random.default_rng(2)
    x, rm, rv = rng.standard_normal((5, 3, 2)), rng.standard_normal(3), rng.random(3) + 0.5
    r_rm, r_rv = _t(rm), _t(rv)
    t_rm, t_rv = torch.tensor(rm), torch.tensor(rv)
    out = rt.torch__batch_norm_impl_index(_t(x), None, None, r_rm, r_rv, True, momentum,
                                          1e-5, True)
    ref = torch._batch_norm_impl_index(torch.tensor(x), None, None, t_rm, t_rv, True,
                                       momentum, 1e-5, True)
    np.testing.assert_allclose(r_rm.data, t_rm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(r_rv.data, t_rv.numpy(), rtol=1e-12)
    np.testing.assert_allclose(out[0].data, ref[0].numpy(), atol=1e-12)
    assert out[4] == 0 and out[3].shape == (0,) and out[3].dtype == rt.torch_uint8()
    # evaluation leaves them alone
    rt.torch__batch_norm_impl_index(_t(x), None, None, r_rm, r_rv, False, momentum, 1e-5,
                                    True)
    np.testing.assert_allclose(r_rm.data, t_rm.numpy(), rtol=1e-12)


def test_batch_norm_impl_index_needs_running_stats_in_evaluation() -> None:
    with pytest.raises(RuntimeError, match="running_mean and running_var must be given"):
        rt.torch__batch_norm_impl_index(rt.torch_randn(3, 2), None, None, None, None, False,
                                        0.1, 1e-5, True)


# --------------------------------------------------------------------------
# kernels PyTorch gives no derivative

def test_cdist_backward_is_the_gradient_of_cdist() -> None:
    rng = np.random.default_rng(3)
    x1, x2, g = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.random((4, 5))
    for p in (1.0, 1.5, 2.0, 3.0, float("inf")):
        tx1 = torch.tensor(x1, requires_grad=True)
        d = torch.cdist(tx1, torch.tensor(x2), p=p)
        d.backward(torch.tensor(g))
        ours = rt.torch__cdist_backward(_t(g), _t(x1), _t(x2), p, _t(d.detach().numpy()))
        np.testing.assert_allclose(ours.data, tx1.grad.numpy(), atol=1e-12)


def test_cdist_second_derivatives() -> None:
    """The matrix-product form has them (as PyTorch's); the direct form's
    gradient refuses, as PyTorch's CdistBackward0 does."""
    rng = np.random.default_rng(6)
    x1, x2 = rng.standard_normal((3, 2)), rng.standard_normal((4, 2))
    _second_order_check(lambda a, b: rt.torch_cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
                        x1, x2)
    a = _t(x1, True)
    (g,) = rt.autograd_grad([rt.torch_cdist(a, _t(x2)).sum()], [a], create_graph=True)
    with pytest.raises(RuntimeError, match="derivative for '_cdist_backward'"):
        g.sum().backward()


def test_cdist_errors() -> None:
    with pytest.raises(RuntimeError, match="same number of columns"):
        rt.torch_cdist(rt.torch_randn(3, 2), rt.torch_randn(3, 4))
    with pytest.raises(RuntimeError, match="at least 2D"):
        rt.torch_cdist(rt.torch_randn(3), rt.torch_randn(3, 3))
    with pytest.raises(ValueError, match="not a valid value for compute_mode"):
        rt.torch_cdist(rt.torch_randn(3, 2), rt.torch_randn(3, 2), compute_mode="fast")


def test_kernels_without_derivative_refuse_backward() -> None:
    x = rt.torch_randn(2, 2, requires_grad=True)
    y = rt.torch__cdist_backward(x, x, x, 1, x)
    assert y.grad_fn.name == "CdistBackwardBackward0"
    with pytest.raises(RuntimeError, match="derivative for '_cdist_backward' is not"):
        y.sum().backward()
    a = rt.torch_tensor(np.eye(2), requires_grad=True)
    z = rt.torch__cholesky_solve_helper(a, a, True)
    assert z.grad_fn.name == "NotImplemented"
    with pytest.raises(RuntimeError, match="_cholesky_solve_helper is not implemented"):
        z.sum().backward()


# --------------------------------------------------------------------------
# scaled_dot_product_attention

def test_sdpa_dropout_is_seeded_and_scaled() -> None:
    q = rt.torch_randn(2, 3, 4, 5)
    rt.torch_manual_seed(7)
    a = rt.torch_scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    rt.torch_manual_seed(7)
    b = rt.torch_scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    np.testing.assert_array_equal(a.data, b.data)
    full = rt.torch_scaled_dot_product_attention(q, q, q)
    assert not np.allclose(a.data, full.data)
    assert not rt.torch_scaled_dot_product_attention(q, q, q, dropout_p=1.0).data.any()
    # dropout is a mask of the attention weights over 1 - p: with v the identity,
    # the output is those weights, each kept (times 2) or 0
    eye = rt.torch_tensor(np.eye(4, dtype=np.float32).reshape(1, 1, 4, 4))
    k = rt.torch_randn(1, 1, 4, 5)
    w = rt.torch_scaled_dot_product_attention(k[:, :, :, :], k, eye).data
    rt.torch_manual_seed(1)
    d = rt.torch_scaled_dot_product_attention(k, k, eye, dropout_p=0.5).data
    assert np.all(np.isclose(d, 0) | np.isclose(d, 2 * w))


def test_sdpa_second_derivatives() -> None:
    """Both paths (PyTorch's fused kernel has none; ours is differentiable)."""
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((1, 2, 3, 2)) for _ in range(3))
    _second_order_check(lambda q, k, v: rt.torch_scaled_dot_product_attention(q, k, v), q, k, v)
    m = np.tril(np.ones((3, 3), dtype=bool))
    _second_order_check(lambda q, k, v: rt.torch_scaled_dot_product_attention(
        q, k, v, attn_mask=_t(m)), q, k, v)
    _second_order_check(lambda q, k, v: rt.torch_scaled_dot_product_attention(q, k, v),
                        q[0], k[0], v[0])


def test_sdpa_fully_masked_rows_are_zero_without_nan() -> None:
    q = rt.torch_randn(1, 1, 2, 3, requires_grad=True)
    mask = _t(np.array([[True, True], [False, False]]))
    out = rt.torch_scaled_dot_product_attention(q, q, q, attn_mask=mask)
    assert not out.data[0, 0, 1].any()
    out.sum().backward()
    assert np.isfinite(q.grad.data).all()


def test_sdpa_errors() -> None:
    q = rt.torch_randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="either attn_mask or is_causal"):
        rt.torch_scaled_dot_product_attention(q, q, q, attn_mask=rt.torch_ones(3, 3),
                                              is_causal=True)
    with pytest.raises(RuntimeError, match=r"expected query \(\.\.\., L, E\)"):
        rt.torch_scaled_dot_product_attention(q, rt.torch_randn(2, 3, 5), q)


# --------------------------------------------------------------------------
# multi_margin_loss and one_hot

@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss_second_derivative(p) -> None:
    rng = np.random.default_rng(5)
    x, tgt = rng.standard_normal((3, 4)), _t(np.array([0, 3, 1]))
    _second_order_check(lambda x: rt.torch_multi_margin_loss(x, tgt, p, 0.7, None, "none"), x)


def test_multi_margin_loss_errors() -> None:
    x = rt.torch_randn(3, 2)
    with pytest.raises(ValueError, match="target out of range"):
        rt.torch_multi_margin_loss(x, _t(np.array([0, 1, 2])))
    with pytest.raises(TypeError, match="class indices"):
        rt.torch_multi_margin_loss(x, _t(np.array([0.0, 1.0, 1.0])))
    with pytest.raises(ValueError, match="only p = 1 and p = 2"):
        rt.torch_multi_margin_loss(x, _t(np.array([0, 1, 1])), p=3)
    with pytest.raises(ValueError, match="inconsistent weight size"):
        rt.torch_multi_margin_loss(x, _t(np.array([0, 1, 1])), weight=rt.torch_ones(3))
    with pytest.raises(ValueError, match="inconsistent target size"):
        rt.torch_multi_margin_loss(x, _t(np.array([0, 1])))
    with pytest.raises(ValueError, match="reduction must be"):
        rt.torch_multi_margin_loss(x, _t(np.array([0, 1, 1])), reduction="avg")


def test_nnf_forms_share_the_ops() -> None:
    x = rt.torch_randn(3, 4, requires_grad=True)
    y = F.nnf_multi_margin_loss(x, _t(np.array([0, 3, 1])), p=2, reduction="sum")
    assert y.grad_fn.name == "MultiMarginLossBackward0"
    np.testing.assert_array_equal(F.nnf_one_hot(_t(np.array([2, 0]))).data,
                                  rt.torch_one_hot(_t(np.array([2, 0]))).data)


def test_one_hot_errors() -> None:
    with pytest.raises(RuntimeError, match="give num_classes"):
        rt.torch_one_hot(_t(np.zeros(0, dtype=np.int64)))
    with pytest.raises(ValueError, match="non-negative"):
        rt.torch_one_hot(_t(np.array([-1, 0])))
    with pytest.raises(ValueError, match="smaller than num_classes"):
        rt.torch_one_hot(_t(np.array([3])), 2)
    with pytest.raises(TypeError, match="index tensors"):
        rt.torch_one_hot(rt.torch_ones(2))


# --------------------------------------------------------------------------
# stft

def test_stft_frames_and_errors() -> None:
    x = rt.torch_ones(3000)
    out = rt.torch_stft(x, 400, center=False, return_complex=False)
    assert out.shape == (201, 27, 2)
    np.testing.assert_allclose(out.data[0], np.tile([400.0, 0.0], (27, 1)), atol=1e-3)
    assert rt.torch_stft(x, 400, return_complex=True).shape == (201, 31)
    assert x.stft(400, return_complex=True).shape == (201, 31)
    with pytest.raises(RuntimeError, match="requires the return_complex parameter"):
        rt.torch_stft(x, 400)
    with pytest.raises(RuntimeError, match="1-D window of size equal to win_length=400"):
        rt.torch_stft(x, 400, window=rt.torch_ones(300), return_complex=True)
    with pytest.raises(RuntimeError, match="reflect padding"):
        rt.torch_stft(rt.torch_ones(5), 16, return_complex=True)
    with pytest.raises(ValueError, match="pad_mode must be one of"):
        rt.torch_stft(x, 16, pad_mode="mirror", return_complex=True)
