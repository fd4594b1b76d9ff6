"""TorchScript both ways, and ONNX: R torch's `jit_*` functions.

- `tracer`, `graph`: tracing a function or a module into a graph of our calls
  (a mode of `rtorch_py.tensor.MODES`), replayed on new inputs, listed as libtorch
  lists graphs
- `script`: `ScriptFunction`, `ScriptModule`, `jit_trace()`, `jit_trace_module()`
- `aten`: our calls as libtorch's operators and back (one table for writing,
  listing and reading)
"""
from __future__ import annotations

from .script import GraphListing, ScriptFunction, ScriptModule, jit_trace, jit_trace_module
from .tracer import TracerWarning

__all__ = ["jit_trace", "jit_trace_module", "ScriptFunction", "ScriptModule", "TracerWarning",
           "GraphListing"]
