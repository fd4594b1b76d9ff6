"""What R's optimisers call: one Python call per parameter group per step.

The R side (`r_compat/R/optim*.R`) keeps R torch's R6 objects, with
`param_groups` and `state` as R lists scripts can read and change; the
arithmetic happens here, with the update rules of `rtorch_py.optim.kernels`.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..creation import torch_tensor
from ..function import NamedList
from ..optim import kernels
from ..optim.lbfgs import LBFGS, strong_wolfe
from ..optim.optimizer import zero_grads
from ..tensor import Tensor

# R torch's setting names that differ from PyTorch's
_R_NAMES = {"lambda": "lambd"}


def _value(v: Any) -> Any:
    """An R setting as a Python one: length-1 vectors as numbers."""
    if isinstance(v, np.ndarray):
        return float(v.reshape(())) if v.size == 1 else [float(x) for x in v.reshape(-1)]
    if isinstance(v, NamedList):
        return [_value(x) for x in v.values()]
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


def _group(group: NamedList) -> dict:
    return {_R_NAMES.get(k, k): _value(v) for k, v in group.items() if k != "params"}


def _params(group: NamedList) -> list:
    params = group.get("params")
    if isinstance(params, NamedList):
        params = params.values()
    if isinstance(params, Tensor):
        params = [params]
    return list(params or [])


def tensor_key(x: Any) -> str:
    """A tensor's identity as a string, as R's xptr_address() gives it (the C
    bridge's C_address: the same hex id)."""
    return f"{id(x):x}"


class RState:
    """A built-in optimizer's per-parameter state when R steps it: kept here
    between steps (no trip through R per step), keyed as R keys it, by
    xptr_address(param). R sees it as `opt$state` (r_compat/R/optim-base.R):
    its `map` is made from this on demand, its set() and get() come here."""

    __slots__ = ("by_key",)

    def __init__(self) -> None:
        self.by_key: dict[str, dict] = {}


def _entry(value: Any) -> dict:
    """One parameter's state as R gives it (a named list) as the kernels keep it."""
    return dict(value.items()) if isinstance(value, NamedList) else {}


def _r_entry(entry: dict) -> NamedList:
    return NamedList(list(entry), list(entry.values()))


def state_new(r_map: Any = None) -> RState:
    """The state kept from now on here, starting from R's `map` so far."""
    state = RState()
    if isinstance(r_map, NamedList):
        state.by_key = {k: _entry(v) for k, v in r_map.items()}
    return state


def state_map(state: RState) -> NamedList:
    """`opt$state$map`: key -> the parameter's state, as R lists."""
    return NamedList(list(state.by_key), [_r_entry(e) for e in state.by_key.values()])


def state_replace(state: RState, r_map: Any) -> None:
    """`opt$state$map <- value`."""
    state.by_key = state_new(r_map).by_key


def state_get(state: RState, key: str) -> Any:
    entry = state.by_key.get(key)
    return None if entry is None else _r_entry(entry)


def state_set(state: RState, key: str, value: Any) -> None:
    """`opt$state$set(param, value)`; NULL drops the parameter's state, as R's
    `map[[key]] <- NULL` does."""
    if value is None:
        state.by_key.pop(key, None)
    else:
        state.by_key[key] = _entry(value)


def optim_step(kind: str, group: NamedList, state: RState) -> None:
    """Update one group's parameters with `kind`'s rule, their states in `state`."""
    if kind not in kernels.UPDATES:
        raise ValueError(f"unknown optimizer kind {kind!r}")
    settings = _group(group)
    params = [p for p in _params(group) if isinstance(p, Tensor) and p.grad is not None]
    by_key = state.by_key
    states = [by_key.setdefault(tensor_key(p), {}) for p in params]
    kernels.run(kind, params, states, settings)


def zero_grad(params: Any, set_to_none: bool = False) -> None:
    """Every parameter's gradient zeroed (or dropped), in one call."""
    zero_grads(_list(params), set_to_none)


class RLBFGS:
    """The Python half of an R optim_lbfgs: its state (directions, history)
    stays here; R sees func_evals and n_iter."""

    def __init__(self, params: Any, settings: NamedList) -> None:
        s = {k: _value(v) for k, v in settings.items()}
        self.opt = LBFGS(_list(params), **s)

    def step(self, closure: Callable) -> Any:
        loss = self.opt.step(closure)
        st = self.opt.state.get(self.opt._params[0], {})
        return [loss, NamedList(["func_evals", "n_iter"],
                                [st.get("func_evals", 0), st.get("n_iter", 0)])]


def _list(x: Any) -> list:
    if isinstance(x, NamedList):
        return x.values()
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def lbfgs_new(params: Any, settings: NamedList) -> RLBFGS:
    return RLBFGS(params, settings)


def lbfgs_step(opt: RLBFGS, closure: Callable, settings: NamedList) -> list:
    # settings may have been changed from R (opt$param_groups[[1]]$lr <- ...)
    group = opt.opt.param_groups[0]
    for k, v in settings.items():
        if k != "params":
            group[k] = _value(v)
    return opt.step(closure)


def strong_wolfe_r(obj_func: Callable, x: Any, t: Any, d: Tensor, f: Any, g: Tensor, gtd: Any,
                   c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                   max_ls: int = 25) -> list:
    """R torch's .strong_wolfe: obj_func(x, t, d) gives list(loss, flat grad)."""

    def obj(x_: Any, t_: float, d_: np.ndarray) -> tuple:
        out = obj_func(x_, t_, torch_tensor(d_))
        vals = out.values() if isinstance(out, NamedList) else list(out)
        return float(_value(vals[0])), np.asarray(vals[1].data, dtype=np.float64).reshape(-1)

    f_new, g_new, t_new, evals = strong_wolfe(
        obj, x, float(_value(t)), np.asarray(d.data, np.float64).reshape(-1), float(_value(f)),
        np.asarray(g.data, np.float64).reshape(-1), float(_value(gtd)), c1, c2,
        tolerance_change, int(max_ls))
    return [f_new, torch_tensor(np.asarray(g_new, dtype=g.data.dtype)), t_new, evals]


R_FUNCTIONS: dict[str, Callable] = {
    ".optim_step": optim_step,
    ".optim_state_new": state_new,
    ".optim_state_map": state_map,
    ".optim_state_replace": state_replace,
    ".optim_state_get": state_get,
    ".optim_state_set": state_set,
    ".optim_zero_grad": zero_grad,
    ".lbfgs_new": lbfgs_new,
    ".lbfgs_step": lbfgs_step,
    ".strong_wolfe": strong_wolfe_r,
}
