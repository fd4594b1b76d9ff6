"""The module system: `Module`, `nn_module()`, parameters, buffers, containers.

A module registers what is assigned to it: a tensor marked by `nn_parameter()`
becomes a parameter, one marked by `nn_buffer()` a buffer, a `Module` a child;
anything else is a plain attribute. Two ways to define one:

    Net = rt.nn_module("Net", initialize=lambda self, n: ..., forward=lambda self, x: ...)
    class Net(rt.nn.Module): ...          # __init__ calls super().__init__() first

R torch's names are kept: `model.parameters` is a named list of every parameter
(recursive; also callable, `model.parameters()`, as PyTorch users write it),
`children`, `modules`, `buffers` likewise, `state_dict()`, `load_state_dict()`.

R's modules are these too: every R module's parameters, buffers and children
live in a Module (`rtorch_py/r/modules.py`).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable, Iterator

from .. import autograd as _ag
from ..constructors import device_type, no_device
from ..formals import counted
from ..function import NamedList
from ..optim.optimizer import zero_grads
from ..tensor import Tensor, as_dtype

# How a tensor is marked (an attribute in the tensor's own __dict__, so the
# mark travels with the very object, in Python and in R alike).
_KIND = "_nn_kind"
_PERSISTENT = "_nn_persistent"


def nn_parameter(x: Tensor, requires_grad: bool = True) -> Tensor:
    """Mark `x` as a parameter: assigned to a module, it is registered as one."""
    if not isinstance(x, Tensor):
        raise TypeError(f"`x` must be a tensor, got {type(x).__name__}")
    x.requires_grad_(bool(requires_grad))
    x.__dict__[_KIND] = "parameter"
    return x


def nn_buffer(x: Tensor, persistent: bool = True) -> Tensor:
    """Mark `x` as a buffer (saved in the state dict unless `persistent=False`)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"`x` must be a tensor, got {type(x).__name__}")
    x.__dict__[_KIND] = "buffer"
    x.__dict__[_PERSISTENT] = bool(persistent)
    return x


def is_nn_parameter(x: Any) -> bool:
    return isinstance(x, Tensor) and x.__dict__.get(_KIND) == "parameter"


def is_nn_buffer(x: Any) -> bool:
    return isinstance(x, Tensor) and x.__dict__.get(_KIND) == "buffer"


def buffer_is_persistent(x: Tensor) -> bool:
    """Whether a tensor marked by nn_buffer() goes into state dicts."""
    return x.__dict__.get(_PERSISTENT, True)


def is_nn_module(x: Any) -> bool:
    return isinstance(x, Module)


class ParameterList(NamedList):
    """A named list that can also be called: `m.parameters` (R torch) and
    `m.parameters()` (PyTorch) both work; the call gives the values as a list."""

    __slots__ = ()

    def __call__(self, recurse: bool = True) -> list:
        return self.values()


def _unique(pairs: Iterable[tuple[str, Any]]) -> ParameterList:
    names, values, seen = [], [], set()
    for n, v in pairs:
        if id(v) in seen:
            continue
        seen.add(id(v))
        names.append(n)
        values.append(v)
    return ParameterList(names, values)


class Module:
    """Base class of every module. `forward` does the computation; calling the
    module calls it."""

    training: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "_parameters" in self.__dict__:
            return  # already set up (an initialize calling its parent's)
        d = self.__dict__
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent"] = set()
        d["_modules"] = {}
        d["training"] = True

    # -- registration -------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if "_parameters" not in d:
            Module.__init__(self)
        if is_nn_parameter(value):
            self.register_parameter(name, value)
        elif is_nn_buffer(value):
            self.register_buffer(name, value, buffer_is_persistent(value))
        elif isinstance(value, Module):
            self.register_module(name, value)
        elif name in d["_parameters"] and (value is None or isinstance(value, Tensor)):
            # a plain tensor assigned over a parameter stays a parameter (as in PyTorch)
            d["_parameters"][name] = value
        elif name in d["_buffers"] and (value is None or isinstance(value, Tensor)):
            d["_buffers"][name] = value
        else:
            self._forget(name)
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            t = d.get(table)
            if t is not None and name in t:
                return t[name]
        raise AttributeError(f"'{type(self).__name__}' module has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if not self._forget(name):
            object.__delattr__(self, name)

    def _forget(self, name: str) -> bool:
        found = False
        for table in ("_parameters", "_buffers", "_modules"):
            t = self.__dict__.get(table)
            if t is not None and name in t:
                del t[name]
                found = True
        self.__dict__.get("_non_persistent", set()).discard(name)
        return found

    def _claim(self, name: str) -> str:
        name = str(name)
        if not name:  # (dots are allowed, as R torch allows them: torchvision's "stem.0")
            raise KeyError("invalid module attribute name '': it must be non-empty")
        self._forget(name)
        self.__dict__.pop(name, None)
        return name

    def register_parameter(self, name: str, param: Tensor | None) -> None:
        if param is not None and not isinstance(param, Tensor):
            raise TypeError(f"cannot register a {type(param).__name__} as parameter "
                            f"'{name}': give a tensor (or None)")
        if param is not None:
            param.__dict__[_KIND] = "parameter"
        self._parameters[self._claim(name)] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot register a {type(tensor).__name__} as buffer "
                            f"'{name}': give a tensor (or None)")
        name = self._claim(name)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def register_module(self, name: Any, module: Module | None) -> None:
        if module is not None and not isinstance(module, Module):
            kind = "a module class; call it to make an instance" \
                if isinstance(module, type) and issubclass(module, Module) \
                else f"an object of type {type(module).__name__}"
            raise TypeError(f"Expected an nn_module for '{name}' but got {kind}")
        self._modules[self._claim(name)] = module

    add_module = register_module

    # -- calling -------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no forward method")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # -- what it holds ---------------------------------------------------------
    def named_parameters(self, recursive: bool = True, prefix: str = "") -> ParameterList:
        return _unique(self._named("_parameters", recursive, prefix))

    def named_buffers(self, recursive: bool = True, prefix: str = "") -> ParameterList:
        return _unique(self._named("_buffers", recursive, prefix))

    def _named(self, table: str, recursive: bool, prefix: str) -> Iterator[tuple[str, Any]]:
        for n, v in getattr(self, table).items():
            if v is not None:
                yield prefix + n, v
        if recursive:
            for mn, m in self._modules.items():
                if m is not None:
                    yield from m._named(table, True, prefix + mn + ".")

    @property
    def parameters(self) -> ParameterList:
        return self.named_parameters()

    @property
    def buffers(self) -> ParameterList:
        return self.named_buffers()

    @property
    def children(self) -> ParameterList:
        return ParameterList(list(self._modules), list(self._modules.values()))

    def named_children(self) -> ParameterList:
        return self.children

    @property
    def modules(self) -> ParameterList:
        """This module and every module below it, each once (depth first)."""
        return _unique(self._walk(""))

    def named_modules(self) -> ParameterList:
        return self.modules

    def _walk(self, prefix: str) -> Iterator[tuple[str, Module]]:
        yield prefix, self
        for n, m in self._modules.items():
            if m is not None:
                yield from m._walk(prefix + ("." if prefix else "") + n)

    # -- modes and gradients -------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise TypeError("train(mode=) must be True or False")
        self.__dict__["training"] = mode
        for m in self._modules.values():
            if m is not None:
                m.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def zero_grad(self, set_to_none: bool = False) -> None:
        zero_grads(self.parameters.values(), set_to_none)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters.values():
            p.requires_grad_(requires_grad)
        return self

    # -- functions over the tree -------------------------------------------
    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call `fn` on every child (depth first), then on this module."""
        for m in self._modules.values():
            if m is not None:
                m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Replace each parameter's and buffer's values by `fn(tensor)`,
        keeping the tensor objects (so optimisers and R keep seeing them)."""
        for m in self._modules.values():
            if m is not None:
                m._apply(fn)
        with _ag.with_no_grad():
            for table in (self._parameters, self._buffers):
                for t in table.values():
                    if t is None:
                        continue
                    new = fn(t)
                    _replace_data(t, new)
                    if t.grad is not None:
                        t.grad = None if new is None else _converted_grad(t.grad, fn)
        return self

    def to(self, dtype: Any = None, device: Any = None, tensor: Tensor | None = None,
           **kwargs: Any) -> Module:
        if device is not None and device_type(device) != "cpu":
            raise no_device(device)
        if tensor is not None:
            dtype = tensor.dtype
        if dtype is None:
            return self
        dtype = as_dtype(dtype)
        if not dtype.is_floating_point:
            raise TypeError(f"Module.to only accepts floating point dtypes, but got {dtype}")
        return self._apply(lambda t: t.to(dtype=dtype) if t.is_floating_point() else t)

    def cpu(self) -> Module:
        return self

    def double(self) -> Module:
        return self.to(dtype="float64")

    def float(self) -> Module:
        return self.to(dtype="float32")

    # -- state dict ------------------------------------------------------------
    def state_dict(self, prefix: str = "", keepvars: bool = False) -> dict:
        """Parameters and persistent buffers by dotted name (detached unless
        `keepvars`, but keeping requires_grad as R torch does)."""
        out: dict = {}
        self._save_to(out, prefix, keepvars)
        return out

    def _save_to(self, out: dict, prefix: str, keepvars: bool) -> None:
        for n, p in self._parameters.items():
            if p is not None:
                out[prefix + n] = p if keepvars else _detached(p)
        for n, b in self._buffers.items():
            if b is not None and n not in self._non_persistent:
                out[prefix + n] = b if keepvars else _detached(b)
        for n, m in self._modules.items():
            if m is not None:
                m._save_to(out, prefix + n + ".", keepvars)

    def load_state_dict(self, state_dict: Any, strict: bool = True) -> Module:
        """Copy the values of `state_dict` (a dict or named list) into this
        module's parameters and persistent buffers, in place."""
        if isinstance(state_dict, NamedList):
            state_dict = dict(state_dict.items())
        if not isinstance(state_dict, dict):
            raise TypeError("load_state_dict() expects a dict / named list of tensors, got "
                            f"{type(state_dict).__name__}")
        own = self.state_dict(keepvars=True)
        missing = [k for k in own if k not in state_dict]
        if missing and strict:
            raise ValueError(f"Could not find {', '.join(missing)} in the state_dict.")
        with _ag.with_no_grad():
            for k, target in own.items():
                if k not in state_dict:
                    continue
                value = state_dict[k]
                if not isinstance(value, Tensor):
                    raise TypeError(f"state_dict entry '{k}' is a {type(value).__name__}, "
                                    "not a tensor")
                if tuple(value.shape) != tuple(target.shape):
                    raise ValueError(f"size mismatch for {k}: copying a tensor of shape "
                                     f"{list(value.shape)}, the module's is "
                                     f"{list(target.shape)}")
                write_(target, value)
        return self

    # -- printing --------------------------------------------------------------
    def __repr__(self) -> str:
        return format_module(self)

    def parameter_count(self) -> int:
        return int(sum(p.numel() for p in self.parameters.values()))


def options_signature(params: Iterable[tuple[str, Any]]) -> inspect.Signature:
    """The signature `__init__(self, name = default, ...)` of a layer made from a list of
    options (losses, activations), so that R and the tools see their arguments."""
    P = inspect.Parameter
    return inspect.Signature([P("self", P.POSITIONAL_OR_KEYWORD),
                              *(P(n, P.POSITIONAL_OR_KEYWORD, default=d) for n, d in params)])


def counted_of(fn: Any, names: Iterable[str]) -> dict[str, str]:
    """What R counts from 1 among `names` (a layer's options or its forward's inputs), as
    the declaration of the nnf_ function the layer applies says (`@r_counted`)."""
    return {k: c for k, c in counted(fn).items() if k in names}


def write_(t: Tensor, values: Any) -> Tensor:
    """Overwrite `t`'s values in place, outside autograd (initialisation,
    loading, running statistics, gradient clipping)."""
    arr = values.data if isinstance(values, Tensor) else values
    t.data[...] = arr
    return t


def _detached(t: Tensor) -> Tensor:
    out = t.detach()
    if t.requires_grad:
        out.requires_grad_(True)
    return out


def _replace_data(t: Tensor, new: Tensor) -> None:
    """Give `t` the values (and dtype) of `new`, as PyTorch's `param.data = ...`."""
    if new is t:
        return
    t.data = new.data


def _converted_grad(g: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    new = fn(g)
    out = new.detach() if new is not g else g
    return out


def _rule(title: str, width: int) -> str:
    head = f"── {title} "
    return head + "─" * max(width - len(head), 0)


def format_module(m: Module, width: int = 80,
                  classname: Callable[[Module], str] = lambda c: type(c).__name__) -> str:
    """A module as R torch prints it (its children named by `classname`)."""
    lines = [f"An `nn_module` containing {m.parameter_count():,} parameters."]

    def section(title: str, items: list[str]) -> None:
        if items:
            lines.extend(["", _rule(title, width)])
            lines.extend("• " + s for s in items)

    section("Modules", [f"{n}: <{classname(c)}> #{c.parameter_count():,} parameters"
                        for n, c in m._modules.items() if c is not None])
    section("Parameters", [f"{n}: {_tensor_str(p)}" for n, p in m._parameters.items()
                           if p is not None])
    section("Buffers", [f"{n}: {_tensor_str(b)}" for n, b in m._buffers.items()
                        if b is not None])
    return "\n".join(lines)


def _tensor_str(t: Tensor) -> str:
    dims = ", ".join(f"1:{s}" for s in t.shape)
    return f"{t.dtype.r_name} [{dims}]"


# --------------------------------------------------------------------------
# nn_module(): a Module class the R way


def nn_module(classname: str | None = None, inherit: type = Module,
              initialize: Callable | None = None, forward: Callable | None = None,
              **methods: Any) -> type:
    """A Module subclass from functions taking `self` first, as R torch's
    `nn_module("Name", initialize = function(...), forward = function(...))`.

    Calling the class makes an instance: `Net(10, 2)` runs `initialize(self, 10, 2)`.
    """
    if not (isinstance(inherit, type) and issubclass(inherit, Module)):
        raise TypeError("`inherit` must be a module class (made by nn_module() or a "
                        f"subclass of rt.nn.Module), got {inherit!r}")
    ns: dict[str, Any] = dict(methods)
    if initialize is not None:
        ns["initialize"] = initialize
    if forward is not None:
        ns["forward"] = forward
    if "initialize" in ns:
        ns["__init__"] = _init_calling_initialize  # else the parent's constructor is kept
    name = classname or (inherit.__name__ if inherit is not Module else "nn_module")
    return type(name, (inherit,), ns)


def _init_calling_initialize(self: Module, *args: Any, **kwargs: Any) -> None:
    Module.__init__(self)
    init = getattr(type(self), "initialize", None)
    if init is not None:
        init(self, *args, **kwargs)


# --------------------------------------------------------------------------
# Containers


class nn_sequential(Module):
    """Modules called in order, each on the previous one's output."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            for n, m in modules[0].items():
                self.register_module(n, m)
        else:
            for i, m in enumerate(modules):
                self.register_module(str(i), m)

    def forward(self, input: Any) -> Any:
        for m in self._modules.values():
            input = m(input)
        return input

    def __len__(self) -> int:
        return len(self._modules)

    def __getitem__(self, i: Any) -> Any:
        mods = list(self._modules.values())
        if isinstance(i, slice):
            return nn_sequential(*mods[i])
        return mods[i]

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> nn_sequential:
        self.register_module(str(len(self._modules)), module)
        return self


class nn_module_list(Module):
    """A list of modules, each registered (named "0", "1", ...)."""

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        super().__init__()
        self.extend(modules)

    def append(self, module: Module) -> nn_module_list:
        self.register_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> nn_module_list:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        self.extend(mods)

    def __len__(self) -> int:
        return len(self._modules)

    def __getitem__(self, i: int) -> Module:
        return list(self._modules.values())[i]

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def forward(self, *args: Any) -> Any:
        raise NotImplementedError("nn_module_list has no forward: call its elements")


class nn_module_dict(Module):
    """Modules by name."""

    def __init__(self, dict: Any = None) -> None:  # noqa: A002 (R torch's argument name)
        super().__init__()
        items = dict.items() if dict is not None else ()
        for n, m in items:
            if not n:
                raise ValueError("All elements in `dict` must be named.")
            self.register_module(n, m)

    def __getitem__(self, name: str) -> Module:
        return self._modules[name]

    def __len__(self) -> int:
        return len(self._modules)

    def keys(self) -> list:
        return list(self._modules)

    def forward(self, *args: Any) -> Any:
        raise NotImplementedError("nn_module_dict has no forward: call its elements")
