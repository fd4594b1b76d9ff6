"""The LSTM layer's compiled backward step (rtorch_py/ops/lstm_kernel.py, the FAST
PATH of `nn_kernels`' backward time loop): the NumPy path's bits in float32 and float64, with
and without gradients for the outputs, h_T and c_T, at 1 and 2 threads; the layer
against PyTorch's LSTM, gradients included; and the case that keeps the NumPy
path (an output gradient of another dtype)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from rtorch_py import runtime
from rtorch_py.ops import lstm_kernel, nn_kernels as K

pytest.importorskip("numba")


def _layer(dtype, steps=7, n=5, inputs=3, hid=6, seed=0) -> tuple:
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((steps, n, inputs)).astype(dtype)
    h0, c0 = (rng.standard_normal((n, hid)).astype(dtype) for _ in range(2))
    wi = rng.standard_normal((4 * hid, inputs)).astype(dtype)
    wh = rng.standard_normal((4 * hid, hid)).astype(dtype)
    bias = rng.standard_normal(4 * hid).astype(dtype)
    return xs, h0, c0, wi, wh, bias


def _backward(case, grads, monkeypatch, compiled: bool) -> tuple:
    """The forward's arrays and the backward's gradients, on either path."""
    xs, h0, c0, wi, wh, bias = case
    if not compiled:
        monkeypatch.setattr(lstm_kernel, "backward_step", lambda: None)
    try:
        buf, tcs, hs = K._lstm_forward(xs, h0, c0, wi, wh, bias)
        hid = h0.shape[1]    # (the last step of buf holds c_T alone)
        return (buf[:-1], buf[-1, 4 * hid:], tcs, hs) + K._lstm_backward_arrays(
            *grads, xs, h0, wi, wh, buf, tcs, hs, True)
    finally:
        monkeypatch.undo()


def _grads(case, which: str, dtype) -> tuple:
    rng = np.random.default_rng(1)
    steps, n, hid = case[0].shape[0], case[0].shape[1], case[1].shape[1]
    g_out = rng.standard_normal((steps, n, hid)).astype(dtype)
    if which == "last output":
        g_out[:-1] = 0
    g_h, g_c = (rng.standard_normal((n, hid)).astype(dtype) for _ in range(2))
    return {"outputs": (g_out, None, None), "last output": (g_out, None, None),
            "h_T and c_T": (None, g_h, g_c), "all": (g_out, g_h, g_c)}[which]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("which", ["outputs", "last output", "h_T and c_T", "all"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_step_gives_the_numpy_paths_bits(dtype, which, threads, monkeypatch) -> None:
    before = runtime.torch_get_num_threads()
    runtime.torch_set_num_threads(threads)
    try:
        # (hidden 128, batch 32: products large enough for oneDNN in float32)
        for case in (_layer(dtype), _layer(dtype, steps=20, n=32, inputs=16, hid=128)):
            grads = _grads(case, which, dtype)
            fast = _backward(case, grads, monkeypatch, True)
            plain = _backward(case, grads, monkeypatch, False)
            for a, b in zip(fast, plain):
                assert a.dtype == b.dtype and np.array_equal(a, b)
    finally:
        runtime.torch_set_num_threads(before)


def test_an_output_gradient_of_another_dtype_keeps_the_numpy_path(monkeypatch) -> None:
    case = _layer(np.float32)
    g_out = _grads(case, "outputs", np.float64)[0]
    calls = []
    real = lstm_kernel.backward_step()
    monkeypatch.setattr(lstm_kernel, "backward_step", lambda: calls.append(1) or real)
    xs, h0, c0, wi, wh, bias = case
    buf, tcs, hs = K._lstm_forward(xs, h0, c0, wi, wh, bias)
    got = K._lstm_backward_arrays(g_out, None, None, xs, h0, wi, wh, buf, tcs, hs, True)
    monkeypatch.undo()
    want = _backward(case, (g_out, None, None), monkeypatch, False)[4:]
    assert calls and all(np.array_equal(a, b) for a, b in zip(got, want))


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-5), ("float64", 1e-12)])
def test_the_layer_against_pytorch(dtype, tol) -> None:
    torch.manual_seed(3)
    ref = torch.nn.LSTM(5, 8, batch_first=True).to(getattr(torch, dtype))
    mine = rt.nn.nn_lstm(5, 8, batch_first=True).to(dtype=getattr(rt, f"torch_{dtype}")())
    with rt.with_no_grad():
        for name, par in ref.named_parameters():
            getattr(mine, name).copy_(rt.torch_tensor(par.detach().numpy()))
    x = np.random.default_rng(2).standard_normal((4, 9, 5)).astype(dtype)
    xr = torch.from_numpy(x).requires_grad_()
    xo = rt.torch_tensor(x, requires_grad=True)
    (yr, (hr, cr)), (yo, (ho, co)) = ref(xr), mine(xo)
    g = np.random.default_rng(4).standard_normal(yr.shape).astype(dtype)
    ((yr * torch.from_numpy(g)).sum() + hr.sum() + (cr * cr).sum()).backward()
    ((yo * rt.torch_tensor(g)).sum() + ho.sum() + (co * co).sum()).backward()
    np.testing.assert_allclose(yo.detach().numpy(), yr.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(xo.grad.numpy(), xr.grad.numpy(), rtol=tol, atol=tol)
    for name, par in ref.named_parameters():
        np.testing.assert_allclose(getattr(mine, name).grad.numpy(), par.grad.numpy(),
                                   rtol=10 * tol, atol=10 * tol, err_msg=name)
