"""What the C bridge (`r_compat/src/`) imports: the one module R sees.

It gathers, from the modules that do the work, the conversions the bridge
calls (`_from_r_array`, `_error_message`, `R_CLASSES`, `RError`), the
functions `bridge.R` fetches by name (`tensor_get`, `index`, ...), and the
tables `.onLoad` fills R's environments from (`FUNCTIONS`, `METHODS`, ...),
generated from the op registry by `tables.py`, and the shape of the closures R
makes of them (`_closures`, `_method_policies`: `closures.py`).

- `convert.py`: R values and 1-based dims
- `tensor_api.py`: creation, properties, non-op tensor methods, autograd entry points
- `indexing.py`: `[` and `[<-`
- `functions.py`: `autograd_function()` with R closures, `ctx` as R sees it
- `tables.py`: the ops' R forms, generated
- `closures.py`: the generated functions' formals, the tensor methods' result policies
- `modules.py`, `nn_api.py`: `self$name` of a module and a built-in layer's forward (the
  other functions of nn, optim and data reach R through `extensions.py`)

This module imports no R: it can be used and tested without it.
"""
from __future__ import annotations

from typing import Any, Callable

from .. import distributions as _D
from ..constructors import Generator, device_type  # noqa: F401 (torch_device() checks its type)
from ..engine import RemovableHandle
from ..function import NamedList  # noqa: F401 (read by the bridge)
from ..tensor import Storage, Tensor  # noqa: F401 (Tensor: read by the bridge)
from . import closures, distr_api, optim_api, tables
from .convert import (R_CLASSES, UNDEFINED, RError, Scope, UndefinedTensor,  # noqa: F401
                      _error_message, _from_r_array)
from .functions import (apply_function, ctx_get, ctx_mark_dirty,  # noqa: F401
                        ctx_mark_non_differentiable, ctx_save, ctx_save_for_forward,
                        make_autograd_function)
from .in_r import PENDING_WARNINGS as _PENDING_WARNINGS  # noqa: F401 (read by the bridge)
from .in_r import STEPS_ENDED as _STEPS_ENDED  # noqa: F401 (read by the bridge)
from .indexing import index, index_put  # noqa: F401
from .modules import get as nn_get  # noqa: F401
from .nn_api import nn_forward  # noqa: F401
from .tensor_api import (anomaly_scope, as_array, cpu_only, dtype_eq, dtype_repr,  # noqa: F401
                         dual_level_scope, generator_method, generator_method_of,
                         is_grad_enabled, node_get, node_repr, scope_exit, set_grad_mode,
                         storage_method, storage_method_of, tensor_get, tensor_repr,
                         tensor_set)

_TABLES = {**tables.build(), **tables.invisible()}


def _pointers(table: str) -> NamedList:
    """A table as (names, callables), for the R side's set-up."""
    tab = _TABLES[table]
    names = sorted(tab)
    return NamedList(names, [tab[n] for n in names])


def _names(table: str) -> list:
    return sorted(_TABLES[table])


def _closures(names: list, kind: str = "function") -> NamedList:
    """Per exported function of FUNCTIONS (kind "method": per tensor method of METHODS),
    its closure's shape (closures.FunctionShape): list(formals, send_as, positional),
    for the R side's set-up; the formals alone of a generator R makes at load, per
    built-in layer (kind "layer") or per function of optim_api's families
    ("schedulers", "ignite", "builtin")."""
    names = [names] if isinstance(names, str) else names  # (R's one name: a string)
    if kind in ("schedulers", "ignite", "builtin"):
        shapes = [closures.FunctionShape(optim_api.generator_formals(kind, n), (), 0)
                  for n in names]
    else:
        shapes = [closures.function_shape(n, _TABLES, kind) for n in names]
    return NamedList(list(names), [
        NamedList(["formals", "send_as", "positional"],
                  [s.formals, closures.Names(s.send_as), s.positional]) for s in shapes])


def _method_policies() -> NamedList:
    """Per tensor method, the index of its policy in closures.METHOD_POLICIES."""
    names = sorted(_TABLES["METHODS"])
    invisible = _TABLES["INVISIBLE_METHODS"]
    return NamedList(names, [closures.METHOD_POLICIES.index(closures.method_policy(n, invisible))
                             for n in names])


# The Python objects whose methods R calls with `x$name(...)` (R/bridge.R's .bound_method):
# per class, the Python method behind a name (None: a field; its signature gives the R
# closure's formals) and what R's call runs, `call(x, name, ...)`.
BOUND: dict[type, tuple[Callable, Callable]] = {
    _D.Distribution: (distr_api.method_of, distr_api.distribution_call),
    _D.Constraint: (distr_api.method_of, distr_api.distribution_call),
    Storage: (storage_method_of, storage_method),
    Generator: (generator_method_of, generator_method),
    RemovableHandle: (lambda h, name: RemovableHandle.remove if name == "remove" else None,
                      lambda h, name: h.remove()),
}


def bound_method(obj: Any, name: str) -> NamedList | None:
    """`x$name`'s closure, for R to make once per class and name (closures.bound_closure),
    or NULL when `name` is a field."""
    method_of, call = next(v for cls, v in BOUND.items() if isinstance(obj, cls))
    fn = method_of(obj, name)
    if fn is None:
        return None
    return closures.bound_closure(lambda x, *a, **kw: call(x, name, *a, **kw), fn)
