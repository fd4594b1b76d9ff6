"""The convolution and max-pooling kernels taken a piece of the batch at a
time: several samples, runs of one sample's output rows (convolution), runs of
one sample's channels (max pooling); an output gradient that is a strided view.
Against PyTorch, and bit for bit against the same kernels in one piece.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import check_vs_torch
from rtorch_py.ops import nn_kernels as K
from rtorch_py.ops import onednn

# (input shape, weight shape, stride, padding, groups)
SPECS = [
    ((3, 4, 9, 8), (6, 2, 3, 3), (1, 1), (1, 1), 2),
    ((2, 3, 11, 7), (5, 3, 3, 2), (2, 1), (1, 0), 1),
    ((2, 2, 6, 5, 5), (3, 2, 3, 3, 3), (1, 1, 1), (1, 1, 1), 1),
    ((3, 3, 13), (4, 3, 4), (1,), (2,), 1),
]


def _arrays(spec, dtype):
    rng = np.random.default_rng(len(spec[0]) + spec[1][0])
    return [rng.standard_normal(spec[0]).astype(dtype),
            rng.standard_normal(spec[1]).astype(dtype),
            rng.standard_normal(spec[1][0]).astype(dtype)]


def _conv(spec):
    stride, padding, groups = list(spec[2]), list(spec[3]), spec[4]

    def fn(T, x, w, b):
        return T.convolution(x, w, b, stride, padding, [1] * len(stride), False,
                             [0] * len(stride), groups)
    return fn


@pytest.mark.parametrize("rows", [1, 2, None], ids=["one-row", "two-rows", "two-samples"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("spec", SPECS, ids=[f"{len(s[0]) - 2}d-{i}" for i, s in enumerate(SPECS)])
def test_pieces_of_the_batch_match_pytorch(spec, dtype, rows, monkeypatch) -> None:
    """Columns budgets that make pieces of one or two output rows of a sample,
    or of two samples."""
    xs, ws, stride, padding = spec[:4]
    size = tuple(s + 2 * p for s, p in zip(xs[2:], padding))
    osz = K._out_size(size, ws[2:], stride, (1,) * len(stride))
    per_row = xs[1] * int(np.prod(ws[2:])) * int(np.prod(osz[1:])) * np.dtype(dtype).itemsize
    budget = per_row * (rows or 2 * osz[0])
    monkeypatch.setattr(K, "_COLS_BYTES", budget)
    monkeypatch.setattr(onednn, "ENABLED", False)       # (float32 would skip im2col)
    want = [(a, a + 1, r, min(r + rows, osz[0])) for a in range(xs[0])
            for r in range(0, osz[0], rows)] if rows else \
        [(a, min(a + 2, xs[0]), 0, osz[0]) for a in range(0, xs[0], 2)]
    assert K._pieces(xs[0], osz[0], per_row * osz[0]) == want
    check_vs_torch(_conv(spec), *_arrays(spec, dtype))


def test_pieces_split_the_batch_as_asked(monkeypatch) -> None:
    monkeypatch.setattr(K, "_COLS_BYTES", 100)
    assert K._pieces(3, 5, 20) == [(0, 3, 0, 5)]                  # three samples fit
    assert K._pieces(4, 5, 40) == [(0, 2, 0, 5), (2, 4, 0, 5)]
    assert K._pieces(2, 5, 250) == [(a, a + 1, r, min(r + 2, 5))  # two rows a piece
                                    for a in range(2) for r in (0, 2, 4)]
    assert K._pieces(0, 5, 250) == []


def test_a_strided_output_gradient_gives_the_same_weight_gradient() -> None:
    rng = np.random.default_rng(5)
    xp = rng.standard_normal((3, 4, 10, 9)).astype(np.float32)
    w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    big = rng.standard_normal((3, 6, 16, 7)).astype(np.float32)
    g = big[:, :, ::2]                                   # (3, 6, 8, 7), not contiguous
    want = K._conv_grad_weight(xp, np.ascontiguousarray(g), (3, 3), (1, 1), (1, 1), 1)
    got = K._conv_grad_weight(xp, g, (3, 3), (1, 1), (1, 1), 1)
    np.testing.assert_array_equal(got, want)
    got = K._conv_grad_weight(xp, np.broadcast_to(g[:1], g.shape), (3, 3), (1, 1), (1, 1), 1)
    want = K._conv_grad_weight(xp, np.ascontiguousarray(np.broadcast_to(g[:1], g.shape)),
                               (3, 3), (1, 1), (1, 1), 1)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("budget", [1, 3000, 1 << 20])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("k, s, p", [(2, 2, 0), (3, 2, 1), (3, 1, 1)])
def test_max_pool_in_pieces_matches_pytorch(k, s, p, dtype, budget, monkeypatch) -> None:
    """Values and the maxima's positions, NaN taking its window, with the
    channels or samples taken a piece at a time (by the budget in bytes)."""
    monkeypatch.setattr(K, "_POOL_BYTES", budget)
    x = np.random.default_rng(7).standard_normal((3, 5, 9, 8)).astype(dtype)
    x[0, 1, 2, 2] = x[2, 4, 5, 6] = np.nan
    y, i = rt.nn.nnf_max_pool2d(rt.torch_tensor(x), k, s, p, return_indices=True)
    ty, ti = torch.nn.functional.max_pool2d(torch.tensor(x), k, s, p, return_indices=True)
    np.testing.assert_array_equal(np.asarray(i.data), ti.numpy())
    np.testing.assert_array_equal(np.asarray(y.data), ty.numpy())
