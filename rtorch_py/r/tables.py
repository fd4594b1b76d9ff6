"""The R side's tables, generated from the op registry.

For every op the R package gets `torch_<name>()` (functions), `x$<name>()`
(methods), and its operators and group generics (`x * 2`, `exp(x)`,
`sum(x)`), each a Python callable R calls through one `.External`, bound by
the one binder (binding.py) from the op's declaration: its annotations say
what each argument takes from R, its dims and positions are 1-based in R (on
the way in and, for returned positions, out). An op needing no translation is
called as it is (no wrapper).
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from ..ops import REGISTRY, OpSpec
from ..ops.out_forms import out_form, out_name
from ..tensor import Tensor, wrap
from . import binding, extensions, tensor_api
from .binding import R_FACTS, r_fact
from .convert import _r_tensor, _tensor_of

def _inclusive_end_convention(args: list, kw: dict) -> tuple:
    """R torch's arange includes `end` (like R's seq) and torch_arange(n) counts
    from 1: the arguments for the engine's (PyTorch's) exclusive arange."""
    names = ["start", "end", "step"]
    vals = dict(zip(names, args))
    vals.update({k: kw.pop(k) for k in names if k in kw})
    start, end, step = (_number_of(vals.get(k)) for k in names)
    if end is None:
        start, end = 1, start
    step = 1 if step is None else step
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"upper bound and larger bound inconsistent with step sign: "
                           f"start = {start}, end = {end}, step = {step}")
    n = int(np.floor((end - start) / step + 1e-7)) + 1
    stop = start + (n - 0.5) * step  # (half a step past the last value: no rounding trap)
    if all(isinstance(v, int) for v in (start, end, step)):
        stop = start + n * step      # (whole numbers stay whole: an int64 result)
    return [start, stop, step], kw


def _number_of(v: Any) -> Any:
    """A number given as an R value or a one-element tensor."""
    if isinstance(v, Tensor):
        return v.item()
    if isinstance(v, np.ndarray) and v.size == 1:
        return v.reshape(-1)[0].item()
    return v


# R-only argument conventions an op's declaration names (an op's "r_conventions").
CONVENTIONS: dict[str, Callable] = {"sizes": tensor_api.sizes_given,
                                    "creation_options": tensor_api.creation_options,
                                    "inclusive_end": _inclusive_end_convention}

# R-only conventions for results: a shape is an R numeric vector, not a list.
RESULT_CONVENTIONS: dict[str, Callable] = {
    "shape_vector": lambda out: np.asarray(out, dtype=np.int32).reshape(-1)}


def _every_output(fn: Callable) -> Callable:
    """libtorch's form of an op whose Python form returns what its `return_*` flags
    ask for (unique_consecutive): R torch calls libtorch's, which gives every
    output, an empty int64 tensor for each one not asked for."""
    sig = inspect.signature(fn)
    flags = [n for n in sig.parameters if n.startswith("return_")]

    def call(*args: Any, **kw: Any) -> list:
        bound = sig.bind(*args, **kw)
        bound.apply_defaults()
        asked = [bool(bound.arguments[f]) for f in flags]
        bound.arguments.update(dict.fromkeys(flags, True))
        first, *rest = fn(*bound.args, **bound.kwargs)
        return [first, *(out if want else wrap(np.zeros(0, np.int64))
                         for out, want in zip(rest, asked))]
    return call


# R-only conventions that wrap the op itself.
WRAPPERS: dict[str, Callable[[Callable], Callable]] = {"every_output": _every_output}


def facts(spec: OpSpec, method: bool = False) -> binding.RFacts:
    """The R-only facts of an op, from its declaration (as a tensor method with `method`)."""
    counted = {**dict.fromkeys(spec.dims, "dim"), **dict.fromkeys(spec.new_dims, "new_dim"),
               **dict.fromkeys(spec.dim_lists, "dim_lists"),
               **dict.fromkeys(spec.indices, "position"),
               **dict.fromkeys(r_fact(spec, "r_dims_as_given"), "zero_based"),
               **dict.fromkeys(r_fact(spec, "r_wrapper_dims"), "wrapper_dim")}
    conventions = r_fact(spec, "r_conventions")
    name = f"x${spec.name}" if method else spec.function_name
    defaults, declared = binding.declared_facts(name, spec.fn, method, counted)
    return binding.RFacts(
        name, counted, spec.returns_indices, tuple(r_fact(spec, "r_result_names")),
        (*declared, *(CONVENTIONS[c] for c in conventions if c in CONVENTIONS)),
        tuple(RESULT_CONVENTIONS[c] for c in conventions if c in RESULT_CONVENTIONS),
        defaults)


def r_callable(spec: OpSpec, method: bool = False) -> Callable:
    """The op as R calls it (the one binder, rtorch_py.r.binding), its R formals' facts
    included (R torch's where declared: rtorch_py.formals); as a tensor method with
    `method`."""
    fn = spec.fn
    for c in r_fact(spec, "r_conventions"):  # (wrappers take the op's own arguments)
        fn = WRAPPERS[c](fn) if c in WRAPPERS else fn
    return binding.r_callable(fn, facts(spec, method), declared_by=spec.fn)


def _operator(spec: OpSpec, fixed: dict) -> Callable:
    """An R operator: `tensor <op> value`, the value an R number (the op decides
    what a number operand records: ops.operands.is_number) or vector; or
    `value <op> tensor` (R dispatched on the right operand), the value first made
    a tensor with R's conversion, as R torch does (`2 * x` saves that tensor like
    any operand)."""
    call = functools.partial(spec.fn, **fixed) if fixed else spec.fn

    def operator(e1: Any, e2: Any) -> Any:
        if type(e1) is Tensor:
            return call(e1, _tensor_of(e2) if type(e2) is np.ndarray else e2)
        return call(_r_tensor(e1), e2)
    operator.__name__ = operator.__qualname__ = spec.name
    return operator


def _log(self: Tensor, base: Any = None) -> Tensor:
    """R's `log(x, base)`: the natural log unless a base is given."""
    out = REGISTRY["log"].fn(self)
    return out if base is None else out / float(np.log(base))


def build() -> dict[str, dict]:
    """Every table R's `.onLoad` fills, by name."""
    functions: dict[str, Callable] = {}
    methods: dict[str, Callable] = {}
    binary: dict[str, Callable] = {}
    unary: dict[str, Callable] = {"+": lambda x: x}
    math: dict[str, Callable] = {}
    summary: dict[str, Callable] = {}
    direct: dict[str, tuple] = {}
    outs: dict[str, Callable] = {}
    for spec in REGISTRY.values():
        if set(spec.r) - set(R_FACTS):
            raise RuntimeError(f"op {spec.name!r} declares R facts no one reads: "
                               f"{sorted(set(spec.r) - set(R_FACTS))}")
        for sym, fixed in r_fact(spec, "r_operators").items():
            if sym.startswith("unary "):
                unary[sym[len("unary "):]] = spec.fn
            elif sym == "!":
                unary[sym] = spec.fn
            else:
                direct[sym] = (spec, dict(fixed))
        r_fn = r_callable(spec)
        if spec.function:
            functions[spec.function_name] = r_fn
            if out_name(spec):  # torch_<name>_out(out, ...) (ops.out_forms)
                outs[out_name(spec)] = out_form(spec, r_fn)
        if spec.method:
            methods[spec.name] = r_callable(spec, method=True)
        for g in r_fact(spec, "r_math"):
            math[g] = _log if g == "log" else spec.fn
        for g in r_fact(spec, "r_summary"):
            summary[g] = r_fn
    for sym, (spec, fixed) in direct.items():
        binary[sym] = _operator(spec, fixed)
    for name in tensor_api.METHODS:
        if name in methods:
            raise RuntimeError(f"tensor method {name!r} is also an op")
    methods.update({k: binding.with_declared(f"x${k}", f, method=True)
                    for k, f in tensor_api.METHODS.items()})
    functions.update({k: v for k, v in outs.items() if k not in functions})
    functions.update({k: binding.with_declared(k, f) for k, f in
                      {**tensor_api.FUNCTIONS, **extensions.functions()}.items()})
    return {"FUNCTIONS": functions, "METHODS": methods, "BINARY_OPS": binary,
            "UNARY_OPS": unary, "MATH": math, "SUMMARY": summary}


def invisible() -> dict[str, set]:
    """What R returns invisibly, and the functions it keeps unexported."""
    ops = {s.name for s in REGISTRY.values() if r_fact(s, "invisible")}
    return {"INVISIBLE_METHODS": ops | tensor_api.INVISIBLE_METHODS,
            "INVISIBLE_FUNCTIONS": {s.function_name for s in REGISTRY.values()
                                    if r_fact(s, "invisible") and s.function} |
            tensor_api.INVISIBLE_FUNCTIONS,
            "INTERNAL_FUNCTIONS": extensions.internal()}


def names(table: Sequence[str]) -> list:
    return sorted(table)
