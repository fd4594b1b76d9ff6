"""R counts from 1, the engine from 0: the one place that translates.

Every R-facing module (`tables`, `tensor_api`, `indexing`, `nn_api`,
`data_api`) translates through these functions, one per concept:

- dims: `dim`, `dims` (R's 1-based dims, negative from the end, 0 an error
  naming the 1-based rule), `wrapper_dims` (those R torch's R code counts, with
  its own error for a 0) and `dim_to_r`;
- positions: `position`, `positions` (1-based, negative from the end, as R
  torch's indices and `index`/`gather` arguments) and `position_to_r`,
  `to_r` (positions the engine returns, shown 1-based);
- labels: `labels`, `index_tensor`, `ignore_label` (class labels,
  dataset rows, sparse indices: numbered from 1, no counting from the end);
- sizes: `integer`, `sizes` (R's ways of giving whole numbers and shapes);
- layer numbers in parameter names: `layer_name`, `layer_name_to_r`
  (R torch's recurrent layers are numbered from 1: `weight_ih_l1`);
- error messages: `message_to_r` (libtorch's messages that name dims, tensor
  numbers, targets or max indices, counted from 1 as R torch shows them) and
  `in_r_counting` (an error this layer raised, counting from 1 already).

This module imports no R: it can be used and tested without it.
"""
from __future__ import annotations

import builtins
import re
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from ..function import NamedList
from ..tensor import MODES, Tensor, wrap

ZERO_MESSAGE = "Indexing starts at 1 but found a 0."
ONE_BASED_DIM_MESSAGE = "Dimension is 1-based, but found 0."  # (R torch's R code's words)


_E = TypeVar("_E", bound=Exception)


def in_r_counting(err: _E) -> _E:
    """`err`, marked as saying its dims and positions as R counts them already (the
    R boundary shows its `one_based` message, and shifts nothing)."""
    err.one_based = str(err)  # type: ignore[attr-defined]
    return err


# --------------------------------------------------------------------------
# Whole numbers and sizes


def integer(v: Any, what: str = "value") -> int:
    """A whole number as R gives it (a double, an integer, a length-1 vector
    or one-element tensor); a logical or a fraction is an error naming `what`."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"expected an integer {what}, got a logical")
    if isinstance(v, np.ndarray):
        if v.size != 1:
            raise ValueError(f"expected a single integer {what}, got {v.size} values")
        v = v.reshape(()).item()
    if isinstance(v, Tensor):
        v = v.item()
    if not isinstance(v, (int, float, np.integer, np.floating)):
        kind = "a character string" if isinstance(v, str) else f"a {type(v).__name__}"
        raise TypeError(f"expected an integer {what}, got {kind}")
    iv = int(v)
    if iv != v:
        raise ValueError(f"expected an integer {what}, got {v}")
    return iv


def sizes(args: Sequence[Any]) -> tuple:
    """A shape as R gives it: torch_zeros(2, 3), torch_zeros(c(2, 3)),
    x$view(c(2, -1)) (sizes are counts: nothing to shift)."""
    out: list[int] = []
    for a in args:
        if isinstance(a, (list, tuple, np.ndarray, NamedList)):
            flat = np.asarray(list(a) if isinstance(a, NamedList) else a).reshape(-1)
            out.extend(integer(v, "size") for v in flat)
        else:
            out.append(integer(a, "size"))
    return tuple(out)


# --------------------------------------------------------------------------
# Dims


def dim(d: Any, ndim: int | None = None) -> int:
    """R's dim (1-based, negative from the end) as the engine's 0-based one,
    checked against `ndim` (when given) with R's range in the message."""
    d = integer(d, "dim")
    if d == 0:
        raise IndexError(ZERO_MESSAGE)
    if ndim is not None:
        n = builtins.max(ndim, 1)
        if not -n <= d <= n:
            raise in_r_counting(IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n}], but got {d})"))
    return d - 1 if d > 0 else d


def dims(v: Any, ndim: int | None = None) -> Any:
    """One dim or several (an R vector or list: a tuple); None, tensors and
    dim names (the op says what it makes of a named dim) pass through."""
    if v is None or isinstance(v, (Tensor, str)):
        return v
    if isinstance(v, (list, tuple)) and any(isinstance(d, str) for d in v):
        return tuple(d if isinstance(d, str) else dim(d, ndim) for d in v)
    return _each(v, lambda d: dim(d, ndim))


def wrapper_dims(v: Any) -> Any:
    """Dims R torch's own R code counts (its `as_1_based_dim`: movedim, sparsemax)
    rather than its C++ layer: 1-based, negative from the end, a 0 a value error
    of its own words; the range is the op's to check (and R's message to count)."""
    return _each(v, _wrapper_dim)


def _wrapper_dim(v: Any) -> int:
    d = integer(v, "dim")
    if d == 0:
        raise ValueError(ONE_BASED_DIM_MESSAGE)
    return d - 1 if d > 0 else d


def _each(v: Any, one: Callable[[Any], int]) -> Any:
    """One dim, or several (an R vector or list: a tuple; a one-element vector is
    one dim), each counted by `one`."""
    if isinstance(v, (list, tuple, np.ndarray)):
        flat = np.asarray(v).reshape(-1)
        if flat.size == 1 and isinstance(v, np.ndarray):
            return one(flat[0])
        return tuple(one(d) for d in flat)
    return one(v)


def dim_to_r(d: int) -> int:
    """An engine dim as R names it (negative ones count from the end in both)."""
    return d + 1 if d >= 0 else d


# --------------------------------------------------------------------------
# Positions


def position(k: int) -> int:
    """R's position (1-based, negative from the end) as 0-based."""
    if k == 0:
        raise IndexError(ZERO_MESSAGE)
    return k - 1 if k > 0 else k


def positions(a: np.ndarray) -> np.ndarray:
    """A vector of R positions (whole numbers, 1-based, negative from the
    end) as 0-based int64."""
    ai = a.astype(np.int64)
    if a.dtype.kind not in "iu" and ai.size and (ai != a).any():
        raise IndexError("index vectors must hold whole numbers")
    if ai.size and ai.min() > 0:  # fast path: all counted from the start
        ai -= 1
        return ai
    if (ai == 0).any():
        raise IndexError(ZERO_MESSAGE)
    return np.where(ai > 0, ai - 1, ai)


def position_to_r(k: int) -> int:
    """An engine position as R names it in a message."""
    return k + 1 if k >= 0 else k


def to_r(x: Any) -> Any:
    """Positions or labels the engine gives (indices of max, sort,
    multinomial's draws, row numbers...), a number, an array, a tensor or a
    list of them, as R torch gives them: 1-based (a tensor's dim names stay)."""
    if isinstance(x, (list, tuple)):
        return [to_r(v) for v in x]
    if isinstance(x, (np.ndarray, int, np.integer)) and not isinstance(x, bool):
        return x + 1
    if not isinstance(x, Tensor):
        return x
    if MODES:  # (while tracing: an op, which the trace records)
        return x + 1
    out = wrap(x.data + 1)
    if x._names is not None:
        out._names = x._names
    return out


# --------------------------------------------------------------------------
# Labels: numbered from 1, no counting from the end


def labels(x: Any) -> Any:
    """Class labels, row numbers or sparse indices (an integer tensor, an
    array or a number) as 0-based; a non-integer tensor is left for the
    function to refuse."""
    if x is None:
        return None
    if isinstance(x, Tensor):
        if x.data.dtype.kind not in "iu":
            return x
        if MODES:  # (while tracing: ops, which the trace records)
            return x.to(dtype="int64") - 1
        return wrap(np.subtract(x.data, 1, dtype=np.int64))  # (one pass: no int64 copy first)
    if isinstance(x, np.ndarray):
        return x.astype(np.int64) - 1  # (R's numbers may be doubles: cast first)
    return int(x) - 1


def index_tensor(x: Any) -> Any:
    """What R torch takes as an index tensor (class labels and targets, embedding
    rows, max-pooling indices, one_hot's classes): numbered from 1, a 0 an error,
    a negative value kept as it is (no class: a loss's ignored target, the -1
    ending multilabel_margin_loss's rows), as int64; a number or an array is a
    label (`labels`); a non-integer tensor is left for the function to refuse."""
    if not isinstance(x, Tensor):
        return labels(x)
    if x.data.dtype.kind not in "iu":
        return x
    if MODES:  # (while tracing: ops, which the trace records)
        return x.to(dtype="int64") - (x > 0).to(dtype="int64")
    return wrap(positions(x.data))


def ignore_label(v: Any) -> int:
    """A loss's `ignore_index`, counted as its targets are (`index_tensor`): 1-based,
    a negative one (the default -100: no class) as it is."""
    if int(v) == 0:
        raise ValueError("ignore_index = 0 is not a 1 based class index: classes are numbered "
                         "from 1 in R (the default, -100, ignores nothing)")
    return int(v) - 1 if int(v) > 0 else int(v)


# --------------------------------------------------------------------------
# Layer numbers in parameter names

_LAYER_NO = re.compile(r"_l(\d+)(_reverse)?$")


def _renumber(name: str, step: int) -> str:
    return _LAYER_NO.sub(lambda m: f"_l{int(m.group(1)) + step}{m.group(2) or ''}", name)


def layer_name(name: str) -> str:
    """R torch's name of a recurrent layer's parameter (`weight_ih_l1`, layers
    from 1) as the engine's (`weight_ih_l0`)."""
    return _renumber(name, -1)


def layer_name_to_r(name: str) -> str:
    """The engine's `weight_ih_l0` as R torch names it, `weight_ih_l1`."""
    return _renumber(name, 1)


# --------------------------------------------------------------------------
# Error messages

# libtorch's messages that name dims, tensor numbers in a list, targets or max indices
# counting from 0, and which of their numbers R torch shows counted from 1 (its
# `translate_error_msg`): each pattern's groups are the numbers to shift; a
# non-negative number gains 1, a negative one stays (it counts from the end) except
# in `_SHIFT_ALL`'s patterns, where every number gains 1 (a target is a class label).
_COUNTED_MESSAGES = [re.compile(p) for p in (
    r"Dimension out of range \(expected to be in range of \[-\d+, (\d+)\], but got (-?\d+)\)",
    r"dimension (\d+) does not have size \d+",
    r"inputs dimension (\d+) must have length",
    r"Found an invalid max index: (\d+)",
    r"index (\d+) out of range for tensor of size \[\d+\] at dimension (\d+)",
    r"Target (-?\d+) is out of bounds\.",
    r"contracted dimensions need to match, but first has size \d+ in dim (\d+) and second has "
    r"size \d+ in dim (\d+)",
    r"index (-?\d+) is out of bounds for dimension (\d+) with size 0",
    r"Expected size \d+ but got size \d+ for tensor number (\d+) in the list",
    r"Sizes of tensors must match except in dimension (\d+)",
)]
_SHIFT_ALL = frozenset({r"Target (-?\d+) is out of bounds\."})


def _shift_groups(m: re.Match, every: bool) -> str:
    """The match `m` with its groups' numbers counted from 1."""
    text, at, pieces, last = m.group(0), m.start(0), [], 0
    for g in range(1, (m.lastindex or 0) + 1):
        k = int(m.group(g))
        pieces += [text[last:m.start(g) - at], str(k + 1 if every or k >= 0 else k)]
        last = m.end(g) - at
    return "".join(pieces) + text[last:]


def message_to_r(msg: str) -> str:
    """A libtorch message (the engine says what libtorch says) as R torch shows it:
    the dims, tensor numbers, targets and max indices it names counted from 1."""
    for pattern in _COUNTED_MESSAGES:
        every = pattern.pattern in _SHIFT_ALL
        msg = pattern.sub(lambda m: _shift_groups(m, every), msg)
    return msg
