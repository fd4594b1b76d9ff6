"""What R's distributions call (`distr_*()`, and `d$sample()`, `d$mean`, ...
on the Python distribution an R value holds): R's numbers as tensors, sample
shapes as R vectors, and Categorical's categories 1-based in R."""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from .. import distributions as D
from ..tensor import Tensor
from . import closures, one_based

# R torch's spellings of the fields and methods whose Python names differ
_R_NAMES = {".validate_args": "validate_args", ".extended_shape": "_extended_shape",
            ".validate_sample": "_validate_sample", ".natural_params": "_natural_params",
            ".log_normalizer": "_log_normalizer", ".mean_carrier_measure":
            "_mean_carrier_measure", ".unbroadcasted_scale_tril": "_unbroadcasted_scale_tril",
            ".num_events": "_num_events", ".param": "_param", ".probs": "_probs",
            ".logits": "_logits", ".event_ndims": "_event_ndims", ".pad": "_pad"}


def _attr(d: D.Distribution, name: str) -> str:
    py = _R_NAMES.get(name, name)
    if py.startswith("_") and py not in _R_NAMES.values() or not hasattr(d, py):
        raise AttributeError(f"a {getattr(d, 'r_name', d.r_class)} has no field or method "
                             f"`{name}`")
    return py


def method_of(d: D.Distribution | D.Constraint, name: str) -> Callable | None:
    """The Python method behind `d$name` (its signature is the R closure's), or None
    for a field."""
    fn = inspect.getattr_static(type(d), _attr(d, name), None)
    return fn if inspect.isfunction(fn) else None


def _categories(d: D.Distribution) -> bool:
    return isinstance(d, D.Categorical)


def _category(v: Any) -> Tensor:
    """An R category (1 to K, any numeric type) as the 0-based int64 one."""
    return one_based.labels(D.as_param_tensor(v).to(dtype="int64"))


def _r_value(v: Any) -> Any:
    if isinstance(v, tuple) and all(isinstance(s, (int, np.integer)) for s in v):
        # a shape: an R integer vector (no dims: NULL, as R torch's event_shape)
        return np.asarray(v, dtype=np.int32) if v else None
    return v


def distribution_get(d: D.Distribution, name: str) -> Any:
    """A field: `d$mean`, `d$batch_shape` (an R vector), `d$loc`, ..."""
    return _r_value(getattr(d, _attr(d, name)))


def distribution_call(d: D.Distribution, name: str, *args: Any, **kwargs: Any) -> Any:
    """A method, with R's conventions: values given as R numbers become tensors;
    a Categorical's categories are 1-based."""
    fn = getattr(d, _attr(d, name))
    if _categories(d) and name in ("log_prob", ".validate_sample"):
        args = tuple(_category(a) for a in args)
        kwargs = {k: _category(v) for k, v in kwargs.items()}
    out = fn(*args, **kwargs)
    if _categories(d) and name in ("sample", "enumerate_support"):
        out = one_based.to_r(out)
    return _r_value(out)


def constraints() -> dict[str, Any]:
    """R torch's constraint_* objects, and for the classes R makes them of with
    `$new(...)` the closure of their constructor (closures.bound_closure)."""
    table = {n: getattr(D, n) for n in dir(D) if n.startswith("constraint_")}
    table["Constraint"] = D.Constraint
    return {n: closures.bound_closure(v, v.__init__) if isinstance(v, type) else v
            for n, v in table.items()}


R_FUNCTIONS: dict[str, Callable] = {name: getattr(D, name)
                                    for name in D.__all__ if name.startswith("distr_")}
R_FUNCTIONS.update({".distribution_get": distribution_get,
                    ".distribution_call": distribution_call,
                    ".constraints": constraints})
