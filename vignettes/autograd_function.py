"""Python twin of 01-autograd-function.Rmd: `exp2` with rtorch_py (and PyTorch).

Run it directly (`python vignettes/autograd_function.py`) to see the values;
`rtorch-py vignettes` imports it and cross-checks `rtorch()` and `pytorch()`
against the R run, chunk by chunk. Quantity names are the R expressions.
"""
from __future__ import annotations

from typing import Any

import rtorch_py as rt


def exp2_forward(ctx: Any, i: rt.Tensor) -> rt.Tensor:
    result = i.exp()
    ctx.save_for_backward(result=result)
    return result


def exp2_backward(ctx: Any, grad_output: rt.Tensor) -> dict:
    return {"i": grad_output * ctx.saved_variable.result}   # the seed's spelling


exp2 = rt.autograd_function(forward=exp2_forward, backward=exp2_backward)


def rtorch() -> dict:
    x = rt.torch_tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = exp2(x)
    y.sum().backward()
    use = {"y": y, "x$grad": x.grad}

    x2 = rt.torch_tensor([0.0, 1.0, 2.0], requires_grad=True)
    y2 = rt.torch_exp(x2)
    y2.sum().backward()
    builtin = {"y2": y2, "x2$grad": x2.grad}

    x = rt.torch_tensor([0.0, 1.0, 2.0], requires_grad=True)
    exp2(x).backward(gradient=rt.torch_tensor([1.0, 10.0, 100.0]))
    return {"use-exp2": use, "compare-builtin": builtin, "grad-output": {"x$grad": x.grad}}


def pytorch() -> dict:
    import torch

    class Exp2(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, i: torch.Tensor) -> torch.Tensor:
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx: Any, grad_output: torch.Tensor) -> torch.Tensor:
            (result,) = ctx.saved_tensors
            return grad_output * result

    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = Exp2.apply(x)
    y.sum().backward()
    use = {"y": y, "x$grad": x.grad}

    x2 = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y2 = torch.exp(x2)
    y2.sum().backward()
    builtin = {"y2": y2, "x2$grad": x2.grad}

    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    Exp2.apply(x).backward(gradient=torch.tensor([1.0, 10.0, 100.0]))
    return {"use-exp2": use, "compare-builtin": builtin, "grad-output": {"x$grad": x.grad}}


if __name__ == "__main__":
    for chunk, values in rtorch().items():
        for quantity, value in values.items():
            print(f"## {chunk}: {quantity}\n{value}")
