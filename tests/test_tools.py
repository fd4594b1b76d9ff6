"""The tooling (`rtorch_py/tools/`: the rtorch-py command, install-r, conformance,
vignettes) sits above the library and its R bridge: no module outside it imports it."""
from __future__ import annotations

import ast

from helpers import ROOT

PACKAGE = ROOT / "rtorch_py"


def _imported(path, tree: ast.AST) -> set[str]:
    """The absolute names of the modules a file imports (relative imports resolved)."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] \
                if node.level else []
            prefix = ".".join(base + ([node.module] if node.module else []))
            names |= {prefix} | {f"{prefix}.{a.name}" for a in node.names}
    return names


def test_nothing_below_the_tools_imports_them() -> None:
    files = [p for p in PACKAGE.rglob("*.py") if "tools" not in p.relative_to(PACKAGE).parts]
    assert PACKAGE / "r" / "__init__.py" in files and PACKAGE / "engine.py" in files
    offenders = {str(p.relative_to(ROOT)): sorted(n for n in names if
                                                  n.startswith("rtorch_py.tools"))
                 for p in files
                 for names in [_imported(p, ast.parse(p.read_text()))]}
    assert not {k: v for k, v in offenders.items() if v}
