"""TorchScript code run on our ops: parsed with Python's `ast`, interpreted here.

TorchScript is a subset of Python; PyTorch writes it in a canonical form
(`torch.add(torch.mul(y, 2), i)`, `for i in range(n)`, `(self.fc).forward(x, )`).
`Program` parses the code files of an archive (or `jit_compile()`'s source),
checks every function before anything runs (`_check`: only TorchScript's
constructs and names: no `__import__`, no attribute outside TorchScript's
namespaces, no dunder attributes), and runs functions statement by statement:
`torch.<op>(...)` calls our op for libtorch's operator (`aten.resolve`), or, on
plain numbers and lists, Python's arithmetic, as TorchScript's scalar overloads.
Nothing of the file reaches `eval`/`exec`.
"""
from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..constructors import torch_tensor
from ..ops.registry import REGISTRY
from ..tensor import Tensor, as_dtype, dtype
from . import aten
from .archive import ScriptObject
from .script import ScriptModule


class TorchScriptError(RuntimeError):
    """TorchScript code that can't be run here (refused or unsupported)."""


# --------------------------------------------------------------------------
# The program: classes and functions of the code files

# Names TorchScript code may use beside its locals.
_BUILTIN_NAMES = {
    "torch", "ops", "CONSTANTS", "__torch__", "int", "float", "bool", "str", "len", "range",
    "annotate", "unchecked_cast", "uninitialized", "isinstance", "getattr", "hasattr",
    "print", "list", "tuple", "min", "max", "abs", "zip", "enumerate", "math", "inf", "nan",
    "round", "divmod", "sum", "any", "all", "sorted", "reversed", "Tensor", "List", "Dict",
    "Tuple", "Optional", "Any", "NoneType", "Final", "Union", "Future", "Module", "NamedTuple",
    "Enum", "Device", "Generator", "number", "complex",
}
_TYPE_CONTEXT = {"annotate", "unchecked_cast", "uninitialized", "isinstance"}  # (a type first)
_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.If, ast.For, ast.While,
               ast.Return, ast.Pass, ast.Expr, ast.Break, ast.Continue, ast.Assert)
_EXPRESSIONS = (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript, ast.Slice,
                ast.Tuple, ast.List, ast.Dict, ast.UnaryOp, ast.BinOp, ast.BoolOp, ast.Compare,
                ast.IfExp, ast.ListComp, ast.comprehension, ast.keyword, ast.Starred,
                ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.arguments,
                ast.arg)


@dataclass
class ClassInfo:
    qualified: str
    parameters: list = field(default_factory=list)
    buffers: list = field(default_factory=list)
    constants: dict = field(default_factory=dict)  # Final attributes: name -> value
    methods: dict = field(default_factory=dict)    # name -> Function
    bases: list = field(default_factory=list)
    fields: list = field(default_factory=list)     # a NamedTuple's

    @property
    def is_module(self) -> bool:
        return "Module" in self.bases


class Program:
    """The TorchScript classes and functions of some code files."""

    def __init__(self, files: dict[str, str], constants: tuple = ()) -> None:
        self.classes: dict[str, ClassInfo] = {}
        self.functions: dict[str, Function] = {}
        self.constants = constants
        for path, text in files.items():
            namespace = _namespace(path)
            try:
                tree = ast.parse(text, filename=f"code/{path}")
            except SyntaxError as e:
                raise TorchScriptError(f"TorchScript code in code/{path} does not parse: "
                                       f"{e.msg} (line {e.lineno})") from None
            self._read(tree, namespace, path)

    def _read(self, tree: ast.Module, namespace: str, path: str) -> None:
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                self._class(node, namespace, path)
            elif isinstance(node, ast.FunctionDef):
                qualified = f"{namespace}.{node.name}"
                self.functions[qualified] = Function(node, qualified, self, path)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                continue  # (older archives import their own namespaces)
            elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and
                                                      t.id == "op_version_set"
                                                      for t in node.targets):
                continue
            else:
                raise _refused(node, path, "a top-level statement other than a class or "
                               "function")

    def _class(self, node: ast.ClassDef, namespace: str, path: str) -> None:
        info = ClassInfo(f"{namespace}.{node.name}",
                         bases=[b.id for b in node.bases if isinstance(b, ast.Name)])
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                info.methods[item.name] = Function(item, f"{info.qualified}.{item.name}", self,
                                                   path)
            elif isinstance(item, ast.Assign) and len(item.targets) == 1:
                target = item.targets[0]
                if isinstance(target, ast.Name) and target.id in ("__parameters__",
                                                                  "__buffers__"):
                    names = _literal(item.value, path)
                    (info.parameters if target.id == "__parameters__" else
                     info.buffers).extend(names)
                elif isinstance(target, ast.Subscript):
                    continue  # __annotations__["0"] = <type>: a child's type
                else:
                    raise _refused(item, path, "this class-level statement")
            elif isinstance(item, ast.AnnAssign):
                name = item.target.id if isinstance(item.target, ast.Name) else None
                if name is None:
                    raise _refused(item, path, "this class-level annotation")
                if item.value is not None:  # `in_features : Final[int] = 4`
                    info.constants[name] = _literal(item.value, path)
                elif "NamedTuple" in info.bases:
                    info.fields.append(name)
            elif isinstance(item, (ast.Pass, ast.Expr)):
                continue
            else:
                raise _refused(item, path, "this class-level statement")
        self.classes[info.qualified] = info

    def check(self) -> None:
        """Refuse, before anything runs, code that isn't TorchScript."""
        for fn in self.functions.values():
            fn.check()
        for info in self.classes.values():
            for fn in info.methods.values():
                fn.check()

    def lookup(self, qualified: str) -> Any:
        if qualified in self.functions:
            return self.functions[qualified]
        info = self.classes.get(qualified)
        if info is not None and info.fields:
            return lambda *args: NamedTuple(info.qualified, info.fields, list(args))
        raise TorchScriptError(f"TorchScript code refers to {qualified}, which the archive does "
                               "not define")


def _namespace(path: str) -> str:
    """`__torch__/torch/nn/modules/linear.py` -> `__torch__.torch.nn.modules.linear`."""
    return path[:-3].replace("/", ".") if path.endswith(".py") else path.replace("/", ".")


def _literal(node: ast.AST, path: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise _refused(node, path, "a class attribute that is not a constant") from None


def _refused(node: ast.AST, path: str, what: str) -> TorchScriptError:
    line = getattr(node, "lineno", "?")
    return TorchScriptError(f"jit_load refuses the TorchScript code in code/{path} (line "
                            f"{line}): {what} is not TorchScript; nothing of the file was run")


class NamedTuple(tuple):
    """A TorchScript NamedTuple's value (PackedSequence...)."""

    def __new__(cls, qualified: str, fields: list, values: list) -> "NamedTuple":
        t = super().__new__(cls, values)
        t.qualified, t.fields = qualified, list(fields)  # type: ignore[attr-defined]
        return t


# --------------------------------------------------------------------------
# Functions


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class Function:
    """A TorchScript function (a method when its first parameter is `self`)."""

    def __init__(self, node: ast.FunctionDef, qualified: str, program: Program,
                 path: str) -> None:
        self.node, self.qualified, self.program, self.path = node, qualified, program, path
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs:
            raise _refused(node, path, "a function with *args, **kwargs or keyword-only "
                           "parameters")
        self.params = [a.arg for a in args.args]
        self.defaults = {a.arg: d for a, d in zip(args.args[len(args.args) -
                                                            len(args.defaults):], args.defaults)}
        self.is_method = bool(self.params) and self.params[0] == "self"

    @property
    def name(self) -> str:
        return self.node.name

    def check(self) -> None:
        local = set(self.params)
        for n in ast.walk(self.node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                local.add(n.id)
        for stmt in self.node.body:
            self._check(stmt, local)
        for d in self.defaults.values():
            self._check(d, local)

    def _check(self, node: ast.AST, local: set) -> None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in _TYPE_CONTEXT:
            for a in node.args[1:]:  # (the first argument is a type)
                self._check(a, local)
            return
        if not isinstance(node, _STATEMENTS + _EXPRESSIONS):
            raise _refused(node, self.path, f"`{type(node).__name__}`")
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                node.id not in local and node.id not in _BUILTIN_NAMES:
            raise _refused(node, self.path, f"the name `{node.id}`")
        if isinstance(node, ast.Attribute) and node.attr.startswith("__") and \
                not _namespace_chain(node.value):
            raise _refused(node, self.path, f"the attribute `{node.attr}`")
        for child in ast.iter_child_nodes(node):
            self._check(child, local)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        frame: dict[str, Any] = {}
        params = self.params
        if len(args) > len(params):
            raise TypeError(f"{self.name}() expected at most {len(params)} argument(s) but "
                            f"received {len(args)}")
        for p, a in zip(params, args):
            frame[p] = a
        for k, v in kwargs.items():
            if k not in params or k in frame:
                raise TypeError(f"{self.name}() got an unexpected or repeated argument '{k}'")
            frame[k] = v
        for p in params:
            if p not in frame:
                if p not in self.defaults:
                    raise TypeError(f"{self.name}() is missing value for argument '{p}'")
                frame[p] = _Interpreter(self, frame).eval(self.defaults[p])
        try:
            _Interpreter(self, frame).block(self.node.body)
        except _Return as r:
            return r.value
        return None


def _namespace_chain(node: ast.AST) -> bool:
    """Whether an attribute's owner is a TorchScript namespace (`torch`, `ops.prim`,
    `__torch__.x.y`), whose dunder names (`torch.__is__`) are operators."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in ("torch", "ops", "__torch__")


# --------------------------------------------------------------------------
# Statements and expressions


class _Namespace:
    """`torch`, `ops.prim`, `__torch__.a.b`: a dotted name resolved when called."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
           ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
           ast.MatMult: operator.matmul}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Is: operator.is_, ast.IsNot: operator.is_not,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


class _Interpreter:
    def __init__(self, fn: Function, frame: dict) -> None:
        self.fn, self.frame = fn, frame

    # -- statements --------------------------------------------------------
    def block(self, stmts: list) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s: ast.stmt) -> None:
        if isinstance(s, ast.Assign):
            value = self.eval(s.value)
            for target in s.targets:
                self.assign(target, value)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.assign(s.target, self.eval(s.value))
        elif isinstance(s, ast.AugAssign):
            current = self.eval(_as_load(s.target))
            self.assign(s.target, _BINOPS[type(s.op)](current, self.eval(s.value)))
        elif isinstance(s, ast.Expr):
            self.eval(s.value)
        elif isinstance(s, ast.Return):
            raise _Return(None if s.value is None else self.eval(s.value))
        elif isinstance(s, ast.If):
            self.block(s.body if _truth(self.eval(s.test)) else s.orelse)
        elif isinstance(s, ast.For):
            for item in self.eval(s.iter):
                self.assign(s.target, item)
                try:
                    self.block(s.body)
                except _Break:
                    break
                except _Continue:
                    continue
        elif isinstance(s, ast.While):
            while _truth(self.eval(s.test)):
                try:
                    self.block(s.body)
                except _Break:
                    break
                except _Continue:
                    continue
        elif isinstance(s, ast.Break):
            raise _Break()
        elif isinstance(s, ast.Continue):
            raise _Continue()
        elif isinstance(s, ast.Assert):
            if not _truth(self.eval(s.test)):
                raise AssertionError("" if s.msg is None else self.eval(s.msg))
        # ast.Pass: nothing

    def assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.frame[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(value)
            if len(values) != len(target.elts):
                raise RuntimeError(f"Expected {len(target.elts)} elements in a list but found "
                                   f"{len(values)}")
            for t, v in zip(target.elts, values):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            container = self.eval(target.value)
            key = self.eval(target.slice)
            if isinstance(container, (list, dict)):
                container[key] = value
            elif isinstance(container, Tensor):
                container[key] = value
            else:
                raise TorchScriptError(f"can't assign an item of a {type(container).__name__}")
        elif isinstance(target, ast.Attribute):
            owner = self.eval(target.value)
            _set_attribute(owner, target.attr, value)
        else:
            raise TorchScriptError(f"can't assign to {ast.unparse(target)}")

    # -- expressions -------------------------------------------------------
    def eval(self, e: ast.expr) -> Any:
        method = getattr(self, "e_" + type(e).__name__, None)
        if method is None:
            raise TorchScriptError(f"TorchScript expression `{ast.unparse(e)}` is not supported")
        return method(e)

    def e_Constant(self, e: ast.Constant) -> Any:
        return e.value

    def e_Name(self, e: ast.Name) -> Any:
        if e.id in self.frame:
            return self.frame[e.id]
        if e.id in ("torch", "ops", "__torch__"):
            return _Namespace(e.id)
        if e.id == "CONSTANTS":
            return _Constants(self.fn.program.constants)
        if e.id in _PY_BUILTINS:
            return _PY_BUILTINS[e.id]
        if e.id == "inf":
            return math.inf
        if e.id == "nan":
            return math.nan
        if e.id == "math":
            return _Namespace("math")
        raise NameError(f"name '{e.id}' is not defined (TorchScript {self.fn.qualified})")

    def e_Attribute(self, e: ast.Attribute) -> Any:
        owner = self.eval(e.value)
        if isinstance(owner, _Namespace):
            path = f"{owner.path}.{e.attr}"
            if owner.path.startswith("__torch__"):
                program = self.fn.program
                if path in program.functions or path in program.classes:
                    return program.lookup(path)
            return _Namespace(path)
        if isinstance(owner, _Constants):
            return owner.get(e.attr)
        return _get_attribute(owner, e.attr)

    def e_Call(self, e: ast.Call) -> Any:
        if isinstance(e.func, ast.Name) and e.func.id in _TYPE_CONTEXT:
            return self.typed_call(e)
        fn = self.eval(e.func)
        args: list = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                args.extend(self.eval(a.value))
            else:
                args.append(self.eval(a))
        kwargs = {k.arg: self.eval(k.value) for k in e.keywords}
        if isinstance(fn, _Namespace):
            return call_builtin(fn.path, args, kwargs)
        if isinstance(fn, _Bound):
            return fn(*args, **kwargs)
        if callable(fn):
            return fn(*args, **kwargs)
        raise TorchScriptError(f"`{ast.unparse(e.func)}` is not callable")

    def typed_call(self, e: ast.Call) -> Any:
        name = e.func.id  # type: ignore[union-attr]
        if name == "uninitialized":
            return None
        value = self.eval(e.args[1]) if name != "isinstance" else self.eval(e.args[0])
        if name == "isinstance":
            return _isinstance(value, e.args[1])
        return value

    def e_Subscript(self, e: ast.Subscript) -> Any:
        value = self.eval(e.value)
        key = self.eval(e.slice)
        if isinstance(value, (list, tuple, str, dict, Tensor)):
            return value[key]
        raise TorchScriptError(f"can't index a {type(value).__name__}")

    def e_Slice(self, e: ast.Slice) -> slice:
        return slice(*(None if p is None else self.eval(p) for p in (e.lower, e.upper, e.step)))

    def e_Tuple(self, e: ast.Tuple) -> tuple:
        return tuple(self.eval(v) for v in e.elts)

    def e_List(self, e: ast.List) -> list:
        return [self.eval(v) for v in e.elts]

    def e_Dict(self, e: ast.Dict) -> dict:
        return {self.eval(k): self.eval(v) for k, v in zip(e.keys, e.values)}  # type: ignore

    def e_UnaryOp(self, e: ast.UnaryOp) -> Any:
        v = self.eval(e.operand)
        if isinstance(e.op, ast.Not):
            return not _truth(v)
        if isinstance(e.op, ast.USub):
            return -v
        if isinstance(e.op, ast.UAdd):
            return +v
        return ~v

    def e_BinOp(self, e: ast.BinOp) -> Any:
        return _BINOPS[type(e.op)](self.eval(e.left), self.eval(e.right))

    def e_BoolOp(self, e: ast.BoolOp) -> Any:
        is_and = isinstance(e.op, ast.And)
        value: Any = is_and
        for v in e.values:
            value = self.eval(v)
            if _truth(value) != is_and:
                return value
        return value

    def e_Compare(self, e: ast.Compare) -> Any:
        left = self.eval(e.left)
        for op, right_node in zip(e.ops, e.comparators):
            right = self.eval(right_node)
            if not _truth(_COMPARE[type(op)](left, right)):
                return False
            left = right
        return True

    def e_IfExp(self, e: ast.IfExp) -> Any:
        return self.eval(e.body) if _truth(self.eval(e.test)) else self.eval(e.orelse)

    def e_ListComp(self, e: ast.ListComp) -> list:
        out: list = []
        self._comprehension(e.generators, 0, lambda: out.append(self.eval(e.elt)))
        return out

    def _comprehension(self, gens: list, i: int, emit: Callable) -> None:
        if i == len(gens):
            emit()
            return
        g = gens[i]
        for item in self.eval(g.iter):
            self.assign(g.target, item)
            if all(_truth(self.eval(c)) for c in g.ifs):
                self._comprehension(gens, i + 1, emit)


def _as_load(target: ast.expr) -> ast.expr:
    node = ast.parse(ast.unparse(target), mode="eval").body
    return node


def _truth(v: Any) -> bool:
    return bool(v)


def _isinstance(value: Any, type_node: ast.expr) -> bool:
    text = ast.unparse(type_node)
    if text == "Tensor":
        return isinstance(value, Tensor)
    if text in ("int", "float", "bool", "str"):
        return type(value).__name__ == text
    if text.startswith("List"):
        return isinstance(value, list)
    if text.startswith("Tuple"):
        return isinstance(value, tuple)
    if text.startswith("Dict"):
        return isinstance(value, dict)
    return False


class _Constants:
    __slots__ = ("values",)

    def __init__(self, values: tuple) -> None:
        self.values = values

    def get(self, name: str) -> Any:
        if not (name.startswith("c") and name[1:].isdigit()) or int(name[1:]) >= \
                len(self.values):
            raise TorchScriptError(f"CONSTANTS.{name}: the archive has no such constant")
        return self.values[int(name[1:])]


class _Bound:
    """A method of a script module or object, bound to it."""

    __slots__ = ("fn", "owner")

    def __init__(self, fn: Any, owner: Any) -> None:
        self.fn, self.owner = fn, owner

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(self.owner, *args, **kwargs)


# -- attributes of values: only what TorchScript objects expose ---------------


def _get_attribute(owner: Any, name: str) -> Any:
    if isinstance(owner, ScriptModule):
        return _module_attribute(owner, name)
    if isinstance(owner, NamedTuple) and name in owner.fields:  # type: ignore[attr-defined]
        return owner[owner.fields.index(name)]  # type: ignore[attr-defined]
    if isinstance(owner, ScriptObject):
        if name in owner.state:
            return owner.state[name]
    if isinstance(owner, Tensor) and name in _TENSOR_ATTRIBUTES:
        return _TENSOR_ATTRIBUTES[name](owner)
    raise TorchScriptError(f"TorchScript code reads `.{name}` of a {type(owner).__name__}, "
                           "which is not supported here")


def _module_attribute(m: ScriptModule, name: str) -> Any:
    """A script module's attribute as TorchScript code sees it."""
    d = m.__dict__
    if name == "training":
        return m.training
    for table in ("_parameters", "_buffers", "_modules", "_attributes", "_constants"):
        t = d.get(table)
        if t is not None and name in t:
            return t[name]
    method = m.find_method(name)
    if method is not None:
        code = method.code
        return _Bound(code, m) if code is not None else method
    if name == "forward":
        return m.forward
    raise TorchScriptError(f"TorchScript code reads `.{name}` of module {m._type_name}, which "
                           "has no such attribute")


def _set_attribute(owner: Any, name: str, value: Any) -> None:
    if isinstance(owner, ScriptModule):
        d = owner.__dict__
        if name == "training":
            owner.train(bool(value))
            return
        for table in ("_parameters", "_buffers", "_attributes"):
            t = d.get(table)
            if t is not None and name in t:
                t[name] = value
                return
    raise TorchScriptError(f"TorchScript code sets `.{name}` of a {type(owner).__name__}, "
                           "which is not supported here")


_TENSOR_ATTRIBUTES: dict[str, Callable] = {
    "shape": lambda t: list(t.shape), "dtype": lambda t: t.dtype,
    "device": lambda t: "cpu", "requires_grad": lambda t: t.requires_grad,
    "is_cuda": lambda t: False, "ndim": lambda t: t.ndim, "T": lambda t: t.T,
}


def _format(fmt: str, *args: Any) -> str:
    return fmt.format(*[_fmt_value(a) for a in args])


def _fmt_value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt_value(x) for x in v) + "]"
    return str(v)


def _raise(msg: str = "Exception", cls: str = "builtins.RuntimeError") -> None:
    kinds = {"builtins.ValueError": ValueError, "builtins.TypeError": TypeError,
             "builtins.IndexError": IndexError, "builtins.KeyError": KeyError,
             "builtins.NotImplementedError": NotImplementedError,
             "builtins.AssertionError": AssertionError}
    raise kinds.get(cls, RuntimeError)(msg)


_PY_BUILTINS: dict[str, Any] = {
    "int": lambda x=0: int(x), "float": lambda x=0.0: float(x), "bool": lambda x=False: bool(x),
    "str": str, "len": len, "range": range, "print": print, "list": list, "tuple": tuple,
    "min": min, "max": max, "abs": abs, "zip": lambda *a: list(zip(*a)),
    "enumerate": lambda *a: list(enumerate(*a)), "round": round, "divmod": divmod,
    "sum": sum, "any": any, "all": all, "sorted": sorted,
    "reversed": lambda x: list(reversed(x)),
    "getattr": lambda owner, name, *default: _get_attribute(owner, name),
    "hasattr": lambda owner, name: _has_attribute(owner, name),
}


def _has_attribute(owner: Any, name: str) -> bool:
    try:
        _get_attribute(owner, name)
    except (TorchScriptError, AttributeError):
        return False
    return True


# --------------------------------------------------------------------------
# torch.<name>(...) and ops.<ns>.<name>(...)


def _has_tensor(x: Any) -> bool:
    if isinstance(x, Tensor):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_tensor(v) for v in x)
    return False


def _scalar(x: Any) -> Any:
    return x


def _device(*args: Any, **kwargs: Any) -> str:
    return "cpu"


def _dtype_arg(d: Any) -> Any:
    if d is None or isinstance(d, dtype):
        return d
    return aten.dtype_of_code(int(d))


def _creation(name: str) -> Callable:
    """torch.zeros(size, *, dtype, layout, device, pin_memory) on our creation ops."""
    def create(size: Any, *args: Any, dtype: Any = None, layout: Any = None,
               device: Any = None, pin_memory: Any = None, requires_grad: bool = False,
               **kw: Any) -> Tensor:
        fn = REGISTRY[name].fn
        sizes = list(size) if isinstance(size, (list, tuple)) else [size]
        if name == "full":
            return fn(sizes, *args, dtype=_dtype_arg(dtype))
        return fn(*sizes, dtype=_dtype_arg(dtype))
    return create


def _like(name: str) -> Callable:
    def create(x: Tensor, *args: Any, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Tensor:
        return REGISTRY[name].fn(x, *args, dtype=_dtype_arg(dtype))
    return create


def _to(x: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """torch.to's overloads: (device, dtype, ...), (dtype, ...), (other, ...)."""
    target = None
    for a in list(args[:2]) + [kwargs.get("dtype"), kwargs.get("other")]:
        if isinstance(a, Tensor):
            target = a.dtype
            break
        if isinstance(a, (int, dtype)) and not isinstance(a, bool):
            target = _dtype_arg(a)
            break
    copy = bool(kwargs.get("copy", False))
    if target is None:
        return x.clone() if copy else x
    return REGISTRY["to"].fn(x, dtype=target, copy=copy)


def _slice(x: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Any:
    if not isinstance(x, Tensor):  # aten::slice.t on a list
        return x[slice(dim, start, end)] if isinstance(x, (list, str)) else x
    key = (slice(None),) * (dim % max(x.ndim, 1)) + (slice(start, end, step),)
    return x[key]


def _size(x: Tensor, dim: Any = None) -> Any:
    return list(x.shape) if dim is None else int(x.shape[dim])


def _tensor(data: Any, dtype: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """torch.tensor(...) of Python numbers: floats in the default dtype, ints int64."""
    return torch_tensor(data, dtype=_dtype_arg(dtype), requires_grad=requires_grad)


def _append(lst: list, x: Any) -> list:
    lst.append(x)
    return lst


# Python forms of TorchScript's scalar and list operators (no tensor argument)
_SCALAR_OPS: dict[str, Callable] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "div": operator.truediv, "floordiv": operator.floordiv, "remainder": operator.mod,
    "floor_divide": operator.floordiv, "pow": operator.pow, "neg": operator.neg,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "gt": operator.gt,
    "le": operator.le, "ge": operator.ge, "__and__": operator.and_, "__or__": operator.or_,
    "__xor__": operator.xor, "abs": abs, "floor": lambda x: math.floor(x),
    "ceil": lambda x: math.ceil(x), "sqrt": math.sqrt, "exp": math.exp, "log": math.log,
    "tanh": math.tanh, "sin": math.sin, "cos": math.cos, "min": min, "max": max,
    "len": len, "list": list, "sum": sum,
}

_BUILTINS: dict[str, Callable] = {
    "torch.__is__": operator.is_, "torch.__isnot__": operator.is_not,
    "torch.__not__": operator.not_, "torch.__contains__": lambda c, x: x in c,
    "torch.__getitem__": lambda c, k: c[k], "torch.__range_length": lambda lo, hi, st:
        max(0, (hi - lo + st - (1 if st > 0 else -1)) // st),
    "torch.__derive_index": lambda i, start, step: start + i * step,
    "torch.format": _format, "torch.warn": lambda *a, **k: None,
    "torch.append": _append, "torch.dim": lambda x: x.ndim,
    "torch.size": _size, "torch.numel": lambda x: x.numel(),
    "torch.len": lambda x: x.shape[0] if isinstance(x, Tensor) else len(x),
    "torch.device": _device, "torch.to": _to, "torch.slice": _slice,
    "torch.tensor": _tensor, "torch.detach": lambda x: x.detach(),
    "torch.is_floating_point": lambda x: x.is_floating_point(),
    "torch.contiguous": lambda x, memory_format=None: x.contiguous(),
    "torch.zeros": _creation("zeros"), "torch.ones": _creation("ones"),
    "torch.empty": _creation("zeros"), "torch.full": _creation("full"),
    "torch.zeros_like": _like("zeros_like"), "torch.ones_like": _like("ones_like"),
    "torch.empty_like": _like("zeros_like"), "torch.full_like": _like("full_like"),
    "torch.keys": lambda d: list(d.keys()), "torch.values": lambda d: list(d.values()),
    "torch.items": lambda d: list(d.items()), "torch.copy": lambda x: list(x),
    "torch.str": str, "torch.Float": float, "torch.Int": int, "torch.Bool": bool,
    "torch.ScalarImplicit": lambda x: x.item() if isinstance(x, Tensor) else x,
    "torch.FloatImplicit": lambda x: float(x), "torch.IntImplicit": lambda x: int(x),
    "ops.prim.RaiseException": _raise, "ops.prim.NumToTensor": lambda n: torch_tensor(n),
    "ops.prim.dtype": lambda x: x.dtype, "ops.prim.device": lambda x: "cpu",
    "ops.prim.is_cuda": lambda x: False, "ops.prim.is_nested": lambda x: False,
    "ops.prim.is_sparse": lambda x: False, "ops.prim.is_mkldnn": lambda x: False,
    "ops.prim.is_quantized": lambda x: False, "ops.prim.is_meta": lambda x: False, "ops.prim.unchecked_unwrap_optional": _scalar,
    "ops.prim.min": min, "ops.prim.max": max, "ops.prim.abs": abs,
    "ops.prim.data": lambda x: x.detach(), "ops.prim.requires_grad": lambda x: x.requires_grad,
    "ops.prim.shape": lambda x: list(x.shape), "ops.prim.layout": lambda x: 0,
    "ops.aten.format": _format, "ops.aten.warn": lambda *a, **k: None,
    "math.sqrt": math.sqrt, "math.exp": math.exp, "math.log": math.log, "math.pi": math.pi,
    "math.floor": math.floor, "math.ceil": math.ceil,
}


def call_builtin(path: str, args: list, kwargs: dict) -> Any:
    """`torch.<name>(...)`, `ops.<ns>.<name>(...)` (path is the dotted name)."""
    fn = _BUILTINS.get(path)
    if fn is not None:
        return fn(*args, **kwargs)
    head, _, name = path.partition(".")
    if head == "ops":
        namespace, _, name = name.partition(".")
        if namespace != "aten":
            raise TorchScriptError(f"the TorchScript operator {path} is not supported here")
    elif head != "torch":
        raise TorchScriptError(f"{path} is not a TorchScript builtin")
    if not (_has_tensor(args) or _has_tensor(list(kwargs.values()))):
        scalar = _SCALAR_OPS.get(name)
        if scalar is not None:
            return scalar(*args, **kwargs)
    kwargs = {k: (_dtype_arg(v) if k == "dtype" else v) for k, v in kwargs.items()}
    try:
        fn, args2, kwargs2 = aten.resolve(name, tuple(args), kwargs)
    except aten.Unsupported:
        raise TorchScriptError(f"the operator torch.{name} (aten::{name}) is not supported "
                               "here") from None
    return fn(*args2, **kwargs2)


__all__ = ["Program", "Function", "TorchScriptError", "NamedTuple", "call_builtin"]
