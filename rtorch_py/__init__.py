"""rtorch_py: an autograd engine on NumPy that speaks R torch's API.

Python dims and indices are 0-based, like NumPy and PyTorch; the R API
(`rtorch_py.r`) is 1-based, like R torch.

This is the package's public face: it assembles the floors below it (the
engine, the tensor, the ops, the user APIs, nn/optim/data) into one namespace,
and gives `Tensor` its methods in one step.
"""
from __future__ import annotations

import warnings
from typing import Any

from . import autograd, constructors, engine, named, ops, quantized, tensor
from .autograd import (autograd_backward, autograd_grad, autograd_is_grad_enabled,
                       autograd_set_grad_mode, enable_grad, is_grad_enabled, no_grad,
                       set_grad_enabled, with_detect_anomaly, with_enable_grad, with_no_grad)
from .containers import NamedList
from .constructors import *  # noqa: F401,F403  (torch_tensor, torch_zeros, dtype constructors...)
from .constructors import as_array, is_torch_tensor, torch_manual_seed, torch_tensor
from .engine import AccumulateGrad, Node, RemovableHandle
from .function import AutogradContext, Function, FunctionCtx, autograd_function
from .gradcheck import GradcheckError, autograd_gradcheck
from . import forward_ad
from .forward_ad import dual_level, make_dual, unpack_dual
from .autograd_functional import (autograd_hessian, autograd_hvp, autograd_jacobian, autograd_jvp,
                         autograd_vhp, autograd_vjp)
from .gradgradcheck import autograd_gradgradcheck
from .graph import AutogradGraph, autograd_graph
from . import func
from .amp import set_autocast, unset_autocast, with_autocast
from . import nn
from .nn import *  # noqa: F401,F403  (nn_module, nn_linear, nnf_relu, nn_init_*...)
from .optim import *  # noqa: F401,F403  (optim_adam, lr_step, ...)
from .data import *  # noqa: F401,F403  (dataset, dataloader, ...)
from . import distributions
from .distributions import *  # noqa: F401,F403  (distr_normal, ...)
from .serialization import load_state_dict, torch_load, torch_save, torch_serialize
from .tensor import Tensor, dtype
from .quantized import (torch_dequantize, torch_quantize_per_channel,  # noqa: F401
                        torch_quantize_per_tensor)
from .sparse import torch_sparse_coo_tensor, torch_sparse_sampled_addmm  # noqa: F401
from .contrib import contrib_sort_vertices
from .runtime import *  # noqa: F401,F403  (thread counts, allocator settings)
from . import jit
from .jit import *  # noqa: F401,F403  (jit_trace, jit_save, jit_load, ...)

# Like torch, ops give inf/nan silently: hide NumPy's floating-point warnings
# raised inside this package (and only those).
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"rtorch_py(\.|$)")

# The one place the floors meet: the engine makes tensors with this factory...
engine.connect(tensor.wrap)

# ... and Tensor gets its methods: every op declared as a method and every
# Python operator (ops.registry), the named-tensor API, the quantized one, and
# backward().
TENSOR_METHODS = {
    **ops.methods(),
    "rename": named.rename, "rename_": named.rename_, "refine_names": named.refine_names,
    "align_to": named.align_to, "align_as": named.align_as,
    "int_repr": quantized.int_repr, "dequantize": quantized.dequantize,
    "q_scale": quantized.q_scale, "q_zero_point": quantized.q_zero_point,
    "q_per_channel_scales": quantized.q_per_channel_scales,
    "q_per_channel_zero_points": quantized.q_per_channel_zero_points,
    "q_per_channel_axis": quantized.q_per_channel_axis, "qscheme": quantized.qscheme,
    "is_quantized": property(quantized.is_quantized),
    "real": property(ops.creation.torch_real), "imag": property(ops.creation.torch_imag),
    "bernoulli": constructors.torch_bernoulli, "multinomial": constructors.torch_multinomial,
    "where": ops.indexing.where_method,
    "backward": autograd.backward,
}
for _name, _method in TENSOR_METHODS.items():
    setattr(Tensor, _name, _method)

# torch_<op>(...) for every op declared as a function (rtorch_py.ops.registry),
# and torch_<op>_out(out, ...) for those with one tensor result (ops.out_forms).
globals().update(ops.python_functions())
globals().update(ops.out_functions())



def call_torch_function(name: str, *args: Any, quiet: bool = False, **kwargs: Any) -> Any:
    """Any torch_* function of the package by name (R torch's way to reach its
    unexported ones, e.g. "torch_tanh_backward"), with a warning unless quiet."""
    if not quiet:
        warnings.warn("call_torch_function() reaches functions that expect the engine's own "
                      "conventions (0-based positions, C++-like arguments) and may change "
                      "without notice; set quiet = True to silence this warning.", stacklevel=2)
    if not name.startswith("torch_"):
        raise ValueError("Only functions prefixed with 'torch_' are available from this "
                         "function.")
    fn = globals().get(name)
    if not callable(fn):
        raise ValueError(f"No function named {name} can be found. Please check your spelling "
                         "and that the desired function exists.")
    return fn(*args, **kwargs)


__all__ = [n for n in globals() if n.startswith(("torch_", "autograd_", "with_"))] + \
    nn.__all__ + optim.__all__ + data.__all__ + distributions.__all__ + jit.__all__ + [
    "load_state_dict", "Tensor", "dtype", "Function", "FunctionCtx", "AutogradContext", "NamedList",
    "as_array", "is_torch_tensor", "no_grad", "enable_grad", "set_grad_enabled",
    "is_grad_enabled", "Node", "AccumulateGrad", "RemovableHandle", "GradcheckError",
    "call_torch_function", "set_cpu_allocator_config", "cpu_cache_flush",
    "set_autocast", "unset_autocast", "forward_ad", "dual_level", "make_dual", "unpack_dual",
    "AutogradGraph", "contrib_sort_vertices",
]
