"""float32 matrix products through oneDNN (`onednn.matmul`, the fast path of
`nn_kernels.matmul`, which every product of the hot path calls): against
NumPy's product and PyTorch for row-major, transposed, strided and broadcast
operands, batches, `out=`, the size threshold and the dtypes that stay NumPy's;
the ops (mm, matmul, bmm, addmm, baddbmm, linear, attention, LSTM) with their
gradients; 1 and 2 threads; NumPy without the library, disabled or in a forked
child; oneDNN's failures as errors that say what failed.
"""
from __future__ import annotations


import numpy as np
import pytest
import torch

import rtorch_py as rt
from rtorch_py import runtime
from rtorch_py.ops import nn_kernels as K
from rtorch_py.ops import onednn

from helpers import onednn_platform, passes_in_forked_child
from rtorch_py.ops.nn_primitives import scaled_dot_product_attention

pytestmark = onednn_platform


@pytest.fixture
def routed(monkeypatch):
    """For each product nn_kernels.matmul made: whether oneDNN made it."""
    calls = []
    real = onednn.matmul

    def spy(a, b, out=None):
        res = real(a, b, out)
        calls.append(res is not None)
        return res
    monkeypatch.setattr(onednn, "matmul", spy)
    return calls


def _f32(rng, *shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _close(got, want, what: str = "") -> None:
    """float32 results of another summation order: within a few float32
    roundings of the sums' magnitude."""
    want = np.asarray(want)
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=3e-5 * scale, err_msg=what)


def _reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return torch.matmul(torch.tensor(np.array(a)), torch.tensor(np.array(b))).numpy()


# (a, b) makers: every operand layout the fast path describes without a copy,
# and those it copies first
CASES = {
    "row-major": lambda r: (_f32(r, 96, 80), _f32(r, 80, 72)),
    "a transposed": lambda r: (_f32(r, 80, 96).T, _f32(r, 80, 72)),
    "b transposed (a linear layer)": lambda r: (_f32(r, 96, 80), _f32(r, 72, 80).T),
    "both transposed": lambda r: (_f32(r, 80, 96).T, _f32(r, 72, 80).T),
    "row slices of a wider array": lambda r: (_f32(r, 96, 200)[:, 10:90], _f32(r, 80, 72)),
    "every other row and column": lambda r: (_f32(r, 192, 160)[::2, ::2], _f32(r, 80, 72)),
    "negative strides": lambda r: (_f32(r, 96, 80)[::-1], _f32(r, 80, 72)[:, ::-1]),
    "one row": lambda r: (_f32(r, 1, 4096), _f32(r, 4096, 80)),
    "one column": lambda r: (_f32(r, 4096, 80), _f32(r, 80, 1)[:, :1]),
    "an expanded operand": lambda r: (np.broadcast_to(_f32(r, 1, 80), (96, 80)),
                                      _f32(r, 80, 72)),
    "batched": lambda r: (_f32(r, 3, 96, 80), _f32(r, 3, 80, 72)),
    "batched, b transposed (attention's scores)":
        lambda r: (_f32(r, 2, 3, 96, 80), _f32(r, 2, 3, 72, 80).swapaxes(-1, -2)),
    "a batch times one matrix": lambda r: (_f32(r, 4, 96, 80), _f32(r, 80, 72)),
    "one matrix times a batch (the LSTM's input projection)":
        lambda r: (_f32(r, 96, 80), _f32(r, 4, 72, 80).transpose(0, 2, 1)),
    "broadcast batch dims": lambda r: (_f32(r, 2, 1, 96, 80), _f32(r, 3, 80, 72)),
    "an expanded batch": lambda r: (np.broadcast_to(_f32(r, 1, 96, 80), (3, 96, 80)),
                                    _f32(r, 3, 80, 72)),
    "permuted batch dims": lambda r: (_f32(r, 96, 3, 80).transpose(1, 0, 2),
                                      _f32(r, 3, 80, 72)),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", list(CASES))
def test_the_fast_path_matches_numpy_and_pytorch(case, threads, routed) -> None:
    a, b = CASES[case](np.random.default_rng(len(case)))
    before = runtime.torch_get_num_threads()
    runtime.torch_set_num_threads(threads)
    try:
        got = K.matmul(a, b)
    finally:
        runtime.torch_set_num_threads(before)
    assert routed == [True]
    want = np.matmul(a, b)
    assert got.dtype == np.float32 and got.shape == want.shape and got.flags.c_contiguous
    _close(got, _reference(a, b), "against PyTorch")
    _close(got, want, "against NumPy")


def test_into_out() -> None:
    rng = np.random.default_rng(1)
    a, b = _f32(rng, 96, 80), _f32(rng, 80, 72)
    want = np.matmul(a, b)
    # a row-major block of a larger array, written in place (the LSTM's loops)
    buf = np.full((3, 100, 90), 7, dtype=np.float32)
    res = K.matmul(a, b, out=buf[1, :96, 5:77])
    assert res.base is buf
    _close(buf[1, :96, 5:77], want)
    assert (buf[0] == 7).all() and (buf[2] == 7).all() and (buf[1, :, :5] == 7).all() \
        and (buf[1, 96:] == 7).all() and (buf[1, :, 77:] == 7).all()
    # a column-major out, and one that overlaps an operand: filled all the same
    col = np.zeros((72, 96), dtype=np.float32).T
    assert K.matmul(a, b, out=col) is col
    _close(col, want)
    sq = _f32(rng, 80, 80)
    want = np.matmul(sq, sq)
    K.matmul(sq, sq, out=sq)
    _close(sq, want)
    # a wrong out: NumPy's own error, nothing written
    with pytest.raises(ValueError):
        K.matmul(a, b, out=np.zeros((96, 71), np.float32))
    wide = np.zeros((96, 72))                           # float64 out: NumPy casts into it
    K.matmul(a, b, out=wide)
    _close(wide, np.matmul(a, b))


def test_small_products_other_dtypes_and_empty_ones_stay_numpy(routed) -> None:
    rng = np.random.default_rng(2)
    small = (_f32(rng, 64, 64), _f32(rng, 64, 64))          # 64**3 = 262144: OpenBLAS's 1 thread
    assert np.prod(small[0].shape) * small[1].shape[1] == onednn.SMALL_PRODUCT
    np.testing.assert_array_equal(K.matmul(*small), np.matmul(*small))
    a, b = rng.standard_normal((96, 80)), rng.standard_normal((80, 72))
    np.testing.assert_array_equal(K.matmul(a, b), np.matmul(a, b))        # float64: bits
    half = (a.astype(np.float16), b.astype(np.float16))
    np.testing.assert_array_equal(K.matmul(*half), np.matmul(*half))
    vec = (_f32(rng, 4096, 80), _f32(rng, 80))              # a vector: NumPy's gemv
    np.testing.assert_array_equal(K.matmul(*vec), np.matmul(*vec))
    assert routed == [False] * 4
    empty = K.matmul(_f32(rng, 0, 96, 80), _f32(rng, 80, 72))
    assert empty.shape == (0, 96, 72)
    zero_k = K.matmul(np.zeros((96, 0), np.float32), np.zeros((0, 72), np.float32))
    assert zero_k.shape == (96, 72) and not zero_k.any()


def test_the_ops_and_their_gradients_against_pytorch(routed) -> None:
    rng = np.random.default_rng(3)
    x, w, bias = _f32(rng, 96, 80), _f32(rng, 72, 80), _f32(rng, 72)
    p, q = _f32(rng, 3, 96, 80), _f32(rng, 3, 80, 72)
    ours = [rt.torch_tensor(v, requires_grad=True) for v in (x, w, bias, p, q)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (x, w, bias, p, q)]

    def run(nnf_linear, ts):
        x, w, bias, p, q = ts
        outs = [nnf_linear(x, w, bias), x.mm(w.t()), x.matmul(w.t()), p.bmm(q),
                p.matmul(q), p.bmm(q).baddbmm(p, q, beta=0.5, alpha=2)]
        return outs

    got = run(rt.nn.nnf_linear, ours)
    want = run(torch.nn.functional.linear, theirs)
    assert routed and all(routed)
    for i, (g, t) in enumerate(zip(got, want)):
        _close(g.detach().numpy(), t.detach().numpy(), f"output {i}")
    sum(o.sum() * (i + 1) for i, o in enumerate(got)).backward()
    sum(o.sum() * (i + 1) for i, o in enumerate(want)).backward()
    for name, g, t in zip(("x", "w", "bias", "p", "q"), ours, theirs):
        _close(g.grad.numpy(), t.grad.numpy(), f"gradient of {name}")


def test_attention_and_an_lstm_against_pytorch(routed) -> None:
    rng = np.random.default_rng(4)
    q, k, v = (_f32(rng, 2, 2, 80, 64) for _ in range(3))
    ours = [rt.torch_tensor(a, requires_grad=True) for a in (q, k, v)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    out = scaled_dot_product_attention(*ours)
    ref = torch.nn.functional.scaled_dot_product_attention(*theirs)
    _close(out.detach().numpy(), ref.detach().numpy(), "attention")
    (out * out).sum().backward()
    (ref * ref).sum().backward()
    for name, g, t in zip("qkv", ours, theirs):
        _close(g.grad.numpy(), t.grad.numpy(), f"attention's gradient of {name}")
    assert routed and all(routed)
    routed.clear()

    torch.manual_seed(0)
    ref_lstm = torch.nn.LSTM(96, 128)
    lstm = rt.nn.nn_lstm(96, 128)
    with rt.with_no_grad():
        for name, par in ref_lstm.named_parameters():
            getattr(lstm, name).copy_(rt.torch_tensor(par.detach().numpy()))
    xs = _f32(rng, 6, 24, 96)
    x_ours, x_ref = rt.torch_tensor(xs, requires_grad=True), torch.tensor(xs, requires_grad=True)
    y, _ = lstm(x_ours)
    y_ref, _ = ref_lstm(x_ref)
    _close(y.detach().numpy(), y_ref.detach().numpy(), "LSTM")
    y.sum().backward()
    y_ref.sum().backward()
    _close(x_ours.grad.numpy(), x_ref.grad.numpy(), "LSTM's input gradient")
    _close(lstm.weight_hh_l0.grad.numpy(), ref_lstm.weight_hh_l0.grad.numpy(),
           "LSTM's weight gradient")
    assert any(routed)


@pytest.mark.parametrize("how", ["absent", "disabled"])
def test_numpy_without_the_library(how, routed, monkeypatch, tmp_path) -> None:
    if how == "absent":
        monkeypatch.setattr(onednn, "_LIB", None)
        monkeypatch.setattr(onednn.sys, "prefix", str(tmp_path))
        monkeypatch.setattr(onednn.site, "getuserbase", lambda: str(tmp_path))
    else:
        monkeypatch.setattr(onednn, "ENABLED", False)
    rng = np.random.default_rng(5)
    a, b = _f32(rng, 3, 96, 80), _f32(rng, 80, 72)
    np.testing.assert_array_equal(K.matmul(a, b), np.matmul(a, b))
    assert routed == [False]


def test_a_forked_child_multiplies_with_numpy() -> None:
    rng = np.random.default_rng(6)
    a, b = _f32(rng, 96, 80), _f32(rng, 80, 72)
    before = runtime.torch_get_num_threads()
    runtime.torch_set_num_threads(2)
    try:
        want = K.matmul(a, b)                                   # the parent's pool started
    finally:
        runtime.torch_set_num_threads(before)
    assert passes_in_forked_child(
        lambda: onednn.matmul(a, b) is None and np.allclose(K.matmul(a, b), want, atol=1e-4),
        "product")


def test_batched_primitives_are_cached_per_shape_and_layout() -> None:
    rng = np.random.default_rng(7)
    a, b = _f32(rng, 2, 96, 80), _f32(rng, 2, 80, 72)
    K.matmul(a, b)
    keys = [k for k in onednn._PRIMITIVES if k[0] == "matmul"]
    K.matmul(a + 1, b)
    assert [k for k in onednn._PRIMITIVES if k[0] == "matmul"] == keys
    K.matmul(a, np.ascontiguousarray(b.swapaxes(1, 2)).swapaxes(1, 2))   # other strides
    assert len([k for k in onednn._PRIMITIVES if k[0] == "matmul"]) == len(keys) + 1


@pytest.mark.parametrize("threads", [1, 2])
def test_a_linear_layers_long_product_takes_the_matmul_primitive(threads) -> None:
    """x @ weight.t() with an inner dim of 1,000 or more: the fast path on the
    matmul primitive, against the plain path (sgemm), PyTorch and NumPy; a
    shorter inner dim, or another layout, stays on sgemm."""
    rng = np.random.default_rng(9)
    x, w = _f32(rng, 64, onednn._LINEAR_PRIMITIVE_K), _f32(rng, 96, onednn._LINEAR_PRIMITIVE_K)
    before = runtime.torch_get_num_threads()
    runtime.torch_set_num_threads(threads)
    try:
        onednn._PRIMITIVES.clear()
        got = K.matmul(x, w.T)
        keys = [k for k in onednn._PRIMITIVES if k[0] == "matmul"]
        plain = onednn._gemm(onednn._library(), x, w.T, None)
        K.matmul(x[:, :-1], w[:, :-1].T)                    # inner dim one short
        K.matmul(x, np.ascontiguousarray(w.T))              # b row-major
        K.matmul(x, w.T, out=np.empty((64, 96), np.float32))  # into out
    finally:
        runtime.torch_set_num_threads(before)
    assert len(keys) == 1 and keys[0][-1] == threads
    assert [k for k in onednn._PRIMITIVES if k[0] == "matmul"] == keys
    assert got.dtype == np.float32 and got.shape == (64, 96) and got.flags.c_contiguous
    _close(got, plain, "against sgemm")
    _close(got, _reference(x, w.T), "against PyTorch")
    _close(got, x @ w.T, "against NumPy")


def test_failures_say_what_failed(monkeypatch) -> None:
    lib = onednn._library()
    monkeypatch.setattr(lib, "sgemm", lambda *args: 1)
    rng = np.random.default_rng(8)
    with pytest.raises(MemoryError, match="oneDNN ran out of memory multiplying matrices"):
        K.matmul(_f32(rng, 96, 80), _f32(rng, 80, 72))
    monkeypatch.setattr(lib, "sgemm", lambda *args: 2)
    with pytest.raises(RuntimeError, match="oneDNN failed multiplying matrices: invalid"):
        rt.torch_mm(rt.torch_tensor(_f32(rng, 96, 80)), rt.torch_tensor(_f32(rng, 80, 72)))


def test_a_result_too_large_to_allocate_is_a_memory_error(routed) -> None:
    a, b = np.ones((1 << 20, 1), np.float32), np.ones((1, 1 << 20), np.float32)
    with pytest.raises(MemoryError):             # 4 TB: refused, never touched
        K.matmul(a, b)
    with pytest.raises(MemoryError):
        K.matmul(a[None], b[None])
    with pytest.raises(MemoryError):
        rt.torch_mm(rt.torch_tensor(a), rt.torch_tensor(b))
