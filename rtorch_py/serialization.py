"""torch_save() / torch_load(): tensors and plain containers, in formats that
never run code when read.

R torch 0.17's format (what R's torch_save() writes, and Python's for a tensor):
a safetensors file (an 8-byte little-endian header length, the JSON header, the
tensors' bytes) whose `__metadata__` holds `"__r__"`, JSON saying what the file
is (`type`: tensor, list, module or state_dict; `version` 3; which tensors
`requires_grad`; `special_dtype` for complex ones, stored as their bytes), and
for lists, modules and datasets the R object itself, `serialize()`d by R, as the
uint8 tensor `"__robj__"`. The format is written here rather than with Python's
`safetensors` package, whose NumPy API has no bfloat16 (nor float8): it is a
header and raw bytes, laid out exactly as R's safetensors package lays it out.
Safetensors files from elsewhere (Hugging Face) are read as named tensors.

Python's own values (dicts, lists, numbers) go in zip archives: `rtorch.json`
describes the value and names each tensor's array, stored beside it as
`tensors/<i>.npy` (read back with allow_pickle=False); an older shim's R objects
(`r_object.rds`) are still read by R. torch_load() also reads PyTorch's
`.pt`/`.pth` zip files (state dicts), with an unpickler that builds only tensors
and plain containers and refuses any other class by name.
"""
from __future__ import annotations

import inspect
import io
import json
import math
import os
import pickle
import struct
import sys
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from .containers import NamedList
from .constructors import torch_tensor
from .optim import Optimizer
from .tensor import Tensor, as_dtype, wrap

FORMAT = "rtorch-py"
VERSION = 1
_INDEX = "rtorch.json"
_R_OBJECT = "r_object.rds"

__all__ = ["torch_save", "torch_load", "torch_serialize", "load_state_dict"]


# -- writing -------------------------------------------------------------------

def own_class(x: Any) -> str | None:
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


class Writer:
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
        own = own_class(x)
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
    """Save tensors (in R torch's format), (nested) lists/dicts of them and plain
    values; modules and optimisers are saved as their state_dict()."""
    if isinstance(obj, Tensor):
        _write_bytes(path, r_file("tensor", [(_UNNAMED, obj)]))
        return
    w = Writer()
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
    w = Writer()
    refs = [w.encode(t) for t in tensors]
    _write(path, {"format": FORMAT, "version": VERSION, "r_object": _R_OBJECT, "tensors": refs},
           w.arrays, {_R_OBJECT: rds})


# -- reading -------------------------------------------------------------------

class Reader:
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


def _open(path: Any, name: Any = None) -> zipfile.ZipFile:
    if isinstance(path, (bytes, bytearray)):
        path = io.BytesIO(path)
    try:
        return zipfile.ZipFile(path if hasattr(path, "read") else os.fspath(path))
    except zipfile.BadZipFile:
        what = "this" if name is None or hasattr(name, "read") or \
            isinstance(name, (bytes, bytearray)) else repr(os.fspath(name))
        raise ValueError(f"torch_load: {what} is not a file saved by torch_save() (nor a "
                         "safetensors file or a PyTorch .pt/.pth zip file)") from None


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
    """Read what torch_save() wrote (here or by R torch), a safetensors file (a dict
    of tensors), or a PyTorch state dict (.pt/.pth)."""
    if device not in (None, "cpu"):
        raise ValueError(f"only the 'cpu' device exists here, got {device!r}")
    data = _read_bytes(path)
    if is_safetensors(data):
        kind, names, tensors, robj = read_r_file(data)
        if kind == "tensor":
            return tensors[0]
        if kind in (None, "module"):  # (a module's weights: its state dict)
            return OrderedDict((n, t) for n, t in zip(names, tensors)
                               if not n.startswith(EXTRA_TENSOR))
        raise ValueError(f"torch_load: this file holds an R object (a {kind}, saved by "
                         "torch_save() in R); load it with torch_load() in R")
    if data[:2] == b"\x1f\x8b" or data[:2] in (b"X\n", b"A\n", b"B\n"):
        raise ValueError("torch_load: this is an R torch file of the older RDS format; load "
                         "it with torch_load() in R")
    with _open(data, path) as z:
        index = _index(z)
        if index is None:
            return _load_pytorch(z)
        if "r_object" in index:
            raise ValueError("torch_load: this file holds an R object (a module, dataset or "
                             "other R value saved from R); load it with torch_load() in R")
        return Reader(z).decode(index["root"])


def load_r(path: Any) -> list:
    """For the R side: [kind, value, rds bytes or None, tensors]. kind is
    "r" (an R object: rds and its tensors) or "value" (anything else)."""
    with _open(path) as z:
        index = _index(z)
        if index is None:
            return ["value", _load_pytorch(z), None, []]
        r = Reader(z)
        if "r_object" in index:
            tensors = [r.decode(e) for e in index["tensors"]]
            return ["r", None, z.read(index["r_object"]), tensors]
        return ["value", r.decode(index["root"]), None, []]


# -- R torch's files: safetensors ------------------------------------------------------

_UNNAMED = "...unnamed..."   # the one tensor of a "tensor" file, as R torch names it
# tensors a module's file holds beyond its state dict (see rtorch_py/r/modules.py)
EXTRA_TENSOR = "__rtorch_tensor__."
R_KEY, R_OBJECT = "__r__", "__robj__"
R_VERSION = 3
_SAFE_DTYPES = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16",
                "bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "int32": "I32",
                "int64": "I64", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2"}
_FROM_SAFE = {v: k for k, v in _SAFE_DTYPES.items()}
_FROM_SAFE.update({"U16": "int32", "U32": "int64", "U64": "int64"})  # (widened: no such dtypes)
_SAFE_NP = {"U16": np.uint16, "U32": np.uint32, "U64": np.uint64}
# complex tensors: R torch stores their bytes (uint8) and names the dtype in __r__
_SPECIAL = {"complex64": "cfloat", "complex128": "cdouble"}
_FROM_SPECIAL = {"cfloat": "complex64", "cdouble": "complex128", "chalf": None}


def _json(x: Any) -> str:
    """JSON as R's jsonlite writes it (no spaces, UTF-8 as is)."""
    return json.dumps(x, separators=(",", ":"), ensure_ascii=False)


def write_safetensors(entries: list, metadata: dict | None = None) -> bytes:
    """A safetensors file of (name, array) entries, laid out as R's safetensors
    package lays it out: the tensors in order, then `__metadata__`, no padding."""
    header: dict = {}
    offset = 0
    for name, arr in entries:
        dtype = _SAFE_DTYPES.get(_dtype_name(arr))
        if dtype is None:
            raise TypeError(f"torch_save: can't store a tensor of {arr.dtype} ({name!r})")
        header[name] = {"shape": list(arr.shape), "dtype": dtype,
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
    if metadata is not None:
        header["__metadata__"] = metadata
    head = _json(header).encode("utf-8")
    out = [struct.pack("<Q", len(head)), head]
    out += [_little(np.ascontiguousarray(arr)).tobytes() for _, arr in entries]
    return b"".join(out)


def _little(arr: np.ndarray) -> np.ndarray:
    """The array's bytes in little-endian order (safetensors' order), on any host."""
    return arr if sys.byteorder == "little" or arr.dtype.itemsize == 1 else arr.byteswap()


def _dtype_name(arr: np.ndarray) -> str:
    return wrap(arr[:0]).dtype.name if arr.dtype.kind == "V" else np.dtype(arr.dtype).name


def is_safetensors(data: bytes) -> bool:
    if len(data) < 10:
        return False
    (n,) = struct.unpack("<Q", data[:8])
    return 0 < n <= len(data) - 8 and data[8:9] == b"{"


def read_safetensors(data: bytes) -> tuple:
    """(names, arrays, metadata) of a safetensors file, in the header's order."""
    (n,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("torch_load: damaged safetensors file (its header isn't JSON)") from None
    body = memoryview(data)[8 + n:]
    metadata = header.pop("__metadata__", None) or {}
    names, arrays = [], []
    for name, info in header.items():
        code = info.get("dtype")
        if code not in _FROM_SAFE:
            raise ValueError(f"torch_load: tensor {name!r} has dtype {code!r}, which rtorch-py "
                             f"doesn't have (it reads {', '.join(sorted(_FROM_SAFE))})")
        np_dtype = np.dtype(_SAFE_NP.get(code) or as_dtype(_FROM_SAFE[code]).np)
        begin, end = (int(v) for v in info["data_offsets"])
        shape = tuple(int(s) for s in info["shape"])
        if not 0 <= begin <= end <= len(body) or \
                (end - begin) != int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize:
            raise ValueError(f"torch_load: damaged safetensors file (tensor {name!r} doesn't "
                             "fit its place)")
        arr = _little(np.frombuffer(body[begin:end], dtype=np_dtype).reshape(shape).copy())
        if code in _SAFE_NP:
            arr = arr.astype(as_dtype(_FROM_SAFE[code]).np)
        names.append(name)
        arrays.append(arr)
    return names, arrays, metadata


def r_file(kind: str, state: list, robj: bytes | None = None, extra: list = ()) -> bytes:
    """The bytes of an R torch file: `state` as (name, tensor), then `extra`
    (name, tensor) entries, then the R object `robj` as `__robj__`. A None tensor
    is undefined: named in the metadata's `undefined`, read back as None."""
    requires_grad: dict = {}
    special: dict = {}
    undefined: list = []
    entries = []
    for name, t in [*state, *extra]:
        if t is None:  # an undefined tensor (an optimiser's unused state): no values
            undefined.append(name)
            entries.append((name, np.zeros(0, dtype=np.uint8)))
            continue
        if t.requires_grad:
            requires_grad[name] = True
        arr = np.asarray(t.data)
        if t.dtype.name in _SPECIAL:
            shape = list(arr.shape)
            special[name] = {"shape": shape[0] if len(shape) == 1 else shape,
                             "dtype": _SPECIAL[t.dtype.name]}
            arr = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        entries.append((name, arr))
    if robj is not None:
        entries.append((R_OBJECT, np.frombuffer(robj, dtype=np.uint8)))
    # (an empty R list is `[]` in jsonlite, a named one an object; length-1 shapes unboxed)
    meta = {"type": kind, "version": R_VERSION, "requires_grad": requires_grad or [],
            "special_dtype": special or []}
    if undefined:
        meta["undefined"] = undefined
    return write_safetensors(entries, {R_KEY: _json(meta)})


def read_r_file(data: bytes) -> tuple:
    """(kind or None for a plain safetensors file, names, tensors, R object bytes or None)."""
    if not is_safetensors(data):
        raise ValueError("torch_load: this is not a file saved by torch_save() (nor a "
                         "safetensors file or a PyTorch .pt/.pth zip file)")
    names, arrays, metadata = read_safetensors(data)
    try:
        meta = json.loads(metadata[R_KEY]) if R_KEY in metadata else None
    except (TypeError, json.JSONDecodeError):
        raise ValueError("torch_load: damaged file (its __r__ metadata isn't JSON)") from None
    if meta is not None and int(meta.get("version", 0)) > R_VERSION:
        raise ValueError(f"torch_load: the file has serialization version {meta['version']}; "
                         f"this version of torch can't load files with serialization version "
                         f"> {R_VERSION}")
    special = (meta or {}).get("special_dtype") or {}
    requires = (meta or {}).get("requires_grad") or {}
    undefined = set((meta or {}).get("undefined") or ())
    robj = None
    tensors = []
    out_names = []
    for name, arr in zip(names, arrays):
        if meta is not None and name == R_OBJECT:
            robj = arr.tobytes()
            continue
        if name in undefined:
            out_names.append(name)
            tensors.append(None)
            continue
        if name in special:
            target = _FROM_SPECIAL.get(special[name].get("dtype"))
            if target is None:
                raise ValueError(f"torch_load: tensor {name!r} is {special[name]['dtype']}, "
                                 "which rtorch-py doesn't have")
            shape = special[name]["shape"]
            shape = [shape] if isinstance(shape, int) else list(shape)
            arr = arr.reshape(-1).view(as_dtype(target).np).reshape(shape)
        t = torch_tensor(arr, requires_grad=bool(requires.get(name, False)))
        out_names.append(name)
        tensors.append(t)
    return (None if meta is None else meta.get("type")), out_names, tensors, robj


def _read_bytes(path: Any) -> bytes:
    if isinstance(path, (bytes, bytearray, memoryview)):
        return bytes(path)
    if hasattr(path, "read"):
        return path.read()
    try:
        with open(os.fspath(path), "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"torch_load: no such file {os.fspath(path)!r}") from None


def _write_bytes(path: Any, data: bytes) -> None:
    if hasattr(path, "write"):
        path.write(data)
        return
    with open(os.fspath(path), "wb") as f:
        f.write(data)


# -- PyTorch's zip files -----------------------------------------------------------

_STORAGE_DTYPES = {
    "FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
    "BFloat16Storage": None, "LongStorage": np.int64, "IntStorage": np.int32,
    "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}


class _StorageType:
    def __init__(self, name: str, dtype: Any) -> None:
        self.name = name
        self.dtype = np.dtype(dtype)


def strided_copy(storage: np.ndarray, offset: int, size: tuple, stride: tuple) -> np.ndarray:
    """The elements a pickled tensor views in its storage: a copy of its own, C order."""
    itemsize = storage.dtype.itemsize
    if size:
        return np.array(np.lib.stride_tricks.as_strided(
            storage[offset:], shape=tuple(size), strides=tuple(s * itemsize for s in stride)))
    return np.array(storage[offset:offset + 1].reshape(()))


def _rebuild_tensor(storage: np.ndarray, offset: int, size: tuple, stride: tuple,
                    requires_grad: bool = False, hooks: Any = None, metadata: Any = None) -> Tensor:
    arr = strided_copy(storage, offset, size, stride)
    if arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    elif arr.dtype in (np.int8, np.int16, np.uint8):
        arr = arr.astype(np.int64)
    return torch_tensor(arr, requires_grad=bool(requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool, hooks: Any = None,
                       state: Any = None) -> Tensor:
    data.requires_grad = bool(requires_grad) and data.is_floating_point()
    return data


class RestrictedUnpickler(pickle.Unpickler):
    """Builds tensors (from the zip file's storages under `storage_dir`) and plain
    containers only; any other class is refused, naming it, before anything of the
    file runs. A subclass (TorchScript archives: rtorch_py/jit/archive.py) extends
    ALLOWED and STORAGES, says what its files may hold (`reader`, `refusal`) and
    gives classes of its own for `__torch__` objects (`script_class`)."""

    ALLOWED: dict[tuple[str, str], Any] = {
        ("collections", "OrderedDict"): OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    }
    STORAGES: dict[str, Any] = _STORAGE_DTYPES  # storage class -> NumPy dtype (None: refused)
    reader = "torch_load"
    refusal = ("only tensors and plain containers (state dicts) can be read from PyTorch files, "
               "since loading anything else would run code from the file. Save a state_dict() "
               "in Python (torch.save(model.state_dict(), path)) and load that")

    def __init__(self, data: bytes, z: zipfile.ZipFile, storage_dir: str) -> None:
        super().__init__(io.BytesIO(data))
        self.z, self.storage_dir = z, storage_dir
        self.storages: dict[str, np.ndarray] = {}

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self.ALLOWED:
            return self.ALLOWED[(module, name)]
        if module == "torch" and self.STORAGES.get(name) is not None:
            return _StorageType(name, self.STORAGES[name])
        if module == "__torch__" or module.startswith("__torch__."):
            cls = self.script_class(f"{module}.{name}")
            if cls is not None:
                return cls
        raise pickle.UnpicklingError(f"{self.reader} refuses to load '{module}.{name}': "
                                     f"{self.refusal}")

    def script_class(self, qualified: str) -> type | None:
        """The class to build a TorchScript (`__torch__`) object with; None: refused."""
        return None

    def persistent_load(self, pid: Any) -> np.ndarray:
        if not (isinstance(pid, tuple) and len(pid) >= 3 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType)):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r} in the file "
                                         f"{self.reader} reads")
        key = str(pid[2])
        if key not in self.storages:
            raw = self.z.read(f"{self.storage_dir}{key}")
            native = pid[1].dtype
            self.storages[key] = np.frombuffer(raw, dtype=native.newbyteorder("<")) \
                .astype(native)  # (a copy in the machine's order: NumPy's own dtype)
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
    return RestrictedUnpickler(z.read(pkl[0]), z, prefix + "data/").load()


class _ScriptModule:
    """A TorchScript module's fields, as libtorch pickles them (no code is kept or run)."""

    def __setstate__(self, state: Any) -> None:
        self.fields = state


class _ScriptUnpickler(RestrictedUnpickler):
    def script_class(self, qualified: str) -> type:
        return _ScriptModule


def load_libtorch_tensor(data: bytes) -> Tensor:
    """The tensor of a file libtorch's C++ `torch::save(tensor)` wrote (what R torch's
    older RDS files hold): an archive of a module whose attribute "0" is the tensor."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        pkl = [n for n in z.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if not pkl:
            raise ValueError("torch_load: damaged file (no tensor in libtorch's archive)")
        prefix = pkl[0][: -len("data.pkl")]
        obj = _ScriptUnpickler(z.read(pkl[0]), z, prefix + "data/").load()
    fields = getattr(obj, "fields", None)
    tensor = fields.get("0") if isinstance(fields, dict) else obj
    if not isinstance(tensor, Tensor):
        raise ValueError("torch_load: damaged file (no tensor in libtorch's archive)")
    return tensor


def load_state_dict(path: Any) -> dict:
    """A state dict saved by PyTorch (torch.save(model.state_dict(), path)) or by torch_save()."""
    out = torch_load(path)
    if not isinstance(out, dict):
        raise ValueError(f"load_state_dict: the file holds a {type(out).__name__}, not a "
                         "state dict")
    return out
