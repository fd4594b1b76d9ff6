"""Every nn_* layer holds the fields R torch's does, with R torch's R types and values.

Generated from R torch's own source: `tests/r/nn-fields.R` evaluates R torch's
layer definitions (its R/nn*.R files, read from the snapshot at test time) on the
shim's nn_module(), so building one runs R torch's initialize() body; each layer
is built that way and as the shim's built-in layer with the same arguments, and
every field R torch assigns with `self$name <-` is compared (class, storage type,
value). Runs when the snapshot (`RTORCH_CONFORMANCE_SOURCE`, default
`../.mirror/mlverse+torch/repo`) exists, and says plainly that it did not otherwise.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT, needs_r, run_r

SOURCE = Path(os.environ.get("RTORCH_CONFORMANCE_SOURCE",
                             ROOT.parent / ".mirror" / "mlverse+torch" / "repo"))

# layers the script does not build, by design (the reason is printed beside each)
NOT_BUILT = {"nn_adaptive_log_softmax_with_loss", "nn_transformer_encoder"}


def _r_sources(dest: Path) -> Path:
    """R torch's nn*.R files and its conditions (value_error(), ...) from the snapshot."""
    git = ["git", f"--git-dir={SOURCE}"]
    names = subprocess.run([*git, "ls-tree", "--name-only", "HEAD", "R/"], check=True,
                           capture_output=True, text=True).stdout.split()
    wanted = [n for n in names if Path(n).name.startswith("nn") or n == "R/conditions.R"]
    for n in wanted:
        text = subprocess.run([*git, "show", f"HEAD:{n}"], check=True, capture_output=True,
                              text=True).stdout
        (dest / Path(n).name).write_text(text, encoding="utf-8")
    return dest


@needs_r
def test_every_layer_holds_r_torchs_fields(tmp_path: Path) -> None:
    if not (SOURCE / "HEAD").exists():
        pytest.skip(f"the nn fields comparison did NOT run: {SOURCE} is not a git directory of "
                    "an mlverse/torch snapshot (set RTORCH_CONFORMANCE_SOURCE)")
    res = run_r(str(ROOT / "tests" / "r" / "nn-fields.R"),
                env={"RTORCH_NN_SOURCE": str(_r_sources(tmp_path))})
    assert res.returncode == 0, res.stderr
    rows = [line.split("\t") for line in res.stdout.splitlines() if "\t" in line]
    status: dict[str, list[str]] = {}
    for case, state, detail in rows:
        status.setdefault(state, []).append(f"{case}: {detail}")
    assert not status.get("differ"), "\n".join(status["differ"])
    skipped = {line.split(":")[0].split("(")[0] for line in status.get("skip", [])}
    assert skipped == NOT_BUILT, status.get("skip")
    ok = status.get("ok", [])
    assert len(ok) >= 95, f"only {len(ok)} layers compared"
    # the fields packages read most are among those compared
    conv = next(line for line in ok if line.startswith("nn_conv2d(in_channels=4L"))
    for field in ("kernel_size", "stride", "padding", "dilation", "in_channels", "groups"):
        assert field in conv.split(": ", 1)[1].split(","), conv
