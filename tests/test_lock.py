"""The tests run with the versions requirements.lock pins (./scripts/setup installs
them, ./scripts/lock makes the lock): every distribution the project's requirements
reach, extras included, is pinned there at the version installed here, and torch is
the CPU build, with no CUDA package beside it."""
from __future__ import annotations

import re
import tomllib
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from helpers import ROOT

EXTRAS = ("r", "test", "bench")  # the extras scripts/setup installs and scripts/lock resolves


def _pins() -> dict[str, str]:
    lines = (ROOT / "requirements.lock").read_text().splitlines()
    return {canonicalize_name(m[1]): m[2] for m in   # (a pin may carry a platform marker)
            (re.match(r"([A-Za-z0-9._-]+)==([^\s;]+)(\s*;.*)?$", line) for line in lines) if m}


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _needed() -> set[str]:
    """The distributions pyproject.toml's requirements reach, through the installed
    packages' own requirements (markers evaluated here, with the extras asked for)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo = [Requirement(r) for r in project["dependencies"]]
    todo += [Requirement(r) for extra in EXTRAS for r in project["optional-dependencies"][extra]]
    extras: dict[str, set[str]] = {}
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in extras and req.extras <= extras[name]:
            continue
        extras.setdefault(name, set()).update(req.extras)
        for dep in map(Requirement, _installed(name) and metadata.requires(name) or []):
            if dep.marker is None or \
                    any(dep.marker.evaluate({"extra": e}) for e in ("", *extras[name])):
                todo.append(dep)
    return set(extras)


def test_what_the_project_needs_is_locked_at_the_installed_version() -> None:
    pins, needed = _pins(), _needed()
    assert {"numpy", "rpy2", "torch", "pytest", "jinja2"} <= needed  # direct and transitive
    unlocked = sorted(needed - set(pins))
    assert not unlocked, f"not in requirements.lock: {unlocked} (run ./scripts/lock)"
    differ = {n: (_installed(n), pins[n]) for n in sorted(needed) if _installed(n) != pins[n]}
    assert not differ, f"installed vs locked: {differ} (run ./scripts/setup)"


def test_the_lock_has_torchs_cpu_build_and_what_builds_the_packages() -> None:
    pins = _pins()
    assert pins["torch"].endswith("+cpu")
    assert not [n for n in pins if n.startswith(("nvidia-", "triton"))]
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    assert {"pip", "wheel", "cffi"} | {canonicalize_name(Requirement(r).name) for r in build} \
        <= set(pins)
