"""The op registry: each op is declared once, with `@op(...)` on its function.

The declaration says everything the rest of the package needs to know:
whether the op is a function (`torch_add`), a Tensor method (`x.add()`,
`x$add()`), which Python operators and R group generics it implements, which
arguments are dimensions or positions (0-based in Python, 1-based in R: the R
translation is generated from this), and its sample inputs for the generated
tests. From the registry come the `torch_*` functions of `rtorch_py`, the
Tensor methods and operators, and the R bridge's tables (`rtorch_py.r.tables`).

The function's own signature is the op's signature, with R torch's argument
names and PyTorch's (0-based) defaults.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..named import named_op


@dataclass(frozen=True, eq=False)
class OpSpec:
    name: str                        # torch_<name>, x$<name>(), x.<name>()
    fn: Callable                     # the op itself (0-based, Python conventions)
    overload: str = ""               # e.g. "Scalar": R's form for a number operand
    function: bool | str = True      # exists as torch_<name>(), or as the function named
                                     # here (R torch's `linalg_det`)
    method: bool = True              # exists as a Tensor method
    dims: tuple[str, ...] = ()       # arguments that are dims
    new_dims: tuple[str, ...] = ()   # dims of the result (may be one past the input's last)
    dim_lists: tuple[str, ...] = ()  # a count, or lists of dims (tensordot's `dims`)
    indices: tuple[str, ...] = ()    # arguments that are positions along a dim
    returns_indices: Any = False     # True: the result is positions; int k: result[k] is;
                                     # or a function of the result saying which
    operators: tuple[str, ...] = ()  # Python operators, e.g. ("__add__", "__radd__")
    r_operators: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    r_math: tuple[str, ...] = ()     # R's Math group generics (`exp(x)`)
    r_summary: tuple[str, ...] = ()  # R's Summary group generics (`sum(x)`)
    r_scalar: Callable | None = None  # the overload R calls for a number `other` (mul.Scalar)
    invisible: bool = False          # R returns the result invisibly
    samples: Callable | None = None  # () -> [Sample]: inputs for the generated tests
    torch_name: str | None = None    # PyTorch's spelling, when it differs (tests)
    differentiable: bool = True      # the generated tests check gradients
    second_order: bool = True        # ... and second derivatives (False: PyTorch has none)
    r_result_names: tuple[str, ...] = ()  # R gets the results as a list with these names
    r_conventions: tuple[str, ...] = ()  # R-only conventions for arguments or results,
                                         # by name (rtorch_py/r/tables.py: "sizes", ...)

    @property
    def function_name(self) -> str:
        return self.function if isinstance(self.function, str) else "torch_" + self.name

    @property
    def key(self) -> str:
        """`name`, or `name.overload` (PyTorch's spelling: `mul.Scalar`)."""
        return f"{self.name}.{self.overload}" if self.overload else self.name


REGISTRY: dict[str, OpSpec] = {}


def op(name: str | None = None, *, r_operators: Any = (), **fields: Any) -> Callable:
    """Declare the decorated function an op (see OpSpec for the fields).

    `r_operators` may name R operators (`("+",)`), or map each to fixed
    arguments (`{"%/%": {"rounding_mode": "trunc"}}`)."""
    ops = dict(r_operators) if isinstance(r_operators, Mapping) else \
        {o: {} for o in r_operators}

    def register(fn: Callable) -> Callable:
        # the public op also takes dims by name and gives its result names (named.py)
        key = name or fn.__name__
        public = named_op(key, fn, fields.get("dims", ()), fields.get("dim_lists", ()))
        spec = OpSpec(key, public, r_operators=ops, **fields)
        if spec.key in REGISTRY:
            raise RuntimeError(f"op {spec.key!r} is declared twice")
        REGISTRY[spec.key] = spec
        return fn
    return register


def install_methods(cls: type) -> None:
    """Attach every op declared as a method, and every Python operator, to cls."""
    for spec in REGISTRY.values():
        if spec.method and not spec.overload:
            setattr(cls, spec.name, spec.fn)
        for dunder in spec.operators:
            setattr(cls, dunder, spec.fn)


def python_functions() -> dict[str, Callable]:
    """`torch_<name>` for every op declared as a function."""
    return {s.function_name: s.fn for s in REGISTRY.values() if s.function and not s.overload}
