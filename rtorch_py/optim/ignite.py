"""R torch's "ignite" optimisers (`optim_ignite_adam` and friends): libtorch's
C++ optimisers, which R torch drives from R. Their arithmetic is the C++ one
(close to PyTorch's Python optimisers: moving averages as `mul_` then `add_`,
not `lerp_`), and so is their state: per parameter, tensors and a step count,
which `state_dict()` gives as a one-element int64 tensor (None where libtorch's
tensor is undefined: `max_exp_avg_sq` without amsgrad, ...). `zero_grad()`
drops the gradients, as libtorch's does.

Parameters are numbered from 0 in the state dict here (from 1 in R).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..autograd import no_grad
from ..constructors import torch_tensor
from ..engine import bump_version
from ..tensor import Tensor
from . import kernels
from .optimizer import Optimizer, check_arg, required


def _sgd(p: np.ndarray, g: np.ndarray, st: dict, o: dict) -> None:
    kernels.sgd([p], [g], [st], o)  # (libtorch's C++ SGD is PyTorch's, step for step)


def _adam(p: np.ndarray, g: np.ndarray, st: dict, o: dict, decoupled: bool) -> None:
    if not st:
        st.update(step=0, exp_avg=np.zeros_like(p), exp_avg_sq=np.zeros_like(p),
                  max_exp_avg_sq=np.zeros_like(p) if o["amsgrad"] else None)
    st["step"] += 1
    beta1, beta2 = (float(b) for b in o["betas"])
    lr, wd = o["lr"], o["weight_decay"]
    bias1, bias2 = 1 - beta1 ** st["step"], 1 - beta2 ** st["step"]
    if wd != 0:
        if decoupled:
            p *= 1 - lr * wd
        else:
            g = g + wd * p
    m, v = st["exp_avg"], st["exp_avg_sq"]
    m *= beta1
    m += (1 - beta1) * g
    v *= beta2
    v += (1 - beta2) * (g * g)
    if o["amsgrad"]:
        if st["max_exp_avg_sq"] is None:  # (amsgrad switched on after the first step)
            st["max_exp_avg_sq"] = np.zeros_like(p)
        np.maximum(st["max_exp_avg_sq"], v, out=st["max_exp_avg_sq"])
        v = st["max_exp_avg_sq"]
    denom = np.sqrt(v) / np.sqrt(bias2) + o["eps"]
    p += -(lr / bias1) * (m / denom)


def _rmsprop(p: np.ndarray, g: np.ndarray, st: dict, o: dict) -> None:
    if not st:
        st.update(step=0, square_avg=np.zeros_like(p),
                  momentum_buffer=np.zeros_like(p) if o["momentum"] > 0 else None,
                  grad_avg=np.zeros_like(p) if o["centered"] else None)
    st["step"] += 1
    alpha = o["alpha"]
    if o["weight_decay"] != 0:
        g = g + o["weight_decay"] * p
    sq = st["square_avg"]
    sq *= alpha
    sq += (1 - alpha) * (g * g)
    if o["centered"]:
        if st["grad_avg"] is None:
            st["grad_avg"] = np.zeros_like(p)
        ga = st["grad_avg"]
        ga *= alpha
        ga += (1 - alpha) * g
        avg = np.sqrt(sq - ga * ga) + o["eps"]
    else:
        avg = np.sqrt(sq) + o["eps"]
    if o["momentum"] > 0:
        if st["momentum_buffer"] is None:
            st["momentum_buffer"] = np.zeros_like(p)
        buf = st["momentum_buffer"]
        buf *= o["momentum"]
        buf += g / avg
        p += -o["lr"] * buf
    else:
        p += -o["lr"] * (g / avg)


def _adagrad(p: np.ndarray, g: np.ndarray, st: dict, o: dict) -> None:
    st["step"] += 1
    if o["weight_decay"] != 0:
        g = g + o["weight_decay"] * p
    clr = o["lr"] / (1 + (st["step"] - 1) * o["lr_decay"])
    st["sum"] += g * g
    p += -clr * (g / (np.sqrt(st["sum"]) + o["eps"]))


class IgniteOptimizer(Optimizer):
    """One of libtorch's C++ optimisers (see the module doc)."""

    update: Callable
    state_names: tuple = ()   # the state's entries, in R torch's order

    def step(self, closure: Callable | None = None) -> Any:
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    st = self.state.setdefault(p, {})
                    type(self).update(p.data, p.grad.data, st, group)
                    bump_version(p)
                    if not st:  # (sgd without momentum keeps no state)
                        del self.state[p]
        return loss

    def state_dict(self) -> dict:
        """The state of each parameter that has one, by its position (from 0)
        across the groups: tensors (copies) and the step as an int64 tensor."""
        sd = super().state_dict()
        sd["state"] = {i: {name: self._tensor(st.get(name), name) for name in self.state_names}
                       for i, st in sd["state"].items()}
        return sd

    @staticmethod
    def _tensor(v: Any, name: str) -> Tensor | None:
        if v is None:
            return None
        if name == "step":
            return torch_tensor([int(v)], dtype="int64")
        return torch_tensor(np.array(v))

    def load_state_dict(self, state_dict: dict) -> None:
        states = state_dict["state"]
        for i, st in states.items():
            if list(st) != list(self.state_names):
                raise ValueError(f"The {i}-th state has elements with names "
                                 f"{', '.join(self.state_names)} but got {', '.join(st)}.")
        unpacked = {"param_groups": state_dict["param_groups"], "state": {
            i: {k: (None if v is None else int(v.item()) if k == "step" else
                    np.array(v.data if isinstance(v, Tensor) else v))
                for k, v in st.items()} for i, st in states.items()}}
        super().load_state_dict(unpacked)


def _ignite(name: str, update: Callable, state_names: tuple) -> type:
    return type(name, (IgniteOptimizer,), {"update": staticmethod(update),
                                           "state_names": state_names,
                                           "__module__": __name__})


IgniteSGD = _ignite("IgniteSGD", _sgd, ("momentum_buffer",))
IgniteAdam = _ignite("IgniteAdam", lambda p, g, st, o: _adam(p, g, st, o, False),
                     ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"))
IgniteAdamW = _ignite("IgniteAdamW", lambda p, g, st, o: _adam(p, g, st, o, True),
                      ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"))
IgniteRMSprop = _ignite("IgniteRMSprop", _rmsprop,
                        ("grad_avg", "square_avg", "momentum_buffer", "step"))


class IgniteAdagrad(_ignite("_IgniteAdagrad", _adagrad, ("sum", "step"))):
    """libtorch's Adagrad makes every parameter's state (a zero step count, the
    sum at initial_accumulator_value) when it gets the parameter."""

    def add_param_group(self, group: dict) -> None:
        super().add_param_group(group)
        added = self.param_groups[-1]
        for p in added["params"]:
            self.state[p] = {"sum": np.full_like(p.data, added["initial_accumulator_value"]),
                             "step": 0}


def _nonnegative(**values: float) -> None:
    for what, v in values.items():
        check_arg(v is required or v >= 0, f"Invalid {what.replace('_', ' ')}: {v}")


def optim_ignite_sgd(params: Any, lr: Any = required, momentum: float = 0,
                     dampening: float = 0, weight_decay: float = 0,
                     nesterov: bool = False) -> IgniteSGD:
    _nonnegative(learning_rate=lr, momentum=momentum, weight_decay=weight_decay)
    check_arg(not nesterov or (momentum > 0 and dampening == 0),
              "Nesterov momentum requires a momentum and zero dampening")
    return IgniteSGD(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                  weight_decay=weight_decay, nesterov=bool(nesterov)))


def _adam_settings(lr: float, betas: Any, eps: float, weight_decay: float,
                   amsgrad: bool) -> dict:
    _nonnegative(learning_rate=lr, epsilon_value=eps, weight_decay=weight_decay)
    betas = tuple(float(b) for b in betas)
    for i, b in enumerate(betas):
        check_arg(0 <= b < 1, f"Invalid beta parameter at index {i}: {b}")
    return dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=bool(amsgrad))


def optim_ignite_adam(params: Any, lr: float = 1e-3, betas: Any = (0.9, 0.999),
                      eps: float = 1e-8, weight_decay: float = 0,
                      amsgrad: bool = False) -> IgniteAdam:
    return IgniteAdam(params, _adam_settings(lr, betas, eps, weight_decay, amsgrad))


def optim_ignite_adamw(params: Any, lr: float = 1e-3, betas: Any = (0.9, 0.999),
                       eps: float = 1e-8, weight_decay: float = 1e-2,
                       amsgrad: bool = False) -> IgniteAdamW:
    return IgniteAdamW(params, _adam_settings(lr, betas, eps, weight_decay, amsgrad))


def optim_ignite_rmsprop(params: Any, lr: float = 1e-2, alpha: float = 0.99,
                         eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                         centered: bool = False) -> IgniteRMSprop:
    _nonnegative(learning_rate=lr, epsilon_value=eps, momentum_value=momentum,
                 weight_decay=weight_decay, alpha_value=alpha)
    return IgniteRMSprop(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=bool(centered)))


def optim_ignite_adagrad(params: Any, lr: float = 1e-2, lr_decay: float = 0,
                         weight_decay: float = 0, initial_accumulator_value: float = 0,
                         eps: float = 1e-10) -> IgniteAdagrad:
    _nonnegative(learning_rate=lr, lr_decay_value=lr_decay, weight_decay=weight_decay,
                 initial_accumulator_value=initial_accumulator_value, epsilon_value=eps)
    return IgniteAdagrad(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps))


IGNITE = {"sgd": optim_ignite_sgd, "adam": optim_ignite_adam, "adamw": optim_ignite_adamw,
          "rmsprop": optim_ignite_rmsprop, "adagrad": optim_ignite_adagrad}

__all__ = ["IgniteOptimizer", *(f"optim_ignite_{k}" for k in IGNITE)]
