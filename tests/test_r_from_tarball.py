"""From R alone (issue 29): the R source package `rtorch-py build-r` makes, used as
an R user does, with no checkout and no Python set up beforehand.

The tarball is installed with `install.packages(..., repos = NULL)` into a scratch
R library by a plain `Rscript` whose PATH has no virtual environment (so it is
built for the machine's python3, as on a fresh machine), beside the minimal coro
(standing in for CRAN's, which Debian lacks). `install_torch()` then makes the
engine in a scratch TORCH_HOME with pip as the machine has it configured (CI
reaches PyPI), and a package that imports torch (tests/fixtures/torchuser) passes
`R CMD check`. Loading before install_torch(), and what install_torch() and
./configure say when the machine lacks a part, are checked too.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, needs_r

pytestmark = needs_r

FIXTURE = ROOT / "tests" / "fixtures" / "torchuser"


def _plain_env(tmp: Path, **extra: str) -> dict:
    """A plain R user's environment: no rtorch-py variables, no virtual environment
    on the PATH, an empty user library."""
    venv_bins = {str(Path(sys.executable).parent), os.path.join(sys.prefix, "bin")}
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RTORCH_PY", "RTORCH_PYTHON", "R_LIBS", "PYTHON", "TORCH_HOME",
                                "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and p not in venv_bins)
    env["R_LIBS_USER"] = str(tmp / "user-library")
    env.update(extra)
    return env


def _rscript(expr: str, env: dict, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["Rscript", "-e", expr], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The tarball, built and installed into a scratch R library."""
    tmp = tmp_path_factory.mktemp("from-r")
    res = subprocess.run([sys.executable, "-m", "rtorch_py.tools.cli", "build-r", "--out",
                          str(tmp / "dist")], capture_output=True, text=True, cwd=ROOT,
                         timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    tarball = Path(res.stdout.strip())
    assert tarball.name == "torch_0.17.0.tar.gz" and tarball.exists()
    lib = tmp / "lib"
    lib.mkdir()
    env = _plain_env(tmp, R_LIBS=str(lib))
    res = subprocess.run(["R", "CMD", "INSTALL", f"--library={lib}", str(ROOT / "r_compat" / "coro")],
                         capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    res = _rscript(f'install.packages("{tarball}", repos = NULL)', env, tmp)
    assert res.returncode == 0 and (lib / "torch" / "DESCRIPTION").exists(), \
        res.stdout + res.stderr
    return {"tmp": tmp, "tarball": tarball, "lib": lib, "env": env}


def test_tarball_carries_the_engine(installed: dict) -> None:
    names = subprocess.run(["tar", "tzf", str(installed["tarball"])], capture_output=True,
                           text=True, check=True).stdout.split()
    assert "torch/src/calls.c" in names and "torch/R/bridge.R" in names
    assert any(n.startswith("torch/inst/engine/rtorch_py-") and n.endswith(".whl")
               for n in names)
    engine = installed["lib"] / "torch" / "engine"
    pins = [line for line in (engine / "requirements.txt").read_text().splitlines()
            if not line.startswith("#")]
    lock = (ROOT / "requirements.lock").read_text().splitlines()
    assert pins and all(p in lock for p in pins)  # the lock's versions
    assert any(p.startswith("numpy==") for p in pins)
    assert not any(p.startswith(("torch==", "rpy2==", "pytest==")) for p in pins)
    exports = (engine / "exports").read_text().split()
    assert {"torch_randn", "nn_linear"} <= set(exports) and "install_torch" not in exports
    # built for the machine's python3, which has no rtorch_py
    recorded = (installed["lib"] / "torch" / "python").read_text().splitlines()[0]
    assert not Path(recorded).is_relative_to(sys.prefix)


def test_before_install_torch(installed: dict, tmp_path: Path) -> None:
    """As R torch before install_torch(): the package loads, says so once, and every
    torch function stops, saying to run install_torch()."""
    env = {**installed["env"], "TORCH_HOME": str(tmp_path / "nothing-here")}
    res = _rscript("library(torch); cat(torch_is_installed(), '\\n'); "
                   "cat(exists('torch_randn'), exists('nn_linear'), '\\n'); "
                   "e <- tryCatch(torch_randn(2), error = function(e) e); "
                   "cat(class(e)[1], '\\n'); cat(conditionMessage(e), '\\n'); "
                   "cat(torch_install_path(), '\\n'); install_torch_sitrep(); torch_tensor(1)",
                   env, tmp_path)
    assert res.returncode == 1
    out = res.stdout.splitlines()
    assert out[:3] == ["FALSE ", "TRUE TRUE ", "torch_not_installed "]
    assert "Run install_torch()" in out[3] and "RTORCH_PYTHON" in out[3]
    assert out[4] == f"{tmp_path / 'nothing-here'} "  # TORCH_HOME, as R torch
    assert "engine:         not installed: run install_torch()" in res.stdout
    assert "run install_torch()" in res.stderr  # the startup message
    assert "Error in torch_tensor(1)" in res.stderr and "not installed" in res.stderr


def test_install_torch_then_r_cmd_check_of_a_package_using_torch(installed: dict) -> None:
    """install_torch() with nothing set: the engine goes into the installed package
    (writable here), as R torch's libtorch does."""
    tmp = installed["tmp"]
    env = {**installed["env"], "_R_CHECK_SYSTEM_CLOCK_": "0"}
    res = _rscript("torch::install_torch()", env, tmp, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "creating a Python" in res.stderr and "the engine is installed" in res.stderr
    home = installed["lib"] / "torch"
    python = home / "venv" / "bin" / "python"
    assert (home / "engine" / "requirements.txt").exists()  # what it installed from is kept
    # the engine: rtorch-py from the tarball, NumPy at the lock's version, no PyTorch
    probe = subprocess.run([str(python), "-c", "import importlib.util, numpy, rtorch_py; "
                            "print(numpy.__version__); print(rtorch_py.__file__); "
                            "print(importlib.util.find_spec('torch'))"],
                           capture_output=True, text=True, env=env, cwd=tmp, check=True)
    numpy_version, module, torch_spec = probe.stdout.splitlines()
    assert f"numpy=={numpy_version}" in (ROOT / "requirements.lock").read_text()
    assert Path(module).is_relative_to(home / "venv") and torch_spec == "None"
    res = _rscript("library(torch); cat(torch_is_installed(), '\\n'); install_torch_sitrep(); "
                   "install_torch()", env, tmp)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("TRUE \n")
    assert f"engine:         {python} (from install_torch())" in res.stdout
    assert "in this session: running" in res.stdout
    assert "already installed" in res.stderr and "run install_torch()" not in res.stderr
    # R CMD check of a package whose code and tests use torch
    work = tmp / "check"
    work.mkdir()
    res = subprocess.run(["R", "CMD", "build", str(FIXTURE)], capture_output=True, text=True,
                         env=env, cwd=work, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    res = subprocess.run(["R", "CMD", "check", "--no-manual", "torchuser_0.1.0.tar.gz"],
                         capture_output=True, text=True, env=env, cwd=work, timeout=1200)
    log = (work / "torchuser.Rcheck" / "00check.log").read_text()
    assert res.returncode == 0, log[-3000:]
    assert "Status: OK" in log, log[-3000:]
    assert "checking tests ..." in log and "Running ‘testthat.R’" in log


def test_install_torch_names_a_missing_venv_module(installed: dict, tmp_path: Path) -> None:
    """A Python without venv/ensurepip (Debian's python3 without python3-venv)."""
    shadow = tmp_path / "shadow" / "ensurepip"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('no ensurepip here')\n")
    lib = tmp_path / "lib"
    shutil.copytree(installed["lib"], lib, symlinks=True,
                    ignore=shutil.ignore_patterns("venv"))  # (an engine made before)
    exe, version = (lib / "torch" / "python").read_text().splitlines()[:2]
    wrapper = tmp_path / "bin" / "python3"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{shadow.parent}" exec "{exe}" "$@"\n')
    wrapper.chmod(0o755)
    (lib / "torch" / "python").write_text(f"{wrapper}\n{version}\n")
    env = {**installed["env"], "R_LIBS": str(lib), "TORCH_HOME": str(tmp_path / "home")}
    res = _rscript("torch::install_torch()", env, tmp_path)
    assert res.returncode == 1
    assert "install_torch(): the Python" in res.stderr and "venv and ensurepip" in res.stderr
    assert f"apt-get install python{version}-venv" in res.stderr
    assert not (tmp_path / "home" / "venv").exists()


def _configure(tmp: Path, python: str | None, *path: Path) -> subprocess.CompletedProcess:
    """./configure of the package's sources with only `path` and the few tools it
    uses on the PATH."""
    src = tmp / "torch"
    if not src.exists():
        shutil.copytree(ROOT / "r_compat", src, ignore=shutil.ignore_patterns(
            "*.o", "*.so", "Makevars", "inst", "coro"))
    tools = tmp / "tools"
    if not tools.exists():
        tools.mkdir()
        for tool in ("dirname", "basename", "sed", "mkdir"):
            (tools / tool).symlink_to(shutil.which(tool))
    env = {k: v for k, v in os.environ.items() if k != "RTORCH_PYTHON"}
    env["PATH"] = os.pathsep.join(map(str, (*path, tools)))
    if python:
        env["RTORCH_PYTHON"] = python
    return subprocess.run(["/bin/sh", "./configure"], capture_output=True, text=True, cwd=src,
                          env=env)


def _lock_floor() -> str:
    """The oldest Python 3 that every runtime pin of requirements.lock supports
    (their Requires-Python, read from the venv, which is installed from the lock)."""
    from importlib.metadata import metadata

    from packaging.markers import Marker
    from packaging.specifiers import SpecifierSet

    from rtorch_py.tools.install import runtime_requirements
    pins = runtime_requirements(ROOT / "requirements.lock", ROOT / "pyproject.toml")
    needs = SpecifierSet()
    for pin in pins:
        pin, _, marker = pin.partition(";")      # (a platform's pin: onednn-cpu-gomp)
        if marker and not Marker(marker).evaluate():
            continue
        name, version = pin.strip().split("==")
        meta = metadata(name)
        assert meta["Version"] == version, f"the venv has {name} {meta['Version']}, not {pin}"
        needs &= SpecifierSet(meta["Requires-Python"] or "")
    return next(f"3.{minor}" for minor in range(8, 20) if f"3.{minor}" in needs)


FLOOR = _lock_floor()


def _fake_python(tmp: Path, name: str, version: str, headers: bool) -> str:
    """A python that answers ./configure's questions as one of `version` would."""
    exe = tmp / "bin" / name
    exe.parent.mkdir(exist_ok=True)
    major, minor = version.split(".")
    ok = int((int(major), int(minor)) >= (3, int(FLOOR.split(".")[1])))
    include = tmp / "include"
    if headers:
        include.mkdir(exist_ok=True)
        (include / "Python.h").write_text("")
    exe.write_text("#!/bin/sh\n"
                   f'case "$2" in *version_info\\ \\<*) exit {1 - ok} ;; esac\n'
                   f"printf '%s\\n' {version} '{include if headers else ''}' {ok}\n")
    exe.chmod(0o755)
    return str(exe)


def test_configure_names_what_is_missing(tmp_path: Path) -> None:
    assert FLOOR == "3.11"  # NumPy 2.4's; the cases below are written for it
    res = _configure(tmp_path, None)  # no python3 at all
    assert res.returncode != 0
    assert f"needs Python >= {FLOOR} and found none" in res.stderr and "python3-dev" in res.stderr
    # the lock's floor, not 3.10: its pins have no wheels for 3.10
    old = _fake_python(tmp_path, "python3.10", "3.10", headers=True)
    res = _configure(tmp_path, old)
    assert res.returncode != 0
    assert f"is Python 3.10; the torch shim needs Python >= {FLOOR}" in res.stderr
    # python3 on the PATH too old, python3.11 beside it: the newer is taken
    (tmp_path / "bin" / "python3").symlink_to(old)
    good = _fake_python(tmp_path, "python3.11", "3.11", headers=True)
    res = _configure(tmp_path, None, tmp_path / "bin")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "torch" / "inst" / "python").read_text() == f"{good}\n3.11\n"
    headless = _fake_python(tmp_path, "python3.12", "3.12", headers=False)
    res = _configure(tmp_path, headless)
    assert res.returncode != 0
    assert "has no C headers (Python.h)" in res.stderr and "python3.12-dev" in res.stderr
