"""Smoke run of the benchmark runner: it runs, and it makes its table and plot.

No timing is asserted here; benchmarks are not timed tests.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("threadpoolctl")
pytest.importorskip("rich")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[1]


def run(*args, tmp_path):
    env = dict(os.environ, COLUMNS="160")
    return subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)  # (a hang guard)


def test_quick_run_makes_table_markdown_and_plot(tmp_path):
    md, png = tmp_path / "results.md", tmp_path / "plot.png"
    res = run("--quick", "--quiet", "--markdown", str(md), "--plot", str(png), tmp_path=tmp_path)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    for name in ("tiny op", "custom function exp2", "100-op chain", "MLP step", "matmul",
                 "scaling", "Memory", "after backward", "numpy BLAS", "torch threads"):
        assert name in out, f"{name!r} missing from the table:\n{out}"
    assert "FAILED" not in out, out
    from benchmarks.rside import availability
    why = availability()  # R rows: measured, or marked skipped only when R/rpy2 are missing
    if why is None:
        for name in ("R: `y <- x * 2`", "R: `(x * 2)$backward()`", "using-autograd training loop"):
            assert name in out, f"{name!r} missing from the R table:\n{out}"
        assert "skipped" not in out and "last loss R" in out, out
    else:
        assert "R not available" in out, out
    text = md.read_text()
    assert "| workload | rtorch-py | PyTorch |" in text
    assert text.count("\n| ") >= 12
    assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"


def test_markdown_replaces_only_the_marked_block(tmp_path):
    from benchmarks.runner import write_markdown
    md = tmp_path / "RESULTS.md"
    md.write_text("# Title\n\n<!-- bench:begin -->\nold\n<!-- bench:end -->\n\n## Notes\nkeep\n")
    write_markdown(str(md), "| new table |\n")
    text = md.read_text()
    assert text.startswith("# Title\n") and text.rstrip().endswith("## Notes\nkeep")
    assert "old" not in text and "| new table |" in text
    fresh = tmp_path / "fresh.md"
    write_markdown(str(fresh), "x\n")
    assert fresh.read_text() == "<!-- bench:begin -->\nx\n<!-- bench:end -->\n"
    write_markdown(str(fresh), "y\n", "one-thread")   # a named block is appended, then replaced
    write_markdown(str(fresh), "z\n", "one-thread")
    assert fresh.read_text() == ("<!-- bench:begin -->\nx\n<!-- bench:end -->\n"
                                 "<!-- bench:one-thread:begin -->\nz\n<!-- bench:one-thread:end -->\n")


def test_only_selects_by_name_or_prefix():
    from benchmarks.runner import select
    from benchmarks.workloads import workloads
    ws = workloads(quick=True)
    names = lambda only: [w.name for w in select(ws, only)[0]]  # noqa: E731
    assert names("tiny") == ["tiny", "tiny_bwd"]
    assert names("mlp,matmul") == ["mlp", "matmul"]
    assert len(names("scaling")) == 3 and select(ws, "memory") == ([], True)
    assert select(ws, "nosuch") == ([], False)


def test_a_failing_workload_is_a_failed_row_not_a_pass():
    from benchmarks.runner import Report, run_workload, table_rows
    from benchmarks.workloads import Workload

    def setup(quick):
        def ours():
            raise TypeError("engine bug")
        return ours, (lambda: None)

    row = run_workload(Workload("broken", "broken op", setup, 0.5), True, 1, 0.001)
    assert row.status == "FAILED" and row.ratio is None
    (cells,) = table_rows(Report(rows=[row]))
    assert cells[-1] == "FAILED: rtorch: TypeError: engine bug"


def test_r_rows_are_marked_skipped_when_r_is_missing(monkeypatch):
    from benchmarks import rside
    from benchmarks.runner import Report, markdown, r_table_rows
    monkeypatch.setattr(rside, "availability", lambda: "R not available: rpy2 is not installed")
    rows = rside.measure_r(True, 1)
    calls = [f"r_call_{key}" for key, _ in rside._call_twins().values()]   # r_call: one row a call
    assert [r.name for r in rows] == ["r_op", "r_op_fresh", "r_op_bwd", "r_train", *calls,
                                      "r_loop", "r_loop_convnet", "r_loop_wide",
                                      "r_loop_memory"]
    assert all(r.skipped and r.error is None for r in rows)
    cells = r_table_rows(Report(r_rows=rows))
    assert all(c[-1] == "skipped: R not available: rpy2 is not installed" for c in cells)
    assert "skipped: R not available" in markdown(Report(r_rows=rows), "cmd")


def test_r_rows_selected_by_only():
    from benchmarks.runner import select_r
    assert select_r(None) == ("r_op", "r_op_fresh", "r_op_bwd", "r_train", "r_call", "r_loop",
                              "r_loop_convnet", "r_loop_wide", "r_loop_memory")
    assert select_r("r_loop") == ("r_loop", "r_loop_convnet", "r_loop_wide", "r_loop_memory")
    assert select_r("r_loop_c") == ("r_loop_convnet",)
    assert select_r("r_train") == ("r_train",)
    assert select_r("r_op") == ("r_op", "r_op_fresh", "r_op_bwd")
    assert select_r("tiny,mlp") == ()
