"""What R's nn part calls: the `nnf_*` functions and the built-in layers,
with R torch's conventions translated here (1-based dims and class indices,
R vectors for sizes).

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
from ..formals import counted, declared, python_names
from ..function import NamedList
from ..nn import functional as F
from ..nn.module import Module, buffer_is_persistent, is_nn_buffer, is_nn_parameter
from ..nn.packed import PackedSequence
from ..tensor import Tensor
from . import binding, matching, one_based


# --------------------------------------------------------------------------
# R values -> Python


def _py(v: Any) -> Any:
    """R vectors of sizes (numpy arrays) as tuples of ints or floats; a
    length-1 vector as a number."""
    if isinstance(v, np.ndarray):
        flat = v.reshape(-1)
        vals = [int(x) if float(x).is_integer() and v.dtype.kind in "fiu" else x.item()
                for x in flat]
        if v.dtype.kind == "b":
            vals = [bool(x) for x in flat]
        return vals[0] if flat.size == 1 else tuple(vals)
    if isinstance(v, NamedList):
        names = v.names()
        if all(names):
            return {n: x for n, x in zip(names, v.values())}
        return [_py(x) for x in v.values()]
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


# Per function: argument name -> translation (R -> Python)
_DIM_ARGS = {"dim": one_based.dims, "start_dim": one_based.dims, "end_dim": one_based.dims}
_LABELS, _IGNORE = one_based.labels, one_based.ignore_label
_TRANSLATE: dict[str, dict[str, Callable]] = {
    # modules: constructor arguments
    "nn_flatten": _DIM_ARGS, "nn_unflatten": _DIM_ARGS, "nn_softmax": _DIM_ARGS,
    "nn_log_softmax": _DIM_ARGS, "nn_softmin": _DIM_ARGS, "nn_glu": _DIM_ARGS,
    "nn_embedding": {"padding_idx": _LABELS}, "nn_embedding_bag": {"padding_idx": _LABELS},
    "nn_cross_entropy_loss": {"ignore_index": _IGNORE},
    "nn_nll_loss": {"ignore_index": _IGNORE}, "nn_contrib_sparsemax": _DIM_ARGS,
}
# Defaults R torch gives that differ from the Python (0-based) ones
_R_DEFAULTS = {
    # the ignored class value shifts with the targets (translated below)
    "nn_nll_loss": {"ignore_index": -100}, "nn_cross_entropy_loss": {"ignore_index": -100},
}
# What forward's inputs need (modules), by position
_FORWARD_TARGETS = {"nn_cross_entropy_loss": (1, _LABELS), "nn_nll_loss": (1, _LABELS),
                    "nn_multi_margin_loss": (1, _LABELS),
                    "nn_multilabel_margin_loss": (1, one_based.end_marked_labels),
                    "nn_embedding": (0, _LABELS), "nn_embedding_bag": (0, _LABELS),
                    "nn_max_unpool1d": (1, _LABELS), "nn_max_unpool2d": (1, _LABELS),
                    "nn_max_unpool3d": (1, _LABELS)}
# Results holding max pooling's positions (1-based in R): [output, indices]
_WITH_INDICES = ("max_pool", "adaptive_max_pool", "fractional_max_pool")


def r_conventions(name: str) -> tuple[tuple[str, ...], dict]:
    """How a function's or layer's arguments look from R: those counted from 1 there
    (dims, class indices), and the defaults R torch gives where they differ."""
    if name not in LAYERS:  # (a function: its declaration)
        how = counted(getattr(_nn, name, None))
        return tuple(k for k, c in how.items() if c in ("dim", "label")), {}
    rules = _TRANSLATE.get(name, {})
    shifted = tuple(k for k, rule in rules.items() if rule in (one_based.dims, _LABELS))
    return shifted, dict(_R_DEFAULTS.get(name, {}))


def _signature_names(fn: Callable) -> list[str]:
    try:
        return [p.name for p in inspect.signature(fn).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


def _call(name: str, fn: Callable, arg_names: list[str], args: tuple, kwargs: dict) -> Any:
    """A layer's constructor or class method called from R (the translation by name:
    _TRANSLATE)."""
    rules = _TRANSLATE.get(name, {})
    kwargs = {matching.python_name(k): v for k, v in kwargs.items()}
    bound, extra = matching.by_r_positions(arg_names, args, kwargs)
    if extra:
        raise matching.unused(name, extra, tuple((n,) for n in arg_names))
    for k, v in _R_DEFAULTS.get(name, {}).items():
        bound.setdefault(k, v)
    out = {}
    for k, v in bound.items():
        v = _py(v)
        out[k] = rules[k](v) if k in rules and v is not None else v
    try:
        return fn(**out)
    except Exception as e:
        if rules and hasattr(e, "one_based"):  # a class index or dim named: as R counts
            raise type(e)(e.one_based) from None
        raise


def _with_indices(out: Any) -> Any:
    return 1 if isinstance(out, tuple) else False


def _r_function(name: str, fn: Callable) -> Callable:
    """An `nnf_*` (or nn_utils, nn_init) function as R calls it: the one binder, with
    what its declaration says R counts from 1 (`@r_counted`)."""
    how = counted(fn)
    params = inspect.signature(fn).parameters
    # a label left out takes its declared default as R's (ignore_index = -100)
    defaults = {k: params[k].default for k, c in how.items() if "label" in c and
                params[k].default not in (params[k].empty, None)}
    indices = name.startswith(tuple("nnf_" + k for k in _WITH_INDICES))
    return binding.r_callable(fn, binding.RFacts(
        name, counted=how, defaults=defaults, vectors=True,
        returns_indices=_with_indices if indices else False))


# --------------------------------------------------------------------------
# Built-in layers: made and called with R's conventions (the module system
# itself, parameters, children, state dicts: modules.py)


def _layer_classes() -> dict[str, type]:
    return {n: getattr(_nn, n) for n in _nn.__all__
            if isinstance(getattr(_nn, n), type) and issubclass(getattr(_nn, n), Module)
            and n.startswith("nn_")
            and n not in ("nn_sequential", "nn_module_list", "nn_module_dict")}


LAYERS = _layer_classes()


def nn_new(name: str, *args: Any, **kwargs: Any) -> Module:
    cls = LAYERS.get(name)
    if cls is None:
        raise ValueError(f"no built-in layer named {name!r}")
    init = cls.__init__
    names = _signature_names(init)[1:]
    formals = declared(cls)
    if formals is not None:  # R torch's formals: matched by R's rules, passed by name
        args, kwargs = matching.Matcher(name, formals, cls, python_names(cls))(args, kwargs)
    if not names:  # *args layers (activations): keep positional order
        rules = _TRANSLATE.get(name, {})
        kw = {k: (rules[k](_py(v)) if k in rules and v is not None else _py(v))
              for k, v in kwargs.items()}
        return cls(*[_py(a) for a in args], **kw)
    return _call(name, cls, names, args, kwargs)


def nn_class_methods(name: str) -> list:
    """The constructors a layer's class has besides itself (`from_pretrained`),
    which R's generator gets (`nn_embedding$from_pretrained(...)`)."""
    cls = LAYERS[name]
    return [m for m in ("from_pretrained",) if isinstance(vars(cls).get(m), classmethod)]


def nn_class_call(name: str, method: str, *args: Any, **kwargs: Any) -> Module:
    fn = getattr(LAYERS[name], method)
    return _call(name, fn, _signature_names(fn), args, kwargs)


def nn_forward(module: Module, *args: Any, **kwargs: Any) -> Any:
    name = type(module).__name__
    if not kwargs and name not in _FORWARD_TARGETS and not name.startswith(_INDICES_OUT):
        # fast path (labelled): tensors in, nothing to translate either way
        for a in args:
            if type(a) is not Tensor:
                break
        else:
            return module(*args)
    pos, shift = _FORWARD_TARGETS.get(name, (None, None))
    if pos is not None and len(args) > pos:
        args = args[:pos] + (shift(args[pos]),) + args[pos + 1:]
    args = tuple(_py(a) if not isinstance(a, Tensor) else a for a in args)
    kwargs = {k: _py(v) if not isinstance(v, Tensor) else v for k, v in kwargs.items()}
    try:
        out = module(*args, **kwargs)
    except Exception as e:
        if pos is not None and hasattr(e, "one_based"):  # a class index named: as R counts
            raise type(e)(e.one_based) from None
        raise
    if isinstance(out, tuple) and name.startswith(_INDICES_OUT):
        return [out[0], one_based.to_r(out[1])]
    return out


_INDICES_OUT = tuple("nn_" + k for k in _WITH_INDICES)  # layers whose result holds positions


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


def _r_clip_norm(parameters: Any, max_norm: Any, norm_type: Any = 2, **kw: Any) -> Tensor:
    return _nn.nn_utils_clip_grad_norm_(_params_of(parameters), float(max_norm),
                                        float(norm_type), **kw)


def _r_clip_value(parameters: Any, clip_value: Any) -> None:
    return _nn.nn_utils_clip_grad_value_(_params_of(parameters), float(clip_value))


def _params_of(p: Any) -> list:
    if isinstance(p, NamedList):
        return [x for x in p.values() if isinstance(x, Tensor)]
    if isinstance(p, Tensor):
        return [p]
    return [x for x in p if isinstance(x, Tensor)]


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


_RNN_UTILS = {"nn_utils_rnn_pack_padded_sequence", "nn_utils_rnn_pack_sequence",
              "nn_utils_rnn_pad_packed_sequence", "nn_utils_rnn_pad_sequence"}

R_FUNCTIONS: dict[str, Callable] = {}
for _n in sorted(_RNN_UTILS):
    R_FUNCTIONS[_n] = _r_function(_n, getattr(_nn, _n))
for _n in F.__all__ + ["nnf_multi_head_attention_forward"]:
    R_FUNCTIONS[_n] = _r_function(_n, getattr(_nn, _n))
for _n in _nn.init.__all__:
    R_FUNCTIONS[_n] = _r_function(_n, getattr(_nn, _n))
R_FUNCTIONS.update({
    "nn_utils_clip_grad_norm_": _r_clip_norm,
    "nn_utils_clip_grad_value_": _r_clip_value,
    # (a layer's forward is api.nn_forward, whose pointer R keeps: the call is hot)
    ".nn_new": nn_new, ".nn_kind": nn_kind, ".nn_mark": nn_mark,
    ".nn_py_layer_names": nn_layer_names, ".nn_layer_args": nn_layer_args,
    ".nn_class_methods": nn_class_methods, ".nn_class_call": nn_class_call,
    ".packed_sequence_get": packed_sequence_get, ".weight_norm_new": weight_norm_new,
    ".weight_norm_call": weight_norm_call,
})
