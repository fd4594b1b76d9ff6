"""Declaring an op (`@op`) and calling it: each op's public function.

`@op(...)` on an op's function registers its declaration (registry.py) and
makes its public function, the one `torch_<name>`, the Tensor method and R
call. Most of the time that function calls the op straight away; it does
more only when the call needs it:

- dims given by name (`x.sum(dim = "a")`, every argument the declaration
  marks as a dim or a list of dims) become positions before the op runs; an
  unknown name is an error naming the dim and the tensor's names
  (docs/errors.md, E46; names that don't fit a tensor are E47);
- an operand of another layout (a sparse tensor) goes to the op's
  implementation for that layout, when one is registered (`implements`);
- with named operands the op runs on unnamed twins of them, and its result
  gets names by the op's rule (names.py); an op with no rule refuses named
  operands, as libtorch does, and an in-place op keeps its tensor's names;
- under autocast (R torch's `set_autocast()`), the ops of libtorch's CPU lists
  cast their floating operands first (`AUTOCAST_POLICIES`).

- while a mode is active (`tensor.MODES`: the tracer of rtorch_py.jit), every
  call is handed to the modes (`tensor.through_modes`), which see its name,
  arguments and result.

Fast path: until a tensor with dim names or of a sparse layout exists in the
process, while no mode is active and until autocast is first turned on
(`tensor.SPECIAL`), the public function is one call to the op (a dim given by
name then can only be a mistake: the op fails on it, and only then is it looked
at, `_with_dims`).
"""
from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Callable

from ..engine import grad_accumulator, version_box
from ..tensor import (COMPLEX32_NAMED, MODES, SPECIAL, Layout, Tensor, as_dtype,
                      describe_names, position, promote_types, special_tensors_exist, strided,
                      through_modes)
from . import complex_half
from .names import Call, rule_of
from .registry import REGISTRY, OpSpec, register

# The arguments that are an op's tensor operands (checked for names).
_TENSOR_PARAMS = frozenset({
    "self", "input", "other", "tensors", "A", "B", "a", "b", "mat1", "mat2", "vec", "vec1",
    "vec2", "tensor1", "tensor2", "batch1", "batch2", "condition", "exponent", "end", "x1",
    "x2", "tensor", "weight", "mask", "source", "src", "index"})

# --------------------------------------------------------------------------
# Autocast (R torch's set_autocast(device_type = "cpu")): libtorch's CPU policies.
# While it is on, the ops below cast their floating operands (not float64) first:
# "lower" to the autocast dtype (bfloat16 by default), "fp32" to float32,
# "promote" to the widest operand's. The ops are libtorch's CPU lists (those this
# engine has; einsum, tensordot and multi_dot are libtorch composites of bmm/mm, so
# they are lowered too, as there). Functions made of several ops take their policy
# with `autocast_policy` (nn_functional's linear, the losses).
AUTOCAST_POLICIES: dict[str, str] = {
    **{n: "lower" for n in (
        "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "convolution", "bmm", "mm", "matmul", "baddbmm", "addmm", "addbmm",
        "linalg_vecdot", "linear", "prelu", "scaled_dot_product_attention", "einsum",
        "tensordot", "linalg_multi_dot", "chain_matmul")},
    **{n: "fp32" for n in (
        "polar", "prod", "quantile", "nanquantile", "stft", "cdist", "trace", "cholesky",
        "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr",
        "pinverse", "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
        "grid_sampler", "binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss",
        "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
        "kl_div", "poisson_nll_loss", "hinge_embedding_loss", "margin_ranking_loss",
        "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
        "multilabel_margin_loss", "cosine_embedding_loss", "fft_fft", "fft_ifft", "fft_fft2",
        "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2",
        "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond",
        "linalg_matrix_rank", "linalg_solve", "linalg_cholesky", "linalg_cholesky_ex",
        "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv", "linalg_inv_ex",
        "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve", "geqrf", "qr",
        "svd", "triangular_solve", "linalg_qr", "linalg_svd", "linalg_eig", "linalg_eigh",
        "linalg_lstsq")},
    **{n: "promote" for n in ("cat", "stack", "index_copy")},
}


class _AutocastState(threading.local):
    enabled = False
    dtype: Any = None      # the lower precision (a Dtype); None: bfloat16
    cache_enabled = True   # (accepted and reported; casts are not cached)
    nesting = 0


AUTOCAST = _AutocastState()


def autocast_set(enabled: bool, dtype: Any, cache_enabled: bool | None) -> list:
    """Turn CPU autocast on or off; returns [enabled, dtype, cache_enabled] as they were."""
    before = [AUTOCAST.enabled, AUTOCAST.dtype, AUTOCAST.cache_enabled]
    AUTOCAST.enabled, AUTOCAST.dtype = bool(enabled), dtype
    if cache_enabled is not None:
        AUTOCAST.cache_enabled = bool(cache_enabled)
    if AUTOCAST.enabled:
        special_tensors_exist()  # (ops look at their operands from now on: the slow path casts)
    return before


def _eligible(x: Any) -> bool:
    return isinstance(x, Tensor) and x.dtype.is_floating_point and x.data.dtype.itemsize != 8


def _cast_all(v: Any, cast: Callable) -> Any:
    if type(v) is list or type(v) is tuple:
        return type(v)(_cast_all(x, cast) for x in v)
    return cast(v) if _eligible(v) else v


def autocast_args(policy: str, args: tuple, kwargs: dict) -> tuple:
    """The arguments of a call under autocast, cast as `policy` says."""
    if policy == "promote":
        found = [x.dtype for v in (*args, *kwargs.values())
                 for x in (v if type(v) in _LISTS else (v,)) if _eligible(x)]
        if not found:
            return args, kwargs
        target = functools.reduce(promote_types, found)
    else:
        target = as_dtype("float32" if policy == "fp32" else (AUTOCAST.dtype or "bfloat16"))

    def cast(x: Tensor) -> Tensor:
        return x if x.dtype == target else x.to(dtype=target)
    return (tuple(_cast_all(v, cast) for v in args),
            {k: _cast_all(v, cast) for k, v in kwargs.items()})


def autocast_policy(name: str) -> Callable:
    """Decorate a function made of several ops with the autocast policy libtorch
    gives the op `name` (its operands are cast once, on the way in)."""
    policy = AUTOCAST_POLICIES[name]

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def under_autocast(*args: Any, **kwargs: Any) -> Any:
            if AUTOCAST.enabled:
                args, kwargs = autocast_args(policy, args, kwargs)
            return fn(*args, **kwargs)
        return under_autocast
    return wrap


_NAMEABLE = frozenset({str, list, tuple})  # a dim argument that may hold a name
_LISTS = frozenset({list, tuple})
_running = threading.local()  # the ops running on an operand of another layout
_DISPATCHERS: dict = {}  # op name -> its _Dispatcher
_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
_POSITIONAL_OR_KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD


def op(name: str | None = None, *, r_operators: Any = (), **fields: Any) -> Callable:
    """Declare the decorated function an op (see OpSpec for the fields) and
    return it unchanged: inside the ops package an op calls another directly;
    the public function is `REGISTRY[name].fn` (and `.operator`, as Python
    calls the op's operators).

    `r_operators` may name R operators (`("+",)`), or map each to fixed
    arguments (`{"%/%": {"rounding_mode": "trunc"}}`); it and the other R-only
    facts (`r_*`, `invisible`) go to OpSpec.r, which only rtorch_py.r reads."""
    r = {k: fields.pop(k) for k in [k for k in fields if k.startswith("r_") or k == "invisible"]}
    r["r_operators"] = dict(r_operators) if isinstance(r_operators, dict) else \
        {o: {} for o in r_operators}

    def declare(fn: Callable) -> Callable:
        key = name or fn.__name__
        d = _DISPATCHERS[key] = _Dispatcher(key, fn, fields, {})
        operator = None
        if fields.get("operators") or key.startswith("__"):
            operator = operator_function(d, fields.get("operators", ()) or (key,))
        register(OpSpec(key, public_function(d), fn, operator=operator, r=r,
                        layouts=d.layouts, **fields))
        return fn
    return declare


def running_op() -> str | None:
    """The op running on an operand of another layout (a sparse tensor), if any:
    the one a sparse tensor names when asked for a dense array."""
    ops = getattr(_running, "ops", None)
    return ops[-1] if ops else None


def implements(name: str, layout: Layout) -> Callable:
    """Register the decorated function as op `name`'s implementation for
    operands of `layout` (its first tensor operand's)."""
    def register_layout(impl: Callable) -> Callable:
        spec = REGISTRY[name]
        if not _DISPATCHERS[name].operands:
            raise RuntimeError(f"op {name!r} has no tensor operand to dispatch on")
        spec.layouts[layout] = impl
        return impl
    return register_layout


# --------------------------------------------------------------------------
# The public function. Its fast path, labelled in each form below: no special
# tensor exists (`tensor.SPECIAL`). Ops taking just `(self)` or `(self, other)`
# get a function of that signature (the cheapest call); the others forward
# what they are given.


def public_function(d: "_Dispatcher") -> Callable:
    """The op as published (see the module doc)."""
    fn = d.fn
    if d.dim_slots:
        return _with_dims(d)
    if d.shape == ("self",):
        return _unary(d)
    if d.shape == ("self", "other"):
        return _binary(d)

    def op(*args: Any, **kwargs: Any) -> Any:
        if SPECIAL[0]:
            return d.call(args, kwargs)
        return fn(*args, **kwargs)  # the fast path
    return functools.update_wrapper(op, fn)


def operator_function(d: "_Dispatcher", dunders: tuple) -> Callable:
    """The op as Python calls its operators: `x + y` is `__add__(x, y)`, `-x`
    `__neg__(x)`, `x[k] = v` `__setitem__(x, k, v)`: a function of that many
    arguments (with dims, the public function)."""
    if d.dim_slots:
        return public_function(d)
    if all(name in _UNARY_DUNDERS for name in dunders):
        return _unary(d)
    if dunders == ("__setitem__",):
        fn = d.fn

        def setitem(self: Any, key: Any, value: Any) -> Any:
            if SPECIAL[0]:
                return d.call((self, key, value), {})
            return fn(self, key, value)  # the fast path
        return functools.update_wrapper(setitem, fn)
    return _binary(d)


_UNARY_DUNDERS = frozenset({"__neg__", "__pos__", "__abs__", "__invert__"})


def _unary(d: "_Dispatcher") -> Callable:
    fn = d.fn

    def op(self: Any) -> Any:
        if SPECIAL[0]:
            return d.call((self,), {})
        return fn(self)  # the fast path
    return functools.update_wrapper(op, fn)


def _binary(d: "_Dispatcher") -> Callable:
    fn = d.fn

    def op(self: Any, other: Any) -> Any:
        if SPECIAL[0]:
            return d.call((self, other), {})
        return fn(self, other)  # the fast path
    return functools.update_wrapper(op, fn)


def _with_dims(d: "_Dispatcher") -> Callable:
    """An op with dims: called straight away too. A dim given by name (a str, or
    a list holding one) where no tensor has names can only be a mistake, and the
    op, wanting a number there, fails on it: only then is the call looked at
    again, to say so (E46). (tests/test_named_tensors.py checks that every op
    with dims fails so.)"""
    fn, slots = d.fn, d.dim_slots

    def op(*args: Any, **kwargs: Any) -> Any:
        if SPECIAL[0]:
            return d.call(args, kwargs)
        try:
            return fn(*args, **kwargs)  # the fast path
        except (TypeError, RuntimeError):
            if not _dims_by_name(slots, args, kwargs):
                raise
        return d.call(args, kwargs)
    return functools.update_wrapper(op, fn)


def _dims_by_name(slots: tuple, args: tuple, kwargs: dict) -> bool:
    """Whether a dim argument is a name, or a list holding one (tensordot's `dims`:
    lists of them)."""
    n = len(args)
    for i, arg, kind in slots:
        given = args[i:] if kind is _VAR_POSITIONAL else \
            (args[i],) if i < n else (kwargs.get(arg),)  # (permute's `*more`: all of them)
        if any(_holds_name(v) for v in given):
            return True
    return False


def _holds_name(v: Any) -> bool:
    return type(v) is str or type(v) in _LISTS and any(_holds_name(d) for d in v)


class _Dispatcher:
    """What an op's public function needs to know of its declaration."""

    def __init__(self, name: str, fn: Callable, fields: dict, layouts: dict) -> None:
        self.name, self.fn, self.layouts = name, fn, layouts
        self.sig = inspect.signature(fn)
        params = list(self.sig.parameters.values())
        # the parameters' names when all are plain and required (`("self", "other")`)
        plain = all(p.kind is _POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params)
        self.shape = tuple(p.name for p in params) if plain else None
        self.first = params[0].name if params else None
        self.rule = rule_of(fields.get("names"))
        self.dims = tuple(fields.get("dims", ()))
        self.inplace = name.endswith("_") and not name.endswith("__")
        self.autocast = AUTOCAST_POLICIES.get(name)

        def slot(arg: str) -> tuple:
            """(position, name, kind) of an argument; a keyword-only one has no position."""
            p = self.sig.parameters[arg]
            i = params.index(p) if p.kind is not p.KEYWORD_ONLY else len(params)
            return (i, arg, p.kind)
        # (position, name, "dim" or "list"): arguments that may be dims given by name
        self.dim_slots = tuple(slot(a) for a in self.dims) + \
            tuple(slot(a)[:2] + ("list",) for a in fields.get("dim_lists", ()))
        # the tensor operands checked for names
        operands = [slot(p.name)[:2] for p in params[:3] if p.name in _TENSOR_PARAMS]
        if self.rule is None and self.inplace:
            operands = []  # (in place: the tensor keeps its names)
        self.operands = tuple(operands)

    def call(self, args: tuple, kwargs: dict) -> Any:
        """The op called with dims by name, sparse operands or named operands, or
        under autocast, or while a mode is active, or once complex32 exists."""
        if COMPLEX32_NAMED[0]:
            return complex_half.call(self.name, self._call, args, kwargs)
        return self._call(args, kwargs)

    def _call(self, args: tuple, kwargs: dict) -> Any:
        if MODES:
            return through_modes(self.name, lambda *a, **k: self._general(a, k), args, kwargs)
        return self._general(args, kwargs)

    def _general(self, args: tuple, kwargs: dict) -> Any:
        if AUTOCAST.enabled and self.autocast is not None:
            args, kwargs = autocast_args(self.autocast, args, kwargs)
        if not (self.operands or self.dim_slots):
            return self.fn(*args, **kwargs)  # (nothing to look at)
        if self.dim_slots:
            args, kwargs = self._positions(args, kwargs)
        if not SPECIAL[0]:
            return self.fn(*args, **kwargs)
        first = args[0] if args else kwargs.get(self.first)
        values = self._operand_values(args, kwargs)
        layout = next((v.layout for v in (first, *values)
                       if isinstance(v, Tensor) and v.layout is not strided), None)
        if layout is not None:  # an operand of another layout: its implementation, or
            impl = self.layouts.get(layout)  # the op's own (which refuses it, by name)
            if impl is not None:
                return impl(*args, **kwargs)
            _running.ops = ops = getattr(_running, "ops", [])
            ops.append(self.name)
            try:
                return self.fn(*args, **kwargs)
            finally:
                ops.pop()
        named = [v for v in values if _named(v)]
        if self.rule is None:
            if named:
                raise self._refused(named[0])
            return self.fn(*args, **kwargs)
        if not named and not _named(first):
            return self.fn(*args, **kwargs)
        return self._named_call(args, kwargs)

    def _operand_values(self, args: tuple, kwargs: dict) -> list:
        n = len(args)
        return [args[i] if i < n else kwargs.get(arg) for i, arg in self.operands]

    def _positions(self, args: tuple, kwargs: dict) -> tuple:
        """The arguments with dims given by name replaced by positions."""
        first = args[0] if args else kwargs.get(self.first)
        args = list(args)
        n = len(args)
        for i, arg, kind in self.dim_slots:
            if kind is _VAR_POSITIONAL:
                args[i:] = [_positions(first, v, arg) for v in args[i:]]
                continue
            v = args[i] if i < n else kwargs.get(arg)
            if type(v) not in _NAMEABLE:
                continue
            if kind == "list":  # tensordot's `dims`: one list of dims per operand
                second = args[1] if n > 1 else kwargs.get(list(self.sig.parameters)[1])
                v = _dim_lists_positions((first, second), v, arg)
            else:
                v = _positions(first, v, arg)
            if i < n:
                args[i] = v
            else:
                kwargs = {**kwargs, arg: v}
        return tuple(args), kwargs

    def _named_call(self, args: tuple, kwargs: dict) -> Any:
        """Run the op on unnamed twins of its operands (in place: on the tensor
        itself) and name its result by the rule."""
        bound = self.sig.bind(*args, **kwargs)
        bound.apply_defaults()
        given = dict(bound.arguments)
        first = given[self.first]
        if isinstance(first, Tensor):  # (names and shape before the call)
            shape = first.data.shape
            names = first._names
            if names is None or len(names) != len(shape):
                names = (None,) * len(shape)
        else:
            shape, names = (), ()
        if not self.inplace:
            for _, arg in self.operands:
                bound.arguments[arg] = _twin(bound.arguments[arg])
        out = _untwin(self.fn(*bound.args, **bound.kwargs))
        self.rule(out, Call(self.name, self.dims, given, names, shape))
        return out

    def _refused(self, operand: Any) -> RuntimeError:
        names = _names_in(operand)
        return RuntimeError(f"{self.name} is not yet supported with named tensors (got "
                            f"{describe_names(names, len(names))}): drop the names first "
                            f"(x.rename(None); in R x$rename(NULL)), call {self.name}, and "
                            "name its result with rename()")


# --------------------------------------------------------------------------
# Helpers of the slow path


def _named(v: Any) -> bool:
    """Whether v is a tensor with names, or a list holding one."""
    if type(v) is list or type(v) is tuple:
        return any(isinstance(t, Tensor) and t._names is not None for t in v)
    return isinstance(v, Tensor) and v._names is not None


def _names_in(v: Any) -> tuple:
    if isinstance(v, (list, tuple)):
        return next(t._names for t in v if isinstance(t, Tensor) and t._names is not None)
    return v._names


def _positions(x: Any, v: Any, arg: str) -> Any:
    """A dim argument with its names (alone or in a list) replaced by positions."""
    if type(v) is str:
        return position(x, v, arg)
    if isinstance(v, (list, tuple)) and any(type(d) is str for d in v):
        return type(v)(position(x, d, arg) if type(d) is str else d for d in v)
    return v


def _dim_lists_positions(tensors: tuple, v: Any, arg: str) -> Any:
    """tensordot's `dims`: a count, or one list of dims per tensor (names of that tensor)."""
    if not isinstance(v, (list, tuple)) or not any(isinstance(d, (list, tuple, str)) for d in v):
        return v
    out = []
    for t, dims in zip(tensors, v):
        out.append(_positions(t, dims, arg) if isinstance(dims, (str, list, tuple)) else dims)
    return type(v)(out)


def _twin(x: Any) -> Any:
    """An unnamed tensor that is x in all else: its data, version counter, place
    in the graph (a leaf's gradient goes to x's accumulator), base."""
    if type(x) is list or type(x) is tuple:
        return type(x)(_twin(t) for t in x)
    if not isinstance(x, Tensor) or x._names is None:
        return x
    t = object.__new__(type(x))
    t.data, t._rg, t.grad_fn, t._version = x.data, x._rg, x.grad_fn, version_box(x)
    t._twin_of = x
    if x._output_nr:
        t._output_nr = x._output_nr
    t._base = x._base if x._base is not None else x  # (views made of it are views of x)
    if x._rg and x.grad_fn is None:
        t._accum = grad_accumulator(x)
    return t


def _untwin(out: Any) -> Any:
    """An op that returned its operand (`to()` of the same dtype) returns the
    original, not its twin."""
    original = getattr(out, "_twin_of", None) if isinstance(out, Tensor) else None
    return original if original is not None else out


