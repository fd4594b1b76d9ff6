"""complex32 (torch_chalf(), libtorch's ComplexHalf): float16 parts after every op,
the ops libtorch's CPU kernels run on it, and the others refused with libtorch's
message, each against PyTorch 2.13 (rtorch_py/ops/complex_half.py)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import rtorch_py as rt

X = np.array([1 + 2j, 3 - 1j, 0.1 + 0.3j, -2.7 + 1e-3j])
Y = np.array([1 + 1j, 2 + 0j, 1j, 0.5 - 0.25j])


def _pair():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ("ComplexHalf support is experimental")
        return ((rt.torch_tensor(X).chalf(), rt.torch_tensor(Y, dtype=rt.torch_chalf())),
                (torch.tensor(X).chalf(), torch.tensor(Y).to(torch.chalf)))


def _idx(L):
    return rt.torch_tensor(np.array([0, 2])) if L is rt else torch.tensor([0, 2])


def _mask(L):
    m = np.array([True, False, True, False])
    return rt.torch_tensor(m) if L is rt else torch.tensor(m)


# ops libtorch runs on ComplexHalf: (L, x, y) -> result, L the library
SUPPORTED = {
    "add": lambda L, x, y: x + y, "sub": lambda L, x, y: x - y, "mul": lambda L, x, y: x * y,
    "add_number": lambda L, x, y: x + 1, "mul_number": lambda L, x, y: x * 2.5,
    "neg": lambda L, x, y: -x, "conj": lambda L, x, y: x.conj_physical(),
    "abs": lambda L, x, y: x.abs(), "sgn": lambda L, x, y: x.sgn(),
    "real": lambda L, x, y: x.real, "imag": lambda L, x, y: x.imag,
    "eq": lambda L, x, y: x == y, "ne": lambda L, x, y: x != y,
    "isnan": lambda L, x, y: x.isnan(), "isfinite": lambda L, x, y: x.isfinite(),
    "clone": lambda L, x, y: x.clone(), "reshape": lambda L, x, y: x.reshape(2, 2),
    "t": lambda L, x, y: x.reshape(2, 2).t().contiguous(), "index": lambda L, x, y: x[1:3],
    "expand": lambda L, x, y: x[:1].expand(3), "roll": lambda L, x, y: x.roll(1),
    "repeat": lambda L, x, y: x.repeat(2), "tril": lambda L, x, y: x.reshape(2, 2).tril(),
    "diag": lambda L, x, y: x.diag(), "index_select": lambda L, x, y: x.index_select(0, _idx(L)),
    "masked_fill": lambda L, x, y: x.masked_fill(_mask(L), 0),
    "addcmul": lambda L, x, y: x.addcmul(x, y), "fill_": lambda L, x, y: x.clone().fill_(0.3),
    "add_": lambda L, x, y: x.clone().add_(y), "copy_": lambda L, x, y: x.clone().copy_(y),
    "cat": lambda L, x, y: (rt.torch_cat if L is rt else torch.cat)([x, y]),
    "stack": lambda L, x, y: (rt.torch_stack if L is rt else torch.stack)([x, y]),
    "where": lambda L, x, y: (rt.torch_where if L is rt else torch.where)(_mask(L), x, y),
    "view_as_real": lambda L, x, y: (rt.torch_view_as_real if L is rt else
                                     torch.view_as_real)(x),
    "to_cfloat": lambda L, x, y: x.to(dtype=rt.torch_cfloat() if L is rt else torch.cfloat),
    "with_cfloat": lambda L, x, y: x + y.to(dtype=rt.torch_cfloat() if L is rt else
                                            torch.cfloat),
    "with_float": lambda L, x, y: x * y.abs().to(dtype=rt.torch_float() if L is rt else
                                                 torch.float),
    "zeros": lambda L, x, y: (rt.torch_zeros(2, dtype=rt.torch_chalf()) if L is rt else
                              torch.zeros(2, dtype=torch.chalf)),
    "full": lambda L, x, y: (rt.torch_full((2,), 1.5, dtype=rt.torch_chalf()) if L is rt else
                             torch.full((2,), 1.5, dtype=torch.chalf)),
    "nonzero": lambda L, x, y: x.nonzero(),
}

REFUSED = {
    "div": lambda x, y: x / y, "exp": lambda x, y: x.exp(), "sqrt": lambda x, y: x.sqrt(),
    "sin": lambda x, y: x.sin(), "log": lambda x, y: x.log(), "sum": lambda x, y: x.sum(),
    "mean": lambda x, y: x.mean(), "prod": lambda x, y: x.prod(),
    "cumsum": lambda x, y: x.cumsum(0), "matmul": lambda x, y: x.reshape(2, 2).matmul(
        y.reshape(2, 2)), "dot": lambda x, y: x.dot(y), "flip": lambda x, y: x.flip(0),
    "pow": lambda x, y: x.pow(2), "reciprocal": lambda x, y: x.reciprocal(),
    "sigmoid": lambda x, y: x.sigmoid(), "tanh": lambda x, y: x.tanh(),
    "rsqrt": lambda x, y: x.rsqrt(), "log1p": lambda x, y: x.log1p(),
    "angle": lambda x, y: x.angle(),
}


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.to(torch.cfloat).numpy() if t.dtype == torch.chalf else t.numpy()
    return np.asarray(t.data)


@pytest.mark.parametrize("name", sorted(SUPPORTED))
def test_complex32_op_matches_pytorch(name):
    (x, y), (tx, ty) = _pair()
    fn = SUPPORTED[name]
    got = fn(rt, x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(torch, tx, ty)
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    np.testing.assert_array_equal(_np(got), _np(want))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_complex32_op_refused_as_pytorch(name):
    (x, y), (tx, ty) = _pair()
    with pytest.raises((NotImplementedError, RuntimeError)) as want:
        REFUSED[name](tx, ty)
    with pytest.raises(type(want.value)) as got:
        REFUSED[name](x, y)
    assert str(got.value) == str(want.value).splitlines()[0]


def test_complex32_dtype_prints_and_sizes_as_libtorch():
    (x, _), _ = _pair()
    assert repr(rt.torch_chalf()) == "torch_ComplexHalf" and x.element_size() == 4
    assert rt.torch_cfloat32() is rt.torch_chalf()  # (R torch's torch_cfloat32() is chalf)
    assert str(x).splitlines()[-1] == "[ CPUComplexHalfType{4} ]"
    assert x.is_complex() and not x.is_floating_point()


def test_complex_abs_gradient_is_pytorchs():
    """abs' derivative of a complex tensor is g x / |x| (the complex64 case, and the
    complex32 one, whose derivatives run on its complex64 values: the leaf's gradient
    is complex64 here, complex32 in PyTorch, equal to float16 precision)."""
    v = np.array([1 + 2j, 3 - 1j, 0j])
    for rt_dtype, t_dtype in ((rt.torch_cfloat(), torch.cfloat), (rt.torch_chalf(), torch.chalf)):
        x = rt.torch_tensor(v, dtype=rt_dtype, requires_grad=True)
        x.abs().sum().backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = torch.tensor(v).to(t_dtype).requires_grad_()
            t.abs().sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad.data), t.grad.to(torch.cfloat).numpy(),
                                   rtol=1e-3)
