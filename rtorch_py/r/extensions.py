"""R-facing parts of the package beyond the tensor API (nn, optim, data, ...).

Each module in MODULES exports `R_FUNCTIONS: dict[str, Callable]`, the
Python callables R gets under those names (one `.External` each; names that
start with "." stay internal to the R package, for its own R code, and so do
those a module lists in `R_INTERNAL`: R torch's unexported functions). The R
tables are built from these and from the op registry: nothing else lists them.
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Callable

from . import (data_api, distr_api, functional_api, internal_api, jit_api, modules, nn_api,
               optim_api)

MODULES: list[ModuleType] = [optim_api, nn_api, modules, data_api, distr_api, jit_api,
                             functional_api, internal_api]


def functions() -> dict[str, Callable]:
    """Also from the modules named in RTORCH_PY_R_EXTENSIONS (comma-separated):
    how the test suite gives its R tests helpers of its own."""
    extra = [importlib.import_module(m)
             for m in os.environ.get("RTORCH_PY_R_EXTENSIONS", "").split(",") if m]
    out: dict[str, Callable] = {}
    for module in MODULES + extra:
        table = module.R_FUNCTIONS
        clash = out.keys() & table.keys()
        if clash:
            raise RuntimeError(f"{module.__name__} defines R functions already defined: "
                               f"{sorted(clash)}")
        out.update(table)
    return out


def internal() -> set[str]:
    """The functions R keeps unexported (as R torch does its own), by name."""
    return {n for module in MODULES for n in getattr(module, "R_INTERNAL", ())}
