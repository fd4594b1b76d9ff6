"""Every op, declared once in the registry, grouped in families.

Bottom up:
- `registry`: the declarations (`OpSpec`, `REGISTRY`)
- `names`: name inference, the rules an op's declaration names
- `dispatch`: `@op(...)`, which declares an op and makes its public function
  (dims by name, name inference, other layouts' implementations), with
  `complex_half` (complex32 operands: the ops libtorch runs on them, rounded)
- `recording`: how an op records its node (`formula`, `record`): the fast paths
- `operands` (operands to arrays, PyTorch's result dtypes, the one decision on a
  number operand), `views` (the view and in-place machinery), `nn_kernels` (the array
  work of convolution, pooling and the LSTM layer)
- families: `pointwise` (with `special`, and `activation`: elu, threshold, rrelu...),
  `reduction`, `sorting`, `shape`, `indexing`, `linalg`, `distance` (cosine_similarity,
  pdist, renorm...), `fft`, `conversion`, `creation`, `nn_primitives`, `pooling` (unpooling,
  fractional max pooling), `ctc` (the CTC loss), `upsample`, `grid_sample`, `sparse`
  (the sparse layout: its tensors and their ops), `memory` (views and storage
  internals, libtorch's private `_*` methods)
- `out_forms`: the `torch_<name>_out(out, ...)` forms, made from the registry
- `samples`: the sample inputs the generated tests run every op on

The API here is 0-based (Python/PyTorch); the R layer translates dims from
each op's declaration.
"""
from __future__ import annotations

# (importing a family declares its ops)
from . import (activation, conversion, creation, ctc, distance, fft,  # noqa: F401
               grid_sample, indexing, linalg, memory, nn_primitives, pointwise, pooling,
               reduction, shape, sorting, sparse, upsample)
from .conversion import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .pointwise import *  # noqa: F401,F403
from .recording import OUTPUT, formula, needs_grad, record, sum_to  # noqa: F401
from .reduction import *  # noqa: F401,F403
from .registry import (REGISTRY, OpSpec, forward_rule_kind, forward_rules,  # noqa: F401
                       methods, python_functions)
from .dispatch import op  # noqa: F401
from .out_forms import out_functions  # noqa: F401
from .shape import *  # noqa: F401,F403
