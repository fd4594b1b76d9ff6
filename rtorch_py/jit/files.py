"""jit_save(), jit_serialize(), jit_load(), jit_unserialize(): script modules in
TorchScript archives, which PyTorch's `torch.jit.load` reads and writes."""
from __future__ import annotations

import ast
import io
import os
import textwrap
from dataclasses import dataclass
from typing import Any

from . import archive, codegen
from .archive import ModuleObject, ScriptObject
from .interpreter import Function, Program, TorchScriptError
from ..tensor import Tensor
from .script import ScriptFunction, ScriptModule


def _module_object(sm: ScriptModule) -> ModuleObject:
    """The object data.pkl holds for a script module."""
    obj = ModuleObject("__torch__." + sm._type_name)
    kept = sm.__dict__.get("_attributes")
    state: dict = dict(kept) if kept is not None else {}
    state["training"] = sm.training
    for table in (sm._parameters, sm._buffers):
        for name, t in table.items():
            if t is not None:
                state[name] = t
    for name, child in sm._modules.items():
        if child is not None:
            state[name] = _module_object(child)
    obj.state = state
    return obj


def _as_module(obj: Any) -> ScriptModule:
    if isinstance(obj, ScriptModule):
        return obj
    if isinstance(obj, ScriptFunction):
        return codegen.function_module(obj)
    raise ValueError("Only `script_function` or `script_module` can be saved with `jit_save`.")


@dataclass
class ArchiveParts:
    """What an archive holds: the module tree (data.pkl), the code files by path
    under code/, the code's tensor constants (constants.pkl)."""
    root: ModuleObject
    code: dict[str, str]
    constants: list[Tensor]


def archive_parts(obj: Any) -> ArchiveParts:
    """The archive of a script function (as PyTorch saves one: the forward of a
    module) or a script module."""
    sm = _as_module(obj)
    constants = codegen.Constants()
    code = codegen.sources(sm, constants)
    kept = sm.__dict__.get("_archive_constants")
    tensors = list(kept) if kept is not None else constants.tensors
    return ArchiveParts(_module_object(sm), code, tensors)


def archive_target(path: Any) -> tuple[Any, str]:
    """Where an archive goes (a path, or a file object as given) and its name (the
    folder its files are under: the file's name, else "archive")."""
    name = "archive"
    if isinstance(path, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(path)))[0] or "archive"
        path = os.path.expanduser(os.fspath(path))
    clean = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
    return path, clean or "archive"


def jit_save(obj: Any, path: Any) -> Any:
    """Write a script function or module as a TorchScript archive (`torch.jit.load`
    in PyTorch reads it)."""
    parts = archive_parts(obj)
    target, name = archive_target(path)
    archive.write(target, parts.root, parts.code, parts.constants, name)
    return obj


def jit_serialize(obj: Any) -> bytes:
    """The archive jit_save() would write, as bytes."""
    if not isinstance(obj, (ScriptModule, ScriptFunction)):
        raise ValueError("Only `script_module` can be serialized with `jit_serialize`.")
    buf = io.BytesIO()
    jit_save(obj, buf)
    return buf.getvalue()


# --------------------------------------------------------------------------
# Reading


def _script_module(obj: ScriptObject, program: Program, archive_: archive.Archive
                   ) -> ScriptModule:
    """The script module of a module object read from data.pkl."""
    info = program.classes.get(obj.qualified_name)
    if info is None or not info.is_module:
        raise TorchScriptError(f"jit_load: the archive's root is a {obj.qualified_name}, "
                               "not a module")
    sm = ScriptModule(obj.qualified_name.removeprefix("__torch__."))
    d = sm.__dict__
    attributes: dict = {}
    for name, value in obj.state.items():
        if name == "training":
            d["training"] = bool(value)
        elif name in info.parameters:
            if value is not None:
                sm.register_parameter(name, value)
        elif name in info.buffers:
            if value is not None:
                sm.register_buffer(name, value)
        elif isinstance(value, ScriptObject) and value.qualified_name in program.classes \
                and program.classes[value.qualified_name].is_module:
            d["_modules"][name] = _script_module(value, program, archive_)
        else:
            attributes[name] = value
    d["_attributes"] = attributes
    d["_constants"] = dict(info.constants)
    d["_code_files"] = archive_.code
    d["_archive_constants"] = archive_.constants
    for name, fn in info.methods.items():
        sm.add_method(name, ScriptFunction(code=fn, name=name,
                                           source=ast.unparse(fn.node) + "\n"))
    return sm


def _load(source: Any) -> ScriptModule:
    arc = archive.Archive(source)
    program = Program(arc.code, arc.constants)
    program.check()
    if not isinstance(arc.root, ScriptObject):
        raise TorchScriptError("jit_load: the archive's data.pkl holds no module")
    return _script_module(arc.root, program, arc)


def jit_load(path: Any) -> ScriptModule:
    """A script module from a TorchScript archive (written by jit_save() or by
    PyTorch's `torch.jit.save()`, traced or scripted): its code runs on our ops."""
    if isinstance(path, (str, os.PathLike)):
        path = os.path.expanduser(os.fspath(path))
    return _load(path)


def jit_unserialize(obj: Any) -> ScriptModule:
    """The script module of an archive given as bytes (jit_serialize())."""
    if not isinstance(obj, (bytes, bytearray)):
        raise ValueError("`obj` to be deserialized must be a raw vector.")
    return _load(bytes(obj))


class CompilationUnit:
    """The functions of compiled TorchScript source, by name (`cu.fn(x)`)."""

    def __init__(self, source: str) -> None:
        program = Program({"__torch__.py": textwrap.dedent(source)})
        program.check()
        if program.classes:
            raise TorchScriptError("jit_compile: classes in compiled source are not supported; "
                                   "compile functions")
        self._functions = {fn.name: _free_function(fn) for fn in program.functions.values()}

    def __getattr__(self, name: str) -> ScriptFunction:
        functions = self.__dict__.get("_functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"the compilation unit has no function '{name}' (it has: "
                             f"{', '.join(functions) or 'none'})")

    @property
    def names(self) -> list[str]:
        return list(self._functions)

    def __repr__(self) -> str:
        return "<torch_compilation_unit>"


def _free_function(fn: Function) -> ScriptFunction:
    return ScriptFunction(code=lambda owner, *args, **kwargs: fn(*args, **kwargs), name=fn.name,
                          source=ast.unparse(fn.node) + "\n")


def jit_compile(source: str) -> CompilationUnit:
    """Compile TorchScript source (functions): run them as `cu.<name>(...)`."""
    if not isinstance(source, str):
        raise TypeError("jit_compile: `source` must be TorchScript source code (a string)")
    return CompilationUnit(source)


__all__ = ["jit_save", "archive_parts", "archive_target", "ArchiveParts", "jit_serialize", "jit_load", "jit_unserialize", "jit_compile",
           "CompilationUnit"]
