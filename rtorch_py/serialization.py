"""torch_save() / torch_load(): tensors and plain containers, in a format
that never runs code when read.

Our files are zip archives: `rtorch.json` describes the value (containers,
numbers, strings) and names each tensor's array, stored beside it as
`tensors/<i>.npy` (read back with allow_pickle=False). A file may also hold
an R object (`r_object.rds`, written by the R side for modules, datasets and
other R values), which only R can load.

torch_load() also reads PyTorch's `.pt`/`.pth` zip files (state dicts), with
an unpickler that builds only tensors and plain containers and refuses any
other class by name.
"""
from __future__ import annotations

import inspect
import io
import json
import math
import os
import pickle
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from .containers import NamedList
from .creation import torch_tensor
from .optim import Optimizer
from .tensor import Tensor

FORMAT = "rtorch-py"
VERSION = 1
_INDEX = "rtorch.json"
_R_OBJECT = "r_object.rds"

__all__ = ["torch_save", "torch_load", "torch_serialize", "load_state_dict"]


# -- writing -------------------------------------------------------------------

def _own_class(x: Any) -> str | None:
    """'module:qualname' when x's class (or x, a function) is rtorch-py's own and
    importable by that name, so loading can rebuild it without running code."""
    target = x if _is_named_code(x) else type(x)
    mod, qual = getattr(target, "__module__", ""), getattr(target, "__qualname__", "")
    if not mod.startswith("rtorch_py.") or "<" in qual:
        return None
    try:
        return f"{mod}:{qual}" if _resolve(f"{mod}:{qual}") is target else None
    except (ImportError, AttributeError, ValueError):
        return None


def _is_named_code(x: Any) -> bool:
    return isinstance(x, type) or inspect.isroutine(x)


def _is_optimizer(x: Any) -> bool:
    return isinstance(x, Optimizer)  # (saved as its state_dict(), as in PyTorch)


def _resolve(name: str) -> Any:
    import importlib
    mod, _, qual = name.partition(":")
    if not mod.startswith("rtorch_py."):
        raise ValueError(f"torch_load: refusing to rebuild '{name}': only rtorch-py's own "
                         "classes can be loaded")
    obj: Any = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


class _Writer:
    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self.seen: dict[int, int] = {}  # tensors saved once, shared on load
        self.objects: dict[int, int] = {}  # rtorch-py objects, likewise
        self.keep: list = []  # what the ids above belong to, alive while saving

    def array(self, arr: np.ndarray) -> int:
        self.arrays.append(np.asarray(arr, order="C"))  # (ascontiguousarray makes 0-d 1-d)
        return len(self.arrays) - 1

    def encode(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            i = self.seen.get(id(x))
            if i is None:
                i = self.seen[id(x)] = self.array(x.data)
            return {"tensor": i, "requires_grad": x.requires_grad}
        if x is None or isinstance(x, (bool, str)):
            return {"value": x}
        if isinstance(x, (int, np.integer)):
            return {"value": int(x)}
        if isinstance(x, (float, np.floating)):
            f = float(x)
            return {"float": f if math.isfinite(f) else repr(f)}
        if isinstance(x, np.ndarray):
            return {"array": self.array(x)}
        if isinstance(x, NamedList):
            return {"named": list(x.names()), "values": [self.encode(v) for v in x.values()]}
        if isinstance(x, dict):
            for k in x:
                if not isinstance(k, (str, int)):
                    raise TypeError(f"torch_save: dict keys must be strings or integers, got "
                                    f"{type(k).__name__}")
            return {"dict": [[k, self.encode(v)] for k, v in x.items()]}
        if isinstance(x, tuple):
            return {"tuple": [self.encode(v) for v in x]}
        if isinstance(x, list):
            return {"list": [self.encode(v) for v in x]}
        if isinstance(x, (set, frozenset)):
            return {"set": [self.encode(v) for v in sorted(x, key=repr)]}
        own = _own_class(x)
        if own is not None and _is_named_code(x):
            return {"function": own}
        if own is not None and hasattr(x, "__dict__") and not _is_optimizer(x):
            # one of rtorch-py's objects (a layer...): its class by name and its fields
            k = self.objects.get(id(x))
            if k is not None:
                return {"ref": k}
            k = self.objects[id(x)] = len(self.objects)
            self.keep.append(x)
            return {"object": own, "id": k, "state": self.encode(dict(vars(x)))}
        state_dict = getattr(x, "state_dict", None)
        if callable(state_dict):  # modules and optimisers: their state
            return {"state_dict_of": type(x).__name__, "value": self.encode(state_dict())}
        raise TypeError(f"torch_save can't save a {type(x).__name__}: it saves tensors, "
                        "numbers, strings, NumPy arrays, lists, tuples, dicts and objects "
                        "with a state_dict() (modules, optimizers)")


def _write(path: Any, index: dict, arrays: list, extra: dict | None = None) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(_INDEX, json.dumps(index))
        for i, arr in enumerate(arrays):
            buf = io.BytesIO()
            np.save(buf, arr, allow_pickle=False)
            z.writestr(f"tensors/{i}.npy", buf.getvalue())
        for name, data in (extra or {}).items():
            z.writestr(name, data)


def torch_save(obj: Any, path: Any) -> None:
    """Save tensors, (nested) lists/dicts of them and plain values; modules
    and optimisers are saved as their state_dict()."""
    w = _Writer()
    root = w.encode(obj)
    _write(os.fspath(path) if not hasattr(path, "write") else path,
           {"format": FORMAT, "version": VERSION, "root": root}, w.arrays)


def torch_serialize(obj: Any) -> bytes:
    buf = io.BytesIO()
    torch_save(obj, buf)
    return buf.getvalue()


def save_r(path: Any, rds: bytes, tensors: list) -> None:
    """An R object (serialized by R, tensors replaced by their position in
    `tensors`) and its tensors."""
    w = _Writer()
    refs = [w.encode(t) for t in tensors]
    _write(path, {"format": FORMAT, "version": VERSION, "r_object": _R_OBJECT, "tensors": refs},
           w.arrays, {_R_OBJECT: rds})


# -- reading -------------------------------------------------------------------

class _Reader:
    def __init__(self, z: zipfile.ZipFile) -> None:
        self.z = z
        self.tensors: dict[int, Tensor] = {}
        self.objects: dict[int, Any] = {}

    def array(self, i: int) -> np.ndarray:
        with self.z.open(f"tensors/{int(i)}.npy") as f:
            return np.load(io.BytesIO(f.read()), allow_pickle=False)

    def decode(self, e: Any) -> Any:
        if not isinstance(e, dict):
            raise ValueError("torch_load: damaged file (unexpected entry in the index)")
        if "tensor" in e:
            i = int(e["tensor"])
            if i not in self.tensors:
                self.tensors[i] = torch_tensor(self.array(i),
                                               requires_grad=bool(e.get("requires_grad")))
            return self.tensors[i]
        if "object" in e:
            cls = _resolve(e["object"])
            if not isinstance(cls, type):
                raise ValueError(f"torch_load: '{e['object']}' is not a class")
            obj = cls.__new__(cls)  # no __init__: the fields come from the file
            self.objects[int(e["id"])] = obj
            vars(obj).update(self.decode(e["state"]))
            return obj
        if "ref" in e:
            return self.objects[int(e["ref"])]
        if "function" in e:
            return _resolve(e["function"])
        if "set" in e:
            return {self.decode(v) for v in e["set"]}
        if "state_dict_of" in e:
            return self.decode(e["value"])
        if "value" in e:
            return e["value"]
        if "float" in e:
            return float(e["float"])
        if "array" in e:
            return self.array(e["array"])
        if "named" in e:
            return NamedList(e["named"], [self.decode(v) for v in e["values"]])
        if "dict" in e:
            return {k: self.decode(v) for k, v in e["dict"]}
        if "tuple" in e:
            return tuple(self.decode(v) for v in e["tuple"])
        if "list" in e:
            return [self.decode(v) for v in e["list"]]
        raise ValueError(f"torch_load: damaged file (unknown entry {sorted(e)})")


def _open(path: Any) -> zipfile.ZipFile:
    if isinstance(path, (bytes, bytearray)):
        path = io.BytesIO(path)
    try:
        return zipfile.ZipFile(path if hasattr(path, "read") else os.fspath(path))
    except zipfile.BadZipFile:
        raise ValueError(f"torch_load: {path!r} is not a file saved by torch_save() (nor a "
                         "PyTorch .pt/.pth zip file); files saved by R torch with libtorch's "
                         "legacy format can't be read") from None


def _index(z: zipfile.ZipFile) -> dict | None:
    if _INDEX not in z.namelist():
        return None
    index = json.loads(z.read(_INDEX))
    if index.get("format") != FORMAT:
        raise ValueError("torch_load: not an rtorch-py file")
    if int(index.get("version", 0)) > VERSION:
        raise ValueError(f"torch_load: the file was written by a newer rtorch-py (format "
                         f"version {index['version']}); upgrade to read it")
    return index


def torch_load(path: Any, device: Any = "cpu") -> Any:
    """Read what torch_save() wrote, or a PyTorch state dict (.pt/.pth)."""
    if device not in (None, "cpu"):
        raise ValueError(f"only the 'cpu' device exists here, got {device!r}")
    with _open(path) as z:
        index = _index(z)
        if index is None:
            return _load_pytorch(z)
        if "r_object" in index:
            raise ValueError("torch_load: this file holds an R object (a module, dataset or "
                             "other R value saved from R); load it with torch_load() in R")
        return _Reader(z).decode(index["root"])


def load_r(path: Any) -> list:
    """For the R side: [kind, value, rds bytes or None, tensors]. kind is
    "r" (an R object: rds and its tensors) or "value" (anything else)."""
    with _open(path) as z:
        index = _index(z)
        if index is None:
            return ["value", _load_pytorch(z), None, []]
        r = _Reader(z)
        if "r_object" in index:
            tensors = [r.decode(e) for e in index["tensors"]]
            return ["r", None, z.read(index["r_object"]), tensors]
        return ["value", r.decode(index["root"]), None, []]


# -- PyTorch's zip files -----------------------------------------------------------

_STORAGE_DTYPES = {
    "FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
    "BFloat16Storage": None, "LongStorage": np.int64, "IntStorage": np.int32,
    "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}


class _StorageType:
    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype = _STORAGE_DTYPES[name]


def _rebuild_tensor(storage: np.ndarray, offset: int, size: tuple, stride: tuple,
                    requires_grad: bool = False, hooks: Any = None, metadata: Any = None) -> Tensor:
    itemsize = storage.dtype.itemsize
    if size:
        view = np.lib.stride_tricks.as_strided(storage[offset:], shape=tuple(size),
                                               strides=tuple(s * itemsize for s in stride))
    else:
        view = storage[offset:offset + 1].reshape(())
    arr = np.array(view)  # own copy, C order
    if arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    elif arr.dtype in (np.int8, np.int16, np.uint8):
        arr = arr.astype(np.int64)
    return torch_tensor(arr, requires_grad=bool(requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool, hooks: Any = None,
                       state: Any = None) -> Tensor:
    data.requires_grad = bool(requires_grad) and data.is_floating_point()
    return data


_ALLOWED = {
    ("collections", "OrderedDict"): OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
}


class _RestrictedUnpickler(pickle.Unpickler):
    """Builds tensors and plain containers only; any other class is refused."""

    def __init__(self, data: bytes, z: zipfile.ZipFile, prefix: str) -> None:
        super().__init__(io.BytesIO(data))
        self.z, self.prefix = z, prefix
        self.storages: dict[str, np.ndarray] = {}

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return _ALLOWED[(module, name)]
        if module == "torch" and name in _STORAGE_DTYPES and _STORAGE_DTYPES[name] is not None:
            return _StorageType(name)
        raise pickle.UnpicklingError(
            f"torch_load refuses to load '{module}.{name}': only tensors and plain "
            "containers (state dicts) can be read from PyTorch files, since loading "
            "anything else would run code from the file. Save a state_dict() in Python "
            "(torch.save(model.state_dict(), path)) and load that")

    def persistent_load(self, pid: Any) -> np.ndarray:
        if not (isinstance(pid, tuple) and pid and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r} in PyTorch file")
        storage_type, key = pid[1], str(pid[2])
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError("unsupported storage type in PyTorch file")
        if key not in self.storages:
            raw = self.z.read(f"{self.prefix}data/{key}")
            self.storages[key] = np.frombuffer(raw, dtype=np.dtype(storage_type.dtype)
                                               .newbyteorder("<")).copy()
        return self.storages[key]


def _load_pytorch(z: zipfile.ZipFile) -> Any:
    names = z.namelist()
    pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
    if not pkl:
        raise ValueError("torch_load: not a file saved by torch_save() nor a PyTorch zip file")
    prefix = pkl[0][: -len("data.pkl")]
    if any(n.startswith(prefix + "code/") for n in names):
        raise ValueError("torch_load: this is a TorchScript (jit) module: read it with "
                         "jit_load()")
    byteorder = prefix + "byteorder"
    if byteorder in names and z.read(byteorder).strip() != b"little":
        raise ValueError("torch_load: big-endian PyTorch files are not supported")
    return _RestrictedUnpickler(z.read(pkl[0]), z, prefix).load()


def load_state_dict(path: Any) -> dict:
    """A state dict saved by PyTorch (torch.save(model.state_dict(), path)) or by torch_save()."""
    out = torch_load(path)
    if not isinstance(out, dict):
        raise ValueError(f"load_state_dict: the file holds a {type(out).__name__}, not a "
                         "state dict")
    return out
