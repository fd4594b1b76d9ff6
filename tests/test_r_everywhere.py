"""R everywhere (issue 13): `library(torch)` in plain R, Rscript, knitr and Jupyter.

The shim is installed once per module with `rtorch-py install-r --lib DIR`
into a temporary R library; plain `Rscript` processes get it through
`R_LIBS=DIR` and start Python themselves (no Python parent process), as an
R user's session does. Outputs and errors are compared with `rtorch-py run`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, needs_r, run_r

pytestmark = needs_r

GRAD_EXPR = ("library(torch); x <- torch_tensor(1, requires_grad = TRUE); "
             "(x * 2)$backward(); x$grad")
GRAD_OUTPUT = "torch_tensor\n 2\n[ CPUFloatType{1} ]\n"
VIGNETTES = ROOT / "vignettes"


def _env(**extra: str) -> dict:
    """The environment of a plain R session: nothing pointing at a Python."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RTORCH_PY", "RTORCH_PYTHON", "R_LIBS"))}
    env.update(extra)
    return env


def rscript(*args: str, lib: Path, cwd: Path | None = None, timeout: float = 300,
            **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["Rscript", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=_env(R_LIBS=str(lib), **env), timeout=timeout)


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An R library holding the shim, installed by `rtorch-py install-r --lib`."""
    lib = tmp_path_factory.mktemp("rlib")
    res = subprocess.run([sys.executable, "-m", "rtorch_py.tools.cli", "install-r", "--lib",
                          str(lib)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert str(lib) in res.stdout
    return lib


# --------------------------------------------------------------------------
# Plain R and Rscript


def test_rscript_grad_prints_r_torch_output(lib: Path, tmp_path: Path) -> None:
    res = rscript("-e", GRAD_EXPR, lib=lib, cwd=tmp_path)  # a new R session, outside the repo
    assert res.returncode == 0, res.stderr
    assert res.stdout == GRAD_OUTPUT
    assert res.stderr == ""


def test_installed_package_records_this_python(lib: Path) -> None:
    exe, version = (lib / "torch" / "python").read_text().splitlines()
    assert Path(exe) == Path(sys.executable).parent / Path(exe).name
    assert version == "%d.%d" % sys.version_info[:2]
    res = rscript("-e", "library(torch); cat(packageDescription('torch')$Title)", lib=lib)
    assert res.returncode == 0, res.stderr
    assert "rtorch-py" in res.stdout


SCRIPT = r"""
library(torch)
torch_manual_seed(1)
w <- torch_randn(2, 3, requires_grad = TRUE)
square <- autograd_function(
  forward = function(ctx, input) {
    ctx$save_for_backward(input = input)
    input^2
  },
  backward = function(ctx, grad_output) {
    list(input = 2 * ctx$saved_variables$input * grad_output)
  }
)
y <- square(w)$sum()
y
y$backward()
w$grad
w[1, ]
str(as_array(w$grad))
with_no_grad(w$mul_(2))
# an R error raised in an R callback travels through Python and back unchanged
bad <- autograd_function(
  forward = function(ctx, input) stop("no forward today"),
  backward = function(ctx, grad_output) list(input = grad_output)
)
tryCatch(bad(w), error = function(e) cat("caught:", conditionMessage(e), "\n"))
# a warning raised in Python (the engine) and one raised in R
autograd_gradcheck(function(x) (x * 3)$sum(), list(torch_tensor(c(1, 2), requires_grad = TRUE)),
                   raise_exception = FALSE)
warning("from R")
cat("still running\n")
w$sum(dim = 0)
cat("not reached\n")
"""


def test_rscript_same_output_and_errors_as_rtorch_py_run(lib: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.R"
    script.write_text(SCRIPT)
    plain = rscript(str(script), lib=lib)
    embedded = run_r(str(script))
    assert embedded.returncode == 1, embedded.stderr
    assert "Indexing starts at 1" in embedded.stderr
    assert "still running" in embedded.stdout and "not reached" not in embedded.stdout
    assert "caught: no forward today" in embedded.stdout
    assert (plain.returncode, plain.stdout, plain.stderr) == \
        (embedded.returncode, embedded.stdout, embedded.stderr)


def test_no_python_found_names_what_to_set(lib: Path, tmp_path: Path) -> None:
    """With no engine found, library(torch) loads (as R torch's does before
    install_torch()) and every torch function says what to do."""
    # the Python recorded at install is gone, nothing else is set
    moved = tmp_path / "lib"
    shutil.copytree(lib, moved)
    (moved / "torch" / "python").write_text(f"{tmp_path / 'gone' / 'python'}\n3.11\n")
    env = {"TORCH_HOME": str(tmp_path / "no-engine")}
    res = rscript("-e", "library(torch); cat(torch_is_installed(), '\n'); torch_ones(2)",
                  lib=moved, **env)
    assert res.returncode != 0
    assert res.stdout == "FALSE \n"
    assert "Error in torch_ones(2)" in res.stderr and "install_torch()" in res.stderr
    assert "RTORCH_PYTHON" in res.stderr and "options(rtorch.python" in res.stderr
    assert str(tmp_path / "gone" / "python") in res.stderr
    # nothing recorded at all
    (moved / "torch" / "python").unlink()
    res = rscript("-e", "library(torch); torch_ones(2)", lib=moved, **env)
    assert res.returncode != 0
    assert "found)" in res.stderr and "RTORCH_PYTHON" in res.stderr
    # ... and RTORCH_PYTHON then is enough
    res = rscript("-e", GRAD_EXPR, lib=moved, RTORCH_PYTHON=sys.executable, **env)
    assert res.returncode == 0, res.stderr
    assert res.stdout == GRAD_OUTPUT


def test_python_without_rtorch_py_is_refused_clearly(lib: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    env = {k: v for k, v in _env().items() if not k.startswith("PYTHON")}
    res = subprocess.run(["Rscript", "-e", "library(torch)"], capture_output=True, text=True,
                         env={**env, "R_LIBS": str(lib),
                              "RTORCH_PYTHON": str(bare / "bin" / "python")})
    assert res.returncode != 0
    assert "cannot import rtorch_py" in res.stderr and "RTORCH_PYTHON" in res.stderr


def test_option_comes_before_the_environment_variable(lib: Path, tmp_path: Path) -> None:
    res = rscript("-e", f"options(rtorch.python = '{tmp_path}/nope'); library(torch)", lib=lib,
                  RTORCH_PYTHON=sys.executable)
    assert res.returncode != 0
    assert f"{tmp_path}/nope" in res.stderr and "options(rtorch.python)" in res.stderr


def test_reticulate_shares_the_shims_python(lib: Path, tmp_path: Path) -> None:
    # torch first: reticulate then uses the Python the shim started
    res = rscript("-e", "library(torch); x <- torch_ones(2); "
                  "cat(reticulate::py_config()$python, '\n'); "
                  "np <- reticulate::import('numpy'); print(np$sum(c(1, 2))); x$sum()",
                  lib=lib, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert Path(res.stdout.splitlines()[0].strip()).parent == Path(sys.executable).parent
    assert res.stdout.endswith("torch_tensor\n2\n[ CPUFloatType{} ]\n")
    # reticulate first, on a Python without rtorch_py: a clear error
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    env = {k: v for k, v in _env().items() if not k.startswith("PYTHON")}
    res = subprocess.run(["Rscript", "-e", "invisible(reticulate::import('os')); library(torch)"],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={**env, "R_LIBS": str(lib),
                              "RETICULATE_PYTHON": str(bare / "bin" / "python")})
    assert res.returncode != 0
    assert "already running" in res.stderr and "RETICULATE_PYTHON" in res.stderr


def test_install_r_defaults_to_rs_user_library(tmp_path: Path) -> None:
    user_lib = tmp_path / "user-library"  # R_LIBS_USER, created by install-r
    env = _env(R_LIBS_USER=str(user_lib))
    res = subprocess.run([sys.executable, "-m", "rtorch_py.tools.cli", "install-r"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (user_lib / "torch" / "DESCRIPTION").exists()
    assert "R does not look there" not in res.stdout  # R's own default: on .libPaths()
    res = subprocess.run(["Rscript", "-e", GRAD_EXPR], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout == GRAD_OUTPUT


def test_r_cmd_install_from_a_checkout_finds_its_venv(tmp_path: Path) -> None:
    """`R CMD INSTALL r_compat` with nothing set builds for the checkout's .venv."""
    from rtorch_py.r import _BUILD_LEFTOVERS, r_source_dir
    checkout = tmp_path / "checkout"
    shutil.copytree(r_source_dir(), checkout / "r_compat", ignore=_BUILD_LEFTOVERS)
    (checkout / ".venv").symlink_to(sys.prefix)  # this checkout's virtualenv
    lib = tmp_path / "lib"
    lib.mkdir()
    # (the shim imports coro, as R torch does: Debian has none, the checkout a minimal one)
    res = subprocess.run(["R", "CMD", "INSTALL", f"--library={lib}", str(r_source_dir() / "coro")],
                         capture_output=True, text=True, env=_env(), timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    res = subprocess.run(["R", "CMD", "INSTALL", "--no-docs", f"--library={lib}", "r_compat"],
                         capture_output=True, text=True, cwd=checkout, env=_env(), timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (lib / "torch" / "python").read_text().splitlines()[0] == \
        str(checkout / ".venv" / "bin" / "python")
    res = rscript("-e", GRAD_EXPR, lib=lib, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout == GRAD_OUTPUT


def test_install_r_never_replaces_r_torch(tmp_path: Path) -> None:
    desc = tmp_path / "torch" / "DESCRIPTION"
    desc.parent.mkdir()
    original = "Package: torch\nTitle: Tensors and Neural Networks with 'GPU' Acceleration\n"
    desc.write_text(original)
    res = subprocess.run([sys.executable, "-m", "rtorch_py.tools.cli", "install-r", "--lib",
                          str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 1
    assert "R torch's own" in res.stderr and "--lib DIR" in res.stderr
    assert desc.read_text() == original


# --------------------------------------------------------------------------
# knitr / rmarkdown

RMD = """---
title: "torch in knitr"
output: html_document
---

```{r}
library(torch)
x <- torch_tensor(c(1, 2), requires_grad = TRUE)
y <- (x^2)$sum()
y$backward()
x$grad
```

Inline: the sum is `r as_array(y)`.
"""


def test_rmd_renders_with_plain_rmarkdown(lib: Path, tmp_path: Path) -> None:
    (tmp_path / "doc.Rmd").write_text(RMD)
    res = rscript("-e", 'rmarkdown::render("doc.Rmd", quiet = TRUE)', lib=lib, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    html = (tmp_path / "doc.html").read_text()
    assert "## torch_tensor\n##  2\n##  4\n## [ CPUFloatType{2} ]" in html
    assert "the sum is 5." in html


def _knit_all(out: Path) -> str:
    """R code knitting every vignette into `out`, each in a fresh environment."""
    calls = [f'knitr::knit("{rmd}", output = "{out / (rmd.stem + ".md")}", quiet = TRUE, '
             f'envir = new.env(parent = globalenv()))' for rmd in sorted(VIGNETTES.glob("*.Rmd"))]
    # figures (and R's default graphics file) go beside `out` (the same path for
    # both knits, as it is written into the .md), not into the sources
    return "\n".join(["options(knitr.progress = FALSE)",
                      f'knitr::opts_chunk$set(fig.path = "{out.parent}/figure/")',
                      f'pdf("{out}/Rplots.pdf")', *calls])


def test_vignettes_knit_identically_in_plain_r_and_rtorch_py_run(lib: Path,
                                                                 tmp_path: Path) -> None:
    plain, embedded = tmp_path / "plain", tmp_path / "embedded"
    plain.mkdir()
    embedded.mkdir()
    (tmp_path / "plain.R").write_text(_knit_all(plain))
    (tmp_path / "embedded.R").write_text(_knit_all(embedded))
    res = rscript(str(tmp_path / "plain.R"), lib=lib, cwd=VIGNETTES, timeout=600)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([sys.executable, "-m", "rtorch_py.tools.cli", "run",
                       str(tmp_path / "embedded.R")], capture_output=True, text=True,
                      cwd=VIGNETTES, timeout=600)
    assert res.returncode == 0, res.stderr
    names = sorted(p.name for p in plain.glob("*.md"))
    assert names == sorted(p.stem + ".md" for p in VIGNETTES.glob("*.Rmd")) and names
    for name in names:
        a, b = (plain / name).read_text(), (embedded / name).read_text()
        rmd = (VIGNETTES / name).with_suffix(".Rmd").read_text()
        assert a.count("\n#> ") > rmd.count("\n#> "), f"{name}: no R output knitted"
        assert a == b, f"{name} knits differently in plain R and under rtorch-py run"


# --------------------------------------------------------------------------
# Jupyter


def _execute(notebook: Path, kernel: str, env: dict | None = None) -> list[str]:
    """Execute a notebook headlessly; the text of every code cell's outputs."""
    import nbclient
    import nbformat
    nb = nbformat.read(notebook, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name=kernel,
                                     resources={"metadata": {"path": str(notebook.parent)}})
    old = dict(os.environ)
    os.environ.update(env or {})
    try:
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    texts = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            texts.append("".join(o.get("text", "") or o.get("data", {}).get("text/plain", "")
                                 for o in cell.outputs))
    return texts


def test_notebook_with_rpy2_r_cells_executes() -> None:
    out = _execute(VIGNETTES / "jupyter-rpy2.ipynb", "python3")
    joined = "\n".join(out)
    # %%R -i x: R sees the Python tensor; -o y: Python gets R's result back
    assert "[ grad_fn = <SumBackward0> ]" in joined
    assert "torch_tensor\n 2\n 4\n 6\n[ CPUFloatType{3} ]" in out[-1]


def test_r_kernel_notebook_executes(lib: Path, tmp_path: Path) -> None:
    kernels = tmp_path / "jupyter" / "kernels" / "ir"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(
        '{"argv": ["R", "--slave", "-e", "IRkernel::main()", "--args", "{connection_file}"],'
        ' "display_name": "R", "language": "R"}')
    out = _execute(VIGNETTES / "jupyter-r-kernel.ipynb", "ir",
                   {"JUPYTER_PATH": str(tmp_path / "jupyter"), "R_LIBS": str(lib)})
    assert out[0] == "torch_tensor\n14\n[ CPUFloatType{} ][ grad_fn = <SumBackward0> ]"
    assert out[1] == "torch_tensor\n 2\n 4\n 6\n[ CPUFloatType{3} ]"
    assert out[2] == "[1] 2 4 6"


# --------------------------------------------------------------------------
# R CMD check


def test_r_cmd_check_has_no_errors(tmp_path: Path) -> None:
    """The package passes `R CMD check` without errors (its warnings and notes,
    and why, are listed in r_compat/README.md). The check loads it in plain R."""
    from rtorch_py.r import _BUILD_LEFTOVERS, install_coro, r_source_dir
    src = tmp_path / "torch"
    shutil.copytree(r_source_dir(), src, ignore=_BUILD_LEFTOVERS)
    deps = tmp_path / "deps"  # (the shim imports coro, which Debian doesn't package)
    deps.mkdir()
    install_coro(deps, tmp_path, always=True)
    env = _env(RTORCH_PYTHON=sys.executable, _R_CHECK_FORCE_SUGGESTS_="false", R_LIBS=str(deps))
    res = subprocess.run(["R", "CMD", "build", "--no-build-vignettes", "torch"],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    (tarball,) = tmp_path.glob("torch_*.tar.gz")
    res = subprocess.run(["R", "CMD", "check", "--no-manual", tarball.name],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
    log = (tmp_path / "torch.Rcheck" / "00check.log").read_text()
    assert res.returncode == 0 and "ERROR" not in log, log[-3000:]
    assert "checking whether the package can be loaded ... OK" in log
