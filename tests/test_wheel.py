"""A built wheel works outside the checkout: it carries the R package.

The wheel is built once (`pip wheel`, no build isolation: no download) and
installed with `--no-deps` into a fresh virtual environment; that environment
reaches its dependencies (NumPy, rpy2) through a `.pth` line naming the
project venv's site-packages. A path added that way is not a site directory,
so the project's editable install (a `.pth` hook there) stays inactive:
`rtorch_py` and its R sources can only come from the wheel, which the tests
check before using them. Everything runs from a directory outside the
checkout, with no RTORCH_PY_* variables pointing back into it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from helpers import ROOT, needs_r

pytestmark = needs_r

GRAD_SCRIPT = """library(torch)
x <- torch_tensor(1, requires_grad = TRUE)
(x * 2)$backward()
x$grad
"""
GRAD_OUTPUT = "torch_tensor\n 2\n[ CPUFloatType{1} ]\n"


def _clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RTORCH_PY", "RTORCH_PYTHON", "R_LIBS", "PYTHON"))}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(dist), str(ROOT)],
                   check=True, capture_output=True, text=True, cwd=tmp)
    (wheel,) = dist.glob("rtorch_py-*.whl")
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, text=True, cwd=tmp, env=_clean_env())
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], check=True, capture_output=True,
                               text=True).stdout.strip())
    (site / "project_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = tmp / "work"
    work.mkdir()
    return {"wheel": wheel, "python": py, "bin": env_dir / "bin", "site": site, "work": work}


def test_wheel_carries_the_r_package(wheel_env: dict) -> None:
    """Every file of r_compat/ in git (its dot files aside) is in the wheel: the
    shim's sources and the minimal coro installed beside it."""
    names = zipfile.ZipFile(wheel_env["wheel"]).namelist()
    tracked = subprocess.run(["git", "ls-files", "r_compat"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split()
    sources = [f for f in tracked if not Path(f).name.startswith(".")]
    assert "r_compat/R/bridge.R" in sources and "r_compat/coro/R/coro.R" in sources
    missing = [f for f in sources if f"rtorch_py/{f}" not in names]
    assert not missing, f"the wheel lacks {missing}"
    assert not [n for n in names if n.endswith((".o", ".so"))], "build leftovers in the wheel"


def test_installed_wheel_uses_its_own_files(wheel_env: dict) -> None:
    out = subprocess.run(
        [str(wheel_env["python"]), "-c",
         "import rtorch_py, rtorch_py.r as r; print(rtorch_py.__file__); print(r.r_source_dir())"],
        capture_output=True, text=True, cwd=wheel_env["work"], env=_clean_env(), check=True)
    module, source = out.stdout.splitlines()
    assert Path(module).is_relative_to(wheel_env["site"]), module
    assert Path(source).resolve() == (wheel_env["site"] / "rtorch_py" / "r_compat").resolve()
    assert not Path(source).resolve().is_relative_to(ROOT)


def test_rtorch_py_run_from_the_wheel(wheel_env: dict) -> None:
    script = wheel_env["work"] / "script.R"
    script.write_text(GRAD_SCRIPT)
    res = subprocess.run([str(wheel_env["bin"] / "rtorch-py"), "run", "script.R"],
                         capture_output=True, text=True, cwd=wheel_env["work"],
                         env=_clean_env(), timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout == GRAD_OUTPUT
    # the shim was built into the new environment's private library, from the wheel
    libs = list((wheel_env["bin"].parent / "lib" / "rtorch-py" / "R").glob("*/torch/DESCRIPTION"))
    assert libs, "no shim built inside the wheel's environment"


def test_install_r_from_the_wheel_then_plain_rscript(wheel_env: dict) -> None:
    lib = wheel_env["work"] / "rlib"
    res = subprocess.run([str(wheel_env["bin"] / "rtorch-py"), "install-r", "--lib", str(lib)],
                         capture_output=True, text=True, cwd=wheel_env["work"],
                         env=_clean_env(), timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    recorded = (lib / "torch" / "python").read_text().splitlines()[0]
    assert Path(recorded).parent == wheel_env["bin"]
    res = subprocess.run(["Rscript", "-e", GRAD_SCRIPT.replace("\n", "; ")],
                         capture_output=True, text=True, cwd=wheel_env["work"],
                         env=_clean_env(R_LIBS=str(lib)), timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout == GRAD_OUTPUT
