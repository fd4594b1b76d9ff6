"""TorchScript's archive: the zip file `torch.jit.save` writes and `torch.jit.load` reads.

    <name>/data.pkl            the module tree: `__torch__.<class>` objects, their
                               parameters, buffers, children and attributes (pickle)
    <name>/data/<key>          each tensor's storage, raw little-endian bytes
    <name>/code/__torch__...   the classes' TorchScript code
    <name>/constants.pkl       the code's tensor constants (`CONSTANTS.c0`, ...),
                               their storages in <name>/constants/<key>
    <name>/version, byteorder  "3", "little"

Writing uses a small pickler of its own (protocol 2, the opcodes PyTorch's
pickles use), since `__torch__` classes exist nowhere in Python. Reading uses
torch_load's restricted unpickler (rtorch_py/serialization.py), extended with
TorchScript's classes: it builds only tensors (from their storages), plain
containers and placeholder objects for `__torch__` classes; any other class in a
pickle is refused, naming it, before anything of the file runs.
"""
from __future__ import annotations

import io
import os
import struct
import zipfile
from typing import Any

import numpy as np

from ..serialization import RestrictedUnpickler, strided_copy
from ..tensor import Tensor, as_dtype, wrap

_STORAGES = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
             "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
             "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
             "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
             "complex128": "ComplexDoubleStorage"}
_DTYPES = {v: k for k, v in _STORAGES.items()}


class ScriptObject:
    """An object of a `__torch__` class read from data.pkl: its class's qualified
    name and its attributes."""

    __slots__ = ("qualified_name", "state")

    def __init__(self, qualified_name: str) -> None:
        self.qualified_name = qualified_name
        self.state: dict = {}

    def __setstate__(self, state: Any) -> None:
        self.state = dict(state) if isinstance(state, dict) else {"__state__": state}

    def __repr__(self) -> str:
        return f"<{self.qualified_name}>"


class ModuleObject(ScriptObject):
    """A module to write: its class's qualified name, and its attributes in order
    (tensors, children, training, ...)."""

    __slots__ = ()


# --------------------------------------------------------------------------
# Writing


class _Pickler:
    """Protocol 2, with persistent ids for storages, as PyTorch's pickles are."""

    def __init__(self, storages: "_Storages") -> None:
        self.out = io.BytesIO()
        self.storages = storages

    def dump(self, x: Any) -> bytes:
        self.out.write(b"\x80\x02")
        self.save(x)
        self.out.write(b".")
        return self.out.getvalue()

    def op(self, b: bytes) -> None:
        self.out.write(b)

    def global_(self, module: str, name: str) -> None:
        self.op(b"c" + module.encode() + b"\n" + name.encode() + b"\n")

    def save(self, x: Any) -> None:
        if x is None:
            self.op(b"N")
        elif x is True:
            self.op(b"\x88")
        elif x is False:
            self.op(b"\x89")
        elif isinstance(x, int):
            if 0 <= x < 256:
                self.op(b"K" + bytes([x]))
            elif -2 ** 31 <= x < 2 ** 31:
                self.op(b"J" + struct.pack("<i", x))
            else:
                data = x.to_bytes((x.bit_length() + 8) // 8, "little", signed=True)
                self.op(b"\x8a" + bytes([len(data)]) + data)
        elif isinstance(x, float):
            self.op(b"G" + struct.pack(">d", x))
        elif isinstance(x, str):
            data = x.encode("utf-8")
            self.op(b"X" + struct.pack("<I", len(data)) + data)
        elif isinstance(x, Tensor):
            self.tensor(x)
        elif isinstance(x, tuple):
            self.op(b"(")
            for v in x:
                self.save(v)
            self.op(b"t")
        elif isinstance(x, list):
            self.op(b"](")
            for v in x:
                self.save(v)
            self.op(b"e")
        elif isinstance(x, ModuleObject):
            module, _, name = x.qualified_name.rpartition(".")
            self.global_(module, name)
            self.op(b")\x81")  # cls.__new__(cls)
            self.save(x.state)
            self.op(b"b")  # BUILD: its attributes
        elif isinstance(x, dict):
            self.op(b"}(")
            for k, v in x.items():
                self.save(k)
                self.save(v)
            self.op(b"u")
        else:
            raise TypeError(f"jit_save can't write a {type(x).__name__} into a TorchScript "
                            "archive")

    def tensor(self, t: Tensor) -> None:
        key, storage, numel = self.storages.key(t)
        self.global_("torch._utils", "_rebuild_tensor_v2")
        self.op(b"((")  # (the arguments' tuple, then the persistent id's)
        for v in ("storage",):
            self.save(v)
        self.global_("torch", storage)
        for v in (key, "cpu", numel):
            self.save(v)
        self.op(b"tQ")  # BINPERSID: the storage
        for v in (0, tuple(t.shape), _contiguous_strides(t.shape), bool(t.requires_grad)):
            self.save(v)
        self.global_("collections", "OrderedDict")
        self.op(b")Rt")  # OrderedDict(), the arguments' tuple
        self.op(b"R")


def _contiguous_strides(shape: tuple) -> tuple:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(strides))


class _Storages:
    """The storages an archive writes under one directory (data/ or constants/)."""

    def __init__(self) -> None:
        self.keys: dict[int, str] = {}
        self.blobs: list[tuple[str, bytes]] = []
        self.keep: list = []

    def key(self, t: Tensor) -> tuple[str, str, int]:
        name = _STORAGES.get(t.dtype.name)
        if name is None:
            raise TypeError(f"jit_save can't write a {t.dtype} tensor")
        k = self.keys.get(id(t))
        if k is None:
            k = self.keys[id(t)] = str(len(self.blobs))
            arr = np.ascontiguousarray(t.data)
            if arr.dtype.byteorder == ">":
                arr = arr.astype(arr.dtype.newbyteorder("<"))
            self.blobs.append((k, arr.tobytes()))
            self.keep.append(t)
        return k, name, int(t.numel())


def write(path_or_buffer: Any, root: ModuleObject, code: dict[str, str],
          constants: list[Tensor], name: str = "archive", bytecode: tuple | None = None
          ) -> None:
    """Write an archive: the module tree `root`, the code files by path under
    code/, the tensor constants; and the lite interpreter's `bytecode` if given
    (its tensors stored with the constants', as PyTorch's mobile archives do)."""
    data, consts = _Storages(), _Storages()
    data_pkl = _Pickler(data).dump(root)
    constants_pkl = _Pickler(consts).dump(tuple(constants))
    bytecode_pkl = None if bytecode is None else _Pickler(consts).dump(bytecode)
    with zipfile.ZipFile(path_or_buffer, "w") as z:
        for key, blob in data.blobs:
            _stored(z, f"{name}/data/{key}", blob)
        _stored(z, f"{name}/data.pkl", data_pkl)
        for path, text in code.items():
            z.writestr(f"{name}/code/{path}", text.encode("utf-8"), zipfile.ZIP_DEFLATED)
        for key, blob in consts.blobs:
            _stored(z, f"{name}/constants/{key}", blob)
        _stored(z, f"{name}/constants.pkl", constants_pkl)
        if bytecode_pkl is not None:
            _stored(z, f"{name}/bytecode.pkl", bytecode_pkl)
        _stored(z, f"{name}/version", b"3\n")
        _stored(z, f"{name}/byteorder", b"little")


def _stored(z: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    z.writestr(info, data)


# --------------------------------------------------------------------------
# Reading


def _rebuild_tensor(storage: np.ndarray, offset: int, size: tuple, stride: tuple,
                    requires_grad: bool = False, hooks: Any = None,
                    metadata: Any = None) -> Tensor:
    t = wrap(strided_copy(storage, offset, size, stride))  # (the storage's dtype, kept)
    if requires_grad and t.is_floating_point():
        t.requires_grad_(True)
    return t


def _restore_type_tag(value: Any, type_str: str) -> Any:
    return value


class _Unpickler(RestrictedUnpickler):
    """torch_load's restricted unpickler, for TorchScript's pickles: tensors of every
    dtype the archive writer writes, TorchScript's list builders and type tags, and
    `__torch__` objects (placeholders holding their class's qualified name)."""

    ALLOWED = {
        **RestrictedUnpickler.ALLOWED,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
        ("torch.jit._pickle", "restore_type_tag"): _restore_type_tag,
        ("torch.jit._pickle", "build_intlist"): list,
        ("torch.jit._pickle", "build_doublelist"): list,
        ("torch.jit._pickle", "build_boollist"): list,
        ("torch.jit._pickle", "build_tensorlist"): list,
    }
    # (made on first use: naming bfloat16 arms the op recorder's operand watch,
    # a cost on every op of the process, which importing must not pay)
    STORAGES: dict[str, Any] = {}
    reader = "jit_load"
    refusal = ("a TorchScript archive's pickles may hold only tensors, plain containers and "
               "TorchScript objects; building anything else would run code from the file")

    def __init__(self, data: bytes, z: zipfile.ZipFile, storage_dir: str) -> None:
        super().__init__(data, z, storage_dir)
        if not _Unpickler.STORAGES:
            _Unpickler.STORAGES = {name: as_dtype(d).np for name, d in _DTYPES.items()}
        self.classes: dict[str, type] = {}

    def script_class(self, qualified: str) -> type:
        cls = self.classes.get(qualified)
        if cls is None:  # a placeholder class per TorchScript class: no code of the file
            cls = self.classes[qualified] = type(qualified.rpartition(".")[2], (ScriptObject,), {
                "__slots__": (), "__init__": _no_init, "__new__": _placeholder_new(qualified)})
        return cls


def _no_init(self: Any, *args: Any) -> None:
    pass


def _placeholder_new(qualified: str) -> Any:
    def new(cls: type, *args: Any) -> Any:
        obj = ScriptObject.__new__(cls)
        ScriptObject.__init__(obj, qualified)
        return obj
    return new


class Archive:
    """A TorchScript archive read: the module tree, code files, constants."""

    def __init__(self, source: Any) -> None:
        if isinstance(source, (bytes, bytearray)):
            source = io.BytesIO(bytes(source))
        elif isinstance(source, (str, os.PathLike)) and not os.path.exists(source):
            raise FileNotFoundError(f"jit_load: no file {os.fspath(source)!r}")
        try:
            z = zipfile.ZipFile(source)
        except zipfile.BadZipFile:
            raise ValueError("jit_load: not a TorchScript archive (a zip file written by "
                             "jit_save() or PyTorch's torch.jit.save())") from None
        with z:
            names = z.namelist()
            pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
            if not pkl:
                raise ValueError("jit_load: not a TorchScript archive (it has no data.pkl)")
            prefix = pkl[0][: -len("data.pkl")]
            if not any(n.startswith(prefix + "code/") for n in names):
                raise ValueError("jit_load: this file holds no TorchScript code (a state dict "
                                 "saved with torch.save()? read it with torch_load())")
            if prefix + "byteorder" in names and z.read(prefix + "byteorder").strip() != b"little":
                raise ValueError("jit_load: big-endian archives are not supported")
            self.code = {n[len(prefix) + 5:]: z.read(n).decode("utf-8") for n in names
                         if n.startswith(prefix + "code/") and n.endswith(".py")}
            self.root = _Unpickler(z.read(pkl[0]), z, prefix + "data/").load()
            consts = prefix + "constants.pkl"
            self.constants = tuple(_Unpickler(z.read(consts), z, prefix + "constants/").load()) \
                if consts in names else ()
