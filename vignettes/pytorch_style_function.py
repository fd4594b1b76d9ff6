"""Python twin of 05-pytorch-style-function.Rmd: seed 004's `Exp`, as a
PyTorch-style `rt.Function` in both styles, checked against R's `exp2`.

The R chunk computes `y <- exp2(x)` and `x$grad`; each Python style is
compared with those R values and with the same class written for PyTorch.
"""
from __future__ import annotations

from typing import Any

import rtorch_py as rt

X = [-1.0, 0.0, 0.5, 2.0]

# Quantity -> the R expression it is compared with.
R_EXPR = {
    "Exp.apply(x)": "y", "x.grad (Exp)": "x$grad",
    "ExpSetup.apply(x)": "y", "x.grad (ExpSetup)": "x$grad",
    "Exp.apply(x) float64": "y64", "x.grad (Exp) float64": "x64$grad",
    # Python and PyTorch only: the node is named after the class, as in PyTorch
    "grad_fn name (Exp)": None, "grad_fn name (ExpSetup)": None,
}


# Combined style: forward takes ctx and fills it in.
class Exp(rt.Function):
    @staticmethod
    def forward(ctx, x):
        result = x.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return (grad_output.mul(result),)


# Separate style: forward has no ctx; setup_context saves what backward needs.
class ExpSetup(rt.Function):
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


def run(tensor: Any, exp_combined: Any, exp_setup: Any, float64: Any) -> dict:
    values = {}
    for name, fn in (("Exp", exp_combined), ("ExpSetup", exp_setup)):
        x = tensor(X, requires_grad=True)
        y = fn.apply(x)
        node = y.grad_fn
        y.sum().backward()
        values[f"{name}.apply(x)"] = y
        values[f"x.grad ({name})"] = x.grad
        node_name = node.name  # a str in rtorch_py, a method in PyTorch
        values[f"grad_fn name ({name})"] = node_name() if callable(node_name) else node_name
    x64 = tensor(X, dtype=float64, requires_grad=True)
    y64 = exp_combined.apply(x64)
    y64.sum().backward()
    values["Exp.apply(x) float64"] = y64
    values["x.grad (Exp) float64"] = x64.grad
    return {"exp2-in-r": values}


def rtorch() -> dict:
    return run(rt.torch_tensor, Exp, ExpSetup, rt.torch_float64())


def torch_classes() -> tuple:
    """The same two classes, subclassing PyTorch's autograd.Function."""
    import torch

    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output.mul(result)

    class ExpSetup(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output.mul(result)

    return Exp, ExpSetup


def pytorch() -> dict:
    import torch
    return run(torch.tensor, *torch_classes(), torch.float64)


if __name__ == "__main__":
    for quantity, value in rtorch()["exp2-in-r"].items():
        print(f"## {quantity}\n{value}")
