"""Python twin of 08-jacobians-hessians-and-the-graph.Rmd: autograd_jvp, a Jacobian
(both strategies), a Hessian and an hvp, gradgradcheck catching an intermediate saved
from forward, and the node names of a graph's picture; PyTorch's torch.func and
torch.autograd.functional on the same functions.

Quantity names are the R expressions checked after each R chunk.
"""
from __future__ import annotations

import re
from typing import Any

import rtorch_py as rt

X = [0.5, 1.0, 2.0]
U = [1.0, 0.0, -1.0]
W = [[0.5, -1.0, 0.25], [2.0, 0.1, -0.3]]
B = [0.1, -0.2]
X_LAYER = [1.0, -0.5, 2.0]
V = [-1.5, 0.5, 2.0]
INPUT = [[0.1, 0.2, 0.3], [-0.1, 0.0, 0.1]]
WEIGHT = [[1.0, -1.0], [0.5, 0.5], [0.0, 2.0]]
BIAS = [0.5, -0.5]

BACKWARD_NAMES = r"[A-Za-z]+Backward[0-9]+"
R_EXPR = {"graph nodes": 'paste(sort(unique(regmatches(g$dot, gregexpr("'
                         + BACKWARD_NAMES + '", g$dot))[[1]])), collapse = " ")'}


def f(x: Any) -> Any:
    return x.sin() * x ** 2


def rosenbrock(x: Any) -> Any:
    return (1 - x[..., 0]) ** 2 + 100 * (x[..., 1] - x[..., 0] ** 2) ** 2


def cube_saving(intermediate: bool) -> Any:
    def forward(ctx: Any, x: rt.Tensor) -> rt.Tensor:
        if intermediate:
            ctx.save_for_backward(x2=x ** 2)
        else:
            ctx.save_for_backward(x=x)
        return x ** 3

    def backward(ctx: Any, grad_output: rt.Tensor) -> dict:
        s = ctx.saved_variables
        x2 = s.x2 if intermediate else s.x ** 2
        return {"x": grad_output * 3 * x2}
    return rt.autograd_function(forward=forward, backward=backward)


def linear_exp_forward(ctx: Any, input: rt.Tensor, weight: rt.Tensor) -> rt.Tensor:
    result = input.mm(weight).exp()
    ctx.save_for_backward(input=input, weight=weight, result=result)
    return result


def linear_exp_backward(ctx: Any, grad_output: rt.Tensor) -> dict:
    s = ctx.saved_variables
    g = grad_output * s.result
    return {"input": g.mm(s.weight.t()), "weight": s.input.t().mm(g)}


linear_exp = rt.autograd_function(forward=linear_exp_forward, backward=linear_exp_backward,
                                  name="linear_exp")


def rtorch() -> dict:
    def double(v: Any, requires_grad: bool = False) -> rt.Tensor:
        return rt.torch_tensor(v, dtype=rt.torch_float64(), requires_grad=requires_grad)

    _, jvp = rt.autograd_jvp(f, double(X), double(U))

    w, b = double(W), double(B)

    def layer(x: Any) -> Any:
        return ((w.t() * x.unsqueeze(-1)).sum(dim=-2) + b).tanh()
    J = rt.autograd_jacobian(layer, double(X_LAYER))
    J_fwd = rt.autograd_jacobian(layer, double(X_LAYER), strategy="forward", vectorize=True)

    H = rt.autograd_hessian(rosenbrock, double([1.0, 1.0]), vectorize=True)
    _, hv = rt.autograd_hvp(rosenbrock, double([-1.0, 2.0]), double([1.0, 0.0]))

    v = double(V, requires_grad=True)
    first = [rt.autograd_gradcheck(cube_saving(False), [v]),
             rt.autograd_gradcheck(cube_saving(True), [v])]
    second = [rt.autograd_gradgradcheck(cube_saving(False), [v]),
              rt.autograd_gradgradcheck(cube_saving(True), [v], raise_exception=False)]

    input = rt.torch_tensor(INPUT, requires_grad=True)
    weight = rt.torch_tensor(WEIGHT, requires_grad=True)
    bias = rt.torch_tensor(BIAS, requires_grad=True)
    loss = (linear_exp(input, weight) + bias).pow(2).mean()
    g = rt.autograd_graph(loss, params={"input": input, "weight": weight, "bias": bias})
    nodes = " ".join(sorted(set(re.findall(BACKWARD_NAMES, g.source))))
    return {"directional-derivative": {"r$jvp": jvp},
            "jacobian": {"J": J, "J_fwd": J_fwd},
            "hessian": {"H": H, "hv": hv},
            "gradgradcheck": {"first": first, "second": second},
            "graph": {"graph nodes": nodes}}


def pytorch() -> dict:
    import torch
    from torch.autograd import Function, gradcheck, gradgradcheck
    from torch.autograd.functional import hessian, hvp, jacobian

    def double(v: Any, requires_grad: bool = False) -> Any:
        return torch.tensor(v, dtype=torch.float64, requires_grad=requires_grad)

    _, jvp = torch.func.jvp(f, (double(X),), (double(U),))

    w, b = double(W), double(B)

    def layer(x: Any) -> Any:
        return (w @ x + b).tanh()
    J = jacobian(layer, double(X_LAYER))
    J_fwd = jacobian(layer, double(X_LAYER), strategy="forward-mode", vectorize=True)
    H = hessian(rosenbrock, double([1.0, 1.0]))
    _, hv = hvp(rosenbrock, double([-1.0, 2.0]), double([1.0, 0.0]))

    def cube_class(intermediate: bool) -> Any:
        class Cube(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x ** 2 if intermediate else x)
                return x ** 3

            @staticmethod
            def backward(ctx, grad_output):
                (s,) = ctx.saved_tensors
                return grad_output * 3 * (s if intermediate else s ** 2)
        return Cube.apply

    v = double(V, requires_grad=True)
    first = [gradcheck(cube_class(False), (v,)), gradcheck(cube_class(True), (v,))]
    second = [gradgradcheck(cube_class(False), (v,)),
              gradgradcheck(cube_class(True), (v,), raise_exception=False)]

    class LinearExp(Function):
        @staticmethod
        def forward(ctx, input, weight):
            result = input.mm(weight).exp()
            ctx.save_for_backward(input, weight, result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, result = ctx.saved_tensors
            g = grad_output * result
            return g.mm(weight.t()), input.t().mm(g)

    input = torch.tensor(INPUT, requires_grad=True)
    weight = torch.tensor(WEIGHT, requires_grad=True)
    bias = torch.tensor(BIAS, requires_grad=True)
    loss = (LinearExp.apply(input, weight) + bias).pow(2).mean()
    names, stack = set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        names.add(type(node).__name__)
        stack.extend(n for n, _ in node.next_functions if n is not None)
    nodes = " ".join(sorted(n for n in names if re.fullmatch(BACKWARD_NAMES, n)))
    return {"directional-derivative": {"r$jvp": jvp},
            "jacobian": {"J": J, "J_fwd": J_fwd},
            "hessian": {"H": H, "hv": hv},
            "gradgradcheck": {"first": first, "second": second},
            "graph": {"graph nodes": nodes}}


if __name__ == "__main__":
    for chunk, values in rtorch().items():
        for quantity, value in values.items():
            print(f"## {chunk}: {quantity}\n{value}")
