"""Every op, declared once in the registry, grouped in families.

- `recording`: how an op records its node (`formula`, `record`), the fast paths
- `registry`: `@op(...)`, the declarations everything else is generated from
- `operands`: operands to arrays, PyTorch's result dtypes
- `views`: the view and in-place machinery (CopySlices, view histories)
- families: `pointwise`, `reduction`, `sorting`, `shape`, `indexing`, `linalg`, `fft`,
  `conversion`, `creation`, `nn_functional`, `upsample`
- `out_forms`: the `torch_<name>_out(out, ...)` forms, made from the registry
- `samples`: the sample inputs the generated tests run every op on

The API here is 0-based (Python/PyTorch); the R layer translates dims from
each op's declaration.
"""
from __future__ import annotations

from ..tensor import Tensor
# (importing a family declares its ops)
from . import (conversion, creation, fft, indexing, linalg, nn_functional,  # noqa: F401
               pointwise, reduction, shape, sorting, sparse, upsample)
from .conversion import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .pointwise import *  # noqa: F401,F403
from .recording import OUTPUT, formula, needs_grad, record, renamed, sum_to  # noqa: F401
from .reduction import *  # noqa: F401,F403
from .registry import REGISTRY, OpSpec, install_methods, op, python_functions  # noqa: F401
from .out_forms import out_functions  # noqa: F401
from .shape import *  # noqa: F401,F403
from .. import named

install_methods(Tensor)
named.install(Tensor)  # names, rename(), refine_names(), align_to()
