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
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from ..r import _BUILD_LEFTOVERS, _r_home, install_coro, install_package, r_source_dir

__all__ = ["install_r", "user_library", "main"]


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
        install_coro(lib, Path(tmp))  # (first: the shim imports it)
        install_package(pkg, lib)
    return lib


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
