"""TorchScript both ways, and ONNX: R torch's `jit_*` functions.

- `tracer`, `graph`: tracing a function or a module into a graph of our calls
  (a mode of `rtorch_py.modes`), replayed on new inputs, listed as libtorch
  lists graphs
- `script`: `ScriptFunction`, `ScriptModule`, `jit_trace()`, `jit_trace_module()`
- `aten`: our calls as libtorch's operators and back (one table for writing,
  listing and reading)
- `codegen`, `archive`, `files`: TorchScript code and archives (`jit_save`,
  `jit_load`, `jit_serialize`, `jit_unserialize`); `mobile`: the lite interpreter's
  archive (`jit_save_for_mobile`), the traced code compiled to its bytecode
- `interpreter`: TorchScript code read from a file or compiled (`jit_compile`), run
  on our ops (parsed with `ast`, checked before it runs, never eval'd); `operators`:
  `jit_ops`
- `onnx`: `jit_export_onnx()`, ONNX models of traced graphs
"""
from __future__ import annotations

from .files import (CompilationUnit, jit_compile, jit_load, jit_save, jit_serialize,
                    jit_unserialize)
from .interpreter import TorchScriptError
from .mobile import jit_save_for_mobile
from .onnx import jit_export_onnx
from .operators import jit_ops
from .script import (GraphListing, JitTuple, ScriptFunction, ScriptModule, jit_scalar,
                     jit_trace, jit_trace_module, jit_tuple)
from .tracer import TracerWarning

__all__ = ["jit_trace", "jit_trace_module", "jit_save", "jit_save_for_mobile", "jit_load", "jit_serialize",
           "jit_unserialize", "jit_compile", "jit_scalar", "jit_tuple", "jit_ops",
           "jit_export_onnx", "ScriptFunction", "ScriptModule", "TracerWarning", "GraphListing",
           "CompilationUnit", "TorchScriptError", "JitTuple"]
