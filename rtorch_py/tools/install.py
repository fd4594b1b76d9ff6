"""`rtorch-py install-r [--lib DIR]`: install the `torch` shim into an R library,
so that every later R session (R console, RStudio, Rscript, knitr, an R
Jupyter kernel) gets it with `library(torch)`, no Python parent process needed.

The package is built for this Python (`sys.executable`, the rtorch-py
environment) and records it as the Python it starts when loaded in plain R;
`RTORCH_PYTHON` or `options(rtorch.python = ...)` override that at load time.

Its name is `torch`, as R torch's is. By default it goes into R's user library
(`R_LIBS_USER`), but never over a real R torch: give such a set-up a library
of its own (`--lib DIR`) and put DIR first on `.libPaths()` (`R_LIBS=DIR`)
only where the shim is wanted.

`rtorch-py build-r [--out DIR]` makes the R source package for R users instead:
`torch_0.17.0.tar.gz`, which `install.packages(..., repos = NULL)` installs in a
plain R and whose `install_torch()` then sets up the engine (a virtual
environment with rtorch-py at the locked versions of its runtime dependencies).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from ..r import _BUILD_LEFTOVERS, _r_home, api, install_coro, install_package, r_source_dir
from ..r.nn_api import nn_layer_names
from ..r.optim_api import generator_names

__all__ = ["install_r", "user_library", "runtime_requirements", "engine_function_names",
           "build_r", "main", "build_main"]


def _rscript(expr: str) -> str:
    rscript = os.path.join(_r_home(), "bin", "Rscript")
    res = subprocess.run([rscript, "--no-init-file", "-e", expr], capture_output=True, text=True,
                         check=True)
    return res.stdout.strip()


def user_library() -> Path:
    """R's user library (`R_LIBS_USER`), where install.packages() offers to go."""
    return Path(_rscript('cat(path.expand(Sys.getenv("R_LIBS_USER")))').split(os.pathsep)[0])


def _foreign_torch(lib: Path) -> bool:
    """Is there a `torch` package in `lib` that is not this shim (R torch itself)?"""
    desc = lib / "torch" / "DESCRIPTION"
    if not desc.exists():
        return False
    return "rtorch-py" not in desc.read_text(encoding="utf-8", errors="replace")


def install_r(lib: Path | None = None, force: bool = False) -> Path:
    """Install the shim into the R library `lib` (default: R's user library,
    created if missing); returns the library."""
    lib = Path(lib) if lib is not None else user_library()
    lib = lib.expanduser().resolve()
    if _foreign_torch(lib) and not force:
        raise RuntimeError(
            f"{lib} already holds R torch's own `torch` package, which this would replace. "
            "Install the shim into a library of its own instead (rtorch-py install-r --lib DIR, "
            "then R_LIBS=DIR where you want it), or pass --force to replace it.")
    lib.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rtorch-install-") as tmp:
        pkg = Path(tmp) / "torch"  # build from a copy: no object files in the sources
        shutil.copytree(r_source_dir(), pkg, ignore=_BUILD_LEFTOVERS)
        _write_function_names(pkg)
        install_coro(lib, Path(tmp))  # (first: the shim imports it)
        install_package(pkg, lib)
    return lib


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_requirements(lock: Path, pyproject: Path) -> list[str]:
    """The pins of `lock` (pip-compile's output) that rtorch-py needs at run time:
    its `dependencies` and, through the lock's `# via` notes, all they pull in."""
    import tomllib
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    wanted = {_norm(re.match(r"[A-Za-z0-9._-]+", d).group()) for d in deps}
    pins: dict[str, str] = {}
    parents: dict[str, set[str]] = {}
    current = None
    for line in lock.read_text().splitlines():
        if re.match(r"[A-Za-z0-9]", line):
            current = _norm(line.split("==")[0])
            pins[current] = line.strip()
            parents[current] = set()
        elif current and line.strip().startswith("#"):
            via = line.strip().lstrip("#").strip().removeprefix("via").strip()
            if via:
                parents[current].add(_norm(via.split()[0]))
    missing = wanted - pins.keys()
    if missing:
        raise RuntimeError(f"{lock} pins no version of {sorted(missing)}: run ./scripts/lock")
    while True:
        more = {name for name, via in parents.items() if via & wanted} - wanted
        if not more:
            return [pins[name] for name in sorted(wanted)]
        wanted |= more


def engine_function_names() -> list[str]:
    """The R functions the shim makes from the engine's tables when it loads (the
    rest are written in R/): listed in the package so that they exist, and say
    to run install_torch(), before it has an engine."""
    return sorted(n for n in {*api._names("FUNCTIONS"), *nn_layer_names(),
                              *generator_names("schedulers"), *generator_names("ignite"),
                              *generator_names("builtin")}
                  if not n.startswith(".") and n not in api._TABLES["INTERNAL_FUNCTIONS"])


def _write_function_names(pkg: Path) -> None:
    engine = pkg / "inst" / "engine"
    engine.mkdir(parents=True, exist_ok=True)
    (engine / "exports").write_text("".join(n + "\n" for n in engine_function_names()))


def build_r(out: Path) -> Path:
    """`R CMD build` of the shim for R users, into `out`: the R code and its C
    part, and in inst/engine what install_torch() installs (rtorch-py's wheel and
    the runtime subset of requirements.lock), with the list of the functions the
    engine makes (the package has them all before install_torch(), as stubs).
    Needs rtorch-py's source checkout. Returns the tarball."""
    src = r_source_dir()
    root = src.parent
    if not (root / "pyproject.toml").exists() or not (root / "requirements.lock").exists():
        raise RuntimeError(f"build-r needs rtorch-py's source checkout (pyproject.toml and "
                           f"requirements.lock beside {src})")
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rtorch-build-") as tmp:
        # the wheel, built from a copy so that no build/ lands in the checkout
        tree = Path(tmp) / "src"
        tree.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(root / name, tree / name)
        shutil.copytree(root / "rtorch_py", tree / "rtorch_py",  # (r_compat: link followed)
                        ignore=shutil.ignore_patterns("__pycache__", "*.o", "*.so", "Makevars",
                                                      "inst"))
        pkg = Path(tmp) / "torch"
        shutil.copytree(src, pkg, ignore=_BUILD_LEFTOVERS)
        engine = pkg / "inst" / "engine"
        engine.mkdir(parents=True)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                        "--no-build-isolation", "-w", str(engine), str(tree)],
                       check=True, capture_output=True, text=True, cwd=tmp)
        pins = runtime_requirements(root / "requirements.lock", root / "pyproject.toml")
        (engine / "requirements.txt").write_text(
            "# rtorch-py's runtime dependencies at the versions of its requirements.lock\n" +
            "".join(p + "\n" for p in pins))
        _write_function_names(pkg)
        for script in ("configure", "cleanup"):
            os.chmod(pkg / script, 0o755)
        res = subprocess.run([os.path.join(_r_home(), "bin", "R"), "CMD", "build",
                              "--no-build-vignettes", "--no-manual", str(pkg)],
                             capture_output=True, text=True, cwd=out)
        if res.returncode != 0:
            raise RuntimeError("R CMD build failed:\n" + res.stdout + res.stderr)
    version = re.search(r"^Version:\s*(\S+)", (src / "DESCRIPTION").read_text(), re.M).group(1)
    return out / f"torch_{version}.tar.gz"


def build_main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rtorch-py build-r",
        description="Build the R source package `torch` (rtorch-py's shim) for R users: "
                    "install.packages() installs it, install_torch() then sets up its engine.")
    parser.add_argument("--out", type=Path, default=Path("."), metavar="DIR",
                        help="where to write torch_<version>.tar.gz (default: here)")
    ns = parser.parse_args(argv)
    try:
        tarball = build_r(ns.out)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as err:
        detail = getattr(err, "stderr", None) or ""
        print(f"rtorch-py build-r: {err}\n{detail}".rstrip(), file=sys.stderr)
        return 1
    print(tarball)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rtorch-py install-r",
        description="Install the R package `torch` (rtorch-py's shim) into an R library, "
                    "for plain R sessions, Rscript, knitr and R kernels.")
    parser.add_argument("--lib", type=Path, default=None, metavar="DIR",
                        help="the R library to install into (default: R's user library, "
                             "R_LIBS_USER)")
    parser.add_argument("--force", action="store_true",
                        help="replace a `torch` package in that library that is not this shim")
    ns = parser.parse_args(argv)
    try:
        lib = install_r(ns.lib, ns.force)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as err:
        print(f"rtorch-py install-r: {err}", file=sys.stderr)
        return 1
    print(f"installed the R package torch (rtorch-py's shim, Python {sys.executable}) "
          f"into {lib}")
    on_path = _rscript("cat(normalizePath(.libPaths()), sep = '\\n')").splitlines()
    if str(lib) not in on_path:
        print(f"R does not look there by default: set R_LIBS={lib} (or add it to "
              f".libPaths()) where you want library(torch) to be this shim")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
