"""jit_save(), jit_serialize(), jit_load(), jit_unserialize(): script modules in
TorchScript archives, which PyTorch's `torch.jit.load` reads and writes."""
from __future__ import annotations

import io
import os
from typing import Any

from ..tensor import Tensor
from . import archive, codegen
from .archive import ModuleObject
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


def jit_save(obj: Any, path: Any) -> Any:
    """Write a script function or module as a TorchScript archive (`torch.jit.load`
    in PyTorch reads it)."""
    sm = _as_module(obj)
    constants = codegen.Constants()
    code = codegen.sources(sm, constants)
    kept = sm.__dict__.get("_archive_constants")
    tensors = list(kept) if kept is not None else constants.tensors
    name = "archive"
    if isinstance(path, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(path)))[0] or "archive"
        path = os.path.expanduser(os.fspath(path))
    archive.write(path, _module_object(sm), code, tensors, _archive_name(name))
    return obj


def _archive_name(name: str) -> str:
    clean = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
    return clean or "archive"


def jit_serialize(obj: Any) -> bytes:
    """The archive jit_save() would write, as bytes."""
    if not isinstance(obj, (ScriptModule, ScriptFunction)):
        raise ValueError("Only `script_module` can be serialized with `jit_serialize`.")
    buf = io.BytesIO()
    jit_save(obj, buf)
    return buf.getvalue()


__all__ = ["jit_save", "jit_serialize"]
