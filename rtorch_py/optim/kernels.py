"""The optimisers' update rules, on NumPy arrays.

One function per algorithm, `update(params, grads, states, group)`: `params`
and `grads` are lists of arrays (each parameter's array is changed in
place), `states` a list of dicts (one per parameter, filled on first use),
`group` the parameter group's settings. They follow PyTorch 2.13's
single-tensor rules (R torch's too) step for step, so results match
`torch.optim` to float rounding. The Python optimisers and the R ones
(`rtorch_py/r/optim_api.py`) both call these.
"""
from __future__ import annotations

import math
import weakref
from typing import Any, Callable

import numpy as np

from ..engine import bump_version
from ..ops import parallel
from . import fused
from ..constructors import torch_tensor
from ..tensor import Tensor

Arrays = list  # list[np.ndarray]


def _f32(x: float) -> float:
    """A value PyTorch keeps in a float32 scalar tensor (ASGD's eta and mu)."""
    return float(np.float32(x))


def sgd(params: Arrays, grads: Arrays, states: list, group: dict) -> None:
    lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
    wd, nesterov, maximize = group["weight_decay"], group["nesterov"], group.get("maximize", False)
    for p, g, st in zip(params, grads, states):
        buf = st.get("momentum_buffer") if momentum != 0 else None
        if buf is None or wd != 0 or nesterov or maximize or p.dtype != g.dtype:
            _sgd_general(p, g, st, lr, momentum, dampening, wd, nesterov, maximize)
            continue

        def update(p: np.ndarray, g: np.ndarray, buf: np.ndarray, tmp: np.ndarray) -> None:
            # (fast path: momentum's usual case, blockwise with one scratch array)
            buf *= momentum
            np.multiply(g, 1 - dampening, out=tmp)
            buf += tmp
            np.multiply(buf, lr, out=tmp)
            p -= tmp
        parallel.blockwise(update, [p, g, buf], p.dtype)


def _sgd_general(p: np.ndarray, g: np.ndarray, st: dict, lr: float, momentum: float,
                 dampening: float, wd: float, nesterov: bool, maximize: bool) -> None:
    d_p = -g if maximize else g
    if wd != 0:
        d_p = d_p + wd * p
    if momentum != 0:
        buf = st.get("momentum_buffer")
        if buf is None:
            buf = st["momentum_buffer"] = d_p.copy()
        else:
            buf *= momentum
            buf += (1 - dampening) * d_p
        d_p = d_p + momentum * buf if nesterov else buf
    p -= lr * d_p


def _adam(params: Arrays, grads: Arrays, states: list, group: dict, decoupled: bool) -> None:
    lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
    beta1, beta2 = (float(b) for b in group["betas"])
    amsgrad, maximize = group["amsgrad"], group.get("maximize", False)
    names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
    if all(not st for st in states):
        _new_states(params, states, names)
    ready = []  # (p, g, bias corrections, the state arrays)
    for p, g, st in zip(params, grads, states):
        if not st:
            st["step"] = 0.0
            for name in names:
                st[name] = np.zeros_like(p)
        if maximize:
            g = -g
        st["step"] += 1
        step = st["step"]
        if wd != 0:
            if decoupled:
                p *= 1 - lr * wd
            else:
                g = g + wd * p
        ready.append((p, g, (1 - beta1 ** step, math.sqrt(1 - beta2 ** step)),
                      [st[name] for name in names]))

    def direction(g: np.ndarray, m: np.ndarray, v: np.ndarray, *rest) -> None:
        # the step into the scratch array rest[-1], the moments updated in place
        tmp = rest[-1]
        np.subtract(g, m, out=tmp)
        tmp *= 1 - beta1
        m += tmp                             # lerp towards g, as PyTorch does
        np.multiply(g, 1 - beta2, out=tmp)   # (value * g) * g, PyTorch's addcmul order
        tmp *= g
        v *= beta2
        v += tmp
        if amsgrad:
            np.maximum(rest[0], v, out=rest[0])
            v = rest[0]
        np.sqrt(v, out=tmp)
        tmp /= bc2_sqrt
        tmp += eps                           # the denominator
        np.divide(m, tmp, out=tmp)
        tmp *= lr / bc1

    flat = _flat_states(ready)
    if flat is not None:
        # FAST PATH (foreach): small parameters whose states are consecutive parts
        # of one array each take each pass once for all (the same arithmetic per
        # element: bit for bit the per-parameter path's)
        (bc1, bc2_sqrt), dtype = ready[0][2], flat[0].dtype
        tmp = np.empty(flat[0].size, np.result_type(ready[0][1], dtype))
        direction(np.concatenate([g.reshape(-1) for _, g, _, _ in ready]), *flat, tmp)
        at = 0
        for p, _, _, _ in ready:
            p -= tmp[at:at + p.size].reshape(p.shape)
            at += p.size
        return

    def update(p: np.ndarray, *rest) -> None:
        # in place, blockwise, with one scratch array (it runs every step)
        direction(*rest)
        p -= rest[-1]
    for p, g, (bc1, bc2_sqrt), arrays in ready:
        if not amsgrad and fused.adam_step(p, g, *arrays, beta1, beta2, bc1, bc2_sqrt, eps, lr):
            continue          # FAST PATH: compiled, one pass, the same bits
        parallel.blockwise(update, [p, g] + arrays, np.result_type(g, arrays[0]))


# Flat states (the foreach fast path), by id of the first parameter's first
# state: the whole arrays each state is a part of, and weak references to the
# parts, so that a state replaced (load_state_dict) or reordered is seen. An
# entry goes when that first part does.
_FLAT: dict[int, tuple] = {}


def _new_states(params: Arrays, states: list, names: tuple) -> None:
    """First step: each state made as consecutive parts of one array per name
    when the parameters are small, C-contiguous and of one dtype."""
    total = sum(p.size for p in params)
    if not params or total > parallel.BLOCK or \
            any(p.dtype != params[0].dtype or not p.flags.c_contiguous for p in params):
        return
    wholes, parts = [], []
    for name in names:
        whole = np.zeros(total, params[0].dtype)
        at, views = 0, []
        for p in params:
            views.append(whole[at:at + p.size].reshape(p.shape))
            at += p.size
        wholes.append(whole)
        parts.append(views)
    for i, st in enumerate(states):
        st["step"] = 0.0
        for name, views in zip(names, parts):
            st[name] = views[i]
    key = id(parts[0][0])
    refs = [[weakref.ref(v) for v in views] for views in parts]
    refs[0][0] = weakref.ref(parts[0][0], lambda _: _FLAT.pop(key, None))
    _FLAT[key] = (wholes, refs)


def _flat_states(ready: list) -> list | None:
    """The whole arrays of the parameters' states when each state is still its
    part of one (made by _new_states, in this order) and every parameter is at
    the same step with a gradient of its dtype; else None."""
    entry = _FLAT.get(id(ready[0][3][0])) if ready else None
    if entry is None:
        return None
    wholes, refs = entry
    if len(refs[0]) != len(ready) or len({bc for _, _, bc, _ in ready}) != 1:
        return None
    for i, (p, g, _, arrays) in enumerate(ready):
        if g.dtype != p.dtype or len(arrays) != len(refs):
            return None
        for name_refs, a in zip(refs, arrays):
            if name_refs[i]() is not a:
                return None
    return wholes


def adam(params: Arrays, grads: Arrays, states: list, group: dict) -> None:
    _adam(params, grads, states, group, decoupled=False)


def adamw(params: Arrays, grads: Arrays, states: list, group: dict) -> None:
    _adam(params, grads, states, group, decoupled=True)


def rmsprop(params: Arrays, grads: Arrays, states: list, group: dict) -> None:
    lr, alpha, eps, wd = group["lr"], group["alpha"], group["eps"], group["weight_decay"]
    momentum, centered, maximize = group["momentum"], group["centered"], group.get("maximize", False)
    for p, g, st in zip(params, grads, states):
        if not st:
            st["step"] = 0.0
            st["square_avg"] = np.zeros_like(p)
            if momentum > 0:
                st["momentum_buffer"] = np.zeros_like(p)
            if centered:
                st["grad_avg"] = np.zeros_like(p)
        if maximize:
            g = -g
        st["step"] += 1
        if wd != 0:
            g = g + wd * p
        arrays = [p, g, st["square_avg"]] + ([st["grad_avg"]] if centered else []) + \
            ([st["momentum_buffer"]] if momentum > 0 else [])

        def update(p: np.ndarray, g: np.ndarray, sq: np.ndarray, *rest) -> None:
            # in place, blockwise, with one scratch array
            tmp = rest[-1]
            sq *= alpha
            np.multiply(g, 1 - alpha, out=tmp)
            tmp *= g
            sq += tmp
            if centered:
                ga = rest[0]
                np.subtract(g, ga, out=tmp)
                tmp *= 1 - alpha
                ga += tmp
                np.multiply(ga, ga, out=tmp)
                np.subtract(sq, tmp, out=tmp)
                np.sqrt(tmp, out=tmp)
            else:
                np.sqrt(sq, out=tmp)
            tmp += eps                           # the denominator
            np.divide(g, tmp, out=tmp)
            if momentum > 0:
                buf = rest[-2]
                buf *= momentum
                buf += tmp
                np.multiply(buf, lr, out=tmp)
            else:
                tmp *= lr
            p -= tmp
        parallel.blockwise(update, arrays, np.result_type(g, st["square_avg"]))


def adagrad(params: Arrays, grads: Arrays, states: list, group: dict) -> None:
    lr, lr_decay, wd, eps = group["lr"], group["lr_decay"], group["weight_decay"], group["eps"]
    maximize = group.get("maximize", False)
    for p, g, st in zip(params, grads, states):
        if not st:
            st["step"] = 0.0
            st["sum"] = np.full_like(p, group["initial_accumulator_value"])
        st["step"] += 1
        if maximize:
            g = -g
        if wd != 0:
            g = g + wd * p
        clr = lr / (1 + (st["step"] - 1) * lr_decay)
        st["sum"] += g * g
        p -= clr * (g / (np.sqrt(st["sum"]) + eps))


def adadelta(params: Arrays, grads: Arrays, states: list, group: dict) -> None:
    lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
    maximize = group.get("maximize", False)
    for p, g, st in zip(params, grads, states):
        if not st:
            st["step"] = 0.0
            st["square_avg"] = np.zeros_like(p)
            st["acc_delta"] = np.zeros_like(p)
        st["step"] += 1
        if maximize:
            g = -g
        if wd != 0:
            g = g + wd * p
        sq, acc = st["square_avg"], st["acc_delta"]
        sq *= rho
        sq += (1 - rho) * g * g
        std = np.sqrt(sq + eps)
        delta = np.sqrt(acc + eps) / std * g
        acc *= rho
        acc += (1 - rho) * delta * delta
        p -= lr * delta


def asgd(params: Arrays, grads: Arrays, states: list, group: dict) -> None:
    lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
    wd, maximize = group["weight_decay"], group.get("maximize", False)
    for p, g, st in zip(params, grads, states):
        if not st:
            st["step"] = 0.0
            st["eta"] = _f32(lr)
            st["mu"] = 1.0
            st["ax"] = np.zeros_like(p)
        if maximize:
            g = -g
        st["step"] += 1
        step = st["step"]
        if wd != 0:
            g = g + wd * p
        eta = st["eta"]
        p *= 1 - lambd * eta
        p -= eta * g
        ax = st["ax"]
        if st["mu"] != 1:
            ax += (p - ax) * st["mu"]
        else:
            ax[...] = p
        st["eta"] = _f32(lr / ((1 + lambd * lr * step) ** alpha))
        st["mu"] = _f32(1 / max(1, step - t0))


def rprop(params: Arrays, grads: Arrays, states: list, group: dict) -> None:
    lr = group["lr"]
    etaminus, etaplus = (float(e) for e in group["etas"])
    step_min, step_max = (float(s) for s in group["step_sizes"])
    maximize = group.get("maximize", False)
    for p, g, st in zip(params, grads, states):
        if not st:
            st["step"] = 0.0
            st["prev"] = np.zeros_like(p)
            st["step_size"] = np.full_like(g, lr)
        if maximize:
            g = -g
        st["step"] += 1
        prev, step_size = st["prev"], st["step_size"]
        sign = np.sign(g * prev)
        factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1.0)).astype(p.dtype)
        step_size *= factor
        np.clip(step_size, step_min, step_max, out=step_size)
        g = np.where(sign < 0, 0, g).astype(p.dtype)  # no step where the sign flipped
        p -= np.sign(g) * step_size
        prev[...] = g


UPDATES: dict[str, Callable[[Arrays, Arrays, list, dict], None]] = {
    "sgd": sgd, "adam": adam, "adamw": adamw, "rmsprop": rmsprop, "adagrad": adagrad,
    "adadelta": adadelta, "asgd": asgd, "rprop": rprop,
}


def run(name: str, params: list, states: list, group: dict) -> None:
    """One update of the parameters (tensors) that have a gradient.

    `states` holds one dict per parameter whose tensors are updated in place;
    new entries come back as tensors. Each parameter's array changes in place
    and its version counter moves on, so a graph that saved the old value
    refuses to run backward, as in PyTorch."""
    # (loops, not comprehensions: this runs every step, and in Python 3.11 a
    # comprehension costs a function call of its own)
    live, arrays, ps, gs = [], [], [], []
    for p, st in zip(params, states):
        g = p.grad
        if g is None:
            continue
        live.append((p, st))
        a = {}
        for k, v in st.items():
            a[k] = v.data if isinstance(v, Tensor) else v
        arrays.append(a)
        ps.append(p.data)
        gs.append(g.data)
    UPDATES[name](ps, gs, arrays, group)
    for (p, st), new in zip(live, arrays):
        bump_version(p)
        for k, v in new.items():
            if isinstance(v, np.ndarray):
                old = st.get(k)
                if not (isinstance(old, Tensor) and old.data is v):
                    st[k] = torch_tensor(v)
            else:
                st[k] = v
