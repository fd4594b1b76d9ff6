"""What R's optimisers call: one Python call per parameter group per step.

The R side (`r_compat/R/optim*.R`) keeps R torch's R6 objects, with
`param_groups` and `state` as R lists scripts can read and change; the
arithmetic happens here, with the update rules of `rtorch_py.optim.kernels`.
"""
from __future__ import annotations

import inspect
import re
from typing import Any, Callable

import numpy as np

from ..constructors import torch_tensor
from ..function import NamedList
from ..optim import kernels
from ..optim.ignite import IGNITE, IgniteOptimizer
from ..optim.lbfgs import LBFGS, strong_wolfe
from ..optim import schedulers
from ..optim import optimizer
from ..optim.optimizer import Optimizer, required, zero_grads
from ..tensor import Tensor
from .binding import RFacts, python_value, r_callable
from .closures import alist, python_formals
from .convert import UNDEFINED, _list

# R torch's setting names that differ from PyTorch's
_R_NAMES = {"lambda": "lambd"}
_PYTHON_NAMES = {v: k for k, v in _R_NAMES.items()}


def _value(v: Any) -> Any:
    """An R setting as a Python one: length-1 vectors as numbers."""
    if isinstance(v, np.ndarray):
        # (.item(): a scalar without the view reshape() makes; read every step)
        if v.size == 1:
            return float(v.item())
        # (tolist(): Python floats in one call; betas are read every step)
        return v.ravel().tolist() if v.dtype == np.float64 else [float(x) for x in v.reshape(-1)]
    if isinstance(v, NamedList):
        return [_value(x) for x in v.values()]
    if isinstance(v, list):
        return [_value(x) for x in v]
    return v


def _group(group: NamedList) -> dict:
    return {_R_NAMES.get(k, k): _value(v) for k, v in group.items() if k != "params"}


def _params(group: NamedList) -> list:
    params = group.get("params")  # (inline, not _list(): read every step)
    if isinstance(params, NamedList):
        params = params.values()
    if isinstance(params, Tensor):
        params = [params]
    return list(params or [])


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
    # (keyed as R's xptr_address() keys a tensor: the C bridge's C_address, its hex id)
    states = [by_key.setdefault(f"{id(p):x}", {}) for p in params]
    kernels.run(kind, params, states, settings)


def failed_check(name: str, settings: NamedList) -> list | None:
    """Of the checks the built-in optimizer `name` declares, the first that R's
    settings fail as R torch checks them: [its R message, the call R torch's error
    names] (r_compat/R/optim-builtin.R raises it); None when they pass. A setting
    R leaves at optim_required() is not sent."""
    fn = _generator_functions("builtin")[name]
    s = {p.name: p.default for p in inspect.signature(fn).parameters.values()}
    s.update({_R_NAMES.get(k, k): _value(v) for k, v in settings.items()})
    for check in getattr(optimizer, inspect.signature(fn).return_annotation).checks:
        try:
            passed = (check.r_ok or check.ok)(s)
        except (TypeError, IndexError):  # (NA, a string, a vector where a number goes)
            names = sorted(set(re.findall(r"\{(\w+)", f"{check.message}{check.r_message}"))) \
                or ["its settings"]
            raise TypeError(f"{name}(): `{'`, `'.join(names)}` must be a number (betas and "
                            f"etas: two numbers)") from None
        if not passed:
            return [check.r_message, check.r_call]
    return None


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


# --------------------------------------------------------------------------
# The ignite optimisers (rtorch_py.optim.ignite): R's OptimizerIgnite holds the
# Python optimiser; R sees its groups and state dicts as R torch shows them
# (parameters numbered from 1, the step count an int64 tensor, undefined tensors
# for the state libtorch leaves undefined).


def _py_group(group: Any) -> dict:
    out = _group(group) if isinstance(group, NamedList) else dict(group)
    out["params"] = _params(group) if isinstance(group, NamedList) else group["params"]
    if "betas" in out:
        out["betas"] = tuple(out["betas"])
    return out


def ignite_new(kind: str, params: Any, settings: NamedList,
               defaults: NamedList) -> IgniteOptimizer:
    """The optimizer over a first group with `settings`; the groups added later
    take what they lack from `defaults`."""
    opt = IGNITE[kind](_list(params), **{k: _value(v) for k, v in settings.items()})
    opt.defaults.update({k: _value(v) for k, v in defaults.items()})
    return opt


def ignite_param_groups(opt: IgniteOptimizer) -> list:
    return [NamedList(list(g), [g["params"] if k == "params" else _to_r(v)
                                for k, v in g.items()]) for g in opt.param_groups]


def _check_group_names(opt: IgniteOptimizer, group: Any) -> None:
    """A group given from R has `params` and every one of the optimizer's settings."""
    needed = ["params", *opt.defaults]
    names = group.names() if isinstance(group, NamedList) else list(group)
    if not set(needed) <= set(names):
        raise ValueError(f"Parameter groups must include names '{', '.join(needed)}' but only "
                         f"included '{', '.join(names)}'.")


def ignite_set_param_groups(opt: IgniteOptimizer, groups: Any) -> None:
    """`opt$param_groups <- value`: each group's settings (its parameters can't
    change; add a group with add_param_group()); settings of its own (an
    `initial_lr`) come and go with the value."""
    groups = _list(groups)
    if len(groups) != len(opt.param_groups):
        raise ValueError("Parameter groups must be a list of the same length as the number "
                         "of parameter groups.")
    for mine, new in zip(opt.param_groups, groups):
        _check_group_names(opt, new)
        new = _py_group(new)
        if [id(p) for p in new["params"]] != [id(p) for p in mine["params"]]:
            raise ValueError("Cannot change the parameter groups, use `$add_param_group()` to "
                             "add a new parameter group.")
        for k in [k for k in mine if k not in new]:
            del mine[k]
        mine.update({k: v for k, v in new.items() if k != "params"})


def ignite_add_param_group(opt: IgniteOptimizer, group: NamedList) -> None:
    opt.add_param_group(_py_group(group))


def ignite_state_dict(opt: IgniteOptimizer) -> NamedList:
    sd = opt.state_dict()
    groups = [NamedList(list(g), [np.asarray([i + 1 for i in v], dtype=np.int32)
                                  if k == "params" else _to_r(v) for k, v in g.items()])
              for g in sd["param_groups"]]
    states = sd["state"]
    state = NamedList([str(i + 1) for i in states],
                      [NamedList(list(st), [UNDEFINED if v is None else v for v in st.values()])
                       for st in states.values()])
    return NamedList(["param_groups", "state"], [groups, state])


def ignite_load_state_dict(opt: IgniteOptimizer, state_dict: Any) -> None:
    if not isinstance(state_dict, NamedList) or \
            not {"param_groups", "state"} <= set(state_dict.names()):
        raise ValueError("The `state_dict` must be a list with elements 'param_groups' and "
                         "'state'.")
    state = state_dict["state"]
    mine = opt.state_dict()["state"]
    given = {int(k) - 1: st for k, st in zip(state.names(), state.values())} if len(state) \
        else {}
    missing = sorted(set(mine) - set(given))
    if missing:
        raise ValueError(f"To-be loaded state dict is missing states for parameters "
                         f"{', '.join(str(i + 1) for i in missing)}.")
    for i, st in given.items():
        want, got = opt.state_names, st.names()
        if list(got) != list(want):
            raise ValueError(f"The {i + 1}-th state has elements with names {', '.join(want)} "
                             f"but got {', '.join(got)}.")
    groups = []
    for g in _list(state_dict["param_groups"]):
        _check_group_names(opt, g)
        group = _group(g)
        if "betas" in group:
            group["betas"] = tuple(group["betas"])
        group["params"] = [int(i) - 1 for i in np.asarray(g["params"]).reshape(-1)]
        groups.append(group)
    states = {i: {n: (None if v is UNDEFINED else v) for n, v in st.items()}
              for i, st in given.items()}
    opt.load_state_dict({"param_groups": groups, "state": states})


# --------------------------------------------------------------------------
# Schedulers: R torch's lr_*() are Python's (rtorch_py.optim.schedulers) over a
# Python optimizer mirroring the settings of R's groups. Each call from R sends
# the groups; the settings the scheduler changed go back, with the messages of
# R torch's `verbose` (r_compat/R/optim-lr_scheduler.R).


def _scheduler(name: str) -> Callable:
    """Python's lr_*() as R's generator calls it (its formals are the signature's:
    R matched them, and passes the arguments given by name); an R function given
    (an lr_lambda) returns Python numbers."""
    fn = getattr(schedulers, name)
    params = inspect.signature(fn).parameters.values()
    required = [p.name for p in params if p.default is p.empty][1:]  # (but the optimizer)
    fix = (lambda f: (lambda *a: python_value(f(*a))) if callable(f) and
           not isinstance(f, Tensor) else f)

    def r_args(args: list, kw: dict) -> tuple[list, dict]:
        for name in required:
            if name not in kw:
                raise TypeError(f'argument "{name}" is missing, with no default')
        return args, {k: [fix(f) for f in _list(v)] if isinstance(v, (NamedList, list))
                      else fix(v) for k, v in kw.items()}
    return r_callable(fn, RFacts(name, vectors=True, arguments=(r_args,)))


SCHEDULERS: dict[str, Callable] = {name: _scheduler(name) for name in vars(schedulers)
                                   if name.startswith("lr_")}


def _generator_functions(family: str) -> dict[str, Callable]:
    """The Python functions R makes generators of at load: the schedulers
    ("schedulers", lr_*), the ignite optimizers ("ignite", optim_ignite_*) or the
    built-in ones ("builtin", optim_sgd ...; R checks their settings as R torch does)."""
    if family == "schedulers":
        return {n: getattr(schedulers, n) for n in SCHEDULERS}
    if family == "builtin":
        return {n: fn for n, fn in vars(optimizer).items() if n.startswith("optim_")}
    return {f"optim_ignite_{kind}": fn for kind, fn in IGNITE.items()}


def generator_names(family: str) -> list[str]:
    return list(_generator_functions(family))


def generator_formals(family: str, name: str) -> str:
    """The R formals (R source) of the generator `name` of `family`, its signature's
    (R torch's): a setting Python requires is R torch's `optim_required()`; a whole
    default of a float setting an R double."""
    fn = _generator_functions(family)[name]
    python_only = ("maximize",) if family == "builtin" else ()  # (PyTorch's: not R torch's)
    return alist([(_PYTHON_NAMES.get(n, n), d, has) for n, d, has in
                  python_formals(fn, defaults=_r_defaults(fn)) if n not in python_only])


def scheduler_steps() -> NamedList:
    """Each scheduler's step() arguments (R torch's: step(metrics) for
    lr_reduce_on_plateau, step() for the others): packages read them (luz gives
    the metric only when step() has `metrics`)."""
    def args(fn: Callable) -> list:
        cls = inspect.signature(fn).return_annotation
        cls = getattr(schedulers, cls) if isinstance(cls, str) else cls
        return list(inspect.signature(cls.step).parameters)[1:]  # (not self)
    return NamedList(list(SCHEDULERS), [args(getattr(schedulers, n)) for n in SCHEDULERS])


def _r_defaults(fn: Callable) -> dict:
    out: dict = {}
    for p in inspect.signature(fn).parameters.values():
        if p.default is required:
            out[p.name] = ("expr", "optim_required()")
        elif p.annotation in (float, "float") and type(p.default) is int:
            out[p.name] = float(p.default)
        elif isinstance(p.default, tuple) and float in map(type, p.default):
            out[p.name] = tuple(map(float, p.default))  # (an R double vector: c(1e-06, 50))
    return out


def _settings(group: Any) -> dict:
    return {k: python_value(v) for k, v in group.items() if k != "params"}


def _to_r(v: Any) -> Any:
    """Lists of numbers as R vectors (base_lrs, a group's betas); dicts become named
    lists."""
    if isinstance(v, dict):
        return {k: _to_r(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)) and v and all(type(x) in (int, float) for x in v):
        return np.asarray(v, dtype=np.float64)
    return v


def _from_r(v: Any, current: Any = None) -> Any:
    """An R value for a field now `current`: vectors as lists, named lists dicts."""
    if isinstance(v, NamedList):
        return {k: _from_r(x) for k, x in v.items()} if all(v.names()) else \
            [_from_r(x) for x in v.values()]
    v = python_value(v)
    return list(v) if isinstance(v, tuple) else [v] if isinstance(current, list) else v


def _changed(sched: Any, before: list[dict]) -> list:
    """Per group, the settings the scheduler changed; and R torch's messages."""
    changes, messages = [], []
    plateau = isinstance(sched, schedulers.ReduceLROnPlateau)
    for i, (old, g) in enumerate(zip(before, sched.optimizer.param_groups), start=1):
        new = {k: v for k, v in g.items() if k != "params" and (k not in old or old[k] != v)}
        changes.append(_to_r(new))
        if sched.verbose and not plateau:
            messages.append(f"Adjusting learning rate of group {i} to {g['lr']:.4f}")
        elif sched.verbose and "lr" in new:
            messages.append(f"Epoch {sched.last_epoch}: reducing learning rate of group {i} "
                            f"to {g['lr']:.4e}")
    return [changes, messages]


def _sync(sched: Any, r_groups: Any) -> list[dict]:
    """The mirror given R's groups' settings now (R code may change them between
    steps); the settings before the scheduler changes them."""
    for g, rg in zip(sched.optimizer.param_groups, _list(r_groups)):
        g.update(_settings(rg))
    return [dict(g) for g in sched.optimizer.param_groups]


def sched_new(kind: str, r_groups: Any, defaults: Any, *args: Any, **kw: Any) -> list:
    """R's `lr_step(optimizer, ...)` and friends: the scheduler, and what its first
    step changed."""
    names = defaults.names() if isinstance(defaults, NamedList) else []
    opt = Optimizer([{"params": _params(g), **_settings(g)} for g in _list(r_groups)],
                    dict.fromkeys(names))
    before = [dict(g) for g in opt.param_groups]
    sched = SCHEDULERS[kind](opt, *args, **kw)
    return [sched, *_changed(sched, before)]


def sched_step(sched: Any, r_groups: Any, *args: Any) -> list:
    before = _sync(sched, r_groups)
    sched.step(*[python_value(a) for a in args])
    return _changed(sched, before)


def sched_lrs(sched: Any, r_groups: Any, which: str) -> np.ndarray:
    """get_lr() (the next step's, from the settings now) or get_last_lr()."""
    _sync(sched, r_groups)
    if which == "get_lr" and not hasattr(sched, "get_lr"):
        raise NotImplementedError("lr_reduce_on_plateau has no get_lr(): its step() takes the "
                                  "metric")
    lrs = sched.get_lr() if which == "get_lr" else [g["lr"] for g in sched.optimizer.param_groups]
    return np.asarray(lrs, dtype=np.float64)


def sched_load_state_dict(sched: Any, state: NamedList) -> None:
    sched.load_state_dict({k: _from_r(v, getattr(sched, k, None)) for k, v in state.items()})


def sched_field(sched: Any, name: str, *value: Any) -> Any:
    """`s$last_epoch`, `s$base_lrs`, ... (R's active bindings); given `value`, set first."""
    if value:
        setattr(sched, name, _from_r(value[0], getattr(sched, name, None)))
    return _to_r(getattr(sched, name))


R_FUNCTIONS: dict[str, Callable] = {
    ".ignite_new": ignite_new, ".ignite_step": lambda opt: opt.step(),
    ".ignite_zero_grad": lambda opt: opt.zero_grad(), ".ignite_param_groups": ignite_param_groups,
    ".ignite_set_param_groups": ignite_set_param_groups,
    ".ignite_add_param_group": ignite_add_param_group,
    ".ignite_state_dict": ignite_state_dict, ".ignite_load_state_dict": ignite_load_state_dict,
    ".optim_step": optim_step,
    ".optim_failed_check": failed_check,
    ".optim_state_new": state_new,
    ".optim_state_map": state_map,
    ".optim_state_replace": state_replace,
    ".optim_state_get": state_get,
    ".optim_state_set": state_set,
    ".optim_zero_grad": zero_grad,
    ".lbfgs_new": RLBFGS,
    ".lbfgs_step": lbfgs_step,
    ".strong_wolfe": strong_wolfe_r,
    ".generator_names": generator_names,
    ".scheduler_steps": scheduler_steps,
    ".sched_new": sched_new,
    ".sched_step": sched_step,
    ".sched_lrs": sched_lrs,
    ".sched_state_dict": lambda sched: _to_r(sched.state_dict()),
    ".sched_load_state_dict": sched_load_state_dict,
    ".sched_fields": lambda sched: [k for k in sched.state_dict() if not k.startswith("_")],
    ".sched_field": sched_field,
}
