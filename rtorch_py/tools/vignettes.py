"""Reproduce the vignettes in R and Python and cross-check them against PyTorch.

Each `vignettes/*.Rmd` names its Python twin in its YAML header (`twin: x.py`).
The twin module provides

- `rtorch() -> {chunk: {quantity: value}}`: the same computation with rtorch_py;
- `pytorch() -> {chunk: {quantity: value}}`: the same computation with real PyTorch;
- optionally `R_EXPR = {quantity: "R expression"}` (default: the quantity itself
  is the R expression) and `TOLERANCE = {quantity: (atol, rtol)}`.

The R side is the Rmd's R chunks run as one script through `rtorch-py run`
(the bridge's command-line contract, nothing else): a marker line is printed
before each chunk so its stdout can be cut out, and after a chunk every
quantity checked there is evaluated in R and written to a side file.

A chunk's expected output is recorded in the Rmd right after the chunk, in an
HTML comment (so the rendered page shows only the real output):

    <!-- expected output of chunk-label
    #> torch_tensor
    #>  2
    #> [ CPUFloatType{1} ]
    -->

It is the chunk's stdout byte for byte, one `#> ` per line.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import re
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[2]  # the checkout: this is rtorch_py/tools/vignettes.py
VIGNETTES = ROOT / "vignettes"
DEFAULT_OUT = ROOT / "build" / "vignettes"
ATOL, RTOL = 1e-5, 1e-5          # default tolerance: atol + rtol * max|PyTorch value|
R_TIMEOUT = 600                  # seconds per R process
CHUNK_MARK = "<<<rtorch-vignette-chunk:{}>>>"


# --------------------------------------------------------------------------
# Reading the Rmd


@dataclass
class Chunk:
    label: str
    code: str
    expected: str | None = None   # expected stdout, exactly


@dataclass
class Vignette:
    name: str                     # the Rmd's stem
    rmd: Path
    twin: Path
    chunks: list[Chunk]

    def chunk(self, label: str) -> Chunk | None:
        return next((c for c in self.chunks if c.label == label), None)


_CHUNK_RE = re.compile(r"^```\{r([^}]*)\}[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
_EXPECTED_RE = re.compile(r"<!--\s*expected output of\s+([\w.-]+)[^\n]*\n(.*?)-->", re.S)
_TWIN_RE = re.compile(r"^twin:\s*[\"']?([^\"'\s]+)", re.M)


def _chunk_label(header: str, n: int) -> tuple[str, bool]:
    """(label, evaluated?) from the text between `{r` and `}`."""
    parts = [p.strip() for p in header.split(",")] if header.strip() else []
    label = f"unnamed-chunk-{n}"
    if parts and "=" not in parts[0]:
        label = parts.pop(0)
    options = {k.strip(): v.strip() for k, v in (p.split("=", 1) for p in parts if "=" in p)}
    return label, options.get("eval", "TRUE") not in ("FALSE", "F")


def _expected_text(block: str) -> str:
    if not block.strip():
        return ""                 # the chunk must print nothing
    lines = block.strip("\n").split("\n")
    out = []
    for line in lines:
        if not line.startswith("#>"):
            raise ValueError(f"expected-output line without '#>': {line!r}")
        out.append(line[3:] if line.startswith("#> ") else line[2:])
    return "\n".join(out) + "\n"


def read_vignette(rmd: Path) -> Vignette:
    """Parse an Rmd into its evaluated R chunks, with recorded expected outputs."""
    text = rmd.read_text()
    m = _TWIN_RE.search(text.split("\n---", 1)[0])
    if not m:
        raise ValueError(f"{rmd.name}: no `twin:` field in the YAML header")
    chunks, n = [], 0
    for cm in _CHUNK_RE.finditer(text):
        n += 1
        label, evaluated = _chunk_label(cm.group(1), n)
        if evaluated:
            chunks.append(Chunk(label, cm.group(2)))
    v = Vignette(rmd.stem, rmd, rmd.parent / m.group(1), chunks)
    for em in _EXPECTED_RE.finditer(text):
        c = v.chunk(em.group(1))
        if c is None:
            raise ValueError(f"{rmd.name}: expected output for unknown chunk {em.group(1)!r}")
        c.expected = _expected_text(em.group(2))
    return v


def find_vignettes(directory: Path = VIGNETTES, only: Sequence[str] = ()) -> list[Vignette]:
    found = [read_vignette(p) for p in sorted(directory.glob("*.Rmd"))]
    if only:
        found = [v for v in found if any(o in v.name for o in only)]
    return found


# --------------------------------------------------------------------------
# Values


@dataclass
class Value:
    """A checked quantity: a float64 array (with its shape) or a string."""
    array: np.ndarray | None = None
    text: str | None = None
    error: str | None = None
    logical: bool = False         # shown as TRUE/FALSE

    def short(self) -> str:
        if self.error is not None:
            return "error"
        if self.text is not None:
            s = self.text.replace("\n", "⏎")
            return s if len(s) <= 28 else s[:27] + "…"
        a = self.array
        flat = a.reshape(-1)
        if self.logical:
            shown = " ".join("TRUE" if x else "FALSE" for x in flat[:6])
            return shown + (" …" if a.size > 6 else "")
        if a.size <= 3:
            nums = ", ".join(_num(x) for x in flat)
            return f"[{nums}]" if a.ndim else nums
        dims = "×".join(map(str, a.shape))
        return f"{dims}: {_num(flat[0])}, {_num(flat[1])}, …"


def _num(x: float) -> str:
    return f"{x:.4g}" if math.isfinite(x) else str(x)


def to_value(x: Any) -> Value:
    """Turn an rtorch_py tensor, a torch tensor, a number, bool or str into a Value."""
    if isinstance(x, Value):
        return x
    if isinstance(x, str):
        return Value(text=x)
    if x is None:
        return Value(text="NULL")
    if hasattr(x, "detach") and hasattr(x, "numpy"):       # rtorch_py or torch tensor
        x = x.detach().numpy()
    a = np.asarray(x)
    return Value(array=a.astype(np.float64), logical=a.dtype == np.bool_)


# --------------------------------------------------------------------------
# The R run (through `rtorch-py run`, as a user would)

_R_PREAMBLE = r"""
.vignette_values <- "{values}"
.vignette_value <- function(chunk, quantity, expr) {{
  line <- tryCatch({{
    v <- eval(expr, globalenv())
    if (is_torch_tensor(v)) {{
      shape <- as.integer(v$shape)
      a <- as_array(v$detach())
      if (length(dim(a)) > 1) a <- aperm(a, rev(seq_along(dim(a))))
      paste("num", paste(shape, collapse = ","), paste(sprintf("%.17g", as.numeric(a)), collapse = " "), sep = "\t")
    }} else if (is.numeric(v) || is.logical(v)) {{
      kind <- if (is.logical(v)) "lgl" else "num"
      paste(kind, length(v), paste(sprintf("%.17g", as.numeric(v)), collapse = " "), sep = "\t")
    }} else {{
      s <- if (is.character(v)) paste(v, collapse = "\n") else paste(utils::capture.output(print(v)), collapse = "\n")
      paste("str", "", gsub("\t", "\\t", gsub("\n", "\\n", s, fixed = TRUE), fixed = TRUE), sep = "\t")
    }}
  }}, error = function(e) paste("err", "", gsub("\n", " ", conditionMessage(e)), sep = "\t"))
  cat(chunk, "\t", quantity, "\t", line, "\n", sep = "", file = .vignette_values, append = TRUE)
}}
"""


def _r_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def r_script(v: Vignette, checks: dict[str, dict[str, str]], values_path: Path) -> str:
    """The Rmd's R chunks as one script, with chunk markers and value probes."""
    parts = [_R_PREAMBLE.format(values=str(values_path).replace("\\", "/"))]
    for c in v.chunks:
        parts.append(f'cat("{CHUNK_MARK.format(c.label)}\\n")')
        parts.append(c.code.rstrip("\n"))
        for quantity, expr in checks.get(c.label, {}).items():
            parts.append(f"invisible(.vignette_value({_r_string(c.label)}, {_r_string(quantity)}, "
                         f"quote({expr})))")
    parts.append(f'cat("{CHUNK_MARK.format("__end__")}\\n")')
    return "\n".join(parts) + "\n"


@dataclass
class RRun:
    outputs: dict[str, str] = field(default_factory=dict)          # chunk -> stdout
    values: dict[tuple[str, str], Value] = field(default_factory=dict)
    error: str | None = None     # R's stderr when the script failed
    finished: bool = False       # the script ran to its end


def rtorch_py_command() -> list[str]:
    """How to call the `rtorch-py` console script of this installation."""
    exe = Path(sys.executable).parent / "rtorch-py"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "rtorch_py.tools.cli"]


def run_r(v: Vignette, checks: dict[str, dict[str, str]], keep: Path | None = None) -> RRun:
    """Run the vignette's R chunks through `rtorch-py run` (a copy of the
    generated script is left in `keep`, if given)."""
    with tempfile.TemporaryDirectory(prefix="rtorch-vignette-") as tmp:
        where = Path(tmp) if keep is None else keep.resolve()
        where.mkdir(parents=True, exist_ok=True)
        values_path = where / f"{v.name}.values.tsv"
        values_path.unlink(missing_ok=True)
        script = where / f"{v.name}.R"
        script.write_text(r_script(v, checks, values_path))
        try:
            proc = subprocess.run(rtorch_py_command() + ["run", str(script)], cwd=v.rmd.parent,
                                  capture_output=True, text=True, timeout=R_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as e:
            return RRun(error=f"could not run rtorch-py: {e}")
        run = RRun()
        pieces = re.split(r"<<<rtorch-vignette-chunk:([^>]*)>>>\n", proc.stdout)
        for label, out in zip(pieces[1::2], pieces[2::2]):
            if label != "__end__":
                run.outputs[label] = out
        run.finished = "__end__" in pieces[1::2]
        if proc.returncode != 0 or not run.finished:
            last = pieces[-2] if len(pieces) > 1 else "(none)"
            stderr = "\n".join(proc.stderr.strip().splitlines()[-6:])
            run.error = (f"exit status {proc.returncode} in chunk {last!r}"
                         + (f": {stderr}" if stderr else ""))
        if values_path.exists():
            run.values = _read_r_values(values_path.read_text())
    return run


def _read_r_values(text: str) -> dict[tuple[str, str], Value]:
    values = {}
    for line in text.splitlines():
        chunk, quantity, kind, shape, payload = line.split("\t", 4)
        if kind in ("num", "lgl"):
            dims = tuple(int(d) for d in shape.split(",") if d != "")
            nums = np.array([float(x) for x in payload.split()], dtype=np.float64)
            values[chunk, quantity] = Value(array=nums.reshape(dims) if nums.size == math.prod(dims)
                                            else nums, logical=kind == "lgl")
        elif kind == "str":
            values[chunk, quantity] = Value(text=payload.replace("\\n", "\n").replace("\\t", "\t"))
        else:
            values[chunk, quantity] = Value(error=payload)
    return values


# --------------------------------------------------------------------------
# The Python twin and PyTorch


def load_twin(path: Path) -> Any:
    sys.path.insert(0, str(path.parent))   # twins may import each other
    try:
        spec = importlib.util.spec_from_file_location(f"vignette_twin_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def run_side(fn: Any) -> tuple[dict[tuple[str, str], Value], str | None]:
    """Call a twin's rtorch() or pytorch(): values keyed by (chunk, quantity)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # e.g. PyTorch's create_graph=True notice
            result = fn()
        return {(c, q): to_value(x) for c, qs in result.items() for q, x in qs.items()}, None
    except Exception as e:  # reported as a mismatch, not a crash
        return {}, f"{type(e).__name__}: {e}"


# --------------------------------------------------------------------------
# Comparing


@dataclass
class Row:
    vignette: str
    chunk: str
    quantity: str
    r: Value | None
    py: Value | None
    pt: Value | None
    diff: float | None = None
    tol: float | None = None
    printed_ok: bool | None = None     # None: no expected output recorded
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def compare_values(values: dict[str, Value | None], atol: float, rtol: float
                   ) -> tuple[float | None, float | None, list[str]]:
    """Max abs difference over every pair, the tolerance, and what disagrees."""
    problems = [f"{side} value missing" for side, v in values.items() if v is None]
    problems += [f"{side}: {v.error}" for side, v in values.items() if v is not None and v.error]
    if problems:
        return None, None, problems
    vals = list(values.items())
    if any(v.text is not None for _, v in vals):
        texts = {side: v.text for side, v in vals}
        if len(set(texts.values())) > 1:
            problems.append("differ: " + ", ".join(f"{s}={t!r}" for s, t in texts.items()))
        return None, None, problems
    ref = values["PyTorch"].array
    tol = atol + rtol * (float(np.max(np.abs(ref))) if ref.size else 0.0)
    worst = 0.0
    for i, (sa, a) in enumerate(vals):
        for sb, b in vals[i + 1:]:
            if a.array.size != b.array.size or (a.array.ndim and b.array.ndim
                                                and a.array.shape != b.array.shape):
                problems.append(f"shape {sa} {a.array.shape} vs {sb} {b.array.shape}")
                continue
            d = np.abs(a.array.reshape(-1) - b.array.reshape(-1))
            d = float(np.max(np.where(np.isnan(d), np.inf, d))) if d.size else 0.0
            worst = max(worst, d)
            if not d <= tol:
                problems.append(f"{sa} vs {sb} differ by {d:.3g} > {tol:.3g}")
    return worst, tol, problems


def first_difference(expected: str, actual: str) -> str:
    exp, act = expected.split("\n"), actual.split("\n")
    for i, (e, a) in enumerate(zip(exp, act)):
        if e != a:
            return f"line {i + 1}: expected {e!r}, got {a!r}"
    return f"expected {len(exp) - 1} lines, got {len(act) - 1}"


def check_vignette(v: Vignette, twin: Any, r: RRun | None,
                   py: dict, pt: dict) -> list[Row]:
    """One row per checked quantity (plus one per printed-only chunk)."""
    r_expr = getattr(twin, "R_EXPR", {})
    tolerance = getattr(twin, "TOLERANCE", {})
    keys = list(dict.fromkeys(list(pt) + list(py)))
    rows = []
    for c in v.chunks:
        printed_ok, printed_problem = None, None
        if c.expected is not None and r is not None:
            actual = r.outputs.get(c.label)
            printed_ok = actual == c.expected
            if actual is None:
                printed_problem = "printed output missing (R stopped before this chunk)"
            elif not printed_ok:
                printed_problem = "printed output " + first_difference(c.expected, actual)
        chunk_keys = [k for k in keys if k[0] == c.label]
        if not chunk_keys and c.expected is not None:
            chunk_keys = [(c.label, None)]
        for chunk, quantity in chunk_keys:
            row = Row(v.name, chunk, quantity or "(printed output)", None, None, None,
                      printed_ok=printed_ok)
            if quantity is not None:
                sides = {"Python": py.get((chunk, quantity)), "PyTorch": pt.get((chunk, quantity))}
                if r is not None and r_expr.get(quantity, quantity) is not None:
                    sides = {"R": r.values.get((chunk, quantity)), **sides}
                row.r, row.py, row.pt = sides.get("R"), sides["Python"], sides["PyTorch"]
                atol, rtol = tolerance.get(quantity, (ATOL, RTOL))
                row.diff, row.tol, row.problems = compare_values(sides, atol, rtol)
            if printed_problem:
                row.problems.append(printed_problem)
            rows.append(row)
    # quantities whose chunk label is not an R chunk of the Rmd
    labels = {c.label for c in v.chunks}
    for chunk, quantity in keys:
        if chunk not in labels:
            rows.append(Row(v.name, chunk, quantity, None, py.get((chunk, quantity)),
                            pt.get((chunk, quantity)), problems=["no R chunk with this label"]))
    return rows


def checks_for_r(v: Vignette, twin: Any, keys: Sequence[tuple[str, str]]) -> dict:
    r_expr = getattr(twin, "R_EXPR", {})
    checks: dict[str, dict[str, str]] = {}
    for chunk, quantity in keys:
        expr = r_expr.get(quantity, quantity)
        if expr is not None:          # None: a Python-only quantity
            checks.setdefault(chunk, {})[quantity] = expr
    return checks


# --------------------------------------------------------------------------
# HTML


def render_html(v: Vignette, out_dir: Path) -> tuple[Path | None, str | None]:
    """Knit and render the Rmd with rmarkdown in embedded R (shim attached by the
    chunks' `library(torch)`). Returns (html path, error)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rtorch-knit-") as tmp:
        expr = (f"rmarkdown::render({_r_string(str(v.rmd))}, output_dir = "
                f"{_r_string(str(out_dir.resolve()))}, intermediates_dir = {_r_string(tmp)}, "
                f"knit_root_dir = {_r_string(str(v.rmd.parent))}, quiet = TRUE)")
        try:
            proc = subprocess.run(rtorch_py_command() + ["run", "-e", expr], cwd=v.rmd.parent,
                                  capture_output=True, text=True, timeout=R_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"could not run rtorch-py: {e}"
    html = out_dir / (v.name + ".html")
    if proc.returncode != 0 or not html.exists():
        return None, proc.stderr.strip() or f"exit status {proc.returncode}"
    return html, None


# --------------------------------------------------------------------------
# Reporting

COLUMNS = ["vignette", "chunk", "quantity", "R", "Python", "PyTorch", "max abs diff",
           "tolerance", "printed output", "result"]


def _cells(row: Row) -> list[str]:
    def show(val: Value | None) -> str:
        return "—" if val is None else val.short()
    printed = {None: "—", True: "match", False: "MISMATCH"}[row.printed_ok]
    return [row.vignette, row.chunk, row.quantity, show(row.r), show(row.py), show(row.pt),
            "—" if row.diff is None else f"{row.diff:.2g}",
            "—" if row.tol is None else f"{row.tol:.1g}", printed,
            "ok" if row.ok else "MISMATCH"]


def markdown_table(rows: Sequence[Row]) -> str:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        cells = _cells(r)
        cells[2] = f"`{cells[2]}`"          # quantities are code (and `$` is not math)
        lines.append("| " + " | ".join(esc(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def rich_table(rows: Sequence[Row]) -> Any:
    from rich.table import Table
    table = Table(title="Vignettes: R (rtorch-py run) vs Python twin vs PyTorch", show_lines=False)
    for name in COLUMNS:
        table.add_column(name, overflow="fold")
    for r in rows:
        table.add_row(*_cells(r), style=None if r.ok else "bold red")
    return table


def report_markdown(rows: Sequence[Row], failures: Sequence[str], html: dict[str, str]) -> str:
    n_ok = sum(r.ok for r in rows)
    text = ["# Vignette cross-check", "",
            f"R (through `rtorch-py run`), the Python twin (rtorch_py) and PyTorch "
            f"{_torch_version()}. Values agree when every pairwise max abs difference is at most "
            f"the tolerance, atol + rtol × max|PyTorch value| (default atol = {ATOL:g}, "
            f"rtol = {RTOL:g}); printed output is compared byte for byte with the output "
            "recorded in the vignette.", "",
            f"**{n_ok} of {len(rows)} rows agree.**", ""]
    if html:
        text += ["HTML: " + ", ".join(f"[{n}]({p})" for n, p in html.items()), ""]
    text.append(markdown_table(rows))
    if failures:
        text += ["## Mismatches", ""] + ["- " + f.replace("\n", "\n  ") for f in failures] + [""]
    return "\n".join(text)


def _torch_version() -> str:
    mod = sys.modules.get("torch")
    return getattr(mod, "__version__", "")


# --------------------------------------------------------------------------
# Main


def row_failures(rows: Sequence[Row]) -> list[str]:
    """One line per failing row, or per run of rows of a vignette failing alike
    (e.g. every row after R stopped)."""
    lines: list[str] = []
    group: list[Row] = []

    def flush() -> None:
        if len(group) == 1:
            x = group[0]
            lines.append(f"{x.vignette} / {x.chunk} / {x.quantity}: {'; '.join(x.problems)}")
        elif group:
            a, b = group[0], group[-1]
            lines.append(f"{a.vignette}: {len(group)} rows, {a.chunk} / {a.quantity} to "
                         f"{b.chunk} / {b.quantity}: {'; '.join(a.problems)}")
        group.clear()

    for x in rows:
        if x.ok:
            continue
        if group and (group[0].vignette, group[0].problems) != (x.vignette, x.problems):
            flush()
        group.append(x)
    flush()
    return lines


@dataclass
class Options:
    with_r: bool = True
    html_dir: Path | None = None
    keep_scripts: Path | None = None


def run_all(vignettes: Sequence[Vignette], opts: Options, progress: Any
            ) -> tuple[list[Row], list[str], dict[str, str]]:
    """Run every vignette's sides, compare, render: (rows, failures, html pages)."""
    rows: list[Row] = []
    failures: list[str] = []
    html: dict[str, str] = {}
    steps_per = 3 + opts.with_r + (opts.html_dir is not None)
    task = progress.add_task("vignettes", total=steps_per * len(vignettes))

    def step(msg: str) -> None:
        progress.update(task, description=msg)
        if not progress.console.is_terminal:     # logs get one line per step instead
            progress.console.print(f"· {msg}", highlight=False)

    for v in vignettes:
        step(f"{v.name}: Python twin")
        try:
            twin = load_twin(v.twin)
        except Exception as e:
            failures.append(f"{v.name}: cannot load twin {v.twin.name}: {type(e).__name__}: {e}")
            progress.advance(task, steps_per)
            continue
        py, py_err = run_side(twin.rtorch)
        progress.advance(task)
        step(f"{v.name}: PyTorch")
        pt, pt_err = run_side(twin.pytorch)
        progress.advance(task)
        for side, err in (("Python twin", py_err), ("PyTorch reference", pt_err)):
            if err:
                failures.append(f"{v.name}: {side} failed: {err}")
        r = None
        if opts.with_r:
            step(f"{v.name}: R (rtorch-py run)")
            keys = list(dict.fromkeys(list(pt) + list(py)))
            r = run_r(v, checks_for_r(v, twin, keys), opts.keep_scripts)
            if r.error:
                failures.append(f"{v.name}: R run failed: {r.error}")
            progress.advance(task)
        step(f"{v.name}: comparing")
        v_rows = check_vignette(v, twin, r, py, pt)
        rows += v_rows
        failures += row_failures(v_rows)
        progress.advance(task)
        if opts.html_dir is not None:
            step(f"{v.name}: HTML (rmarkdown)")
            path, err = render_html(v, opts.html_dir)
            if err:
                failures.append(f"{v.name}: HTML rendering failed: {err}")
            else:
                html[v.name] = path.name
            progress.advance(task)
    progress.update(task, description="done")
    return rows, failures, html


def main(argv: Sequence[str] | None = None) -> int:
    """`rtorch-py vignettes [--html DIR] [--out DIR] [--only NAME] [--no-r]`;
    returns the exit status (1 on any mismatch)."""
    parser = argparse.ArgumentParser(
        prog="rtorch-py vignettes",
        description="Reproduce the vignettes in R (through rtorch-py run) and in Python, "
                    "cross-check them against PyTorch; non-zero exit on any mismatch.")
    parser.add_argument("--html", metavar="DIR", type=Path,
                        help="also render each .Rmd to HTML in DIR (and write the table there)")
    parser.add_argument("--out", metavar="DIR", type=Path, default=None,
                        help="where to write cross-check.md (default: the --html DIR, "
                             f"else {DEFAULT_OUT.relative_to(ROOT)})")
    parser.add_argument("--only", metavar="NAME", action="append", default=[],
                        help="only vignettes whose file name contains NAME (repeatable)")
    parser.add_argument("--no-r", action="store_true",
                        help="skip the R side (Python twin vs PyTorch only)")
    parser.add_argument("--keep-scripts", metavar="DIR", type=Path,
                        help="keep the generated R scripts in DIR (to rerun one by hand)")
    parser.add_argument("--vignettes", metavar="DIR", type=Path, default=VIGNETTES,
                        help="where the .Rmd files and their twins are (default: vignettes/)")
    args = parser.parse_args(argv)

    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    console = Console() if sys.stdout.isatty() else Console(width=200)
    vignettes = find_vignettes(args.vignettes, args.only)
    if not vignettes:
        console.print("[red]no vignettes found[/red]")
        return 2
    opts = Options(not args.no_r, args.html, args.keep_scripts)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        rows, failures, html = run_all(vignettes, opts, progress)

    console.print(rich_table(rows))
    out_dir = args.out or args.html or DEFAULT_OUT
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / "cross-check.md"
    md.write_text(report_markdown(rows, failures, html))
    n_ok = sum(r.ok for r in rows)
    console.print(f"{n_ok} of {len(rows)} rows agree; table written to {md}")
    if html:
        console.print(f"HTML: {', '.join(str(args.html / p) for p in html.values())}")
    if failures:
        console.print(Text(f"{len(failures)} mismatch(es):", style="bold red"))
        for f in failures:
            console.print(Text("  ✗ ", style="red") + Text(f), highlight=False)
        return 1
    console.print(Text("all rows agree", style="bold green"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
