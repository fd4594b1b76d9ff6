"""`nn_utils_clip_grad_norm_()` and `nn_utils_clip_grad_value_()`."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..tensor import Tensor, wrap
from .module import write_


def _params(parameters: Any) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        return [parameters]
    if hasattr(parameters, "values") and callable(parameters.values):
        parameters = parameters.values()
    return [p for p in parameters if p.grad is not None]


def nn_utils_clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0,
                             error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients in place so that their joint norm is at most
    `max_norm`; returns the norm before clipping."""
    params = _params(parameters)
    if not params:
        return wrap(np.asarray(0.0, dtype=np.float32))
    norm_type = float(norm_type)
    grads = [p.grad.data for p in params]
    if math.isinf(norm_type):
        total = max(float(np.abs(g).max()) for g in grads)
    else:
        total = sum(float((np.abs(g.astype(np.float64)) ** norm_type).sum())
                    for g in grads) ** (1.0 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped.")
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1:
        for p in params:
            write_(p.grad, p.grad.data * coef)
    return wrap(np.asarray(total, dtype=params[0].grad.data.dtype))


def nn_utils_clip_grad_value_(parameters: Any, clip_value: float) -> None:
    """Clamp every gradient in place to [-clip_value, clip_value]."""
    for p in _params(parameters):
        write_(p.grad, np.clip(p.grad.data, -float(clip_value), float(clip_value)))

