"""Custom functions: R torch's autograd_function rules and the class style."""
import numpy as np
import pytest
import torch

import rtorch_py as rt


def leaf(*values):
    return rt.torch_tensor(np.array(values, dtype=np.float64), requires_grad=True)


def scale_fn():
    def fwd(ctx, x, factor=2.0, offset=None):
        ctx.save_for_backward(factor=factor)
        out = x * factor
        return out if offset is None else out + offset

    def bwd(ctx, g):
        return {"x": g * ctx.saved_variables.factor, "offset": g}

    return rt.autograd_function(fwd, bwd)


# -- arguments ----------------------------------------------------------------------

def test_defaults_keywords_and_positional_arguments():
    f = scale_fn()
    x = leaf(1.0, 2.0)
    np.testing.assert_allclose(f(x).detach().numpy(), [2.0, 4.0])
    np.testing.assert_allclose(f(x, 3.0).detach().numpy(), [3.0, 6.0])
    np.testing.assert_allclose(f(x, factor=0.5).detach().numpy(), [0.5, 1.0])
    off = leaf(10.0, 20.0)
    y = f(factor=1.0, offset=off, x=x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(off.grad.numpy(), [1.0, 1.0])


def test_missing_argument_is_a_clear_error():
    f = scale_fn()
    with pytest.raises(TypeError, match="missing a required argument: 'x'"):
        f(factor=2.0)


def test_tensor_arguments_reach_forward_detached_and_only_direct_ones_tracked():
    seen = {}

    def fwd(ctx, x, extra):
        seen["x_requires_grad"] = x.requires_grad
        seen["x_grad_fn"] = x.grad_fn
        seen["list_item_requires_grad"] = extra[0].requires_grad
        return x * extra[0]

    def bwd(ctx, g):
        seen["needs"] = dict(ctx.needs_input_grad.items())
        return {"x": g}

    f = rt.autograd_function(fwd, bwd)
    x = leaf(1.0) * 1  # non-leaf with history
    w = leaf(3.0)
    y = f(x, [w])
    y.backward()
    assert seen["x_requires_grad"] is False and seen["x_grad_fn"] is None
    # a tensor inside a list is not detached and not tracked
    assert seen["list_item_requires_grad"] is True
    assert seen["needs"] == {"x": True, "extra": False}
    assert w.grad is None


def test_gradients_for_inputs_that_need_none_are_ignored():
    def fwd(ctx, a, b):
        return a * b

    def bwd(ctx, g):
        return {"b": g * 100, "a": g * 2}  # any order; b needs no grad

    f = rt.autograd_function(fwd, bwd)
    a, b = leaf(1.0), rt.torch_tensor([5.0], dtype=rt.torch_float64())
    f(a, b).backward()
    assert a.grad.item() == 2.0 and b.grad is None


def test_no_node_when_nothing_requires_grad_or_under_no_grad():
    calls = []

    def fwd(ctx, x):
        return x.exp()

    def bwd(ctx, g):
        calls.append(1)
        return {"x": g}

    f = rt.autograd_function(fwd, bwd)
    assert f(rt.torch_tensor([1.0])).grad_fn is None
    with rt.with_no_grad():
        assert f(leaf(1.0)).grad_fn is None
    assert f(leaf(1.0)).grad_fn.name == rt.function.R_NODE_NAME


# -- save_for_backward / saved_variables ----------------------------------------------------

def test_saved_variables_keep_order_names_and_plain_values():
    got = {}

    def fwd(ctx, x):
        ctx.save_for_backward(x, "label", scale=2, t=x * 3)
        return x * 1

    def bwd(ctx, g):
        s = ctx.saved_variables
        got["names"] = s.names()
        got["values"] = [s[1], s.scale]
        got["t"] = s.t.numpy().tolist()
        got["first_is_input"] = s[0].detach().numpy().tolist()
        return {"x": g}

    f = rt.autograd_function(fwd, bwd)
    f(leaf(1.0, 2.0)).sum().backward()
    assert got == {"names": ["", "", "scale", "t"], "values": ["label", 2],
                   "t": [3.0, 6.0], "first_is_input": [1.0, 2.0]}


def test_saved_variables_are_the_named_list_of_what_was_saved():
    # repeated, reserved ("names"), private and empty names: saved_variables is
    # built without NamedList's constructor, and must be the same named list
    got = {}
    names = ["a", "", "a", "names", "_p", "b"]

    def fwd(ctx, x):
        ctx.save_named(names, [x, 1, 2, 3, 4, x * 2])
        return x * 1

    def bwd(ctx, g):
        s = ctx.saved_variables
        got["s"] = s
        return {"x": g}

    f = rt.autograd_function(fwd, bwd)
    f(leaf(1.0)).backward()
    s = got["s"]
    want = rt.NamedList(names, [s[0], 1, 2, 3, 4, s[5]])
    assert type(s) is rt.NamedList and s.names() == want.names()
    assert s.values() == want.values() and vars(s) == vars(want)
    assert s.a is s[0] and s["a"] is s[0] and s.b is s[5] and callable(s.names)
    with pytest.raises(AttributeError, match="read-only"):
        s.c = 1


@pytest.mark.parametrize("create_graph", [False, True])
def test_gradient_of_another_dtype_and_a_broadcast_shape_is_conformed(create_graph):
    # float32 (4, 2) for a float64 input of shape (2,): summed, then cast
    f = rt.autograd_function(
        lambda ctx, x: x * 2,
        lambda ctx, g: {"x": rt.torch_ones(4, 2, dtype=rt.torch_float32()) * 0.75})
    x = leaf(1.0, 2.0)
    (gx,) = rt.autograd_grad(f(x).sum(), x, create_graph=create_graph)
    assert gx.dtype == rt.torch_float64()
    np.testing.assert_array_equal(gx.numpy(), [3.0, 3.0])


def test_saved_input_modified_in_place_is_caught():
    def fwd(ctx, x):
        ctx.save_for_backward(x=x)
        return x * x

    def bwd(ctx, g):
        return {"x": 2 * g * ctx.saved_variables.x}

    f = rt.autograd_function(fwd, bwd)
    base = leaf(1.0, 2.0)
    x = base * 1
    y = f(x)
    with rt.with_no_grad():
        x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_saved_tensors_freed_then_second_backward_fails():
    def fwd(ctx, x):
        ctx.save_for_backward(x=x)
        return x * x

    def bwd(ctx, g):
        return {"x": 2 * g * ctx.saved_variables.x}

    f = rt.autograd_function(fwd, bwd)
    x = leaf(3.0)
    y = f(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 12.0
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()
    assert x.grad.item() == 12.0


# -- outputs ---------------------------------------------------------------------------------

def test_list_outputs_each_get_their_gradient_and_missing_ones_are_zero():
    got = {}

    def fwd(ctx, x):
        return [x * 2, x * 3]

    def bwd(ctx, g1, g2):
        got["g2"] = g2.numpy().tolist()
        return {"x": g1 * 2 + g2 * 3}

    f = rt.autograd_function(fwd, bwd)
    x = leaf(1.0, 1.0)
    a, b = f(x)
    assert a.grad_fn is b.grad_fn and (a._output_nr, b._output_nr) == (0, 1)
    a.sum().backward()
    assert got["g2"] == [0.0, 0.0]  # unused output: zeros, as R torch/PyTorch materialize
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_mark_non_differentiable():
    def fwd(ctx, x):
        values = x * 1
        idx = rt.torch_tensor(np.argsort(x.numpy()).astype(np.float64))
        ctx.mark_non_differentiable(idx)
        return [values, idx]

    def bwd(ctx, g, g_idx):
        assert float(g_idx.abs().sum()) == 0.0  # non-differentiable outputs get zeros
        return {"x": g}

    f = rt.autograd_function(fwd, bwd)
    x = leaf(3.0, 1.0, 2.0)
    values, idx = f(x)
    assert not idx.requires_grad and idx.grad_fn is None
    (values.sum() + idx.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0, 1.0])


def test_mark_dirty_in_place_forward():
    def fwd(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    def bwd(ctx, g):
        return {"x": g * 2}

    f = rt.autograd_function(fwd, bwd)
    a = leaf(1.0, 2.0)
    x = a * 1
    v0 = x._version[0]
    y = f(x)
    assert y is x and x._version[0] > v0
    assert x.grad_fn.name == rt.function.R_NODE_NAME
    np.testing.assert_allclose(x.detach().numpy(), [2.0, 4.0])
    y.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])
    # PyTorch agrees on the result
    ta = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    tx = ta * 1
    tx.mul_(2)
    tx.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())


def test_mark_dirty_on_leaf_requiring_grad_fails():
    def fwd(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    f = rt.autograd_function(fwd, lambda ctx, g: {"x": g})
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        f(x)


def test_mark_dirty_on_non_input_fails():
    def fwd(ctx, x):
        other = x * 2
        ctx.mark_dirty(other)
        return other

    f = rt.autograd_function(fwd, lambda ctx, g: {"x": g})
    with pytest.raises(RuntimeError, match="not an input"):
        f(leaf(1.0) * 1)


def test_returning_an_input_unchanged_gives_a_new_tensor():
    f = rt.autograd_function(lambda ctx, x: x, lambda ctx, g: {"x": g * 5})
    x = leaf(1.0)
    y = f(x)
    assert y is not x and y.grad_fn is not None
    y.backward()
    assert x.grad.item() == 5.0


# -- errors: named function and argument, nothing half-built ----------------------------------

def test_unknown_gradient_name():
    f = rt.autograd_function(lambda ctx, x: x * 2, lambda ctx, g: {"y": g})
    x = leaf(1.0)
    with pytest.raises(RuntimeError, match="named 'y', which is not an argument of forward"):
        f(x).backward()
    assert x.grad is None


def test_wrong_gradient_shape_names_the_argument():
    f = rt.autograd_function(lambda ctx, x: x * 2, lambda ctx, g: {"x": rt.torch_ones(3, 3)})
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match=r"shape \[3, 3\] for 'x', whose shape is \[2\]"):
        f(x).sum().backward()


def test_broadcastable_gradient_is_summed_to_input_shape():
    f = rt.autograd_function(
        lambda ctx, x: x * 2,
        lambda ctx, g: {"x": rt.torch_ones(4, 2, dtype=rt.torch_float64())})
    x = leaf(1.0, 2.0)
    f(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])


def test_non_tensor_gradient():
    f = rt.autograd_function(lambda ctx, x: x * 2, lambda ctx, g: {"x": 3.0})
    with pytest.raises(TypeError, match=r"returned a number \(float\) as the gradient for 'x'"):
        f(leaf(1.0)).backward()


def test_integer_gradient_dtype():
    f = rt.autograd_function(lambda ctx, x: x * 2,
                             lambda ctx, g: {"x": rt.torch_tensor([1])})
    with pytest.raises(TypeError, match="dtype torch_Long for 'x'"):
        f(leaf(1.0)).backward()


def test_forward_returning_non_tensor():
    f = rt.autograd_function(lambda ctx, x: 3.0, lambda ctx, g: {"x": g})
    with pytest.raises(TypeError, match="forward must return a tensor or a list of tensors"):
        f(leaf(1.0))
    g = rt.autograd_function(lambda ctx, x: [x * 1, "a"], lambda ctx, g: {"x": g})
    with pytest.raises(TypeError, match=r"holds a string \(str\)"):
        g(leaf(1.0))


def test_exception_in_forward_propagates_and_builds_nothing():
    def fwd(ctx, x):
        ctx.save_for_backward(x=x)
        raise ValueError("bad input in forward")

    f = rt.autograd_function(fwd, lambda ctx, g: {"x": g})
    x = leaf(1.0)
    y0 = x * 2
    with pytest.raises(ValueError, match="bad input in forward"):
        f(x)
    y0.backward()
    assert x.grad.item() == 2.0


def test_exception_in_backward_propagates_and_grads_stay_intact():
    def bwd(ctx, g):
        raise ValueError("bad backward")

    f = rt.autograd_function(lambda ctx, x: x * 2, bwd)
    x = leaf(1.0)
    (x * 3).backward()
    with pytest.raises(ValueError, match="bad backward"):
        (f(x) + x).backward()
    assert x.grad.item() == 3.0
    (x * 1).backward()
    assert x.grad.item() == 4.0


def test_class_style_wrong_count():
    class Two(rt.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return (g,)

    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 2, got 1\)"):
        Two.apply(leaf(1.0), leaf(2.0)).backward()


def test_class_style_with_non_tensor_argument_and_none_gradient():
    class Scale(rt.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = leaf(1.0, 2.0)
    Scale.apply(x, 4.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])


def test_gradcheck_of_custom_function_passes_and_catches_a_wrong_backward():
    def fwd(ctx, x, w):
        ctx.save_for_backward(x=x, w=w)
        return (x * w).tanh()

    def good(ctx, g):
        s = ctx.saved_variables
        t = (s.x * s.w).tanh()
        d = g * (1 - t * t)
        return {"x": d * s.w, "w": d * s.x}

    def bad(ctx, g):
        s = ctx.saved_variables
        return {"x": g * s.w, "w": g * s.x}  # forgot tanh'

    x, w = leaf(0.3, -0.2, 0.8), leaf(1.5, 0.7, -0.4)
    assert rt.autograd_gradcheck(rt.autograd_function(fwd, good), [x, w])
    with pytest.raises(rt.GradcheckError, match="with respect to input 0"):
        rt.autograd_gradcheck(rt.autograd_function(fwd, bad), [x, w])
    assert rt.autograd_gradcheck(rt.autograd_function(fwd, bad), [x, w],
                                 raise_exception=False) is False
