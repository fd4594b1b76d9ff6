"""Finite-difference check of gradients: the tool to trust a custom function."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .autograd import autograd_grad
from .engine import no_grad
from .tensor import Tensor, strided


class GradcheckError(RuntimeError):
    pass


def _outputs(fn: Callable, inputs: Sequence[Any], keep: Sequence[int] | None = None) -> list:
    out = fn(*inputs)
    outs = [out] if isinstance(out, Tensor) else list(out)
    # a sparse output is checked through its dense values (to_dense is differentiable)
    outs = [o.to_dense() if isinstance(o, Tensor) and o.layout is not strided else o
            for o in outs]
    outs = [o for o in outs if isinstance(o, Tensor) and o.data.dtype.kind == "f"]
    return outs if keep is None else [outs[k] for k in keep]


def autograd_gradcheck(fn: Callable, inputs: Any, eps: float = 1e-6, atol: float = 1e-5,
                       rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """Compare the analytical Jacobian of `fn` at `inputs` with central finite
    differences. Inputs that require grad should be float64. Returns True, or
    raises (or returns False) naming the input, output and element that differ."""
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck: no input requires grad; pass tensors created with "
                         "requires_grad = TRUE")
    for i in wrt:
        if inputs[i].data.dtype != np.float64:
            import warnings
            warnings.warn(f"gradcheck: input {i} is {inputs[i].dtype}, not float64; finite "
                          "differences will be inaccurate", stacklevel=2)

    outs = _outputs(fn, inputs)
    # (outputs with no derivative, e.g. batch statistics, are not checked, as in PyTorch)
    keep = [k for k, o in enumerate(outs) if o.requires_grad]
    outs = [outs[k] for k in keep]
    for k, out in enumerate(outs):
        flat = out.data.size
        # Analytical: one vector-Jacobian product per output element.
        analytic = {i: np.zeros((inputs[i].data.size, flat)) for i in wrt}
        for j in range(flat):
            go = np.zeros(out.shape, dtype=out.data.dtype)
            go.reshape(-1)[j] = 1
            grads = autograd_grad([_outputs(fn, inputs, keep)[k]], [inputs[i] for i in wrt],
                                  grad_outputs=[Tensor(go)], allow_unused=True)
            for i, g in zip(wrt, grads):
                if g is not None:
                    analytic[i][:, j] = g.data.reshape(-1)
        # Numerical: central differences, one input element at a time.
        for i in wrt:
            x = inputs[i].data
            numeric = np.zeros_like(analytic[i])
            flat_x = x.reshape(-1)
            for e in range(x.size):
                orig = flat_x[e]
                with no_grad():
                    flat_x[e] = orig + eps
                    plus = _outputs(fn, inputs, keep)[k].data.astype(np.float64).reshape(-1)
                    flat_x[e] = orig - eps
                    minus = _outputs(fn, inputs, keep)[k].data.astype(np.float64).reshape(-1)
                    flat_x[e] = orig
                numeric[e] = (plus - minus) / (2 * eps)
            bad = ~np.isclose(analytic[i], numeric, rtol=rtol, atol=atol)
            if bad.any():
                e, j = map(int, np.argwhere(bad)[0])
                msg = (f"Jacobian mismatch for output {k} with respect to input {i}: at input "
                       f"element {e} and output element {j}, numerical {numeric[e, j]:.6g} "
                       f"vs analytical {analytic[i][e, j]:.6g} ({int(bad.sum())} of "
                       f"{bad.size} entries differ; atol={atol}, rtol={rtol}).\n"
                       f"numerical:\n{numeric}\nanalytical:\n{analytic[i]}")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True
