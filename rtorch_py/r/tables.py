"""The R side's tables, generated from the op registry.

For every op the R package gets `torch_<name>()` (functions), `x$<name>()`
(methods), and its operators and group generics (`x * 2`, `exp(x)`,
`sum(x)`), each a Python callable R calls through one `.External`. An op's
declaration says which of its arguments are dims or positions: here they
become 1-based (R's) on the way in, and returned positions 1-based on the way
out. An op needing no translation is called as it is (no wrapper).
"""
from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, Sequence

import numpy as np

from ..creation import _check_device
from ..function import NamedList
from ..ops import REGISTRY, OpSpec
from ..ops.out_forms import out_form, out_name
from ..sparse import strided_only
from ..tensor import Tensor, wrap
from . import extensions, matching, one_based, tensor_api
from .convert import _r_tensor, _tensor_of

# Arguments R torch takes as tensors: an R vector there becomes one, as in R torch.
TENSOR_ARGS = frozenset({"self", "other", "input", "condition", "mask", "tensors",
                         "exponent", "mat1", "mat2", "tensor", "tensor1", "tensor2", "vec",
                         "vec1", "vec2", "batch1", "batch2", "A", "B"})


# Annotations of the arguments libtorch takes as a Scalar: R torch accepts a one-element
# tensor there too (`x$addcdiv_(a, b, value = lr_t)`), as its number.
SCALAR_ANNOTATIONS = frozenset({"float", "float | None", "Scalar"})


def _ndim(first: Any) -> int | None:
    if isinstance(first, Tensor):
        return first.ndim
    if isinstance(first, (list, tuple)) and first and isinstance(first[0], Tensor):
        return first[0].ndim
    return None


def _r_position(v: Any) -> Any:
    """An op's position argument (a number, an R vector, an integer tensor, or
    a list of index tensors as torch_index takes) as 0-based."""
    if isinstance(v, list) and any(isinstance(x, Tensor) for x in v):
        return [None if x is None else _r_position(x) for x in v]
    if isinstance(v, Tensor):
        a = v.data
        if a.dtype.kind in "iu":
            return wrap(one_based.positions(a))
        # whole floats stay floats (ops taking index tensors refuse them), shifted
        # for those taking a number (R torch's narrow reads `start = 1 + x$sum()`)
        if a.dtype.kind == "f" and a.size and np.all(a == np.trunc(a)) and np.all(a != 0):
            return wrap(np.where(a > 0, a - 1, a).astype(a.dtype))
        return v  # (anything else is left for the op to refuse)
    if isinstance(v, np.ndarray):
        return wrap(one_based.positions(v))
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return one_based.position(int(v)) if v == int(v) else v
    return v


def _sizes_convention(args: list, kw: dict) -> tuple:
    """torch_zeros(2, 3), torch_zeros(c(2, 3)) or torch_zeros(size = c(2, 3))."""
    if "size" in kw:
        if args:
            raise TypeError("You should specify a single size argument.")
        args = [kw.pop("size")]
    return args, kw


def _options_convention(args: list, kw: dict) -> tuple:
    """R torch's creation options the engine has no use for: layout,
    memory_format, pin_memory; the device is the CPU's or the meta device
    (passed on; `names` too)."""
    strided_only(kw.pop("layout", None))
    for k in ("memory_format", "pin_memory"):
        kw.pop(k, None)
    if _check_device(kw.pop("device", None)):
        kw["device"] = "meta"
    return args, kw


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


# R-only argument conventions an op's declaration names (OpSpec.r_conventions).
CONVENTIONS: dict[str, Callable] = {"sizes": _sizes_convention,
                                    "creation_options": _options_convention,
                                    "inclusive_end": _inclusive_end_convention}

# R-only conventions for results: a shape is an R numeric vector, not a list.
RESULT_CONVENTIONS: dict[str, Callable] = {
    "shape_vector": lambda out: np.asarray(out, dtype=np.int32).reshape(-1)}


def _with_r_message(e: Exception) -> Exception:
    """An op's error whose message names dims, as R shows it: dims as R counts them."""
    return type(e)(e.one_based)


def _r_vector(v: Any) -> bool:
    """An R vector or list the bridge passed (to become a tensor where one is expected)."""
    return type(v) is np.ndarray or type(v) is list


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


def r_callable(spec: OpSpec, match: matching.Matcher | None = None) -> Callable:
    """The op as R calls it: dims and positions translated as declared; with `match`,
    under R torch's formals (rtorch_py.formals), matched as R does first."""
    fn = spec.fn
    params = list(inspect.signature(fn).parameters.values())
    for c in spec.r_conventions:  # (wrappers take the op's own arguments)
        fn = WRAPPERS[c](fn) if c in WRAPPERS else fn
    names = [p.name for p in params]
    var = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    steps: list[tuple[int, str, str]] = []   # (position, name, what)
    for what, args in (("tensor", [n for n in names if n in TENSOR_ARGS]),
                       ("dim", spec.dims), ("new_dim", spec.new_dims),
                       ("dim_lists", spec.dim_lists), ("position", spec.indices),
                       ("scalar", [p.name for p in params if str(p.annotation)
                                   in SCALAR_ANNOTATIONS])):
        steps.extend((names.index(n), n, what) for n in args)
    index_out = spec.returns_indices
    result_names = list(spec.r_result_names)
    conventions = [CONVENTIONS[c] for c in spec.r_conventions if c in CONVENTIONS]
    results = [RESULT_CONVENTIONS[c] for c in spec.r_conventions if c in RESULT_CONVENTIONS]
    if not steps and index_out is False and not result_names and not conventions and \
            not results:
        return fn if match is None else matching.bind(spec.name, fn, spec.fn,
                                                      match.name.startswith("x$"))
    first = names[0]

    def translate(what: str, v: Any, ndim: int | None) -> Any:
        if what == "scalar":
            return v.item() if isinstance(v, Tensor) and v.numel() == 1 else v
        if what == "tensor":
            if type(v) is np.ndarray:
                return _tensor_of(v)
            if type(v) is list:  # (a list of tensors: R vectors and matrices in it too)
                return [_tensor_of(x) if type(x) is np.ndarray else x for x in v]
            return v
        if what == "dim":
            return one_based.dims(v, ndim)
        if what == "new_dim":
            return one_based.dims(v, None if ndim is None else ndim + 1)
        if what == "dim_lists":  # a count stays; lists of dims are 1-based
            if not isinstance(v, list):
                return v
            dims = [one_based.dims(d, None) for d in v]
            return [d if isinstance(d, tuple) else (d,) for d in dims]
        return _r_position(v)

    def translated(args: tuple, kw: dict) -> Any:
        args = list(args)
        for convention in conventions:
            args, kw = convention(args, kw)
        ndim = None
        for pos, name, what in steps:
            if what not in ("tensor", "scalar") and ndim is None:
                ndim = _ndim(args[0] if args else kw.get(first))
            if name == var:
                args[pos:] = [translate(what, v, ndim) for v in args[pos:]]
            elif pos < len(args):
                args[pos] = translate(what, args[pos], ndim)
            elif name in kw:
                kw[name] = translate(what, kw[name], ndim)
        try:
            out = fn(*args, **kw)
        except Exception as e:
            if hasattr(e, "one_based"):
                raise _with_r_message(e) from None
            raise
        which = index_out(out) if callable(index_out) else index_out
        if which is True:
            return one_based.to_r(out)
        if which is not False and isinstance(out, (tuple, list)):
            out = list(out)
            out[which] = one_based.to_r(out[which])
        if result_names:
            return NamedList(result_names, list(out))
        for convention in results:
            out = convention(out)
        return out

    # Fast path (labelled): nothing to translate when the arguments given are
    # tensors (or not R vectors) where tensors go, none is a dim or position,
    # and the result goes back as it is -- `x$mm(w)`, `x$sum()`, `x$clamp(min = 0)`.
    fast = index_out is False and not result_names and not results and not conventions
    translating = [(pos, name) for pos, name, what in steps if what != "tensor"]
    if var is not None and any(name == var for _, name, what in steps if what != "tensor"):
        translating.append((names.index(var), var))
    first_translated = min((pos for pos, _ in translating), default=sys.maxsize)
    bound = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    r_name = spec.function_name if spec.function else f"x${spec.name}"  # (for R's errors)
    position = {n: i for i, n in enumerate(bound)}
    translated_names = frozenset(name for _, name in translating)
    tensor_names = frozenset(name for _, name, what in steps if what == "tensor")

    least, most = (match.least, match.most) if match is not None else (0, 0)

    def call(*args: Any, **kw: Any) -> Any:
        if match is not None:
            if kw or not least <= len(args) <= most:
                args, kw = match(args, kw)  # (R torch's formals: R's matching)
        elif kw and len(args) > 1 and any(position.get(k, sys.maxsize) < len(args) for k in kw):
            # a name before positions (Python would refuse it): R's matching
            kw, extra = matching.by_r_positions(bound, args, kw)
            if extra:
                raise matching.unused(r_name, extra, tuple((n,) for n in bound))
            args = ()
        if len(args) <= first_translated and fast:
            for v in args:
                if type(v) is np.ndarray or type(v) is list:
                    break
            else:
                for k in kw:
                    if k in translated_names or k in tensor_names and _r_vector(kw[k]):
                        break
                else:
                    try:
                        return fn(*args, **kw)
                    except Exception as e:
                        if hasattr(e, "one_based"):
                            raise _with_r_message(e) from None
                        raise
        return translated(args, kw)
    call.__name__ = call.__qualname__ = spec.name
    return call


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
        for sym, fixed in spec.r_operators.items():
            if sym.startswith("unary "):
                unary[sym[len("unary "):]] = spec.fn
            elif sym == "!":
                unary[sym] = spec.fn
            else:
                direct[sym] = (spec, dict(fixed))
        translated = r_callable(spec)
        match = matching.matcher(spec.function_name, spec.fn)
        r_fn = translated if match is None else r_callable(spec, match)
        if spec.function:
            functions[spec.function_name] = r_fn
            if out_name(spec):  # torch_<name>_out(out, ...) (ops.out_forms)
                outs[out_name(spec)] = out_form(spec, translated)
        if spec.method:
            match = matching.matcher(spec.name, spec.fn, method=True)
            methods[spec.name] = translated if match is None else r_callable(spec, match)
        for g in spec.r_math:
            math[g] = _log if g == "log" else spec.fn
        for g in spec.r_summary:
            summary[g] = r_fn
    for sym, (spec, fixed) in direct.items():
        binary[sym] = _operator(spec, fixed)
    for name in tensor_api.METHODS:
        if name in methods:
            raise RuntimeError(f"tensor method {name!r} is also an op")
    methods.update({k: matching.bind(k, f, method=True)
                    for k, f in tensor_api.METHODS.items()})
    functions.update({k: v for k, v in outs.items() if k not in functions})
    functions.update({k: matching.bind(k, f) for k, f in
                      {**tensor_api.FUNCTIONS, **extensions.functions()}.items()})
    return {"FUNCTIONS": functions, "METHODS": methods, "BINARY_OPS": binary,
            "UNARY_OPS": unary, "MATH": math, "SUMMARY": summary}


def invisible() -> dict[str, set]:
    """What R returns invisibly."""
    ops = {s.name for s in REGISTRY.values() if s.invisible}
    return {"INVISIBLE_METHODS": ops | tensor_api.INVISIBLE_METHODS,
            "INVISIBLE_FUNCTIONS": {s.function_name for s in REGISTRY.values()
                                    if s.invisible and s.function} |
            tensor_api.INVISIBLE_FUNCTIONS}


def names(table: Sequence[str]) -> list:
    return sorted(table)
