"""R torch's exported functions and tensor methods against the shim's, name by name
(`rtorch-py signatures`): the same argument names, in the same order, with the same
defaults; and the methods of R torch's R6 objects (a distribution's `d$sample`, a
storage's, a module's) never `function(...)` here where R torch declares formals.

R torch's side is read from its snapshot at test time (`RTORCH_CONFORMANCE_SOURCE`,
default `../.mirror/mlverse+torch/repo`; the test says plainly that it did not run
without it). What is still missing is listed in `tests/signatures/missing.txt`, what
still differs in `tests/signatures/differences.txt`, each under a heading that says
why: a name in neither list must match, and a listed name must still be missing or
different (so the lists only shrink; `RTORCH_SIGNATURES_UPDATE=1` takes off the names
that now exist or match).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import ROOT, needs_r
from rtorch_py.tools import signatures as sg
from rtorch_py.tools.docs_check import find_git_dir

SOURCE = Path(os.environ.get("RTORCH_CONFORMANCE_SOURCE",
                             ROOT.parent / ".mirror" / "mlverse+torch" / "repo"))
LISTS = Path(__file__).parent / "signatures"


def listed(name: str) -> dict[str, str]:
    """`{key: heading}` of a list file: `name` or `$method`, under `## why` headings."""
    out, why = {}, ""
    for line in (LISTS / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            why = line[3:]
        elif line.strip() and not line.startswith("#"):
            key = line.split(":", 1)[0].strip()
            assert key not in out, f"{name}: {key} listed twice"
            assert why, f"{name}: {key} is under no heading saying why"
            out[key] = why
    return out


def drop_settled(path: Path, keys: set[str]) -> None:
    """Take `keys` off a list file, and the headings left with no name under them
    (a heading may run over several `## ` lines)."""
    sections: list[list[str]] = [[]]
    for line in path.read_text(encoding="utf-8").splitlines():
        continued = bool(sections[-1]) and sections[-1][-1].startswith("## ")
        if line.startswith("## ") and not continued:
            sections.append([])
        if line.startswith("#") or line.split(":", 1)[0].strip() not in keys:
            sections[-1].append(line)
    kept = [sec for i, sec in enumerate(sections)
            if i == 0 or any(ln.strip() and not ln.startswith("#") for ln in sec)]
    path.write_text("\n".join(ln for sec in kept for ln in sec).rstrip("\n") + "\n",
                    encoding="utf-8")


def key(e: sg.Entry) -> str:
    return ("$" if e.kind == "method" else "") + e.name


def test_lists_are_disjoint() -> None:
    assert not listed("missing.txt").keys() & listed("differences.txt").keys()


# formals: (name, default, has_default)
def test_compare_rules() -> None:
    f = sg.compare
    assert f([("x", None, False), ("dim", 2, True)], [("x", None, False), ("dim", 2.0, True)]) == []
    assert f([("from", None, False)], [("from_", None, False)]) == []  # a Python keyword's name
    assert f([("from_", None, False)], [("from_", None, False)]) == []  # R torch's from_ too
    assert f([("reduction", ("mean", "sum"), True)], [("reduction", "mean", True)]) == []
    assert f([("grads", (), True)], [("grads", None, True)]) == []  # list(): optional
    assert f([("device", None, True)], [("device", "cpu", True)]) == []
    assert f([("n", None, False), ("m", ("expr", "n"), True)],
             [("n", None, False), ("m", None, True)]) == []  # m = n: None is "as n"
    assert f([("dim", None, False)], [("dim", None, True)]) == []  # optional here
    assert f([("x", None, False)], [("y", None, False)]) != []
    assert f([("x", None, False), ("y", None, False)], [("y", None, False), ("x", None, False)])
    assert f([("p", 2, True)], [("p", 1, True)]) == ["p: R torch's default p = 2, here p = 1"]
    assert f([("upper", 0.333333333333333, True)], [("upper", 1 / 3, True)]) == []  # 15 digits
    assert f([("eps", 1e-8, True)], [("eps", 1e-7, True)]) != []
    assert f([("keepdim", False, True)], [("keepdim", 0, True)]) != []  # FALSE is not 0
    assert f([("m", ("expr", "torch_float()"), True)], [("m", None, True)]) != []


def test_python_formals_are_as_r_counts() -> None:
    def op(self, dim=0, *sizes, keepdim=False, **kw):
        pass
    assert sg.python_formals(op, shifted=("dim",)) == [
        ("self", None, False), ("dim", 1, True), ("...", None, False), ("keepdim", False, True)]


@pytest.fixture(scope="module")
def entries(tmp_path_factory: pytest.TempPathFactory) -> list:
    if not SOURCE.exists():
        pytest.skip(f"R torch's exported API was NOT compared: {SOURCE} does not exist "
                    "(fetch mlverse/torch, or set RTORCH_CONFORMANCE_SOURCE to its git directory)")
    return sg.check(find_git_dir(SOURCE), tmp_path_factory.mktemp("signatures"))


@needs_r
def test_every_exported_name_matches_or_is_listed(entries: list) -> None:
    print("\n" + sg.format_report(entries, ()))
    objects = {e.name.split("$")[0] for e in entries if e.kind == "object" and e.status == "ok"}
    assert objects == set(sg.OBJECT_SAMPLES)  # (each sample's methods compared)
    missing, differences = listed("missing.txt"), listed("differences.txt")
    by_key = {key(e): e for e in entries}
    problems = []
    for k, e in by_key.items():
        if e.status == "missing" and k not in missing:
            problems.append(f"{k}: missing here, and not in missing.txt")
        if e.status == "differs" and k not in differences:
            problems.append(f"{k}: differs ({'; '.join(e.problems)}), not in differences.txt")
    settled = {"missing.txt": {k for k in missing if k in by_key
                               and by_key[k].status != "missing"},
               "differences.txt": {k for k in differences if k in by_key
                                   and by_key[k].status != "differs"}}
    for k in missing:
        if k not in by_key:
            problems.append(f"{k}: in missing.txt, but R torch exports no such name")
        elif k in settled["missing.txt"]:
            problems.append(f"{k}: in missing.txt, but it exists now: take it off")
    for k in differences:
        if k not in by_key:
            problems.append(f"{k}: in differences.txt, but R torch exports no such name")
        elif k in settled["differences.txt"]:
            problems.append(f"{k}: in differences.txt, but it is {by_key[k].status} now: "
                            "take it off")
    if os.environ.get("RTORCH_SIGNATURES_UPDATE") == "1":
        for name, keys in settled.items():
            drop_settled(LISTS / name, keys)
    assert not problems, "\n  ".join(["R torch's API against the shim's:", *problems])
