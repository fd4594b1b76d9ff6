"""torch_fft_* against PyTorch: every sample of rtorch_py/ops/samples/fft.py, with
complex values compared to a tolerance (the two libraries' FFTs round
differently), gradients for a random (complex) upstream gradient, and finite
differences; plus the norms and errors.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from op_cases import cases, materialize, torch_call
from rtorch_py.ops import REGISTRY

FFT_CASES = [c for c in cases() if c.spec.key.startswith("fft_")]
TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-9, atol=1e-10)}


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else \
        np.asarray(t.data)


def _run(case, dtype, upstream_seed=3):
    arrays, flags, rebuild = materialize(case.sample, dtype)
    rts = [rt.torch_tensor(a.copy(), requires_grad=f) for a, f in zip(arrays, flags)]
    tts = [torch.from_numpy(a.copy()).requires_grad_(f) for a, f in zip(arrays, flags)]
    args, kw = rebuild(rts)
    r = case.spec.fn(*args, **kw)
    args, kw = rebuild(tts)
    t = torch_call(case.spec)(*args, **kw)
    return rts, tts, flags, r, t


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", FFT_CASES, ids=[c.id for c in FFT_CASES])
def test_fft_vs_torch(case, dtype):
    rts, tts, flags, r, t = _run(case, dtype)
    assert _np(r).dtype == _np(t).dtype, f"dtype {_np(r).dtype} != torch's {_np(t).dtype}"
    assert _np(r).shape == _np(t).shape
    np.testing.assert_allclose(_np(r), _np(t), **TOL[dtype])
    if not t.requires_grad:
        return
    assert r.grad_fn.name == type(t.grad_fn).__name__
    rng = np.random.default_rng(3)
    up = rng.standard_normal(t.shape)
    if t.is_complex():
        up = up + 1j * rng.standard_normal(t.shape)
    up = up.astype(_np(t).dtype)
    wrt = [i for i, f in enumerate(flags) if f]
    rg = rt.autograd_grad([r], [rts[i] for i in wrt], grad_outputs=[rt.torch_tensor(up)],
                          allow_unused=True)
    tg = torch.autograd.grad([t], [tts[i] for i in wrt], grad_outputs=[torch.from_numpy(up)],
                             allow_unused=True)
    for a, b in zip(rg, tg):
        np.testing.assert_allclose(_np(a), _np(b), **TOL[dtype])


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn"])
@pytest.mark.parametrize("norm", ["backward", "forward", "ortho"])
def test_fft_norms(name, norm):
    x = np.random.default_rng(1).standard_normal((3, 4))
    if name in ("irfft", "hfft"):
        x = x + 1j * np.random.default_rng(2).standard_normal((3, 4))
    r = getattr(rt, "torch_fft_" + name)(rt.torch_tensor(x), norm=norm)
    t = getattr(torch.fft, name)(torch.from_numpy(x), norm=norm)
    np.testing.assert_allclose(_np(r), _np(t), rtol=1e-9, atol=1e-10)


def test_fft_second_derivative():
    x = rt.torch_tensor(np.random.default_rng(0).standard_normal(6), requires_grad=True)
    tx = torch.from_numpy(x.data.copy()).requires_grad_(True)
    w = np.random.default_rng(1).standard_normal(4)

    def loss(T, v, fft):
        y = fft.irfft(fft.rfft(v * v) * 1.5, n=6)
        return (y * (rt.torch_tensor(w[:2]).repeat(3) if T is rt else
                     torch.from_numpy(w[:2]).repeat(3))).sum()
    (g,) = rt.autograd_grad([loss(rt, x, _RtFft)], [x], create_graph=True)
    (tg,) = torch.autograd.grad([loss(torch, tx, torch.fft)], [tx], create_graph=True)
    np.testing.assert_allclose(_np(g), _np(tg), rtol=1e-9)
    (gg,) = rt.autograd_grad([g.sum()], [x])
    (tgg,) = torch.autograd.grad([tg.sum()], [tx])
    np.testing.assert_allclose(_np(gg), _np(tgg), rtol=1e-9, atol=1e-12)


class _RtFft:
    rfft = staticmethod(lambda x, **kw: rt.torch_fft_rfft(x, **kw))
    irfft = staticmethod(lambda x, **kw: rt.torch_fft_irfft(x, **kw))


def test_fft_gradcheck():
    x = rt.torch_tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    w = rt.torch_tensor(np.random.default_rng(1).standard_normal((3, 4)))
    assert rt.autograd_gradcheck(lambda v: rt.torch_fft_irfft2(rt.torch_fft_rfft2(v) * 2.0,
                                                               s=(3, 4)) * w, [x])
    assert rt.autograd_gradcheck(lambda v: rt.torch_fft_hfft(rt.torch_fft_ihfft(v), n=4), [x])


def test_fft_freqs_and_errors():
    np.testing.assert_allclose(rt.torch_fft_fftfreq(5, 0.5).data,
                               torch.fft.fftfreq(5, 0.5).numpy())
    assert rt.torch_fft_rfftfreq(4).dtype == rt.torch_float32()
    assert rt.torch_fft_fftfreq(4, dtype=rt.torch_float64()).dtype == rt.torch_float64()
    with pytest.raises(RuntimeError, match="Invalid normalization mode"):
        rt.torch_fft_fft(rt.torch_ones(4), norm="bogus")
    with pytest.raises(RuntimeError, match="real input"):
        rt.torch_fft_rfft(rt.torch_fft_fft(rt.torch_ones(4)))
    with pytest.raises(RuntimeError, match="same length"):
        rt.torch_fft_fftn(rt.torch_ones(3, 4), s=(3, 4), dim=0)
    assert "fft_fft" in REGISTRY
