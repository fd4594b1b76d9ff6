"""Sample inputs of the fft ops (see the package docstring): real and complex
signals, even and odd lengths, padded and trimmed sizes, each norm."""
from __future__ import annotations

from . import T, sample


def one_dim() -> list:
    return [sample(T((5,))), sample(T((2, 4))), sample(T((4,), dtype="complex128")),
            sample(T((3, 4)), 6, 0), sample(T((2, 5)), 3), sample(T((4,), dtype="int64"))]


def two_dim() -> list:
    return [sample(T((3, 4))), sample(T((2, 3, 4), dtype="complex128")),
            sample(T((3, 4)), (4, 3)), sample(T((2, 3, 4)), dim=(0, 2))]


def n_dim() -> list:
    return [sample(T((3, 4))), sample(T((2, 3, 2), dtype="complex128")),
            sample(T((3, 4)), dim=1), sample(T((2, 3, 4)), (3, 5), (0, 1))]


def one_dim_real() -> list:
    return [sample(T((5,))), sample(T((2, 4))), sample(T((3, 4)), 6, 0),
            sample(T((2, 5)), 3)]


def two_dim_real() -> list:
    return [sample(T((3, 4))), sample(T((3, 5)), (4, 4)), sample(T((2, 3, 4)), dim=(0, 2))]


def n_dim_real() -> list:
    return [sample(T((3, 4))), sample(T((2, 3, 5))), sample(T((3, 4)), dim=0)]


def one_dim_half() -> list:
    return [sample(T((3,), dtype="complex128")), sample(T((2, 4), dtype="complex128")),
            sample(T((3,), dtype="complex128"), 5), sample(T((3, 4), dtype="complex128"), 4, 0)]


def two_dim_half() -> list:
    return [sample(T((3, 3), dtype="complex128")), sample(T((3, 3), dtype="complex128"), (4, 5))]


def n_dim_half() -> list:
    return [sample(T((3, 3), dtype="complex128")), sample(T((2, 3, 2), dtype="complex128")),
            sample(T((3, 3), dtype="complex128"), dim=0)]


def freq() -> list:
    return [sample(5), sample(4, 0.5)]


def shift() -> list:
    return [sample(T((5,))), sample(T((3, 4))), sample(T((3, 4)), dim=1),
            sample(T((2, 3, 4)), dim=(0, 2))]


def stft() -> list:
    """Rectangular and given windows (shorter than n_fft too), a batch, each
    pad mode, not centred, normalized, two-sided, real pairs, complex input."""
    return [sample(T((40,)), 8, 2, return_complex=True),
            sample(T((2, 30)), 8, 3, 6, T((6,)), return_complex=True, note="batch, window"),
            sample(T((30,)), 8, window=T((8,)), center=False, normalized=True,
                   return_complex=False, note="real pairs"),
            sample(T((30,)), 8, 4, pad_mode="constant", onesided=False, return_complex=True),
            sample(T((2, 20)), 6, 5, 5, pad_mode="replicate", return_complex=True),
            sample(T((20,)), 6, 4, pad_mode="circular", return_complex=False),
            sample(T((25,), dtype="complex128"), 8, 4, return_complex=True, note="complex")]


def complex_values() -> list:
    return [sample(T((3,), dtype="complex64")), sample(T((2, 2), dtype="complex128")),
            sample(T((), dtype="complex64"))]


def real_pairs() -> list:
    return [sample(T((3, 2))), sample(T((2, 2, 2))), sample(T((2,)), note="0-d result")]


def istft() -> list:
    """Complex spectra (random: not an stft's), windows whose squares cover the
    signal; centred or not, a length, a two-sided spectrum, a batch."""
    return [sample(T((5, 6), dtype="complex64"), 8),
            sample(T((5, 7), dtype="complex128"), 8, 2, 6, T((6,), low=0.5, high=1.5),
                   note="hop, win_length, window"),
            sample(T((2, 5, 4), dtype="complex64"), 8, center=False, note="batch, not centred"),
            sample(T((8, 5), dtype="complex128"), 8, onesided=False, length=10,
                   note="two-sided, length"),
            sample(T((5, 4), dtype="complex64"), 8, length=30, note="zeros past the signal")]
