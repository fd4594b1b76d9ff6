"""Python started inside a plain R process (Rscript, the R console, knitr, an
R Jupyter kernel) by the `torch` R package itself.

The shim's C part calls `started()` once, right after starting the
interpreter (see `C_start_python` in r_compat/src/init.c), so that the
process behaves as under `rtorch-py run`: NumPy is silent about NaN/Inf as
torch is, Python's collector is tuned the same way (same per-op cost), and
the engine's Python warnings become R warnings.
"""
from __future__ import annotations

import gc
import warnings
from typing import Any

import numpy as np

__all__ = ["started", "tune_process", "route_warnings", "PENDING_WARNINGS", "STEPS_ENDED",
           "step_ended"]


def tune_process() -> None:
    """What `rtorch-py run` does to the process before running a script."""
    np.seterr(all="ignore")  # torch computes NaN/Inf silently; NumPy would warn
    # Python objects owned by R wait for R's garbage collector; fewer young
    # collections spare Python's collector most of its useless traversals.
    gc.freeze()
    gc.set_threshold(10000, 20, 20)


def started() -> None:
    """Set up a Python just started inside R."""
    tune_process()
    route_warnings()


# Python warnings raised during a call from R, signalled as R warnings by the
# bridge when the call returns (read and emptied by r_compat/src/calls.c).
PENDING_WARNINGS: list[str] = []


def route_warnings() -> None:
    """Python warnings (the engine's) become R warnings, signalled in the R
    call that raised them: R's handlers (`expect_warning`, `suppressWarnings`)
    see them, and R shows each one every time, as R torch does."""
    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
             line: Any = None) -> None:
        PENDING_WARNINGS.append(str(message))

    warnings.showwarning = show
    warnings.filterwarnings("always", category=UserWarning)


# One entry per backward pass run in a call from R, read and emptied by the bridge
# when the call returns: the tensors of the forward pass that R was handed are
# garbage by then, and R's collector frees them sooner (r_compat/src/memory.c).
STEPS_ENDED: list[None] = []


def step_ended() -> None:
    STEPS_ENDED.append(None)
