"""Named tensors: optional names for a tensor's dims, with PyTorch's semantics.

A tensor's dim names live in one rare attribute, `Tensor._names` (None for
an unnamed tensor, else a tuple with one entry per dim: a str, or None for an
unnamed dim). Making a tensor costs nothing more: the attribute is a class
default until names are given.

- Naming: `names=` in `torch_zeros/ones/full/empty/rand/randn`; `x.names`
  (PyTorch's form: a tuple, None for an unnamed dim) and `x.names = ...`;
  `x.has_names()`, `x.rename(*names, **mapping)` / `rename_`,
  `x.refine_names(*names)`, `x.align_to(*names)` ("..." stands for the dims
  not mentioned). In R, `x$names` is NULL for an unnamed tensor and a
  character vector otherwise ("*" for an unnamed dim, as libtorch says it).
- Dims by name: every argument an op's declaration marks as a dim (`dims=`,
  `dim_lists=` in `@op`) also takes a dim's name (or a list of names): it is
  translated to the dim's position here, in `named_op`, before the op runs,
  and only there. An unknown name is an error naming the dim and the tensor's
  names (docs/errors.md, E46); names that don't fit a tensor are E47.
- Name inference: an op's result gets names by the rule `RULES` gives the op
  (PyTorch's rules): unary pointwise ops and the ops along a dim that keep the
  shape (softmax, cumsum, sort, ...) keep the input's names; binary pointwise
  ops unify their operands' names from the right (a name against no name
  gives the name; two different names are an error); reductions drop the
  reduced dims' names (kept with `keepdim`); `cat` unifies its inputs' names;
  `transpose`/`t`/`permute` move the names with the dims, `squeeze`/`select`
  drop the removed dims' names and `unsqueeze` adds an unnamed dim; `mm`,
  `matmul`, `bmm`, `mv`, `addmm`, `addmv` and `tensordot` contract dims away;
  `dot` and `equal` take named operands and give unnamed results; Python's
  basic indexing (`x[0]`, `x[:, 1:]`, `x[..., None]`) drops, keeps or adds dims
  with their names (R's `x[1, ]` gives an unnamed result). In-place ops keep
  their tensor's names (those that move dims move them).
- **Every other op refuses named operands**, as libtorch does for the ops it
  has no name inference for (views and reshapes, indexing with tensors,
  `norm`, `stack`, `where`, linear algebra, nn layers, ...): "<op> is not yet supported with named tensors";
  drop the names with `rename(None)` (R: `$rename(NULL)`) first.

The wrappers that translate names, apply the rules and refuse are generated
with each op's own signature, so an op costs one extra Python call and an
attribute read per tensor operand when no names are involved.
"""
from __future__ import annotations

import inspect
import types
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .tensor import Tensor

ELLIPSIS = "..."


# --------------------------------------------------------------------------
# Reading, checking and setting names


def _describe(names: Sequence | None, ndim: int) -> str:
    """`Tensor[a, b]` or, for an unnamed tensor, `Tensor[None, None]`."""
    names = names if names is not None else (None,) * ndim
    return "Tensor[" + ", ".join("None" if n is None else n for n in names) + "]"


def _names(x: Tensor) -> tuple | None:
    """x's names, or None; names a later in-place reshape made stale count as none."""
    n = x._names
    if n is not None and len(n) != x.data.ndim:
        x._names = None
        return None
    return n


def _checked(names: Any, ndim: int) -> tuple | None:
    """Names given by a user as a tuple for a tensor of `ndim` dims (None: unnamed)."""
    if names is None:
        return None
    if isinstance(names, str):
        names = (names,)
    names = tuple(names)
    for n in names:
        if n is not None and (not isinstance(n, str) or not n or n == ELLIPSIS):
            raise RuntimeError(f"names must be non-empty strings (or None for an unnamed "
                               f"dim), got {n!r} in {names!r}")
    if len(names) != ndim:
        raise RuntimeError(f"{len(names)} names {_show(names)} given for a tensor with {ndim} "
                           f"dims: give one name per dim")
    seen = [n for n in names if n is not None]
    if len(set(seen)) != len(seen):
        dup = next(n for n in seen if seen.count(n) > 1)
        raise RuntimeError(f"the name '{dup}' is given to two dims in {_show(names)}: each "
                           "dim's name must be unique")
    return names if seen else None


def _show(names: Sequence) -> str:
    return "(" + ", ".join("None" if n is None else repr(n) for n in names) + ")"


def set_names(x: Tensor, names: Any) -> Tensor:
    """Give x these names in place (None, or all None, makes it unnamed)."""
    x._names = _checked(names, x.data.ndim)
    return x


def get_names(x: Tensor) -> tuple:
    """PyTorch's `x.names`: one entry per dim, None for an unnamed dim."""
    n = _names(x)
    return n if n is not None else (None,) * x.data.ndim


def has_names(x: Tensor) -> bool:
    return _names(x) is not None


def r_names(x: Any) -> Any:
    """R torch's `x$names`: NULL for an unnamed tensor, else "*" for an unnamed dim."""
    n = _names(x) if isinstance(x, Tensor) else None
    return None if n is None else ["*" if v is None else v for v in n]


# --------------------------------------------------------------------------
# Dims given by name


def position(x: Any, name: str, arg: str = "dim") -> int:
    """The 0-based position of the dim called `name` in x (E46 if there is none)."""
    t = x[0] if isinstance(x, (list, tuple)) and x and isinstance(x[0], Tensor) else x
    if not isinstance(t, Tensor):
        raise TypeError(f"{arg} = '{name}': a dim given by name needs a tensor to look it up "
                        f"in, got {type(t).__name__}")
    names = _names(t)
    if names is not None and name in names:
        return names.index(name)
    if names is None:
        raise RuntimeError(f"{arg} = '{name}': this tensor has no dim names "
                           f"({_describe(None, t.data.ndim)}); name its dims first "
                           "(names = in a creation function, or rename()) or give the dim's "
                           "number")
    raise RuntimeError(f"{arg} = '{name}': no dim of this tensor is called '{name}'; its "
                       f"names are {_describe(names, t.data.ndim)}")


def _positions(x: Any, v: Any, arg: str) -> Any:
    """A dim argument with its names (alone or in a list) replaced by positions."""
    if type(v) is str:
        return position(x, v, arg)
    if any(type(d) is str for d in v):
        return type(v)(position(x, d, arg) if type(d) is str else d for d in v)
    return v


def _dim_lists_positions(tensors: Sequence, v: Any, arg: str) -> Any:
    """tensordot's `dims`: a count, or one list of dims per tensor (names of that tensor)."""
    if not isinstance(v, (list, tuple)) or not any(isinstance(d, (list, tuple, str)) for d in v):
        return v
    out = []
    for t, dims in zip(tensors, v):
        out.append(_positions(t, dims, arg) if isinstance(dims, (str, list, tuple)) else dims)
    return type(v)(out)


# --------------------------------------------------------------------------
# Name inference rules: (result, names of the source tensor(s), the call's
# arguments by name, the op's declared dims) -> the result with names set.


def _give(out: Any, names: Sequence | None) -> None:
    """Set names on a tensor result (every tensor of a tuple of results) whose
    number of dims fits."""
    if isinstance(out, Tensor):
        if names is not None and len(names) == out.data.ndim:
            out._names = tuple(names) if any(n is not None for n in names) else None
        elif out._names is not None and len(out._names) != out.data.ndim:
            out._names = None
    elif isinstance(out, (tuple, list)):
        for o in out:
            if isinstance(o, Tensor):
                _give(o, names)


def _norm_dims(d: Any, ndim: int) -> list:
    dims = list(d) if isinstance(d, (list, tuple)) else [d]
    return sorted({int(v) % max(ndim, 1) for v in dims})


def _keep(out: Any, names: tuple, args: dict, spec: Any) -> None:
    _give(out, names)


def _unify_pair(a: Sequence | None, b: Sequence | None, what: str) -> tuple | None:
    """PyTorch's unify-from-the-right of two name lists (None: an unnamed operand)."""
    if a is None or b is None:
        return a if b is None else b
    n = max(len(a), len(b))
    a = (None,) * (n - len(a)) + tuple(a)
    b = (None,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x is not None and y is not None and x != y:
            raise RuntimeError(f"{what}: names {_show(a)} and {_show(b)} don't match: dim "
                               f"'{x}' meets dim '{y}' (names are matched from the last dim); "
                               "rename() one of them or align them with align_to()")
        out.append(x if x is not None else y)
    for i, x in enumerate(out):  # a name in two places is a misalignment
        if x is not None and x in out[i + 1:]:
            raise RuntimeError(f"{what}: names {_show(a)} and {_show(b)} are misaligned: "
                               f"'{x}' is at different dims; align them with align_to()")
    return tuple(out)


def _unify(out: Any, names: tuple, args: dict, spec: Any) -> None:
    others = [_names(v) for v in list(args.values())[:3] if isinstance(v, Tensor)]
    result = None
    for n in others:
        result = _unify_pair(result, n, spec.name)
    if result is not None and isinstance(out, Tensor):  # broadcast: unnamed leading dims
        result = (None,) * (out.data.ndim - len(result)) + result
    _give(out, result)


def _cat(out: Any, names: tuple, args: dict, spec: Any) -> None:
    result = None
    for t in next(iter(args.values())):
        if isinstance(t, Tensor):
            n = _names(t)
            if n is not None and result is not None and len(n) != len(result):
                return
            result = _unify_pair(result, n, spec.name)
    _give(out, result)


def _reduce(out: Any, names: tuple, args: dict, spec: Any) -> None:
    dim = args.get(spec.dims[0]) if spec.dims else None
    if dim is None and isinstance(args.get("other"), Tensor):  # max(x, other = y): pointwise
        return _unify(out, names, args, spec)
    if args.get("keepdim"):
        return _give(out, names)
    if dim is None or (isinstance(dim, (list, tuple)) and not dim):
        return _give(out, ())
    gone = _norm_dims(dim, len(names))
    _give(out, [n for i, n in enumerate(names) if i not in gone])


def _drop_dim(out: Any, names: tuple, args: dict, spec: Any) -> None:
    gone = _norm_dims(args[spec.dims[0]], len(names))
    _give(out, [n for i, n in enumerate(names) if i not in gone])


def _squeeze(out: Any, names: tuple, args: dict, spec: Any) -> None:
    # which dims went: the size-1 ones asked for (all of them without a dim), read
    # from the shape before the call (an in-place squeeze_ has changed it since)
    shape = args["__shape"]
    dim = args.get("dim")
    gone = set(range(len(shape))) if dim is None else set(_norm_dims(dim, len(shape)))
    _give(out, [n for i, (n, s) in enumerate(zip(names, shape)) if not (i in gone and s == 1)])


def _unsqueeze(out: Any, names: tuple, args: dict, spec: Any) -> None:
    d = int(args["dim"]) % (len(names) + 1)
    _give(out, names[:d] + (None,) + names[d:])


def _transpose(out: Any, names: tuple, args: dict, spec: Any) -> None:
    if len(names) < 2:
        return _give(out, names)
    a, b = (_norm_dims(args[d], len(names))[0] for d in spec.dims) if spec.dims else (0, 1)
    swapped = list(names)
    swapped[a], swapped[b] = swapped[b], swapped[a]
    _give(out, swapped)


def _permute(out: Any, names: tuple, args: dict, spec: Any) -> None:
    dims = args["dims"]
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    dims += list(args.get("more", ()))
    _give(out, [names[int(d) % len(names)] for d in dims])


def _none(out: Any, names: tuple, args: dict, spec: Any) -> None:
    """Supported with named operands; the result is unnamed (dot, equal)."""
    _give(out, None)


def _expand(out: Any, names: tuple, args: dict, spec: Any) -> None:
    """Keeps the input's names; dims added in front are unnamed."""
    if isinstance(out, Tensor):
        _give(out, (None,) * (out.data.ndim - len(names)) + tuple(names))


def _operand_names(v: Any) -> tuple:
    return get_names(v) if isinstance(v, Tensor) else ()


def _matmul_names(a: tuple, b: tuple, what: str) -> tuple:
    """matmul's contraction: a's last dim meets b's first (1-d) or next-to-last; the
    batch dims unify from the right."""
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(b) == 1:
        return a[:-1]
    if len(a) == 1:
        return b[:-2] + b[-1:]
    batch = _unify_pair(a[:-2], b[:-2], what) if a[:-2] or b[:-2] else ()
    return tuple(batch or ()) + (a[-2], b[-1])


def _contract(out: Any, names: tuple, args: dict, spec: Any) -> None:
    """Contracts away dims (mm, matmul, bmm, mv; addmm/addmv unify with self)."""
    vals = [v for v in args.values() if isinstance(v, Tensor)]
    if spec.name in ("addmm", "addmv", "addbmm", "baddbmm"):
        base, x, y = (vals + [None, None, None])[:3]
        prod = _matmul_names(_operand_names(x), _operand_names(y), spec.name)
        if spec.name == "addbmm":
            prod = prod[1:]
        result = _unify_pair(get_names(base), prod, spec.name) if base is not None else prod
    else:
        result = _matmul_names(_operand_names(vals[0]), _operand_names(vals[1]), spec.name)
    _give(out, result)


def _tensordot(out: Any, names: tuple, args: dict, spec: Any) -> None:
    """The dims not contracted: a's then b's."""
    a, b, dims = args["a"], args["b"], args["dims"]
    na, nb = get_names(a), get_names(b)
    if isinstance(dims, (list, tuple)) and len(dims) == 2 and \
            isinstance(dims[0], (list, tuple, int)):
        da = _norm_dims(dims[0], len(na))
        db = _norm_dims(dims[1], len(nb))
    else:
        k = int(dims)
        da, db = list(range(len(na) - k, len(na))), list(range(k))
    _give(out, [n for i, n in enumerate(na) if i not in da] +
          [n for i, n in enumerate(nb) if i not in db])


def _index(out: Any, names: tuple, args: dict, spec: Any) -> None:
    """Basic indexing (`x[0]`, `x[:, 1:]`, `x[..., None]`): an integer removes its
    dim, a slice keeps it, None adds an unnamed one. Indexing with tensors or
    lists is not supported with names (libtorch's `index`)."""
    key = args["indices"]
    key = key if isinstance(key, tuple) else (key,)
    basic = [k for k in key if k is None or k is Ellipsis or isinstance(k, slice) or
             (isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)))]
    if len(basic) != len(key):
        raise RuntimeError(f"indexing with tensors or lists is not yet supported with named "
                           f"tensors (got {_describe(names, len(names))}): drop the names "
                           "first (x.rename(None); in R x$rename(NULL)), index, and name the "
                           "result with rename()")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    result, i = [], 0
    for k in key:
        if k is Ellipsis:
            n = len(names) - used
            result.extend(names[i:i + n])
            i += n
        elif k is None:
            result.append(None)
        elif isinstance(k, slice):
            result.append(names[i])
            i += 1
        else:
            i += 1
    result.extend(names[i:])
    _give(out, result)


_KEEP_OPS = """
abs absolute acos arccos acosh arccosh asin arcsin asinh arcsinh atan arctan atanh arctanh
ceil clamp clip clamp_max clamp_min cos cosh deg2rad digamma erf erfc erfinv exp exp2 expm1
fix floor frac i0 isfinite isinf isnan isneginf isposinf isreal lgamma log log10 log1p log2
logical_not bitwise_not logit mvlgamma nan_to_num neg negative positive polygamma rad2deg
reciprocal relu round rsqrt sgn sigmoid sign signbit silu sin sinc sinh sqrt square tan tanh
trunc frexp
clone contiguous to float double half int long short bool byte char
softmax log_softmax cumsum cumprod logcumsumexp cummax cummin sort argsort flip roll
index_fill narrow index_select masked_fill chunk split split_with_sizes unsafe_chunk
unsafe_split topk
""".split()

_UNIFY_OPS = """
add sub subtract mul multiply div divide true_divide floor_divide remainder fmod pow float_power
rsub rdiv rpow rremainder rfloor_divide maximum minimum fmax fmin atan2 arctan2 hypot
logaddexp logaddexp2 nextafter copysign xlogy heaviside ldexp lerp igamma igammac
eq ne lt le gt ge greater greater_equal less less_equal not_equal
logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor
__and__ __or__ __xor__ bitwise_left_shift bitwise_right_shift __lshift__ __rshift__
""".split()

_REDUCE_OPS = """
sum mean prod max min argmax argmin any all nansum nanmean var std var_mean std_mean logsumexp
amax amin aminmax count_nonzero median nanmedian mode kthvalue
""".split()

RULES: dict[str, Callable] = {
    **{n: _keep for n in _KEEP_OPS},
    **{n: _unify for n in _UNIFY_OPS},
    **{n: _reduce for n in _REDUCE_OPS},
    "cat": _cat, "concat": _cat, "concatenate": _cat,
    "transpose": _transpose, "transpose_": _transpose, "swapdims": _transpose,
    "swapaxes": _transpose, "t": _transpose, "t_": _transpose,
    "permute": _permute,
    "squeeze": _squeeze, "squeeze_": _squeeze,
    "unsqueeze": _unsqueeze, "unsqueeze_": _unsqueeze,
    "select": _drop_dim, "unbind": _drop_dim, "index": _index,
    "expand": _expand, "expand_as": _expand,
    "mm": _contract, "matmul": _contract, "bmm": _contract, "mv": _contract,
    "addmm": _contract, "addmv": _contract, "baddbmm": _contract, "addbmm": _contract,
    "tensordot": _tensordot,
    "dot": _none, "vdot": _none, "equal": _none, "allclose": _none,
}
# (in-place forms not listed keep their tensor's names: they return it)
_NEEDS_SHAPE = {"squeeze", "squeeze_", "unsqueeze_", "transpose_", "t_"}


# --------------------------------------------------------------------------
# The op wrapper: made once per op, at its declaration (ops/registry.py)


def named_op(name: str, fn: Callable, dims: Sequence[str] = (),
             dim_lists: Sequence[str] = ()) -> Callable:
    """The op as published: dims by name translated, and, when an operand has
    names, `RULES[name]` applied to the result; an op with no rule refuses
    named operands (as libtorch does); an in-place op keeps its tensor's names."""
    rule = RULES.get(name)
    params = list(inspect.signature(fn).parameters.values())
    checked = [p for p in params[:3] if p.name in _TENSOR_PARAMS]
    inplace = name.endswith("_") and not name.endswith("__")
    if rule is None and (inplace or not checked):
        checked = []  # (in place: names stay; no tensor operand: nothing to refuse)
        if not dims and not dim_lists:
            return fn
    P = inspect.Parameter
    defaults: dict[str, Any] = {}
    plain, call = [], []
    for i, p in enumerate(params):
        if p.default is not P.empty:
            defaults[f"_d{i}"] = p.default
        plain.append(p.replace(annotation=P.empty,
                               default=P.empty if p.default is P.empty else _Ref(f"_d{i}")))
        call.append({P.VAR_POSITIONAL: f"*{p.name}", P.VAR_KEYWORD: f"**{p.name}",
                     P.KEYWORD_ONLY: f"{p.name}={p.name}"}.get(p.kind, p.name))
    sig = str(inspect.Signature(plain))
    first = params[0].name
    body = []
    if rule is None and checked:  # libtorch's answer for an op without names support
        body.append(f"    if {' or '.join(_is_named(p) for p in checked)}:\n"
                    f"        _refuse({', '.join(p.name for p in checked)})")
    for d in dims:
        if params[[p.name for p in params].index(d)].kind is P.VAR_POSITIONAL:
            body.append(f"    {d} = _positions({first}, {d}, '{d}')")
        else:
            body.append(f"    if type({d}) in _NAMEABLE:\n"
                        f"        {d} = _positions({first}, {d}, '{d}')")
    for d in dim_lists:
        body.append(f"    {d} = _dim_lists_positions(({first}, {params[1].name}), {d}, '{d}')")
    if rule is None:
        body.append(f"    return _fn({', '.join(call)})")
    else:
        # the names as they were before the call (an in-place op may change the dims)
        if params[0] in checked and not _is_list(params[0]):
            src = f"    try:\n        _n = {first}._names\n    except AttributeError:\n" \
                  f"        _n = None\n"
        else:
            src = f"    _n = _first_names({first})\n"
        others = [p for p in checked if p is not params[0]]
        test = " and ".join(["_n is None"] + [f"not ({_is_named(p)})" for p in others])
        shape = f"    _s = {first}.data.shape\n" if name in _NEEDS_SHAPE else ""
        args = "{" + ", ".join(f"'{p.name}': {p.name}" for p in params) + \
            (", '__shape': _s" if shape else "") + "}"
        # With names, the op itself runs on unnamed twins of its operands (the same
        # data and autograd identity), so that what it calls inside, and its
        # derivative later, never meet a name; in place, on the tensor itself.
        ops = [p.name for p in checked]
        twins = "" if inplace or not ops else \
            f"    {', '.join(ops)}, = _twins({', '.join(ops)})\n"
        body.append(f"{src}{shape}"
                    f"    if {test}:\n"
                    f"        return _fn({', '.join(call)})\n"
                    f"    _a = {args}\n{twins}"
                    f"    _out = _untwin(_fn({', '.join(call)}), _a)\n"
                    f"    _infer(_out, _a['{first}'], _n, _a)\n"
                    f"    return _out")
    code = f"def op{sig}:\n" + "\n".join(body) + "\n"
    spec = _Spec(name, tuple(dims))

    def refuse(*operands: Any) -> None:
        named = next((o for o in operands if _names_in(o) is not None), None)
        raise RuntimeError(f"{name} is not yet supported with named tensors (got "
                           f"{_describe(_names_in(named), _ndim(named))}): drop the names "
                           f"first (x.rename(None); in R x$rename(NULL)), call {name}, and "
                           "name its result with rename()")
    env = {"_fn": fn, "_positions": _positions, "_dim_lists_positions": _dim_lists_positions,
           "_first_names": _first_names, "_NAMEABLE": _NAMEABLE, "_T": Tensor,
           "_twins": _twins, "_untwin": _untwin, "_PLAIN": _PLAIN,
           "_refuse": refuse,
           "_infer": lambda out, src, before, args: _apply(rule, out, src, before, args, spec),
           **defaults}
    compiled = _COMPILED.get(code)
    if compiled is None:  # (ops of one form share their code; the environment differs)
        compiled = _COMPILED[code] = compile(code, "<named op>", "exec")
    exec(compiled, env)
    shared = env["op"]
    # its own code object, named after the op (tracebacks; code -> op lookups)
    wrapper = types.FunctionType(shared.__code__.replace(co_name=_code_name(name)),
                                 env, fn.__name__, shared.__defaults__)
    wrapper.__kwdefaults__ = shared.__kwdefaults__
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__module__ = fn.__module__
    wrapper.__wrapped__ = fn
    return wrapper


def _twin(x: Any) -> Any:
    """An unnamed tensor that is x in all else: its data, version counter, place
    in the graph (a leaf's gradient goes to x's accumulator), base."""
    if type(x) is list or type(x) is tuple:
        return type(x)(_twin(t) for t in x)
    if not isinstance(x, Tensor) or x._names is None:
        return x
    from .engine import grad_accumulator, version_box
    t = object.__new__(type(x))
    t.data, t._rg, t.grad_fn, t._version = x.data, x._rg, x.grad_fn, version_box(x)
    t._twin_of = x
    if x._output_nr:
        t._output_nr = x._output_nr
    t._base = x._base if x._base is not None else x  # (views made of it are views of x)
    if x._rg and x.grad_fn is None:
        t._accum = grad_accumulator(x)
    return t


def _twins(*xs: Any) -> tuple:
    return tuple(_twin(x) for x in xs)


def _untwin(out: Any, args: dict) -> Any:
    """An op that returned its operand (`to()` of the same dtype) returns the
    original, not its twin."""
    original = getattr(out, "_twin_of", None) if isinstance(out, Tensor) else None
    return original if original is not None else out


# The arguments that are an op's tensor operands (checked for names).
_TENSOR_PARAMS = frozenset({
    "self", "input", "other", "tensors", "A", "B", "a", "b", "mat1", "mat2", "vec", "vec1",
    "vec2", "tensor1", "tensor2", "batch1", "batch2", "condition", "exponent", "end", "x1",
    "x2", "tensor", "weight", "mask", "source", "src", "index"})


def _is_list(p: inspect.Parameter) -> bool:
    return p.name == "tensors" or p.annotation in ("Sequence[Tensor]", "list", "Sequence")


def _is_named(p: inspect.Parameter) -> str:
    """Code testing whether the operand `p` has names (fast for a plain tensor)."""
    if _is_list(p):
        return f"_first_names({p.name}) is not None"
    return f"(type({p.name}) is _T and {p.name}._names is not None or " \
           f"type({p.name}) not in _PLAIN and _first_names({p.name}) is not None)"


def _names_in(x: Any) -> tuple | None:
    if isinstance(x, (list, tuple)):
        return next((n for n in (_names_in(t) for t in x) if n is not None), None)
    return getattr(x, "_names", None) if isinstance(x, Tensor) else None


def _ndim(x: Any) -> int:
    n = _names_in(x)
    return len(n) if n is not None else 0


class _Ref:
    """A default value in generated code: its repr is the name it is bound to."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


class _Spec:
    __slots__ = ("name", "dims")

    def __init__(self, name: str, dims: tuple) -> None:
        self.name, self.dims = name, dims


_COMPILED: dict[str, Any] = {}


def _code_name(name: str) -> str:
    return name if name.isidentifier() else "op"


def _first_names(tensors: Any) -> Any:
    """Whether a tensor, or any of a list of tensors, has names (a true value if so)."""
    if type(tensors) is list or type(tensors) is tuple:
        for t in tensors:
            if isinstance(t, Tensor) and t._names is not None:
                return True
        return None
    return True if isinstance(tensors, Tensor) and tensors._names is not None else None


_NAMEABLE = frozenset({str, list, tuple})  # a dim argument that may hold a name
_PLAIN = frozenset({Tensor, float, int, bool, complex, type(None)})  # operands without names
# (a plain Tensor is tested before: its names are read directly)


def _apply(rule: Callable, out: Any, src: Any, before: Any, args: dict, spec: _Spec) -> None:
    """Run the rule with the source's names as they were before the call."""
    shape = args.get("__shape")
    ndim = len(shape) if shape is not None else \
        src.data.ndim if isinstance(src, Tensor) else 0
    names = before if isinstance(before, tuple) and len(before) == ndim else (None,) * ndim
    rule(out, names, args, spec)


# --------------------------------------------------------------------------
# Tensor methods: names, has_names, rename(_), refine_names, align_to


def _flat(names: Sequence) -> list:
    """Names given one by one or as one list (R's `c(...)`)."""
    if len(names) == 1 and isinstance(names[0], (list, tuple)):
        return list(names[0])
    return list(names)


def _expand(given: Sequence, ndim: int, fill: Sequence, what: str) -> list:
    """Names with "..." standing for the dims not mentioned (filled from `fill`)."""
    given = list(given)
    if ELLIPSIS not in given:
        return given
    if given.count(ELLIPSIS) > 1:
        raise RuntimeError(f"{what}: '...' may appear once in {_show(given)}")
    i = given.index(ELLIPSIS)
    k = ndim - (len(given) - 1)
    if k < 0:
        raise RuntimeError(f"{what}: {len(given) - 1} names {_show(given)} given for a tensor "
                           f"with {ndim} dims")
    return given[:i] + list(fill[i:i + k]) + given[i + 1:]


def _alias(x: Tensor, names: tuple | None) -> Tensor:
    """A view of x (same data, gradient passed through) with these names."""
    global AliasBackward0
    from .ops.recording import formula, record
    from .ops.views import _view
    if AliasBackward0 is None:
        AliasBackward0 = formula(_alias_backward, arrays=True, name="AliasBackward0")
    out = record(_view(x, x.data), AliasBackward0, (x,))
    out._names = names
    return out


def _alias_backward(n: Any, g: Any) -> tuple:
    return (g,)


AliasBackward0: Callable = None  # type: ignore[assignment]  (made on first use)


def rename(self: Tensor, *names: Any, **rename_map: str) -> Tensor:
    """A view with new names: positionally (`rename("a", "b")`, "..." for the
    dims left as they are, `rename(None)` to drop them) or by mapping
    (`rename(W = "a")`)."""
    return _alias(self, _renamed(self, names, rename_map, "rename"))


def rename_(self: Tensor, *names: Any, **rename_map: str) -> Tensor:
    """rename() in place."""
    self._names = _renamed(self, names, rename_map, "rename_")
    return self


def _renamed(x: Tensor, names: Sequence, mapping: dict, what: str) -> tuple | None:
    ndim = x.data.ndim
    current = get_names(x)
    if names and mapping:
        raise RuntimeError(f"{what}: give new names either one per dim or as old = new, "
                           "not both")
    if mapping:
        if _names(x) is None:
            raise RuntimeError(f"{what}: the tensor has no names "
                               f"({_describe(None, ndim)}), so no dim can be renamed by "
                               f"name ({', '.join(mapping)}); give one name per dim instead, "
                               "e.g. rename('a', 'b')")
        new = list(current)
        for old, to in mapping.items():
            if old not in current:
                raise RuntimeError(f"{what}: no dim is called '{old}' in "
                                   f"{_describe(current, ndim)}, so it can't be renamed to "
                                   f"'{to}'")
            new[current.index(old)] = to
        return _checked(new, ndim)
    given = _flat(names)
    if given == [None] or not given:
        return None
    return _checked(_expand(given, ndim, current, what), ndim)


def refine_names(self: Tensor, *names: Any) -> Tensor:
    """A view whose unnamed dims get these names; named dims must keep theirs."""
    ndim = self.data.ndim
    current = get_names(self)
    new = _expand(_flat(names), ndim, current, "refine_names")
    new = list(_checked(new, ndim) or (None,) * ndim)
    for i, (old, to) in enumerate(zip(current, new)):
        if old is not None and old != to:
            raise RuntimeError(f"refine_names: dim {i} is already called '{old}' in "
                               f"{_describe(current, ndim)}; it can't be refined to "
                               f"{'None' if to is None else repr(to)} (use rename() to change "
                               "a name)")
    return _alias(self, _checked(new, ndim))


def align_to(self: Tensor, *names: Any) -> Tensor:
    """The dims permuted into this order of names ("..." for the others in
    their order); a name the tensor lacks becomes a new dim of size 1."""
    current = _names(self)
    ndim = self.data.ndim
    if current is None or None in current:
        raise RuntimeError(f"align_to: every dim of the tensor must be named, got "
                           f"{_describe(current, ndim)}; name them first with rename()")
    given = _flat(names)
    if ELLIPSIS in given:
        rest = [n for n in current if n not in given]
        i = given.index(ELLIPSIS)
        given = given[:i] + rest + given[i + 1:]
    missing = [n for n in current if n not in given]
    if missing:
        raise RuntimeError(f"align_to: the order {_show(given)} leaves out dims "
                           f"{_show(missing)} of {_describe(current, ndim)}; list every dim "
                           "(or '...')")
    _checked(given, len(given))
    perm = [current.index(n) for n in given if n in current]
    out = _alias(self, None)  # (reshape takes no named tensor)
    if perm != list(range(ndim)):
        out = out.permute(perm)
    shape = [self.data.shape[current.index(n)] if n in current else 1 for n in given]
    if len(shape) != ndim:
        out = out.reshape(tuple(shape))
    out._names = tuple(given)
    return out


def _names_property() -> property:
    def fget(self: Tensor) -> tuple:
        return get_names(self)

    def fset(self: Tensor, value: Any) -> None:
        set_names(self, value)
    return property(fget, fset, doc="The dims' names: a tuple, None for an unnamed dim.")


def install(cls: type) -> None:
    """The named-tensor methods on the Tensor class."""
    cls.names = _names_property()
    cls.has_names = has_names
    cls.rename = rename
    cls.rename_ = rename_
    cls.refine_names = refine_names
    cls.align_to = align_to


def r_methods() -> dict[str, Callable]:
    """The same methods as R calls them (`x$rename(W = "a")`, `x$refine_names(c(...))`)."""
    return {"has_names": has_names, "rename": rename, "rename_": rename_,
            "refine_names": refine_names, "align_to": align_to}


def ops_with_rules() -> Iterable[str]:
    return RULES.keys()
