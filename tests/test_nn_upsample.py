"""nnf_interpolate, nnf_upsample and nn_upsample against PyTorch's
torch.nn.functional.interpolate / nn.Upsample: values, node names, gradients
(float32 and float64), finite differences; and their argument errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import rtorch_py as rt
from helpers import check_vs_torch, gradcheck, rand

# (input shape, interpolate's keyword arguments)
CASES = [
    ((2, 3, 5), dict(size=8)),
    ((2, 3, 5), dict(size=3)),
    ((2, 3, 5), dict(scale_factor=2.5)),
    ((2, 3, 5), dict(scale_factor=1.7, recompute_scale_factor=True)),
    ((2, 3, 5), dict(size=9, mode="linear")),
    ((2, 3, 5), dict(size=9, mode="linear", align_corners=True)),
    ((2, 3, 5), dict(scale_factor=0.6, mode="linear")),
    ((1, 2, 4, 3), dict(size=(6, 5))),
    ((1, 2, 4, 3), dict(scale_factor=(2.0, 1.5))),
    ((1, 2, 4, 3), dict(size=(7, 5), mode="bilinear")),
    ((1, 2, 4, 3), dict(scale_factor=2, mode="bilinear", align_corners=True)),
    ((1, 2, 6, 5), dict(size=(3, 4), mode="bilinear")),
    ((1, 2, 4, 3), dict(size=(7, 5), mode="bicubic")),
    ((1, 2, 4, 3), dict(scale_factor=1.5, mode="bicubic", align_corners=True)),
    ((1, 2, 2, 3, 2), dict(size=(3, 4, 5))),
    ((1, 2, 2, 3, 2), dict(scale_factor=2, mode="trilinear")),
    ((1, 2, 2, 3, 2), dict(size=(4, 3, 3), mode="trilinear", align_corners=True)),
    ((1, 2, 6, 4), dict(size=(3, 2), mode="area")),
    ((1, 2, 6, 4), dict(scale_factor=0.5, mode="area")),
]
IDS = [f"{len(s) - 2}d-" + "-".join(f"{k}={v}" for k, v in kw.items()) for s, kw in CASES]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("shape, kw", CASES, ids=IDS)
def test_interpolate_matches_pytorch(shape, kw, dtype) -> None:
    def fn(T, x):
        if T is torch:
            return TF.interpolate(x, **kw)
        return rt.nnf_interpolate(x, **kw)
    check_vs_torch(fn, rand(*shape, dtype=dtype), second_order=dtype is np.float64)


@pytest.mark.parametrize("shape, kw", CASES, ids=IDS)
def test_interpolate_gradcheck(shape, kw) -> None:
    assert gradcheck(lambda T, x: rt.nnf_interpolate(x, **kw), rand(*shape))


@pytest.mark.parametrize("kw", [dict(scale_factor=2, mode="nearest"),
                                dict(size=(5, 3), mode="bilinear"),
                                dict(scale_factor=(1.5, 2.0), mode="bicubic",
                                     align_corners=True)])
def test_nn_upsample_and_nnf_upsample_match_pytorch(kw) -> None:
    x = rand(1, 2, 3, 4)

    def fn(T, x):
        if T is torch:
            return torch.nn.Upsample(**kw)(x)
        return rt.nn_upsample(**kw)(x)
    check_vs_torch(fn, x)
    check_vs_torch(lambda T, x: TF.upsample(x, **kw) if T is torch else
                   rt.nnf_upsample(x, **kw), x)


def _python_calls(fn) -> int:
    """How many Python-level function calls fn() makes (C calls not counted)."""
    import sys
    calls = [0]

    def count(frame, event, arg):
        if event == "call":
            calls[0] += 1
    sys.setprofile(count)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls[0]


def test_upsample_of_a_large_image_takes_no_pixel_loop() -> None:
    # 2 x 3 x 96 x 128 -> 192 x 256, both ways: a regression guard on the NumPy
    # formulation, checked without timing anything: a large image makes about as
    # many Python calls as a small one (blockwise passes add a few; a loop over its
    # 73,728 output pixels or 1,152 rows would add thousands)
    def run(h, w):
        x = rt.torch_randn(2, 3, h, w, requires_grad=True)
        rt.nnf_interpolate(x, scale_factor=2, mode="bilinear").sum().backward()
    run(4, 6), run(96, 128)     # (first calls fill caches and compile kernels)
    small, large = _python_calls(lambda: run(4, 6)), _python_calls(lambda: run(96, 128))
    assert large < 3 * small, (small, large)
    x = rt.torch_randn(2, 3, 96, 128, requires_grad=True)
    y = rt.nnf_interpolate(x, scale_factor=2, mode="bilinear")
    y.sum().backward()
    t = torch.from_numpy(x.data.copy()).requires_grad_(True)
    TF.interpolate(t, scale_factor=2, mode="bilinear").sum().backward()
    np.testing.assert_allclose(y.data, TF.interpolate(t, scale_factor=2,
                                                      mode="bilinear").detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.data, t.grad.numpy(), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("call, exc, pattern", [
    (lambda x: rt.nnf_interpolate(x, size=4, scale_factor=2), ValueError, "only one of"),
    (lambda x: rt.nnf_interpolate(x), ValueError, "either size or scale_factor"),
    (lambda x: rt.nnf_interpolate(x, scale_factor=(2, 2, 2)), ValueError,
     "one per spatial dim"),
    (lambda x: rt.nnf_interpolate(x, size=(2, 3, 4)), ValueError, "one per spatial dim"),
    (lambda x: rt.nnf_interpolate(x, size=4, mode="trilinear"), NotImplementedError,
     "trilinear mode needs a 5-D input"),
    (lambda x: rt.nnf_interpolate(x, size=4, mode="linear"), NotImplementedError,
     "linear mode needs a 3-D input"),
    (lambda x: rt.nnf_interpolate(x, size=4, mode="cubic"), NotImplementedError,
     "unknown mode 'cubic'"),
    (lambda x: rt.nnf_interpolate(x[0, 0], size=4), NotImplementedError, "got 2-D"),
    (lambda x: rt.nn_upsample()(x), ValueError, "either size or scale_factor"),
], ids=["both", "neither", "scale-length", "size-length", "trilinear-4d", "linear-4d",
        "unknown-mode", "2d-input", "module-neither"])
def test_interpolate_argument_errors(call, exc, pattern) -> None:
    with pytest.raises(exc, match=pattern):
        call(rt.torch_ones(1, 1, 2, 2))


@pytest.mark.parametrize("call, pattern", [
    (lambda: rt.torch_upsample_nearest2d(rt.torch_ones(1, 1, 2), (2, 2)), "expected a 4-D"),
    (lambda: rt.torch_upsample_nearest1d(rt.torch_ones(1, 1, 2), (2,), (2.0,)),
     "exactly one of"),
    (lambda: rt.torch_upsample_nearest1d(rt.torch_ones(1, 1, 2)), "exactly one of"),
    (lambda: rt.torch_upsample_linear1d(rt.torch_ones(1, 1, 2), (0,)), "greater than 0"),
    (lambda: rt.torch_upsample_nearest1d(rt.torch_ones(1, 0, 2), (3,)), "non-empty"),
    (lambda: rt.torch_upsample_bilinear2d(rt.torch_ones(1, 1, 2, 2), (3,)),
     "2 elements"),
    (lambda: rt.torch_upsample_nearest1d_backward(rt.torch_ones(1, 1, 3), (4,), (1, 1, 2)),
     "grad_output must have the output's shape"),
], ids=["ndim", "both", "neither", "zero-size", "empty", "size-length", "grad-shape"])
def test_upsample_op_errors(call, pattern) -> None:
    with pytest.raises(ValueError, match=pattern):
        call()


def test_upsample_op_dtype_errors() -> None:
    with pytest.raises(TypeError, match="expected a floating input, got torch_Long"):
        rt.torch_upsample_linear1d(rt.torch_ones(1, 1, 2, dtype=rt.torch_long()), (3,))
    with pytest.raises(TypeError, match="floating or uint8"):
        rt.torch_upsample_nearest1d(rt.torch_ones(1, 1, 2, dtype=rt.torch_long()), (3,))
    with pytest.raises(TypeError, match="missing the input"):
        rt.torch_upsample_nearest1d(output_size=(3,))


def test_self_names_the_input_as_r_torch_passes_it() -> None:
    x = rt.torch_rand(1, 2, 3)
    np.testing.assert_array_equal(rt.torch_upsample_nearest1d(self=x, output_size=(6,)).data,
                                  rt.torch_upsample_nearest1d(x, (6,)).data)
    with pytest.raises(TypeError, match="not both"):
        rt.torch_upsample_nearest1d(x, (6,), self=x)


@pytest.mark.parametrize("shape, kw", [
    ((1, 2, 4), dict(scale_factor=2.034)),                       # 4 -> 8, scale 1/2.034
    ((1, 2, 3, 2, 4), dict(scale_factor=(2.1, 1.2, 1.1))),       # 6, 2, 4
    ((1, 2, 5, 3), dict(scale_factor=(1.188, 1.174), mode="bicubic")),  # 5 -> 5, 3 -> 3
], ids=["nearest1d", "nearest3d", "bicubic"])
def test_scales_that_disagree_with_the_sizes(shape, kw) -> None:
    """The forward is libtorch's (its kernel uses the given scale); the
    gradient is that forward's exact adjoint, where libtorch's backward
    kernels take a size shortcut (and fail torch's own gradcheck)."""
    x = rand(*shape)
    got = rt.nnf_interpolate(rt.torch_tensor(x), **kw)
    want = TF.interpolate(torch.from_numpy(x), **kw)
    np.testing.assert_allclose(got.data, want.numpy(), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda T, t: rt.nnf_interpolate(t, **kw), x)
    tx = torch.from_numpy(x).requires_grad_(True)
    with pytest.raises(Exception):  # PyTorch's own gradient is not its forward's
        torch.autograd.gradcheck(lambda t: TF.interpolate(t, **kw), [tx])
