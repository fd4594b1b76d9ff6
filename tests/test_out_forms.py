"""The `torch_<name>_out(out, ...)` forms made from the registry
(rtorch_py/ops/out_forms.py): for every op's every sample, the out form writes
the plain result into `out` (resized, or in place when the shape fits) and
returns `out`; plus libtorch's rules checked against PyTorch's `out=`
(dtype casts, resizing, refusals under autograd)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import rtorch_py as rt
from op_cases import cases, materialize
from rtorch_py.ops.out_forms import out_name

OUT_CASES = [c for c in cases() if out_name(c.spec)]


def _call(case, fn, seed: int = 0):
    arrays, _, rebuild = materialize(case.sample, np.float64)
    args, kwargs = rebuild([rt.torch_tensor(a.copy()) for a in arrays])
    rt.torch_manual_seed(seed)  # (random ops: the same draw for both calls)
    return fn(args, kwargs)


def test_every_function_op_with_one_tensor_result_has_an_out_form() -> None:
    assert len(OUT_CASES) > 1000
    for name in ("torch_add_out", "torch_addr_out", "torch_zeros_out", "torch_ones_out",
                 "torch_upsample_nearest1d_out", "torch_upsample_nearest1d_backward_out"):
        assert callable(getattr(rt, name)), name
    # in-place ops and several-result ops have none
    assert not hasattr(rt, "torch_zero__out") and not hasattr(rt, "torch_sort_out")


@pytest.mark.parametrize("case", OUT_CASES, ids=[c.id for c in OUT_CASES])
def test_out_form_equals_the_plain_result(case) -> None:
    spec = case.spec
    out_fn = getattr(rt, out_name(spec))
    expected = _call(case, lambda a, k: spec.fn(*a, **k))
    if not isinstance(expected, rt.Tensor):  # (an `Any` op giving several results here)
        with pytest.raises(TypeError, match="not one tensor"):
            _call(case, lambda a, k: out_fn(rt.torch_empty(0), *a, **k))
        return
    # an empty out of the result's dtype: resized to the result
    out = rt.torch_empty(0, dtype=expected.dtype)
    got = _call(case, lambda a, k: out_fn(out, *a, **k))
    assert got is out and out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_array_equal(out.data, expected.data)
    assert not out.requires_grad
    # an out of the right shape: written in place (the same array, a new version)
    arr, version = out.data, tuple(out._version)
    arr[...] = 0
    assert _call(case, lambda a, k: out_fn(out, *a, **k)) is out
    assert out.data is arr and tuple(out._version) != version
    np.testing.assert_array_equal(out.data, expected.data)


def test_out_is_resized_with_libtorch_warning() -> None:
    x, y = rt.torch_tensor([1.0, 2.0, 3.0]), rt.torch_tensor([4.0, 5.0, 6.0])
    out = rt.torch_zeros(2, 2)
    with pytest.warns(UserWarning, match=r"was resized since it had shape \[2, 2\]"):
        rt.torch_add_out(out, x, y)
    t = torch.zeros(2, 2)
    with pytest.warns(UserWarning, match="was resized"):
        torch.add(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0, 6.0]), out=t)
    np.testing.assert_array_equal(out.data, t.numpy())
    with warnings.catch_warnings():  # an empty out, or a factory's: no warning
        warnings.simplefilter("error")
        rt.torch_add_out(rt.torch_empty(0), x, y)
        rt.torch_zeros_out(rt.torch_ones(5), 2, 3)


def test_out_dtype_casts_as_libtorch() -> None:
    # bool into float, int into float: cast; float into int: refused
    out = rt.torch_zeros(3)
    rt.torch_gt_out(out, rt.torch_tensor([1.0, 2.0, 3.0]), 1.5)
    t = torch.zeros(3)
    torch.gt(torch.tensor([1.0, 2.0, 3.0]), 1.5, out=t)
    np.testing.assert_array_equal(out.data, t.numpy())
    assert out.dtype == rt.torch_float32()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        rt.torch_abs_out(rt.torch_zeros(3, dtype=rt.torch_long()), rt.torch_ones(3))
    # factories and reductions with a dtype argument take out's
    o = rt.torch_zeros_out(rt.torch_empty(0, dtype=rt.torch_long()), 2, 2)
    assert o.dtype == rt.torch_long() and o.shape == (2, 2)
    s = rt.torch_sum_out(rt.torch_empty(0, dtype=rt.torch_float64()), rt.torch_ones(3))
    ts = torch.sum(torch.ones(3), 0, out=torch.empty(0, dtype=torch.float64))
    assert s.dtype == rt.torch_float64() and float(s.item()) == float(ts)


def test_out_form_refuses_autograd_but_not_under_no_grad() -> None:
    x = rt.torch_ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        rt.torch_exp_out(rt.torch_zeros(3), x)
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        torch.exp(torch.ones(3, requires_grad=True), out=torch.zeros(3))
    with pytest.raises(RuntimeError, match="leaf that requires grad"):
        rt.torch_exp_out(rt.torch_zeros(3, requires_grad=True), rt.torch_ones(3))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        rt.torch_exp_out(rt.torch_zeros(3, requires_grad=True) * 2, rt.torch_ones(3))
    with rt.with_no_grad():
        out = rt.torch_exp_out(rt.torch_zeros(3), x)
    np.testing.assert_allclose(out.data, np.exp(np.ones(3, np.float32)))
    assert out.grad_fn is None and not out.requires_grad


def test_out_by_name_and_grad_input_for_backward_ops() -> None:
    x = rt.torch_rand(2, 2, 3)
    out = rt.torch_empty(0)
    assert rt.torch_upsample_nearest1d_out(out=out, self=x, output_size=[6]) is out
    np.testing.assert_array_equal(out.data, rt.torch_upsample_nearest1d(x, [6]).data)
    g = rt.torch_rand(2, 2, 6)
    gi = rt.torch_zeros(2, 2, 3)
    assert rt.torch_upsample_nearest1d_backward_out(grad_input=gi, grad_output=g,
                                                     output_size=[6], input_size=[2, 2, 3]) is gi
    tg = torch.ops.aten.upsample_nearest1d_backward(torch.from_numpy(g.data), [6], [2, 2, 3])
    np.testing.assert_allclose(gi.data, tg.numpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="needs the tensor to write into"):
        rt.torch_add_out()
    with pytest.raises(TypeError, match="the tensor to write the result into"):
        rt.torch_add_out([1, 2], rt.torch_ones(2), rt.torch_ones(2))


def test_addr_out_as_pytorch() -> None:
    rng = np.random.default_rng(1)
    m, a, b = rng.random((2, 2)), rng.random(2), rng.random(2)
    out = rt.torch_zeros(2, 2, dtype=rt.torch_float64())
    rt.torch_addr_out(out, rt.torch_tensor(m), rt.torch_tensor(a), rt.torch_tensor(b),
                      beta=0.5, alpha=2.0)
    t = torch.zeros(2, 2, dtype=torch.float64)
    torch.addr(torch.from_numpy(m), torch.from_numpy(a), torch.from_numpy(b), beta=0.5,
               alpha=2.0, out=t)
    np.testing.assert_allclose(out.data, t.numpy(), rtol=1e-12)
