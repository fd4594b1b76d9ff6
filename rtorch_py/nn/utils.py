"""`nn_utils_clip_grad_norm_()`, `nn_utils_clip_grad_value_()` and
`nn_utils_weight_norm`."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..engine import bump_version
from ..formals import r_formals
from ..tensor import Tensor, wrap
from ..ops.distance import _weight_norm, norm_except_dim
from .module import Module, nn_parameter, write_


def _params(parameters: Any, fn: str) -> list[Tensor]:
    """The tensors of `parameters` (a tensor, a list of them or a module's named
    parameters) that hold a gradient: the others are left alone."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    elif hasattr(parameters, "values") and callable(parameters.values):
        parameters = parameters.values()
    elif isinstance(parameters, str) or not hasattr(parameters, "__iter__"):
        parameters = [parameters]
    params = list(parameters)
    for p in params:
        if not isinstance(p, Tensor):
            raise TypeError(f"{fn}: parameters must be tensors (a tensor, a list of tensors or "
                            f"a module's parameters), got {p!r:.40} among them")
    return [p for p in params if p.grad is not None]


def _number(value: Any, name: str, fn: str) -> float:
    try:
        return float(value)  # (a one-element tensor, or PyTorch's norm_type 'inf', too)
    except (TypeError, ValueError):
        raise TypeError(f"{fn}: {name} must be a number, got {value!r:.40}") from None


@r_formals("parameters, max_norm, norm_type = 2")  # (R torch's: no error_if_nonfinite)
def nn_utils_clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0,
                             error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients in place so that their joint norm is at most
    `max_norm`; returns the norm before clipping."""
    fn = "nn_utils_clip_grad_norm_"
    params = _params(parameters, fn)
    max_norm, norm_type = _number(max_norm, "max_norm", fn), _number(norm_type, "norm_type", fn)
    if not params:
        return wrap(np.asarray(0.0, dtype=np.float32))
    grads = [p.grad.data for p in params]
    if math.isinf(norm_type):
        total = max(float(np.abs(g).max()) for g in grads)
    else:
        total = sum(float((np.abs(g.astype(np.float64)) ** norm_type).sum())
                    for g in grads) ** (1.0 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped.")
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for p in params:
            bump_version(write_(p.grad, p.grad.data * coef))  # (in place, as PyTorch's mul_)
    return wrap(np.asarray(total, dtype=params[0].grad.data.dtype))


def nn_utils_clip_grad_value_(parameters: Any, clip_value: float) -> None:
    """Clamp every gradient in place to [-clip_value, clip_value]."""
    fn = "nn_utils_clip_grad_value_"
    params, clip_value = _params(parameters, fn), _number(clip_value, "clip_value", fn)
    for p in params:
        bump_version(write_(p.grad, np.clip(p.grad.data, -clip_value, clip_value)))



class nn_utils_weight_norm:
    """Weight normalisation (R torch's R6 class: `nn_utils_weight_norm$new(name,
    dim)`): `apply(module)` replaces the parameter `name` by a magnitude
    `<name>_g` (its norm over every dim but `dim`; -1: all of it) and a direction
    `<name>_v`, and sets `name` to g * v / ||v||, which `recompute(module)`
    computes again (call it in forward); `remove(module)` makes it a parameter
    again. Dims are 0-based here (1-based in R)."""

    def __init__(self, name: str = "weight", dim: int | None = None) -> None:
        self.name = name
        self.dim = -1 if dim is None else int(dim)

    @classmethod
    def new(cls, name: str = "weight", dim: int | None = None) -> "nn_utils_weight_norm":
        """R torch's spelling of the constructor."""
        return cls(name, dim)

    def compute_weight(self, module: Module, name: str | None = None,
                       dim: int | None = None) -> Tensor:
        name = name or self.name
        dim = self.dim if dim is None else int(dim)
        return _weight_norm(getattr(module, name + "_v"), getattr(module, name + "_g"), dim)

    def apply(self, module: Module, name: str | None = None, dim: int | None = None) -> Module:
        name = name or self.name
        dim = self.dim if dim is None else int(dim)
        weight = getattr(module, name)
        delattr(module, name)
        module.register_parameter(name + "_g", nn_parameter(
            norm_except_dim(weight, 2, dim).detach()))
        module.register_parameter(name + "_v", nn_parameter(weight.detach()))
        setattr(module, name, self.compute_weight(module, name, dim))
        return module

    def call(self, module: Module) -> Module:
        setattr(module, self.name, self.compute_weight(module))
        return module

    def recompute(self, module: Module) -> Module:
        return self.call(module)

    def remove(self, module: Module, name: str | None = None) -> Module:
        name = name or self.name
        weight = self.compute_weight(module, name)
        delattr(module, name + "_g")
        delattr(module, name + "_v")
        setattr(module, name, nn_parameter(weight.detach()))
        return module
