"""float32 convolutions through oneDNN (`ops/onednn.py`, the fast path of
`nn_kernels`' three convolution kernels) against the plain im2col path and
PyTorch: forward, input and weight gradients over 1-d, 2-d and 3-d, strides,
padding, dilation, groups and transposed convolutions, and the model zoo's
shapes made small; 1 and 2 threads and two Python threads at once; the bounded
cache of primitives; im2col without the library. (The values and gradients
through the graph, on both paths, are in test_conv_kernels.py.)
"""
from __future__ import annotations

from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

import rtorch_py as rt
from rtorch_py import runtime
from rtorch_py.ops import nn_kernels as K
from rtorch_py.ops import onednn

from helpers import onednn_platform, passes_in_forked_child
from test_conv_kernels import CASES, IDS

# the dependency is declared for x86-64 Linux only; elsewhere im2col runs
pytestmark = onednn_platform


def test_the_library_is_found_and_enabled() -> None:
    assert onednn.available()


@pytest.fixture
def routed(monkeypatch):
    """The kinds of the convolutions oneDNN ran (not None), in call order."""
    calls = []
    real = onednn.convolution

    def spy(kind, *args, **kwargs):
        res = real(kind, *args, **kwargs)
        calls.append((kind, res is not None))
        return res
    monkeypatch.setattr(onednn, "convolution", spy)
    return calls


def _kernels(spec, x, w, g) -> tuple:
    """Output, input gradient and weight gradient of the convolution `spec`
    for output gradient g, on arrays."""
    _, _, stride, padding, dilation, transposed, out_pad, groups = spec
    if not transposed:
        return (K.conv_forward(x, w, stride, padding, dilation, groups),
                K.conv_grad_input(g, w, x.shape[2:], stride, padding, dilation, groups),
                K.conv_grad_weight(x, g, w.shape[2:], stride, padding, dilation, groups))
    size = tuple((i - 1) * s + (k - 1) * d + 1 + op - 2 * p for i, s, k, d, op, p in
                 zip(x.shape[2:], stride, w.shape[2:], dilation, out_pad, padding))
    return (K.conv_grad_input(x, w, size, stride, padding, dilation, groups),
            K.conv_forward(g, w, stride, padding, dilation, groups, x.shape[2:]),
            K.conv_grad_weight(g, x, w.shape[2:], stride, padding, dilation, groups))


def _torch(spec, x, w, g) -> tuple:
    """The same three from PyTorch, in float64 (the reference for both paths)."""
    _, _, stride, padding, dilation, transposed, out_pad, groups = spec
    tx, tw, tg = (torch.tensor(a, dtype=torch.float64) for a in (x, w, g))
    y = torch.ops.aten.convolution(tx, tw, None, stride, padding, dilation, transposed,
                                   out_pad, groups)
    gx, gw, _ = torch.ops.aten.convolution_backward(
        tg, tx, tw, None, stride, padding, dilation, transposed, out_pad, groups,
        (True, True, False))
    return y.numpy(), gx.numpy(), gw.numpy()


def _arrays(spec, seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(spec[0]).astype(np.float32)
    w = rng.standard_normal(spec[1]).astype(np.float32)
    _, _, stride, padding, dilation, transposed, out_pad, groups = spec
    out = torch.ops.aten.convolution(torch.tensor(x), torch.tensor(w), None, stride, padding,
                                     dilation, transposed, out_pad, groups).shape
    return x, w, rng.standard_normal(tuple(out)).astype(np.float32)


def _close(got, want, what: str) -> None:
    """float32 results of a different summation order: within a few float32
    roundings of the sums' magnitude."""
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-4 * scale, err_msg=what)


# A transposed convolution whose output padding reaches a stride beyond its
# padding (allowed with dilation) is more input than oneDNN's padding describes:
# im2col runs for it.
BEYOND = ((2, 3, 6), (3, 2, 3), (1,), (0,), (2,), True, (1,), 1)


@pytest.mark.parametrize("spec", CASES + [BEYOND], ids=IDS + ["1d-t-beyond"])
def test_the_fast_path_matches_im2col_and_pytorch(spec, routed, monkeypatch) -> None:
    x, w, g = _arrays(spec)
    fast = _kernels(spec, x, w, g)
    assert sorted(kind for kind, _ in routed) == ["forward", "input", "weight"]
    assert all(ok is (spec is not BEYOND) for _, ok in routed), routed
    monkeypatch.setattr(onednn, "ENABLED", False)
    plain = _kernels(spec, x, w, g)
    want = _torch(spec, x, w, g)
    for name, f, p, t in zip(("output", "input gradient", "weight gradient"), fast, plain, want):
        assert f.dtype == np.float32 and f.shape == t.shape
        assert f.flags.c_contiguous or spec is BEYOND
        _close(f, t, f"{name} against PyTorch")
        _close(f, p, f"{name} against im2col")


# the model zoo's convolutions at a smaller batch and image: (input, weight,
# stride, padding); both layouts oneDNN is asked for (blocked and plain) occur
ZOO = [((4, 64, 8, 8), (64, 64, 3, 3), 1, 1),
       ((4, 32, 10, 10), (64, 32, 3, 3), 1, 0),
       ((2, 3, 12, 12), (32, 3, 3, 3), 1, 1),
       ((2, 16, 9, 9), (32, 16, 3, 3), 2, 1),
       ((2, 16, 9, 9), (32, 16, 1, 1), 2, 0),
       ((1, 3, 30, 30), (8, 3, 7, 7), 2, 3)]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("zoo", ZOO, ids=[f"{z[0][1]}-{z[1][0]}-k{z[1][2]}-s{z[2]}"
                                          for z in ZOO])
def test_the_zoo_shapes_at_one_and_two_threads(zoo, threads, routed) -> None:
    xs, ws, s, p = zoo
    spec = (xs, ws, (s, s), (p, p), (1, 1), False, (0, 0), 1)
    x, w, g = _arrays(spec, 1)
    before = runtime.torch_get_num_threads()
    runtime.torch_set_num_threads(threads)
    try:
        got = _kernels(spec, x, w, g)
    finally:
        runtime.torch_set_num_threads(before)
    assert routed == [("forward", True), ("input", True), ("weight", True)]
    for name, f, t in zip(("output", "input gradient", "weight gradient"), got,
                          _torch(spec, x, w, g)):
        _close(f, t, name)


def test_two_python_threads_at_once() -> None:
    spec = ((4, 16, 10, 10), (16, 16, 3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
    x, w, g = _arrays(spec, 2)
    one = _kernels(spec, x, w, g)
    with ThreadPoolExecutor(2) as pool:
        for res in pool.map(lambda _: _kernels(spec, x, w, g), range(6)):
            for a, b in zip(res, one):
                np.testing.assert_array_equal(a, b)


def test_a_forked_child_convolves_with_im2col() -> None:
    """(GNU OpenMP's threads do not survive a fork: oneDNN in the child would hang.)"""
    spec = ((2, 8, 9, 9), (8, 8, 3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
    x, w, g = _arrays(spec, 6)
    before = runtime.torch_get_num_threads()
    runtime.torch_set_num_threads(2)
    try:
        want = K.conv_forward(x, w, (1, 1), (1, 1), (1, 1), 1)     # the parent's pool started
    finally:
        runtime.torch_set_num_threads(before)
    assert passes_in_forked_child(
        lambda: not onednn.available() and np.allclose(
            K.conv_forward(x, w, (1, 1), (1, 1), (1, 1), 1), want, atol=1e-4),
        "convolution")
    assert onednn.available()                                      # (the parent's unchanged)


def test_only_float32_is_routed(routed) -> None:
    spec = ((2, 4, 6, 6), (4, 4, 3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
    x, w, g = _arrays(spec, 3)
    K.conv_forward(x.astype(np.float64), w.astype(np.float64), (1, 1), (1, 1), (1, 1), 1)
    K.conv_forward(x, w.astype(np.float64), (1, 1), (1, 1), (1, 1), 1)
    assert routed == [("forward", False), ("forward", False)]
    h = rt.nn.nnf_conv2d(rt.torch_tensor(x).to(dtype=rt.torch_bfloat16()),
                         rt.torch_tensor(w).to(dtype=rt.torch_bfloat16()), padding=1)
    assert h.dtype == rt.torch_bfloat16() and routed[-1] == ("forward", False)


def test_the_cache_keeps_the_latest_primitives(monkeypatch) -> None:
    monkeypatch.setattr(onednn, "_CACHE_SIZE", 2)
    monkeypatch.setattr(onednn, "_PRIMITIVES", OrderedDict())
    rng = np.random.default_rng(4)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    for size in (5, 6, 7, 5):
        x = rng.standard_normal((1, 2, size, size)).astype(np.float32)
        K.conv_forward(x, w, (1, 1), (0, 0), (1, 1), 1)
    assert [k[1][0][2] for k in onednn._PRIMITIVES] == [7, 5]   # 6 dropped, 5 rebuilt


@pytest.mark.parametrize("how", ["absent", "disabled"])
def test_im2col_runs_without_the_library(how, routed, monkeypatch, tmp_path) -> None:
    if how == "absent":             # looked for afresh, where pip would have put it
        monkeypatch.setattr(onednn, "_LIB", None)
        monkeypatch.setattr(onednn.sys, "prefix", str(tmp_path))
        monkeypatch.setattr(onednn.site, "getuserbase", lambda: str(tmp_path))
    else:
        monkeypatch.setattr(onednn, "ENABLED", False)
    assert not onednn.available()
    spec = ((2, 4, 7, 7), (6, 4, 3, 3), (2, 2), (1, 1), (1, 1), False, (0, 0), 1)
    x, w, g = _arrays(spec, 5)
    for name, f, t in zip(("output", "input gradient", "weight gradient"),
                          _kernels(spec, x, w, g), _torch(spec, x, w, g)):
        _close(f, t, name)
    assert [ok for _, ok in routed] == [False] * 3


def test_failures_say_what_failed() -> None:
    with pytest.raises(RuntimeError, match="oneDNN failed executing: invalid arguments"):
        onednn._check(2, "executing")
    with pytest.raises(MemoryError, match="oneDNN ran out of memory"):
        onednn._check(1, "executing")


@pytest.mark.parametrize("piece_bytes", [1, 20_000])   # one sample a piece; ragged pieces
def test_a_large_batchs_weight_gradient_in_pieces(piece_bytes, routed, monkeypatch) -> None:
    spec = ((5, 16, 9, 9), (32, 16, 3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
    x, w, g = _arrays(spec, 1)
    whole = _kernels(spec, x, w, g)[2]
    monkeypatch.setattr(K, "_WEIGHT_GRAD_BYTES", piece_bytes)
    pieces = _kernels(spec, x, w, g)[2]
    assert ("weight", True) in routed
    np.testing.assert_allclose(pieces, whole, rtol=1e-5, atol=1e-5)
    _close(pieces, _torch(spec, x, w, g)[2], "weight gradient")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("piece_bytes", [1, 40_000])   # one block a piece; several
def test_a_weight_gradient_made_plain_in_its_own_buffer(threads, piece_bytes, monkeypatch) -> None:
    # the fast path (a weight gradient larger than input and output gradient
    # reordered to plain in place, a piece of 16 outputs or more at a time) against
    # the reorder into a new array: the same bytes
    spec = ((2, 32, 5, 5), (64, 32, 3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
    x, w, g = _arrays(spec, 3)
    monkeypatch.setattr(onednn, "_PIECE_BYTES", piece_bytes)
    before = runtime.torch_get_num_threads()
    runtime.torch_set_num_threads(threads)
    try:
        got = {}
        for fast in (True, False):
            monkeypatch.setattr(onednn, "_PRIMITIVES", OrderedDict())
            if not fast:
                monkeypatch.setattr(onednn._Primitive, "_pieces", lambda self, i: None)
            got[fast] = _kernels(spec, x, w, g)
            built = {k[0]: p for k, p in onednn._PRIMITIVES.items()}
            assert (built["weight"].in_place is not None) is fast
            assert built["forward"].in_place is built["input"].in_place is None
    finally:
        runtime.torch_set_num_threads(before)
    for f, p in zip(got[True], got[False]):
        assert f.flags.c_contiguous and f.shape == p.shape
        assert f.tobytes() == p.tobytes()


def test_a_weight_gradient_smaller_than_its_inputs_is_copied_to_plain() -> None:
    spec = ((8, 32, 7, 7), (48, 32, 3, 3), (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
    x, w, g = _arrays(spec, 3)
    _kernels(spec, x, w, g)
    prim = onednn._primitive(("weight", (x.shape, w.shape, g.shape)) + ((1, 1),) * 4 +
                             (runtime.torch_get_num_threads(), False))
    assert prim.reorders[1] is not None and prim.in_place is None
