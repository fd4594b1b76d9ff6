"""bfloat16, quantized dtypes, the meta device, storages and data pointers,
tensors over a buffer's memory, and the float32 inverse's accuracy: each
checked against PyTorch where PyTorch has the behaviour."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from rtorch_py.r import tensor_api

BF16 = rt.torch_bfloat16()


def _bf16_values(x: rt.Tensor) -> np.ndarray:
    assert x.dtype == BF16
    return x.data.astype(np.float32)


def _torch_values(t: torch.Tensor) -> np.ndarray:
    assert t.dtype == torch.bfloat16
    return t.float().numpy()


# --------------------------------------------------------------------------
# bfloat16: rounded as PyTorch rounds, computed in float32 and rounded back


def test_bfloat16_conversion_rounds_as_pytorch():
    v = np.random.default_rng(1).standard_normal(1000).astype(np.float32) * 100
    v[:4] = [1.00390625, 1.01171875, -2.5, 3.0e38]  # ties to even, overflow to inf
    ours = rt.torch_tensor(v).to(dtype=BF16)
    np.testing.assert_array_equal(_bf16_values(ours), _torch_values(torch.tensor(v).bfloat16()))
    assert ours.element_size() == 2 and ours.is_floating_point()
    back = ours.to(dtype=rt.torch_float32())
    assert back.dtype == rt.torch_float32()
    np.testing.assert_array_equal(back.data, torch.tensor(v).bfloat16().float().numpy())


def test_bfloat16_by_name_and_creation():
    for x in (rt.torch_empty(10, 10, dtype="bfloat16"), rt.torch_zeros(3, dtype=BF16),
              rt.torch_randn(2, 2, dtype=BF16), rt.torch_ones(2, dtype=BF16)):
        assert x.dtype == BF16 and x.device == "cpu"


POINTWISE = [
    ("add", lambda T, a, b: a + b), ("sub", lambda T, a, b: a - b),
    ("mul", lambda T, a, b: a * b), ("div", lambda T, a, b: a / b),
    ("mul_number", lambda T, a, b: a * 2.7), ("exp", lambda T, a, b: a.exp()),
    ("sin", lambda T, a, b: a.sin()), ("sigmoid", lambda T, a, b: a.sigmoid()),
    ("tanh", lambda T, a, b: a.tanh()), ("sqrt_abs", lambda T, a, b: a.abs().sqrt()),
    ("maximum", lambda T, a, b: a.maximum(b)), ("floor", lambda T, a, b: a.floor()),
    ("neg", lambda T, a, b: -a), ("pow", lambda T, a, b: a.abs() ** 1.5),
]


@pytest.mark.parametrize("name,fn", POINTWISE, ids=[n for n, _ in POINTWISE])
def test_bfloat16_pointwise_ops_match_pytorch_exactly(name, fn):
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((4, 5)).astype(np.float32) * 3 for _ in range(2))
    ra, rb = (rt.torch_tensor(v).to(dtype=BF16) for v in (a, b))
    ta, tb = (torch.tensor(v).bfloat16() for v in (a, b))
    ours = fn(rt, ra, rb)
    theirs = fn(torch, ta, tb)
    np.testing.assert_array_equal(_bf16_values(ours), _torch_values(theirs))


REDUCING = [
    ("sum", lambda T, a: a.sum()), ("sum_dim", lambda T, a: a.sum(1)),
    ("mean", lambda T, a: a.mean()), ("softmax", lambda T, a: a.softmax(1)),
    ("matmul", lambda T, a: a.matmul(a.t())), ("max", lambda T, a: a.max()),
    ("var", lambda T, a: a.var()),
]


@pytest.mark.parametrize("name,fn", REDUCING, ids=[n for n, _ in REDUCING])
def test_bfloat16_reductions_match_pytorch(name, fn):
    a = np.random.default_rng(3).standard_normal((6, 7)).astype(np.float32)
    ours = fn(rt, rt.torch_tensor(a).to(dtype=BF16))
    theirs = fn(torch, torch.tensor(a).bfloat16())
    # (sums may add in another order: within two bfloat16 steps)
    np.testing.assert_allclose(_bf16_values(ours), _torch_values(theirs), rtol=2 ** -7,
                               atol=1e-2)


def test_bfloat16_gradients_are_bfloat16():
    a = np.random.default_rng(4).standard_normal(5).astype(np.float32)
    x = rt.torch_tensor(a).to(dtype=BF16).requires_grad_()
    (x * x).sum().backward()
    tx = torch.tensor(a).bfloat16().requires_grad_()
    (tx * tx).sum().backward()
    np.testing.assert_array_equal(_bf16_values(x.grad), _torch_values(tx.grad))


def test_bfloat16_finfo_as_pytorch():
    ours, theirs = rt.torch_finfo(BF16), torch.finfo(torch.bfloat16)
    for k in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert ours[k] == getattr(theirs, k), k


def test_bfloat16_printing():
    x = rt.torch_tensor([1.1, 2.5, -3.3]).to(dtype=BF16)
    assert repr(x) == "torch_tensor\n 1.1016\n 2.5000\n-3.2969\n[ CPUBFloat16Type{3} ]"


def test_bfloat16_as_r_doubles():
    x = rt.torch_tensor([1.1, 2.5]).to(dtype=BF16)
    out = tensor_api.as_array(x)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, x.data.astype(np.float64))


# --------------------------------------------------------------------------
# quantized dtypes


QDTYPES = [("quint8", torch.quint8, 1), ("qint8", torch.qint8, 1), ("qint32", torch.qint32, 4)]


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")
@pytest.mark.parametrize("name,tdtype,size", QDTYPES, ids=[q[0] for q in QDTYPES])
def test_quantize_per_tensor_matches_pytorch(name, tdtype, size):
    v = np.concatenate([np.random.default_rng(5).standard_normal(200).astype(np.float32) * 20,
                        np.float32([0.05, 0.15, 0.25, -0.35, 1e6, -1e6])])  # ties, clamping
    d = getattr(rt, f"torch_{name}")()
    q = rt.torch_quantize_per_tensor(rt.torch_tensor(v), 0.1, 10, d)
    tq = torch.quantize_per_tensor(torch.tensor(v), 0.1, 10, tdtype)
    assert q.dtype == d and q.element_size() == size == tq.element_size()
    np.testing.assert_array_equal(q.int_repr().data, tq.int_repr().numpy())
    np.testing.assert_array_equal(q.dequantize().data, tq.dequantize().numpy())
    np.testing.assert_array_equal(rt.torch_dequantize(q).data, torch.dequantize(tq).numpy())
    assert q.q_scale() == tq.q_scale() and q.q_zero_point() == tq.q_zero_point()
    assert q.is_quantized and not rt.torch_tensor(v).is_quantized


@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor")
def test_quantized_copy_and_qscheme_match_pytorch():
    a, b = [-1.0, 0.0, 1.0, 2.0], [1.0, 0.0, 1.0, 2.6]
    q = rt.torch_quantize_per_tensor(rt.torch_tensor(a), 0.1, 10, rt.torch_quint8())
    tq = torch.quantize_per_tensor(torch.tensor(a), 0.1, 10, torch.quint8)
    q.copy_(rt.torch_quantize_per_tensor(rt.torch_tensor(b), 0.2, 3, rt.torch_quint8()))
    tq.copy_(torch.quantize_per_tensor(torch.tensor(b), 0.2, 3, torch.quint8))
    np.testing.assert_array_equal(q.int_repr().data, tq.int_repr().numpy())
    assert (q.q_scale(), q.q_zero_point()) == (tq.q_scale(), tq.q_zero_point())
    assert repr(q.qscheme()) == "torch_per_tensor_affine"
    with pytest.raises(RuntimeError, match="copies one of its own dtype and shape"):
        q.copy_(rt.torch_quantize_per_tensor(rt.torch_tensor([1.0]), 0.2, 3, rt.torch_quint8()))


def test_quantized_printing_and_r_values():
    q = rt.torch_quantize_per_tensor(rt.torch_tensor([1.0, 2.55]), 0.1, 10, rt.torch_quint8())
    assert repr(q) == ("torch_tensor\n 1.0000\n 2.6000\n[ QuantizedCPUQUInt8Type{2}, "
                       "qscheme: per_tensor_affine, scale: 0.1, zero_point: 10 ]")
    np.testing.assert_allclose(tensor_api.as_array(q), [1.0, 2.6], rtol=1e-6)


def test_quantized_refusals():
    x = rt.torch_tensor([1.0])
    with pytest.raises(RuntimeError, match="torch_quint8"):
        rt.torch_quantize_per_tensor(x, 0.1, 0, rt.torch_float32())
    with pytest.raises(RuntimeError, match="floating point"):
        rt.torch_quantize_per_tensor(rt.torch_tensor([1]), 0.1, 0, rt.torch_qint8())
    with pytest.raises(RuntimeError, match="scale must be positive"):
        rt.torch_quantize_per_tensor(x, 0, 0, rt.torch_qint8())
    with pytest.raises(RuntimeError, match="needs a quantized tensor"):
        x.dequantize()
    q = rt.torch_quantize_per_tensor(x, 0.1, 0, rt.torch_qint8())
    for call in (lambda: q + 1, lambda: q.exp(), lambda: q.sum(), lambda: rt.torch_cat([q, q])):
        with pytest.raises(NotImplementedError, match=r"not supported for quantized tensors: "
                           r"dequantize\(\) them first"):
            call()


# --------------------------------------------------------------------------
# the meta device: shapes and dtypes as PyTorch's meta tensors, no data


def test_to_meta_keeps_shape_and_dtype_without_memory():
    x = rt.torch_randn(1000, 1000)
    y = x.to(dtype="float64", device="meta")
    t = torch.randn(3, 3).to(dtype=torch.float64, device="meta")
    assert y.device == "meta" and t.device.type == "meta"
    assert y.dtype == rt.torch_float64() and y.shape == (1000, 1000)
    assert y.data.strides == (0, 0)  # no memory of its size
    assert repr(y) == "torch_tensor\n...\n[ METADoubleType{1000,1000} ]"


META_OPS = [
    ("arith", lambda T, a, b: (a * 2 + b).exp()), ("matmul", lambda T, a, b: a.matmul(b.t())),
    ("sum_dim", lambda T, a, b: a.sum(1)), ("sum", lambda T, a, b: a.sum()),
    ("mean", lambda T, a, b: a.mean(0, keepdim=True)), ("compare", lambda T, a, b: a < b),
    ("reshape", lambda T, a, b: a.reshape(2, 3, 2)), ("index", lambda T, a, b: a[1:3]),
    ("cat", lambda T, a, b: torch.cat([a, b], 0) if T is torch else T.torch_cat([a, b], 0)),
    ("softmax", lambda T, a, b: a.softmax(1)),
    ("to_int", lambda T, a, b: a.to(dtype=T.int64) if T is torch else a.to(dtype="int64")),
    ("inverse", lambda T, a, b: T.linalg.inv(a[:, :3]) if T is torch else
     T.linalg_inv(a[:, :3])),
    ("max_dim", lambda T, a, b: a.max(1)[1]),
]


@pytest.mark.parametrize("name,fn", META_OPS, ids=[n for n, _ in META_OPS])
def test_ops_on_meta_tensors_give_meta_tensors_as_pytorch(name, fn):
    a, b = rt.torch_randn(3, 4), rt.torch_randn(3, 4)
    ours = fn(rt, a.to(device="meta"), b.to(device="meta"))
    theirs = fn(torch, torch.randn(3, 4, device="meta"), torch.randn(3, 4, device="meta"))
    assert theirs.device.type == "meta"
    assert ours.device == "meta"
    assert ours.shape == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")


def test_meta_tensors_have_no_values():
    y = rt.torch_randn(2, 2).to(device="meta")
    with pytest.raises(RuntimeError, match="meta tensor"):
        y[0, 0].item()
    with pytest.raises(NotImplementedError, match="meta tensor"):
        y.to(device="cpu")
    with pytest.raises(RuntimeError, match="meta tensor"):
        tensor_api.as_array(y)
    y.add_(1)  # writes nothing, as PyTorch
    assert y.device == "meta"
    with pytest.raises(RuntimeError, match="cpu"):
        rt.torch_randn(2).to(device="cuda")


@pytest.mark.parametrize("make", [
    lambda T, d: T.zeros(100_000, 100_000, device=d),
    lambda T, d: T.ones(100_000, 100_000, dtype=T.float64, device=d),
    lambda T, d: T.empty(100_000, 100_000, device=d),
    lambda T, d: T.randn(100_000, 100_000, device=d),
    lambda T, d: T.rand(100_000, 100_000, device=d),
    lambda T, d: T.full((100_000, 100_000), 7, device=d),
    lambda T, d: T.randint(0, 5, (100_000, 100_000), device=d),
    lambda T, d: T.empty_strided((100_000, 100_000), (1, 100_000), device=d),
    lambda T, d: T.randperm(10, device=d),
    lambda T, d: T.eye(3, 4, device=d),
    lambda T, d: T.arange(0, 5, device=d),
    lambda T, d: T.linspace(0, 1, 7, device=d),
    lambda T, d: T.hann_window(5, device=d),
    lambda T, d: T.tensor([1.0, 2.0], device=d),
])
def test_creation_on_the_meta_device_allocates_nothing(make):
    class Ours:  # rtorch_py under PyTorch's names
        float64 = rt.torch_float64()

        def __getattr__(self, name: str):
            return getattr(rt, "torch_" + name)
    ours, theirs = make(Ours(), "meta"), make(torch, "meta")
    assert ours.device == "meta" and ours.shape == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).replace("torch.", "")
    assert ours.data.strides == (0,) * ours.ndim  # (no memory of its size)


def test_meta_gradient_flag_and_print():
    y = rt.torch_randn(2).to(device="meta").requires_grad_()
    assert repr(y) == "torch_tensor\n...\n[ METAFloatType{2} ][ requires_grad = TRUE ]"
    z = y * 2
    assert z.device == "meta" and repr(z).endswith("[ grad_fn = <MulBackward1> ]")


# --------------------------------------------------------------------------
# storages and data pointers


def test_data_ptr_offsets_and_storage_as_pytorch():
    x, t = rt.torch_randn(4, 5), torch.randn(4, 5)
    for view in (lambda v: v[1:], lambda v: v[2, 1:], lambda v: v.t()):
        assert view(x).data_ptr() - x.data_ptr() == view(t).data_ptr() - t.data_ptr()
        assert view(x).storage().data_ptr() == x.storage().data_ptr()
    assert x.clone().storage().data_ptr() != x.storage().data_ptr()
    assert x.storage().nbytes() == t.untyped_storage().nbytes()


# --------------------------------------------------------------------------
# tensors over a buffer's memory


def test_tensor_from_buffer_shares_memory():
    buf = np.arange(6, dtype=np.float64)
    x = tensor_api.torch_tensor_from_buffer(buf, [2, 3], "float64")
    x.add_(1)
    np.testing.assert_array_equal(buf, np.arange(6) + 1)
    raw = tensor_api.buffer_from_torch_tensor(x)
    assert raw.dtype == np.uint8 and raw.size == 48
    y = tensor_api.torch_tensor_from_buffer(bytearray(raw.tobytes()), 6, "float64")
    np.testing.assert_array_equal(y.data, buf)
    with pytest.raises(ValueError, match="needs 56"):
        tensor_api.torch_tensor_from_buffer(buf, 7, "float64")


# --------------------------------------------------------------------------
# linalg_inv in float32: as accurate as PyTorch's (R torch's test of it fails
# for ill-conditioned draws in both, so it depends on the random stream)


def test_float32_inverse_is_as_accurate_as_pytorch():
    X = np.random.default_rng(6).standard_normal((4000, 2, 2)).astype(np.float32)
    ours = rt.linalg_inv(rt.torch_tensor(X)).data
    theirs = torch.linalg.inv(torch.tensor(X)).numpy()
    exact = np.linalg.inv(X.astype(np.float64))
    scale = np.abs(exact).max(axis=(1, 2))
    err_ours = np.abs(ours - exact).max(axis=(1, 2)) / scale
    err_theirs = np.abs(theirs - exact).max(axis=(1, 2)) / scale
    assert np.median(err_ours) <= 1.5 * np.median(err_theirs)
    assert np.quantile(err_ours, 0.99) <= 1.5 * np.quantile(err_theirs, 0.99)

    def failing(Xi: np.ndarray) -> float:  # R's all.equal(X %*% Xi, I, tolerance = 1e-6)
        P = np.matmul(X, Xi)
        rel = np.abs(P - np.eye(2, dtype=np.float32)).sum((1, 2)) / np.abs(P).sum((1, 2))
        return float((rel > 1e-6).mean())
    assert failing(ours) <= failing(theirs) + 0.01
    well = np.linalg.cond(X.astype(np.float64)) < 10
    P = np.matmul(X[well], ours[well])
    assert (np.abs(P - np.eye(2)).sum((1, 2)) / np.abs(P).sum((1, 2)) <= 1e-6).all()
