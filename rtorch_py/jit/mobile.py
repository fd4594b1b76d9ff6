"""jit_save_for_mobile(): the archive PyTorch's lite interpreter loads
(`torch.jit._load_for_lite_interpreter()`, libtorch's `_load_for_mobile()`).

It is jit_save()'s archive with one file more, `<name>/bytecode.pkl`: each method
of each class compiled for the lite interpreter, a register machine. The pickle
is a tuple, the bytecode version then one entry per method:

    ("__torch__.<class>.<method>",
     (("instructions", ((opcode, X, N), ...)),
      ("operators", ((aten name, overload name, arguments given), ...)),
      ("constants", (the values and tensors LOADC pushes, ...)),
      ("types", (the type of each list LIST_CONSTRUCT builds, ...)),
      ("register_size", the registers used)),
     (("arguments", ((("name", n), ("type", t), ("default_value", None)), ...)),
      ("returns", (...))))

What is compiled is the TorchScript jit_save() writes for a traced method
(codegen.py): statements `name = torch.<op>(...)`, attribute reads, a mode's trace
chosen by `self.training` (the callee's body inlined, as PyTorch's export does),
`return`. The instructions used:

    STOREN X N     the N arguments (self first) into registers X..X+N-1
    LOAD X, STORE X    a register onto the stack, the top of the stack into one
    LOADC X        constant X
    GET_ATTR X     slot X of the module on the stack: the lite interpreter makes a
                   module's class from its pickled state, so X is the attribute's
                   position in data.pkl's dict
    OP X           operator X on the arguments on the stack (the interpreter adds the
                   schema's defaults after those given); its results pushed
    LIST_CONSTRUCT T N, TUPLE_CONSTRUCT N    a list (of types[T]) or a tuple of N
                   values from the stack
    JF X, JMP X    jumps relative to the instruction (JF when the top is false)
    RET            the top of the stack is the result

Operators are named by aten name and overload. The overload follows from the
arguments (`add.Tensor` or `add.Scalar`), which takes the operator's schema, declared
on the op (`mobile="self, other: Tensor, *, alpha=1"`, ops/registry.py): OVERLOADS
has those the lite interpreter is given here; a call of another
operator, or a construct the compiler does not know, is refused, naming it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..ops.registry import REGISTRY
from ..tensor import Tensor
from . import archive
from .aten import Unsupported, aten_name
from .files import archive_parts, archive_target

BYTECODE_VERSION = 8  # (what PyTorch 2.x writes; its lite interpreter reads 4 to 8 or more)

REQUIRED = object()  # (an overload parameter without a default)


@dataclass(frozen=True)
class Overload:
    """One overload of an aten operator: its name, its parameters in order (with
    their defaults, REQUIRED if none; keyword-only after `*`), the parameters one of
    which must hold a tensor (`tensors`) and those none of which may (`scalars`) for
    it, and its `int[N]` parameters (a single int given for one is N of it, as
    TorchScript's compiler makes it)."""
    name: str
    params: tuple
    keyword_only: frozenset = frozenset()
    tensors: tuple = ()
    scalars: tuple = ()
    int_lists: tuple = ()  # ((parameter, N), ...)


def _overload(name: str, schema: str) -> Overload:
    """An overload from a Python-like schema: "self, other: Tensor, *, alpha=1" (the
    annotation `Tensor` says the overload is for a call where one of the parameters so
    annotated holds a tensor, `Scalar` where none of them does, `int[N]` that a single
    int given for it is N of it)."""
    args = ast.parse(f"def f({schema}): pass").body[0].args  # type: ignore[attr-defined]
    plain = [(a.arg, REQUIRED) for a in args.args]
    for i, d in enumerate(args.defaults, len(plain) - len(args.defaults)):
        plain[i] = (plain[i][0], ast.literal_eval(d))
    kw = [(a.arg, REQUIRED if d is None else ast.literal_eval(d))
          for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    kinds: dict[str, list[str]] = {"Tensor": [], "Scalar": []}
    int_lists = []
    for a in args.args + args.kwonlyargs:
        note = a.annotation
        if isinstance(note, ast.Subscript):  # int[N]
            int_lists.append((a.arg, ast.literal_eval(note.slice)))
        elif isinstance(note, ast.Name):
            kinds[note.id].append(a.arg)
    return Overload(name, tuple(plain + kw), frozenset(a.arg for a in args.kwonlyargs),
                    tuple(kinds["Tensor"]), tuple(kinds["Scalar"]), tuple(int_lists))


def _overloads(schema: str | Mapping[str, str]) -> list[Overload]:
    """A declaration's `mobile=`: one schema (overload ""), or {overload: schema}."""
    forms = {"": schema} if isinstance(schema, str) else schema
    return [_overload(name, s) for name, s in forms.items()]


def _max_pool(nd: int) -> str:
    return f"self, kernel_size: int[{nd}], stride: int[{nd}]=[], padding: int[{nd}]=0, " \
           f"dilation: int[{nd}]=1, ceil_mode=False"


# The aten operators the nn functions are written as (jit/aten.py's entries); they are
# no ops of the registry, so no op declaration holds their schema. The ops' own are
# declared on them (`mobile=`, ops/registry.py).
_NN_SCHEMAS: dict[str, str] = {
    **{name: "self" for name in ("relu6", "hardswish", "hardsigmoid")},
    "gelu": "self, *, approximate='none'",
    "leaky_relu": "self, negative_slope=0.01",
    "softplus": "self, beta=1, threshold=20",
    "linear": "input, weight, bias=None",
    "max_pool1d": _max_pool(1), "max_pool2d": _max_pool(2), "max_pool3d": _max_pool(3),
    "avg_pool2d": "self, kernel_size: int[2], stride: int[2]=[], padding: int[2]=0, "
                  "ceil_mode=False, count_include_pad=True, divisor_override=None",
    "batch_norm": "input, weight, bias, running_mean, running_var, training, momentum, eps, "
                  "cudnn_enabled",
    "layer_norm": "input, normalized_shape, weight=None, bias=None, eps=1e-05, "
                  "cudnn_enable=True",
    "dropout": "input, p, train",
}
# aten name -> its overloads, in the order tried
OVERLOADS: dict[str, list[Overload]] = {
    **{aten_name(op): _overloads(spec.mobile) for op, spec in REGISTRY.items()
       if spec.mobile is not None},
    **{name: _overloads(schema) for name, schema in _NN_SCHEMAS.items()},
}


def jit_save_for_mobile(obj: Any, path: Any) -> Any:
    """Write a traced script function or module as the lite interpreter's archive
    (PyTorch's `torch.jit._load_for_lite_interpreter()` loads it)."""
    parts = archive_parts(obj)
    bytecode = (BYTECODE_VERSION, *_compile(parts.code, parts.root, parts.constants))
    target, name = archive_target(path)
    archive.write(target, parts.root, parts.code, parts.constants, name, bytecode=bytecode)
    return obj


# --------------------------------------------------------------------------
# Compiling


def _compile(code: dict[str, str], root: archive.ModuleObject, constants: list[Tensor]
             ) -> list[tuple]:
    """Every method of every class of the code files, as bytecode entries."""
    objects: dict[str, archive.ModuleObject] = {}

    def visit(obj: archive.ModuleObject) -> None:
        objects.setdefault(obj.qualified_name, obj)
        for v in obj.state.values():
            if isinstance(v, archive.ModuleObject):
                visit(v)
    visit(root)
    out = []
    for path, text in code.items():
        prefix = path.removesuffix(".py").replace("/", ".")
        for cls in ast.parse(text).body:
            if not isinstance(cls, ast.ClassDef):
                continue
            qualified = f"{prefix}.{cls.name}"
            methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
            for fn in methods.values():
                out.append(_Function(qualified, methods, objects, constants).compile(fn))
    return out


@dataclass
class _Function:
    """One method being compiled (its callees of the same class inlined)."""
    qualified: str  # its class
    methods: dict[str, ast.FunctionDef]
    objects: dict[str, archive.ModuleObject]
    tensors: list[Tensor]
    instructions: list[list] = field(default_factory=list)
    operators: list[tuple] = field(default_factory=list)
    constants: list[Any] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    registers: int = 0

    def compile(self, fn: ast.FunctionDef) -> tuple:
        names = [a.arg for a in fn.args.args]
        # (register, module object or None) of each name; self's is its module's
        scope = {n: (self.register(), self.objects.get(self.qualified) if i == 0 else None)
                 for i, n in enumerate(names)}
        self.emit("STOREN", 1, len(names))
        self.statements(fn.body, scope, None)
        schema = (("arguments", tuple(_argument(n, self._annotation(a))
                                      for n, a in zip(names, fn.args.args))),
                  ("returns", (_argument("", ast.unparse(fn.returns) if fn.returns
                                         else "Tensor"),)))
        table = (("instructions", tuple(tuple(i) for i in self.instructions)),
                 ("operators", tuple(self.operators)),
                 ("constants", tuple(self.constants)),
                 ("types", tuple(self.types)),
                 ("register_size", self.registers))
        return f"{self.qualified}.{fn.name}", table, schema

    def _annotation(self, a: ast.arg) -> str:
        return self.qualified if a.arg == "self" or a.annotation is None \
            else ast.unparse(a.annotation)

    # -- pieces --------------------------------------------------------------

    def emit(self, op: str, x: int = 0, n: int = 0) -> int:
        self.instructions.append([op, x, n])
        return len(self.instructions) - 1

    def register(self) -> int:
        self.registers += 1
        return self.registers

    def constant(self, value: Any) -> int:
        for i, c in enumerate(self.constants):  # (repr: -0.0 is not 0.0, nan is nan)
            if (c is value) if isinstance(value, Tensor) or isinstance(c, Tensor) \
                    else (type(c) is type(value) and repr(c) == repr(value)):
                return i
        self.constants.append(value)
        return len(self.constants) - 1

    def operator(self, aten: str, overload: str, given: int) -> int:
        entry = (f"aten::{aten}", overload, given)
        if entry not in self.operators:
            self.operators.append(entry)
        return self.operators.index(entry)

    def refuse(self, node: ast.AST, why: str) -> Unsupported:
        return Unsupported(f"jit_save_for_mobile: {why} (`{ast.unparse(node)}`); the lite "
                           "interpreter's bytecode is written here for traced functions and "
                           "modules of the operators in rtorch_py.jit.mobile.OVERLOADS; "
                           "jit_save() writes every trace")

    # -- statements ------------------------------------------------------------

    def statements(self, body: list[ast.stmt], scope: dict, result: int | None) -> None:
        """Compile a body; its `return` stores into register `result` (an inlined
        callee) or returns (RET)."""
        for st in body:
            if isinstance(st, ast.Return) and st.value is not None:
                self.expression(st.value, scope)
                if result is None:
                    self.emit("RET")
                else:
                    self.emit("STORE", result)
            elif isinstance(st, ast.Assign) and len(st.targets) == 1:
                self.assign(st.targets[0], st.value, scope)
            elif isinstance(st, ast.If):
                self.expression(st.test, scope)
                jf = self.emit("JF")
                self.statements(st.body, scope, result)
                jmp = self.emit("JMP")
                self.instructions[jf][1] = len(self.instructions) - jf
                self.statements(st.orelse, scope, result)
                self.instructions[jmp][1] = len(self.instructions) - jmp
            else:
                raise self.refuse(st, "a statement the compiler does not know")

    def assign(self, target: ast.expr, value: ast.expr, scope: dict) -> None:
        if isinstance(target, ast.Name):
            kind = self.expression(value, scope)
            reg = scope[target.id][0] if target.id in scope else self.register()
            scope[target.id] = (reg, kind)
            self.emit("STORE", reg)
            return
        raise self.refuse(target, "an assignment to a structure (a traced list, tuple or "
                                  "dict argument, or an operator of several results)")

    # -- expressions: each pushes one value and gives its module class (or None) ----

    def expression(self, e: ast.expr, scope: dict) -> Any:
        if isinstance(e, ast.Name):
            if e.id not in scope:
                raise self.refuse(e, "an unknown name")
            reg, kind = scope[e.id]
            self.emit("LOAD", reg)
            return kind
        if isinstance(e, ast.Constant) or (isinstance(e, ast.UnaryOp)
                                           and isinstance(e.op, ast.USub)
                                           and isinstance(e.operand, ast.Constant)):
            self.emit("LOADC", self.constant(ast.literal_eval(e)))
            return None
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) \
                and e.value.id == "CONSTANTS":
            self.emit("LOADC", self.constant(self.tensors[int(e.attr.removeprefix("c"))]))
            return None
        if isinstance(e, ast.Attribute):
            return self.attribute(e, e.value, e.attr, scope)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "getattr" \
                and len(e.args) == 2 and isinstance(e.args[1], ast.Constant):
            return self.attribute(e, e.args[0], e.args[1].value, scope)
        if isinstance(e, (ast.List, ast.Tuple)):
            for v in e.elts:
                self.expression(v, scope)
            if isinstance(e, ast.Tuple):
                self.emit("TUPLE_CONSTRUCT", len(e.elts))
            else:
                self.types.append(self.list_type(e))
                self.emit("LIST_CONSTRUCT", len(self.types) - 1, len(e.elts))
            return None
        if isinstance(e, ast.Call):
            self.call(e, scope)
            return None
        raise self.refuse(e, "an expression the compiler does not know")

    def list_type(self, e: ast.List) -> str:
        kinds = {type(ast.literal_eval(v)).__name__ if isinstance(v, (ast.Constant, ast.UnaryOp))
                 else "Tensor" for v in e.elts}
        if len(kinds) > 1:
            raise self.refuse(e, "a list of mixed types")
        return f"List[{kinds.pop() if kinds else 'int'}]"

    def attribute(self, e: ast.expr, owner: ast.expr, name: str, scope: dict) -> Any:
        obj = self.expression(owner, scope)
        if not isinstance(obj, archive.ModuleObject) or name not in obj.state:
            raise self.refuse(e, "an attribute of something other than a module")
        self.emit("GET_ATTR", list(obj.state).index(name))
        value = obj.state[name]
        return value if isinstance(value, archive.ModuleObject) else None

    def call(self, e: ast.Call, scope: dict) -> None:
        """A call's result pushed: an operator's, or an inlined method's."""
        f = e.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                f.value.id == "torch":
            return self.operator_call(e, f.attr, scope)
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                f.value.id in scope and f.attr in self.methods and not e.keywords:
            callee = self.methods[f.attr]
            names = [a.arg for a in callee.args.args]
            inner = {names[0]: scope[f.value.id]}
            for n, a in zip(names[1:], e.args):
                self.expression(a, scope)
                inner[n] = (self.register(), None)
                self.emit("STORE", inner[n][0])
            out = self.register()
            self.statements(callee.body, inner, out)
            self.emit("LOAD", out)
            return None
        raise self.refuse(e, "a call the compiler does not know")

    def operator_call(self, e: ast.Call, aten: str, scope: dict) -> None:
        given: dict[str, ast.expr] = {}
        overload = self.resolve(e, aten, scope, given)
        last = max(i for i, (p, _) in enumerate(overload.params) if p in given)
        int_lists = dict(overload.int_lists)
        for p, default in overload.params[:last + 1]:
            value = given.get(p)
            if value is None and default is REQUIRED:
                raise self.refuse(e, f"aten::{aten} without its argument `{p}`")
            if value is not None and not (p in int_lists and _is_int(value)):
                self.expression(value, scope)
                continue
            v = default if value is None else ast.literal_eval(value)
            items = [v] * int_lists[p] if isinstance(v, int) and p in int_lists else v
            if isinstance(items, list):
                for item in items:
                    self.emit("LOADC", self.constant(item))
                self.types.append("List[int]")
                self.emit("LIST_CONSTRUCT", len(self.types) - 1, len(items))
            else:
                self.emit("LOADC", self.constant(items))
        self.emit("OP", self.operator(aten, overload.name, last + 1))

    def resolve(self, e: ast.Call, aten: str, scope: dict, given: dict) -> Overload:
        """The overload a call names (its arguments by parameter name into `given`)."""
        for ov in OVERLOADS.get(aten, ()):
            positional = [p for p, _ in ov.params if p not in ov.keyword_only]
            names = dict(zip(positional, e.args))
            if len(e.args) > len(positional):
                continue
            names.update({k.arg: k.value for k in e.keywords if k.arg})
            if not set(names) <= {p for p, _ in ov.params}:
                continue
            if ov.tensors and not any(_is_tensor(names.get(p), scope) for p in ov.tensors):
                continue
            if any(_is_tensor(names.get(p), scope) for p in ov.scalars):
                continue
            given.update(names)
            return ov
        if aten in OVERLOADS:
            raise self.refuse(e, f"aten::{aten} with these arguments has no overload here")
        raise self.refuse(e, f"the operator aten::{aten} is not given to the lite "
                             "interpreter here")


def _is_tensor(e: ast.expr | None, scope: dict) -> bool:
    """Whether an argument of the code is a tensor: in traced code, names and
    calls are, numbers (constants) are not."""
    if e is None or isinstance(e, (ast.Constant, ast.UnaryOp, ast.List)):
        return False
    return True


def _is_int(e: ast.expr) -> bool:
    return isinstance(e, (ast.Constant, ast.UnaryOp)) and type(ast.literal_eval(e)) is int


def _argument(name: str, type_: str) -> tuple:
    return (("name", name), ("type", type_), ("default_value", None))


__all__ = ["jit_save_for_mobile", "OVERLOADS", "BYTECODE_VERSION"]
