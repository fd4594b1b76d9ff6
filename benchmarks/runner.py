"""Time rtorch-py against PyTorch CPU in one process, interleaved, medians.

    python -m benchmarks                 # everything, prints the table
    python -m benchmarks --quick         # tiny sizes and rounds (CI smoke run)
    python -m benchmarks --only mlp,tiny --markdown out.md --plot out.png
    python -m benchmarks --profile chain100   # cProfile of our side only
    python -m benchmarks --only zoo           # the model zoo (zoo.py): only when named
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from threadpoolctl import threadpool_info

import rtorch_py as rt

from .rside import R_TORCH_OP_US
from .workloads import Workload, workloads


@dataclass
class Row:
    w: Workload
    ours: float | None = None      # µs per unit (median over rounds)
    theirs: float | None = None
    paired: float | None = None    # median over rounds of that round's ours/theirs
    error: str | None = None

    @property
    def ratio(self) -> float | None:
        return None if self.error else self.paired

    @property
    def status(self) -> str:
        if self.error:
            return "FAILED"
        if self.w.target is None:
            return "-"
        return "yes" if self.ratio <= self.w.target else "NO"


@dataclass
class Report:
    rows: list = field(default_factory=list)
    memory: dict | None = None
    memory_error: str | None = None
    env: dict = field(default_factory=dict)
    flat: tuple | None = None      # per-op time at longest / middle length: ours, torch, paired
    r_rows: list = field(default_factory=list)   # rside.RRow: the R side
    zoo_memory: dict | None = None   # zoo model -> peak MB of a step, each side


# --------------------------------------------------------------------------
# Environment: BLAS and threads

def numpy_blas() -> dict:
    """threadpoolctl's view of the BLAS NumPy links (not torch's)."""
    for lib in threadpool_info():
        if lib.get("user_api") == "blas" and "numpy" in lib.get("filepath", ""):
            return lib
    return next((lib for lib in threadpool_info() if lib.get("user_api") == "blas"), {})


def setup_threads(threads: int | None = None) -> dict:
    if threads:  # both engines get the same count: NumPy's BLAS via threadpoolctl
        from threadpoolctl import threadpool_limits
        setup_threads.limit = threadpool_limits(threads, user_api="blas")  # kept alive
    blas = numpy_blas()
    n = blas.get("num_threads") or os.cpu_count() or 1
    torch.set_num_threads(n)
    rt.torch_set_num_threads(n)  # ours too: oneDNN's products follow it, not BLAS's limit
    torch_blas = next((part.split("=", 1)[1] for part in torch.__config__.show().replace(",", "\n")
                       .split() if part.startswith("BLAS_INFO=")), "?")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    return {
        "rtorch-py": _git_version(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "numpy BLAS": f"{blas.get('internal_api')} {blas.get('version')}, kernel "
                      f"{blas.get('architecture')}, {blas.get('num_threads')} thread(s)",
        "torch threads": f"{torch.get_num_threads()}, rtorch-py's {rt.torch_get_num_threads()} "
                         f"(set_num_threads to NumPy's BLAS threads), torch BLAS {torch_blas}",
        "CPU": f"{cpu}, {os.cpu_count()} cores",
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "unset"),
        "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE", "unset"),
    }


def _git_version() -> str:
    import subprocess
    try:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        return "commit " + subprocess.run(["git", "describe", "--always", "--dirty"], cwd=root,
                                          capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


# --------------------------------------------------------------------------
# Timing

_CLOCK = {"now": time.perf_counter}   # --clock cpu: time.process_time (every thread's CPU)


def _time(fn, n: int) -> float:
    now = _CLOCK["now"]
    t0 = now()
    for _ in range(n):
        fn()
    return now() - t0


def _calibrate(fn, budget: float) -> int:
    """Calls per round so that one round takes about `budget` seconds."""
    n = 1
    while True:
        t = _time(fn, n)
        if t >= budget / 4 or n >= 1 << 20:
            return max(1, int(n * budget / max(t, 1e-9)))
        n *= 4


def measure(ours, theirs, rounds: int, budget: float) -> tuple:
    """Timed A, B, A, B... over `rounds` rounds: the median seconds per call of
    each, and the median of the per-round ratios (each round's pair ran under
    the same machine load, so the paired ratio is the steadier figure)."""
    n = (_calibrate(ours, budget), _calibrate(theirs, budget))
    if n == (1, 1) and _time(ours, 1) + _time(theirs, 1) > 4 * budget:
        rounds = max(5, rounds // 3)  # slow workloads: fewer, still interleaved, rounds
    samples: tuple = ([], [])
    gc.collect()
    for _ in range(rounds):
        for i, fn in enumerate((ours, theirs)):
            samples[i].append(_time(fn, n[i]) / n[i])
    ratio = statistics.median(a / b for a, b in zip(*samples))
    return statistics.median(samples[0]), statistics.median(samples[1]), ratio


def run_workload(w: Workload, quick: bool, rounds: int, budget: float) -> Row:
    try:
        ours, theirs = w.setup(quick)
    except Exception as err:
        return Row(w, error=f"setup: {type(err).__name__}: {err}")
    for side, fn in (("rtorch", ours), ("torch", theirs)):
        try:
            fn()  # warm-up, and a check that it runs at all
        except Exception as err:
            return Row(w, error=f"{side}: {type(err).__name__}: {err}")
    try:
        a, b, ratio = measure(ours, theirs, rounds, budget)
    except Exception as err:  # e.g. a second backward that breaks state the first left
        return Row(w, error=f"while timing: {type(err).__name__}: {err}")
    return Row(w, a * 1e6 / w.per, b * 1e6 / w.per, ratio)


def select(all_w: list, only: str | None) -> tuple[list, bool]:
    """Workloads picked by --only (names or name prefixes, comma-separated)."""
    if not only:
        return all_w, True
    keys = [k.strip() for k in only.split(",") if k.strip()]
    picked = [w for w in all_w if any(w.name == k or w.name.startswith(k) for k in keys)]
    return picked, any("memory".startswith(k) for k in keys)


def select_r(only: str | None) -> tuple:
    """The R rows picked by --only (all of them without --only)."""
    from .rside import R_NAMES
    if not only:
        return R_NAMES
    keys = [k.strip() for k in only.split(",") if k.strip()]
    return tuple(n for n in R_NAMES if any(n == k or n.startswith(k) for k in keys))


def run(args) -> Report:
    report = Report(env=setup_threads(args.threads))
    _CLOCK["now"] = time.process_time if args.clock == "cpu" else time.perf_counter
    gc.collect()
    gc.freeze()  # objects from imports never need scanning again: keep gc passes short
    quick = args.quick
    rounds = args.rounds or (3 if quick else 15)
    budget = args.budget or (0.002 if quick else 0.1)
    from .zoo import zoo_workloads  # the zoo is long: it runs only when --only names it
    chosen, with_memory = select(workloads(quick) + (zoo_workloads(quick) if args.only else []),
                                 args.only)
    r_names = select_r(args.only)
    if args.only and not chosen and not with_memory and not r_names:
        from .rside import R_NAMES
        raise SystemExit(f"--only {args.only}: no such workload; names are "
                         + ", ".join([*(w.name for w in workloads(quick)), *R_NAMES])
                         + ", memory")
    report.env["timing"] = (f"{rounds} rounds (5 for workloads slower than {2 * budget:g}s a "
                            f"call), each engine in turn (A, B, A, B...), ~{budget}s per engine "
                            "per round; µs columns: median over rounds; ratio: median of the "
                            "per-round ratios; gc enabled, import-time objects frozen")
    load0 = os.getloadavg()[0]
    for w in chosen:
        t0 = time.perf_counter()
        report.rows.append(run_workload(w, quick, rounds, budget))
        if not args.quiet:
            print(f"  {w.name}: {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
    if r_names:
        from .rside import measure_r
        log = None if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
        report.r_rows = measure_r(quick, rounds, numpy_blas().get("num_threads"), log, r_names,
                                  args.clock)
        report.env["R rows' clock"] = ("CPU time, user + system, every thread" if args.clock == "cpu"
                                       else "wall-clock time")
    if args.clock == "cpu":
        report.env["clock"] = "CPU time of the process, user + system, every thread (--clock cpu)"
    report.env["load average (1 min) before / after"] = f"{load0:.2f} / {os.getloadavg()[0]:.2f}"
    scal = [r for r in report.rows if r.w.name.startswith("scaling_") and not r.error]
    if len(scal) >= 2:
        report.flat = (scal[-1].ours / scal[-2].ours, scal[-1].theirs / scal[-2].theirs,
                       scal[-1].ratio / scal[-2].ratio)
    zoo_models = list(dict.fromkeys(r.w.name[4:].rsplit("_t", 1)[0] for r in report.rows
                                    if r.w.name.startswith("zoo_")))
    if zoo_models:
        from .zoo import measure_peaks
        t0 = time.perf_counter()
        report.zoo_memory = measure_peaks(zoo_models, quick)
        if not args.quiet:
            print(f"  zoo memory: {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
    if with_memory:
        from .memory import measure_memory
        t0 = time.perf_counter()
        try:
            report.memory = measure_memory(quick)
        except Exception as err:
            report.memory_error = f"{type(err).__name__}: {err}"
        if not args.quiet:
            print(f"  memory: {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
    return report


# --------------------------------------------------------------------------
# Output

def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 100 else f"{x:.2f}" if x < 10 else f"{x:.1f}"


def table_rows(report: Report) -> list[list[str]]:
    rows = []
    for r in report.rows:
        unit = f"µs/{r.w.unit}"
        if r.error:
            rows.append([r.w.label, "-", "-", unit, "-", _target(r.w), "FAILED: " + r.error])
            continue
        rows.append([r.w.label, _fmt(r.ours), _fmt(r.theirs), unit, f"{r.ratio:.3f}",
                     _target(r.w), r.status])
    if report.flat:
        a, b, rel = report.flat
        # PyTorch's C++ walk is the control: on a loaded machine absolute per-op
        # times drift between rows, the paired ratio much less.
        rows.append(["scaling: per-op time, longest / middle chain", f"{a:.2f}x", f"{b:.2f}x",
                     "", f"{rel:.3f}", "flat: ratio grows ≤ 1.5x", "yes" if rel <= 1.5 else "NO"])
    return rows


def _target(w: Workload) -> str:
    return f"≤ {w.target}" if w.target is not None else ""


HEAD = ["workload", "rtorch-py", "PyTorch", "unit", "ratio", "target", "met"]

R_HEAD = ["R side", "R", "Python", "PyTorch", "unit", "R / Python", "Python / PyTorch",
          "R / PyTorch", "target", "met"]


def r_table_rows(report: Report) -> list[list[str]]:
    rows = []
    for r in report.r_rows:
        if r.skipped or r.error:
            mark = f"skipped: {r.skipped}" if r.skipped else f"FAILED: {r.error}"
            rows.append([r.label, "-", "-", "-", r.unit, "-", "-", "-", r.target, mark])
            continue
        ratio = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
        rows.append([r.label, _fmt(r.r), _fmt(r.py), _fmt(r.torch), r.unit, ratio(r.r_over_py),
                     ratio(r.py_over_torch), ratio(r.r_over_torch), r.target, r.met])
    return rows


def r_notes(report: Report) -> list[str]:
    return [f"{r.name}: {r.note}" for r in report.r_rows if r.note]


def memory_rows(report: Report) -> list[list[str]]:
    m = report.memory
    if m is None:
        return [["memory", "FAILED: " + report.memory_error, "", "", ""]] \
            if report.memory_error else []
    o, t, buf = m["ours"], m["torch"], m["buffer_mb"]
    freed = o["tm_after"] <= 1.5 * buf
    return [
        ["graph alive (after forward)", f"{o['tm_fwd']:.1f}", f"{o['rss_fwd']:.1f}",
         f"{t['rss_fwd']:.1f}", f"{m['ops']} saved outputs = {m['ops'] * buf:.0f}"],
        ["peak during backward", f"{o['tm_peak_bwd']:.1f}", "", "", ""],
        ["after backward", f"{o['tm_after']:.1f}", f"{o['rss_after']:.1f}",
         f"{t['rss_after']:.1f}", f"x.grad = {buf:.1f} "
         + ("(saved buffers freed: yes)" if freed else "(saved buffers freed: NO)")],
    ]


ZOO_MEM_HEAD = ["zoo model", "rtorch-py peak MB", "PyTorch peak MB", "ratio"]


def zoo_memory_rows(report: Report) -> list[list[str]]:
    rows = []
    for name, m in (report.zoo_memory or {}).items():
        if "error" in m:
            rows.append([name, "FAILED: " + m["error"], "", ""])
        else:
            rows.append([name, f"{m['ours']:.1f}", f"{m['torch']:.1f}",
                         f"{m['ours'] / m['torch']:.2f}" if m["torch"] > 0 else "-"])
    return rows


ZOO_MEM_TITLE = ("Zoo: peak memory of one step (resident set's high-water mark above its level "
                 "before the step, fresh interpreter per model, 1 thread)")


MEM_HEAD = ["memory, MB held", "rtorch-py (tracemalloc)", "rtorch-py (RSS)", "PyTorch (RSS)",
            "expected"]


def print_report(report: Report) -> None:
    from rich.console import Console
    from rich.table import Table
    console = Console(width=max(Console().width, 120))
    if report.rows:
        t = Table(title="rtorch-py vs PyTorch CPU (median µs; ratio = rtorch / PyTorch, "
                        "median of paired rounds)")
        for h in HEAD:
            t.add_column(h, justify="left" if h in ("workload", "met") else "right")
        for row in table_rows(report):
            style = "red" if row[-1].startswith(("NO", "FAILED")) else None
            t.add_row(*row, style=style)
        console.print(t)
    if report.r_rows:
        t = Table(title="R side: R (`rtorch-py run benchmarks/bench.R`) vs Python on "
                        "rtorch-py vs PyTorch, interleaved rounds (median µs)")
        for h in R_HEAD:
            t.add_column(h, justify="left" if h in ("R side", "target", "met") else "right")
        for row in r_table_rows(report):
            style = "red" if row[-1].startswith(("NO", "FAILED")) else \
                "yellow" if row[-1].startswith("skipped") else None
            t.add_row(*row, style=style)
        console.print(t)
        for note in r_notes(report):
            console.print(f"[dim]{note}[/dim]")
    if report.zoo_memory:
        z = Table(title=ZOO_MEM_TITLE)
        for h in ZOO_MEM_HEAD:
            z.add_column(h, justify="left" if h == ZOO_MEM_HEAD[0] else "right")
        for row in zoo_memory_rows(report):
            z.add_row(*row)
        console.print(z)
    mem = memory_rows(report)
    if mem:
        m = Table(title=f"Memory: {report.memory['ops'] if report.memory else 30}-op graph on "
                        f"{report.memory['elements']:,} float32 elements" if report.memory
                  else "Memory")
        for h in MEM_HEAD:
            m.add_column(h, justify="left" if h in (MEM_HEAD[0], "expected") else "right")
        for row in mem:
            m.add_row(*row)
        console.print(m)
    for k, v in report.env.items():
        console.print(f"[dim]{k}: {v}[/dim]")


def markdown(report: Report, command: str) -> str:
    def md_table(head, rows):
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(out)
    parts = [f"Command: `{command}`"]
    if report.rows:
        parts += ["", md_table(HEAD, table_rows(report))]
    if report.r_rows:
        parts += ["", "R side (R runs `rtorch-py run benchmarks/bench.R` in a subprocess, "
                      "timing itself; its rounds interleave with the Python ones; R torch's own "
                      f"dispatch, the reference for the R op, is ≈ {R_TORCH_OP_US:g} µs/op):",
                  "", md_table(R_HEAD, r_table_rows(report))]
        notes = r_notes(report)
        parts += [""] + [f"- {n}" for n in notes] if notes else []
    if report.zoo_memory:
        parts += ["", ZOO_MEM_TITLE + ":", "", md_table(ZOO_MEM_HEAD, zoo_memory_rows(report))]
    mem = memory_rows(report)
    if mem:
        title = (f"Memory: {report.memory['ops']}-op graph (`y = y.tanh()` 30 times, then `sum`) on "
                 f"{report.memory['elements']:,} float32 elements, MB held above the input"
                 if report.memory else "Memory")
        parts += ["", title + ":", "", md_table(MEM_HEAD, mem)]
    parts += ["", "Environment:", ""] + [f"- {k}: {v}" for k, v in report.env.items()]
    return "\n".join(parts) + "\n"


def write_markdown(path: str, text: str, name: str = "") -> None:
    """Write `text` between `<!-- bench[:name]:begin/end -->` markers: if the file
    has that block only the block is replaced, otherwise it is appended."""
    begin, end = (f"<!-- bench{':' + name if name else ''}:{w} -->" for w in ("begin", "end"))
    block = f"{begin}\n{text}{end}\n"
    if os.path.exists(path):
        old = open(path).read()
        if begin in old and end in old:
            head, rest = old.split(begin, 1)
            tail = rest.split(end, 1)[1].lstrip("\n")
            block = head + block + ("\n" + tail if tail else "")
        else:
            block = old + ("\n" if old and not old.endswith("\n") else "") + block
    with open(path, "w") as f:
        f.write(block)


# --------------------------------------------------------------------------

def profile(name: str, quick: bool, seconds: float = 1.0) -> None:
    """cProfile our side of one workload, top functions by own time."""
    import cProfile
    import pstats
    w = next((w for w in workloads(quick) if w.name == name), None)
    if w is None:
        raise SystemExit(f"--profile {name}: no such workload")
    ours, _ = w.setup(quick)
    n = _calibrate(ours, seconds)
    prof = cProfile.Profile()
    prof.enable()
    _time(ours, n)
    prof.disable()
    print(f"{n} calls of {w.name} (rtorch-py side)")
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="tiny sizes and rounds (smoke run)")
    p.add_argument("--only", help="comma-separated workload names or prefixes "
                                  "(tiny, custom_fn, chain100, mlp, matmul, scaling, memory)")
    p.add_argument("--rounds", type=int, help="timing rounds (default 15, quick 3)")
    p.add_argument("--budget", type=float, help="seconds per engine per round")
    p.add_argument("--threads", type=int, help="limit NumPy's BLAS to N threads (threadpoolctl); "
                                                 "torch gets the same N (default: BLAS's own)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="what every row times: wall-clock time (default) or the process's CPU "
                        "time, user + system over all threads (steadier on a loaded machine)")
    p.add_argument("--markdown", metavar="PATH", help="write the tables and environment")
    p.add_argument("--block", default="", help="with --markdown: name of the marked block "
                                               "to replace (default: the unnamed one)")
    p.add_argument("--plot", metavar="PATH", help="write a PNG of ratios and scaling")
    p.add_argument("--profile", metavar="NAME", help="cProfile rtorch-py on one workload")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = p.parse_args(argv)
    if args.profile:
        profile(args.profile, args.quick)
        return 0
    report = run(args)
    print_report(report)
    command = "python -m benchmarks " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.markdown:
        write_markdown(args.markdown, markdown(report, command.strip()), args.block)
    if args.plot:
        from .plot import plot
        plot(report, args.plot)
    return 0
