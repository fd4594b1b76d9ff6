"""Discrete Fourier transforms (`torch_fft_*`) on NumPy's fft, with PyTorch's
derivatives.

Every transform is one of PyTorch's three kernels, and records its node:
complex to complex (FftC2CBackward0), real to complex (FftR2CBackward0, the
full or the one-sided spectrum) and one-sided complex to real
(FftC2RBackward0). Each kernel here is unnormalized times a `scale` (the
`norm` argument's 1, 1/sqrt(n) or 1/n); its derivative is the adjoint
transform with the same scale, written with the kernels themselves, so any
order of derivative works.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..formals import r_formals
from ..tensor import Tensor, wrap_dim, as_dtype, get_default_dtype, wrap
from .samples import fft as S
from .operands import whole
from .recording import formula, record
from .dispatch import op
from .nn_primitives import constant_pad_nd
from .pooling import col2im
from .shape import SqueezeBackward1, TransposeBackward0, cat

_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}
_REAL = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}


def _complex_of(dt: np.dtype) -> np.dtype:
    return np.dtype(_COMPLEX.get(np.dtype(dt), np.complex64))


def real_dtype_of(dt: np.dtype) -> np.dtype:
    return np.dtype(_REAL.get(np.dtype(dt), np.float32))


# --------------------------------------------------------------------------
# The three kernels

@formula
def FftC2CBackward0(n, g, dims, scale, forward):
    return (_c2c(g, dims, scale, not forward),)


def _c2c(x: Tensor, dims: tuple, scale: float, forward: bool) -> Tensor:
    a = x.data.astype(_complex_of(real_dtype_of(x.data.dtype)), copy=False)
    out = np.fft.fftn(a, axes=dims) if forward else np.fft.ifftn(a, axes=dims, norm="forward")
    if scale != 1:
        out = out * scale
    return record(out.astype(a.dtype, copy=False), FftC2CBackward0, (x,),
                  (dims, scale, forward))


@formula
def FftR2CBackward0(n, g, dims, scale, onesided, last_size):
    if onesided:  # the missing half of the spectrum gets no gradient: zeros
        missing = last_size - g.shape[dims[-1]]
        if missing > 0:
            shape = list(g.shape)
            shape[dims[-1]] = missing
            g = cat([g, wrap(np.zeros(shape, g.data.dtype))], dim=dims[-1])
    return (real_part(_c2c(g, dims, scale, False)),)


def _r2c(x: Tensor, dims: tuple, scale: float, onesided: bool) -> Tensor:
    a = x.data
    out = np.fft.rfftn(a, axes=dims) if onesided else np.fft.fftn(a, axes=dims)
    if scale != 1:
        out = out * scale
    return record(out.astype(_complex_of(a.dtype), copy=False), FftR2CBackward0, (x,),
                  (dims, scale, onesided, a.shape[dims[-1]]))


@formula
def FftC2RBackward0(n, g, dims, scale):
    gI = _r2c(g, dims, scale, True)
    # entries with a conjugate partner in the full spectrum count twice
    double = g.shape[dims[-1]] - gI.shape[dims[-1]]
    if double > 0:
        d = dims[-1]
        k = gI.shape[d]
        w = np.ones(k, dtype=real_dtype_of(gI.data.dtype))
        w[1:1 + double] = 2
        shape = [1] * gI.ndim
        shape[d] = k
        gI = gI * wrap(w.reshape(shape))
    return (gI,)


def _c2r(x: Tensor, dims: tuple, scale: float, last_size: int) -> Tensor:
    a = x.data.astype(_complex_of(real_dtype_of(x.data.dtype)), copy=False)
    s = [a.shape[d] for d in dims[:-1]] + [last_size]
    out = np.fft.irfftn(a, s=s, axes=dims, norm="forward")
    if scale != 1:
        out = out * scale
    return record(out.astype(real_dtype_of(a.dtype), copy=False), FftC2RBackward0, (x,),
                  (dims, scale))


@formula
def _RealBackward(n, g):
    return (to_complex(g),)


def real_part(x: Tensor) -> Tensor:
    return record(np.ascontiguousarray(x.data.real), _RealBackward, (x,), name="RealBackward0")


@formula
def _ToComplexBackward(n, g):
    return (real_part(g),)


def to_complex(x: Tensor) -> Tensor:
    """A real tensor as complex (its gradient is the real part of the complex one)."""
    return record(x.data.astype(_complex_of(x.data.dtype)), _ToComplexBackward, (x,),
                  name="ToCopyBackward0")


@formula
def ConjBackward0(n, g):
    return (_conj(g),)


def _conj(x: Tensor) -> Tensor:
    return record(np.conj(x.data), ConjBackward0, (x,))


# --------------------------------------------------------------------------
# Arguments: dims, sizes, norm; inputs padded or trimmed to the sizes asked

def _norm_scale(norm: Any, n: int, forward: bool) -> float:
    norm = "backward" if norm is None else norm
    if norm not in ("backward", "forward", "ortho"):
        raise RuntimeError(f'Invalid normalization mode: "{norm}" (use "backward", "forward" '
                           'or "ortho")')
    if norm == "ortho":
        return 1 / np.sqrt(n) if n else 1.0
    scaled = (norm == "forward") == forward   # which direction carries the 1/n
    return 1 / n if scaled and n else 1.0


def _float_input(x: Tensor) -> Tensor:
    """Integers and booleans are transformed as the default float dtype (as PyTorch)."""
    if x.data.dtype.kind in "fc":
        return x
    return wrap(x.data.astype(get_default_dtype().np))


def _resize(x: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """Zero-pad or trim x to `sizes` along `dims` (differentiably)."""
    for d, s in zip(dims, sizes):
        have = x.shape[d]
        if s < 1:
            raise RuntimeError(f"Invalid number of data points ({s}) specified")
        if s < have:
            x = x.narrow(d, 0, s)
        elif s > have:
            shape = list(x.shape)
            shape[d] = s - have
            x = cat([x, wrap(np.zeros(shape, x.data.dtype))], dim=d)
    return x


def _dims_and_sizes(x: Tensor, s: Any, dim: Any, default_all: bool) -> tuple:
    if dim is None:
        if s is None:
            dims = list(range(x.ndim)) if default_all else [x.ndim - 2, x.ndim - 1]
        else:
            s = [s] if isinstance(s, (int, float, np.integer)) else list(s)
            dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = [dim] if isinstance(dim, (int, float, np.integer)) else list(dim)
        dims = [wrap_dim(whole(d, "dim"), x.ndim) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"FFT dims must be unique, got {dims}")
    if s is None:
        sizes = None
    else:
        sizes = [s] if isinstance(s, (int, float, np.integer)) else list(s)
        sizes = [whole(v, "s") for v in sizes]
        if len(sizes) != len(dims):
            raise RuntimeError(f"When given, dim and shape arguments must have the same length: "
                               f"got {len(dims)} dims and {len(sizes)} sizes")
        sizes = [x.shape[d] if v == -1 else v for d, v in zip(dims, sizes)]
    return tuple(dims), sizes


def _complex_transform(x: Tensor, s: Any, dim: Any, norm: Any, forward: bool,
                       default_all: bool = True, one_dim: bool = False) -> Tensor:
    """fft/ifft (one_dim), fft2/ifft2/fftn/ifftn."""
    x = _float_input(x)
    dims, sizes = _dims_and_sizes(x, s, dim, default_all)
    if sizes is not None:
        x = _resize(x, dims, sizes)
    n = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    scale = _norm_scale(norm, n, forward)
    if x.data.dtype.kind == "c":
        return _c2c(x, dims, scale, forward)
    if one_dim:  # fft/ifft: a real input's full spectrum (the inverse is its conjugate)
        out = _r2c(x, dims, scale, False)
        return out if forward else _conj(out)
    return _c2c(to_complex(x), dims, scale, forward)


def _real_to_half(x: Tensor, s: Any, dim: Any, norm: Any, forward: bool,
                  default_all: bool = True) -> Tensor:
    """rfft/rfft2/rfftn (forward) and ihfft (the inverse of a Hermitian signal)."""
    x = _float_input(x)
    if x.data.dtype.kind == "c":
        raise RuntimeError(f"{'rfft' if forward else 'ihfft'} expects a real input tensor, "
                           f"but got {x.dtype.r_name}")
    dims, sizes = _dims_and_sizes(x, s, dim, default_all)
    if sizes is not None:
        x = _resize(x, dims, sizes)
    n = int(np.prod([x.shape[d] for d in dims], dtype=np.int64))
    out = _r2c(x, dims, _norm_scale(norm, n, forward), True)
    return out if forward else _conj(out)


def _half_to_real(x: Tensor, s: Any, dim: Any, norm: Any, forward: bool,
                  default_all: bool = True) -> Tensor:
    """irfft/irfft2/irfftn and hfft: a one-sided spectrum to a real signal."""
    x = _float_input(x)
    dims, sizes = _dims_and_sizes(x, s, dim, default_all)
    last = sizes[-1] if sizes is not None else 2 * (x.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    half = [x.shape[d] for d in dims[:-1]] + [last // 2 + 1]
    if sizes is not None:
        half[:-1] = sizes[:-1]
    x = _resize(x, dims, half)
    if x.data.dtype.kind != "c":
        x = to_complex(x)
    if forward:  # hfft: the forward transform of a Hermitian signal
        x = _conj(x)
    n = int(np.prod(half[:-1], dtype=np.int64)) * last
    return _c2r(x, dims, _norm_scale(norm, n, forward), last)


# --------------------------------------------------------------------------
# R torch's torch_fft_* functions

def _fft_op(name: str, samples: Any, **kw: Any) -> Any:
    # (each transform is linear: the tangent of the result is the transform of the tangent)
    return op(function="torch_fft_" + name, method=False, torch_name="fft." + name,
              samples=samples, forward="linear", **kw)


@_fft_op("fft", S.one_dim, dims=("dim",), autocast="fp32")
def fft_fft(self: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    return _complex_transform(self, n, dim, norm, True, one_dim=True)


@_fft_op("ifft", S.one_dim, dims=("dim",), autocast="fp32")
def fft_ifft(self: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    return _complex_transform(self, n, dim, norm, False, one_dim=True)


@_fft_op("fft2", S.two_dim, dims=("dim",), autocast="fp32")
def fft_fft2(self: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return _complex_transform(self, s, dim, norm, True, False)


@_fft_op("ifft2", S.two_dim, dims=("dim",), autocast="fp32")
def fft_ifft2(self: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return _complex_transform(self, s, dim, norm, False, False)


@_fft_op("fftn", S.n_dim, dims=("dim",), autocast="fp32")
def fft_fftn(self: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    return _complex_transform(self, s, dim, norm, True)


@_fft_op("ifftn", S.n_dim, dims=("dim",), autocast="fp32")
def fft_ifftn(self: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    return _complex_transform(self, s, dim, norm, False)


@_fft_op("rfft", S.one_dim_real, dims=("dim",), autocast="fp32")
def fft_rfft(self: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    return _real_to_half(self, n, dim, norm, True)


@_fft_op("rfft2", S.two_dim_real, dims=("dim",), autocast="fp32")
def fft_rfft2(self: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return _real_to_half(self, s, dim, norm, True, False)


@_fft_op("rfftn", S.n_dim_real, dims=("dim",), autocast="fp32")
def fft_rfftn(self: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    return _real_to_half(self, s, dim, norm, True)


@_fft_op("ihfft", S.one_dim_real, dims=("dim",), autocast="fp32")
def fft_ihfft(self: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    return _real_to_half(self, n, dim, norm, False)


@_fft_op("irfft", S.one_dim_half, dims=("dim",), autocast="fp32")
def fft_irfft(self: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    return _half_to_real(self, n, dim, norm, False)


@_fft_op("irfft2", S.two_dim_half, dims=("dim",), autocast="fp32")
def fft_irfft2(self: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return _half_to_real(self, s, dim, norm, False, False)


@_fft_op("irfftn", S.n_dim_half, dims=("dim",), autocast="fp32")
def fft_irfftn(self: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    return _half_to_real(self, s, dim, norm, False)


@_fft_op("hfft", S.one_dim_half, dims=("dim",), autocast="fp32")
def fft_hfft(self: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    return _half_to_real(self, n, dim, norm, True)


def _freq_dtype(dtype: Any) -> Any:
    return as_dtype(dtype) if dtype is not None else get_default_dtype()


@_fft_op("fftfreq", S.freq, differentiable=False)
def fft_fftfreq(n: int, d: float = 1.0, dtype: Any = None, layout: Any = None,
                device: Any = None, requires_grad: bool = False) -> Tensor:
    """Sample frequencies of an n-point fft: [0, 1, ..., -1] / (d n)."""
    dt = _freq_dtype(dtype)
    out = wrap(np.fft.fftfreq(whole(n, "n"), d).astype(dt.np))
    return out.requires_grad_(True) if requires_grad else out


@_fft_op("rfftfreq", S.freq, differentiable=False)
def fft_rfftfreq(n: int, d: float = 1.0, dtype: Any = None, layout: Any = None,
                 device: Any = None, requires_grad: bool = False) -> Tensor:
    """Sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d n)."""
    dt = _freq_dtype(dtype)
    out = wrap(np.fft.rfftfreq(whole(n, "n"), d).astype(dt.np))
    return out.requires_grad_(True) if requires_grad else out


def _shift(x: Tensor, dim: Any, sign: int) -> Tensor:
    dims = list(range(x.ndim)) if dim is None else \
        [dim] if isinstance(dim, (int, float, np.integer)) else list(dim)
    dims = [wrap_dim(whole(d, "dim"), x.ndim) for d in dims]
    shifts = [(x.shape[d] // 2) * sign if sign > 0 else -(x.shape[d] // 2) for d in dims]
    return x.roll(shifts, dims)


@_fft_op("fftshift", S.shift, dims=("dim",))
def fft_fftshift(self: Tensor, dim: Any = None) -> Tensor:
    """The zero frequency moved to the middle (a roll by half of each dim)."""
    return _shift(self, dim, 1)


@_fft_op("ifftshift", S.shift, dims=("dim",))
def fft_ifftshift(self: Tensor, dim: Any = None) -> Tensor:
    return _shift(self, dim, -1)


# --------------------------------------------------------------------------
# The short-time Fourier transform, composed as PyTorch's is: the signal
# padded at both ends (center), cut into frames of n_fft every hop_length,
# each frame times the window (zero-padded to n_fft, centred), one FFT per
# frame, then frequencies first. The transpose and squeeze at the end are
# in place in PyTorch (their nodes TransposeBackward1 and SqueezeBackward4);
# here they make new tensors under the same node names.


# --------------------------------------------------------------------------
# The inverse short-time Fourier transform, composed as libtorch's is: each
# frame back to a signal (irfft, or ifft), times the window, the frames added
# up where they overlap (col2im's overlap-add), divided by the added squared
# windows, the centring padding trimmed.


@op(samples=S.istft)
def istft(self: Tensor, n_fft: int, hop_length: Any = None, win_length: Any = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False,
          onesided: Any = None, length: Any = None, return_complex: bool = False) -> Tensor:
    """A signal (or a batch) from its complex (freq, frames) short-time spectrum."""
    if isinstance(window, (list, tuple)) and not window:  # R torch's `window = list()`
        window = None
    spec = self if self.data.dtype.kind == "c" else _view_as_complex(self)
    if spec.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a 2-D (freq, frames) or 3-D (batch, freq, frames) "
                           f"complex input, got size {list(self.shape)}")
    n_fft = whole(n_fft, "n_fft")
    hop = n_fft // 4 if hop_length is None else whole(hop_length, "hop_length")
    win = n_fft if win_length is None else whole(win_length, "win_length")
    if not 0 < hop <= win or not 0 < win <= n_fft:
        raise RuntimeError(f"istft: expected 0 < hop_length <= win_length <= n_fft, got "
                           f"hop_length={hop}, win_length={win}, n_fft={n_fft}")
    batched = spec.ndim == 3
    spec = spec if batched else spec.unsqueeze(0)
    bins, frames = spec.shape[1], spec.shape[2]
    onesided = bins != n_fft if onesided is None else bool(onesided)
    want = n_fft // 2 + 1 if onesided else n_fft
    if bins != want:
        raise RuntimeError(f"istft: expected the frequency dim to be {want} (n_fft = {n_fft}, "
                           f"onesided = {onesided}), got {bins}")
    real = real_dtype_of(spec.data.dtype)
    if window is None:
        window = wrap(np.ones(win, dtype=real))
    if window.ndim != 1 or window.shape[0] != win:
        raise RuntimeError(f"istft: expected a 1-D window of size win_length={win}, got size "
                           f"{list(window.shape)}")
    if win < n_fft:
        left = (n_fft - win) // 2
        window = constant_pad_nd(window, (left, n_fft - win - left))
    norm = "ortho" if normalized else "backward"
    spec = spec.transpose(1, 2)                                   # (batch, frames, freq)
    if return_complex:
        if onesided:
            raise RuntimeError("istft: return_complex = TRUE needs a two-sided spectrum "
                               "(onesided = FALSE)")
        frames_t = fft_ifft(spec, n_fft, -1, norm)
    else:
        if not onesided:
            spec = spec.narrow(-1, 0, n_fft // 2 + 1)
        frames_t = fft_irfft(spec, n_fft, -1, norm)
    signal_len = n_fft + hop * (frames - 1)
    windowed = (frames_t * window.reshape(1, 1, n_fft)).transpose(1, 2)
    y = col2im(windowed, (1, signal_len), (1, n_fft), (1, 1), (0, 0), (1, hop)).reshape(
        windowed.shape[0], signal_len)
    squares = (window ** 2).reshape(1, n_fft, 1).expand(1, n_fft, frames)
    envelope = col2im(squares, (1, signal_len), (1, n_fft), (1, 1), (0, 0), (1, hop))
    envelope = envelope.reshape(1, signal_len)
    start = n_fft // 2 if center else 0
    end = start + whole(length, "length") if length is not None else \
        signal_len - n_fft // 2 if center else signal_len
    stop = min(end, signal_len)
    y, envelope = y.narrow(1, start, stop - start), envelope.narrow(1, start, stop - start)
    if stop > start and float(envelope.abs().min().item()) < 1e-11:
        raise RuntimeError("istft: window overlap add min is below 1e-11: the window's squares "
                           "don't cover the signal (choose another window or hop_length)")
    y = y / envelope
    if not batched:
        y = y.squeeze(0)
    if end > signal_len:  # (a longer length asked for: zeros after the signal)
        y = constant_pad_nd(y, (0, end - signal_len))
    return y


@formula
def ViewAsRealBackward0(n, g):
    return (_view_as_complex(g),)


def _view_as_real(x: Tensor) -> Tensor:
    """A complex tensor as real pairs (a last dim of 2: real, imaginary)."""
    d = x.data
    return record(np.ascontiguousarray(np.stack([d.real, d.imag], axis=-1)),
                  ViewAsRealBackward0, (x,))


@op(method=False, samples=S.complex_values, complex_half="real")
def view_as_real(self: Tensor) -> Tensor:
    """A complex tensor as real pairs (a copy here; PyTorch's is a view)."""
    if self.data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _view_as_real(self)


@formula
def ViewAsComplexBackward0(n, g):
    return (_view_as_real(g),)


def _view_as_complex(x: Tensor) -> Tensor:
    d = x.data
    return record((d[..., 0] + 1j * d[..., 1]).astype(_complex_of(d.dtype)),
                  ViewAsComplexBackward0, (x,))


_PAD_MODES = {"reflect": "reflect", "constant": "constant", "replicate": "edge",
              "circular": "wrap"}


def _stft_pad(x: Tensor, pad: int, mode: str) -> Tensor:
    """Pad the last dim by `pad` at both ends (picking positions: differentiable)."""
    if mode not in _PAD_MODES:
        raise ValueError(f"stft: pad_mode must be one of {list(_PAD_MODES)}, got {mode!r}")
    n = x.shape[-1]
    if mode == "reflect" and pad >= n:
        raise RuntimeError(f"stft: reflect padding ({pad} each side, n_fft %/% 2) must be "
                           f"less than the signal's length {n}; use a shorter n_fft or "
                           f"center = FALSE")
    if mode == "constant":
        z = wrap(np.zeros(x.shape[:-1] + (pad,), x.data.dtype))
        return cat([z, x, z], dim=x.ndim - 1) if pad else x
    pos = np.pad(np.arange(n), (pad, pad), mode=_PAD_MODES[mode])
    return x.index_select(x.ndim - 1, wrap(pos.astype(np.int64)))


@r_formals("input, n_fft, hop_length = NULL, win_length = NULL, window = NULL, center = TRUE, "
           "pad_mode = 'reflect', normalized = FALSE, onesided = NULL, return_complex = NULL",
           method="n_fft, hop_length = NULL, win_length = NULL, window = list(), center = TRUE, "
           "pad_mode = 'reflect', normalized = FALSE, onesided = NULL, return_complex = NULL, "
           "align_to_window = NULL")
@op(samples=S.stft, torchscript=False, autocast="fp32")
def stft(input: Tensor, n_fft: int, hop_length: Any = None, win_length: Any = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect",
         normalized: bool = False, onesided: Any = None, return_complex: Any = None,
         align_to_window: bool | None = None) -> Tensor:
    """(freq, frames) for a 1-d signal, (batch, freq, frames) for 2-d; complex,
    or with a last dim of 2 (real, imaginary) when return_complex = FALSE.
    `align_to_window = TRUE` (center = FALSE only): the frames are the window's
    win_length samples (hop apart from the first), not n_fft's."""
    if isinstance(window, (list, tuple)) and not window:  # R torch's `window = list()`
        window = None
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1-D signal or a 2-D batch of signals, got an "
                           f"input of size {list(input.shape)}")
    x = _float_input(input)
    complex_in = x.data.dtype.kind == "c" or (window is not None and
                                              window.data.dtype.kind == "c")
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs (return_complex = TRUE gives a complex tensor, FALSE "
                               "real and imaginary parts in a last dim of 2)")
        return_complex = True
    if complex_in and not return_complex:
        raise RuntimeError("stft: a complex input or window needs return_complex = TRUE")
    n_fft = whole(n_fft, "n_fft")
    hop = n_fft // 4 if hop_length is None else whole(hop_length, "hop_length")
    win = n_fft if win_length is None else whole(win_length, "win_length")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(f"stft: expected a 1-D window of size equal to win_length={win}, "
                           f"but got window with size {list(window.shape)}")
    onesided = not complex_in if onesided is None else bool(onesided)
    if onesided and complex_in:
        raise RuntimeError("stft: onesided = TRUE is not possible with a complex input or "
                           "window (its spectrum has no symmetry); give onesided = FALSE")
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    x = x.unsqueeze(0) if input.ndim == 1 else x
    if center:
        x = _stft_pad(x, n_fft // 2, pad_mode)
    elif align_to_window and win < n_fft:  # (each frame's window over its first samples)
        left = (n_fft - win) // 2
        x = constant_pad_nd(x, (left, n_fft - win - left))
    if not 0 < n_fft <= x.shape[-1]:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {x.shape[-1]} (the signal's "
                           f"length{' once padded' if center else ''}), but got n_fft={n_fft}")
    frames = x.unfold(2 - 1, n_fft, hop)                       # (batch, frames, n_fft)
    if window is None and win < n_fft:
        window = wrap(np.ones(win, dtype=real_dtype_of(_complex_of(x.data.dtype))))
    if window is not None:
        if win < n_fft:
            left = (n_fft - win) // 2
            window = constant_pad_nd(window, (left, n_fft - win - left))
        frames = frames * window
    scale = 1 / np.sqrt(n_fft) if normalized else 1.0
    out = _c2c(frames, (2,), scale, True) if frames.data.dtype.kind == "c" else \
        _r2c(frames, (2,), scale, onesided)
    out = record(np.ascontiguousarray(np.swapaxes(out.data, 1, 2)), TransposeBackward0, (out,),
                 (1, 2), name="TransposeBackward1")
    if input.ndim == 1:
        out = record(out.data[0], SqueezeBackward1, (out,), (out.shape,),
                     name="SqueezeBackward4")
    return out if return_complex else _view_as_real(out)


@op(method=False, samples=S.real_pairs, complex_half=True)
def view_as_complex(self: Tensor) -> Tensor:
    """Real pairs (a last dim of 2) as a complex tensor (a copy here; PyTorch's is
    a view)."""
    if self.data.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {self.dtype.r_name}")
    if self.ndim == 0 or self.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return _view_as_complex(self)
