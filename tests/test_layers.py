"""The package's floors hold: every module of rtorch_py/ imports only from its
own floor or the floors below it, and never imports a module of the package
inside a function (the way to dodge an import circle). Read from the source
with `ast`, nothing is imported.

LAYERS is the floor plan, bottom up (README's "Layout" describes it). A module
belongs to the floor whose entry names it, or names the package it is in (the
longest such name); a module in no floor fails the test, so a new module is
given its place here. Imports of other packages inside functions are fine
(optional dependencies: rpy2, ml_dtypes...).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rtorch_py"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("ground", ("rtorch_py.engine", "rtorch_py.printing", "rtorch_py.containers", "rtorch_py.modes",
                "rtorch_py.meta", "rtorch_py.runtime", "rtorch_py.random",
                "rtorch_py.formals", "rtorch_py.compiled")),
    ("the tensor", ("rtorch_py.tensor", "rtorch_py.tensor_methods")),  # (its methods' stub)
    ("constructors", ("rtorch_py.constructors",)),
    ("ops: registry", ("rtorch_py.ops.registry",)),
    ("ops: name inference", ("rtorch_py.ops.names",)),
    ("ops: dispatch", ("rtorch_py.ops.dispatch", "rtorch_py.ops.complex_half")),
    ("ops: recording", ("rtorch_py.ops.recording",)),
    ("ops: operands, views, kernels", ("rtorch_py.ops.operands", "rtorch_py.ops.views",
                                       "rtorch_py.ops.nn_kernels", "rtorch_py.ops.sum_kernel",
                                       "rtorch_py.ops.bn_kernel", "rtorch_py.ops.lstm_kernel",
                                       "rtorch_py.ops.parallel", "rtorch_py.ops.onednn",
                                       "rtorch_py.ops.sleef",
                                       "rtorch_py.ops.samples")),
    ("ops: families", tuple("rtorch_py.ops." + f for f in (
        "pointwise", "special", "activation", "reduction", "sorting", "shape", "indexing",
        "linalg", "distance", "fft", "conversion", "creation", "nn_primitives", "pooling", "ctc",
        "upsample", "grid_sample", "sparse", "memory"))),
    ("ops: out forms", ("rtorch_py.ops.out_forms",)),
    ("ops", ("rtorch_py.ops",)),
    ("user API", ("rtorch_py.function", "rtorch_py.autograd", "rtorch_py.gradcheck",
                  "rtorch_py.forward_ad", "rtorch_py.named", "rtorch_py.sparse",
                  "rtorch_py.quantized", "rtorch_py.amp", "rtorch_py.contrib")),
    ("user API over autograd", ("rtorch_py.autograd_functional", "rtorch_py.func",
                                "rtorch_py.graph", "rtorch_py.gradgradcheck")),
    ("library", ("rtorch_py.nn", "rtorch_py.optim", "rtorch_py.data",
                 "rtorch_py.serialization", "rtorch_py.distributions")),
    ("TorchScript and ONNX", ("rtorch_py.jit",)),
    ("public face", ("rtorch_py",)),
    ("R bridge", ("rtorch_py.r",)),
    ("tools", ("rtorch_py.tools",)),
]

def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = modules()


def floor(module: str) -> int | None:
    """The index in LAYERS of the module's floor (None: in no floor)."""
    best, found = -1, None
    for i, (_, names) in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, found = len(name), i
    return found


def imports(module: str) -> list[tuple[str, int, bool]]:
    """(imported module of the package, line, inside a function) for each import."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inside.update(id(n) for n in ast.walk(node) if isinstance(n, (ast.Import,
                                                                           ast.ImportFrom)))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            # `from pkg import mod` imports the module pkg.mod; `from mod import name`, mod
            targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in MODULES else origin
                       for a in node.names]
        else:
            continue
        found += [(t, node.lineno, id(node) in inside) for t in targets
                  if t == "rtorch_py" or t.startswith("rtorch_py.")]
    return found


def test_every_module_has_a_floor():
    assert [m for m in MODULES if floor(m) is None] == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down(module):
    """A module imports from its own floor or lower ones, never from above."""
    mine = floor(module)
    up = [f"line {line}: {target} (floor '{LAYERS[floor(target)][0]}')"
          for target, line, _ in imports(module)
          if floor(target) is not None and floor(target) > mine]
    assert up == [], f"{module} (floor '{LAYERS[mine][0]}') imports from above: {up}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_package_import_inside_a_function(module):
    inside = [f"line {line}: {target}" for target, line, in_fn in imports(module) if in_fn]
    assert inside == [], f"{module} imports inside functions: {inside}"
