"""The R side of issue 5: R-level op cost and the "using autograd" loop in R.

R runs in a subprocess, `rtorch-py run benchmarks/bench.R` (what an R user
runs), kept alive for the whole measurement and driven one command a line
over a pipe, so that its rounds interleave with the Python rounds in this
process (R, Python, PyTorch, R, Python, PyTorch...) under the same load. The R
rounds are timed inside R; the Python ones here.

Rows:

- `r_op`: `y <- x * 2`, `x <- torch_tensor(1, requires_grad = TRUE)`, in an R
  loop: µs per R-level op, target ≤ 20 µs (R torch's own dispatch, libtorch
  underneath, is about 18 µs per op: the reference; PyTorch is not compared).
  The Python column is the same op in a Python loop on the same engine, so
  the difference is what R and the crossing cost.
- `r_op_fresh`: the same loop, with a full R `gc()` before each timed round
  (what `system.time()` does by default): no garbage left over from earlier
  rounds. A long loop settles slower than this (see RESULTS.md), which is
  why `r_op`, the steady state, carries the target.
- `r_op_bwd`: `(x * 2)$backward()` per iteration, steady state.
- `r_train`: vignettes/03-using-autograd.Rmd's training loop (100x3 -> 32 -> 1,
  200 steps, manual SGD under `with_no_grad`, from the vignette's data and
  initial weights) in R, in Python on rtorch-py (vignettes/using_autograd.py's
  loop) and in PyTorch: µs per step and the ratios R / Python-rtorch and
  Python-rtorch / PyTorch. The three final losses must agree.

- `r_call_*` (issue 21): the calls R code makes (`x$mm(w)`, `x$pow(2)$mean()`,
  `x[1, ]`, `with_no_grad(x * 2)`, ..., x 100x3, w 3x32), each in an R loop,
  beside the same call in a Python loop on the same engine: target R <=
  Python + 2 µs.
- `r_loop` (issue 21): a training loop as R users write it (an nn_module of
  two nn_linear and nnf_relu, optim_adam, nnf_cross_entropy, a shuffled
  dataloader over a tensor_dataset of 1,600 x 20 in batches of 32, iterated
  with coro::loop; 50 steps an epoch; each round a fresh model, one untimed
  epoch, then the timed ones) in R, the same loop in Python on
  rtorch-py (same seed: same data, weights and batches; the losses must
  agree) and in PyTorch (its DataLoader): µs per step, targets R <= 1.3x
  Python and R <= 1.0x PyTorch.
- `r_loop_memory`: that loop in R for 2,000 steps (40 epochs): the peak
  resident memory after 1,000 steps and after 2,000; flat when the second
  half adds at most 8 MB (allocator noise).

The rows are skipped, marked "R not available", only when rpy2 or R itself
is missing; any other failure is a FAILED row.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "bench.R"
DATA = HERE.parent / "vignettes" / "data"
R_TORCH_OP_US = 18.0     # R torch's own per-op dispatch: the reference for r_op
R_OP_TARGET_US = 20.0


@dataclass
class RRow:
    name: str
    label: str
    unit: str
    r: float | None = None          # µs per unit, median over rounds
    py: float | None = None         # the same in Python on rtorch-py
    torch: float | None = None      # the same in PyTorch (training loop only)
    r_over_py: float | None = None  # median of per-round ratios
    py_over_torch: float | None = None
    r_over_torch: float | None = None
    target: str = ""
    met: str = "-"
    note: str = ""
    error: str | None = None
    skipped: str | None = None


def availability() -> str | None:
    """None if R and rpy2 are there; otherwise why the R rows are skipped."""
    if importlib.util.find_spec("rpy2") is None:
        return "R not available: rpy2 is not installed"
    try:
        from rtorch_py.r import _r_home
        home = _r_home()
    except (OSError, subprocess.CalledProcessError) as err:
        return f"R not available: R is not installed ({type(err).__name__}: {err})"
    if not home or not (Path(home) / "bin" / "R").exists():
        return f"R not available: no R installation found (R home {home!r})"
    return None


def _rtorch_py_command() -> list[str]:
    exe = Path(sys.executable).parent / "rtorch-py"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("rtorch-py")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from rtorch_py.tools.cli import main; "
                                  "sys.exit(main())"]


class RSession:
    """One `rtorch-py run bench.R` process, answering one command at a time."""

    def __init__(self, threads: int | None = None, clock: str = "wall"):
        env = dict(os.environ)
        env["RTORCH_BENCH_CLOCK"] = clock
        if threads:  # the R process's NumPy BLAS gets the runner's thread count
            env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(threads)
        self.proc = subprocess.Popen(
            [*_rtorch_py_command(), "run", str(SCRIPT), str(DATA)], cwd=HERE.parent,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            bufsize=1, env=env)
        self.version = self._read("ready")

    def _read(self, expect: str) -> str:
        line = self.proc.stdout.readline()
        if not line.startswith(expect):
            self.close()
            err = self.proc.stderr.read().strip()
            raise RuntimeError(f"R side: expected {expect!r}, got {line.strip()!r}"
                               + (f"; stderr: {err[-800:]}" if err else ""))
        return line[len(expect):].strip()

    def call(self, cmd: str, n: int, *more: str) -> list[float]:
        self.proc.stdin.write(" ".join([cmd, str(n), *more]) + "\n")
        self.proc.stdin.flush()
        return [float(v) for v in self._read("ok").split()]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


# --------------------------------------------------------------------------
# The Python twins of the R loops

# What the R rows time, in R (bench.R's now()) and here: wall-clock time, or the
# process's CPU time (user + system, every thread), steadier on a shared machine.
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_now = CLOCKS["wall"]   # set by measure_r

def _py_op(n: int) -> float:
    import rtorch_py as rt
    x = rt.torch_tensor([1.0], requires_grad=True)
    t0 = _now()
    for _ in range(n):
        x * 2  # the result is dropped at once, as `y` is overwritten in R
    return _now() - t0


def _py_op_bwd(n: int) -> float:
    import rtorch_py as rt
    x = rt.torch_tensor([1.0], requires_grad=True)
    t0 = _now()
    for _ in range(n):
        (x * 2).backward()
    return _now() - t0


def _load(name: str) -> np.ndarray:
    return np.loadtxt(DATA / name, delimiter=",", dtype=np.float32, ndmin=2)


_DATA_CACHE: dict = {}


def _train(t, steps: int) -> tuple[float, float]:
    """vignettes/using_autograd.py's training loop on engine `t` (rtorch_py or
    torch); returns (seconds for the loop, last loss). Set-up is untimed."""
    if not _DATA_CACHE:
        _DATA_CACHE.update({k: _load(k + ".csv") for k in ("x", "y", "w1", "w2")})
    d = _DATA_CACHE
    tensor = getattr(t, "torch_tensor", None) or t.tensor
    zeros = getattr(t, "torch_zeros", None) or t.zeros
    no_grad = getattr(t, "with_no_grad", None) or t.no_grad
    x, y = tensor(d["x"].copy()), tensor(d["y"].copy())
    w1 = tensor(d["w1"].copy(), requires_grad=True)
    w2 = tensor(d["w2"].copy(), requires_grad=True)
    b1 = zeros(1, 32, requires_grad=True)
    b2 = zeros(1, 1, requires_grad=True)
    learning_rate = 1e-4
    losses = []
    t0 = _now()
    for _ in range(steps):
        y_pred = x.mm(w1).add(b1).clamp(min=0).mm(w2).add(b2)
        loss = (y_pred - y).pow(2).mean()
        losses.append(loss.item())
        loss.backward()
        with no_grad():
            for p in (w1, w2, b1, b2):
                p.sub_(learning_rate * p.grad)
                p.grad.zero_()
    return _now() - t0, losses[-1]


# issue 21's calls: R expression -> (name in bench.R, the same call in Python)
CALL_TARGET_US = 2.0     # R may cost at most this much more than Python


def _call_twins() -> dict:
    import rtorch_py as rt
    rt.torch_manual_seed(1)
    x, w, b = rt.torch_randn(100, 3), rt.torch_randn(3, 32), rt.torch_randn(32)
    y, xg = x.mm(w), rt.torch_randn(100, 3, requires_grad=True)

    def no_grad():
        with rt.with_no_grad():
            x * 2
    return {
        "`x * 2`": ("mul", lambda: x * 2),
        "`x$mm(w)`": ("mm", lambda: x.mm(w)),
        "`torch_mm(x, w)`": ("torch_mm", lambda: rt.torch_mm(x, w)),
        "`y$add(b)`": ("add", lambda: y.add(b)),
        "`x$mm(w) + b`": ("mm_add", lambda: x.mm(w) + b),
        "`x$clamp(min = 0)`": ("clamp", lambda: x.clamp(min=0)),
        "`x$pow(2)$mean()`": ("pow_mean", lambda: x.pow(2).mean()),
        "`x$sum()$item()`": ("sum_item", lambda: x.sum().item()),
        "`with_no_grad(x * 2)`": ("no_grad", no_grad),
        "`x[1, ]`": ("index", lambda: x[0, :]),
        "`x$sum()$backward()`": ("backward", lambda: xg.sum().backward()),
    }


def _py_loop(fn, n: int) -> float:
    t0 = _now()
    for _ in range(n):
        fn()
    return _now() - t0


# bench.R's loop_models, as (rows, input shape, classes, batch size) and a builder
# of the same layers, in the same order, in either engine (rtorch_py's nn or torch.nn)
LOOP_MODELS = {
    "mlp": (1600, (20,), 3, 32),
    "convnet": (640, (1, 28, 28), 10, 128),
    "wide": (1280, (512,), 10, 256),
}


def _loop_layers(nn, kind: str) -> tuple[dict, Callable]:
    """(layers by name, forward(layers, F, flatten, x)) of bench.R's model `kind`;
    `nn` makes layers: (kind of layer, arguments) -> module."""
    if kind == "mlp":
        return ({"fc1": nn("linear", 20, 64), "fc2": nn("linear", 64, 3)},
                lambda m, F, flat, x: m.fc2(F.relu(m.fc1(x))))
    if kind == "convnet":
        def forward(m, F, flat, x):
            x = F.relu(m.conv1(x))
            x = F.relu(m.conv2(x))
            x = m.dropout1(F.max_pool2d(x, 2))
            x = m.dropout2(F.relu(m.fc1(flat(x, 1))))
            return m.fc2(x)
        return ({"conv1": nn("conv2d", 1, 32, 3), "conv2": nn("conv2d", 32, 64, 3),
                 "dropout1": nn("dropout", 0.25), "dropout2": nn("dropout", 0.5),
                 "fc1": nn("linear", 9216, 128), "fc2": nn("linear", 128, 10)}, forward)
    return ({"fc1": nn("linear", 512, 2048), "fc2": nn("linear", 2048, 2048),
             "fc3": nn("linear", 2048, 10)},
            lambda m, F, flat, x: m.fc3(F.relu(m.fc2(F.relu(m.fc1(x))))))


def _loop_twins(t, kind: str = "mlp", rows: int | None = None) -> tuple:
    """bench.R's training loop of model `kind` on engine `t` (rtorch_py or torch):
    (one epoch -> the sum of its losses, steps per epoch). rtorch_py's starts from
    the same seed as R's, so its data, weights, dropout masks and batch order are
    R's; PyTorch's takes rtorch_py's data and initial weights and draws its own
    batch order and masks."""
    import types

    import rtorch_py as rt
    from rtorch_py import nn as rnn
    from rtorch_py.data import dataloader, tensor_dataset
    from rtorch_py.optim import optim_adam
    n, shape, classes, batch = LOOP_MODELS[kind]
    n = rows or n
    rt.torch_manual_seed(21)
    x = rt.torch_randn(n, *shape)
    y = rt.torch_randint(1, classes + 1, size=(n,)) - 1   # R's labels 1..k, 0-based here

    def ours(what, *args):
        return getattr(rnn, "nn_" + what)(*args)
    F_ours = types.SimpleNamespace(relu=rnn.nnf_relu, max_pool2d=rnn.nnf_max_pool2d)
    layers, forward = _loop_layers(ours, kind)

    class Net(rnn.Module):
        def __init__(self) -> None:
            super().__init__()
            for name, layer in layers.items():
                setattr(self, name, layer)

        def forward(self, x):
            return forward(self, F_ours, rt.torch_flatten, x)
    model = Net()
    if t is rt:
        dl = dataloader(tensor_dataset(x, y), batch_size=batch, shuffle=True)
        opt = optim_adam(model.parameters(), lr=1e-3)
        cross_entropy = rnn.nnf_cross_entropy
    else:
        import torch
        tx, ty = torch.from_numpy(x.data.copy()), torch.from_numpy(y.data.copy())
        dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(tx, ty),
                                         batch_size=batch, shuffle=True)
        weights = [p.data.copy() for p in model.parameters()]
        kinds = {"linear": torch.nn.Linear, "conv2d": torch.nn.Conv2d,
                 "dropout": torch.nn.Dropout}
        t_layers, _ = _loop_layers(lambda what, *args: kinds[what](*args), kind)

        class TNet(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                for name, layer in t_layers.items():
                    setattr(self, name, layer)

            def forward(self, x):
                return forward(self, torch.nn.functional, torch.flatten, x)
        model = TNet()
        with torch.no_grad():
            for p, w in zip(model.parameters(), weights, strict=True):
                p.copy_(torch.from_numpy(w))
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        cross_entropy = torch.nn.functional.cross_entropy

    def epoch() -> float:
        total = 0.0
        for xb, yb in dl:
            opt.zero_grad()
            loss = cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item()
        return total
    return epoch, len(dl)


def _time_epochs(epoch, steps: int, epochs: int) -> tuple[float, float]:
    """(µs per step, the last epoch's loss sum), after one untimed epoch of the
    fresh model (as bench.R's bench_loop: its first steps touch new memory)."""
    epoch()
    t0 = _now()
    for _ in range(epochs):
        total = epoch()
    return (_now() - t0) / (epochs * steps) * 1e6, total


# --------------------------------------------------------------------------

def sizes(quick: bool) -> dict:
    """Iterations per round: R loops of 20,000 ops, the vignette's 200 steps."""
    if quick:
        return {"op": 500, "op_bwd": 200, "train": 10, "call": 200, "loop": 1, "memory": 2,
                "loop_rows": {"convnet": 128, "wide": 256}}  # (one step each)
    return {"op": 20_000, "op_bwd": 5_000, "train": 200, "call": 5_000, "loop": 2,
            "memory": 40, "loop_rows": {}}


def _med(xs: list) -> float:
    return statistics.median(xs)


R_NAMES = ("r_op", "r_op_fresh", "r_op_bwd", "r_train", "r_call", "r_loop", "r_loop_convnet",
           "r_loop_wide", "r_loop_memory")
# the training-loop rows and their models (bench.R's loop_models)
LOOP_ROWS = {"r_loop": "mlp", "r_loop_convnet": "convnet", "r_loop_wide": "wide"}


def measure_r(quick: bool, rounds: int, threads: int | None = None, log=None,
              names: tuple = R_NAMES, clock: str = "wall") -> list[RRow]:
    """The R rows named in `names`, timed with `clock` (CLOCKS): skipped if R
    is missing, FAILED on any other error."""
    global _now
    _now = CLOCKS[clock]
    rows = [
        RRow("r_op", "R: `y <- x * 2` (1 elt, grad)", "µs/op",
             target=f"≤ {R_OP_TARGET_US:g} µs (R torch ≈ {R_TORCH_OP_US:g})"),
        RRow("r_op_fresh", "R: `y <- x * 2`, R `gc()` before each round", "µs/op"),
        RRow("r_op_bwd", "R: `(x * 2)$backward()`", "µs/iter"),
        RRow("r_train", "using-autograd training loop", "µs/step"),
    ]
    if "r_call" in names:
        rows += [RRow(f"r_call_{key}", f"R: {expr}", "µs/call",
                      target=f"≤ Python + {CALL_TARGET_US:g} µs")
                 for expr, (key, _) in _call_twins().items()]
    rows += [RRow("r_loop", "R training loop: nn_module, optim_adam, dataloader, coro::loop",
                  "µs/step", target="R/Py ≤ 1.3, R/PyTorch ≤ 1.0"),
             RRow("r_loop_convnet", "R training loop, MNIST convnet (batch 128)",
                  "µs/step", target="R/Py ≤ 1.3, R/PyTorch ≤ 1.0"),
             RRow("r_loop_wide", "R training loop, wide MLP 512-2048-2048-10 (batch 256)",
                  "µs/step", target="R/Py ≤ 1.3, R/PyTorch ≤ 1.0"),
             RRow("r_loop_memory", "R training loop, peak RSS growth from step 1,000 to 2,000",
                  "MB", target="flat: ≤ 8 MB")]
    rows = [r for r in rows if r.name in names or r.name.startswith("r_call_")]
    if not rows:
        return rows
    why = availability()
    if why:
        for r in rows:
            r.skipped = why
        return rows
    n = sizes(quick)
    import rtorch_py as rt
    import torch
    try:
        t0 = time.perf_counter()
        sess = RSession(threads, clock)
    except Exception as err:  # R is there but the shim does not start: a failure
        for r in rows:
            r.error = f"starting R: {type(err).__name__}: {err}"
        return rows
    try:
        if log:
            log(f"  R session: {sess.version} ({time.perf_counter() - t0:.1f}s to start)")
        try:  # warm-up: R's JIT, the shim's first calls, NumPy/torch first calls
            sess.call("op", n["op"] // 10)
            sess.call("op_bwd", n["op_bwd"] // 10)
            sess.call("train", 2)
            _py_op(100), _py_op_bwd(100), _train(rt, 2), _train(torch, 2)
        except Exception as err:
            for r in rows:
                r.error = f"warm-up: {type(err).__name__}: {err}"
            return rows
        by_name = {r.name: r for r in rows}
        for name, cmd, py in (("r_op", "op", _py_op), ("r_op_fresh", "op", _py_op),
                              ("r_op_bwd", "op_bwd", _py_op_bwd)):
            row = by_name.get(name)
            if row is None:
                continue
            t1 = time.perf_counter()
            rs, ps = [], []
            try:
                for _ in range(rounds):
                    if name == "r_op_fresh":
                        sess.call("gc", 0)
                    rs.append(sess.call(cmd, n[cmd])[0] / n[cmd] * 1e6)
                    ps.append(py(n[cmd]) / n[cmd] * 1e6)
            except Exception as err:
                row.error = f"{type(err).__name__}: {err}"
                continue
            row.r, row.py = _med(rs), _med(ps)
            row.r_over_py = _med([a / b for a, b in zip(rs, ps)])
            row.note = (f"{rounds} rounds of {n[cmd]:,}; best round R {min(rs):.2f}, "
                        f"Python {min(ps):.2f} µs")
            if log:
                log(f"  {row.name}: {time.perf_counter() - t1:.1f}s")
        r_op = by_name.get("r_op")
        if r_op is not None and r_op.r is not None:
            r_op.met = "yes" if r_op.r <= R_OP_TARGET_US else "NO"
        _measure_calls(sess, rows, n, rounds, log)
        _measure_loop(sess, by_name, n, rounds, log, threads)
        row = by_name.get("r_train")
        if row is None:
            return rows
        t1 = time.perf_counter()
        steps = n["train"]
        rs, ps, ts, losses = [], [], [], None
        try:
            for _ in range(rounds):
                sec, r_loss = sess.call("train", steps)
                rs.append(sec / steps * 1e6)
                sec, p_loss = _train(rt, steps)
                ps.append(sec / steps * 1e6)
                sec, t_loss = _train(torch, steps)
                ts.append(sec / steps * 1e6)
                losses = (r_loss, p_loss, t_loss)
            if not np.allclose(losses, losses[2], rtol=1e-3):
                raise AssertionError("the three loops disagree: last loss R %.6g, Python %.6g, "
                                     "PyTorch %.6g" % losses)
        except Exception as err:
            row.error = f"{type(err).__name__}: {err}"
        else:
            row.r, row.py, row.torch = _med(rs), _med(ps), _med(ts)
            row.r_over_py = _med([a / b for a, b in zip(rs, ps)])
            row.py_over_torch = _med([a / b for a, b in zip(ps, ts)])
            row.note = (f"{rounds} rounds of {steps} steps; last loss R {losses[0]:.4f}, "
                        f"Python {losses[1]:.4f}, PyTorch {losses[2]:.4f}")
        if log:
            log(f"  {row.name}: {time.perf_counter() - t1:.1f}s")
    finally:
        sess.close()
    return rows


def _measure_calls(sess: RSession, rows: list, n: dict, rounds: int, log) -> None:
    """The r_call_* rows: each call's R loop and Python loop in turn, per round."""
    twins = {key: fn for key, fn in _call_twins().values()}
    size = n["call"]
    for row in rows:
        if not row.name.startswith("r_call_"):
            continue
        key = row.name[len("r_call_"):]
        t1 = time.perf_counter()
        try:
            sess.call("call", size // 10, key)  # warm-up
            _py_loop(twins[key], size // 10)
            rs, ps = [], []
            for _ in range(rounds):
                rs.append(sess.call("call", size, key)[0] / size * 1e6)
                ps.append(_py_loop(twins[key], size) / size * 1e6)
        except Exception as err:
            row.error = f"{type(err).__name__}: {err}"
            continue
        row.r, row.py = _med(rs), _med(ps)
        row.r_over_py = _med([a / b for a, b in zip(rs, ps)])
        extra = _med([a - b for a, b in zip(rs, ps)])
        row.met = "yes" if extra <= CALL_TARGET_US else "NO"
        row.note = (f"R − Python {extra:+.2f} µs (median of {rounds} rounds of {size:,}); "
                    f"best round R {min(rs):.2f}, Python {min(ps):.2f} µs")
        if log:
            log(f"  {row.name}: {time.perf_counter() - t1:.1f}s")


def _measure_loop(sess: RSession, by_name: dict, n: dict, rounds: int, log,
                  threads: int | None) -> None:
    """The training-loop rows (LOOP_ROWS: R, Python on rtorch-py, PyTorch, per
    round) and r_loop_memory (in an R process of its own, so that no earlier
    row's peak hides the loop's)."""
    import rtorch_py as rt
    import torch
    for name, kind in LOOP_ROWS.items():
        row = by_name.get(name)
        if row is None:
            continue
        t1 = time.perf_counter()
        epochs = n["loop"] if kind == "mlp" else 1  # (the larger models: 5 steps an epoch)
        data_rows = n["loop_rows"].get(kind)
        more = [kind] + ([str(data_rows)] if data_rows else [])
        rs, ps, ts = [], [], []
        try:
            sess.call("loop", 1, *more)  # warm-up
            for t in (rt, torch):
                epoch, steps = _loop_twins(t, kind, data_rows)
                _time_epochs(epoch, steps, 1)
            for _ in range(rounds):
                r_us, r_loss = sess.call("loop", epochs, *more)
                rs.append(r_us * 1e6)
                epoch, steps = _loop_twins(rt, kind, data_rows)  # (set-up untimed: R's start)
                p_us, p_loss = _time_epochs(epoch, steps, epochs)
                ps.append(p_us)
                epoch, steps = _loop_twins(torch, kind, data_rows)
                t_us, t_loss = _time_epochs(epoch, steps, epochs)
                ts.append(t_us)
                if not np.isclose(r_loss, p_loss, rtol=1e-4):
                    raise AssertionError(f"R and Python disagree: the last epoch's losses sum to "
                                         f"{r_loss:.6g} in R, {p_loss:.6g} in Python")
        except Exception as err:
            row.error = f"{type(err).__name__}: {err}"
        else:
            row.r, row.py, row.torch = _med(rs), _med(ps), _med(ts)
            row.r_over_py = _med([a / b for a, b in zip(rs, ps)])
            row.py_over_torch = _med([a / b for a, b in zip(ps, ts)])
            row.r_over_torch = _med([a / b for a, b in zip(rs, ts)])
            row.met = "yes" if row.r_over_py <= 1.3 and row.r_over_torch <= 1.0 else "NO"
            row.note = (f"{rounds} rounds of {epochs} epoch(s) of {steps} steps (after a "
                        f"warm-up epoch); R / PyTorch "
                        f"{row.r_over_torch:.3f}; last epoch's loss sum R {r_loss:.4f}, "
                        f"Python {p_loss:.4f}, PyTorch {t_loss:.4f} (its own batch order)")
        if log:
            log(f"  {name}: {time.perf_counter() - t1:.1f}s")
    row = by_name.get("r_loop_memory")
    if row is None:
        return
    t1 = time.perf_counter()
    epochs = n["memory"]
    try:
        fresh = RSession(threads)
        try:
            warm, end = fresh.call("loop_memory", epochs)
        finally:
            fresh.close()
    except Exception as err:
        row.error = f"{type(err).__name__}: {err}"
    else:
        row.r = end - warm
        row.met = "yes" if row.r <= 8 else "NO"
        row.note = (f"{epochs * 50:,} steps: peak RSS {warm:.1f} MB after {epochs * 25:,}, "
                    f"{end:.1f} MB after {epochs * 50:,}")
    if log:
        log(f"  r_loop_memory: {time.perf_counter() - t1:.1f}s")
