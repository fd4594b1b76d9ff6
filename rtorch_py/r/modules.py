"""R's `nn_module` on the engine's `Module`: one module system for both languages.

Every R module (an R6 object of class `nn_Module`, and the callable R users
get) has one Python module, `rtorch_py.nn.Module`, holding its parameters,
buffers and children. A built-in layer's is the Python layer itself; a module
defined in R (`nn_module()` with R `initialize` and `forward`) has an
`RModule`, whose forward calls the R one. The R6 object keeps only what is
R's: its fields, methods and class (`r_compat/R/nn.R`). So `self$fc`,
`$parameters`, `$state_dict()`... read and write the Python module, a Python
module can sit in an R module and an R module in a Python container.

Who holds whom, so that neither language's collector meets a cycle it can't
see through:
- a module's R callable (what `net()` returns) holds its Python module;
- the Python module holds its R6 object (its "front", in FRONTS), so a child
  keeps its R side while a parent, in either language, holds it;
- the R6 object refers to its Python module weakly (a Python weak reference,
  which the bridge follows), and keeps its children's callables (so `self$fc`
  is the same R object every time).

Names are R torch's: recurrent layers' parameters are numbered from 1
(`weight_ih_l1`), and `$parameters` lists each child's before the module's own.
"""
from __future__ import annotations

import copy
import json
import weakref
from typing import Any, Callable, Iterator, NamedTuple

import numpy as np

from ..autograd import with_no_grad
from ..function import NamedList
from ..nn.module import (Module, buffer_is_persistent, format_module, is_nn_buffer,
                         is_nn_parameter, nn_buffer, nn_parameter)
from ..nn.rnn import RNNBase
from ..serialization import EXTRA_TENSOR, Reader, Writer
from ..tensor import Tensor, wrap
from . import one_based


class Front(NamedTuple):
    """A Python module's R side."""

    env: Any        # the R6 object (an R environment)
    forward: Any    # its forward method (an R function)
    classname: str  # its R class, as printing names it


FRONTS: weakref.WeakKeyDictionary[Module, Front] = weakref.WeakKeyDictionary()


class RModule(Module):
    """The Python module of a module defined in R: its parameters, buffers and
    children, like any module's; calling it calls its R forward."""

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        front = FRONTS.get(self)
        if front is None:
            raise RuntimeError("this module was defined in R and has no R side here (a copy "
                               "made in Python? copy it in R: m$clone(deep = TRUE))")
        return front.forward(*args, **kwargs)


def bind(module: Module, env: Any, forward: Any, classname: str) -> list:
    """Give `module` its R side; returns [module, a weak reference to it]: what a
    callable holds and what the R6 object holds."""
    FRONTS[module] = Front(env, forward, classname)
    return [module, weakref.ref(module)]


def front(module: Module) -> Any:
    """A Python module's R6 object, or, when it has none yet (a module made in
    Python), its class name, from which R makes one."""
    got = FRONTS.get(module)
    if got is not None:
        return got.env
    if isinstance(module, RModule):
        raise RuntimeError("this module was defined in R and has no R side here (a copy made "
                           "in Python? copy it in R: m$clone(deep = TRUE))")
    return type(module).__name__


# --------------------------------------------------------------------------
# Names as R torch gives them


def _r_name(owner: Module, name: str) -> str:
    return one_based.layer_name_to_r(name) if isinstance(owner, RNNBase) else name


def _py_name(owner: Module, name: str) -> str:
    return one_based.layer_name(name) if isinstance(owner, RNNBase) else name


def _r_key(root: Module, key: str) -> str:
    """A dotted name (`rnn.weight_ih_l0`) as R torch writes it: the owner of
    the last part names it. (R torch lets a child's name hold dots, as
    torchvision's "stem.0": the longest name a child has is followed first.)"""
    *path, last = key.split(".")
    owner, i = root, 0
    while i < len(path):
        j = next((j for j in range(len(path), i, -1) if ".".join(path[i:j]) in owner._modules),
                 None)
        if j is None:
            return key
        owner, i = owner._modules[".".join(path[i:j])], j
    return ".".join([*path, _r_name(owner, last)])


# --------------------------------------------------------------------------
# `self$name` and `self$name <- value`


def get(module: Module, name: Any) -> Any:
    """`module$name` for what its R6 object doesn't hold: a parameter, buffer
    or child (`module[[i]]`: the i-th child), else a plain attribute of a
    Python layer, R-shaped; None when there is nothing of that name."""
    if not isinstance(name, str):
        kids = [m for m in module._modules.values() if m is not None]
        k = one_based.integer(name, "index")
        if not 1 <= k <= len(kids):
            raise IndexError(f"subscript out of bounds: the module has {len(kids)} children")
        return kids[one_based.labels(k)]
    own = _py_name(module, name)
    for table in (module._parameters, module._buffers, module._modules):
        value = table.get(own)
        if value is not None:
            return value
    return _attribute(module, name)


def _attribute(module: Module, name: str) -> Any:
    """A plain attribute of a Python layer (in_features, stride, ...) as R torch
    holds it: R torch's layers keep the R values they were given, so a number
    is an R double (an integer only where the argument of that name was given
    as one: `r_integers`), a tuple of numbers an atomic vector, dims and
    ignored class indices counted as R counts them."""
    v = module.__dict__.get(name)
    if v is None and not name.startswith("_"):
        v = getattr(type(module), name, None)   # class-level settings (an RNN's mode)
    if v is None or callable(v):
        return None
    if isinstance(v, (str, bool, Tensor)):
        return v
    if name in ("dim", "start_dim", "end_dim") and isinstance(v, int):
        v = one_based.dim_to_r(v)
    elif name == "ignore_index" and isinstance(v, int):
        v = one_based.position_to_r(v)  # (`ignore_label`'s inverse)
    integer = name in module.__dict__.get("r_integers", ())
    if name == "normalized_shape" and isinstance(v, tuple):  # R torch: as.list(shape)
        return [_r_numbers(x, integer) for x in v]
    return _r_numbers(v, integer)


def _r_numbers(v: Any, integer: bool) -> Any:
    """Numbers as R numbers: a tuple of them an atomic vector (double, or
    integer if `integer`); a tuple of anything else a list; else None."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return int(v) if integer and float(v).is_integer() else float(v)
    if isinstance(v, tuple):
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            whole = integer and all(float(x).is_integer() for x in v)
            return np.asarray(v, dtype=np.int32 if whole else np.float64)
        out = [x if isinstance(x, (str, bool, Tensor)) else _r_numbers(x, integer) for x in v]
        return out
    return None


def assign(module: Module, name: str, value: Tensor) -> bool:
    """`self$name <- tensor` as R torch does it: a tensor marked by
    nn_parameter() or nn_buffer() is registered, a plain one given a
    parameter's name replaces it (a parameter still); otherwise False: the
    tensor is a field of the R6 object."""
    own = _py_name(module, name)
    if is_nn_parameter(value):
        module.register_parameter(own, value)
    elif is_nn_buffer(value):
        module.register_buffer(name, value, buffer_is_persistent(value))
    elif own in module._parameters:
        module.register_parameter(own, nn_parameter(value, value.requires_grad))
    else:
        return False
    return True


def register(module: Module, kind: str, name: str, value: Any, persistent: bool = True) -> None:
    """register_parameter(), register_buffer(), register_module() from R."""
    if kind == "parameter":
        module.register_parameter(_py_name(module, name), value)
    elif kind == "buffer":
        module.register_buffer(name, value, bool(persistent))
    else:
        module.register_module(name, value)


def insert(module: Module, index: Any, child: Module) -> None:
    """nn_module_list's insert(): `child` at (1-based) `index`, the children
    renamed "0", "1", ... in their new order."""
    kids = list(module._modules.values())
    kids.insert(one_based.labels(one_based.integer(index, "index")), child)
    module._modules.clear()
    for i, m in enumerate(kids):
        module.register_module(str(i), m)


# --------------------------------------------------------------------------
# What a module holds, as R torch lists it


def children(module: Module) -> NamedList:
    kids = {n: m for n, m in module._modules.items() if m is not None}
    return NamedList(list(kids), list(kids.values()))


def _r_order(module: Module, table: str, recursive: bool) -> Iterator[tuple[str, Tensor]]:
    """Each child's tensors (names prefixed with the child's), then the module's own."""
    if recursive:
        for child_name, child in module._modules.items():
            if child is not None:
                for n, t in _r_order(child, table, True):
                    yield f"{child_name}.{n}", t
    for n, t in getattr(module, table).items():
        if t is not None:
            yield _r_name(module, n), t


def named(module: Module, kind: str, recursive: bool = True) -> NamedList:
    """`$parameters`, `$buffers`, `$named_parameters(recursive)`: each tensor
    once (the first name it has), in R torch's order."""
    names, values, seen = [], [], set()
    for n, t in _r_order(module, "_" + kind, bool(recursive)):
        if id(t) not in seen:
            seen.add(id(t))
            names.append(n)
            values.append(t)
    return NamedList(names, values)


def state_dict(module: Module, prefix: str = "", keepvars: bool = False) -> NamedList:
    state = module.state_dict(keepvars=bool(keepvars))
    return NamedList([prefix + _r_key(module, k) for k in state], list(state.values()))


def load_state_dict(module: Module, state: Any, refer: bool = False) -> None:
    """R torch's `load_state_dict()`: each parameter and persistent buffer from
    its entry (a state dict from before batch norm counted its batches may
    lack the counter), copied in place, or with `refer` taken as it is."""
    state = dict(state.items()) if isinstance(state, NamedList) else dict(state)
    with with_no_grad():
        for prefix, owner in module._walk(""):
            persistent = [n for n in owner._buffers if n not in owner._non_persistent]
            for name in [*owner._parameters, *persistent]:
                is_parameter = name in owner._parameters
                own = owner._parameters[name] if is_parameter else owner._buffers[name]
                if own is None:
                    continue
                key = (prefix + "." if prefix else "") + _r_name(owner, name)
                if key not in state:
                    if name == "num_batches_tracked":
                        continue
                    raise ValueError(f"Could not find {key} in the state_dict.")
                value = state[key]
                if not isinstance(value, Tensor):
                    raise TypeError(f"the state_dict's {key} is not a tensor")
                if refer:
                    value.requires_grad_(own.requires_grad)
                    if is_parameter:
                        owner.register_parameter(name, nn_parameter(value, own.requires_grad))
                    else:
                        owner.register_buffer(name, value)
                    continue
                # copied as R torch does, with copy_(): a value that broadcasts to the
                # module's shape loads (PyTorch's 0-d num_batches_tracked into R's [1])
                if not _broadcasts_to(tuple(value.shape), tuple(own.shape)):
                    raise ValueError(f"size mismatch for {key}: the state_dict's tensor has "
                                     f"shape [{', '.join(map(str, value.shape))}], the "
                                     f"module's [{', '.join(map(str, own.shape))}]")
                own.copy_(value)


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Whether a tensor of `shape` broadcasts to `target` (copy_'s rule)."""
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(target)))


# --------------------------------------------------------------------------
# Modes and printing (R's flags as Python booleans: R may give 1 for TRUE)


def set_training(module: Module, flag: bool) -> None:
    """`self$training <- flag`: this module's flag only (train() sets the tree's)."""
    module.training = bool(flag)


def format_r(module: Module, width: Any = 80) -> str:
    """What print() shows: children by their R class."""
    return format_module(module, int(width), classname=_classname)


def _classname(module: Module) -> str:
    got = FRONTS.get(module)
    return got.classname if got is not None else type(module).__name__


# --------------------------------------------------------------------------
# Copies and saving


def shallow_copy(module: Module) -> Module:
    """`clone(deep = FALSE)`: a new module holding the same tensors and children."""
    out = copy.copy(module)
    d = out.__dict__
    for table in ("_parameters", "_buffers", "_modules"):
        d[table] = dict(d[table])
    d["_non_persistent"] = set(d["_non_persistent"])
    return out


def deep_copy(module: Module, replace_values: bool = True) -> list:
    """`clone(deep = TRUE)`: [the copy, [[each module of the tree, its copy], ...]]
    (root first). Each tensor is copied once, detached, keeping requires_grad
    and its parameter / buffer mark, so what was shared stays shared; with
    `replace_values = FALSE` (R torch's) the copies hold the original tensors."""
    memo: dict = {}
    for t in [*module.parameters.values(), *module.buffers.values()]:
        if not replace_values:
            memo[id(t)] = t
            continue
        c = wrap(t.data.copy())
        c.__dict__.update({k: v for k, v in t.__dict__.items() if k.startswith("_nn_")})
        if t.requires_grad:
            c.requires_grad_(True)
        memo[id(t)] = c
    out = copy.deepcopy(module, memo)
    return [out, [[m, memo[id(m)]] for m in module.modules.values()]]


def fronts(modules: Any) -> list:
    """[[module, its R6 object], ...] for every module in the trees of `modules`
    that has an R side: what torch_save() stores beside them."""
    out, seen = [], set()
    for root in modules:
        for m in root.modules.values():
            got = FRONTS.get(m)
            if got is not None and id(m) not in seen:
                seen.add(id(m))
                out.append([m, got.env])
    return out


# --------------------------------------------------------------------------
# torch_save() of a module: its Python side described, to rebuild it on loading
# without running code. The description is the module tree as serialization's
# writer encodes objects (classes by name, fields), its parameters and buffers
# named by their key in the state dict saved beside it; a tensor that is in no
# state dict (a non-persistent buffer) goes into the file as an extra tensor.

class _DescribeWriter(Writer):
    def __init__(self, keys: dict) -> None:
        super().__init__()
        self.keys = keys  # id(tensor) -> its R state dict key

    def encode(self, x: Any) -> Any:
        if isinstance(x, Tensor) and id(x) in self.keys:
            return {"state_key": self.keys[id(x)], "requires_grad": x.requires_grad}
        return super().encode(x)


def describe(module: Module) -> list:
    """[the description (JSON), the modules in it with an R side (in its order),
    the extra tensors by name]."""
    own = module.state_dict(keepvars=True)
    w = _DescribeWriter({id(t): _r_key(module, k) for k, t in own.items()})
    root = w.encode(module)
    fronted = [m for m in w.keep if isinstance(m, Module) and m in FRONTS]
    index = {"root": root, "fronted": [w.objects[id(m)] for m in fronted]}
    extra = NamedList([f"{EXTRA_TENSOR}{i}" for i in range(len(w.arrays))],
                      [wrap(a) for a in w.arrays])
    return [json.dumps(index), fronted, extra]


class _RebuildReader(Reader):
    def __init__(self, state: dict) -> None:
        self.state = state
        self.tensors, self.objects = {}, {}

    def array(self, i: int) -> Any:
        return self.state[f"{EXTRA_TENSOR}{int(i)}"].data

    def decode(self, e: Any) -> Any:
        if isinstance(e, dict) and "state_key" in e:
            t = self.state.get(e["state_key"])
            if t is None:
                raise ValueError(f"torch_load: the module's {e['state_key']} is missing from the "
                                 "file")
            return t.requires_grad_(bool(e.get("requires_grad")))
        return super().decode(e)


def rebuild(description: str, state: Any) -> list:
    """[the module described, its modules with an R side (in the order saved)]."""
    state = dict(state.items()) if isinstance(state, NamedList) else dict(state)
    index = json.loads(description)
    r = _RebuildReader(state)
    root = r.decode(index["root"])
    if not isinstance(root, Module):
        raise ValueError("torch_load: damaged file (the module's description isn't a module)")
    for m in root.modules.values():  # (the tensors' marks, which travel with them)
        for t in m._parameters.values():
            if t is not None:
                nn_parameter(t, t.requires_grad)
        for n, t in m._buffers.items():
            if t is not None:
                nn_buffer(t, n not in m._non_persistent)
    return [root, [r.objects[int(k)] for k in index["fronted"]]]


R_FUNCTIONS: dict[str, Callable] = {
    # (`self$name` itself is api.nn_get, whose pointer R keeps: the lookup is hot)
    ".nn_module_new": RModule, ".nn_bind": bind, ".nn_front": front, ".nn_assign": assign,
    ".nn_register": register, ".nn_insert": insert, ".nn_children": children,
    ".nn_named": named, ".nn_state_dict": state_dict, ".nn_load_state_dict": load_state_dict,
    ".nn_training": lambda module: module.training, ".nn_set_training": set_training,
    ".nn_train": lambda module, mode=True: module.train(bool(mode)),
    ".nn_to": lambda module, dtype: module.to(dtype=dtype),
    # (R torch's `$.apply(fn)`: every parameter's, buffer's and gradient's values
    # replaced by fn's, the tensors staying the same objects)
    ".nn_apply_tensors": lambda module, fn: module._apply(fn),
    ".nn_zero_grad": lambda module, set_to_none=False: module.zero_grad(bool(set_to_none)),
    ".nn_requires_grad": lambda module, flag=True: module.requires_grad_(bool(flag)),
    ".nn_format": format_r, ".nn_copy": shallow_copy,
    ".nn_deep_copy": deep_copy, ".nn_fronts": fronts, ".nn_describe": describe,
    ".nn_rebuild": rebuild,
}
