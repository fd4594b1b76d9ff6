"""What R's nn part calls: the `nnf_*` functions and the built-in layers, bound
by the one binder (binding.py): what R counts from 1 is declared on each
`nnf_*` function, on each layer's class (its constructor's options) and on its
forward (its inputs) by `@r_counted`, or taken from the `nnf_*` function it applies.

Built-in layers are Python modules (`rtorch_py.nn`); R makes one generator
per layer this module lists (LAYERS, from what `rtorch_py.nn` exports), each
an R6 class over one generic wrapper (`r_compat/R/nn.R`), so no layer is
written twice and R's list of layers is Python's.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from .. import nn as _nn
from ..formals import counted, declared, python_name, python_names
from ..function import NamedList
from ..nn import functional as F
from ..nn.module import Module, buffer_is_persistent, is_nn_buffer, is_nn_parameter
from ..nn.packed import PackedSequence
from ..tensor import Tensor
from . import binding, one_based


def _signature_names(fn: Callable) -> list[str]:
    try:
        return [p.name for p in inspect.signature(fn).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


def _with_indices(out: Any) -> Any:
    return 1 if isinstance(out, tuple) else False


def _positions_out(fn: Callable) -> Callable | bool:
    """Where a result holds positions (1-based in R): max pooling's [output, indices], of a
    function or layer that takes `return_indices`."""
    return _with_indices if "return_indices" in inspect.signature(fn).parameters else False


def _r_function(name: str, fn: Callable, how: dict[str, str] | None = None) -> Callable:
    """An `nnf_*` (or nn_utils, nn_init) function, or a layer's constructor, as R
    calls it: the one binder, with what R counts from 1 (`how`; a function's
    declaration says it: `@r_counted`)."""
    how = counted(fn) if how is None else how
    params = inspect.signature(fn).parameters
    # a label left out takes its declared default as R's (ignore_index = -100)
    defaults = {k: params[k].default for k, c in how.items() if "label" in c and
                k in params and params[k].default not in (params[k].empty, None)}
    declared_defaults, conventions = binding.declared_facts(name, fn, counted=how)
    return binding.r_callable(fn, binding.RFacts(
        name, counted=how, defaults={**defaults, **declared_defaults}, vectors=True,
        arguments=conventions, returns_indices=_positions_out(fn)))


# --------------------------------------------------------------------------
# Built-in layers: made and called with R's conventions (the module system
# itself, parameters, children, state dicts: modules.py)


def _layer_classes() -> dict[str, type]:
    return {n: getattr(_nn, n) for n in _nn.__all__
            if isinstance(getattr(_nn, n), type) and issubclass(getattr(_nn, n), Module)
            and n.startswith("nn_")
            and n not in ("nn_sequential", "nn_module_list", "nn_module_dict")}


LAYERS = _layer_classes()
_CONSTRUCTORS = {n: _r_function(n, cls) for n, cls in LAYERS.items()}


def nn_new(name: str, *args: Any, **kwargs: Any) -> Module:
    """The built-in layer `name` made from the arguments R's generator (or a subclass's
    `super$initialize()`) was given: R matched them against its formals
    (closures.function_shape(kind="layer")) and passes on those given, by R's names;
    by position only what its `...` took."""
    cls = LAYERS.get(name)
    if cls is None:
        raise ValueError(f"no built-in layer named {name!r}")
    formals = declared(cls)
    if formals is not None and args:  # (R torch's `...` takes only names its layer has)
        raise binding.dots_not_empty(name, [(None, v) for v in args])
    renamed = python_names(cls)
    kwargs = {python_name(k, renamed): v for k, v in kwargs.items()}
    params = inspect.signature(cls).parameters
    if formals is not None and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        extra = [(k, v) for k, v in kwargs.items() if k not in params]
        if extra:
            raise binding.dots_not_empty(name, extra)
    module = _CONSTRUCTORS[name](*args, **kwargs)
    # the arguments R gave as integers (R torch's fields keep their type: modules._attribute)
    given = {**dict(zip(params, args)), **kwargs}
    module.r_integers = tuple(k for k, v in given.items() if _is_r_integer(v))
    return module


def _is_r_integer(v: Any) -> bool:
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "iu"
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def nn_class_methods(name: str) -> NamedList:
    """The constructors a layer's class has besides itself, as R calls them
    (`nn_embedding_bag$from_pretrained(...)`), keyed `layer$method`: R's generator gets
    each as a closure of its formals (closures.function_shape, kind "class_method")."""
    cls = LAYERS[name]
    found = [m for m in ("from_pretrained",) if isinstance(vars(cls).get(m), classmethod)]
    return NamedList([f"{name}${m}" for m in found],
                     [_r_function(f"{name}${m}", getattr(cls, m), counted(cls)) for m in found])


def _forward(cls: type) -> Callable:
    """A layer's call as R makes it, by the one binder from its forward's declaration:
    its inputs as their annotations and `@r_counted` say (class labels 1-based), R
    vectors as Python values, max pooling's positions 1-based."""
    return binding.r_callable(Module.__call__, binding.RFacts(
        cls.__name__, counted(cls.forward), _positions_out(cls), vectors=True),
        declared_by=cls.forward)


_FORWARDS: dict[type, Callable] = {}


def nn_forward(module: Module, *args: Any, **kwargs: Any) -> Any:
    """A built-in layer called from R (its forward bound once per class)."""
    call = _FORWARDS.get(type(module))
    if call is None:
        call = _FORWARDS[type(module)] = _forward(type(module))
    return call(module, *args, **kwargs)


def nn_kind(x: Any) -> str:
    if is_nn_parameter(x):
        return "parameter"
    if is_nn_buffer(x):
        return "buffer_persistent" if buffer_is_persistent(x) else "buffer"
    return ""


def nn_mark(x: Any, kind: str, flag: bool = True) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError("`x` must be a tensor.")
    if kind == "parameter":
        return _nn.nn_parameter(x, flag)
    return _nn.nn_buffer(x, flag)


def nn_layer_names() -> list:
    return sorted(LAYERS)


def nn_layer_args(name: str) -> list:
    """The names a built-in layer's constructor takes."""
    cls = LAYERS[name]
    names = _signature_names(cls.__init__)[1:]
    if not names:  # (activations take theirs as *args: their fields)
        names = [k for k in vars(cls()) if not k.startswith("_") and k != "training"]
    return names


# --------------------------------------------------------------------------
# Packed sequences (their positions 1-based in R) and weight normalisation


def packed_sequence_get(x: PackedSequence, name: str) -> Any:
    """`packed$data`, `$batch_sizes`, `$sorted_indices`, `$unsorted_indices`
    (positions, 1-based; NULL for a batch that came sorted)."""
    if name in ("data", "batch_sizes"):
        return getattr(x, name)
    if name in ("sorted_indices", "unsorted_indices"):
        v = getattr(x, name)
        return None if v is None else one_based.to_r(v)
    raise AttributeError(f"a PackedSequence has data, batch_sizes, sorted_indices and "
                         f"unsorted_indices; no `{name}`")


def _r_weight_norm_dim(dim: Any) -> int | None:
    """R's dim (1-based; -1, as in R torch, the whole weight)."""
    return None if dim is None else one_based.dim(dim)


def weight_norm_new(name: Any, dim: Any) -> _nn.nn_utils_weight_norm:
    return _nn.nn_utils_weight_norm(name, _r_weight_norm_dim(dim))


def weight_norm_call(helper: _nn.nn_utils_weight_norm, method: str, module: Module,
                     *args: Any) -> Any:
    """`weight_norm$apply(module, name, dim)` and the other methods, on the
    module's Python side."""
    if method in ("apply", "compute_weight") and len(args) > 1:
        args = (args[0], _r_weight_norm_dim(args[1]))
    return getattr(helper, method)(module, *args)


R_FUNCTIONS: dict[str, Callable] = {
    n: _r_function(n, getattr(_nn, n)) for n in [
        *F.__all__, "nnf_multi_head_attention_forward", *_nn.init.__all__,
        *(n for n in _nn.__all__ if n.startswith(("nn_utils_rnn_", "nn_utils_clip_grad_")))]}
R_FUNCTIONS.update({
    # (a layer's forward is api.nn_forward, whose pointer R keeps: the call is hot)
    ".nn_new": nn_new, ".nn_kind": nn_kind, ".nn_mark": nn_mark,
    ".nn_py_layer_names": nn_layer_names, ".nn_layer_args": nn_layer_args,
    ".nn_class_methods": nn_class_methods,
    ".packed_sequence_get": packed_sequence_get, ".weight_norm_new": weight_norm_new,
    ".weight_norm_call": weight_norm_call,
})
