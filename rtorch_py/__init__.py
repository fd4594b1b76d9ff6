"""rtorch_py: an autograd engine on NumPy that speaks R torch's API.

Python dims and indices are 0-based, like NumPy and PyTorch; the R API
(`rtorch_py.r`) is 1-based, like R torch.
"""
from __future__ import annotations

import warnings

from . import ops
from .autograd import (autograd_backward, autograd_grad, autograd_is_grad_enabled,
                       autograd_set_grad_mode, enable_grad, is_grad_enabled, no_grad,
                       set_grad_enabled, with_detect_anomaly, with_enable_grad, with_no_grad)
from .creation import *  # noqa: F401,F403  (torch_tensor, torch_zeros, dtype constructors...)
from .creation import as_array, is_torch_tensor, torch_manual_seed, torch_tensor
from .engine import AccumulateGrad, Node, RemovableHandle
from .function import AutogradContext, Function, FunctionCtx, NamedList, autograd_function
from .gradcheck import GradcheckError, autograd_gradcheck
from .tensor import Tensor, dtype

# Like torch, ops give inf/nan silently: hide NumPy's floating-point warnings
# raised inside this package (and only those).
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"rtorch_py(\.|$)")

# torch_<op>(x, ...) for every op R torch exposes as a function.
_FUNCTIONS = [
    "add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "abs", "sign", "sin",
    "cos", "tanh", "sigmoid", "relu", "clamp", "square", "maximum", "minimum",
    "gt", "ge", "lt", "le", "eq", "ne", "logical_and", "logical_or", "logical_not", "isnan",
    "equal", "allclose", "mm", "matmul", "dot", "t", "transpose", "permute", "reshape",
    "unsqueeze", "squeeze", "flatten", "narrow", "select", "sum", "mean", "prod", "max",
    "min", "argmax", "argmin", "gather", "softmax", "log_softmax", "cat", "stack", "chunk",
    "split", "unbind", "where", "masked_fill", "clone", "remainder", "floor_divide",
]
for _name in _FUNCTIONS:
    globals()["torch_" + _name] = getattr(ops, _name)

__all__ = [n for n in globals() if n.startswith(("torch_", "autograd_", "with_"))] + [
    "Tensor", "dtype", "Function", "FunctionCtx", "AutogradContext", "NamedList",
    "as_array", "is_torch_tensor", "no_grad", "enable_grad", "set_grad_enabled",
    "is_grad_enabled", "Node", "AccumulateGrad", "RemovableHandle", "GradcheckError",
]
