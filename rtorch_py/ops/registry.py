"""The op registry: every op's declaration (`OpSpec`), made once by `@op(...)`
on its function (ops/dispatch.py).

The declaration says everything the rest of the package needs to know:
whether the op is a function (`torch_add`), a Tensor method (`x.add()`,
`x$add()`), which Python operators it implements (R's own facts, its operators
and group generics: in `r`, read by rtorch_py.r alone), which
arguments are dimensions or positions (0-based in Python, 1-based in R: the R
translation is generated from this), its name-inference rule, its
implementations for other layouts, what the layers above need to know of it
(ComplexHalf policy, autocast policy, ONNX operator, TorchScript and
lite-interpreter schemas), and its sample inputs for the generated tests. From the registry come the `torch_*`
functions of `rtorch_py`, the Tensor methods and operators (the public face
assembles them), and the R bridge's tables (`rtorch_py.r.tables`).

The function's own signature is the op's signature, with R torch's argument
names and PyTorch's (0-based) defaults; its annotations say which arguments are
tensors (`argument_kind`), for dispatch and the R binder alike.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

# An argument's kind by its annotation (as written: the package's modules use
# `from __future__ import annotations`): a tensor, a list of tensors, a Scalar.
# Any other annotation is no kind (the value is passed on as given).
KINDS = {"Tensor": "tensor", "Tensor | None": "tensor", "Sequence[Tensor]": "tensors",
         "float": "scalar", "float | None": "scalar", "float | str": "scalar",
         "Scalar": "scalar"}


def _text(annotation: Any) -> str:
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")


def argument_kind(annotation: Any) -> str | None:
    """An argument's kind as its annotation declares it: "tensor", "tensors",
    "scalar", or None."""
    return KINDS.get(_text(annotation))


def takes_tensors(annotation: Any) -> bool:
    """Whether an argument so annotated takes a tensor (maybe among other values,
    `Tensor | float`) or a list of tensors."""
    text = _text(annotation)
    return KINDS.get(text) in ("tensor", "tensors") or "Tensor" in text.split(" | ")


def is_optional(annotation: Any) -> bool:
    """Whether an argument so annotated may be None (`Tensor | None`)."""
    return "None" in _text(annotation).split(" | ")


def tensor_parameters(fn: Callable) -> tuple[str, ...]:
    """The names of fn's parameters that take tensors (its operands), by their annotations."""
    return tuple(p.name for p in inspect.signature(fn).parameters.values()
                 if takes_tensors(p.annotation))


@dataclass(frozen=True, eq=False)
class OpSpec:
    name: str                        # torch_<name>, x$<name>(), x.<name>()
    fn: Callable                     # the public op (0-based, Python conventions): takes
                                     # dims by name, gives its result names (dispatch.py)
    impl: Callable                   # the op's own function, as declared
    operator: Callable | None = None  # the public op as Python calls its operators (`x + y`)
    function: bool | str = True      # exists as torch_<name>(), or as the function named
                                     # here (R torch's `linalg_det`)
    method: bool = True              # exists as a Tensor method
    dims: tuple[str, ...] = ()       # arguments that are dims
    new_dims: tuple[str, ...] = ()   # dims of the result (may be one past the input's last)
    dim_lists: tuple[str, ...] = ()  # a count, or lists of dims (tensordot's `dims`)
    indices: tuple[str, ...] = ()    # arguments that are positions along a dim
    returns_indices: Any = False     # True: the result is positions; int k: result[k] is;
                                     # or a function of the result saying which
    names: Any = None                # the name-inference rule (ops/names.py: "keep",
                                     # "unify", "reduce", "contract", ... or a function);
                                     # None: named operands are refused
    layouts: dict = field(default_factory=dict)  # layout -> the op's implementation for
                                     # operands of that layout (ops/sparse.py registers them)
    operators: tuple[str, ...] = ()  # Python operators, e.g. ("__add__", "__radd__")
    r: Mapping[str, Any] = field(default_factory=dict)  # the R binding's own facts, read
                                     # only by rtorch_py.r (binding.py: R_FACTS)
    samples: Callable | None = None  # () -> [Sample]: inputs for the generated tests
    torch_name: str | None = None    # PyTorch's spelling, when it differs (tests)
    differentiable: bool = True      # the generated tests check gradients
    second_order: bool = True        # ... and second derivatives (False: PyTorch has none)
    finite_differences: bool = True  # ... and against finite differences (False: the
                                     # derivative is not the values' own, ctc_loss's)
    forward: Any = None              # the forward-mode rule (rtorch_py/forward_ad.py):
                                     # "linear", "multilinear", "elementwise", or a function
                                     # (primals, tangents, result) -> tangent(s), arguments
                                     # by name; None: derived from the derivative

    @property
    def function_name(self) -> str:
        return self.function if isinstance(self.function, str) else "torch_" + self.name

    @property
    def key(self) -> str:
        """The op's key in REGISTRY (its name)."""
        return self.name

    # Facts the layers above read, on the declaration so that adding an op is one
    # declaration (tests/test_op_facts.py: each family declares what its consumer needs)
    complex_half: bool | str = False  # on a ComplexHalf operand (ops/complex_half.py): True,
                                      # libtorch runs it; "real", and its real result is
                                      # float16; another string, refused naming that kernel
                                      # of libtorch's; False, refused naming the op
    onnx: str | bool | None = None   # the ONNX operator of an elementwise op of one or two
                                     # tensors (jit/onnx.py: "Relu", "Add"); False: none
                                     # (said so); None: not said (another converter, or none)
    mobile: str | Mapping[str, str] | None = None  # its aten schema for the lite interpreter
                                     # (jit/mobile.py): "self, other", or {overload: schema}
                                     # tried in order; `p: Tensor` / `p: Scalar` picks the
                                     # overload by p's kind, `p: int[2]` repeats a single int
    torchscript: bool = True         # False: PyTorch can't load its TorchScript form
    autocast: str | None = None      # under autocast (ops/dispatch.py), what its floating
                                     # operands are cast to first: "lower" (the autocast
                                     # dtype), "fp32" (float32), "promote" (the widest
                                     # operand's); None: left alone (libtorch's CPU lists)


REGISTRY: dict[str, OpSpec] = {}


def register(spec: OpSpec) -> None:
    if spec.name in REGISTRY:
        raise RuntimeError(f"op {spec.name!r} is declared twice")
    REGISTRY[spec.name] = spec


def forward_rule_kind(name: str) -> str:
    """How op `name` gets its forward-mode tangent: "native" (its declaration's
    `forward`), "derived" (from its derivative) or "none" (no derivative)."""
    spec = REGISTRY[name]
    if not spec.differentiable:
        return "none"
    return "derived" if spec.forward is None else "native"


def forward_rules() -> dict[str, list[str]]:
    """The ops by forward-rule kind: {"native": [...], "derived": [...], "none": [...]}."""
    out: dict[str, list[str]] = {"native": [], "derived": [], "none": []}
    for name in sorted(REGISTRY):
        out[forward_rule_kind(name)].append(name)
    return out


def methods() -> dict[str, Callable]:
    """Every op declared as a Tensor method, and every Python operator, by name."""
    out: dict[str, Callable] = {}
    for spec in REGISTRY.values():
        if spec.method:
            out[spec.name] = spec.operator if spec.name.startswith("__") else spec.fn
        for dunder in spec.operators:
            out[dunder] = spec.operator
    return out


def python_functions() -> dict[str, Callable]:
    """`torch_<name>` for every op declared as a function."""
    return {s.function_name: s.fn for s in REGISTRY.values() if s.function}
