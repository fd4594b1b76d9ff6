"""Tensor creation, dtypes and conversions (R torch's names, PyTorch's values)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import assert_same


def _np_dtype(t):
    return rt.as_array(t).dtype


# --------------------------------------------------------------------------
# torch_tensor

@pytest.mark.parametrize("value,dtype", [
    (3.5, np.float32), (3, np.int64), (True, np.bool_), (False, np.bool_), (-0.0, np.float32),
    (np.float64(2.5), np.float32), (np.int32(7), np.int64),
])
def test_tensor_from_number_is_1d(value, dtype):
    t = rt.torch_tensor(value)
    assert t.shape == (1,)
    assert _np_dtype(t) == dtype
    assert rt.as_array(t)[0] == value


@pytest.mark.parametrize("data", [
    [1.0, 2.0, 3.0],
    [1, 2, 3],
    [True, False],
    [[1, 2], [3, 4]],
    [[1.5, 2], [3, 4]],
    [[[1.0], [2.0]], [[3.0], [4.0]]],
    [1, 2.5],
    [True, 2],
    [True, 2.5],
    [[True], [False]],
    (1.0, 2.0),
])
def test_tensor_from_lists_like_torch(data):
    assert_same(rt.torch_tensor(data), torch.tensor(data), f"torch_tensor({data!r})")


def test_tensor_from_empty_list():
    t = rt.torch_tensor([])
    assert t.shape == (0,) and t.dtype == rt.torch_float32()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_tensor_from_numpy_shares_memory(dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype)
    t = rt.torch_tensor(a)
    assert _np_dtype(t) == dtype
    assert np.shares_memory(rt.as_array(t), a)
    assert t.shape == (2, 3)


def test_tensor_from_numpy_noncontiguous_and_0d():
    a = np.arange(12.0).reshape(3, 4).T
    t = rt.torch_tensor(a)
    np.testing.assert_array_equal(rt.as_array(t), a)
    z = rt.torch_tensor(np.array(2.5))
    assert z.shape == () and z.item() == 2.5


@pytest.mark.parametrize("src", [np.float16, np.uint8, np.int16, np.int8, np.complex64,
                                 np.complex128])
def test_tensor_from_numpy_keeps_every_torch_dtype(src):
    # as torch.tensor(array) does: the array's dtype is kept when torch has it
    a = (np.arange(4) * (1 + 1j if np.dtype(src).kind == "c" else 1)).astype(src)
    t = rt.torch_tensor(a)
    assert _np_dtype(t) == src
    assert str(t.dtype.name) == str(torch.tensor(a).dtype).replace("torch.", "")
    np.testing.assert_array_equal(rt.as_array(t), a)


@pytest.mark.parametrize("src,expect", [(np.uint16, np.int64), (np.uint32, np.int64)])
def test_tensor_from_numpy_other_dtypes_converted(src, expect):
    a = np.arange(4).astype(src)
    assert _np_dtype(rt.torch_tensor(a)) == expect


def test_tensor_with_dtype_copies_when_it_must():
    a = np.arange(4, dtype=np.float32)
    t = rt.torch_tensor(a, dtype=rt.torch_float64())
    assert _np_dtype(t) == np.float64 and not np.shares_memory(rt.as_array(t), a)
    t2 = rt.torch_tensor(a, dtype=rt.torch_float32())
    assert np.shares_memory(rt.as_array(t2), a)
    assert rt.torch_tensor([1, 2], dtype=rt.torch_float()).dtype == rt.torch_float32()
    assert rt.torch_tensor(1.7, dtype=rt.torch_long()).item() == 1
    assert rt.torch_tensor([0, 2], dtype=rt.torch_bool()).tolist() == [False, True]


def test_tensor_from_tensor():
    x = rt.torch_tensor([1.0, 2.0])
    y = rt.torch_tensor(x)
    np.testing.assert_array_equal(rt.as_array(y), [1.0, 2.0])
    assert y.grad_fn is None


@pytest.mark.parametrize("data,err,match", [
    ([[1, 2], [3]], ValueError, "ragged"),
    ([[1, 2], 3], ValueError, "ragged"),
    (["a", "b"], TypeError, "str"),
    ([1, None], TypeError, "NoneType"),
    ({"a": 1}, TypeError, "dict"),
    ("abc", TypeError, "str"),
    (np.array(["a"]), TypeError, "NumPy array"),
])
def test_tensor_bad_input_errors(data, err, match):
    with pytest.raises(err, match=match):
        rt.torch_tensor(data)


def test_requires_grad_needs_float():
    x = rt.torch_tensor([1.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    with pytest.raises(RuntimeError, match="floating point"):
        rt.torch_tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        rt.torch_zeros(2, dtype=rt.torch_long(), requires_grad=True)


def test_device_must_be_cpu():
    rt.torch_tensor([1.0], device="cpu")
    with pytest.raises(RuntimeError, match="cpu"):
        rt.torch_tensor([1.0], device="cuda")
    with pytest.raises(RuntimeError, match="cpu"):
        rt.torch_zeros(2, device="cuda")


# --------------------------------------------------------------------------
# Factories

@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("dtype", [None, "float64", "int64", "int32", "bool"])
@pytest.mark.parametrize("shape", [(2, 3), (4,), (), (0, 2)])
def test_zeros_ones_empty(name, dtype, shape):
    kw = {} if dtype is None else {"dtype": getattr(rt, "torch_" + dtype)()}
    tkw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    r = getattr(rt, "torch_" + name)(*shape, **kw)
    t = getattr(torch, name)(tuple(shape), **tkw)
    if name == "empty":
        assert r.shape == tuple(t.shape) and _np_dtype(r) == t.numpy().dtype
    else:
        assert_same(r, t, name)
    # a list/tuple of sizes works too
    r2 = getattr(rt, "torch_" + name)(list(shape), **kw)
    assert r2.shape == tuple(shape)


def test_factory_requires_grad_and_negative_size():
    x = rt.torch_ones(2, 2, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    (x * 3).sum().backward()
    assert rt.as_array(x.grad).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    with pytest.raises(RuntimeError, match="negative dimension"):
        rt.torch_zeros(2, -1)


@pytest.mark.parametrize("fill,dtype", [(2.5, None), (2, None), (True, None), (7, "float64"),
                                        (1.5, "int64"), (0, "bool")])
def test_full(fill, dtype):
    kw = {} if dtype is None else {"dtype": getattr(rt, "torch_" + dtype)()}
    tkw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    assert_same(rt.torch_full(c(2, 3), fill, **kw), torch.full((2, 3), fill, **tkw), "full")
    assert_same(rt.torch_full([4], fill, **kw), torch.full([4], fill, **tkw), "full")


def c(*xs):
    return list(xs)


@pytest.mark.parametrize("name", ["randn", "rand"])
def test_random_shapes_dtypes_and_seed(name):
    f = getattr(rt, "torch_" + name)
    x = f(3, 4)
    assert x.shape == (3, 4) and x.dtype == rt.torch_float32()
    assert f(2, dtype=rt.torch_float64()).dtype == rt.torch_float64()
    assert f(c(2, 5)).shape == (2, 5)
    assert f(2, requires_grad=True).requires_grad
    rt.torch_manual_seed(42)
    a = rt.as_array(f(100)).copy()
    rt.torch_manual_seed(42)
    b = rt.as_array(f(100)).copy()
    rt.torch_manual_seed(43)
    d = rt.as_array(f(100)).copy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, d)
    if name == "rand":
        assert a.min() >= 0 and a.max() < 1
    else:
        big = rt.as_array(f(20000))
        assert abs(big.mean()) < 0.05 and abs(big.std() - 1) < 0.05


def test_randint():
    rt.torch_manual_seed(1)
    x = rt.torch_randint(2, 5, size=c(1000))
    a = rt.as_array(x)
    assert x.dtype == rt.torch_int64() and a.min() == 2 and a.max() == 4
    y = rt.torch_randint(3, size=(2, 2))
    assert y.shape == (2, 2) and rt.as_array(y).max() < 3
    assert rt.torch_randint(0, 2, size=3, dtype=rt.torch_float64()).dtype == rt.torch_float64()
    rt.torch_manual_seed(5)
    p = rt.as_array(rt.torch_randint(0, 100, size=10)).copy()
    rt.torch_manual_seed(5)
    np.testing.assert_array_equal(p, rt.as_array(rt.torch_randint(0, 100, size=10)))
    with pytest.raises(RuntimeError, match="from"):
        rt.torch_randint(5, 5, size=2)
    with pytest.raises(TypeError, match="size"):
        rt.torch_randint(0, 5)


@pytest.mark.parametrize("args,kw", [
    ((5,), {}), ((1, 4), {}), ((0, 10, 3), {}), ((1.0, 2.5, 0.5), {}), ((0, 1, 0.1), {}),
    ((5,), {"dtype": "float64"}), ((10, 0, -2), {}), ((0.5,), {}), ((-3, 3), {}),
    ((0, 0.3, 0.1), {}),
])
def test_arange(args, kw):
    rkw = {k: getattr(rt, "torch_" + v)() for k, v in kw.items()}
    tkw = {k: getattr(torch, v) for k, v in kw.items()}
    assert_same(rt.torch_arange(*args, **rkw), torch.arange(*args, **tkw), f"arange{args}")


@pytest.mark.parametrize("args", [(0, 1, 5), (-2, 2, 9), (1, 1, 3), (3, 0, 4), (0, 1, 1),
                                  (0, 1, 0)])
def test_linspace(args):
    assert_same(rt.torch_linspace(*args), torch.linspace(*args), f"linspace{args}")
    assert_same(rt.torch_linspace(*args, dtype=rt.torch_float64()),
                torch.linspace(*args, dtype=torch.float64), f"linspace{args}")


@pytest.mark.parametrize("args", [(3,), (2, 4), (4, 2), (1,), (0,)])
def test_eye(args):
    assert_same(rt.torch_eye(*args), torch.eye(*args), f"eye{args}")
    assert_same(rt.torch_eye(*args, dtype=rt.torch_int64()),
                torch.eye(*args, dtype=torch.int64), f"eye{args}")


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "rand_like",
                                  "randn_like"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_like_forms(name, dtype):
    x = rt.torch_tensor(np.ones((2, 3), dtype=dtype), requires_grad=True)
    y = getattr(rt, "torch_" + name)(x)
    assert y.shape == (2, 3) and _np_dtype(y) == dtype
    assert not y.requires_grad and y.grad_fn is None
    z = getattr(rt, "torch_" + name)(x, dtype=rt.torch_float64(), requires_grad=True)
    assert z.dtype == rt.torch_float64() and z.requires_grad and z.is_leaf
    if name == "zeros_like":
        assert not rt.as_array(y).any()
    if name == "ones_like":
        assert rt.as_array(y).all()


def test_like_forms_int_and_full_like():
    i = rt.torch_tensor([[1, 2]])
    assert_same(rt.torch_zeros_like(i), torch.zeros_like(torch.tensor([[1, 2]])))
    assert_same(rt.torch_ones_like(i), torch.ones_like(torch.tensor([[1, 2]])))
    assert_same(rt.torch_full_like(i, 7), torch.full_like(torch.tensor([[1, 2]]), 7))
    f = rt.torch_ones(2, 2)
    assert_same(rt.torch_full_like(f, 2.5), torch.full_like(torch.ones(2, 2), 2.5))


# --------------------------------------------------------------------------
# dtypes

@pytest.mark.parametrize("ctor,np_dtype,r_name", [
    ("torch_float", np.float32, "Float"), ("torch_float32", np.float32, "Float"),
    ("torch_double", np.float64, "Double"), ("torch_float64", np.float64, "Double"),
    ("torch_long", np.int64, "Long"), ("torch_int64", np.int64, "Long"),
    ("torch_int", np.int32, "Int"), ("torch_int32", np.int32, "Int"),
    ("torch_bool", np.bool_, "Bool"),
])
def test_dtype_constructors(ctor, np_dtype, r_name):
    d = getattr(rt, ctor)()
    assert isinstance(d, rt.dtype)
    assert repr(d) == f"torch_{r_name}"
    t = rt.torch_zeros(2, dtype=d)
    assert _np_dtype(t) == np_dtype and t.dtype == d
    assert rt.torch_tensor([1, 0]).to(dtype=d).dtype == d
    assert d.is_floating_point == (np.dtype(np_dtype).kind == "f")


# --------------------------------------------------------------------------
# Conversions

def test_to_dtype():
    x = rt.torch_tensor([1.5, -2.7])
    for d, td in [(rt.torch_float64(), torch.float64), (rt.torch_int64(), torch.int64),
                  (rt.torch_int32(), torch.int32), (rt.torch_bool(), torch.bool)]:
        assert_same(x.to(dtype=d), torch.tensor([1.5, -2.7]).to(dtype=td))
    assert x.to(dtype=rt.torch_float32()) is x  # no-op when already that dtype
    assert x.to(dtype="float64").dtype == rt.torch_float64()
    assert_same(x.to(dtype="complex64"), torch.tensor([1.5, -2.7]).to(dtype=torch.complex64))
    bf = x.to(dtype=rt.torch_bfloat16())  # (values rounded as PyTorch rounds them)
    assert bf.dtype == rt.torch_bfloat16()
    assert bf.data.astype(np.float32).tolist() == \
        torch.tensor([1.5, -2.7]).to(torch.bfloat16).float().tolist()
    with pytest.raises(TypeError, match="unsupported dtype"):
        x.to(dtype="float8")
    with pytest.raises(RuntimeError, match="cpu"):
        x.to(device="cuda")


def test_to_dtype_is_differentiable():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    y = x.to(dtype=rt.torch_float64())
    assert y.grad_fn.name == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.dtype == rt.torch_float32()
    assert rt.as_array(x.grad).tolist() == [2.0, 4.0]
    i = x.to(dtype=rt.torch_int64())
    assert i.grad_fn is None and not i.requires_grad


def test_clone_detach():
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.grad_fn.name == "CloneBackward0" and not np.shares_memory(c.data, x.data)
    d = x.detach()
    assert d.grad_fn is None and not d.requires_grad
    assert np.shares_memory(rt.as_array(d), rt.as_array(x))
    d.add_(1)  # shares data and the version counter, like PyTorch
    assert rt.as_array(x).tolist() == [2.0, 3.0] and x._version[0] == 1
    y = (x * 2).detach()
    assert y.is_leaf and y.grad_fn is None


def test_item():
    assert rt.torch_tensor(2.5).item() == 2.5
    assert isinstance(rt.torch_tensor(3).item(), int)
    assert rt.torch_tensor(True).item() is True
    assert rt.torch_tensor([[4.0]]).item() == 4.0
    assert rt.torch_ones(2, 3).sum().item() == 6.0
    with pytest.raises(RuntimeError, match="2 elements"):
        rt.torch_ones(2).item()


def test_numpy_and_as_array():
    x = rt.torch_tensor([1.0, 2.0])
    a = x.numpy()
    assert isinstance(a, np.ndarray) and np.shares_memory(a, rt.as_array(x))
    assert np.array_equal(rt.as_array(x), [1.0, 2.0]) and np.array_equal(x.as_array(), a)
    g = rt.torch_tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        g.numpy()
    assert g.detach().numpy().tolist() == [1.0]
    with pytest.raises(TypeError, match="tensor"):
        rt.as_array([1, 2])


def test_properties():
    x = rt.torch_zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and x.ndim == 3 and x.dim() == 3 and x.numel() == 24
    assert x.size(1) == 3 and x.size(-1) == 4 and x.size() == (2, 3, 4)
    assert x.dtype == rt.torch_float32() and x.device == "cpu"
    assert rt.is_torch_tensor(x) and not rt.is_torch_tensor(np.zeros(2))


def test_vander_gradient_by_finite_differences():
    # (PyTorch's own vander can't be differentiated: nothing to compare with)
    x = rt.torch_tensor([0.5, -1.5, 2.0], dtype="float64", requires_grad=True)
    for n, inc in ((None, False), (4, True), (2, False)):
        assert rt.autograd_gradcheck(lambda t: rt.torch_vander(t, n, inc), [x])
    assert rt.torch_vander(x, 3).grad_fn.name == "FlipBackward0"
    assert rt.torch_vander(x, 3, True).grad_fn.name == "CopySlices"
    with pytest.raises(RuntimeError, match="one-dimensional"):
        rt.torch_vander(rt.torch_ones(2, 2))
    with pytest.raises(RuntimeError, match="non-negative"):
        rt.torch_vander(x, -1)


def test_zeros_out_and_ones_out_write_into_out():
    out = rt.torch_ones(2)
    v = out._version
    assert rt.torch_zeros_out(out, 2) is out and out._version != v
    np.testing.assert_array_equal(out.data, [0, 0])
    rt.torch_ones_out(out, (2, 3))  # resized, as torch.ones(size, out=) does
    t = torch.ones(2)
    torch.ones((2, 3), out=t)
    assert_same(out, t)
    with pytest.raises(RuntimeError, match="leaf that requires grad"):
        rt.torch_zeros_out(rt.torch_ones(2, requires_grad=True), 2)


def test_empty_holds_zeros() -> None:
    # unspecified values; zeros (what R torch's torch_empty page shows) rather than
    # whatever memory NumPy hands out
    assert not rt.as_array(rt.torch_empty(3, 4)).any()
    assert not rt.as_array(rt.torch_empty_like(rt.torch_ones(2, dtype=rt.torch_int64()))).any()
