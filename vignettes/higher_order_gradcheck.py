"""Python twin of 06-higher-order-and-gradcheck.Rmd: second derivatives through
custom functions (create_graph=True) and gradcheck of every custom function of
the vignettes. The functions themselves come from the other twins.

Quantity names are the R expressions checked after each R chunk.
"""
from __future__ import annotations

from typing import Any

import rtorch_py as rt
from autograd_function import exp2
from custom_relu import my_relu, torch_relu
from extending_autograd import linear, mul_constant
from pytorch_style_function import Exp, ExpSetup, torch_classes

V = [-1.5, -0.5, 0.5, 1.5]
INPUT = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
WEIGHT = [[0.5, -1.0], [2.0, 0.25]]
BIAS = [0.1, -0.2]


def cube_forward(ctx: Any, x: rt.Tensor) -> rt.Tensor:
    ctx.save_for_backward(x=x)
    return x ** 3


def cube_backward(ctx: Any, grad_output: rt.Tensor) -> dict:
    x = ctx.saved_variables.x
    return {"x": grad_output * 3 * x ** 2}


cube = rt.autograd_function(forward=cube_forward, backward=cube_backward)

# The PyTorch-style classes of 05 exist only in Python: no R counterpart.
R_EXPR = {"Python classes": None}


def wrong_exp_backward(ctx: Any, grad_output: rt.Tensor) -> dict:
    return {"i": 2 * grad_output * ctx.saved_variables.result}


def exp2_forward(ctx: Any, i: rt.Tensor) -> rt.Tensor:
    result = i.exp()
    ctx.save_for_backward(result=result)
    return result


wrong_exp = rt.autograd_function(forward=exp2_forward, backward=wrong_exp_backward)


def rtorch() -> dict:
    x = rt.torch_tensor([1.0, 2.0, 3.0], requires_grad=True)
    (dy,) = rt.autograd_grad(cube(x).sum(), x, create_graph=True)
    (d2y,) = rt.autograd_grad(dy.sum(), x)
    second = {"dy": dy, "d2y": d2y, "dy$requires_grad": dy.requires_grad}

    x = rt.torch_tensor([0.0, 1.0], requires_grad=True)
    exp2(x).sum().backward(create_graph=True)
    g = x.grad
    (g2,) = rt.autograd_grad(g.sum(), x)
    twice = {"g": g, "g2": g2}

    def double(v: Any) -> rt.Tensor:
        return rt.torch_tensor(v, dtype=rt.torch_float64(), requires_grad=True)

    v, input, weight, bias = double(V), double(INPUT), double(WEIGHT), double(BIAS)
    checks = [rt.autograd_gradcheck(exp2, [v]),
              rt.autograd_gradcheck(cube, [v]),
              rt.autograd_gradcheck(linear, [input, weight, bias]),
              rt.autograd_gradcheck(linear, [input, weight]),
              rt.autograd_gradcheck(lambda t: mul_constant(t, 2), [v]),
              rt.autograd_gradcheck(my_relu, [v])]
    classes = [rt.autograd_gradcheck(Exp.apply, [v]), rt.autograd_gradcheck(ExpSetup.apply, [v])]
    try:
        passed = rt.autograd_gradcheck(wrong_exp, [v])
    except rt.GradcheckError:
        passed = False
    return {"second-derivative": second, "exp2-twice": twice,
            "gradcheck": {"checks": checks, "Python classes": classes},
            "gradcheck-catches": {"passed": passed}}


def pytorch() -> dict:
    import torch
    from torch.autograd import Function, gradcheck

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 3 * x ** 2

    class Exp2(Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    class WrongExp(Exp2):
        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return 2 * grad_output * result

    class Linear(Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            return output if bias is None else output + bias.unsqueeze(0).expand_as(output)

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_bias = grad_output.sum(0) if bias is not None else None
            return grad_output.mm(weight), grad_output.t().mm(input), grad_bias

    class MulConstant(Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (dy,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (d2y,) = torch.autograd.grad(dy.sum(), x)
    second = {"dy": dy, "d2y": d2y, "dy$requires_grad": dy.requires_grad}

    x = torch.tensor([0.0, 1.0], requires_grad=True)
    Exp2.apply(x).sum().backward(create_graph=True)
    g = x.grad
    (g2,) = torch.autograd.grad(g.sum(), x)
    twice = {"g": g, "g2": g2}

    def double(v: Any) -> Any:
        return torch.tensor(v, dtype=torch.float64, requires_grad=True)

    v, input, weight, bias = double(V), double(INPUT), double(WEIGHT), double(BIAS)
    checks = [gradcheck(Exp2.apply, (v,)),
              gradcheck(Cube.apply, (v,)),
              gradcheck(Linear.apply, (input, weight, bias)),
              gradcheck(Linear.apply, (input, weight)),
              gradcheck(lambda t: MulConstant.apply(t, 2), (v,)),
              gradcheck(torch_relu(), (v,))]
    classes = [gradcheck(cls.apply, (v,)) for cls in torch_classes()]
    passed = gradcheck(WrongExp.apply, (v,), raise_exception=False)
    return {"second-derivative": second, "exp2-twice": twice,
            "gradcheck": {"checks": checks, "Python classes": classes},
            "gradcheck-catches": {"passed": passed}}


if __name__ == "__main__":
    for chunk, values in rtorch().items():
        for quantity, value in values.items():
            print(f"## {chunk}: {quantity}\n{value}")
