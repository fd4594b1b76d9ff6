"""libtorch's vectorised float32 log_sigmoid (Sleef's exp and log1p) to the bit, and
binary_cross_entropy_with_logits's float32 values built on it, against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

import rtorch_py as rt
from rtorch_py.ops import sleef

torch = pytest.importorskip("torch")
F = torch.nn.functional


def bits(a) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, np.float32)).view(np.int32)


@pytest.mark.parametrize("scale", [0.01, 0.5, 2.0, 8.0, 40.0])
def test_log_sigmoid_bits_match_pytorch(scale):
    x = (np.random.default_rng(int(scale * 100)).standard_normal(50_000) * scale).astype(np.float32)
    expected = F.logsigmoid(torch.from_numpy(x)).numpy()
    assert np.array_equal(bits(sleef.log_sigmoid(x)), bits(expected))


def test_log_sigmoid_edges_match_pytorch():
    x = np.array([0.0, -0.0, 1e-30, -1e-30, 1e-45, 88.0, -88.0, 104.5, -104.5, 150.0, -150.0,
                  np.inf, -np.inf, np.nan, 3.4e38, -3.4e38], np.float32)
    expected = F.logsigmoid(torch.from_numpy(x)).numpy()
    ours = sleef.log_sigmoid(x)
    number = ~np.isnan(expected)
    assert np.array_equal(np.isnan(ours), ~number)
    assert np.array_equal(bits(ours[number]), bits(expected[number]))


def test_numpy_formulation_differs_from_pytorch():
    # why sleef exists: NumPy's exp and log1p round otherwise in many values
    x = (np.random.default_rng(7).standard_normal(10_000) * 2).astype(np.float32)
    numpy_way = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    expected = F.logsigmoid(torch.from_numpy(x)).numpy()
    assert np.mean(bits(numpy_way) == bits(expected)) < 0.9


def test_r_torch_page_value():
    # nn_bce_with_logits_loss's page: R torch (and PyTorch) print 0.2014133185148239
    ours = rt.nnf_binary_cross_entropy_with_logits(
        rt.torch_full((10, 64), 1.5), rt.torch_ones(10, 64), pos_weight=rt.torch_ones(64))
    expected = F.binary_cross_entropy_with_logits(
        torch.full((10, 64), 1.5), torch.ones(10, 64), pos_weight=torch.ones(64))
    assert ours.item() == expected.item()


@pytest.mark.parametrize("seed", range(40))
def test_bce_with_logits_float32_bits_match_pytorch(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 25, size=rng.integers(1, 4)))  # < 32768 values:
    x = (rng.standard_normal(shape) * rng.choice([0.5, 2, 8])).astype(np.float32)  # one thread's sum
    t = (rng.random(shape) if seed % 2 else (rng.random(shape) > 0.5) * 1.0).astype(np.float32)
    weight = rng.random(shape[-1:]).astype(np.float32) if seed % 3 else None
    pos_weight = (rng.random(shape[-1:]) * 3).astype(np.float32) if seed % 4 < 2 else None
    for reduction in ("none", "mean", "sum"):
        ours = rt.nnf_binary_cross_entropy_with_logits(
            rt.torch_tensor(x), rt.torch_tensor(t),
            weight=None if weight is None else rt.torch_tensor(weight),
            pos_weight=None if pos_weight is None else rt.torch_tensor(pos_weight),
            reduction=reduction)
        expected = F.binary_cross_entropy_with_logits(
            torch.from_numpy(x), torch.from_numpy(t),
            weight=None if weight is None else torch.from_numpy(weight),
            pos_weight=None if pos_weight is None else torch.from_numpy(pos_weight),
            reduction=reduction)
        assert np.array_equal(bits(ours.numpy()), bits(expected.numpy())), reduction
