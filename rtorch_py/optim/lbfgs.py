"""L-BFGS, with an optional strong-Wolfe line search, as PyTorch and R torch
define it (one parameter group; the state lives with the first parameter)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..autograd import enable_grad, no_grad
from ..tensor import Tensor, wrap
from .optimizer import Optimizer


def _float(x: Any) -> float:
    if isinstance(x, Tensor):
        return float(x.data.reshape(-1)[0])
    if isinstance(x, np.ndarray):
        return float(x.reshape(-1)[0])
    return float(x)


def _axpy(a: np.ndarray, alpha: Any, b: np.ndarray) -> np.ndarray:
    """a + alpha * b rounded once, as libtorch's add(a, b, alpha) (a fused
    multiply-add in the tensors' dtype; exact through double for float32)."""
    wide = np.longdouble if a.dtype == np.float64 else np.float64
    return (a.astype(wide) + wide(alpha) * b.astype(wide)).astype(a.dtype)


def cubic_interpolate(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                      bounds: tuple | None = None) -> float:
    """The minimiser of the cubic through two points with their slopes, kept in bounds."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = math.sqrt(d2_square)
        if x1 <= x2:
            pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(pos, lo), hi)
    return (lo + hi) / 2.0


def strong_wolfe(obj_func: Callable, x: Any, t: float, d: np.ndarray, f: float, g: np.ndarray,
                 gtd: float, c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                 max_ls: int = 25) -> tuple:
    """Line search along d from x: returns (loss, flat grad, step, evaluations).
    `obj_func(x, t, d)` gives (loss, flat gradient) at x + t d."""
    d_norm = float(np.abs(d).max())
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], \
                [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bf, bg, bgtd = [t], [f_new], [g_new], [gtd_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], \
                [gtd_prev, gtd_new]
            break
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        tmp = t
        t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, (min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bf, bg, bgtd = [0.0, t], [f, f_new], [g, g_new], [gtd, gtd_new]

    # zoom: shrink the bracket until the Wolfe conditions hold
    insuf_progress = False
    low, high = (0, 1) if bf[0] <= bf[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = cubic_interpolate(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1])
        hi_b, lo_b = max(bracket), min(bracket)
        eps = 0.1 * (hi_b - lo_b)
        if min(hi_b - t, t - lo_b) < eps:
            if insuf_progress or t >= hi_b or t <= lo_b:
                t = hi_b - eps if abs(t - hi_b) < abs(t - lo_b) else lo_b + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bf[low]:
            bracket[high], bf[high], bg[high], bgtd[high] = t, f_new, g_new.copy(), gtd_new
            low, high = (0, 1) if bf[0] <= bf[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bf[high], bg[high], bgtd[high] = \
                    bracket[low], bf[low], bg[low], bgtd[low]
            bracket[low], bf[low], bg[low], bgtd[low] = t, f_new, g_new.copy(), gtd_new
    return bf[low], bg[low], bracket[low], evals


class LBFGS(Optimizer):
    def __init__(self, params: Any, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"only 'strong_wolfe' is supported as line_search_fn, got "
                             f"{line_search_fn!r}")
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self) -> np.ndarray:
        return np.concatenate([np.zeros(p.data.size, p.data.dtype) if p.grad is None
                               else p.grad.data.reshape(-1) for p in self._params])

    def _add_grad(self, step: Any, update: np.ndarray) -> None:
        offset = 0
        for p in self._params:
            n = p.data.size
            p.copy_(wrap(_axpy(p.data, step, update[offset:offset + n].reshape(p.shape))))
            offset += n

    def _set_params(self, values: list) -> None:
        for p, v in zip(self._params, values):
            p.copy_(v)

    def _evaluate(self, closure: Callable) -> tuple:
        with enable_grad():
            loss = closure()
        return loss, _float(loss)

    def step(self, closure: Callable | None = None) -> Any:
        if closure is None:
            raise ValueError("LBFGS needs a closure that recomputes the loss (and calls "
                             "backward): opt.step(closure)")
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable) -> Any:
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], int(group["max_iter"]), group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = int(group["history_size"])
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss, loss = self._evaluate(closure)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= tol_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, h_diag = [], [], [], 1.0
            else:
                # (the scalars in the parameters' dtype, each operation rounded where
                # PyTorch's rounds it: its scalars are 0-d tensors)
                one = flat_grad.dtype.type(1)
                y = flat_grad - prev_flat_grad
                s = d * flat_grad.dtype.type(t)
                ys = y @ s
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(one / ys)
                    h_diag = ys / (y @ y)
                # two-loop recursion: d = -H g
                al = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = (old_stps[i] @ q) * ro[i]
                    q = _axpy(q, -al[i], old_dirs[i])
                r = q * flat_grad.dtype.type(h_diag)
                for i in range(len(old_dirs)):
                    be_i = (old_dirs[i] @ r) * ro[i]
                    r = _axpy(r, al[i] - be_i, old_stps[i])
                d = r
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, flat_grad.dtype.type(1) / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = float(flat_grad @ d)
            if gtd > -tol_change:
                break

            ls_evals = 0
            if group["line_search_fn"] is not None:
                x_init = [p.data.copy() for p in self._params]

                def obj_func(x: list, step: float, direction: np.ndarray) -> tuple:
                    self._add_grad(step, direction)
                    _, f_val = self._evaluate(closure)
                    g_val = self._flat_grad()
                    self._set_params(x)
                    return f_val, g_val

                loss, flat_grad, t, ls_evals = strong_wolfe(obj_func, x_init, t, d, loss,
                                                            flat_grad, gtd)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tol_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    _, loss = self._evaluate(closure)
                    flat_grad = self._flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tol_grad
                    ls_evals = 1
            current_evals += ls_evals
            state["func_evals"] += ls_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tol_change or abs(loss - prev_loss) < tol_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


def optim_lbfgs(params: Any, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                history_size: int = 100, line_search_fn: str | None = None) -> LBFGS:
    return LBFGS(params, lr, max_iter, max_eval, tolerance_grad, tolerance_change,
                 history_size, line_search_fn)
