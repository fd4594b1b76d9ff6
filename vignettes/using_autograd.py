"""Python twin of 03-using-autograd.Rmd: requires_grad, grad_fn, next_functions,
retain_grad() and a two-layer network trained by hand.

Quantity names are the R expressions checked after each R chunk. Node names
are compared only where R and PyTorch agree: an R number in `*` or `+` makes
R torch use libtorch's scalar overloads (MulBackward1, AddBackward1), while
Python numbers become tensors (MulBackward0); the R names are checked in the
R vignette's printed output instead.
"""
from __future__ import annotations

from typing import Any


import rtorch_py as rt

STEPS, LEARNING_RATE, SEED = 200, 1e-4, 2024
# float32 training over 200 steps: NumPy's and libtorch's sums round differently
TOLERANCE = {q: (1e-4, 1e-4) for q in ("losses", "w1", "w2", "b1", "b2")}


def graph(t: Any) -> dict:
    """The graph chunks, written once for rtorch_py (t=rt) and PyTorch (t=torch)."""
    ones = getattr(t, "torch_ones", None) or t.ones
    tensor = getattr(t, "torch_tensor", None) or t.tensor
    name = (lambda node: node.name) if t is rt else (lambda node: type(node).__name__)

    x = ones(2, 2, requires_grad=True)
    y = x.mean()
    requires = {"x$requires_grad": x.requires_grad, "y$requires_grad": y.requires_grad,
                "y$grad_fn": name(y.grad_fn)}
    y.backward()
    first = {"x$grad": x.grad}

    x1 = ones(2, 2, requires_grad=True)
    x2 = tensor([1.1], requires_grad=True)
    y = x1 * (x2 + 2)
    y.retain_grad()
    z = y.pow(2) * 3
    z.retain_grad()
    out = z.mean()
    pow_node = out.grad_fn.next_functions[0][0].next_functions[0][0]
    walk = {"out$grad_fn": name(out.grad_fn),
            "out$grad_fn$next_functions[[1]]$next_functions[[1]]": name(pow_node),
            "out$grad_fn$next_functions[[1]]$next_functions[[1]]$next_functions[[1]]":
                name(pow_node.next_functions[0][0])}
    mul = pow_node.next_functions[0][0]
    leaves = {"length(mul$next_functions)": len(mul.next_functions)}
    out.backward()
    backward = {"z$grad": z.grad, "y$grad": y.grad, "x2$grad": x2.grad, "x1$grad": x1.grad}
    return {"requires-grad": requires, "first-backward": first, "walk-graph": walk,
            "walk-to-leaves": leaves, "graph-backward": backward}


def draws(t: Any) -> tuple:
    """The data chunk: x, y and the initial weights w1, w2, drawn after the seed
    (libtorch's generator on every side: the same values)."""
    seed = getattr(t, "torch_manual_seed", None) or t.manual_seed
    randn = getattr(t, "torch_randn", None) or t.randn
    seed(SEED)
    x = randn(100, 3)
    y = x[:, 0:1] * 0.2 - x[:, 1:2] * 1.3 - x[:, 2:3] * 0.5 + randn(100, 1)
    return x, y, randn(3, 32, requires_grad=True), randn(32, 1, requires_grad=True)


def train(t: Any, relu: Any = None) -> dict:
    """The training chunk: returns the loss at every step and the final weights."""
    zeros = getattr(t, "torch_zeros", None) or t.zeros
    no_grad = getattr(t, "with_no_grad", None) or t.no_grad
    relu = relu or (lambda h: h.clamp(min=0))
    x, y, w1, w2 = draws(t)
    b1 = zeros(1, 32, requires_grad=True)
    b2 = zeros(1, 1, requires_grad=True)
    losses = []
    for step in range(1, STEPS + 1):
        y_pred = relu(x.mm(w1).add(b1)).mm(w2).add(b2)
        loss = (y_pred - y).pow(2).mean()
        losses.append(loss.item())
        loss.backward()
        with no_grad():
            for p in (w1, w2, b1, b2):
                p.sub_(LEARNING_RATE * p.grad)
                p.grad.zero_()
    return {"train": {"losses": losses, "w1": w1, "w2": w2, "b1": b1, "b2": b2},
            "loss-fell": {"losses[200] < losses[1]": losses[-1] < losses[0]},
            "data": {"x$shape": list(x.shape), "w1$shape": list(w1.shape)}}


def rtorch() -> dict:
    return {**graph(rt), **train(rt)}


def pytorch() -> dict:
    import torch
    return {**graph(torch), **train(torch)}


if __name__ == "__main__":
    losses = train(rt)["train"]["losses"]
    for step in range(10, STEPS + 1, 10):
        print(f"step {step:3d}  loss {losses[step - 1]:.3f}")
