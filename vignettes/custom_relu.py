"""Python twin of 04-custom-relu.Rmd: a ReLU autograd_function, same gradients as
clamp(min=0), and the network of 03-using-autograd trained with it.

Quantity names are the R expressions checked after each R chunk.
"""
from __future__ import annotations

from typing import Any

import rtorch_py as rt
from using_autograd import TOLERANCE as TRAINING_TOLERANCE, draws, train


def relu_forward(ctx: Any, input: rt.Tensor) -> rt.Tensor:
    ctx.save_for_backward(input=input)
    return input.clamp(min=0)


def relu_backward(ctx: Any, grad_output: rt.Tensor) -> dict:
    input = ctx.saved_variables.input
    grad_input = grad_output.clone()
    grad_input[input < 0] = 0
    return {"input": grad_input}


my_relu = rt.autograd_function(forward=relu_forward, backward=relu_backward)

TOLERANCE = TRAINING_TOLERANCE   # the same float32 training as 03-using-autograd


def torch_relu() -> Any:
    """The same function as a PyTorch autograd.Function."""
    import torch

    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, input: Any) -> Any:
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx: Any, grad_output: Any) -> Any:
            (input,) = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    return MyReLU.apply


def gradients(t: Any, relu: Any) -> dict:
    zeros = getattr(t, "torch_zeros", None) or t.zeros
    x, y, w1, w2 = draws(t)   # (R draws the weights again from the state after the data)
    b1 = zeros(1, 32, requires_grad=True)
    b2 = zeros(1, 1, requires_grad=True)
    loss = (relu(x.mm(w1).add(b1)).mm(w2).add(b2) - y).pow(2).mean()
    loss.backward()
    return {"w1": w1.grad, "w2": w2.grad, "b1": b1.grad, "b2": b2.grad}


def run(t: Any, relu: Any) -> dict:
    tensor = getattr(t, "torch_tensor", None) or t.tensor
    h = tensor([-1.0, 0.5, 2.0], requires_grad=True)
    relu(h).sum().backward()

    custom = gradients(t, relu)
    builtin = gradients(t, lambda h: h.clamp(min=0))
    same = {f"custom${k}": v for k, v in custom.items()}
    equal = getattr(t, "torch_equal", None) or t.equal
    same["mapply(torch_equal, custom, builtin)"] = [equal(custom[k], builtin[k]) for k in custom]

    trained = train(t, relu)
    return {"small-example": {"h$grad": h.grad}, "same-gradients": same,
            "train": {**trained["train"], **trained["loss-fell"]}}


def rtorch() -> dict:
    return run(rt, my_relu)


def pytorch() -> dict:
    import torch
    return run(torch, torch_relu())


if __name__ == "__main__":
    for chunk, values in rtorch().items():
        for quantity, value in values.items():
            print(f"## {chunk}: {quantity}\n{value}")
