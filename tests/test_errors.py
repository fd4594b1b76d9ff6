"""The error catalogue (docs/errors.md): one test per entry.

Each test checks the message (regular expressions over its key words) and
that the engine is intact afterwards: a leaf that already holds an accumulated
gradient keeps it, grad mode is on, anomaly mode is off, and a following
forward/backward works and adds the right amount.
"""
from __future__ import annotations

import re
import warnings
import threading
from contextlib import contextmanager

import numpy as np
import pytest

import rtorch_py as rt
from rtorch_py import distributions, engine


# --------------------------------------------------------------------------
# helpers


class State:
    """A parameter `w` with a gradient accumulated before the error."""

    def __init__(self) -> None:
        self.w = rt.torch_tensor([1.0, 2.0, 3.0], requires_grad=True)
        (self.w * self.w).sum().backward()          # w.grad = 2 w
        self.data = self.w.data.copy()
        self.before = self.w.grad.data.copy()
        np.testing.assert_array_equal(self.before, [2.0, 4.0, 6.0])

    def reset(self) -> None:
        """Put back the gradient accumulated before the error (after a test used w)."""
        self.w.grad = rt.torch_tensor(self.before.copy())

    def check(self) -> None:
        assert rt.is_grad_enabled(), "grad mode was left off"
        assert not engine.is_anomaly_enabled(), "anomaly mode was left on"
        np.testing.assert_array_equal(self.w.data, self.data)
        assert self.w.grad_fn is None and self.w.requires_grad
        np.testing.assert_array_equal(self.w.grad.data, self.before,
                                      err_msg="the accumulated gradient changed")
        # the same parameter keeps working ...
        (self.w * 3.0).sum().backward()
        np.testing.assert_allclose(self.w.grad.data, self.before + 3.0)
        # ... and so does a fresh graph, with a custom function in it
        x = rt.torch_tensor([0.5, -1.0], dtype=rt.torch_float64(), requires_grad=True)
        sq = rt.autograd_function(
            forward=lambda ctx, a: (ctx.save_for_backward(a=a), a * a)[1],
            backward=lambda ctx, g: {"a": 2 * ctx.saved_variables["a"] * g})
        y = (x.exp() * x).sum() + sq(x).sum()
        (g,) = rt.autograd_grad(y, x)
        np.testing.assert_allclose(g.data, np.exp(x.data) * (1 + x.data) + 2 * x.data)


@pytest.fixture
def state() -> State:
    return State()


@contextmanager
def fails(exc, *patterns: str):
    """pytest.raises plus: every regex in `patterns` occurs in the message."""
    with pytest.raises(exc) as info:
        yield info
    msg = str(info.value)
    for p in patterns:
        assert re.search(p, msg, re.S | re.I), f"{p!r} not found in message:\n{msg}"


def notes(info) -> str:
    return "\n".join(getattr(info.value, "__notes__", []))


def ones(*shape, dtype=None, rg=False):
    return rt.torch_ones(*shape, dtype=dtype, requires_grad=rg)


# --------------------------------------------------------------------------
# E01-E03 making tensors


@pytest.mark.parametrize("data, patterns", [
    ("abc", [r"torch_tensor\(\)", r"\bstr\b", r"numbers"]),
    (None, [r"torch_tensor\(\)", r"NoneType", r"numbers"]),
    ({"a": 1}, [r"torch_tensor\(\)", r"dict"]),
    ([1, "a"], [r"\bstr\b", r"data\[1\]", r"number"]),
    ([[1.0, 2.0], [3.0, "x"]], [r"\bstr\b", r"data\[1\]\[1\]"]),
    ([print], [r"builtin_function_or_method|function", r"data\[0\]"]),
    ([lambda x: x], [r"function", r"data\[0\]"]),
    (np.array(["a", "b"]), [r"NumPy array", r"<U1", r"numbers"]),
    (np.array([1, None], dtype=object), [r"NumPy array", r"object"]),
], ids=["str", "None", "dict", "str-in-list", "nested-str", "builtin", "lambda",
        "np-str", "np-object"])
def test_e01_non_numeric_data(state, data, patterns):
    with fails(TypeError, *patterns):
        rt.torch_tensor(data)
    state.check()


def test_e02_ragged_list_is_an_error(state):
    with fails(ValueError, r"torch_tensor\(\)", r"ragged", r"same length"):
        rt.torch_tensor([[1, 2], [3]])
    with fails(ValueError, r"ragged"):
        rt.torch_tensor([[[1.0, 2.0]], [[3.0]]])
    state.check()


def test_e02_ragged_list_says_expected_and_got(state):
    with fails(ValueError, r"ragged", r"expected .*length 2", r"got .*1", r"data\[1\]|dim 1"):
        rt.torch_tensor([[1, 2], [3]])
    state.check()


@pytest.mark.parametrize("make, got", [
    (lambda: rt.torch_tensor([1, 2], requires_grad=True), "torch_Long"),
    (lambda: rt.torch_tensor([True], requires_grad=True), "torch_Bool"),
    (lambda: rt.torch_tensor([1.0], dtype=rt.torch_long(), requires_grad=True), "torch_Long"),
    (lambda: rt.torch_zeros(2, dtype=rt.torch_int(), requires_grad=True), "torch_Int"),
    (lambda: rt.torch_tensor([1, 2]).requires_grad_(), "torch_Long"),
    (lambda: setattr(rt.torch_tensor([True]), "requires_grad", True), "torch_Bool"),
], ids=["int-list", "bool", "dtype-long", "zeros-int", "requires_grad_", "setter"])
def test_e03_requires_grad_on_non_float(state, make, got):
    with fails(RuntimeError, r"floating point", r"require gradients", re.escape(got),
               r"torch_float\(\)"):
        make()
    state.check()


# --------------------------------------------------------------------------
# E04-E11 shapes, dims, indices


def test_e04_mm_shapes(state):
    with fails(RuntimeError, r"2x3 and 4x5", r"cannot be multiplied", r"columns .* rows"):
        (state.w.unsqueeze(0).expand(2, 3) * 1).mm(ones(4, 5))
    with fails(RuntimeError, r"mm", r"2-d", r"1-d \[3\]"):
        ones(2, 3).mm(ones(3))
    state.check()


def test_e05_matmul_shapes(state):
    with fails(RuntimeError, r"matmul", r"\[2, 3\] and \[4, 5\]", r"last dim"):
        rt.torch_randn(2, 3).matmul(rt.torch_randn(4, 5))
    with fails(RuntimeError, r"matmul", r"\[2, 2, 3\] and \[3, 2, 4\]"):
        rt.torch_randn(2, 2, 3).matmul(rt.torch_randn(3, 2, 4))
    with fails(RuntimeError, r"matmul", r"\[3\]"):
        state.w.matmul(ones(4))
    state.check()


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "gt", "where"])
def test_e06_broadcasting(state, op):
    a = state.w * 1                      # shape [3], part of a live graph
    b = ones(4, 5)
    with fails(RuntimeError, r"\[3\] and \[4, 5\]|\[4, 5\] and \[3\]", r"broadcast"):
        if op == "where":
            rt.torch_where(a > 0, a, b)
        else:
            getattr(rt, "torch_" + op)(a, b)
    a.sum().backward()                   # the graph built before the error still works
    np.testing.assert_allclose(state.w.grad.data, state.before + 1)
    state.reset()
    state.check()


def test_e07_cat_sizes(state):
    with fails(RuntimeError, r"Sizes of tensors must match except in dimension 0",
               r"Expected size 3 but got size 5 for tensor number 1 in the list"):
        rt.torch_cat([ones(2, 3), ones(4, 5)])
    with fails(RuntimeError, r"same number of dimensions: got 2 and 1"):
        rt.torch_cat([ones(2, 3), state.w])
    state.check()


def test_e08_reshape_and_view(state):
    with fails(RuntimeError, re.escape("shape '[4, 2]' is invalid for input of size 6")):
        ones(2, 3).reshape(4, 2)
    with fails(RuntimeError, re.escape("shape '[5]' is invalid for input of size 3")):
        state.w.view(5)
    state.check()


def test_e09_expand(state):
    with fails(RuntimeError, r"expand", r"\[4, 5\]", r"\[2, 3\]", r"size 1"):
        ones(2, 3).expand(4, 5)
    with fails(RuntimeError, r"expand", r"number of sizes provided \(1\)", r"\(2\)"):
        ones(2, 3).expand(3)
    with fails(RuntimeError, r"expand", r"\[2\]", r"\[3\]"):
        state.w.expand(2)
    state.check()


@pytest.mark.parametrize("call, got", [
    (lambda x: x.sum(dim=2), 2),
    (lambda x: x.sum(dim=-3), -3),
    (lambda x: x.mean(dim=2), 2),
    (lambda x: x.softmax(dim=5), 5),
    (lambda x: x.log_softmax(dim=-4), -4),
    (lambda x: x.transpose(0, 2), 2),
    (lambda x: x.unsqueeze(4), 4),
    (lambda x: x.squeeze(3), 3),
    (lambda x: rt.torch_cat([x, x], dim=2), 2),
    (lambda x: rt.torch_stack([x, x], dim=4), 4),
    (lambda x: x.max(dim=7), 7),
    (lambda x: x.size(3), 3),
], ids=["sum", "sum-neg", "mean", "softmax", "log_softmax", "transpose", "unsqueeze",
        "squeeze", "cat", "stack", "max", "size"])
def test_e10_dim_out_of_range(state, call, got):
    x = state.w.unsqueeze(0) * 1         # [1, 3], in a live graph
    with fails(IndexError, r"Dimension out of range", r"expected to be in range of \[-\d, \d\]",
               rf"but got {got}\)"):
        call(x)
    state.check()


@pytest.mark.parametrize("key, patterns", [
    (5, [r"index out of range", r"\b5\b", r"size 2", r"\[2, 3\]"]),
    ((0, 3), [r"index out of range", r"\b3\b", r"size 3"]),
    (-3, [r"index out of range", r"-3"]),
    ("tensor", [r"index out of range", r"\b7\b"]),
    ("mask", [r"\[2, 3\]", r"boolean", r"\b3\b"]),
    ((0, 0, 0), [r"\[2, 3\]", r"too many indices"]),
], ids=["int", "2d", "neg", "long-tensor", "bool-mask", "too-many"])
def test_e11_index_out_of_range(state, key, patterns):
    x = state.w.unsqueeze(0).expand(2, 3) * 1      # [2, 3], in a live graph
    if key == "tensor":
        key = rt.torch_tensor([0, 7])
    elif key == "mask":
        key = rt.torch_tensor([True, False, True])
    with fails(IndexError, *patterns):
        x[key]
    # a valid index on the same tensor still works and differentiates
    x[1, 2].sum().backward()
    np.testing.assert_allclose(state.w.grad.data, state.before + [0, 0, 1])
    state.reset()
    state.check()


def test_e11_index_assignment_and_select(state):
    x = state.w * 1
    q = x.sin()                                    # saves x
    with fails(IndexError, r"index out of range", r"\b9\b"):
        x[9] = 1.0
    with fails(IndexError, r"select\(\)", r"\b9\b", r"dimension 0"):
        x.select(0, 9)
    np.testing.assert_array_equal(x.data, state.data)  # nothing written ...
    q.sum().backward()                             # ... and the version was not bumped
    np.testing.assert_allclose(state.w.grad.data, state.before + np.cos(state.data),
                               rtol=1e-6)
    state.reset()
    state.check()


def test_e11_failed_inplace_leaves_saved_tensor_usable(state):
    x = state.w * 1
    q = x.sin()
    with fails(RuntimeError, r"add_", r"\[3\]", r"\[5\]", r"broadcast"):
        x.add_(ones(5))
    with fails(RuntimeError, r"add_", r"Long"):
        rt.torch_tensor([1, 2]).add_(rt.torch_tensor([0.5, 0.5]))
    q.sum().backward()
    np.testing.assert_allclose(state.w.grad.data, state.before + np.cos(state.data),
                               rtol=1e-6)
    state.reset()
    state.check()


# --------------------------------------------------------------------------
# E12-E17 backward


def test_e12_backward_without_requires_grad(state):
    with fails(RuntimeError, r"element 0 of tensors does not require grad",
               r"does not have a grad_fn", r"requires_grad"):
        ones(2).sum().backward()
    with rt.with_no_grad():
        y = (state.w * 2).sum()
    with fails(RuntimeError, r"does not require grad"):
        y.backward()
    with fails(RuntimeError, r"element 1 of tensors does not require grad"):
        rt.autograd_backward([(state.w * 0).sum(), ones(1)])
    state.check()


def test_e13_non_scalar_and_wrong_gradient(state):
    y = state.w * 2
    with fails(RuntimeError, r"grad can be implicitly created only for scalar outputs",
               r"shape \[3\]", r"gradient"):
        y.backward()
    with fails(RuntimeError, r"Mismatch in shape", r"\[2\]", r"\[3\]"):
        y.backward(ones(2))
    with fails(RuntimeError, r"2 gradients for 1 tensors"):
        rt.autograd_backward([y], [ones(3), ones(3)])
    # the graph is intact: the right call works now
    y.backward(rt.torch_tensor([1.0, 1.0, 1.0]))
    np.testing.assert_allclose(state.w.grad.data, state.before + 2)
    state.reset()
    state.check()


def test_e14_backward_twice(state):
    y = (state.w.exp() * state.w).sum()
    y.backward()
    after_first = state.w.grad.data.copy()
    with fails(RuntimeError, r"backward through the graph a second time", r"retain_graph=True"):
        y.backward()
    np.testing.assert_array_equal(state.w.grad.data, after_first)
    z = (state.w * state.w).sum()
    rt.autograd_grad(z, state.w)
    with fails(RuntimeError, r"second time"):
        rt.autograd_grad(z, state.w)
    # custom function: ctx.saved_variables after the graph was freed
    f = rt.autograd_function(
        forward=lambda ctx, x: (ctx.save_for_backward(x=x), x * 2)[1],
        backward=lambda ctx, g: {"x": g * 2 + 0 * ctx.saved_variables["x"]})
    o = f(state.w).sum()
    o.backward()
    with fails(RuntimeError, r"second time", r"retain_graph=True"):
        o.backward()
    # retain_graph makes it work
    state.reset()
    r = (state.w * state.w).sum()
    r.backward(retain_graph=True)
    r.backward()
    np.testing.assert_allclose(state.w.grad.data, state.before + 4 * state.data)
    state.reset()
    state.check()


@pytest.mark.parametrize("op", [
    lambda w: w.add_(1), lambda w: w.mul_(2), lambda w: w.sub_(1), lambda w: w.div_(2),
    lambda w: w.zero_(), lambda w: w.fill_(0.5), lambda w: w.clamp_(min=0),
    lambda w: w.copy_(ones(3)), lambda w: w.masked_fill_(w > 1, 0.0),
    lambda w: w.__setitem__(0, 1.0),
], ids=["add_", "mul_", "sub_", "div_", "zero_", "fill_", "clamp_", "copy_", "masked_fill_",
        "setitem"])
def test_e15_inplace_on_leaf(state, op):
    with fails(RuntimeError, r"a leaf Variable that requires grad", r"in-place operation",
               r"with_no_grad\(\)"):
        op(state.w)
    # the documented fix works
    with rt.with_no_grad():
        op(state.w)
    with rt.with_no_grad():
        state.w.copy_(rt.torch_tensor(state.data))
    state.check()


def test_e16_saved_tensor_modified(state):
    z = state.w * 1
    q = z.sin()                  # saves z
    z.add_(1)
    with fails(RuntimeError, r"modified by an inplace operation", r"\[CPUFloatType \[3\]\]",
               r"is at version 1; expected version 0"):
        q.sum().backward()
    # recomputing (the fix) works
    z = state.w * 1
    q = z.sin()
    z = z + 1
    q.sum().backward()
    np.testing.assert_allclose(state.w.grad.data, state.before + np.cos(state.data),
                               rtol=1e-6)
    state.reset()
    state.check()


def test_e16_anomaly_mode_names_the_forward_op(state):
    with rt.with_detect_anomaly():
        z = state.w * 1
        q = z.sin()              # the forward op whose backward fails
        z.add_(1)
        with fails(RuntimeError, r"modified by an inplace operation") as info:
            q.sum().backward()
    assert "Error detected in SinBackward0" in notes(info)
    assert "q = z.sin()" in notes(info)
    state.check()


def test_e16_message_names_the_producer(state):
    z = state.w * 1
    q = z.sin()
    z.add_(1)                    # z is now output 0 of AddBackward1 (add_ of a number)
    with fails(RuntimeError, r"which is output 0 of AddBackward1", r"version 1"):
        q.sum().backward()
    state.check()


def test_e16_leaf_modified_under_no_grad(state):
    v = rt.torch_tensor([0.1, 0.2, 0.3], requires_grad=True)
    q = v.sin()
    with rt.with_no_grad():
        v.add_(1)
    with fails(RuntimeError, r"modified by an inplace operation",
               r"\[CPUFloatType \[3\]\] is at version 1; expected version 0 instead\. Hint: enable "
               r"anomaly detection"):
        q.sum().backward()
    state.check()


def test_e17_unused_input(state):
    u = ones(3, rg=True)
    with fails(RuntimeError, r"inputs\[1\]", r"not have been used in the graph",
               r"allow_unused=True"):
        rt.autograd_grad((state.w * 2).sum(), [state.w, u])
    g = rt.autograd_grad((state.w * 2).sum(), [state.w, u], allow_unused=True)
    assert g[1] is None and u.grad is None
    state.check()


# --------------------------------------------------------------------------
# E18-E27 custom functions

# R-style functions are named by forward's name (or autograd_function(name=)),
# class-style ones by their class.
R_NODE = r"custom function with forward '\w+'"


def r_function(backward_result):
    """f(x, y) = x * y whose backward returns `backward_result(ctx, g)`."""
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    def backward(ctx, g):
        return backward_result(ctx, g)
    return rt.autograd_function(forward=forward, backward=backward)


def class_function(result):
    class Mul(rt.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return result(g)
    return Mul


def test_e18_unknown_gradient_name(state):
    f = r_function(lambda ctx, g: {"x": g, "z": g})
    y = ones(3, rg=True)
    with fails(RuntimeError, R_NODE, r"named 'z'", r"not an argument of forward",
               r"x, y"):
        f(state.w, y).sum().backward()
    assert y.grad is None
    state.check()


def test_e19_wrong_gradient_shape(state):
    y = ones(3, rg=True)
    f = r_function(lambda ctx, g: {"x": g, "y": ones(2)})
    with fails(RuntimeError, R_NODE, r"shape \[2\] for 'y'", r"\[3\]", r"input's shape"):
        f(state.w, y).sum().backward()
    F = class_function(lambda g: (g, ones(5)))
    with fails(RuntimeError, r"custom function Mul\b", r"\[5\]", r"\[3\]"):
        F.apply(state.w, y).sum().backward()
    assert y.grad is None
    # a gradient that broadcasts over the input is summed down, like PyTorch
    f = r_function(lambda ctx, g: {"x": None, "y": ones(2, 3)})
    f(state.w, y).sum().backward()
    np.testing.assert_array_equal(y.grad.data, [2.0, 2.0, 2.0])
    state.check()


def test_e20_wrong_gradient_dtype(state):
    y = ones(3, rg=True)
    f = r_function(lambda ctx, g: {"x": g, "y": ones(3, dtype=rt.torch_long())})
    with fails(TypeError, R_NODE, r"dtype torch_Long for 'y'", r"torch_Float",
               r"floating point"):
        f(state.w, y).sum().backward()
    F = class_function(lambda g: (g, ones(3, dtype=rt.torch_bool())))
    with fails(TypeError, r"custom function Mul\b", r"torch_Bool", r"floating point"):
        F.apply(state.w, y).sum().backward()
    assert y.grad is None
    # float64 for a float32 input is cast to the input's dtype, like PyTorch
    f = r_function(lambda ctx, g: {"y": ones(3, dtype=rt.torch_double())})
    f(state.w, y).sum().backward()
    assert y.grad.dtype == rt.torch_float()
    state.check()


@pytest.mark.parametrize("bad, got", [(3.0, r"a number \(float\)"), (np.ones(3), "a NumPy array"),
                                      ("g", r"a string \(str\)"), ([1.0, 2.0, 3.0], "a list")])
def test_e21_non_tensor_gradient(state, bad, got):
    y = ones(3, rg=True)
    f = r_function(lambda ctx, g: {"x": g, "y": bad})
    with fails(TypeError, R_NODE, rf"{got} as the gradient for 'y'", r"must be tensors"):
        f(state.w, y).sum().backward()
    F = class_function(lambda g: (g, bad))
    with fails(TypeError, r"custom function Mul\b", rf"{got}", r"must be tensors"):
        F.apply(state.w, y).sum().backward()
    assert y.grad is None
    state.check()


def test_e21_r_style_backward_returns_a_list(state):
    f = r_function(lambda ctx, g: [g, g])
    with fails(TypeError, R_NODE, r"named list", r"x, y", r"got a list"):
        f(state.w, ones(3, rg=True)).sum().backward()
    state.check()


@pytest.mark.parametrize("grads, expected, got", [
    (lambda g: (g,), 2, 1), (lambda g: (g, g, g), 2, 3), (lambda g: g, 2, 1)],
    ids=["too-few", "too-many", "bare-tensor"])
def test_e22_class_wrong_number_of_gradients(state, grads, expected, got):
    F = class_function(grads)
    with fails(RuntimeError, r"custom function Mul\b", r"incorrect number of gradients",
               rf"expected {expected}, got {got}"):
        F.apply(state.w, ones(3, rg=True)).sum().backward()
    state.check()


@pytest.mark.parametrize("out, got", [(None, r"NULL \(None\)"), (3.0, r"a number \(float\)"),
                                      (np.ones(3), "a NumPy array"),
                                      ("list", r"a number \(int\)")])
def test_e23_forward_returns_non_tensor(state, out, got):
    def forward(ctx, x):
        return [x * 2, 3] if isinstance(out, str) else out
    f = rt.autograd_function(forward=forward, backward=lambda ctx, g: {"x": g})

    class F(rt.Function):
        @staticmethod
        def forward(ctx, x):
            return forward(ctx, x)

        @staticmethod
        def backward(ctx, g):
            return g
    with fails(TypeError, R_NODE, r"forward must return a tensor", got):
        f(state.w)
    with fails(TypeError, r"custom function F\b", r"forward must return a tensor", got):
        F.apply(state.w)
    assert state.w.grad_fn is None
    state.check()


def test_e24_mark_dirty_not_an_input(state):
    def fwd_new(ctx, x):
        y = x * 2
        ctx.mark_dirty(y)
        return y

    def fwd_num(ctx, x):
        ctx.mark_dirty(3)
        return x

    f = rt.autograd_function(forward=fwd_new, backward=lambda ctx, g: {"x": g})
    with fails(RuntimeError, R_NODE, r"mark_dirty\(\)", r"not an input of forward"):
        f(state.w)
    f = rt.autograd_function(forward=fwd_num, backward=lambda ctx, g: {"x": g})
    with fails(TypeError, R_NODE, r"mark_dirty\(\) takes tensors, got a number \(int\)"):
        f(state.w)

    class F(rt.Function):
        @staticmethod
        def forward(ctx, a):
            b = a.clone()
            ctx.mark_dirty(b)
            return b

        @staticmethod
        def backward(ctx, g):
            return g
    with fails(RuntimeError, r"custom function F\b", r"mark_dirty\(\)", r"not an input"):
        F.apply(state.w)
    state.check()


def test_e25_exception_in_forward(state):
    seen = {}

    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        seen["grad_mode_inside"] = rt.is_grad_enabled()
        _ = x * y
        raise ValueError("boom in forward: x was " + str(list(x.shape)))

    f = rt.autograd_function(forward=forward, backward=lambda ctx, g: {"x": g})
    y = ones(3, rg=True)
    with fails(ValueError, r"^boom in forward: x was \[3\]$") as info:
        f(state.w, y)
    assert "forward of custom function" in notes(info)
    assert seen["grad_mode_inside"] is False
    assert y.grad_fn is None and y.grad is None

    class F(rt.Function):
        @staticmethod
        def forward(ctx, a):
            raise KeyError("missing")

        @staticmethod
        def backward(ctx, g):
            return g
    with fails(KeyError, r"missing") as info:
        F.apply(state.w)
    assert "custom function F" in notes(info)
    state.check()


def test_e26_exception_in_backward(state):
    def backward(ctx, g):
        raise ZeroDivisionError("boom in backward")

    f = r_function(backward)
    y = ones(3, rg=True)
    with fails(ZeroDivisionError, r"^boom in backward$") as info:
        f(state.w, y).sum().backward()
    assert "backward of custom function" in notes(info)
    # also under create_graph=True (backward runs with grad mode on), and inside no_grad
    with fails(ZeroDivisionError, r"boom in backward"):
        f(state.w, y).sum().backward(create_graph=True)
    assert rt.is_grad_enabled()
    with rt.with_no_grad():
        out = f(state.w, y)                      # no node: nothing can fail
        assert out.grad_fn is None
    out = f(state.w.detach().requires_grad_(), y).sum()
    with fails(ZeroDivisionError, r"boom"):
        with rt.with_no_grad():
            rt.autograd_grad(out, y)
    assert rt.is_grad_enabled()
    assert y.grad is None
    state.check()


def test_e26_exception_in_hook_and_in_no_grad_block(state):
    z = state.w * 2
    z.register_hook(lambda g: (_ for _ in ()).throw(OSError("hook failed")))
    with fails(OSError, r"^hook failed$"):
        z.sum().backward()
    with pytest.raises(ArithmeticError):
        with rt.with_no_grad():
            raise ArithmeticError
    with pytest.raises(ArithmeticError):
        with rt.with_detect_anomaly():
            raise ArithmeticError

    @rt.with_no_grad
    def helper():
        raise ArithmeticError
    with pytest.raises(ArithmeticError):
        helper()
    state.check()


def test_e26_retained_graph_can_be_retried_after_a_failing_hook(state):
    x = rt.torch_tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x.exp() * state.w[:2]
    h = y.register_hook(lambda g: 1 / 0)
    loss = y.sum()
    with fails(ZeroDivisionError, r"division by zero"):
        loss.backward(retain_graph=True)
    assert x.grad is None
    h.remove()
    loss.backward()                                # fixed: the same graph works
    np.testing.assert_allclose(x.grad.data, np.exp([1.0, 2.0]) * state.data[:2])
    np.testing.assert_allclose(state.w.grad.data, state.before + [np.e, np.e ** 2, 0.0])
    state.reset()
    state.check()


def test_e26_error_in_a_nested_backward_inside_a_hook(state):
    other = rt.torch_ones(2, requires_grad=True)
    bad = rt.autograd_function(forward=lambda ctx, a: a * 2,
                               backward=lambda ctx, g: {"a": "not a tensor"})

    def hook(g):
        bad(other).sum().backward()                # a backward inside a backward
        return g
    z = state.w * 2
    z.register_hook(hook)
    with fails(TypeError, r"a string \(str\) as the gradient for 'a'"):
        z.sum().backward(create_graph=True)
    assert other.grad is None
    state.check()


def test_e27_messages_name_the_r_style_function(state):
    def my_linear_forward(ctx, x, y):
        return x * y

    f = rt.autograd_function(forward=my_linear_forward,
                             backward=lambda ctx, g: {"x": g, "z": g})
    with fails(RuntimeError, r"custom function with forward 'my_linear_forward'", r"'z'"):
        f(state.w, ones(3, rg=True)).sum().backward()

    def my_bad_forward(ctx, x):
        return None
    f = rt.autograd_function(forward=my_bad_forward, backward=lambda ctx, g: {"x": g})
    with fails(TypeError, r"my_bad_forward", r"NULL \(None\)"):
        f(state.w)
    f = rt.autograd_function(forward=lambda ctx, x: None, backward=lambda ctx, g: {"x": g},
                             name="linear")
    with fails(TypeError, r"custom function 'linear'", r"NULL \(None\)"):
        f(state.w)
    # the node keeps R torch's name
    g = rt.autograd_function(forward=my_linear_forward, backward=lambda ctx, g: {"x": g})
    assert g(state.w, ones(3)).grad_fn.name == \
        "torch::autograd::CppNode<torch::autograd::LanternFunction>"
    state.check()


def test_e27_class_style_names_the_argument(state):
    class Scale(rt.Function):
        @staticmethod
        def forward(ctx, x, weight):
            return x * weight

        @staticmethod
        def backward(ctx, g):
            return g, ones(5)
    with fails(RuntimeError, r"custom function Scale\b", r"'weight'", r"\[5\]", r"\[3\]"):
        Scale.apply(state.w, ones(3, rg=True)).sum().backward()
    state.check()


# --------------------------------------------------------------------------
# E28 hooks


def test_e28_hook_wrong_shape_or_type(state):
    h = state.w.register_hook(lambda g: ones(5))
    with fails(RuntimeError, r"hook returned a gradient of shape \[5\]", r"has shape \[3\]",
               r"same shape"):
        (state.w * 2).sum().backward()
    h.remove()
    z = state.w * 2
    z.register_hook(lambda g: ones(2, 2))
    with fails(RuntimeError, r"shape \[2, 2\]", r"\[3\]"):
        z.sum().backward()
    z = state.w * 2
    z.register_hook(lambda g: 3.0)
    with fails(TypeError, r"hook on MulBackward1 returned float", r"tensor or None"):
        z.sum().backward()
    state.check()


def test_e28_hook_changes_dtype(state):
    z = state.w * 2
    z.register_hook(lambda g: g.to(dtype=rt.torch_long()))
    with fails(RuntimeError, r"hook", r"dtype|type", r"torch_Long|Long", r"torch_Float|Float"):
        z.sum().backward()
    state.check()


# --------------------------------------------------------------------------
# E29 anomaly mode


def test_e29_nan_under_detect_anomaly(state):
    a = rt.torch_tensor([0.0, 1.0], requires_grad=True)
    c = rt.torch_tensor([0.0, 1.0])
    with np.errstate(all="ignore"):
        with rt.with_detect_anomaly():
            y = (a.sqrt() * c).sum()            # the forward op: line below is in the trace
            with fails(RuntimeError, r"Function 'SqrtBackward0' returned nan values",
                       r"0th output", r"Traceback of forward call",
                       r"y = \(a\.sqrt\(\) \* c\)\.sum\(\)"):
                y.backward()
        assert not engine.is_anomaly_enabled()
        assert a.grad is None
        # outside anomaly mode the NaN flows into .grad silently (as in PyTorch)
        (a.sqrt() * c).sum().backward()
    assert np.isnan(a.grad.data[0]) and a.grad.data[1] == pytest.approx(0.5)
    state.check()


def test_e29_anomaly_names_forward_op_of_a_failing_custom_function(state):
    f = r_function(lambda ctx, g: {"x": g, "y": ones(7)})
    with rt.with_detect_anomaly():
        out = f(state.w, ones(3, rg=True)).sum()
        with fails(RuntimeError, r"shape \[7\]") as info:
            out.backward()
    assert "Traceback of forward call" in notes(info)
    assert "out = f(state.w" in notes(info)
    state.check()


def test_e29_anomaly_mode_is_thread_local():
    seen = {}

    def other():
        seen["anomaly"] = engine.is_anomaly_enabled()
    with rt.with_detect_anomaly():
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen["anomaly"] is False


# --------------------------------------------------------------------------
# E30 atomicity


def test_e30_failing_backward_leaves_every_grad_unchanged(state):
    bad = rt.autograd_function(forward=lambda ctx, x: x * 2,
                               backward=lambda ctx, g: {"x": ones(7)})
    u = ones(3, rg=True)
    v = ones(3, rg=True)
    v.grad = rt.torch_tensor([5.0, 5.0, 5.0])      # accumulated earlier
    # v's branch is recorded after bad's node, so it runs first in the walk
    loss = bad(u).sum() + (v * 2).sum() + (state.w * 2).sum()
    with fails(RuntimeError, r"shape \[7\]"):
        loss.backward()
    assert u.grad is None
    np.testing.assert_array_equal(v.grad.data, [5.0, 5.0, 5.0])
    state.check()


# --------------------------------------------------------------------------
# E31-E35 other misuse


def test_e31_inplace_result_dtype(state):
    x = rt.torch_tensor([1, 2])
    with fails(RuntimeError, r"add_", r"can't be cast", r"Long"):
        x.add_(rt.torch_tensor([0.5, 0.5]))
    with fails(RuntimeError, r"mul_", r"can't be cast", r"Long"):
        x.mul_(1.5)
    np.testing.assert_array_equal(x.data, [1, 2])
    x.add_(rt.torch_tensor([1, 1]))                 # same dtype: fine
    np.testing.assert_array_equal(x.data, [2, 3])
    with fails(RuntimeError, r"^dropout: result type Float can't be cast to the desired output "
                             r"type Long$"):
        rt.nnf_dropout(x, 0.5)
    state.check()


def test_e31_inplace_result_dtype_names_torch_dtypes(state):
    with fails(RuntimeError, r"result type (torch_)?Float can't be cast to the desired output "
                             r"type (torch_)?Long"):
        rt.torch_tensor([1, 2]).add_(rt.torch_tensor([0.5, 0.5]))
    state.check()


@pytest.mark.parametrize("call, exc, patterns", [
    (lambda w: setattr(w, "grad", ones(5)), RuntimeError,
     [r"assigned grad", r"different size", r"\[3\]", r"\[5\]"]),
    (lambda w: setattr(w, "grad", ones(3, dtype=rt.torch_long())), RuntimeError,
     [r"assigned grad", r"different type", r"torch_Float", r"torch_Long"]),
    (lambda w: setattr(w, "grad", 3.0), TypeError, [r"assigned grad", r"Tensor or None",
                                                     r"float"]),
], ids=["shape", "dtype", "non-tensor"])
def test_e32_assigning_a_bad_grad(state, call, exc, patterns):
    with fails(exc, *patterns):
        call(state.w)
    state.check()


@pytest.mark.parametrize("call, exc, patterns", [
    (lambda w: (w * 2).sum().backward(inputs=[ones(3)]), RuntimeError,
     [r"inputs\[0\]", r"does not require grad"]),
    (lambda w: (w * 2).sum().backward(inputs=[]), RuntimeError, [r"inputs", r"empty"]),
    (lambda w: ones(2).retain_grad(), RuntimeError, [r"retain_grad", r"requires_grad=False"]),
    (lambda w: ones(2).register_hook(lambda g: g), RuntimeError,
     [r"hook", r"doesn't require gradient"]),
    (lambda w: w.item(), RuntimeError, [r"3 elements", r"item\(\)", r"exactly one"]),
    (lambda w: w.numpy(), RuntimeError, [r"numpy\(\)", r"requires grad", r"detach\(\)"]),
    (lambda w: bool(w > 0), RuntimeError, [r"3 values", r"ambiguous"]),
    (lambda w: setattr(w * 2, "requires_grad", False), RuntimeError,
     [r"only change requires_grad flags of leaf variables", r"detach\(\)"]),
    (lambda w: w.to(device="cuda"), RuntimeError, [r"'cpu'", r"cuda"]),
    (lambda w: rt.torch_ones(2, device="cuda"), RuntimeError, [r"'cpu'", r"cuda"]),
    (lambda w: rt.torch_tensor([1, 2]).mean(), RuntimeError, [r"mean\(\)", r"floating point",
                                                             r"Long"]),
    (lambda w: rt.torch_tensor([1, 2]).softmax(0), RuntimeError, [r"softmax", r"floating",
                                                                 r"torch_Long"]),
    (lambda w: ones(2, 2).mm(ones(2, 2, dtype=rt.torch_long())), RuntimeError,
     [r"same dtype", r"Float and Long"]),
    (lambda w: rt.torch_zeros(-1), RuntimeError, [r"negative dimension -1"]),
    (lambda w: rt.torch_ones(2, dtype="complex16"), TypeError, [r"unsupported dtype 'complex16'",
                                                             r"torch_float32\(\)"]),
    (lambda w: w[rt.torch_tensor([0.0])], IndexError, [r"long, int or bool", r"torch_Float"]),
    (lambda w: w["a"], IndexError, [r"can't index", r"str"]),
    (lambda w: w.masked_fill(w, 0.0), TypeError, [r"masked_fill", r"bool tensor", r"Float"]),
], ids=["backward-inputs", "backward-inputs-empty", "retain_grad", "register_hook", "item",
        "numpy", "bool", "requires_grad-nonleaf", "to-cuda", "device", "mean-int",
        "softmax-int", "mm-dtypes", "negative-size", "dtype-name", "float-index", "str-index",
        "mask-dtype"])
def test_e33_misuse(state, call, exc, patterns):
    with fails(exc, *patterns):
        call(state.w)
    state.check()


def test_e34_custom_function_called_with_wrong_arguments(state):
    def my_forward(ctx, x):
        return x * 2
    f = rt.autograd_function(forward=my_forward, backward=lambda ctx, g: {"x": g})
    with fails(TypeError, r"my_forward", r"\bx\b", r"2"):
        f(state.w, state.w)
    state.check()


def test_e35_condition_and_index_dtypes(state):
    with fails(RuntimeError, r"where", r"condition", r"bool", r"Float"):
        rt.torch_where(state.w, state.w, state.w)
    with fails((RuntimeError, IndexError), r"gather\(\)", r"index", r"int64|Long",
               r"Float"):
        state.w.gather(0, rt.torch_tensor([0.0]))
    state.check()



def test_e38_grad_of_a_non_leaf_warns(state):
    y = state.w * 2
    with pytest.warns(UserWarning, match=r"not a leaf Tensor.*retain_grad\(\)"):
        assert y.grad is None
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    z = x * 2
    z.retain_grad()
    z.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a retained or a leaf gradient: no warning
        assert z.grad is not None and x.grad is not None and state.w.grad is not None
    state.check()


@pytest.mark.parametrize("call, exc, patterns", [
    (lambda: rt.torch_upsample_nearest2d(ones(1, 1, 2), (2, 2)), ValueError,
     [r"upsample_nearest2d", r"4-D input", r"\[1, 1, 2\]"]),
    (lambda: rt.torch_upsample_nearest1d(ones(1, 1, 2)), ValueError,
     [r"exactly one of output_size and scale_factors"]),
    (lambda: rt.torch_upsample_linear1d(ones(1, 1, 2), (0,)), ValueError,
     [r"greater than 0", r"\[2\]", r"\[0\]"]),
    (lambda: rt.torch_upsample_linear1d(ones(1, 1, 2, dtype=rt.torch_long()), (3,)), TypeError,
     [r"floating input", r"torch_Long"]),
    (lambda: rt.nnf_interpolate(ones(1, 1, 2, 2), size=3, scale_factor=2), ValueError,
     [r"only one of size or scale_factor"]),
    (lambda: rt.nnf_interpolate(ones(1, 1, 2, 2)), ValueError,
     [r"either size or scale_factor"]),
    (lambda: rt.nnf_interpolate(ones(1, 1, 2, 2), scale_factor=(2, 2, 2)), ValueError,
     [r"scale_factor", r"one per spatial dim", r"got 3"]),
    (lambda: rt.nnf_interpolate(ones(1, 1, 2, 2), size=3, mode="trilinear"),
     NotImplementedError, [r"4-D input", r"trilinear", r"5-D"]),
], ids=["ndim", "neither", "zero-size", "int-input", "both", "interp-neither", "scale-length",
        "mode-dims"])
def test_e40_upsample_and_interpolate_arguments(state, call, exc, patterns):
    with fails(exc, *patterns):
        call()
    state.check()


def test_e41_out_form_with_an_argument_requiring_grad(state):
    out = rt.torch_zeros(3)
    with fails(RuntimeError, r"torch_exp_out", r"automatic differentiation",
               r"requires grad", r"torch_exp\(\)", r"with_no_grad"):
        rt.torch_exp_out(out, state.w)
    np.testing.assert_array_equal(out.data, 0)
    with fails(RuntimeError, r"torch_exp_out", r"leaf that requires grad"):
        rt.torch_exp_out(rt.torch_zeros(3, requires_grad=True), ones(3))
    state.check()


def test_e42_out_form_that_cannot_write_its_result(state):
    out = rt.torch_zeros(3, dtype=rt.torch_long())
    with fails(RuntimeError, r"torch_abs_out", r"result type Float can't be cast to the "
                             r"desired output type Long"):
        rt.torch_abs_out(out, ones(3))
    np.testing.assert_array_equal(out.data, 0)
    with fails(TypeError, r"torch_add_out", r"tensor to write the result into", r"list"):
        rt.torch_add_out([1.0], ones(1), ones(1))
    with fails(TypeError, r"torch_where_out", r"not one tensor"):
        rt.torch_where_out(rt.torch_zeros(1), rt.torch_tensor([True, False]))
    state.check()


# E43-E45 class indices, stft, kernels without a derivative


def test_e43_class_indices_that_do_not_fit(state):
    idx = rt.torch_tensor(np.array([0, 3]))
    with fails(ValueError, r"one_hot", r"smaller than num_classes \(3 classes\)", r"class 3"):
        rt.torch_one_hot(idx, 3)
    with fails(RuntimeError, r"empty tensor", r"give num_classes"):
        rt.torch_one_hot(rt.torch_tensor(np.zeros(0, dtype=np.int64)))
    x = rt.torch_randn(3, 2)
    with fails(ValueError, r"target out of range", r"got class 2", r"2 classes"):
        rt.torch_multi_margin_loss(x, rt.torch_tensor(np.array([0, 1, 2])))
    with fails(TypeError, r"class indices", r"torch_long\(\)", r"got torch_Float"):
        rt.torch_multi_margin_loss(x, rt.torch_tensor([0.0, 1.0, 1.0]))
    with fails(ValueError, r"inconsistent target size", r"expected 3", r"\[2\]"):
        rt.torch_multi_margin_loss(x, rt.torch_tensor(np.array([0, 1])))
    with fails(IndexError, r"^Target 2 is out of bounds\.$"):
        rt.nnf_cross_entropy(x, rt.torch_tensor(np.array([0, 2, 1])))
    with fails(IndexError, r"^Target -1 is out of bounds\.$"):
        rt.nnf_nll_loss(x, rt.torch_tensor(np.array([-1, 0, 1])))
    with fails(IndexError, r"^index out of range in self$"):
        rt.nnf_embedding(rt.torch_tensor(np.array([0, 3])), rt.torch_randn(3, 2))
    state.check()


def test_e44_stft_arguments(state):
    x = ones(3000)
    with fails(RuntimeError, r"requires the return_complex parameter", r"return_complex = TRUE"):
        rt.torch_stft(x, 400)
    with fails(RuntimeError, r"1-D window of size equal to win_length=400", r"\[300\]"):
        rt.torch_stft(x, 400, window=ones(300), return_complex=True)
    with fails(RuntimeError, r"reflect padding", r"signal's length 5", r"center = FALSE"):
        rt.torch_stft(ones(5), 16, return_complex=True)
    with fails(ValueError, r"pad_mode must be one of", r"'mirror'"):
        rt.torch_stft(x, 16, pad_mode="mirror", return_complex=True)
    state.check()


def test_e45_differentiating_a_kernel_without_derivative(state):
    x = rt.torch_randn(2, 2, requires_grad=True)
    with fails(RuntimeError, r"derivative for '_cdist_backward' is not implemented",
               r"use_mm_for_euclid_dist", r"differentiable ops"):
        rt.torch__cdist_backward(x, x, x, 1, x).sum().backward()
    a = rt.torch_tensor(np.eye(2), requires_grad=True)
    with fails(RuntimeError, r"_cholesky_solve_helper is not implemented",
               r"torch_cholesky_solve\(\)"):
        rt.torch__cholesky_solve_helper(a, a, True).sum().backward()
    m = rt.torch_randn(3, 2, requires_grad=True)
    (g,) = rt.autograd_grad(rt.torch_pdist(m).sum(), m, create_graph=True)
    with fails(RuntimeError, r"derivative for '_pdist_backward' is not implemented",
               r"differentiable ops"):
        g.sum().backward()
    lp = rt.torch_randn(5, 1, 3, requires_grad=True)
    loss = rt.torch_ctc_loss(lp, rt.torch_tensor(np.array([[1, 2]])), [5], [2], 0, 2)
    (g,) = rt.autograd_grad(loss, lp, create_graph=True)
    with fails(RuntimeError, r"_ctc_loss_backward is not implemented",
               r"differentiated once"):
        g.sum().backward()
    state.check()


# E46-E47 named tensors


def test_e46_unknown_dim_name(state):
    x = rt.torch_zeros(2, 3, names=("A", "B"))
    with fails(RuntimeError, r"dim = 'Z'", r"no dim of this tensor is called 'Z'",
               r"Tensor\[A, B\]"):
        x.sum("Z")
    with fails(RuntimeError, r"dim0 = 'Z'", r"Tensor\[A, B\]"):
        x.transpose("Z", "A")
    with fails(RuntimeError, r"dim = 'A'", r"no dim names", r"Tensor\[None, None\]",
               r"rename\(\)"):
        rt.torch_zeros(2, 3).softmax("A")
    with fails(RuntimeError, r"'Q'"):
        rt.torch_cat([x, x], "Q")
    state.check()


def test_e47_names_that_do_not_fit(state):
    with fails(RuntimeError, r"1 names \('A'\) given for a tensor with 2 dims"):
        rt.torch_zeros(2, 3, names=("A",))
    with fails(RuntimeError, r"'A' is given to two dims"):
        rt.torch_zeros(2, 3, names=("A", "A"))
    with fails(RuntimeError, r"non-empty strings"):
        rt.torch_zeros(2, 3, names=("A", 1))
    with fails(RuntimeError, r"rename", r"no names", r"\(W\)"):
        rt.torch_zeros(2, 3).rename(W="a")
    y = rt.torch_zeros(2, 3).refine_names("A", "B")
    with fails(RuntimeError, r"already called 'B'"):
        y.refine_names("A", "C")
    x = rt.torch_zeros(2, 3, 4, names=("A", "B", "C"))
    with fails(RuntimeError, r"add", r"'C' meets dim 'Z'", r"align_to"):
        x + rt.torch_ones(4, names=("Z",))
    with fails(RuntimeError, r"cat", r"'B' meets dim 'Q'"):
        rt.torch_cat([x, x.rename("A", "Q", "C")], 0)
    with fails(RuntimeError, r"reshape is not yet supported with named tensors",
               r"Tensor\[A, B, C\]", r"rename\(None\)"):
        x.reshape(6, 4)
    with fails(RuntimeError, r"norm is not yet supported with named tensors"):
        x.norm(dim="A")
    assert x.names == ("A", "B", "C") and y.names == ("A", "B")  # unchanged
    state.check()


# --------------------------------------------------------------------------
# E48-E49 sparse tensors


def test_e48_op_without_a_sparse_form(state):
    s = rt.torch_sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    for call, name in ((lambda: s.exp(), "exp"), (lambda: s + 1, "add"),
                       (lambda: rt.torch_matmul(s, s), "matmul"), (lambda: s.sum(), "sum"),
                       (lambda: rt.torch_tensor([1.0]) * s, "mul")):
        with fails(NotImplementedError, rf"{name}\(\) is not supported for sparse tensors",
                   r"torch_sparse_coo", r"to_dense\(\) first"):
            call()
    with fails(NotImplementedError, r"numpy\(\)", r"to_dense"):
        s.numpy()
    from rtorch_py.r.tensor_api import as_array
    with fails(RuntimeError, r"Sparse tensors are not supported for as_array conversion",
               r"as_array\(x\$to_dense\(\)\)"):
        as_array(s.to_sparse_csr())
    assert s.to_dense().tolist() == [[0.0, 1.0], [2.0, 0.0]]  # (the tensor is unchanged)
    state.check()


def test_e49_sparse_parts_that_do_not_fit(state):
    make = rt.torch_sparse_coo_tensor
    with fails(RuntimeError, r"indices must be sparse_dim x nnz, but got: \[2\]"):
        make([0, 1], [1.0, 2.0], (3,))
    with fails(RuntimeError, r"same nnz", r"from indices: 2", r"from values: 3"):
        make([[0, 1]], [1.0, 2.0, 3.0], (3,))
    with fails(RuntimeError, r"len\(size\) = 2, sparse_dim = 1, dense_dim = 0"):
        make([[0, 1]], [1.0, 2.0], (3, 3))
    with fails(RuntimeError, r"for dim 0, size is 3 but found index 3"):
        make([[0, 3]], [1.0, 2.0], (3,))
    with fails(RuntimeError, r"negative index -1 for dim 0"):
        make([[0, -1]], [1.0, 2.0], (3,))
    s = make([[0, 0]], [1.0, 2.0], (2,))
    with fails(RuntimeError, r"uncoalesced", r"coalesce\(\) first"):
        s.values()
    with fails(RuntimeError, r"indices expected sparse coordinate tensor layout but got Strided"):
        rt.torch_zeros(2).indices()
    with fails(RuntimeError, r"crow_indices expected sparse row compressed", r"got Sparse"):
        s.crow_indices()
    from rtorch_py.r.tensor_api import torch_sparse_coo_tensor as r_make
    with fails(IndexError, r"indices start at 1, found 0"):
        r_make(np.array([[0.0, 1.0]]), np.array([1.0, 2.0]))
    assert s.coalesce().values().tolist() == [3.0]
    state.check()


# --------------------------------------------------------------------------
# E50-E52 dtypes and devices


def test_e50_values_of_a_meta_tensor(state):
    from rtorch_py.r.tensor_api import as_array
    y = rt.torch_randn(2, 3).to(device="meta")
    with fails(RuntimeError, r"as_array\(\) of a meta tensor", r"no values"):
        as_array(y)
    with fails(RuntimeError, r"item\(\) of a meta tensor", r"no values"):
        y[0, 0].item()
    with fails(NotImplementedError, r"Cannot copy out of meta tensor; no data"):
        y.to(device="cpu")
    with fails(RuntimeError, r"PyTorch is not linked with support for cuda devices", r"'meta'"):
        rt.torch_ones(2).to(device="cuda")
    with fails(NotImplementedError, r"backward\(\) from a meta tensor is not supported",
               r"cpu device"):
        (y.requires_grad_() * 2).sum().backward()
    assert (y * 2).device == "meta" and (y * 2).shape == (2, 3)  # ops still work
    state.check()


def test_e51_quantized_misuse(state):
    x = rt.torch_tensor([1.0, 2.0])
    q = rt.torch_quantize_per_tensor(x, 0.1, 0, rt.torch_quint8())
    for call, name in ((lambda: q + 1, "add"), (lambda: q.exp(), "exp"),
                       (lambda: q.sum(), "add"),  # (NumPy names its add.reduce)
                       (lambda: rt.torch_cat([q, q]), "concatenate")):
        with fails(NotImplementedError, rf"{name}\(\) is not supported for quantized tensors",
                   r"dequantize\(\) them first"):
            call()
    with fails(RuntimeError, r"quantizes a floating point tensor, got torch_Long"):
        rt.torch_quantize_per_tensor(rt.torch_tensor([1]), 0.1, 0, rt.torch_quint8())
    with fails(RuntimeError, r"dtype must be torch_quint8\(\), torch_qint8\(\) or "
               r"torch_qint32\(\), got torch_Float"):
        rt.torch_quantize_per_tensor(x, 0.1, 0, rt.torch_float())
    with fails(RuntimeError, r"scale must be positive, got 0"):
        rt.torch_quantize_per_tensor(x, 0, 0, rt.torch_quint8())
    with fails(RuntimeError, r"dequantize\(\) needs a quantized tensor", r"got a torch_Float"):
        x.dequantize()
    assert q.dequantize().tolist() == [1.0, 2.0]  # the tensor is unchanged
    state.check()


def test_e52_buffer_that_cannot_be_shared(state):
    from rtorch_py.r.tensor_api import torch_tensor_from_buffer
    with fails(ValueError, r"the buffer has 24 bytes, shape \[4\] of torch_Double needs 32"):
        torch_tensor_from_buffer(np.zeros(3), 4, "float64")
    with fails(TypeError, r"must hold memory to share", r"got a list"):
        torch_tensor_from_buffer([1.0, 2.0], 2, "float64")
    buf = np.zeros(2)
    torch_tensor_from_buffer(buf, 2, "float64").add_(1)
    assert buf.tolist() == [1.0, 1.0]  # (shared, once it fits)
    state.check()


# E58-E62 R torch 0.17's other names


def test_e58_arguments_that_do_not_fit_an_nn_op(state):
    x = rt.torch_randn(1, 6, 2, 2)
    with fails(RuntimeError, r"divisible by the square of upscale_factor",
               r"input.size\(-3\)=6 is not divisible by 4"):
        rt.nnf_pixel_shuffle(x, 2)
    with fails(RuntimeError, r"Got 6 channels and 4 groups"):
        rt.torch_channel_shuffle(x, 4)
    with fails(RuntimeError, r"Found an invalid max index: 9", r"of size 2x2"):
        rt.nnf_max_unpool2d(rt.torch_ones(1, 1, 1, 1),
                            rt.torch_tensor(np.array([[[[9]]]])), 2)
    with fails(RuntimeError, r"pool height 3 too large relative to input height 4"):
        rt.nnf_fractional_max_pool2d(rt.torch_randn(1, 1, 4, 4), 3, output_size=(3, 2))
    with fails(RuntimeError, r"input_lengths to have value at most 6, but got value 9"):
        rt.nnf_ctc_loss(rt.torch_randn(6, 1, 3), rt.torch_tensor(np.array([[1]])), [9], [1])
    with fails(RuntimeError, r"pdist only supports 2D tensors, got: 3D"):
        rt.torch_pdist(rt.torch_randn(2, 2, 2))
    with fails(RuntimeError, r"Channel axis out of range", r"Got: 2 Expected: < 2"):
        rt.torch_quantize_per_channel(rt.torch_randn(2, 2), rt.torch_ones(2),
                                      rt.torch_zeros(2), 2, rt.torch_quint8())
    state.check()


def test_e59_packed_sequences(state):
    x = rt.torch_randn(4, 3, 2)
    with fails(RuntimeError, r"sorted in decreasing order", r"enforce_sorted=False"):
        rt.nn_utils_rnn_pack_padded_sequence(x, [2, 4, 3])
    with fails(RuntimeError, r"Length of all samples has to be greater than 0"):
        rt.nn_utils_rnn_pack_padded_sequence(x, [4, 2, 0])
    with fails(TypeError, r"expected a PackedSequence", r"got Tensor"):
        rt.nn_utils_rnn_pad_packed_sequence(x)
    state.check()


def test_e60_distributions(state):
    with fails(ValueError, r"Either `probs` or `logits` must be specified, but not both"):
        rt.distr_bernoulli(0.5, 0.2)
    with fails(ValueError, r"Either `probs` or `logits`"):
        rt.distr_categorical()
    with fails(ValueError, r"Exactly one of covariance_matrix or precision_matrix or "
               r"scale_tril"):
        rt.distr_multivariate_normal(rt.torch_zeros(2))
    with fails(ValueError, r"must be within the support"):
        rt.distr_poisson(rt.torch_tensor([2.0]), validate_args=True).log_prob(
            rt.torch_tensor([-1.0]))
    with fails(NotImplementedError, r"torch_Categorical has no entropy\(\)"):
        rt.distr_categorical(rt.torch_tensor([0.5, 0.5])).entropy()
    state.check()


def test_e61_ignite_optimizers(state):
    from rtorch_py.r.optim_api import ignite_load_state_dict, ignite_set_param_groups
    a = rt.torch_randn(2, requires_grad=True)
    with fails(ValueError, r"required optimization parameter lr"):
        rt.optim_ignite_sgd([a])
    with fails(ValueError, r"Invalid beta parameter at index 1: 1.5"):
        rt.optim_ignite_adam([a], betas=(0.9, 1.5))
    opt = rt.optim_ignite_sgd([a], lr=0.1, momentum=0.9)
    with fails(ValueError, r"Cannot change the parameter groups",
               r"add_param_group\(\)"):
        ignite_set_param_groups(opt, [{**opt.defaults, "params": [rt.torch_randn(2)]}])
    with fails(ValueError, r"Parameter groups must include names 'params, lr, momentum",
               r"but only included 'params, lr'"):
        ignite_set_param_groups(opt, [{"params": [a], "lr": 0.1}])
    with fails(ValueError, r"must be a list with elements 'param_groups' and 'state'"):
        ignite_load_state_dict(opt, rt.NamedList(["state"], [[]]))
    a.grad = rt.torch_ones(2)
    opt.step()
    groups = [rt.NamedList(["params", *opt.defaults],
                           [np.array([1]), *opt.defaults.values()])]
    with fails(ValueError, r"missing states for parameters 1\."):
        ignite_load_state_dict(opt, rt.NamedList(["param_groups", "state"],
                                                 [groups, rt.NamedList([], [])]))
    wrong = rt.NamedList(["1"], [rt.NamedList(["sum"], [rt.torch_ones(2)])])
    with fails(ValueError, r"The 1-th state has elements with names momentum_buffer but got "
                           r"sum\."):
        ignite_load_state_dict(opt, rt.NamedList(["param_groups", "state"], [groups, wrong]))
    state.check()


def test_e62_call_torch_function_of_no_torch_function(state):
    x = rt.torch_ones(2)
    with fails(ValueError, r"Only functions prefixed with 'torch_'"):
        rt.call_torch_function("nnf_relu", x, quiet=True)
    with fails(ValueError, r"No function named torch_nope can be found"):
        rt.call_torch_function("torch_nope", quiet=True)
    state.check()


# E71-E73 R torch's formals

def test_e71_e72_arguments_r_torch_does_not_have(state):
    # E71 is R's own: the closures R matches a call against have R torch's formals
    from rtorch_py.r import api, closures, tables
    shape = closures.function_shape
    assert shape("torch_std", api._TABLES).formals == \
        "alist(self = , dim = , unbiased = TRUE, keepdim = FALSE)"  # (no correction)
    assert shape("reshape", api._TABLES, "method").formals == "alist(shape = )"
    # E72: what the closure sends from a `...` R torch keeps empty
    table = tables.build()
    x = rt.torch_randn(3, 4)
    with fails(TypeError, r"^`...` must be empty", r"\* \.\.1"):
        table["FUNCTIONS"]["linalg_lstsq"](rt.torch_randn(3, 3), rt.torch_randn(3, 2), None,
                                           "gelsy")
    with fails(TypeError, r"`...` must be empty", r"\* foo"):
        table["FUNCTIONS"]["torch_normal"](0, 1, size=2, foo=1)
    np.testing.assert_allclose(x.std(dim=0, correction=0).data,  # (Python: PyTorch's)
                               x.data.std(axis=0), rtol=1e-5)
    state.check()


def test_e73_out_dtype_on_the_cpu(state):
    a, b = rt.torch_randn(2, 3), rt.torch_randn(3, 2)
    with fails(NotImplementedError, r"Could not run 'aten::mm.dtype'", r"CUDA devices only"):
        rt.torch_mm(a, b, out_dtype=rt.torch_float32())
    with fails(NotImplementedError, r"'aten::baddbmm.dtype'"):
        rt.torch_baddbmm(rt.torch_zeros(1, 2, 2), a[None], b[None], out_dtype=rt.torch_float32())
    state.check()


# E75 TorchScript

def test_e75_jit_save_for_mobile_of_an_operator_it_does_not_compile(state, tmp_path):
    from rtorch_py.jit import jit_save_for_mobile
    tr = rt.jit_trace(lambda x: rt.torch_relu(x).cumsum(0), rt.torch_ones(2))
    with fails(RuntimeError, r"jit_save_for_mobile: the operator aten::cumsum is not given to the "
                             r"lite interpreter here", r"OVERLOADS", r"jit_save\(\) writes"):
        jit_save_for_mobile(tr, tmp_path / "cumsum.pt")
    assert not (tmp_path / "cumsum.pt").exists()
    state.check()


# E53 forward mode

def test_e53_forward_mode_misuse(state):
    from rtorch_py.forward_ad import dual_level, make_dual, unpack_dual
    x = rt.torch_tensor([1.0, 2.0])
    with fails(RuntimeError, r"make_dual: no dual level is active", r"with_dual_level"):
        make_dual(x, x)
    square = rt.autograd_function(lambda ctx, x: x * x, lambda ctx, g: {"x": g},
                                  name="square")
    wrong = rt.autograd_function(lambda ctx, x: x * x, lambda ctx, g: {"x": g},
                                 jvp=lambda ctx, x: rt.torch_ones(3))
    two = rt.autograd_function(lambda ctx, x: x * x, lambda ctx, g: {"x": g},
                               jvp=lambda ctx, x: [x, x])
    with dual_level():
        with fails(RuntimeError, r"tangent's shape \[3\] differs from the primal's \[2\]"):
            make_dual(x, rt.torch_ones(3))
        with fails(TypeError, r"only floating point tensors have tangents",
                   r"primal torch_Long"):
            make_dual(rt.torch_tensor([1, 2]), x)
        with fails(RuntimeError, r"a dual level is already active", r"nested"):
            with dual_level():
                pass
        d = make_dual(x, rt.torch_ones(2))
        with fails(RuntimeError, r"custom function 'square' has a dual input", r"no jvp",
                   r"jvp staticmethod"):
            square(d)
        with fails(RuntimeError, r"jvp returned a tangent of shape \[3\] for output 1, whose "
                   r"shape is \[2\]"):
            wrong(d)
        with fails(RuntimeError, r"jvp returned 2 tangents for 1 outputs"):
            two(d)
        w = make_dual(rt.torch_tensor([1.0, 2.0], requires_grad=True), rt.torch_ones(2))
        with fails(RuntimeError, r"create_graph = TRUE of a dual tensor", r"not supported",
                   r"reverse mode twice"):
            rt.autograd_grad([(w * w).sum()], [w], create_graph=True)
    with dual_level():  # (the level closed cleanly after each error)
        assert unpack_dual(make_dual(x, x) * 2).tangent.tolist() == [2.0, 4.0]
    state.check()


# --------------------------------------------------------------------------
# E54-E57 the functional API, gradgradcheck, the graph (issue 22)


def test_e54_functional_api_given_what_it_cannot_use(state):
    x = rt.torch_tensor([1.0, 2.0, 3.0])
    with fails(TypeError, r"autograd_jacobian: inputs must be a tensor or a list of tensors",
               "got str"):
        rt.autograd_jacobian(lambda a: a, "x")
    with fails(RuntimeError, r"v\[0\] has shape \[2\] but must have the shape of its tensor, "
               r"\[3\]"):
        rt.autograd_vjp(lambda a: a * 2, x, rt.torch_ones(2))
    with fails(RuntimeError, "v may be omitted only when the function returns a "
               "single-element tensor"):
        rt.autograd_vjp(lambda a: a * 2, x)
    with fails(RuntimeError, r"autograd_hessian: the function must return a single tensor "
               r"with one element \(a scalar\), got shape \[3\]"):
        rt.autograd_hessian(lambda a: a * 2, x)
    with fails(ValueError, 'strategy must be "reverse" or "forward"', "got 'sideways'"):
        rt.autograd_jacobian(lambda a: a, x, strategy="sideways")
    with fails(RuntimeError, r"independent of input 1 \(strict = TRUE\)"):
        rt.autograd_jacobian(lambda a, b: a * 2, (x, x * 1), strict=True)
    state.check()


def test_e55_vectorize_on_a_function_that_mixes_rows(state):
    x = rt.torch_tensor([1.0, 2.0, 3.0])
    with fails(RuntimeError, r"does not treat a leading batch dim row by row: given 2 stacked "
               r"copies of its inputs it returned shape \[2, 3\], not \[2, 2\]",
               r"sum\(dim = -1\) rather than sum\(\)", "or use vectorize = FALSE"):
        rt.autograd_jacobian(lambda a: a[0:2], x, vectorize=True)
    with fails(RuntimeError, "its stacked rows are not independent"):
        rt.autograd_jacobian(lambda a: a * a.max(), x, vectorize=True)
    with fails(RuntimeError) as info:
        rt.autograd_jacobian(lambda a: a.mm(rt.torch_ones(3, 1)), x.reshape(1, 3),
                             vectorize=True)  # (mm takes matrices, not a stack of them)
    assert "raised in autograd_jacobian(vectorize = TRUE)" in notes(info)
    state.check()


def test_e56_double_backward_silently_wrong(state):
    def forward(ctx, x):
        ctx.x2 = x * x
        return x * x * x
    cube = rt.autograd_function(forward=forward, name="cube",
                                backward=lambda ctx, g: {"x": g * 3 * ctx.x2})
    x = rt.torch_tensor([0.5, -1.5], dtype=rt.torch_float64(), requires_grad=True)
    assert rt.autograd_gradcheck(cube, [x])
    with fails(rt.GradcheckError, "custom function cube keeps x2 on ctx as plain attributes",
               "without its history", "silently wrong",
               r"ctx\$save_for_backward\(x = x\)", "ctx.save_for_backward",
               "second derivatives disagree with finite differences"):
        rt.autograd_gradgradcheck(cube, [x])
    state.check()


def test_e57_graph_of_a_tensor_without_one(state):
    with fails(ValueError, "output 0 does not require grad, so it has no backward graph",
               "requires_grad = TRUE"):
        rt.autograd_graph(rt.torch_ones(2) * 2)
    with fails(TypeError, r"outputs\[0\] is a str, expected a tensor"):
        rt.autograd_graph(["y"])
    state.check()


# E63-E66 the sparse layouts


def test_e63_a_block_size_that_does_not_fit(state):
    x = rt.torch_randn(2, 3)
    with fails(RuntimeError, r"dense_to_sparse_bsr: tensor sparse size \(2,3\) must be "
                             r"divisible by given blocksize \(2,2\)"):
        x.to_sparse_bsr((2, 2))
    with fails(RuntimeError, r"blocksize needs to be a tuple of size 2, but got 3"):
        x.to_sparse_bsr((1, 1, 1))
    with fails(RuntimeError, r"coo_to_sparse_bsc: tensor sparse size"):
        x.to_sparse().to_sparse_bsc((2, 2))
    with fails(RuntimeError, r"conversion from Strided to SparseBsr without blocksize"):
        x.to_sparse(layout=rt.tensor.sparse_bsr)
    with fails(RuntimeError, r"conversion from Strided to SparseCsr with blocksize"):
        x.to_sparse(layout=rt.tensor.sparse_csr, blocksize=(1, 1))
    state.check()


def test_e64_conversions_libtorch_does_not_make(state):
    x = rt.torch_randn(2, 4)
    with fails(RuntimeError, r"sparse_compressed_to_sparse_csr: expected SparseCsr or "
                             r"SparseCsc layout but got SparseBsr"):
        x.to_sparse_bsr((1, 2)).to_sparse_csr()
    with fails(RuntimeError, r"conversion from SparseBsc to SparseBsr with blocksize changed "
                             r"from \[2, 1\] to \[1, 2\] is not supported"):
        x.to_sparse_bsc((2, 1)).to_sparse_bsr((1, 2))
    with fails(RuntimeError, r"coo_to_sparse_csc: conversion from Sparse to SparseCsc with "
                             r"dense_dim argument given"):
        rt.torch_randn(2, 4, 3).to_sparse(2).to_sparse_csc(dense_dim=1)
    with fails(RuntimeError, r"unexpected same input and output layout"):
        x.to_sparse_csr()._to_sparse_csr()
    with fails(RuntimeError, r"^Expect the same number of specified elements per batch\.$"):
        rt.torch_tensor(np.array([[[1.0, 0], [0, 0]], [[1, 1], [0, 0]]])).to_sparse_csr()
    with fails(RuntimeError, r"dense_to_sparse_csr: dense_dim argument must be in \[0,0\] "
                             r"range, but 1 is given"):
        x.to_sparse_csr(dense_dim=1)
    with fails(RuntimeError, r"coo_to_sparse_csr: conversion from Sparse to SparseCsr for "
                             r"input tensors with sparse_dim\(\)!=2 is not supported"):
        rt.torch_randn(2, 2, 2).to_sparse().to_sparse_csr()
    with fails(RuntimeError, r"conversion from SparseCsr to SparseBsr for batched inputs"):
        rt.torch_ones(2, 2, 2).to_sparse_csr().to_sparse_bsr((1, 1))
    state.check()


def test_e65_a_part_another_layout_has(state):
    x = rt.torch_randn(2, 3)
    with fails(RuntimeError, r"ccol_indices expected sparse column compressed tensor layout "
                             r"but got SparseCsr"):
        x.to_sparse_csr().ccol_indices()
    with fails(RuntimeError, r"crow_indices expected sparse row compressed tensor layout but "
                             r"got SparseCsc"):
        x.to_sparse_csc().crow_indices()
    with fails(RuntimeError, r"aten::_dimI.*'SparseCsrCPU' backend"):
        x.to_sparse_csr()._dimI()
    with fails(RuntimeError, r"aten::_to_dense.*'CPU' backend"):
        x._to_dense()
    with fails(RuntimeError, r"Sparse BSR tensors do not have is_contiguous", r"to_dense\(\)"):
        repr(x.to_sparse_bsr((1, 1)))
    state.check()


def test_e66_sparse_products_masks_resizes_that_do_not_fit(state):
    s = rt.torch_randn(2, 4).to_sparse()
    with fails(RuntimeError, r"sspaddmm: Argument #3: Expected dim 0 size 4, got 5"):
        s.smm(rt.torch_randn(5, 3))
    with fails(RuntimeError, r"expected scalar type Float but found Double"):
        s.smm(rt.torch_randn(4, 3, dtype=rt.torch_float64()))
    with fails(RuntimeError, r"expected 'mat2' to have strided layout"):
        s.smm(rt.torch_randn(4, 3).to_sparse())
    with fails(RuntimeError, r"can only be called on sparse tensors"):
        rt.torch_randn(2, 3).sspaddmm(s, rt.torch_randn(4, 3))
    with fails(RuntimeError, r"operands have incompatible sizes; self has size \[3, 4\] but "
                             r"mask has size \[2, 4\]"):
        rt.torch_randn(3, 4).sparse_mask(s)
    with fails(RuntimeError, r"mask must be a sparse tensor"):
        rt.torch_randn(2, 4).sparse_mask(rt.torch_randn(2, 4))
    with fails(RuntimeError, r"shrinking the size of sparse dimensions \(from \[2, 4\] to "
                             r"\[1, 5\]\)"):
        s.sparse_resize_((1, 5), 2, 0)
    with fails(RuntimeError, r"changing the number of dense dimensions \(from 0 to 1\)"):
        s.sparse_resize_((3, 5, 2), 2, 1)
    state.check()


# E67-E70 memory and view internals, private methods, contrib_sort_vertices


def test_e67_accelerator_or_nested_methods_on_a_cpu_tensor(state):
    x = rt.torch_ones(2)
    with fails(RuntimeError, r"Cannot access accelerator device when none is available"):
        x.pin_memory()
    with fails(RuntimeError, r"Could not run 'aten::record_stream' with arguments from the "
                             r"'CPU' backend"):
        x.record_stream(None)
    for name in ("to_padded_tensor", "_nested_tensor_size", "_nested_tensor_strides",
                 "_nested_tensor_storage_offsets"):
        with fails(RuntimeError, rf"Could not run 'aten::{name}'", r"takes a nested tensor"):
            getattr(x, name)(*((0.0,) if name == "to_padded_tensor" else ()))
    assert x.is_pinned() is False and x.is_distributed() is False
    state.check()


def test_e68_private_methods_given_what_they_dont_take(state):
    with fails(RuntimeError, r"_conj\(\) takes a complex tensor, got torch_Float",
               r"use conj\(\)"):
        rt.torch_ones(2)._conj()
    with fails(RuntimeError, r"_is_all_true\(\) takes a bool tensor", r"use all\(\)"):
        rt.torch_ones(2)._is_all_true()
    with fails(RuntimeError, r"_is_any_true\(\) takes a bool tensor"):
        rt.torch_ones(2)._is_any_true()
    with fails(RuntimeError, r"nonzero_static: 'size' must be an non-negative integer"):
        rt.torch_ones(2).nonzero_static(size=-1)
    state.check()


def test_e69_set_or_scatter_onto_memory_that_does_not_fit(state):
    x = rt.torch_arange(6.0)
    with fails(RuntimeError, r"Could not set tensor of type float64 to a tensor of type "
                             r"float32"):
        rt.torch_zeros(2).set_(rt.torch_ones(2, dtype=rt.torch_float64()))
    with fails(RuntimeError, r"sizes \[3, 3\], strides \[3, 1\] and storage offset 0 need 9 "
                             r"elements, but the storage has 6"):
        rt.torch_empty(0).set_(x.storage(), 0, (3, 3))
    with fails(RuntimeError, r"leaf Variable that requires grad"):
        state.w.set_(rt.torch_ones(3))
    y = state.w * 1
    with fails(RuntimeError, r"set_\(\) of a tensor that requires grad is not supported",
               r"detach\(\)"):
        y.set_(rt.torch_ones(3))
    with fails(RuntimeError, r"src size = \[3\], slice size = \[2\]"):
        rt.torch_ones(2, 2).as_strided_scatter(rt.torch_ones(3), (2,), (1,))
    state.check()


def test_e70_contrib_sort_vertices_given_the_wrong_tensors(state):
    v, m = rt.torch_zeros(1, 2, 24, 2), rt.torch_zeros(1, 2, 24, dtype=rt.torch_bool())
    nv = rt.torch_zeros(1, 2, dtype=rt.torch_int())
    with fails(RuntimeError, r"num_valid must be an int32 tensor \(torch_int\(\)\) of shape "
                             r"\[1, 2\], got torch_Long of shape \[1, 2\]"):
        rt.contrib_sort_vertices(v, m, rt.torch_zeros(1, 2, dtype=rt.torch_long()))
    with fails(RuntimeError, r"vertices must be a float32 tensor of shape \(B, N, M, 2\)"):
        rt.contrib_sort_vertices(rt.torch_zeros(1, 2, 24), m, nv)
    with fails(RuntimeError, r"mask must be a bool tensor of shape \[1, 2, 24\]"):
        rt.contrib_sort_vertices(v, rt.torch_zeros(1, 2, 24), nv)
    state.check()


# E79 the distributions' constraints (numerics, issue 18)


def test_e79_constraint_checks(state):
    with fails(ValueError, r"Expected value\$dim\(\) >= 1 but got 0"):
        distributions.constraint_real_vector.check(rt.torch_ones(2).sum())
    with fails(NotImplementedError, r"check\(\) is not implemented for this constraint"):
        distributions.Constraint().check(rt.torch_ones(2))
    state.check()


# E80 R values an argument's declared type refuses (R only: rtorch_py.r.binding)

def test_e80_an_r_value_an_argument_cannot_take(state):
    from rtorch_py.r import tables
    table = tables.build()
    x = rt.torch_randn(3)
    with fails(TypeError, r"torch_maximum\(\): `other` must be a tensor \(or an R number",
               r"not a character string"):
        table["FUNCTIONS"]["torch_maximum"](x, "0")
    with fails(TypeError, r"torch_stack\(\): `tensors` must be a list of tensors, not a "
               r"character string"):
        table["FUNCTIONS"]["torch_stack"]("a")
    with fails(TypeError, r"torch_stack\(\): `tensors\[\[2\]\]` must be a tensor"):
        table["FUNCTIONS"]["torch_stack"]([x, "a"])
    with fails(TypeError, r"expected an integer n, got a character string"):
        table["FUNCTIONS"]["torch_randperm"]("a")
    with fails(ValueError, r"expected an integer n, got 2.5"):
        table["FUNCTIONS"]["torch_randperm"](2.5)
    state.check()


def test_e80_a_size_that_is_not_a_number(state):
    with fails(TypeError, r"size must be whole numbers, got the string 'a' at position 2"):
        rt.torch_zeros(2, "a")
    state.check()


# E81 layer norm's normalized shape against the input, its weight and bias

def test_e81_layer_norm_normalized_shape(state):
    from rtorch_py.nn import functional as F
    x = rt.torch_randn(2, 3, 4, requires_grad=True)
    with fails(RuntimeError, r"Given normalized_shape=\[3, 5\], expected input with shape "
               r"\[\*, 3, 5\], but got input of size\[2, 3, 4\]"):
        F.nnf_layer_norm(x, (3, 5))
    with fails(RuntimeError, r"Expected weight to be of same shape as normalized_shape, but "
               r"got weight of shape \[4\] and normalized_shape = \[3, 4\]"):
        F.nnf_layer_norm(x, (3, 4), rt.torch_ones(4))
    with fails(RuntimeError, r"Expected bias to be of same shape"):
        F.nnf_layer_norm(x, (4,), None, rt.torch_ones(3))
    state.check()


# E82 a required argument left out: Python's own message, said R's way to R

def test_e82_a_required_argument_left_out(state):
    from rtorch_py.r.convert import _error_message
    x = rt.torch_randn(3, requires_grad=True)
    with fails(TypeError, r"add\(\) missing 1 required positional argument: 'other'"):
        rt.torch_add(x)
    with fails(TypeError, r"missing 1 required positional argument: 'out_features'"):
        rt.nn_linear(3)
    try:
        x.add()
    except TypeError as e:
        assert _error_message(e) == 'argument "other" is missing, with no default'
    two = TypeError("f() missing 2 required positional arguments: 'a' and 'b'")
    assert _error_message(two) == 'argument "a" is missing, with no default'
    other = TypeError("unsupported operand type(s) for +: 'int' and 'str'")
    assert _error_message(other) == str(other)  # (only the missing-argument words change)
    state.check()


# E83 a convolution's input channels against its weight (libtorch's words)

def test_e83_convolution_channels(state):
    conv = rt.nn_conv2d(3, 8, 3)
    with fails(RuntimeError, r"Given groups=1, weight of size \[8, 3, 3, 3\], expected "
               r"input\[1, 1, 28, 28\] to have 3 channels, but got 1 channels instead"):
        conv(rt.torch_randn(1, 1, 28, 28))
    with fails(RuntimeError, r"Given transposed=1, weight of size \[4, 2, 3, 3\], expected "
               r"input\[1, 3, 5, 5\] to have 4 channels, but got 3 channels instead"):
        rt.torch_conv_transpose2d(rt.torch_randn(1, 3, 5, 5), rt.torch_randn(4, 2, 3, 3))
    with fails(RuntimeError, r"expected weight to be divisible by 2 at dimension 0, but got "
               r"weight of size \[\[3, 1, 3, 3\]\] instead"):
        rt.torch_conv2d(rt.torch_randn(1, 2, 5, 5), rt.torch_randn(3, 1, 3, 3), groups=2)
    assert conv(rt.torch_randn(1, 3, 5, 5)).shape == (1, 8, 3, 3)  # (the layer still works)
    state.check()


# E84 an optimizer's setting out of range (PyTorch's words from Python; R's in test-errors.R)

def test_e84_optimizer_setting_out_of_range(state):
    from rtorch_py.r.optim_api import failed_check
    a = rt.torch_randn(2, requires_grad=True)
    with fails(ValueError, r"^Invalid learning rate: -1$"):
        rt.optim_adam([a], lr=-1)
    with fails(ValueError, r"^Nesterov momentum requires a momentum and zero dampening$"):
        rt.optim_sgd([a], lr=0.1, nesterov=True)
    with fails(ValueError, r"^Invalid beta parameter at index 0: 1.5$"):
        rt.optim_adamw([a], betas=(1.5, 0.9))
    with fails(TypeError, r"optim_adam\(\): `lr` must be a number"):
        failed_check("optim_adam", rt.NamedList(["lr"], ["a"]))
    opt = rt.optim_adam([a], lr=0.1)  # (a good setting still makes an optimizer)
    a.grad = rt.torch_ones(2)
    opt.step()
    state.check()


# E85 gradient clipping given what it can't use

def test_e85_clip_grad_arguments(state):
    w = state.w
    with fails(TypeError, r"nn_utils_clip_grad_norm_: parameters must be tensors", r"got 3 among"):
        rt.nn_utils_clip_grad_norm_([w, 3], 1.0)
    with fails(TypeError, r"nn_utils_clip_grad_norm_: max_norm must be a number, got 'a'"):
        rt.nn_utils_clip_grad_norm_([w], "a")
    with fails(TypeError, r"nn_utils_clip_grad_value_: clip_value must be a number, got None"):
        rt.nn_utils_clip_grad_value_([w], None)
    state.check()


# E86 a recurrent layer given an input or state that doesn't fit

def test_e86_recurrent_layer_input(state):
    lstm = rt.nn_lstm(3, 4)
    with fails(ValueError, r"nn_lstm: input.size\(-1\) must be equal to input_size",
               r"Expected 3, got 4"):
        lstm(rt.torch_randn(5, 2, 4))
    with fails(ValueError, r"nn_gru: expected an input of 2 dims", r"\[5, 2, 2, 3\]"):
        rt.nn_gru(3, 4)(rt.torch_randn(5, 2, 2, 3))
    with fails(ValueError, r"nn_lstm: hx must be two tensors", r"got 1"):
        lstm(rt.torch_randn(5, 2, 3), [rt.torch_zeros(1, 2, 4)])
    assert lstm(rt.torch_randn(5, 2, 3))[0].shape == (5, 2, 4)  # (the layer still works)
    state.check()

