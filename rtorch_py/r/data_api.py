"""What R's datasets and data loaders call: whole-batch work in one call
(rows of several tensors, collating a list of examples); the samplers' random
orders are R's torch_randperm() and torch_randint() (r_compat/R/data-sampler.R).
Indices arrive 1-based, as R gives them."""
from __future__ import annotations

import base64
from typing import Any, Callable

import numpy as np

from .. import serialization
from ..constructors import torch_tensor
from ..data import take_rows
from ..function import NamedList
from ..ops import REGISTRY
from ..tensor import Tensor
from . import one_based
from .convert import _r_tensor, _r_value, _undef


def _index_array(idx: Any) -> np.ndarray:
    arr = np.asarray(idx.values() if isinstance(idx, NamedList) else idx).reshape(-1)
    if arr.dtype.kind == "f":
        if np.any(arr != np.floor(arr)):
            raise ValueError("indices must be whole numbers")
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"indices must be numeric, got {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def rows(tensors: Any, idx: Any, drop: bool = False) -> Any:
    """Rows `idx` (1-based) of each tensor; a single index with `drop` drops
    the first dim (as `x[i, ..]` does in R)."""
    values = tensors.values() if isinstance(tensors, NamedList) else list(tensors)
    one = drop and np.ndim(idx) == 0 and not isinstance(idx, (list, NamedList))
    arr = one_based.labels(_index_array(idx))
    # (seen unsigned, a negative index is past any end: one reduction checks both)
    top = arr.view(np.uint64).max() if arr.size else None
    for t in values:
        n = t.shape[0]
        if top is not None and top >= n:
            bad = one_based.to_r(arr[(arr < 0) | (arr >= n)][0])
            raise IndexError(f"index {bad} is out of bounds for a dataset of {n} rows "
                             "(indices are 1-based)")
    if one:
        out = [t[int(arr[0])] for t in values]
    else:
        out = take_rows(values, arr)
    return NamedList(tensors.names(), out) if isinstance(tensors, NamedList) else out


def _stack(items: list) -> Tensor:
    return REGISTRY["stack"].fn(items, 0)  # (torch_stack)


class CollateError(ValueError):
    pass


def collate(batch: Any) -> Any:
    """R torch's default collation of a list of examples, in one call:
    tensors and R arrays/vectors are stacked on a new first dim, R numbers
    become a float tensor, integers a long one, logicals a bool one, strings
    stay strings, lists are collated element by element (names kept)."""
    items = batch.values() if isinstance(batch, NamedList) else list(batch)
    if not items:
        raise CollateError("can't collate an empty batch")
    elem = items[0]
    if isinstance(elem, Tensor):
        return _stack(items)
    if isinstance(elem, np.ndarray) and elem.ndim <= 1 and elem.size == 1:
        # (one R number with attributes, a name: a number, as R torch's unlist() makes it)
        items = [np.asarray(v).reshape(-1)[0].item() for v in items]
        elem = items[0]
    if isinstance(elem, np.ndarray):
        return _stack([_r_tensor(v) for v in items])
    if isinstance(elem, bool):
        return torch_tensor(np.array(items, dtype=np.bool_))
    if isinstance(elem, int):
        return torch_tensor(np.array(items, dtype=np.int64))
    if isinstance(elem, float):
        return torch_tensor(np.array(items, dtype=np.float32))
    if isinstance(elem, str):
        return items
    if isinstance(elem, (list, NamedList)):
        cols = [v.values() if isinstance(v, NamedList) else list(v) for v in items]
        n = len(cols[0])
        if any(len(c) != n for c in cols):
            raise CollateError("each example in the batch must have the same number of "
                               "elements")
        out = [collate([c[k] for c in cols]) for k in range(n)]
        return NamedList(elem.names(), out) if isinstance(elem, NamedList) else out
    kind = getattr(elem, "rtype", type(elem).__name__)
    raise CollateError(f"Can't collate data of class: '{kind}'; give the dataloader a "
                       "collate_fn")


class Batches:
    """One epoch of a tensor dataset's batches (R's `dataloader` fast path): the
    epoch's order (1-based, drawn in R by its sampler) cut into slices of `size`
    as R's batch sampler cuts it, each read as `.getbatch()` reads it (`rows`)."""

    __slots__ = ("order", "top", "size", "drop_last", "at")

    def __init__(self, order: Any, size: Any, drop_last: Any) -> None:
        self.order = one_based.labels(_index_array(order))
        # (seen unsigned, a negative index is past any end: one bound for the epoch)
        self.top = int(self.order.view(np.uint64).max()) if self.order.size else 0
        self.size = int(size)
        self.drop_last = bool(drop_last)
        self.at = 0


def next_batch(epoch: Batches, tensors: Any) -> Any:
    """The next batch's rows of `tensors`, or None once the epoch is over."""
    start, n = epoch.at, len(epoch.order)
    end = min(start + epoch.size, n)
    if start >= n or (epoch.drop_last and end - start < epoch.size):
        return None
    epoch.at = end
    values = tensors.values() if isinstance(tensors, NamedList) else list(tensors)
    if any(epoch.top >= t.shape[0] for t in values):  # (rows() says which index, 1-based)
        return rows(tensors, one_based.to_r(epoch.order[start:end]))
    out = take_rows(values, epoch.order[start:end])
    return NamedList(tensors.names(), out) if isinstance(tensors, NamedList) else out


R_FUNCTIONS: dict[str, Callable] = {
    ".data_batches": Batches,
    ".data_next_batch": next_batch,
    ".data_rows": rows,
    ".data_collate": collate, "utils_data_default_collate": collate,
}


# --------------------------------------------------------------------------
# Saving (torch_save / torch_load from R; see r_compat/R/save.R)

def save_r(path: str, rds: Any, refs: Any) -> None:
    """An R object serialized by R (`rds`, as R integers 0-255) whose references
    to Python objects (tensors, layers) are `refs`, by position."""
    data = np.asarray(rds, dtype=np.uint8).tobytes()
    serialization.save_r(path, data, refs.values() if isinstance(refs, NamedList) else list(refs))


def load_r(path: str) -> list:
    """[kind, value, rds (R integers) or None, refs] for R's torch_load."""
    kind, value, rds, refs = serialization.load_r(path)
    if rds is not None:
        rds = np.frombuffer(rds, dtype=np.uint8).astype(np.int32)
    return [kind, value, rds, refs]


def _bytes(x: Any) -> bytes:
    """An R raw vector's bytes."""
    if isinstance(x, np.ndarray):
        return x.astype(np.uint8, copy=False).tobytes()
    return bytes(memoryview(x))


def _named(names: Any, tensors: Any) -> list:
    names = names.values() if isinstance(names, NamedList) else list(names or [])
    tensors = tensors.values() if isinstance(tensors, NamedList) else list(tensors or [])
    return list(zip((str(n) for n in names), (_undef(t) for t in tensors)))


def r_file(kind: str, names: Any, tensors: Any, robj: Any, extra_names: Any,
           extra: Any) -> np.ndarray:
    """The bytes of an R torch file (see serialization.r_file), as an R raw vector."""
    data = serialization.r_file(kind, _named(names, tensors),
                                None if robj is None else _bytes(robj), _named(extra_names, extra))
    return np.frombuffer(data, dtype=np.uint8)


def read_r_file(data: Any) -> list:
    """[kind or NULL, names, tensors, the R object's bytes or NULL] of a safetensors file."""
    kind, names, tensors, robj = serialization.read_r_file(_bytes(data))
    return [kind, names, [_r_value(t) for t in tensors],
            None if robj is None else np.frombuffer(robj, np.uint8)]


def libtorch_tensor(data: Any) -> Tensor:
    """The tensor in libtorch's own file (what R torch's older files hold)."""
    return serialization.load_libtorch_tensor(_bytes(data))


def base64_bytes(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=np.uint8)


def is_python_object(x: Any) -> bool:
    """Whether an R external pointer holds a Python object the saver can store
    (tensors and rtorch-py's own objects)."""
    return isinstance(x, Tensor) or serialization.own_class(x) is not None


def object_key(x: Any) -> str:
    return f"{id(x):x}"


R_FUNCTIONS.update({
    ".save_r": save_r,
    ".load_r": load_r,
    ".is_saveable_py": is_python_object,
    ".r_file": r_file,
    ".read_r_file": read_r_file,
    ".libtorch_tensor": libtorch_tensor,
    ".base64_bytes": base64_bytes,
    ".py_key": object_key,
})
