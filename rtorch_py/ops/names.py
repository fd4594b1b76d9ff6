"""Name inference: the names an op's result gets from its operands' dim names
(PyTorch's rules). An op's declaration names its rule (`@op(names="keep")`);
an op with none refuses named operands, as libtorch does for the ops it has
no name inference for (an in-place op keeps its tensor's names).

- "keep": the input's names (unary pointwise ops; the ops along a dim that
  keep the shape: softmax, cumsum, sort, ...)
- "unify": binary pointwise ops unify their operands' names from the right (a
  name against no name gives the name; two different names are an error)
- "reduce": reductions drop the reduced dims' names (kept with `keepdim`)
- "contract": mm, matmul, bmm, mv, addmm, addmv, ... contract dims away
- "cat", "transpose", "permute", "squeeze", "unsqueeze", "drop_dim", "expand",
  "tensordot", "index": the dims move, go or come with their names
- "unnamed": named operands are accepted, the result is unnamed (dot, equal)

A rule is `rule(out, call)`: it sets the names of the result `out` (every
tensor of a tuple of results) from `call`, the op's call as `Call` describes
it. The dispatcher (dispatch.py) runs the op itself on unnamed twins of its
operands, so that what it calls inside, and its derivative later, never meet
a name.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..tensor import Tensor, describe_names, get_names, names_of, show_names


class Call:
    """An op's call as its name rule sees it: the op's name and declared dims,
    its arguments by name (defaults included), and the names and shape its
    first operand had before the call (an in-place op may change them)."""

    __slots__ = ("op", "dims", "args", "names", "shape")

    def __init__(self, op: str, dims: tuple, args: dict, names: tuple, shape: tuple) -> None:
        self.op, self.dims, self.args, self.names, self.shape = op, dims, args, names, shape


def give(out: Any, names: Sequence | None) -> None:
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
                give(o, names)


def _norm_dims(d: Any, ndim: int) -> list:
    dims = list(d) if isinstance(d, (list, tuple)) else [d]
    return sorted({int(v) % max(ndim, 1) for v in dims})


def unify_pair(a: Sequence | None, b: Sequence | None, what: str) -> tuple | None:
    """PyTorch's unify-from-the-right of two name lists (None: an unnamed operand)."""
    if a is None or b is None:
        return a if b is None else b
    n = max(len(a), len(b))
    a = (None,) * (n - len(a)) + tuple(a)
    b = (None,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x is not None and y is not None and x != y:
            raise RuntimeError(f"{what}: names {show_names(a)} and {show_names(b)} don't "
                               f"match: dim '{x}' meets dim '{y}' (names are matched from the "
                               "last dim); rename() one of them or align them with align_to()")
        out.append(x if x is not None else y)
    for i, x in enumerate(out):  # a name in two places is a misalignment
        if x is not None and x in out[i + 1:]:
            raise RuntimeError(f"{what}: names {show_names(a)} and {show_names(b)} are "
                               f"misaligned: '{x}' is at different dims; align them with "
                               "align_to()")
    return tuple(out)


# --------------------------------------------------------------------------
# The rules


def keep(out: Any, call: Call) -> None:
    give(out, call.names)


def unify(out: Any, call: Call) -> None:
    result = None
    for v in list(call.args.values())[:3]:
        if isinstance(v, Tensor):
            result = unify_pair(result, names_of(v), call.op)
    if result is not None and isinstance(out, Tensor):  # broadcast: unnamed leading dims
        result = (None,) * (out.data.ndim - len(result)) + result
    give(out, result)


def cat(out: Any, call: Call) -> None:
    result = None
    for t in next(iter(call.args.values())):
        if isinstance(t, Tensor):
            n = names_of(t)
            if n is not None and result is not None and len(n) != len(result):
                return
            result = unify_pair(result, n, call.op)
    give(out, result)


def reduce(out: Any, call: Call) -> None:
    names, args = call.names, call.args
    dim = args.get(call.dims[0]) if call.dims else None
    if dim is None and isinstance(args.get("other"), Tensor):  # max(x, other = y): pointwise
        return unify(out, call)
    if args.get("keepdim"):
        return give(out, names)
    if dim is None or (isinstance(dim, (list, tuple)) and not dim):
        return give(out, ())
    gone = _norm_dims(dim, len(names))
    give(out, [n for i, n in enumerate(names) if i not in gone])


def drop_dim(out: Any, call: Call) -> None:
    gone = _norm_dims(call.args[call.dims[0]], len(call.names))
    give(out, [n for i, n in enumerate(call.names) if i not in gone])


def squeeze(out: Any, call: Call) -> None:
    # which dims went: the size-1 ones asked for (all of them without a dim), read
    # from the shape before the call (an in-place squeeze_ has changed it since)
    shape, dim = call.shape, call.args.get("dim")
    gone = set(range(len(shape))) if dim is None else set(_norm_dims(dim, len(shape)))
    give(out, [n for i, (n, s) in enumerate(zip(call.names, shape))
               if not (i in gone and s == 1)])


def unsqueeze(out: Any, call: Call) -> None:
    names = call.names
    d = int(call.args["dim"]) % (len(names) + 1)
    give(out, names[:d] + (None,) + names[d:])


def transpose(out: Any, call: Call) -> None:
    names = call.names
    if len(names) < 2:
        return give(out, names)
    a, b = (_norm_dims(call.args[d], len(names))[0] for d in call.dims) if call.dims else \
        (0, 1)
    swapped = list(names)
    swapped[a], swapped[b] = swapped[b], swapped[a]
    give(out, swapped)


def permute(out: Any, call: Call) -> None:
    dims = call.args["dims"]
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    dims += list(call.args.get("more", ()))
    give(out, [call.names[int(d) % len(call.names)] for d in dims])


def unnamed(out: Any, call: Call) -> None:
    """Supported with named operands; the result is unnamed (dot, equal)."""
    give(out, None)


def expand(out: Any, call: Call) -> None:
    """Keeps the input's names; dims added in front are unnamed."""
    if isinstance(out, Tensor):
        give(out, (None,) * (out.data.ndim - len(call.names)) + tuple(call.names))


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
    batch = unify_pair(a[:-2], b[:-2], what) if a[:-2] or b[:-2] else ()
    return tuple(batch or ()) + (a[-2], b[-1])


def contract(out: Any, call: Call) -> None:
    """Contracts away dims (mm, matmul, bmm, mv; addmm/addmv unify with self)."""
    vals = [v for v in call.args.values() if isinstance(v, Tensor)]
    if call.op in ("addmm", "addmv", "addbmm", "baddbmm"):
        base, x, y = (vals + [None, None, None])[:3]
        prod = _matmul_names(_operand_names(x), _operand_names(y), call.op)
        if call.op == "addbmm":
            prod = prod[1:]
        result = unify_pair(get_names(base), prod, call.op) if base is not None else prod
    else:
        result = _matmul_names(_operand_names(vals[0]), _operand_names(vals[1]), call.op)
    give(out, result)


def tensordot(out: Any, call: Call) -> None:
    """The dims not contracted: a's then b's."""
    a, b, dims = call.args["a"], call.args["b"], call.args["dims"]
    na, nb = get_names(a), get_names(b)
    if isinstance(dims, (list, tuple)) and len(dims) == 2 and \
            isinstance(dims[0], (list, tuple, int)):
        da = _norm_dims(dims[0], len(na))
        db = _norm_dims(dims[1], len(nb))
    else:
        k = int(dims)
        da, db = list(range(len(na) - k, len(na))), list(range(k))
    give(out, [n for i, n in enumerate(na) if i not in da] +
         [n for i, n in enumerate(nb) if i not in db])


def index(out: Any, call: Call) -> None:
    """Basic indexing (`x[0]`, `x[:, 1:]`, `x[..., None]`): an integer removes its
    dim, a slice keeps it, None adds an unnamed one. Indexing with tensors or
    lists is not supported with names (libtorch's `index`)."""
    names = call.names
    key = call.args["indices"]
    key = key if isinstance(key, tuple) else (key,)
    basic = [k for k in key if k is None or k is Ellipsis or isinstance(k, slice) or
             (isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)))]
    if len(basic) != len(key):
        raise RuntimeError(f"indexing with tensors or lists is not yet supported with named "
                           f"tensors (got {describe_names(names, len(names))}): drop the "
                           "names first (x.rename(None); in R x$rename(NULL)), index, and "
                           "name the result with rename()")
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
    give(out, result)


# The rules by the name an op's declaration gives (`@op(names="keep")`).
RULES: dict[str, Callable] = {
    "keep": keep, "unify": unify, "reduce": reduce, "contract": contract, "cat": cat,
    "transpose": transpose, "permute": permute, "squeeze": squeeze, "unsqueeze": unsqueeze,
    "drop_dim": drop_dim, "expand": expand, "tensordot": tensordot, "index": index,
    "unnamed": unnamed}


def rule_of(names: str | Callable | None) -> Callable | None:
    """The rule a declaration's `names=` stands for (None: the op refuses names)."""
    if names is None or callable(names):
        return names
    try:
        return RULES[names]
    except KeyError:
        raise ValueError(f"unknown name rule {names!r}; use one of {sorted(RULES)} or a "
                         "function rule(out, call)") from None
