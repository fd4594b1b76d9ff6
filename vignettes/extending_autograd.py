"""Python twin of 02-extending-autograd.Rmd: `linear` and `mul_constant`.

`linear` is the documentation's code unchanged, with its 0-based
`unsqueeze(0)` and `sum(dim=0)`: Python counts dimensions from 0.
Quantity names are the R expressions checked after each R chunk.
"""
from __future__ import annotations

from typing import Any

import rtorch_py as rt


def linear_forward(ctx: Any, input: rt.Tensor, weight: rt.Tensor, bias: rt.Tensor | None = None
                   ) -> rt.Tensor:
    ctx.save_for_backward(input=input, weight=weight, bias=bias)
    output = input.mm(weight.t())
    if bias is not None:
        output = output + bias.unsqueeze(0).expand_as(output)
    return output


def linear_backward(ctx: Any, grad_output: rt.Tensor) -> dict:
    s = ctx.saved_variables
    grads = {"input": None, "weight": None, "bias": None}
    if ctx.needs_input_grad.input:
        grads["input"] = grad_output.mm(s.weight)
    if ctx.needs_input_grad.weight:
        grads["weight"] = grad_output.t().mm(s.input)
    if s.bias is not None and ctx.needs_input_grad.bias:
        grads["bias"] = grad_output.sum(dim=0)
    return grads


linear = rt.autograd_function(forward=linear_forward, backward=linear_backward)


def mul_constant_forward(ctx: Any, tensor: rt.Tensor, constant: float) -> rt.Tensor:
    ctx.save_for_backward(constant=constant)
    return tensor * constant


def mul_constant_backward(ctx: Any, grad_output: rt.Tensor) -> dict:
    v = ctx.saved_variables
    return {"tensor": grad_output * v.constant}


mul_constant = rt.autograd_function(forward=mul_constant_forward, backward=mul_constant_backward)

X = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
W = [[0.5, -1.0], [2.0, 0.25]]
B = [0.1, -0.2]


def rtorch() -> dict:
    x, w, b = (rt.torch_tensor(v, requires_grad=True) for v in (X, W, B))
    out = linear(x, w, b)
    out.pow(2).sum().backward()
    with_bias = {"out": out, "x$grad": x.grad, "w$grad": w.grad, "b$grad": b.grad}

    x0, w0, b0 = (rt.torch_tensor(v, requires_grad=True) for v in (X, W, B))
    (x0.mm(w0.t()) + b0).pow(2).sum().backward()
    builtin = {"x0$grad": x0.grad, "w0$grad": w0.grad, "b0$grad": b0.grad}

    x, w = (rt.torch_tensor(v, requires_grad=True) for v in (X, W))
    linear(x, w).pow(2).sum().backward()
    without_bias = {"x$grad": x.grad, "w$grad": w.grad}

    x, w = rt.torch_tensor(X, requires_grad=True), rt.torch_tensor(W)
    linear(x, w).sum().backward()
    frozen = {"x$grad": x.grad, "is_undefined_tensor(w$grad)": w.grad is None}

    x = rt.torch_tensor(1.0, requires_grad=True)
    o = mul_constant(x, 2)
    o.backward()
    return {"with-bias": with_bias, "builtin": builtin, "without-bias": without_bias,
            "frozen-weight": frozen, "use-mul-constant": {"o": o, "x$grad": x.grad}}


def pytorch() -> dict:
    import torch

    class Linear(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, input: Any, weight: Any, bias: Any = None) -> Any:
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output = output + bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx: Any, grad_output: Any) -> tuple:
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    class MulConstant(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, tensor: Any, constant: float) -> Any:
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx: Any, grad_output: Any) -> tuple:
            return grad_output * ctx.constant, None

    x, w, b = (torch.tensor(v, requires_grad=True) for v in (X, W, B))
    out = Linear.apply(x, w, b)
    out.pow(2).sum().backward()
    with_bias = {"out": out, "x$grad": x.grad, "w$grad": w.grad, "b$grad": b.grad}

    x0, w0, b0 = (torch.tensor(v, requires_grad=True) for v in (X, W, B))
    (x0.mm(w0.t()) + b0).pow(2).sum().backward()
    builtin = {"x0$grad": x0.grad, "w0$grad": w0.grad, "b0$grad": b0.grad}

    x, w = (torch.tensor(v, requires_grad=True) for v in (X, W))
    Linear.apply(x, w).pow(2).sum().backward()
    without_bias = {"x$grad": x.grad, "w$grad": w.grad}

    x, w = torch.tensor(X, requires_grad=True), torch.tensor(W)
    Linear.apply(x, w).sum().backward()
    frozen = {"x$grad": x.grad, "is_undefined_tensor(w$grad)": w.grad is None}

    x = torch.tensor([1.0], requires_grad=True)
    o = MulConstant.apply(x, 2)
    o.backward()
    return {"with-bias": with_bias, "builtin": builtin, "without-bias": without_bias,
            "frozen-weight": frozen, "use-mul-constant": {"o": o, "x$grad": x.grad}}


if __name__ == "__main__":
    for chunk, values in rtorch().items():
        for quantity, value in values.items():
            print(f"## {chunk}: {quantity}\n{value}")
