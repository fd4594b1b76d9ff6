"""R-facing parts of the package beyond the tensor API (nn, optim, data, ...).

Each module named in MODULES exports `R_FUNCTIONS: dict[str, Callable]`, the
Python callables R gets under those names (one `.External` each; names that
start with "." stay internal to the R package, for its own R code). The R
tables are built from these and from the op registry: nothing else lists them.
"""
from __future__ import annotations

import importlib
from typing import Callable

MODULES: list[str] = ["rtorch_py.r.optim_api", "rtorch_py.r.nn_api"]


def functions() -> dict[str, Callable]:
    out: dict[str, Callable] = {}
    for name in MODULES:
        table = importlib.import_module(name).R_FUNCTIONS
        clash = out.keys() & table.keys()
        if clash:
            raise RuntimeError(f"{name} defines R functions already defined: {sorted(clash)}")
        out.update(table)
    return out
