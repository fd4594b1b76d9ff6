"""Finite-difference check of second derivatives: gradcheck of the gradient.

The function checked is (inputs, grad_outputs) -> the gradients of fn's
outputs, computed with create_graph: its analytical Jacobian is the double
backward, its numerical one differences the first backward. A custom function
whose backward reads tensors kept on ctx as plain attributes (not through
save_for_backward) passes gradcheck but not this: those tensors carry no
history, so the double backward misses their dependence on the inputs.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .autograd import autograd_grad
from .engine import enable_grad
from .function import CustomNode
from .gradcheck import GradcheckError, autograd_gradcheck
from .graph import function_name, walk
from .tensor import Tensor, wrap


def _differentiable_outputs(out: Any) -> list:
    outs = [out] if isinstance(out, Tensor) else list(out)
    return [o for o in outs if isinstance(o, Tensor) and o.requires_grad]


def autograd_gradgradcheck(fn: Callable, inputs: Any, grad_outputs: Any = None,
                           eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                           raise_exception: bool = True) -> bool:
    """Compare the second derivatives of `fn` at `inputs` (float64 tensors that
    require grad) with finite differences of its first derivatives.
    `grad_outputs`: one tensor per output that requires grad (random float64
    ones by default; they are differentiated too when they require grad).
    Returns True, or raises (or returns False) saying what differs and, when a
    custom function keeps tensors on ctx outside save_for_backward, that it is
    the likely cause and how to fix it."""
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradgradcheck: no input requires grad; pass tensors created with "
                         "requires_grad = TRUE")
    outs = _differentiable_outputs(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [wrap(rng.standard_normal(o.shape)).requires_grad_(True) for o in outs]
    else:
        grad_outputs = [grad_outputs] if isinstance(grad_outputs, Tensor) else \
            list(grad_outputs)
        if len(grad_outputs) != len(outs):
            raise ValueError(f"gradgradcheck: grad_outputs has {len(grad_outputs)} tensors "
                             f"for {len(outs)} differentiable outputs; give one per output")
    n = len(inputs)

    def first_derivatives(*args: Any) -> tuple:
        xs, vs = args[:n], args[n:]
        with enable_grad():  # (gradcheck's finite differences run under no_grad)
            grads = autograd_grad(_differentiable_outputs(fn(*xs)), [xs[i] for i in wrt],
                                  list(vs), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    try:
        return autograd_gradcheck(first_derivatives, [*inputs, *grad_outputs], eps=eps,
                                  atol=atol, rtol=rtol)
    except GradcheckError as err:
        msg = f"gradgradcheck: second derivatives disagree with finite differences. {err}"
        culprits = _plain_ctx_tensors(outs)
        if culprits:
            msg = f"{culprits}\n{msg}"
        if raise_exception:
            raise GradcheckError(msg) from None
        return False


def _plain_ctx_tensors(outputs: Sequence[Tensor]) -> str:
    """What the graph shows of the silent case: custom functions whose ctx holds
    tensors as plain attributes (their backward sees them without history)."""
    found = []
    roots = [o.grad_fn for o in outputs if o.grad_fn is not None]
    for node in walk(roots):
        if isinstance(node, CustomNode):
            names = [k for k, v in vars(node.ctx).items()  # (an output has its node)
                     if not k.startswith("_") and isinstance(v, Tensor) and not v.requires_grad]
            if names:
                found.append(f"custom function {function_name(node)} keeps "
                             f"{', '.join(names)} on ctx as plain attributes")
    if not found:
        return ""
    return ("gradgradcheck: " + "; ".join(found) + ". A tensor made in forward (which runs "
            "without recording) and kept that way enters backward without its history, so "
            "the double backward (create_graph) takes it for a constant and is silently "
            "wrong. Save forward's inputs and outputs with ctx$save_for_backward(x = x) "
            "(Python: ctx.save_for_backward(x=x)) and compute what you need from "
            "ctx$saved_variables in backward.")
