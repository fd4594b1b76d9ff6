"""Optimisers with R torch's names: `optim_sgd(params, lr = ...)` and friends.

An optimiser holds parameter groups (dicts: "params" and the settings) and a
state per parameter; `step(closure=None)` updates every parameter that has a
gradient, under no-grad, with the rules of `kernels.py`.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, NamedTuple

import numpy as np

from ..autograd import enable_grad, no_grad
from ..engine import bump_version
from ..tensor import Tensor
from . import kernels


class _Required:
    def __repr__(self) -> str:
        return "<required>"


required = _Required()


def _as_param_list(params: Any) -> list:
    if isinstance(params, Tensor):
        return [params]
    if isinstance(params, dict):
        return list(params.values())
    return list(params)


def zero_grads(params: Any, set_to_none: bool = True) -> None:
    """Every parameter's gradient dropped, or detached from the graph that made
    it (`backward(create_graph = TRUE)`'s) and zeroed in place, as PyTorch and
    R torch do: the next backward then accumulates into a gradient with no
    history, so no old graph (holding tensors since updated in place) is kept."""
    with no_grad():
        for p in params:
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
                continue
            g.detach_()
            d = g.data
            if type(d) is np.ndarray and d.flags.writeable:
                # (fast path: what zero_() does here, no history and grad mode off,
                # without the op's dispatch: every step of R's zero_grad runs it)
                d.fill(0)
                bump_version(g)
            else:
                g.zero_()


class Optimizer:
    """Base class: `defaults` are each group's settings unless the group sets them."""

    def __init__(self, params: Any, defaults: dict) -> None:
        self.defaults = defaults
        self.state: dict = {}
        self.param_groups: list[dict] = []
        items = _as_param_list(params)
        if not items:
            raise ValueError("optimizer got an empty parameter list; give the tensors to "
                             "optimise (e.g. model.parameters)")
        groups = items if isinstance(items[0], dict) else [{"params": items}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group: dict) -> None:
        if not isinstance(group, dict):
            raise TypeError("a parameter group must be a dict with a 'params' entry")
        group = dict(group)
        group["params"] = _as_param_list(group["params"])
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor; optimise the leaf it was "
                                 "computed from (or detach() it and set requires_grad)")
        for name, default in self.defaults.items():
            if name not in group:
                if default is required:
                    raise ValueError(f"parameter group didn't specify a value of required "
                                     f"optimization parameter {name}")
                group[name] = default
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads([p for g in self.param_groups for p in g["params"]], set_to_none)

    def _closure_loss(self, closure: Callable | None) -> Any:
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def step(self, closure: Callable | None = None) -> Any:
        raise NotImplementedError("a custom optimizer must define step()")

    # -- state dicts ---------------------------------------------------------
    def state_dict(self) -> dict:
        """{"state": {index: state}, "param_groups": [...]} with parameters
        numbered in order across groups (0-based here, 1-based in R)."""
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: dict(st) for p, st in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, theirs in zip(self.param_groups, groups):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        by_index = {}
        for mine, theirs in zip(self.param_groups, groups):
            for p, i in zip(mine["params"], theirs["params"]):
                by_index[int(i)] = p
        self.state = {}
        for i, st in state_dict["state"].items():
            p = by_index[int(i)]
            # copies, so the loaded dict and this optimiser never share tensors
            self.state[p] = {k: (v.clone().detach() if isinstance(v, Tensor) else
                                 copy.deepcopy(v)) for k, v in st.items()}
        for mine, theirs in zip(self.param_groups, groups):
            for k, v in theirs.items():
                if k != "params":
                    mine[k] = v

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params"]
        return "\n".join(lines + [")"])


class KernelOptimizer(Optimizer):
    """An optimiser whose update is one of `kernels.UPDATES`."""

    kernel = ""

    def step(self, closure: Callable | None = None) -> Any:
        loss = self._closure_loss(closure)
        with no_grad():
            for g in self.param_groups:
                params = g["params"]
                states = [self.state.setdefault(p, {}) if p.grad is not None else {}
                          for p in params]
                kernels.run(self.kernel, params, states, g)
        return loss


def check_arg(cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(message)


class Check(NamedTuple):
    """One check of an optimizer's settings, declared once for Python and R.

    `ok(settings)` says whether the settings (a dict, by name) pass; `message` is
    PyTorch's error, `str.format()`ed with them. `r_message` is R torch's, a glue
    template that R fills in with R's settings (r_compat/R/optim-builtin.R), raised
    as R torch raises it: by its value_error(), or by cli_abort() inside `r_call`.
    Where R torch's condition differs from PyTorch's, `r_ok` is R torch's; a check
    that only R torch makes has no `message`.
    """

    ok: Callable[[dict], bool]
    message: str | None
    r_message: str
    r_ok: Callable[[dict], bool] | None = None
    r_call: str = "value_error"


def _at_least_0(name: str, message: str, r_message: str | None = None) -> Check:
    return Check(lambda s: s[name] >= 0, message, r_message or message)


def _beta(i: int, r_message: str) -> Check:
    """betas[i] in [0, 1) for PyTorch, [0, 1] for R torch (which counts from 1)."""
    return Check(lambda s: 0 <= s["betas"][i] < 1,
                 f"Invalid beta parameter at index {i}: {{betas[{i}]}}", r_message,
                 r_ok=lambda s: 0 <= s["betas"][i] <= 1)


_LR = _at_least_0("lr", "Invalid learning rate: {lr}")
_MOMENTUM = _at_least_0("momentum", "Invalid momentum value: {momentum}")
_EPS = _at_least_0("eps", "Invalid epsilon value: {eps}")
_WEIGHT_DECAY = _at_least_0("weight_decay", "Invalid weight_decay value: {weight_decay}")


def _check_settings(checks: tuple[Check, ...], settings: dict) -> None:
    """PyTorch's error for the first of `checks` that `settings` fail."""
    for c in checks:
        if c.message is not None and not c.ok(settings):
            raise ValueError(c.message.format(**settings))


class SGD(KernelOptimizer):
    kernel = "sgd"
    checks = (
        Check(lambda s: s["lr"] is not required, None, "Need to specify a learning rate"),
        Check(lambda s: s["lr"] is required or s["lr"] >= 0, "Invalid learning rate: {lr}",
              "Invalid learning rate: {lr}"),
        _MOMENTUM, _WEIGHT_DECAY,
        Check(lambda s: not s["nesterov"] or (s["momentum"] > 0 and s["dampening"] == 0),
              "Nesterov momentum requires a momentum and zero dampening",
              "Nesterov momentum requires a momentum and zero dampening"),
    )

    def __init__(self, params: Any, lr: Any = required, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False,
                 maximize: bool = False) -> None:
        settings = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize)
        _check_settings(self.checks, settings)
        super().__init__(params, settings)


class Adam(KernelOptimizer):
    kernel = "adam"
    checks = (
        _LR, _at_least_0("eps", "Invalid epsilon value: {eps}", "Invalid eps: {eps}"),
        _beta(0, "Invalid beta parameter at index 1"),
        _beta(1, "Invalid beta parameter at index 2"),
        _at_least_0("weight_decay", "Invalid weight_decay value: {weight_decay}",
                    "Invalid weight decay value: {weight_decay}"),
    )

    def __init__(self, params: Any, lr: float = 1e-3, betas: Any = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False,
                 maximize: bool = False) -> None:
        _check_settings(self.checks, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))


class AdamW(Adam):
    kernel = "adamw"
    # (R torch raises these with cli_abort(); its betas messages write `beta[1]`
    # for `betas[1]`, which fails in R torch: "Could not evaluate cli `{}` expression")
    checks = tuple(c._replace(r_call="assert_adamw_params(lr, betas, eps, weight_decay, amsgrad)")
                   for c in (_LR, _EPS, _beta(0, "Invalid betas[1] parameter value: {betas[1]}"),
                             _beta(1, "Invalid betas[2] parameter value: {betas[2]}"),
                             _WEIGHT_DECAY))

    def __init__(self, params: Any, lr: float = 1e-3, betas: Any = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)


class RMSprop(KernelOptimizer):
    kernel = "rmsprop"
    checks = (_LR, _EPS, _MOMENTUM, _WEIGHT_DECAY,
              _at_least_0("alpha", "Invalid alpha value: {alpha}"))

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 maximize: bool = False) -> None:
        settings = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                        momentum=momentum, centered=centered, maximize=maximize)
        _check_settings(self.checks, settings)
        super().__init__(params, settings)


class Adagrad(KernelOptimizer):
    kernel = "adagrad"
    checks = (_LR, _at_least_0("lr_decay", "Invalid lr_decay value: {lr_decay}"), _WEIGHT_DECAY,
              _at_least_0("initial_accumulator_value",
                          "Invalid initial_accumulator_value value: {initial_accumulator_value}"),
              _EPS)

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, maximize: bool = False) -> None:
        settings = dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, eps=eps,
                        maximize=maximize)
        _check_settings(self.checks, settings)
        super().__init__(params, settings)


class Adadelta(KernelOptimizer):
    kernel = "adadelta"
    checks = (_LR, Check(lambda s: 0 <= s["rho"] <= 1, "Invalid rho value: {rho}",
                         "Invalid rho value: {rho}"), _EPS, _WEIGHT_DECAY)

    def __init__(self, params: Any, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, maximize: bool = False) -> None:
        settings = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        _check_settings(self.checks, settings)
        super().__init__(params, settings)


class ASGD(KernelOptimizer):
    kernel = "asgd"
    checks = (_LR, _WEIGHT_DECAY)

    def __init__(self, params: Any, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, maximize: bool = False) -> None:
        settings = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        maximize=maximize)
        _check_settings(self.checks, settings)
        super().__init__(params, settings)


class Rprop(KernelOptimizer):
    kernel = "rprop"
    checks = (_LR, Check(lambda s: 0 < s["etas"][0] < 1 < s["etas"][1],
                         "Invalid eta values: {etas[0]}, {etas[1]}",
                         "Invalid eta values: {etas[[1]]}, {etas[[2]]}",
                         r_ok=lambda s: 0 <= s["etas"][0] <= 1 <= s["etas"][1]))

    def __init__(self, params: Any, lr: float = 1e-2, etas: Any = (0.5, 1.2),
                 step_sizes: Any = (1e-6, 50), maximize: bool = False) -> None:
        _check_settings(self.checks, dict(lr=lr, etas=etas))
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      maximize=maximize))


# R torch's names
def optim_sgd(params: Any, lr: Any = required, momentum: float = 0, dampening: float = 0,
              weight_decay: float = 0, nesterov: bool = False, maximize: bool = False) -> SGD:
    return SGD(params, lr, momentum, dampening, weight_decay, nesterov, maximize)


def optim_adam(params: Any, lr: float = 1e-3, betas: Any = (0.9, 0.999), eps: float = 1e-8,
               weight_decay: float = 0, amsgrad: bool = False, maximize: bool = False) -> Adam:
    return Adam(params, lr, betas, eps, weight_decay, amsgrad, maximize)


def optim_adamw(params: Any, lr: float = 1e-3, betas: Any = (0.9, 0.999), eps: float = 1e-8,
                weight_decay: float = 1e-2, amsgrad: bool = False,
                maximize: bool = False) -> AdamW:
    return AdamW(params, lr, betas, eps, weight_decay, amsgrad, maximize)


def optim_rmsprop(params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                  weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                  maximize: bool = False) -> RMSprop:
    return RMSprop(params, lr, alpha, eps, weight_decay, momentum, centered, maximize)


def optim_adagrad(params: Any, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                  initial_accumulator_value: float = 0, eps: float = 1e-10,
                  maximize: bool = False) -> Adagrad:
    return Adagrad(params, lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize)


def optim_adadelta(params: Any, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                   weight_decay: float = 0, maximize: bool = False) -> Adadelta:
    return Adadelta(params, lr, rho, eps, weight_decay, maximize)


def optim_asgd(params: Any, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
               t0: float = 1e6, weight_decay: float = 0, maximize: bool = False) -> ASGD:
    return ASGD(params, lr, lambd, alpha, t0, weight_decay, maximize)


def optim_rprop(params: Any, lr: float = 1e-2, etas: Any = (0.5, 1.2),
                step_sizes: Any = (1e-6, 50), maximize: bool = False) -> Rprop:
    return Rprop(params, lr, etas, step_sizes, maximize)


def is_optimizer(x: Any) -> bool:
    return isinstance(x, Optimizer)
