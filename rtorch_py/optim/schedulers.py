"""Learning-rate schedulers with R torch's names (`lr_step`, `lr_lambda`, ...).

Each holds its optimiser, `last_epoch` (0 after construction) and the groups'
`base_lrs`; `step()` moves one epoch on and writes each group's "lr". R torch's
lr_* are these (rtorch_py/r/optim_api.py); `verbose` is R torch's flag: R
reports the changes (PyTorch's schedulers print nothing).
"""
from __future__ import annotations

import math
from typing import Any, Callable

from .optimizer import Optimizer


class LRScheduler:
    def __init__(self, optimizer: Optimizer, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for g in optimizer.param_groups:
                g.setdefault("initial_lr", g["lr"])
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.verbose = verbose
        self.step()

    def get_lr(self) -> list:
        raise NotImplementedError

    def step(self) -> None:
        self.last_epoch += 1
        for g, lr in zip(self.optimizer.param_groups, self.get_lr()):
            g["lr"] = lr

    def get_last_lr(self) -> list:
        return [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return lrs
        return [lr * self.gamma for lr in lrs]


class LambdaLR(LRScheduler):
    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1,
                 verbose: bool = False) -> None:
        n = len(optimizer.param_groups)
        self.lr_lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else \
            [lr_lambda] * n
        if len(self.lr_lambdas) != n:
            raise ValueError(f"expected {n} lr_lambdas, but got {len(self.lr_lambdas)}")
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self) -> list:
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self) -> dict:
        return {k: v for k, v in super().state_dict().items() if k != "lr_lambdas"}


class MultiplicativeLR(LambdaLR):
    def get_lr(self) -> list:
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if self.last_epoch > 0:
            return [lr * f(self.last_epoch) for lr, f in zip(lrs, self.lr_lambdas)]
        return lrs


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self) -> list:
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if e == 0:
            return lrs
        if (e - 1 - T) % (2 * T) == 0:
            return [lr + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for lr, base in zip(lrs, self.base_lrs)]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) *
                (lr - lo) + lo for lr in lrs]


class OneCycleLR(LRScheduler):
    def __init__(self, optimizer: Optimizer, max_lr: Any, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: Any = 0.85,
                 max_momentum: Any = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1, verbose: bool = False) -> None:
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND "
                                 "steps_per_epoch)")
            total_steps = int(epochs) * int(steps_per_epoch)
        if total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        self.total_steps = int(total_steps)
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        n = len(optimizer.param_groups)
        per_group = (lambda v: list(v) if isinstance(v, (list, tuple)) else [v] * n)
        if three_phase:
            self.phases = [
                dict(end_step=pct_start * total_steps - 1, start_lr="initial_lr",
                     end_lr="max_lr", start_momentum="max_momentum",
                     end_momentum="base_momentum"),
                dict(end_step=2 * pct_start * total_steps - 2, start_lr="max_lr",
                     end_lr="initial_lr", start_momentum="base_momentum",
                     end_momentum="max_momentum"),
                dict(end_step=total_steps - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum")]
        else:
            self.phases = [
                dict(end_step=pct_start * total_steps - 1, start_lr="initial_lr",
                     end_lr="max_lr", start_momentum="max_momentum",
                     end_momentum="base_momentum"),
                dict(end_step=total_steps - 1, start_lr="max_lr", end_lr="min_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum")]
        if last_epoch == -1:
            for g, m in zip(optimizer.param_groups, per_group(max_lr)):
                g["initial_lr"] = m / div_factor
                g["max_lr"] = m
                g["min_lr"] = g["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum (or betas) with "
                                 "cycle_momentum enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            for g, lo, hi in zip(optimizer.param_groups, per_group(base_momentum),
                                 per_group(max_momentum)):
                if last_epoch == -1:
                    self._set_momentum(g, hi)
                g["max_momentum"], g["base_momentum"] = hi, lo
        super().__init__(optimizer, last_epoch, verbose)

    def _set_momentum(self, g: dict, m: float) -> None:
        if self.use_beta1:
            g["betas"] = (m, *tuple(g["betas"])[1:])
        else:
            g["momentum"] = m

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        for g in self.optimizer.param_groups:
            start = 0.0
            for i, ph in enumerate(self.phases):
                end = ph["end_step"]
                if step <= end or i == len(self.phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(g[ph["start_lr"]], g[ph["end_lr"]], pct)
                    if self.cycle_momentum:
                        self._set_momentum(g, self._anneal(g[ph["start_momentum"]],
                                                           g[ph["end_momentum"]], pct))
                    break
                start = end
            lrs.append(lr)
        return lrs


class ReduceLROnPlateau:
    """Lower the lr by `factor` when a metric stops improving for `patience` steps."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: Any = 0, eps: float = 1e-8,
                 verbose: bool = False) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode!r} is unknown: use 'min' or 'max'")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode!r} is unknown: use 'rel' or 'abs'")
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        self.min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * n
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps, self.verbose = cooldown, eps, verbose
        self.cooldown_counter = 0
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.last_epoch = 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min":
            return a < (best * (1 - self.threshold) if self.threshold_mode == "rel"
                        else best - self.threshold)
        return a > (best * (1 + self.threshold) if self.threshold_mode == "rel"
                    else best + self.threshold)

    def step(self, metrics: Any) -> None:
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for g, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
                new = max(g["lr"] * self.factor, min_lr)
                if g["lr"] - new > self.eps:
                    g["lr"] = new
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


def lr_step(optimizer: Optimizer, step_size: int, gamma: float = 0.1,
            last_epoch: int = -1) -> StepLR:
    return StepLR(optimizer, step_size, gamma, last_epoch)


def lr_lambda(optimizer: Optimizer, lr_lambda: Callable, last_epoch: int = -1,
              verbose: bool = False) -> LambdaLR:
    return LambdaLR(optimizer, lr_lambda, last_epoch, verbose)


def lr_multiplicative(optimizer: Optimizer, lr_lambda: Callable, last_epoch: int = -1,
                      verbose: bool = False) -> MultiplicativeLR:
    return MultiplicativeLR(optimizer, lr_lambda, last_epoch, verbose)


def lr_cosine_annealing(optimizer: Optimizer, T_max: int, eta_min: float = 0,
                        last_epoch: int = -1, verbose: bool = False) -> CosineAnnealingLR:
    return CosineAnnealingLR(optimizer, T_max, eta_min, last_epoch, verbose)


def lr_one_cycle(optimizer: Optimizer, max_lr: Any, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: Any = 0.85,
                 max_momentum: Any = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, last_epoch: int = -1,
                 verbose: bool = False) -> OneCycleLR:
    return OneCycleLR(optimizer, max_lr, total_steps, epochs, steps_per_epoch, pct_start,
                      anneal_strategy, cycle_momentum, base_momentum, max_momentum,
                      div_factor, final_div_factor, False, last_epoch, verbose)


def lr_reduce_on_plateau(optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                         patience: int = 10, threshold: float = 1e-4,
                         threshold_mode: str = "rel", cooldown: int = 0, min_lr: Any = 0,
                         eps: float = 1e-8, verbose: bool = False) -> ReduceLROnPlateau:
    return ReduceLROnPlateau(optimizer, mode, factor, patience, threshold, threshold_mode,
                             cooldown, min_lr, eps, verbose)
