"""Finite-difference check of gradients: the tool to trust a custom function."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .autograd import autograd_grad
from .engine import no_grad
from .forward_ad import dual_level, make_dual, unpack_dual
from .tensor import Tensor, strided, wrap


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
                       rtol: float = 1e-3, raise_exception: bool = True,
                       check_forward_ad: bool = False) -> bool:
    """Compare the analytical Jacobian of `fn` at `inputs` with central finite
    differences. Inputs that require grad should be float64. Returns True, or
    raises (or returns False) naming the input, output and element that differ.
    With `check_forward_ad`, the Jacobian by forward mode (dual tensors) too."""
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
            checks = [("Jacobian", analytic[i])]
            if check_forward_ad:
                checks.append(("Forward-mode Jacobian", _forward_jacobian(fn, inputs, i, keep, k)))
            for what, got in checks:
                bad = ~np.isclose(got, numeric, rtol=rtol, atol=atol)
                if bad.any():
                    e, j = map(int, np.argwhere(bad)[0])
                    msg = (f"{what} mismatch for output {k} with respect to input {i}: at "
                           f"input element {e} and output element {j}, numerical "
                           f"{numeric[e, j]:.6g} vs analytical {got[e, j]:.6g} "
                           f"({int(bad.sum())} of {bad.size} entries differ; atol={atol}, "
                           f"rtol={rtol}).\nnumerical:\n{numeric}\nanalytical:\n{got}")
                    if raise_exception:
                        raise GradcheckError(msg)
                    return False
    return True


def _forward_jacobian(fn: Callable, inputs: list, i: int, keep: list, k: int) -> np.ndarray:
    """d output k / d input i by forward mode: one dual call per element of input i."""
    x = inputs[i]
    columns = []
    for e in range(x.data.size):
        unit = np.zeros(x.data.size, x.data.dtype)
        unit[e] = 1
        with dual_level():
            dual = make_dual(x.detach(), wrap(unit.reshape(x.data.shape)))
            out = _outputs(fn, [dual if n == i else v for n, v in enumerate(inputs)], keep)[k]
            tangent = unpack_dual(out).tangent
        columns.append(np.zeros(out.data.size) if tangent is None else
                       np.asarray(tangent.data, np.float64).reshape(-1))
    return np.array(columns).reshape(x.data.size, -1)
