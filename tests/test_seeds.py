"""Every example of the seed documents, translated line for line into Python
(0-based dims), checked against PyTorch as the oracle."""
import numpy as np
import pytest
import torch

import rtorch_py as rt


# -- seed 000/001: autograd_function reference, `exp2` ------------------------

def exp2_forward(ctx, i):
    result = i.exp()
    ctx.save_for_backward(result=result)
    return result


def exp2_backward(ctx, grad_output):
    return {"i": grad_output * ctx.saved_variable.result}


exp2 = rt.autograd_function(forward=exp2_forward, backward=exp2_backward)


def test_exp2_reference_example():
    x = rt.torch_tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = exp2(x)
    g = rt.torch_tensor([1.0, 2.0, 3.0])
    y.backward(g)
    tx = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    tx.exp().backward(torch.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(y.detach().numpy(), tx.exp().detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_saved_variable_and_saved_variables_are_the_same():
    seen = {}

    def fwd(ctx, i):
        ctx.save_for_backward(result=i.exp(), k=3)
        return i.exp()

    def bwd(ctx, g):
        seen["a"] = ctx.saved_variable
        seen["b"] = ctx.saved_variables
        return {"i": g * ctx.saved_variables["result"] * 1}

    f = rt.autograd_function(fwd, bwd)
    x = rt.torch_tensor([1.0], requires_grad=True)
    f(x).backward()
    assert seen["a"].names() == seen["b"].names() == ["result", "k"]
    assert seen["a"].k == 3 and seen["b"][1] == 3


# -- seeds 002/003: Extending autograd, `linear` and `mul_constant` -------------

def linear_forward(ctx, input, weight, bias=None):
    ctx.save_for_backward(input=input, weight=weight, bias=bias)
    output = input.mm(weight.t())
    if bias is not None:
        output = output + bias.unsqueeze(0).expand_as(output)
    return output


def linear_backward(ctx, grad_output):
    s = ctx.saved_variables
    grads = {"input": None, "weight": None, "bias": None}
    if ctx.needs_input_grad["input"]:
        grads["input"] = grad_output.mm(s["weight"])
    if ctx.needs_input_grad.weight:
        grads["weight"] = grad_output.t().mm(s["input"])
    if s["bias"] is not None and ctx.needs_input_grad["bias"]:
        grads["bias"] = grad_output.sum(dim=0)
    return grads


linear = rt.autograd_function(forward=linear_forward, backward=linear_backward)


def _torch_linear(x, w, b=None):
    out = x.mm(w.t())
    return out if b is None else out + b


@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("needs", [(True, True, True), (False, True, True),
                                   (True, False, False), (True, True, False)])
def test_linear_matches_pytorch(with_bias, needs):
    rng = np.random.default_rng(0)
    xa, wa, ba = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5,))
    ga = rng.normal(size=(4, 5))
    x, w, b = (rt.torch_tensor(a, requires_grad=n) for a, n in zip((xa, wa, ba), needs))
    tx, tw, tb = (torch.tensor(a, requires_grad=n) for a, n in zip((xa, wa, ba), needs))
    if not any(needs[:2 + with_bias]):
        return
    out = linear(x, w, b) if with_bias else linear(x, w)
    tout = _torch_linear(tx, tw, tb if with_bias else None)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    out.backward(rt.torch_tensor(ga))
    tout.backward(torch.tensor(ga))
    for ours, theirs in ((x, tx), (w, tw), (b, tb)):
        if theirs.grad is None:
            assert ours.grad is None
        else:
            np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_linear_needs_input_grad_is_named():
    seen = {}

    def bwd(ctx, g):
        seen["names"] = ctx.needs_input_grad.names()
        seen["values"] = list(ctx.needs_input_grad)
        return linear_backward(ctx, g)

    f = rt.autograd_function(linear_forward, bwd)
    x = rt.torch_randn(2, 3)
    w = rt.torch_randn(4, 3, requires_grad=True)
    f(x, w).sum().backward()
    assert seen == {"names": ["input", "weight", "bias"], "values": [False, True, False]}


def mul_constant_forward(ctx, tensor, constant):
    ctx.save_for_backward(constant=constant)
    return tensor * constant


def mul_constant_backward(ctx, grad_output):
    v = ctx.saved_variables
    return {"tensor": grad_output * v.constant}


mul_constant = rt.autograd_function(forward=mul_constant_forward,
                                    backward=mul_constant_backward)


def test_mul_constant_prints_as_the_seed_shows():
    x = rt.torch_tensor(1.0, requires_grad=True)
    o = mul_constant(x, 2)
    o.backward()
    assert str(x.grad) == "torch_tensor\n 2\n[ CPUFloatType{1} ]"
    assert x.grad.dtype == rt.torch_float()


def test_mul_constant_keeps_constant_unchanged():
    seen = {}

    def bwd(ctx, g):
        seen["c"] = ctx.saved_variables.constant
        return mul_constant_backward(ctx, g)

    f = rt.autograd_function(mul_constant_forward, bwd)
    x = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    f(x, 2.5).sum().backward()
    assert seen["c"] == 2.5 and type(seen["c"]) is float
    np.testing.assert_allclose(x.grad.numpy(), [2.5, 2.5])


# -- seed 004: PyTorch-style Function, both styles ------------------------------

class ExpCombined(rt.Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return (grad_output.mul(result),)


class ExpSeparate(rt.Function):
    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return (grad_output.mul(result),)


@pytest.mark.parametrize("cls", [ExpCombined, ExpSeparate])
def test_function_class_styles(cls):
    data = [[0.1, -0.4], [1.2, 0.0]]
    x = rt.torch_tensor(data, requires_grad=True)
    y = cls.apply(x)
    assert y.grad_fn.name == cls.__name__ + "Backward"
    y.backward(rt.torch_ones_like(y))
    tx = torch.tensor(data, requires_grad=True)
    tx.exp().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    # and the R-style exp2 agrees with both
    x2 = rt.torch_tensor(data, requires_grad=True)
    exp2(x2).sum().backward()
    np.testing.assert_allclose(x2.grad.numpy(), x.grad.numpy(), rtol=1e-7)


def test_function_class_needs_input_grad_is_a_tuple():
    seen = {}

    class Mul(rt.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            seen["needs"] = ctx.needs_input_grad
            a, b = ctx.saved_tensors
            return g * b, g * a

    a = rt.torch_tensor([2.0], requires_grad=True)
    b = rt.torch_tensor([3.0])
    Mul.apply(a, b).backward()
    assert seen["needs"] == (True, False)
    np.testing.assert_allclose(a.grad.numpy(), [3.0])
    assert b.grad is None
