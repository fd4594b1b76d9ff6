"""`rtorch-py conformance SOURCE`: R torch's own testthat files, run in the shim.

SOURCE is a directory of R torch test files (its `tests/testthat`, or a
checkout holding one) or the git directory of a fetched mlverse/torch snapshot,
whose `tests/testthat` is then extracted into a scratch folder (blob by blob:
some blobs of such snapshots cannot be archived). The files are other people's
code: they are run from where they are, never copied into the project.

Each test file runs as R torch's suite runs it (`testthat::test_file` with
`package = "torch"`: helpers and setup sourced first, the tests evaluated in a
child of the package namespace, edition 2 as R torch's DESCRIPTION implies),
in its own `rtorch-py run` process under a time limit, so one hung or crashed
file is reported as such and the others still run. A small reporter streams
one JSON line per test as it ends (and one as it starts, so a hung file names
the test that hung).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

__all__ = ["GROUPS", "TestResult", "FileResult", "find_test_dir", "select_files", "run_file",
           "run", "format_report", "allowed_skip", "main"]

# R torch's test files by group (names without "test-" and ".R").
GROUPS: dict[str, list[str]] = {
    "core": [
        "autograd", "tensor", "operators", "indexing", "creation-ops", "dtype", "reduction",
        "compare", "scalar", "stack", "variable_list", "with-indices", "wrapers", "linalg",
        "gen-namespace", "gen-method", "generator", "translate", "dimname_list",
    ],
    "training": [
        "nn", "nn-linear", "nn-activation", "nn-loss", "nn-init", "nn-flatten", "nn-conv",
        "nn-batchnorm", "nn-normalization", "nn-utils-clip-grad", "nnf-loss", "nnf-dropout",
        "nnf-embedding", "nnf-padding", "nnf-pooling",
        "optim-sgd", "optim-adam", "optim-adamw", "optim-rmsprop", "optim-adagrad",
        "optim-adadelta", "optim-asgd", "optim-rprop", "optim-lbfgs", "optim-lr_scheduler",
        "utils-data", "utils-data-dataloader", "utils-data-sampler", "utils-data-enum", "save",
    ],
    "jit": ["trace", "script_module", "jit-compile", "jit-ops", "jit-execute"],
    # issue 18's names: distributions, ignite optimizers, transformer and recurrent
    # layers on packed sequences, devices, threads, quantization
    "names": [
        "distribution-chi2", "distribution-gamma", "distribution-normal",
        "distribution-poisson", "distributions-bernoulli", "distributions-categorical",
        "distributions-constraints", "distributions-mixture_same_family",
        "distributions-multivariate_normal", "ignite", "call_torch_function", "nn-rnn",
        "nn-transformer", "nn-multihead-attention", "nn-utils-rnn", "nn-utils-weight-norm",
        "nnf-fold", "device", "memory_format", "qscheme", "quantization", "0-threads",
        "allocator",
    ],
}

# Skips R torch itself takes on a CPU-only Linux machine with this R: its own
# GPU/MPS/OS helpers, R-version guards, and skips with no condition (their
# text then appears in the test file itself, checked by allowed_skip()).
_CPU_SKIPS = re.compile(
    r"A GPU is not available|cuda_is_available\(\)|backends_mps_is_available\(\)"
    r"|^On (Linux|Windows|Mac|macOS|Solaris)|Not on MacOS|Not an M1 Mac"
    r"|requires R >= |getRversion\(\)")

DEFAULT_TIMEOUT = 300.0

# --------------------------------------------------------------------------
# The R side: one process per test file.

_DRIVER = r"""
suppressPackageStartupMessages({
  library(testthat)
  library(torch)
})
local({
  out <- Sys.getenv("RTORCH_CONFORMANCE_OUT")
  path <- Sys.getenv("RTORCH_CONFORMANCE_FILE")
  emit <- function(x) {
    cat(jsonlite::toJSON(x, auto_unbox = TRUE, null = "null", digits = NA, force = TRUE),
        "\n", file = out, append = TRUE, sep = "")
  }
  first_lines <- function(s, n = 12L) {
    s <- strsplit(paste(s, collapse = "\n"), "\n", fixed = TRUE)[[1]]
    paste(utils::head(s, n), collapse = "\n")
  }
  describe <- function(e) {
    line <- if (!is.null(e$srcref)) as.integer(e$srcref[1])
    list(kind = sub("^expectation_", "", class(e)[1]),
         message = first_lines(conditionMessage(e)), line = line)
  }
  summarise <- function(r) {
    kinds <- vapply(r$results, function(e) class(e)[1], "")
    status <- if (any(kinds == "expectation_error")) "error"
      else if (any(kinds == "expectation_failure")) "failed"
      else if (any(kinds == "expectation_skip")) "skipped"
      else "passed"
    bad <- r$results[kinds %in% c("expectation_error", "expectation_failure", "expectation_skip")]
    warned <- r$results[kinds == "expectation_warning"]
    test <- if (is.na(r$test)) "(code run outside of test_that())" else r$test
    list(event = "test", test = test, status = status,
         expectations = sum(kinds == "expectation_success"),
         warnings = length(warned), time = if (is.na(r$real)) 0 else r$real,
         messages = lapply(utils::head(bad, 5L), describe),
         warning_messages = lapply(utils::head(warned, 3L), describe))
  }
  Streaming <- R6::R6Class("Streaming", inherit = testthat::ListReporter,
    public = list(
      written = 0L,
      tortured = FALSE,
      start_test = function(context, test) {
        emit(list(event = "start", test = test))
        self$tortured <- FALSE
        super$start_test(context, test)
      },
      # A test that errors between gctorture() and gctorture(FALSE) would leave
      # every later test crawling (test-tensor.R has two such pairs): turn it
      # off at the first result or at the end of the test, and say so, so one
      # error costs one test, not the file.
      add_result = function(context, test, result) {
        if (gctorture(FALSE)) self$tortured <- TRUE
        super$add_result(context, test, result)
      },
      end_test = function(context, test) {
        if (gctorture(FALSE) || self$tortured) {
          self$add_result(context, test, structure(
            class = c("expectation_warning", "expectation", "condition"),
            list(message = "runner: gctorture() was still on when this test ended; turned off",
                 srcref = NULL)))
        }
        super$end_test(context, test)
        self$flush()
      },
      end_context = function(context) {
        super$end_context(context)
        self$flush()
      },
      flush = function() {
        res <- self$results$as_list()
        for (r in res[seq_along(res) > self$written]) emit(summarise(r))
        self$written <- length(res)
      }
    ))
  testthat::test_file(path, reporter = Streaming$new(), package = "torch",
                      load_package = "installed", stop_on_failure = FALSE)
  emit(list(event = "done"))
})
"""


@dataclass
class TestResult:
    test: str
    status: str  # passed | failed | error | skipped | not run
    expectations: int = 0
    warnings: int = 0
    time: float = 0.0
    messages: list[dict] = field(default_factory=list)
    warning_messages: list[dict] = field(default_factory=list)

    @property
    def message(self) -> str:
        """The first failure, error or skip message, on one line."""
        if not self.messages:
            return ""
        lines = [ln for ln in self.messages[0]["message"].strip().split("\n") if ln.strip()]
        # A classed condition can print as "<type_error/error/condition>" first.
        if len(lines) > 1 and re.fullmatch(r"<[\w./]+>", lines[0].strip()):
            return f"{lines[0].strip()} {lines[1].strip()}"
        return lines[0] if lines else ""


@dataclass
class FileResult:
    file: str  # e.g. "tensor" for test-tensor.R
    status: str  # ok | timeout | crashed | missing
    time: float = 0.0
    tests: list[TestResult] = field(default_factory=list)
    running: str | None = None  # the test in progress when the file was stopped
    exit_code: int | None = None
    output_tail: str = ""  # the end of the process's output, when it did not finish
    note: str = ""  # e.g. that a crashed first run was retried

    def count(self, status: str) -> int:
        return sum(t.status == status for t in self.tests)


# --------------------------------------------------------------------------
# Finding the test files

def _is_git_dir(p: Path) -> bool:
    return (p / "HEAD").is_file() and (p / "objects").is_dir()


def _extract(git_dir: Path, dest: Path, rev: str = "HEAD") -> Path:
    """tests/testthat of a git directory, written blob by blob under dest."""
    prefix = "tests/testthat/"
    git = ["git", "--git-dir", str(git_dir)]
    ls = subprocess.run([*git, "ls-tree", "-r", "-z", rev, prefix], capture_output=True,
                        check=True)
    entries = []
    for rec in ls.stdout.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode != b"120000":  # skip symlinks
            entries.append((sha.decode(), path.decode()))
    if not entries:
        raise ValueError(f"{git_dir} has no {prefix} at {rev}")
    out = dest / "testthat"
    # One `git cat-file --batch` for every blob; a blob that cannot be read
    # (missing from a partial snapshot) is reported and left out.
    with subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as proc:
        assert proc.stdin and proc.stdout
        proc.stdin.write("".join(f"{sha}\n" for sha, _ in entries).encode())
        proc.stdin.close()
        for sha, path in entries:
            header = proc.stdout.readline().split()
            if len(header) < 3:  # "<sha> missing"
                print(f"conformance: cannot read {path} from the snapshot; left out",
                      file=sys.stderr)
                continue
            data = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after each object
            target = out / path[len(prefix):]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return out


def find_test_dir(source: str | os.PathLike, scratch: Path) -> Path:
    """The directory holding test-*.R for SOURCE (extracted into scratch if a git dir)."""
    src = Path(source).expanduser()
    if not src.exists():
        raise ValueError(f"conformance source {src} does not exist; give a directory of "
                         "R torch test files or the git directory of an mlverse/torch snapshot")
    if _is_git_dir(src) or (src / ".git").is_dir() and not (src / "tests").is_dir():
        return _extract(src if _is_git_dir(src) else src / ".git", scratch)
    for cand in (src, src / "testthat", src / "tests" / "testthat"):
        if any(cand.glob("test-*.R")):
            return cand
    raise ValueError(f"no test-*.R files in {src} (nor in its tests/testthat); give a "
                     "directory of R torch test files or the git directory of a snapshot")


def select_files(test_dir: Path, group: str | None = None,
                 pattern: str | None = None) -> list[str]:
    """File names (without test- and .R) to run: a group's, or all; then filtered
    by the regular expression `pattern` (matched anywhere in the name)."""
    present = sorted(p.name[5:-2] for p in test_dir.glob("test-*.R"))
    if group is not None:
        if group not in GROUPS:
            raise ValueError(f"unknown group {group!r}; choose one of {', '.join(GROUPS)}")
        names = GROUPS[group]
    else:
        names = present
    if pattern:
        rx = re.compile(pattern)
        names = [n for n in names if rx.search(n)]
    return names


# --------------------------------------------------------------------------
# Running

def _read_events(path: Path) -> list[dict]:
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut short by a kill
            pass
    return events


def _unique_names(tests: list[TestResult]) -> None:
    """Repeated test names in one file get " [2]", " [3]"... so each is addressable."""
    seen: dict[str, int] = {}
    for t in tests:
        seen[t.test] = seen.get(t.test, 0) + 1
        if seen[t.test] > 1:
            t.test = f"{t.test} [{seen[t.test]}]"


def _test_names(path: Path) -> list[str]:
    """Names of the test_that() blocks in a file, read from its source (for
    tests that never ran because the file was stopped)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return [m.group(2) for m in
            re.finditer(r"^\s*(?:testthat::)?test_that\(\s*(['\"])(.*?)(?<!\\)\1", text, re.M)]


def run_file(test_dir: Path, name: str, timeout: float = DEFAULT_TIMEOUT,
             work: Path | None = None, env: dict | None = None) -> FileResult:
    """Run test-NAME.R in a fresh `rtorch-py run` process, killed after `timeout` s."""
    path = test_dir / f"test-{name}.R"
    if not path.exists():
        return FileResult(name, "missing")
    work = Path(work or tempfile.mkdtemp(prefix="rtorch-conformance-"))
    work.mkdir(parents=True, exist_ok=True)
    out, log, driver = work / f"{name}.jsonl", work / f"{name}.log", work / "driver.R"
    out.unlink(missing_ok=True)
    if not driver.exists():
        driver.write_text(_DRIVER, encoding="utf-8")
    full_env = dict(os.environ)
    full_env.update({
        "RTORCH_CONFORMANCE_OUT": str(out), "RTORCH_CONFORMANCE_FILE": str(path),
        "NOT_CRAN": "true",  # as devtools::test() runs R torch's suite
        "TESTTHAT_EDITION": "2",  # R torch's DESCRIPTION names no edition
    })
    full_env.pop("CI", None)  # on CI testthat fails new snapshots instead of recording them
    full_env.update(env or {})
    cmd = [sys.executable, "-m", "rtorch_py.tools.cli", "run", str(driver)]
    start = time.monotonic()
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=full_env,
                                cwd=work, start_new_session=True)
        try:
            code: int | None = proc.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: R and all it started
            proc.wait()
            code, timed_out = None, True
    elapsed = time.monotonic() - start

    events = _read_events(out)
    tests = [TestResult(**{k: e[k] for k in TestResult.__dataclass_fields__ if k in e})
             for e in events if e.get("event") == "test"]
    done = any(e.get("event") == "done" for e in events)
    started = [e["test"] for e in events if e.get("event") == "start"]
    finished = {t.test for t in tests}
    running = next((s for s in reversed(started) if s not in finished), None)
    status = "ok" if done else ("timeout" if timed_out else "crashed")
    res = FileResult(name, status, elapsed, tests, running if not done else None, code)
    if not done:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        res.output_tail = tail
        # What never ran: the test in progress, then the rest of the file.
        names = _test_names(path)
        ran = [t.test for t in tests]
        pending = list(names)
        for n in ran:
            if n in pending:
                pending.remove(n)
        why = f"file stopped ({status} after {elapsed:.0f} s)"
        for n in pending:
            msg = why + (" while running this test" if n == running else " before this test")
            res.tests.append(TestResult(n, "not run", messages=[
                {"kind": "not run", "message": msg, "line": None}]))
    _unique_names(res.tests)
    return res


def run(test_dir: Path, names: Sequence[str], timeout: float = DEFAULT_TIMEOUT, jobs: int = 1,
        work: Path | None = None, progress: bool = False, retries: int = 2) -> list[FileResult]:
    """Run the named test files, `jobs` at a time; results in the order of `names`."""
    work = Path(work or tempfile.mkdtemp(prefix="rtorch-conformance-"))
    # Parallel files each get one BLAS thread, so `jobs` processes share the cores.
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"} if jobs > 1 else {}

    def one(name: str) -> FileResult:
        res = run_file(test_dir, name, timeout, work, env)
        if progress:
            print(f"  {name}: {_counts(res)}", file=sys.stderr, flush=True)
        return res

    # Biggest files first, so a long one does not start last and run alone.
    def size(name: str) -> int:
        p = test_dir / f"test-{name}.R"
        return p.stat().st_size if p.exists() else 0

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = dict(zip(order := sorted(names, key=size, reverse=True), pool.map(one, order)))
    # A crashed file runs again, alone, up to `retries` times: crashes of the
    # R/Python process come in bursts, and a crash is reported either way.
    for name in names:
        first, tries = done[name], 0
        while done[name].status == "crashed" and tries < retries:
            time.sleep(2)
            done[name] = run_file(test_dir, name, timeout, work, env)
            tries += 1
        if tries:
            done[name].note = (
                f"the first run crashed (exit code {first.exit_code}) after {first.time:.0f} s"
                + (f" in '{first.running}'" if first.running else " before any test")
                + f"; these are the results of rerun {tries}")
            if progress:
                print(f"  {name} (rerun): {_counts(done[name])}", file=sys.stderr, flush=True)
    return [done[n] for n in names]


# --------------------------------------------------------------------------
# Reporting

def allowed_skip(test: TestResult, source_text: str = "") -> bool:
    """A skip R torch itself takes on a CPU-only machine (see _CPU_SKIPS), or an
    unconditional skip("...") whose reason is written in the test file."""
    msg = test.messages[0]["message"] if test.messages else ""
    reason = re.sub(r"^Reason: ", "", msg.strip())
    if _CPU_SKIPS.search(reason):
        return True
    return bool(reason) and f'skip("{reason}")' in source_text


def _counts(f: FileResult) -> str:
    c = {s: f.count(s) for s in ("passed", "failed", "error", "skipped", "not run")}
    s = f"{c['passed']}/{len(f.tests)} passed, {c['failed']} failed, {c['error']} errored, " \
        f"{c['skipped']} skipped"
    if c["not run"]:
        s += f", {c['not run']} not run"
    if f.status != "ok":
        s += f" [{f.status.upper()}" + (f" in '{f.running}'" if f.running else "") + "]"
    return s


def format_report(results: Iterable[FileResult], messages: bool = True) -> str:
    """The per-file table, totals, then each test that did not pass with its message."""
    results = list(results)
    head = ("file", "tests", "passed", "failed", "errored", "skipped", "not run", "time", "status")
    rows = []
    for f in results:
        rows.append((f.file, len(f.tests), f.count("passed"), f.count("failed"),
                     f.count("error"), f.count("skipped"), f.count("not run"),
                     f"{f.time:.1f}s", f.status))
    tot = [sum(r[i] for r in rows) for i in range(1, 7)]
    rows.append(("TOTAL", *tot, f"{sum(f.time for f in results):.1f}s", ""))
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]

    def line(r: Sequence) -> str:
        return "  ".join(str(x).ljust(w) if i == 0 or i == len(r) - 1 else str(x).rjust(w)
                         for i, (x, w) in enumerate(zip(r, widths)))

    out = [line(head), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows[:-1]]
    out += ["  ".join("-" * w for w in widths), line(rows[-1])]
    total = tot[0]
    if total:
        out.append(f"\n{tot[1]}/{total} tests passed ({100 * tot[1] / total:.1f}%)")
    if messages:
        for f in results:
            bad = [t for t in f.tests if t.status != "passed"]
            if not bad and f.status == "ok" and not f.note:
                continue
            out.append(f"\n== test-{f.file}.R ({f.status})")
            if f.status != "ok" and f.running:
                out.append(f"   stopped while running: {f.running}")
            if f.status == "crashed":
                out.append(f"   exit code {f.exit_code}; last output:\n      "
                           + "\n      ".join(f.output_tail.strip().splitlines()[-8:]))
            if f.note:
                out.append(f"   note: {f.note}")
            for t in bad:
                where = ""
                if t.messages and t.messages[0].get("line"):
                    where = f" (line {t.messages[0]['line']})"
                out.append(f"  [{t.status}] {t.test}{where}: {t.message}")
    return "\n".join(out)


def to_json(results: Iterable[FileResult]) -> list[dict]:
    return [asdict(f) for f in results]


# --------------------------------------------------------------------------
# Command line

def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="rtorch-py conformance",
        description="Run R torch's own testthat files inside the shim and tabulate the results.")
    p.add_argument("source", help="a directory of R torch test files (or a checkout), or the "
                                  "git directory of an mlverse/torch snapshot")
    p.add_argument("--group", choices=sorted(GROUPS), help="run one group of files")
    p.add_argument("--filter", metavar="PATTERN",
                   help="only files whose name (without test- and .R) matches this regex")
    p.add_argument("--json", metavar="FILE", help="write every result to FILE as JSON")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"time limit per file (default {DEFAULT_TIMEOUT:.0f})")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="files run in parallel")
    p.add_argument("--keep", metavar="DIR",
                   help="keep the scratch folder (extracted tests, logs) in DIR")
    ns = p.parse_args(argv)

    scratch = Path(ns.keep) if ns.keep else Path(tempfile.mkdtemp(prefix="rtorch-conformance-"))
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        try:
            test_dir = find_test_dir(ns.source, scratch)
            names = select_files(test_dir, ns.group, ns.filter)
        except (ValueError, subprocess.CalledProcessError, re.error) as err:
            print(f"rtorch-py conformance: {err}", file=sys.stderr)
            return 2
        if not names:
            print("rtorch-py conformance: no test file matches", file=sys.stderr)
            return 2
        print(f"Running {len(names)} file(s) from {test_dir} ...", file=sys.stderr, flush=True)
        results = run(test_dir, names, ns.timeout, ns.jobs, scratch / "runs", progress=True)
        print(format_report(results))
        if ns.json:
            Path(ns.json).write_text(json.dumps(
                {"source": str(ns.source), "files": to_json(results)}, indent=1),
                encoding="utf-8")
    finally:
        if not ns.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    ok = all(f.status == "ok" and all(t.status in ("passed", "skipped") for t in f.tests)
             for f in results)
    return 0 if ok else 1
