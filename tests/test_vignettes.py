"""The vignettes as tests (R through `rtorch-py run`, the Python twins, PyTorch),
and tests of the cross-check itself: wrong values and wrong printed output
must be caught and reported, with a non-zero exit.

The R tests never skip: if the bridge is broken they fail, naming the chunk.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rtorch_py.tools import vignettes as V

VIGNETTES = V.find_vignettes()
NAMES = [v.name for v in VIGNETTES]
RTORCH_PY = Path(sys.executable).parent / "rtorch-py"


def _sides(v: V.Vignette):
    twin = V.load_twin(v.twin)
    py, py_err = V.run_side(twin.rtorch)
    pt, pt_err = V.run_side(twin.pytorch)
    assert py_err is None, py_err
    assert pt_err is None, pt_err
    return twin, py, pt


def _failures(rows: list[V.Row]) -> str:
    return "\n".join(V.row_failures(rows))


# --- the vignettes themselves -------------------------------------------------


def test_every_vignette_has_a_twin_and_checks():
    assert len(VIGNETTES) >= 6
    for v in VIGNETTES:
        assert v.twin.exists(), v.twin
        twin = V.load_twin(v.twin)
        assert callable(twin.rtorch) and callable(twin.pytorch)
        assert any(c.expected is not None for c in v.chunks), f"{v.name}: no expected output"


@pytest.mark.parametrize("name", NAMES)
def test_python_twin_agrees_with_pytorch(name):
    v = next(v for v in VIGNETTES if v.name == name)
    twin, py, pt = _sides(v)
    assert py.keys() == pt.keys()
    rows = V.check_vignette(v, twin, None, py, pt)
    assert rows and all(r.ok for r in rows), _failures(rows)


@pytest.mark.parametrize("name", NAMES)
def test_vignette_in_r_agrees_and_prints_as_recorded(name):
    """R side through the bridge; fails (never skips) when the bridge is broken."""
    v = next(v for v in VIGNETTES if v.name == name)
    twin, py, pt = _sides(v)
    r = V.run_r(v, V.checks_for_r(v, twin, list(pt)))
    rows = V.check_vignette(v, twin, r, py, pt)
    assert r.error is None and r.finished, f"R run failed: {r.error}\n{_failures(rows)}"
    assert all(r.ok for r in rows), _failures(rows)


def test_training_loss_falls():
    sys.path.insert(0, str(V.VIGNETTES))
    try:
        import using_autograd
    finally:
        sys.path.remove(str(V.VIGNETTES))
    losses = using_autograd.rtorch()["train"]["losses"]
    assert len(losses) == 200 and losses[-1] < 0.5 * losses[0]
    assert all(b < a for a, b in zip(losses, losses[1:]))


# --- what the vignettes must contain -----------------------------------------

SEED_EXP2 = """\
if (torch_is_installed()) {
exp2 <- autograd_function(
forward = function(ctx, i) {
result <- i$exp()
ctx$save_for_backward(result = result)
result
},
backward = function(ctx, grad_output) {
list(i = grad_output * ctx$saved_variable$result)
}
)
}
"""


def test_exp2_is_the_reference_example_verbatim():
    v = next(v for v in VIGNETTES if v.name.endswith("autograd-function"))
    assert v.chunk("define-exp2").code == SEED_EXP2


def test_mul_constant_prints_what_the_documentation_shows():
    v = next(v for v in VIGNETTES if v.name.endswith("extending-autograd"))
    chunk = v.chunk("use-mul-constant")
    assert chunk.code.rstrip().endswith("x$grad")
    assert chunk.expected == "torch_tensor\n 2\n[ CPUFloatType{1} ]\n"


def test_linear_is_one_based_in_r_and_zero_based_in_python():
    v = next(v for v in VIGNETTES if v.name.endswith("extending-autograd"))
    code = v.chunk("define-linear").code
    assert "unsqueeze(1)" in code and "sum(dim = 1)" in code and "(0)" not in code
    twin = v.twin.read_text()
    assert "bias.unsqueeze(0)" in twin and "grad_output.sum(dim=0)" in twin


def test_python_code_shown_in_a_vignette_is_its_twins_code():
    for v in VIGNETTES:
        text, twin = v.rmd.read_text(), v.twin.read_text()
        for block in re.findall(r"^```python\n(.*?)^```", text, re.M | re.S):
            if block.startswith("x = "):          # the usage lines, written inline
                continue
            assert block in twin, f"{v.name}: this block is not in {v.twin.name}:\n{block}"


# --- the cross-check itself ---------------------------------------------------


def test_compare_values_tolerance_shape_and_text():
    a = V.Value(array=np.array([1.0, 2.0]))
    close = V.Value(array=np.array([1.0, 2.0 + 1e-6]))
    far = V.Value(array=np.array([1.0, 2.1]))
    diff, tol, problems = V.compare_values({"R": a, "Python": close, "PyTorch": a}, 1e-5, 1e-5)
    assert problems == [] and diff == pytest.approx(1e-6) and tol == pytest.approx(1e-5 + 2e-5)
    _, _, problems = V.compare_values({"R": far, "Python": a, "PyTorch": a}, 1e-5, 1e-5)
    assert problems and all("R vs" in p for p in problems)
    _, _, problems = V.compare_values(
        {"R": V.Value(array=np.zeros((2, 1))), "Python": V.Value(array=np.zeros((1, 2))),
         "PyTorch": V.Value(array=np.zeros((2, 1)))}, 1e-5, 1e-5)
    assert any("shape" in p for p in problems)
    _, _, problems = V.compare_values({"R": V.Value(text="MulBackward1"), "Python":
                                       V.Value(text="MulBackward0"), "PyTorch":
                                       V.Value(text="MulBackward0")}, 1e-5, 1e-5)
    assert problems and "MulBackward1" in problems[0]
    _, _, problems = V.compare_values({"R": None, "Python": a, "PyTorch": a}, 1e-5, 1e-5)
    assert problems == ["R value missing"]
    nan = V.Value(array=np.array([1.0, np.nan]))
    _, _, problems = V.compare_values({"R": nan, "Python": a, "PyTorch": a}, 1e-5, 1e-5)
    assert problems


def test_expected_output_block_is_exact_stdout():
    assert V._expected_text("#> [[1]]\n#> MulBackward1\n#>\n") == "[[1]]\nMulBackward1\n\n"
    assert V._expected_text("#>  2\n") == " 2\n"
    assert V._expected_text("\n") == ""
    with pytest.raises(ValueError):
        V._expected_text("torch_tensor\n")


def test_r_script_marks_chunks_and_probes_values(tmp_path):
    v = next(v for v in VIGNETTES if v.name.endswith("extending-autograd"))
    script = V.r_script(v, {"use-mul-constant": {"x$grad": "x$grad"}}, tmp_path / "v.tsv")
    assert script.index("<<<rtorch-vignette-chunk:define-linear>>>") < script.index(
        "<<<rtorch-vignette-chunk:use-mul-constant>>>")
    assert 'invisible(.vignette_value("use-mul-constant", "x$grad", quote(x$grad)))' in script
    assert script.rstrip().endswith('cat("<<<rtorch-vignette-chunk:__end__>>>\\n")')


def _copy_vignettes(tmp_path: Path) -> Path:
    dst = tmp_path / "vignettes"
    shutil.copytree(V.VIGNETTES, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def test_a_wrong_python_value_is_caught(tmp_path, capsys):
    src = _copy_vignettes(tmp_path)
    twin = src / "extending_autograd.py"
    text = twin.read_text()
    # the twin's mul_constant now multiplies the gradient by 3 instead of the constant
    twin.write_text(text.replace('return {"tensor": grad_output * v.constant}',
                                 'return {"tensor": grad_output * 3}', 1))
    status = V.main(["--vignettes", str(src), "--only", "extending", "--no-r",
                     "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert status == 1
    assert "extending-autograd / use-mul-constant / x$grad" in out
    assert "Python vs PyTorch differ by 1" in out
    report = (tmp_path / "out" / "cross-check.md").read_text()
    assert "MISMATCH" in report and "## Mismatches" in report


def test_a_wrong_recorded_output_is_caught_in_r(tmp_path, capsys):
    src = _copy_vignettes(tmp_path)
    rmd = src / "02-extending-autograd.Rmd"
    text = rmd.read_text()
    marker = "<!-- expected output of use-mul-constant\n#> torch_tensor\n#>  2\n"
    assert marker in text
    rmd.write_text(text.replace(marker, marker.replace("#>  2", "#>  3")))
    status = V.main(["--vignettes", str(src), "--only", "extending",
                     "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert status == 1
    assert "use-mul-constant" in out
    assert "printed output line 2: expected ' 3', got ' 2'" in out


def test_a_wrong_r_value_is_caught(tmp_path, capsys):
    src = _copy_vignettes(tmp_path)
    rmd = src / "02-extending-autograd.Rmd"
    text = rmd.read_text()
    # in R, mul_constant's backward now doubles its gradient (and the print changes)
    old = "tensor = grad_output * v$constant\n    )"
    assert old in text
    rmd.write_text(text.replace(old, "tensor = grad_output * v$constant * 2\n    )"))
    status = V.main(["--vignettes", str(src), "--only", "extending",
                     "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert status == 1
    assert re.search(r"use-mul-constant / x\$grad: R vs Python differ by 2", out)


def test_the_console_command_dispatches_to_vignettes(tmp_path):
    proc = subprocess.run([str(RTORCH_PY), "vignettes", "--only", "autograd-function", "--no-r",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all rows agree" in proc.stdout
    assert (tmp_path / "cross-check.md").read_text().count("| ok |") >= 5


def test_html_rendering_shows_the_engines_output(tmp_path):
    v = next(v for v in VIGNETTES if v.name.endswith("extending-autograd"))
    path, err = V.render_html(v, tmp_path)
    assert err is None, err
    html = path.read_text()
    assert "#&gt; [ CPUFloatType{1} ]" in html
    assert "#&gt; Error" not in html        # knitr shows R errors as "#> Error ..."
