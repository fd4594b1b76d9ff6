"""Memory and view internals, libtorch's private methods (rtorch_py/ops/memory.py)
and contrib_sort_vertices (rtorch_py/contrib.py): what the generated op tests
(tests/test_op_registry.py) cannot take from a sample, each against PyTorch 2.13
or, where PyTorch's derivative is not the values' own, finite differences."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import gradcheck


def test_alias_shares_memory_and_version():
    x = rt.torch_tensor([[1.0, 2.0], [3.0, 4.0]])
    a = x.alias()
    assert a.data_ptr() == x.data_ptr() and a.is_set_to(x)
    a.add_(1)
    assert x.data.tolist() == [[2.0, 3.0], [4.0, 5.0]] and x._version[0] == a._version[0] == 1


def test_as_strided_in_place_matches_pytorch():
    x, t = rt.torch_arange(6.0), torch.arange(6.0)
    assert x.as_strided_((2, 2), (1, 2), 1) is x
    t.as_strided_((2, 2), (1, 2), 1)
    np.testing.assert_array_equal(x.data, t.numpy())
    y = rt.torch_ones(6, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        y.as_strided_((2, 3), (3, 1))


def test_as_strided_scatter_gradients_are_the_derivative():
    """src's gradient is PyTorch's; self's is checked by finite differences (PyTorch
    2.13 gives self the gradient at the scattered places instead of elsewhere)."""
    def f(a, b):
        return a.as_strided_scatter(b, (2, 2), (1, 2), 1)
    x, s = np.arange(6.0), np.ones((2, 2))
    assert gradcheck(lambda T, a, b: f(a, b), x, s)
    xr, sr = rt.torch_tensor(x, requires_grad=True), rt.torch_tensor(s, requires_grad=True)
    g = np.arange(6.0) * 10
    gx, gs = rt.autograd_grad(f(xr, sr), [xr, sr], rt.torch_tensor(g))
    assert gx.data.tolist() == [0.0, 0.0, 0.0, 0.0, 0.0, 50.0]
    xt, st = torch.tensor(x, requires_grad=True), torch.tensor(s, requires_grad=True)
    np.testing.assert_array_equal(gs.data, torch.autograd.grad(f(xt, st), st,
                                                               torch.tensor(g))[0].numpy())
    with pytest.raises(RuntimeError, match=r"src size = \[3\], slice size = \[2\]"):
        rt.torch_ones(2, 2).as_strided_scatter(rt.torch_ones(3), (2,), (1,))


def test_slice_inverse_of_a_real_slice():
    def make(T):
        leaf = T.arange(12.0, dtype=T.float64, requires_grad=True) if T is torch else \
            rt.torch_arange(12.0, dtype=rt.torch_float64(), requires_grad=True)
        base = leaf.reshape(3, 4) * 1
        return leaf, base, base[:, 1:3]
    (l1, b1, s1), (l2, b2, s2) = make(rt), make(torch)
    r1, r2 = s1.slice_inverse(b1, 1, 1, 3, 1), s2.slice_inverse(b2, 1, 1, 3, 1)
    np.testing.assert_array_equal(r1.data, r2.detach().numpy())
    assert type(r2.grad_fn).__name__ == r1.grad_fn.name == "SliceInverseBackward0"
    g = np.random.default_rng(0).standard_normal((3, 4))
    r1.backward(rt.torch_tensor(g))
    r2.backward(torch.tensor(g))
    np.testing.assert_allclose(l1.grad.data, l2.grad.numpy())


def test_set_to_a_tensor_a_storage_or_nothing():
    src = rt.torch_arange(6.0).reshape(2, 3)
    y = rt.torch_empty(0)
    assert y.set_(src) is y and y.is_set_to(src) and y.data_ptr() == src.data_ptr()
    assert not y.is_set_to(src.view(3, 2))
    z = rt.torch_empty(0).set_(src.storage(), 1, (2, 2), (1, 2))
    t = torch.empty(0).set_(torch.arange(6.0).untyped_storage(), 1, (2, 2), (1, 2))
    np.testing.assert_array_equal(z.data, t.numpy())
    assert rt.torch_zeros(3).set_().shape == (0,)
    # a storage's bytes read as the tensor's dtype, as libtorch's
    w = rt.torch_zeros(5).set_(rt.torch_ones(2, dtype=rt.torch_float64()).storage(), 0, 2)
    wt = torch.zeros(5).set_(torch.ones(2, dtype=torch.float64).untyped_storage(), 0, (2,), (1,))
    np.testing.assert_array_equal(w.data, wt.numpy())
    with pytest.raises(RuntimeError, match="Could not set tensor of type float64 to a tensor "
                                           "of type float32"):
        rt.torch_zeros(2).set_(rt.torch_ones(3, dtype=rt.torch_float64()))
    with pytest.raises(RuntimeError, match="need 9 elements, but the storage has 6"):
        rt.torch_empty(0).set_(src.storage(), 0, (3, 3))


def test_set_data_keeps_history_flags():
    w = rt.torch_zeros(2, requires_grad=True)
    assert w.set_data(rt.torch_ones(3)) is None
    assert w.requires_grad and w.data.tolist() == [1.0, 1.0, 1.0]
    (w * 2).sum().backward()
    assert w.grad.data.tolist() == [2.0, 2.0, 2.0]


def test_resize_as_keeps_the_first_elements():
    x = rt.torch_arange(6.0)
    assert x.resize_as_(rt.torch_ones(2, 2)) is x and x.data.tolist() == [[0, 1], [2, 3]]


def test_lazy_clone_and_private_views_match_pytorch():
    x = np.random.default_rng(1).standard_normal((2, 3))
    for name in ("_lazy_clone", "_neg_view"):
        a, b = rt.torch_tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yb = getattr(a, name)(), getattr(b, name)()
        np.testing.assert_array_equal(ya.data, yb.detach().resolve_neg().numpy())
        assert ya.grad_fn.name == type(yb.grad_fn).__name__
        (ya * ya).sum().backward()
        (yb * yb).sum().backward()
        np.testing.assert_allclose(a.grad.data, b.grad.numpy())
        assert not getattr(rt.torch_tensor(x), name)().is_set_to(rt.torch_tensor(x))


def test_autocast_casts_as_pytorch():
    cases = [(np.float32, False, True), (np.float32, False, False), (np.float16, False, True),
             (np.float64, False, True), (np.int64, False, True)]
    for dt, cuda, cpu in cases:
        a, b = rt.torch_tensor(np.ones(2, dtype=dt)), torch.ones(2, dtype=getattr(torch,
                                                                                 np.dtype(dt).name))
        got = a._autocast_to_reduced_precision(cuda, cpu, rt.torch_float16(), rt.torch_bfloat16())
        want = b._autocast_to_reduced_precision(cuda, cpu, torch.float16, torch.bfloat16)
        assert got.dtype.name == str(want.dtype).replace("torch.", "")
        got = a._autocast_to_full_precision(cuda, cpu)
        assert got.dtype.name == str(b._autocast_to_full_precision(cuda, cpu).dtype)[6:]


def test_fw_primal_drops_the_tangent():
    with rt.dual_level():
        d = rt.make_dual(rt.torch_ones(2), rt.torch_full((2,), 3.0))
        p = d._fw_primal(0)
        assert p.data_ptr() == d.data_ptr()
        assert rt.unpack_dual(p).tangent.data.tolist() == [0.0, 0.0]
        assert rt.unpack_dual(d).tangent.data.tolist() == [3.0, 3.0]


def test_addmm_activation_has_no_derivative():
    x = rt.torch_randn(2, 3, requires_grad=True)
    y = x._addmm_activation(rt.torch_randn(2, 4), rt.torch_randn(4, 3))
    with pytest.raises(RuntimeError, match="derivative for _addmm_activation is not "
                                           "implemented"):
        y.sum().backward()


def test_what_a_cpu_only_libtorch_answers():
    x = rt.torch_ones(2)
    assert x.is_pinned() is False and x.is_distributed() is False
    assert x._is_zerotensor() is False


def test_contrib_sort_vertices_orders_anticlockwise():
    """The documented contract: the valid vertices' indices anticlockwise from the
    positive x axis, the first repeated, the rest the first invalid intersection."""
    rng = np.random.default_rng(2)
    angles = np.sort(rng.uniform(0, 2 * np.pi, size=(3, 5, 6)), axis=-1)
    pts = np.stack([np.cos(angles), np.sin(angles)], -1) * rng.uniform(0.5, 2, (3, 5, 6, 1))
    perm = np.argsort(rng.random((3, 5, 24)), axis=-1)
    v = np.zeros((3, 5, 24, 2), np.float32)
    mask = np.zeros((3, 5, 24), bool)
    nv = rng.integers(2, 7, size=(3, 5)).astype(np.int32)
    for b in range(3):
        for n in range(5):
            slots = perm[b, n][:nv[b, n]]
            v[b, n, slots] = pts[b, n, :nv[b, n]]
            mask[b, n, slots] = True
    idx = rt.contrib_sort_vertices(rt.torch_tensor(v), rt.torch_tensor(mask),
                                   rt.torch_tensor(nv)).data
    assert idx.shape == (3, 5, 9) and idx.dtype == np.int32
    for b in range(3):
        for n in range(5):
            k, row = nv[b, n], idx[b, n]
            pad = 8 + np.argmax(~mask[b, n, 8:])
            if k < 3:
                assert (row == pad).all()
                continue
            order = perm[b, n][:k]  # the slots holding the points, in angle order
            assert row[:k].tolist() == order.tolist() and row[k] == row[0]
            assert (row[k + 1:] == pad).all()
    with pytest.raises(RuntimeError, match="num_valid must be an int32 tensor"):
        rt.contrib_sort_vertices(rt.torch_tensor(v), rt.torch_tensor(mask),
                                 rt.torch_tensor(nv.astype(np.int64)))


def test_contrib_sort_vertices_of_two_identical_boxes():
    square = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]], np.float32)
    v = np.zeros((1, 1, 24, 2), np.float32)
    v[0, 0, :4] = v[0, 0, 4:8] = square
    mask = np.zeros((1, 1, 24), bool)
    mask[0, 0, :8] = True
    idx = rt.contrib_sort_vertices(rt.torch_tensor(v), rt.torch_tensor(mask),
                                   rt.torch_tensor(np.array([[8]], np.int32))).data
    ring = idx[0, 0, :5].tolist()
    assert ring[4] == ring[0] and sorted(square[i].tolist() for i in np.array(ring[:4]) % 4) \
        == sorted(square.tolist()) and (idx[0, 0, 5:] == 8).all()


# compiled.numba_kernel: compiled on first use, helpers it calls first; None without numba

def _doubled(x):
    return _twice(x) + 0.0


def _twice(x):
    return 2.0 * x


def test_numba_kernel_compiles_on_first_use_with_the_helpers_it_calls(monkeypatch):
    import sys
    from rtorch_py.compiled import numba_kernel
    pytest.importorskip("numba")
    plain_twice = _twice
    monkeypatch.setitem(globals(), "_twice", plain_twice)   # (restored after the test)
    kernel = numba_kernel(_doubled, calls=("_twice",))
    assert globals()["_twice"] is plain_twice               # nothing compiled yet
    compiled = kernel()
    assert compiled(3.0) == 6.0 and kernel() is compiled    # compiled once
    assert globals()["_twice"] is not plain_twice           # the helper rebound, compiled
    monkeypatch.setitem(sys.modules, "numba", None)         # (import numba fails)
    assert numba_kernel(_twice)() is None
