"""The convolution kernels (im2col + one matmul per group; the stride-1 input
gradient as a convolution by the flipped kernels; col2im otherwise) against
PyTorch in float32 (on im2col and on oneDNN's fast path) and float64, values and both gradients, across 1d/2d/3d,
groups, stride, dilation, padding and transposed convolutions; gradients also
against finite differences in float64; batches larger than one columns chunk;
half precision. Batch norm's backward on arrays (a few passes) likewise.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import check_vs_torch, gradcheck
from rtorch_py.ops import nn_kernels as K
from rtorch_py.ops import onednn

# (input shape, weight shape, stride, padding, dilation, transposed, output_padding, groups)
CASES = [
    ((2, 3, 9), (4, 3, 3), (1,), (1,), (1,), False, (0,), 1),
    ((2, 4, 11), (6, 2, 4), (2,), (2,), (2,), False, (0,), 2),
    ((3, 2, 7, 8), (5, 2, 3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 1),
    ((2, 4, 9, 7), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), False, (0, 0), 2),
    ((2, 6, 8, 8), (6, 1, 3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 6),    # depthwise
    ((2, 6, 8, 8), (12, 1, 3, 3), (2, 2), (0, 0), (1, 1), False, (0, 0), 6),   # multiplier 2
    ((2, 3, 10, 9), (4, 3, 5, 5), (1, 1), (3, 0), (1, 1), False, (0, 0), 1),   # pad > span
    ((1, 3, 13, 13), (4, 3, 7, 7), (2, 2), (3, 3), (1, 1), False, (0, 0), 1),  # a stem
    ((2, 4, 6, 6), (8, 4, 1, 1), (1, 1), (0, 0), (1, 1), False, (0, 0), 1),    # 1x1
    ((2, 4, 7, 6), (8, 4, 1, 1), (2, 2), (0, 0), (1, 1), False, (0, 0), 1),    # 1x1 down
    ((1, 2, 5, 4, 6), (3, 2, 2, 3, 2), (1, 1, 1), (1, 0, 1), (1, 1, 2), False, (0, 0, 0), 1),
    ((2, 4, 6, 5, 5), (4, 2, 3, 3, 3), (2, 1, 2), (1, 1, 1), (1, 1, 1), False, (0, 0, 0), 2),
    ((2, 3, 6), (3, 2, 3), (2,), (1,), (1,), True, (1,), 1),
    ((2, 4, 5, 4), (4, 3, 3, 3), (1, 1), (1, 0), (2, 1), True, (1, 0), 2),
    ((2, 4, 5, 4), (4, 3, 3, 2), (2, 3), (1, 1), (1, 1), True, (1, 2), 2),
    ((1, 2, 3, 4, 3), (2, 2, 2, 2, 3), (2, 1, 1), (0, 1, 1), (1, 1, 1), True, (1, 0, 0), 1),
]
IDS = [f"{len(c[0]) - 2}d-{'t' if c[5] else 'c'}-g{c[7]}-s{c[2][0]}-{i}"
       for i, c in enumerate(CASES)]


def _conv(spec, bias: bool):
    _, _, stride, padding, dilation, transposed, out_pad, groups = spec

    def fn(T, x, w, *b):
        return T.convolution(x, w, b[0] if b else None, list(stride), list(padding),
                             list(dilation), transposed, list(out_pad), groups)
    return fn


def _arrays(spec, dtype, bias: bool):
    rng = np.random.default_rng(sum(spec[0]) + sum(spec[1]))
    xs, ws, transposed, groups = spec[0], spec[1], spec[5], spec[7]
    arrays = [rng.standard_normal(xs).astype(dtype), rng.standard_normal(ws).astype(dtype)]
    if bias:
        arrays.append(rng.standard_normal(ws[1] * groups if transposed else ws[0]).astype(dtype))
    return arrays


@pytest.mark.parametrize("dtype, fast", [(np.float32, True), (np.float32, False),
                                         (np.float64, False)],
                         ids=["float32-onednn", "float32-im2col", "float64"])
@pytest.mark.parametrize("spec", CASES, ids=IDS)
def test_convolution_and_its_gradients_match_pytorch(spec, dtype, fast, monkeypatch) -> None:
    monkeypatch.setattr(onednn, "ENABLED", fast)
    check_vs_torch(_conv(spec, True), *_arrays(spec, dtype, True),
                   second_order=dtype is np.float64)


@pytest.mark.parametrize("spec", CASES[::3], ids=IDS[::3])
def test_convolution_gradients_match_finite_differences(spec) -> None:
    assert gradcheck(_conv(spec, False), *_arrays(spec, np.float64, False))


def test_batches_of_several_column_chunks(monkeypatch) -> None:
    """The batch taken a chunk at a time (here one sample per chunk) gives the
    same values and gradients as PyTorch."""
    monkeypatch.setattr(K, "_COLS_BYTES", 1)
    monkeypatch.setattr(onednn, "ENABLED", False)       # (im2col's pieces)
    spec = ((5, 4, 7, 6), (6, 2, 3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 2)
    for s in (spec, spec[:2] + ((2, 2),) + spec[3:]):
        check_vs_torch(_conv(s, True), *_arrays(s, np.float32, True))


def test_stride_one_input_gradient_equals_col2im() -> None:
    """The stride-1 fast path (a convolution by the flipped kernels) and col2im
    agree, with padding both smaller and larger than the kernel's span."""
    rng = np.random.default_rng(3)
    for pad, dil in (((1, 0), (1, 2)), ((3, 2), (1, 1))):
        g = rng.standard_normal((2, 6, 8 + 2 * pad[0] - 2 * dil[0],
                                 7 + 2 * pad[1] - 2 * dil[1]))
        w = rng.standard_normal((6, 2, 3, 3))
        fast = K._conv_grad_input(g, w, (8, 7), (1, 1), pad, dil, 2)
        full = K._conv_scatter(g, w, (2, 4, 8 + 2 * pad[0], 7 + 2 * pad[1]), (1, 1), dil, 2)
        np.testing.assert_allclose(fast, full[:, :, pad[0]:pad[0] + 8, pad[1]:pad[1] + 7],
                                   rtol=1e-12, atol=1e-12)


def test_half_precision_adds_in_float32_and_rounds_once() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 8, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 8, 3, 3)).astype(np.float32)
    want = torch.nn.functional.conv2d(torch.tensor(x).double(), torch.tensor(w).double(),
                                      padding=1)
    X = rt.torch_tensor(x).to(dtype=rt.torch_float16())
    W = rt.torch_tensor(w).to(dtype=rt.torch_float16())
    got = rt.nn.nnf_conv2d(X, W, padding=1)
    assert got.dtype == rt.torch_float16()
    # the float32 result of the half inputs, rounded once to half
    xh, wh = x.astype(np.float16).astype(np.float64), w.astype(np.float16).astype(np.float64)
    ref = torch.nn.functional.conv2d(torch.tensor(xh), torch.tensor(wh), padding=1).numpy()
    np.testing.assert_array_equal(np.asarray(got.data), ref.astype(np.float16))
    assert np.abs(np.asarray(got.data, dtype=np.float64) - want.numpy()).max() < 0.05


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (3, 4, 5, 6), (2, 3, 2, 3, 4)])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_batch_norm_gradients_on_arrays_match_pytorch(shape, dtype, training, affine) -> None:
    """Batch norm's backward in a few passes on arrays (no create_graph),
    against PyTorch; second order (create_graph: the tensor-op path) in float64."""
    rng = np.random.default_rng(len(shape))
    c = shape[1]
    x = rng.standard_normal(shape).astype(dtype) * 3 + 1
    rm, rv = rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    params = [rng.standard_normal(c).astype(dtype) for _ in range(2)] if affine else []

    def fn(T, x, *wb):
        mod = torch.nn.functional if T is torch else rt.nn
        f = mod.batch_norm if T is torch else mod.nnf_batch_norm
        mean, var = (torch.tensor(rm), torch.tensor(rv)) if T is torch else \
            (rt.torch_tensor(rm), rt.torch_tensor(rv))
        return f(x, mean, var, *(wb or (None, None)), training=training)
    check_vs_torch(fn, x, *params, second_order=dtype is np.float64)


@pytest.mark.parametrize("fast", [True, False], ids=["onednn", "im2col"])
def test_an_empty_batch(fast, monkeypatch) -> None:
    monkeypatch.setattr(onednn, "ENABLED", fast)
    spec = ((0, 4, 6, 5), (6, 2, 3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 2)
    for s in (spec, spec[:2] + ((2, 2),) + spec[3:]):
        check_vs_torch(_conv(s, True), *_arrays(s, np.float32, True))
