"""Dtypes (int8, uint8, int16, float16, complex64/128), the default dtype,
finfo/iinfo, generators and the random creators: against PyTorch where values
are deterministic, by distribution (moments, ranges, shapes, dtypes,
reproducibility with a seed) where they are random (NumPy's generator is not
libtorch's)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import assert_same, check_vs_torch

SMALL = [("int8", torch.int8), ("uint8", torch.uint8), ("int16", torch.int16),
         ("float16", torch.float16), ("complex64", torch.complex64),
         ("complex128", torch.complex128)]


@pytest.mark.parametrize("name,tdt", SMALL)
def test_conversion_and_element_size(name, tdt):
    x = rt.torch_tensor([1.5, -2.0, 3.0])
    t = torch.tensor([1.5, -2.0, 3.0])
    if name == "uint8":
        x, t = x.abs(), t.abs()
    y, ty = x.to(dtype=name), t.to(dtype=tdt)
    assert_same(y, ty)
    assert y.element_size() == ty.element_size()
    assert y.is_complex() == ty.is_complex()
    assert y.is_floating_point() == ty.is_floating_point()


@pytest.mark.parametrize("a,b", [("int8", "uint8"), ("int8", "int16"), ("uint8", "int16"),
                                 ("float16", "float32"), ("complex64", "float64"),
                                 ("uint8", "bool")])
def test_promotion_as_pytorch(a, b):
    x = rt.torch_tensor([1, 2, 3]).to(dtype=a)
    y = rt.torch_tensor([3, 1, 2]).to(dtype=b)
    tx = torch.tensor([1, 2, 3]).to(dtype=getattr(torch, a))
    ty = torch.tensor([3, 1, 2]).to(dtype=getattr(torch, b))
    assert_same(x + y, tx + ty)


def test_python_complex_numbers_follow_the_default_dtype():
    assert rt.torch_tensor([1j, 2]).dtype == rt.torch_cfloat()
    rt.torch_set_default_dtype(rt.torch_float64())
    try:
        assert rt.torch_tensor([1j]).dtype == rt.torch_cdouble()
        assert rt.torch_tensor([1.5]).dtype == rt.torch_float64()
        assert rt.torch_randn(2).dtype == rt.torch_float64()
        assert rt.torch_zeros(2).dtype == rt.torch_float64()
    finally:
        rt.torch_set_default_dtype(rt.torch_float32())
    assert rt.torch_get_default_dtype() == rt.torch_float32()
    with pytest.raises(TypeError, match="floating-point"):
        rt.torch_set_default_dtype(rt.torch_int64())


def test_complex_from_parts_and_back_against_pytorch():
    # (x$real / x$imag nodes: PyTorch's are views, SelectBackward0; ours copy)
    check_vs_torch(lambda T, a, b: T.complex(a, b).real * 2 + T.complex(a, b).imag,
                   np.array([1.0, 2.0]), np.array([3.0, -1.0]), check_names=False)
    check_vs_torch(lambda T, r, t: T.polar(r, t).real * 3 + T.polar(r, t).imag,
                   np.array([1.0, 2.0]), np.array([0.3, -1.0]), check_names=False)
    with pytest.raises(RuntimeError, match="same dtype"):
        rt.torch_complex(rt.torch_ones(2), rt.torch_ones(2, dtype="float64"))
    with pytest.raises(RuntimeError, match="non-complex"):
        rt.torch_ones(2).imag
    x = rt.torch_ones(2)
    assert x.real is x


@pytest.mark.parametrize("name,tdt", [("float32", torch.float32), ("float64", torch.float64),
                                      ("float16", torch.float16)])
def test_finfo_as_pytorch(name, tdt):
    f, tf = rt.torch_finfo(name), torch.finfo(tdt)
    for field in ("bits", "eps", "max", "min", "tiny"):
        assert f[field] == getattr(tf, field), field


@pytest.mark.parametrize("name", ["int8", "uint8", "int16", "int32", "int64"])
def test_iinfo_as_pytorch(name):
    i, ti = rt.torch_iinfo(name), torch.iinfo(getattr(torch, name))
    assert (i.bits, i.min, i.max) == (ti.bits, ti.min, ti.max)


def test_bfloat16_tensors_exist():  # (more in test_dtypes_devices.py)
    assert rt.torch_bfloat16().is_floating_point
    x = rt.torch_zeros(2, dtype=rt.torch_bfloat16())
    assert x.dtype == rt.torch_bfloat16() and x.element_size() == 2


def test_generators_are_reproducible_and_independent():
    g = rt.torch_generator().manual_seed(7)
    a = rt.torch_randn(5, generator=g)
    assert g.initial_seed() == 7
    g.manual_seed(7)
    np.testing.assert_array_equal(rt.torch_randn(5, generator=g).data, a.data)
    rt.torch_manual_seed(7)
    b = rt.torch_randn(5)
    rt.torch_manual_seed(7)
    np.testing.assert_array_equal(rt.torch_randn(5).data, b.data)
    assert rt.torch_initial_seed() == 7
    with pytest.raises(TypeError, match="torch_generator"):
        rt.torch_rand(2, generator=3)


def test_random_creators_by_distribution():
    rt.torch_manual_seed(1)
    n = rt.torch_normal(2.0, 0.5, size=(20000,))
    assert abs(n.data.mean() - 2) < 0.02 and abs(n.data.std() - 0.5) < 0.02
    m = rt.torch_normal(rt.torch_tensor([0.0, 10.0]), rt.torch_tensor([1.0, 0.0]))
    assert m.shape == (2,) and m.data[1] == 10
    p = rt.torch_randperm(50)
    assert sorted(p.data.tolist()) == list(range(50)) and p.dtype == rt.torch_long()
    b = rt.torch_bernoulli(rt.torch_full((20000,), 0.3))
    assert set(np.unique(b.data)) <= {0.0, 1.0} and abs(b.data.mean() - 0.3) < 0.02
    po = rt.torch_poisson(rt.torch_full((20000,), 4.0))
    assert abs(po.data.mean() - 4) < 0.1 and po.dtype == rt.torch_float()
    mu = rt.torch_multinomial(rt.torch_tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]]), 2, True)
    assert mu.shape == (2, 2) and (mu.data[0] == 1).all() and 1 not in mu.data[1]
    with pytest.raises(RuntimeError, match="not enough"):
        rt.torch_multinomial(rt.torch_tensor([0.0, 1.0, 0.0]), 2)
    with pytest.raises(RuntimeError, match="without replacement"):
        rt.torch_multinomial(rt.torch_tensor([0.5, 0.5]), 3)
    ri = rt.torch_randint_like(rt.torch_zeros(3, 4), 5, 8)
    assert ri.shape == (3, 4) and ri.data.min() >= 5 and ri.data.max() < 8
    c = rt.torch_randn(1000, dtype="complex64")
    assert c.dtype == rt.torch_cfloat() and abs(np.var(c.data) - 1) < 0.15


@pytest.mark.parametrize("fill,args,check", [
    ("uniform_", (-2.0, 3.0), lambda d: d.min() >= -2 and d.max() < 3 and abs(d.mean() - .5) < .1),
    ("normal_", (1.0, 2.0), lambda d: abs(d.mean() - 1) < .1 and abs(d.std() - 2) < .1),
    ("log_normal_", (0.0, 0.25), lambda d: d.min() > 0 and abs(np.log(d).mean()) < .02),
    ("exponential_", (2.0,), lambda d: d.min() >= 0 and abs(d.mean() - .5) < .03),
    ("geometric_", (0.5,), lambda d: d.min() >= 1 and abs(d.mean() - 2) < .1),
    ("cauchy_", (1.0, 0.5), lambda d: abs(np.median(d) - 1) < .05),
    ("bernoulli_", (0.25,), lambda d: set(np.unique(d)) <= {0, 1} and abs(d.mean() - .25) < .02),
    ("random_", (3, 7), lambda d: d.min() == 3 and d.max() == 6),
])
def test_inplace_fills(fill, args, check):
    x = rt.torch_empty(20000)
    v = x._version
    out = getattr(x, fill)(*args)
    assert out is x and x._version != v and check(x.data.astype(np.float64))
    getattr(torch.empty(3), fill)(*args)  # the same call is valid in PyTorch


def test_inplace_fill_errors():
    w = rt.torch_ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        w.normal_()
    with rt.with_no_grad():
        w.normal_()  # as nn_init does
    with pytest.raises(RuntimeError, match="floating point"):
        rt.torch_ones(2, dtype="int64").uniform_()
    with pytest.raises(RuntimeError, match="from=2"):
        rt.torch_ones(2).uniform_(2.0, 1.0)


def test_deterministic_creators_against_pytorch():
    assert_same(rt.torch_logspace(0, 2, 5), torch.logspace(0, 2, 5))
    assert_same(rt.torch_logspace(0, 3, 4, base=2.0), torch.logspace(0, 3, 4, base=2.0))
    e = rt.torch_empty_strided((2, 3), (1, 2))
    assert e.data.strides == torch.empty_strided((2, 3), (1, 2)).numpy().strides
    x, tx = rt.torch_ones(2, dtype="int32"), torch.ones(2, dtype=torch.int32)
    e, te = x.new_empty_strided((3, 2), (1, 3)), tx.new_empty_strided((3, 2), (1, 3))
    assert (e.shape, e.data.strides, str(e.dtype)) == \
        (tuple(te.shape), te.numpy().strides, "torch_Int")
    assert x.new_empty_strided((2,), (1,), dtype="float64").dtype == rt.torch_float64()


@pytest.mark.parametrize("a,b", [
    ("i32", 1.0), ("i32", "i64"), (1.0, "i64"), ("f64_0d", "f32"), (True, 2), ("u8", "i8"),
    ("i16", 1), ("b", "u8"), ("f32", 1j), ("f16", "i64"),
])
def test_result_type_as_pytorch(a, b):
    def make(v, lib):
        if not isinstance(v, str):
            return v
        dt = {"i32": "int32", "i64": "int64", "f32": "float32", "f64_0d": "float64",
              "u8": "uint8", "i8": "int8", "i16": "int16", "b": "bool", "f16": "float16"}[v]
        shape = () if v.endswith("0d") else (2,)
        return (torch.zeros(shape, dtype=getattr(torch, dt)) if lib is torch else
                rt.torch_zeros(shape, dtype=dt))
    got = rt.torch_result_type(make(a, rt), make(b, rt))
    assert got.name == str(torch.result_type(make(a, torch), make(b, torch))).split(".")[1]


def test_windows_refuse_bad_lengths():
    with pytest.raises(ValueError, match="window_length"):
        rt.torch_hann_window(None)
    with pytest.raises(RuntimeError, match="non-negative"):
        rt.torch_hamming_window(-1)
    with pytest.raises(RuntimeError, match="floating point"):
        rt.torch_blackman_window(4, dtype="int64")


def test_normal_refuses_size_or_dtype_with_tensor_parameters():
    with pytest.raises(ValueError, match="size and dtype"):
        rt.torch_normal(rt.torch_zeros(2), 1.0, size=(2, 2))
    with pytest.raises(ValueError, match="size and dtype"):
        rt.torch_normal(1.0, rt.torch_ones(2), dtype="float64")


def test_scalars():
    assert rt.is_torch_scalar(rt.torch_scalar(1.5)) and not rt.is_torch_scalar(1.5)
    with pytest.raises(TypeError, match="single number"):
        rt.torch_scalar([1, 2])


def test_result_type_every_pair_as_pytorch():
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
             "float64", "complex64", "complex128"]
    numbers = [True, 3, 2.5, 1j]
    for a in names:
        for b in names + numbers:
            for sa, sb in (((2,), (2,)), ((2,), ()), ((), (2,)), ((), ())):
                ra = rt.torch_zeros(sa, dtype=a)
                ta = torch.zeros(sa, dtype=getattr(torch, a))
                if isinstance(b, str):
                    rb, tb = rt.torch_zeros(sb, dtype=b), torch.zeros(sb, dtype=getattr(torch, b))
                else:
                    rb = tb = b
                want = str(torch.result_type(ta, tb)).split(".")[1]
                if want == "complex32":  # (ComplexHalf: NumPy has none; complex64 here)
                    want = "complex64"
                assert rt.torch_result_type(ra, rb).name == want, (a, sa, b, sb)
                assert rt.torch_result_type(rb, ra).name == want, (b, sb, a, sa)


def test_full_takes_its_dtype_from_the_fill_value():
    for v in (True, 3, 2.5, 1 + 2j):
        assert_same(rt.torch_full((2,), v), torch.full((2,), v))
