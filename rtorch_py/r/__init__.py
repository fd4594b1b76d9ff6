"""The R bridge: R torch's API in this process's embedded R, on the same engine.

`load()` starts R through rpy2 if needed, installs the `torch` shim (the R
package in `r_compat/`, whose C part is the R<->Python crossing) into a
private library the first time, and puts that library first in
`.libPaths()`, so that `library(torch)` attaches the shim. Tensors pass
between the languages as the same Python object (a module as its Python
module); `to_r`/`from_r` convert for rpy2 users, and the rpy2 converter is
extended so `%%R -i/-o` move tensors and modules.
"""
from __future__ import annotations

import atexit
import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from ..nn.module import Module
from ..tensor import Tensor
from . import api

__all__ = ["load", "r_source_dir", "library_dir", "ensure_installed", "fallback_library",
           "install_package", "to_r", "from_r", "register_converter"]

_loaded_lib: str | None = None


def r_source_dir() -> Path:
    """Where the shim's R package source lives (`r_compat/` in the repository)."""
    env = os.environ.get("RTORCH_PY_R_SOURCE")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    # the checkout's r_compat/, else the copy a wheel carries (rtorch_py/r_compat)
    for base in (here.parents[2], here.parents[1]):
        cand = base / "r_compat"
        if (cand / "DESCRIPTION").exists():
            return cand
    raise RuntimeError("can't find the R shim's sources (r_compat/); set RTORCH_PY_R_SOURCE")


@functools.lru_cache(maxsize=None)
def _r_home() -> str:
    try:
        from rpy2 import situation
        home = situation.get_r_home()
        if home:
            return home
    except Exception:  # pragma: no cover - rpy2 missing or odd set-up
        pass
    out = subprocess.run(["R", "RHOME"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


# what an in-place `R CMD INSTALL r_compat` or ./configure leaves in the sources
# (coro/ is a package of its own, installed beside the shim: install_coro)
_BUILD_LEFTOVERS = shutil.ignore_patterns("*.o", "*.so", "Makevars", "inst", "coro")


def _fingerprint(src: Path) -> str:
    """Hash of everything the installed shim depends on."""
    h = hashlib.sha256()
    for p in sorted(src.rglob("*")):
        rel = p.relative_to(src)
        if p.is_file() and not _BUILD_LEFTOVERS(str(p.parent), [p.name]) and \
                rel.parts[0] != "inst":
            h.update(str(p.relative_to(src)).encode())
            h.update(p.read_bytes())
    h.update(sys.version.encode())
    h.update(sysconfig.get_paths()["include"].encode())
    h.update(sys.executable.encode())  # recorded in the package as its Python
    h.update(_r_home().encode())
    return h.hexdigest()[:16]


def library_dir() -> Path:
    """The root of the private R libraries (one per shim version)."""
    env = os.environ.get("RTORCH_PY_R_LIBS")
    if env:
        return Path(env)
    root = Path(sys.prefix) / "lib" / "rtorch-py" / "R"
    try:
        root.mkdir(parents=True, exist_ok=True)
        if os.access(root, os.W_OK):
            return root
    except OSError:
        pass
    return Path.home() / ".cache" / "rtorch-py" / "R"


def fallback_library(lib: Path) -> Path:
    """Beside a private library, the one holding the minimal coro: last on
    `.libPaths()`, so that a real coro, wherever R finds one, comes first."""
    return lib.with_name(lib.name + "-coro")


def ensure_installed(quiet: bool = True) -> Path:
    """Install the shim into the private library unless this version is there.

    Returns the library directory to put first in `.libPaths()` (and last, its
    `fallback_library()`)."""
    src = r_source_dir()
    root = library_dir()
    root.mkdir(parents=True, exist_ok=True)
    lib = root / _fingerprint(src)

    def installed() -> bool:
        return (lib / "torch" / "R" / "torch").exists() and \
            (fallback_library(lib) / "coro" / "R" / "coro").exists()
    if installed():
        return lib
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed():
            return lib
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            # Build from a copy so no object files land in the source tree.
            pkg = Path(tmp) / "torch"
            shutil.copytree(src, pkg, ignore=_BUILD_LEFTOVERS)
            out_lib, coro_lib = Path(tmp) / "lib", Path(tmp) / "coro-lib"
            out_lib.mkdir()
            coro_lib.mkdir()
            install_coro(coro_lib, Path(tmp), always=True)  # (first: the shim imports it)
            install_package(pkg, out_lib, quick=True, deps=coro_lib)
            for built, final in ((coro_lib, fallback_library(lib)), (out_lib, lib)):
                if final.exists():
                    shutil.rmtree(final)
                os.replace(built, final)
        for old in root.iterdir():  # earlier versions, unused for a day
            if old.is_dir() and old not in (lib, fallback_library(lib)) and \
                    len(old.name.removesuffix("-coro")) == 16 and \
                    time.time() - old.stat().st_mtime > 86400:
                shutil.rmtree(old, ignore_errors=True)
    return lib


def install_package(src: Path, lib: Path, quick: bool = False, deps: Path | None = None,
                    what: str = "the R torch shim") -> None:
    """`R CMD INSTALL` of the shim's sources `src` (or of another package, `what`)
    into the R library `lib`, built for (and recording) this Python,
    `sys.executable`. `quick` skips the help pages and R's test load (for the
    private library, loaded next anyway)."""
    for script in ("configure", "cleanup"):  # R runs them only if executable
        if (Path(src) / script).exists():
            os.chmod(Path(src) / script, 0o755)
    env = dict(os.environ)
    env["RTORCH_PYTHON"] = sys.executable  # read by r_compat/configure
    # (the minimal coro, when installed, went into `lib` or `deps` just before)
    env["R_LIBS"] = os.pathsep.join(p for p in (str(lib), env.get("R_LIBS", ""),
                                                str(deps or "")) if p)
    r = os.path.join(_r_home(), "bin", "R")
    cmd = [r, "CMD", "INSTALL", "--no-multiarch",
           *(["--no-test-load", "--no-docs", "--no-html"] if quick else []),
           "--library=" + str(lib), str(src)]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        hint = ""
        if "dependenc" in res.stdout + res.stderr:  # R names the missing package
            hint = ("\nthe shim needs the R packages R6, bit64, rlang, withr and magrittr (as R "
                    "torch does): install.packages(c(\"R6\", \"bit64\", \"rlang\", \"withr\", "
                    "\"magrittr\")) in R, or on Debian/Ubuntu apt-get install r-cran-r6 "
                    "r-cran-bit64 r-cran-rlang r-cran-withr r-cran-magrittr "
                    "(./scripts/setup does)")
        raise RuntimeError(f"installing {what} failed:\n" + res.stdout + res.stderr + hint)


def install_coro(lib: Path, tmp: Path, always: bool = False) -> None:
    """Install the minimal `coro` (r_compat/coro/: loop, collect, exhausted, the
    as_iterator generic) into `lib`, unless (`always` aside) R's own libraries
    or `lib` already have the real package (Debian has none); never over a real one."""
    r = os.path.join(_r_home(), "bin", "Rscript")
    env = {k: v for k, v in os.environ.items() if k != "R_LIBS"}
    env["R_LIBS"] = str(lib)
    real = ('quit(status = !(requireNamespace("coro", quietly = TRUE) && '
            '!grepl("rtorch-py", utils::packageDescription("coro")$Title)))')
    if not always and subprocess.run([r, "-e", real], capture_output=True,
                                     env=env).returncode == 0:
        return
    pkg = Path(tmp) / "coro"
    shutil.copytree(r_source_dir() / "coro", pkg)
    install_package(pkg, lib, what="the minimal coro package")


def _launcher_dirs() -> dict[str, str]:
    """The directories R's launcher script (R_HOME/bin/R) exports, which an embedded
    R does not get from rpy2: R.home("share") (Rd macros, tools::parse_Rd), the
    include and doc dirs. Debian keeps them outside R_HOME."""
    try:
        text = Path(_r_home(), "bin", "R").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    pairs = (line.split("=", 1) for line in text.splitlines()
             if line.startswith(("R_SHARE_DIR=", "R_INCLUDE_DIR=", "R_DOC_DIR=")))
    return {k: v.strip().strip("'\"") for k, v in pairs if "$" not in v}


def _start_r() -> None:
    import rpy2.rinterface as ri
    if not ri.embedded.isinitialized():
        for k, v in _launcher_dirs().items():
            os.environ.setdefault(k, v)
        ri.initr_simple()


def load(attach: bool = True) -> None:
    """Make R torch's API available in this process's embedded R.

    With `attach` (the default, for rpy2 and Jupyter's `%%R`) the shim is
    attached as `library(torch)` would; otherwise only `.libPaths()` is set
    up and the namespace loaded, so that scripts' own `library(torch)`
    attaches it."""
    global _loaded_lib
    _start_r()
    import rpy2.rinterface as ri
    lib = ensure_installed()
    if _loaded_lib != str(lib):
        ri.baseenv.find(".libPaths")(ri.StrSexpVector(
            [str(lib), *ri.baseenv.find(".libPaths")(), str(fallback_library(lib))]))
        _loaded_lib = str(lib)
    first = not hasattr(api, "shutdown")
    ri.evalr('loadNamespace("torch")')
    if first:
        atexit.register(api.shutdown)  # runs before rpy2 ends R
    if attach:
        ri.evalr('suppressPackageStartupMessages(library(torch))')
    _register_converters()


# --------------------------------------------------------------------------
# rpy2 interop: R values <-> Python objects, the same tensors both ways


def _native() -> Any:
    """The api module, once the shim's C part has given it its functions."""
    if not hasattr(api, "sexp_to_py"):
        raise RuntimeError("the R shim is not loaded; call rtorch_py.r.load() first")
    return api


def from_r(obj: Any) -> Any:
    """An rpy2 object (an R tensor, module, list, vector...) as the shim sees
    it in Python: R tensors become the very same Python Tensor, R modules
    (`nn_linear(2, 1)`, `net()`) their Python module."""
    from rpy2.rinterface_lib import openrlib
    if "nn_module" in getattr(obj, "rclass", ()):
        obj = _shim_function(".nn_py_of")(obj)
    sexp = obj.__sexp__._cdata if hasattr(obj, "__sexp__") else obj
    addr = int(openrlib.ffi.cast("uintptr_t", sexp))
    return _native().sexp_to_py(addr)


def to_r(obj: Any) -> Any:
    """A Python object as an rpy2 object: a Tensor becomes an R torch_tensor
    holding the same Tensor, a Module an R module (callable) holding it."""
    from rpy2.rinterface_lib import conversion as rconv
    from rpy2.rinterface_lib import openrlib
    robj = _native().py_to_robject(obj)
    cdata = openrlib.ffi.cast("SEXP", robj.address)
    out = rconv._cdata_to_rinterface(cdata)
    return _shim_function(".nn_callable")(out) if isinstance(obj, Module) else out


def _shim_function(name: str) -> Any:
    """One of the shim's R functions (r_compat/R), as rpy2 calls it."""
    import rpy2.rinterface as ri
    return ri.evalr(f"torch:::{name}")


_converters_done = False


def register_converter(converter: Any) -> None:
    """Teach an rpy2 Converter to move tensors and modules: a Python Tensor
    goes to R as an R torch_tensor holding the same object (a Module as an R
    module), and back."""
    import rpy2.rinterface as ri

    @converter.py2rpy.register(Tensor)
    def _tensor_py2rpy(obj: Tensor) -> Any:
        return to_r(obj)

    @converter.py2rpy.register(Module)
    def _module_py2rpy(obj: Module) -> Any:
        return to_r(obj)

    @converter.rpy2py.register(ri.SexpExtPtr)
    def _extptr_rpy2py(obj: Any) -> Any:
        try:
            return from_r(obj)
        except Exception:
            return obj


def _register_converters() -> None:
    """rpy2's default converter, the active one, and the `%%R` magic's."""
    global _converters_done
    if _converters_done:
        return
    _converters_done = True
    try:
        from rpy2.robjects import conversion, default_converter
    except Exception:  # pragma: no cover - robjects unavailable
        return
    seen: list = []
    for conv in (default_converter, conversion.get_conversion()):
        if not any(conv is c for c in seen):
            register_converter(conv)
            seen.append(conv)
    if "IPython" not in sys.modules:
        return  # not in IPython/Jupyter, so no `%%R` magic to teach
    try:
        with warnings.catch_warnings():  # rpy2's advice to install pandas
            warnings.simplefilter("ignore")
            from rpy2.ipython import rmagic
    except Exception:  # pragma: no cover - broken IPython install
        return
    register_converter(rmagic.converter)
