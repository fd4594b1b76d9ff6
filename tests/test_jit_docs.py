"""R torch's TorchScript article and its `jit_*` reference examples, run in the shim
and compared with what R torch's rendered pages print (read from the mirror at test
time; skipped without it): exactly, except values that are random (numbers are
compared as numbers of the same shape) and libtorch's own traceback lines."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from helpers import ROOT, needs_r, run_r

MIRROR = ROOT.parent / ".mirror" / "mlverse+torch" / "repo"
# (the reference pages with examples; jit_load's, jit_scalar's, jit_tuple's and
# jit_unserialize's have none)
PAGES = ["articles/torchscript"] + [f"reference/{n}" for n in (
    "jit_compile", "jit_ops", "jit_save", "jit_save_for_mobile", "jit_serialize", "jit_trace",
    "jit_trace_module")]


def _page(name: str) -> str | None:
    if not MIRROR.exists():
        return None
    res = subprocess.run(["git", "--git-dir", str(MIRROR), "show", f"gh-pages:dev/{name}.md"],
                         capture_output=True, text=True)
    return res.stdout if res.returncode == 0 else None


def chunks(text: str) -> list[tuple[str, list[str]]]:
    """(code, expected output lines) of each R chunk of a rendered page (a reference
    page's examples: its "Usage" chunks are signatures)."""
    if "## Usage" in text:
        text = text[text.index("## Examples"):] if "## Examples" in text else ""
    out = []
    for block in re.findall(r"``` r\n(.*?)```", text, flags=re.S):
        code = [ln for ln in block.splitlines() if not ln.startswith("#>")]
        expected = [ln[3:] if ln.startswith("#> ") else ln[2:]
                    for ln in block.splitlines() if ln.startswith("#>")]
        out.append(("\n".join(code).strip(), expected))
    return out


_DRIVER = r"""
suppressPackageStartupMessages(library(torch))
chunks <- jsonlite::fromJSON(Sys.getenv("JIT_CHUNKS"), simplifyVector = FALSE)
setwd(tempdir())
env <- new.env(parent = globalenv())
res <- lapply(chunks, function(code) {
  out <- evaluate::evaluate(code, envir = env, new_device = FALSE)
  lines <- unlist(lapply(out, function(o) {
    if (inherits(o, "source")) return(NULL)
    if (is.character(o)) return(strsplit(o, "\n", fixed = TRUE)[[1]])
    if (inherits(o, "error")) return(c("Error:", conditionMessage(o)))
    if (inherits(o, "warning")) return(c("Warning:", conditionMessage(o)))
    if (inherits(o, "message")) return(sub("\n$", "", conditionMessage(o)))
    NULL
  }))
  if (is.null(lines)) character() else lines
})
cat(jsonlite::toJSON(res, auto_unbox = FALSE), file = Sys.getenv("JIT_OUT"))
"""

_NUMBER = re.compile(r"-?\d+\.?\d*(e[-+]?\d+)?")
_SCALE = re.compile(r"^\s*-?\d+(\.\d+)?(e[-+]?\d+)? \*$")


def _shape_of(line: str) -> str:
    """A line of values with each number a placeholder (values are random)."""
    return _NUMBER.sub("#", line).replace(" ", "")


def matches(expected: list[str], got: list[str]) -> str | None:
    """None when `got` prints what `expected` shows; else what differs."""
    if expected and expected[0] == "Error:":
        message = next((ln.lstrip("! ").strip() for ln in expected[1:] if ln.strip()), "")
        message = message.split("\n")[0]
        if not (got and got[0] == "Error:" and any(message in ln for ln in got)):
            return f"expected an error with {message!r}, got {got}"
        return None
    # (a scale line, `1e-05 *`, comes with some random values and not others)
    expected = [ln for ln in expected if not _SCALE.match(ln)]
    got = [ln for ln in got if not _SCALE.match(ln)]
    if len(expected) != len(got):
        return f"{len(expected)} lines expected, {len(got)} printed:\n{expected}\n{got}"
    for e, g in zip(expected, got):
        if e == g:
            continue
        e_, g_ = re.sub(r"%\d+", "%N", e), re.sub(r"%\d+", "%N", g)
        if e_ == g_ or (not e.lstrip().startswith("[") and _shape_of(e_) == _shape_of(g_)):
            continue
        return f"expected {e!r}, printed {g!r}"
    return None


@pytest.fixture(scope="module")
def pages() -> dict:
    got = {name: _page(name) for name in PAGES}
    if not any(got.values()):
        pytest.skip(f"R torch's rendered pages did NOT run: no mirror at {MIRROR}")
    return got


@needs_r
@pytest.mark.parametrize("name", PAGES)
def test_page_prints_what_r_torch_prints(name, pages, tmp_path):
    text = pages.get(name)
    if text is None:
        pytest.skip(f"{name} is not in the mirror's gh-pages branch")
    cs = chunks(text)
    assert cs, f"{name}: no R chunks found"
    (tmp_path / "chunks.json").write_text(json.dumps([c for c, _ in cs]))
    (tmp_path / "driver.R").write_text(_DRIVER)
    res = run_r(str(tmp_path / "driver.R"), env={"JIT_CHUNKS": str(tmp_path / "chunks.json"),
                                                 "JIT_OUT": str(tmp_path / "out.json")})
    assert res.returncode == 0, res.stderr[-3000:]
    outputs = json.loads((tmp_path / "out.json").read_text())
    problems = []
    for (code, expected), got in zip(cs, outputs):
        diff = matches(expected, got)
        if diff:
            problems.append(f"--- chunk:\n{code}\n{diff}")
    assert not problems, f"{name}:\n" + "\n".join(problems)
