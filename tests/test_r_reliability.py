"""Issue 6 on the R side: errors cross between R and Python with their
messages and leave the embedded R working; a failing `rtorch-py run` leaves
no stale state for the next one; a long R training loop keeps memory flat.

(The R error catalogue itself is tests/r/test-errors.R, run by
tests/test_r_bridge.py like every testthat file.)

Each test runs in a subprocess: a fresh embedded R, as users get it.
"""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import ROOT, needs_r, run_r

pytestmark = needs_r


def run_r_script(tmp_path: Path, name: str, text: str) -> subprocess.CompletedProcess:
    script = tmp_path / name
    script.write_text(textwrap.dedent(text))
    return run_r(str(script))


def run_python(code: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Python code in a fresh interpreter with the shim loaded in its embedded R."""
    prelude = textwrap.dedent("""
        import numpy as np
        import rpy2.rinterface as ri
        import rtorch_py as rt
        import rtorch_py.r as rr
        from rtorch_py import engine
        rr.load()

        def raises(fn, *words):
            try:
                fn()
            except Exception as err:
                text = str(err) + "".join(getattr(err, "__notes__", []))
                for w in words:
                    assert w in text, f"{w!r} not in the message {text!r}"
                return err
            raise AssertionError(f"no error, expected one with {words}")

        def r_alive():
            # the embedded R keeps working, with grad mode on, anomaly mode off
            assert rt.is_grad_enabled() and not engine.is_anomaly_enabled()
            assert ri.evalr("autograd_is_enabled()")[0]
            assert list(ri.evalr("sum(1:10)")) == [55]
            v = ri.evalr('''
                local({
                  p <- torch_tensor(c(1, 2), requires_grad = TRUE)
                  (p * p)$sum()$backward()
                  as_array(p$grad)
                })''')
            assert list(v) == [2.0, 4.0], list(v)
    """)
    res = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code) + "\nprint('OK')\n"],
                         capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("OK"), res.stdout + res.stderr
    return res


# ---------------------------------------------------------------------------
# (a) errors cross the language boundary with their messages


def test_r_errors_in_forward_backward_and_hooks_reach_python() -> None:
    run_python("""
        ri.evalr('''
          fwd_fail <- autograd_function(
            forward = function(ctx, x) stop("R forward failed: x has ", length(x), " elements"),
            backward = function(ctx, g) list(x = g))
          bwd_fail <- autograd_function(
            forward = function(ctx, x) x * 2,
            backward = function(ctx, g) stop("R backward failed: gradient rejected"))
          bwd_engine <- autograd_function(
            forward = function(ctx, x) x * 2,
            backward = function(ctx, g) list(x = g$mm(torch_ones(5, 5))))
        ''')
        x = rt.torch_tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * x).sum().backward()
        before = x.grad.numpy().copy()
        x_r = rr.to_r(x)

        # forward, called from Python
        raises(lambda: ri.globalenv.find("fwd_fail")(x_r), "R forward failed: x has 3 elements")
        assert x.grad_fn is None and x.requires_grad
        r_alive()

        # backward run from Python through an R backward
        y = rr.from_r(ri.globalenv.find("bwd_fail")(x_r))
        err = raises(lambda: y.sum().backward(), "R backward failed: gradient rejected",
                     "raised in the backward of")
        print("backward error:", type(err).__name__, str(err))
        raises(lambda: rt.autograd_grad(rr.from_r(ri.globalenv.find("bwd_fail")(x_r)).sum(), x),
               "R backward failed")
        # an engine error inside the R backward: Python -> R -> Python, message intact
        y = rr.from_r(ri.globalenv.find("bwd_engine")(x_r))
        raises(lambda: y.sum().backward(), "mm: both arguments must be 2-d matrices")
        np.testing.assert_array_equal(x.grad.numpy(), before)
        r_alive()

        # an R hook, backward from Python; the retained graph works once it is removed
        ri.globalenv["x"] = x_r
        ri.evalr('y <- x * 2; h <- y$register_hook(function(g) stop("R hook failed: no thanks"))')
        out = rr.from_r(ri.evalr("y"))
        total = out.sum()
        raises(lambda: total.backward(retain_graph=True), "R hook failed: no thanks")
        np.testing.assert_array_equal(x.grad.numpy(), before)
        ri.evalr("h$remove()")
        total.backward()
        np.testing.assert_array_equal(x.grad.numpy(), before + 2)
        r_alive()

        # many failures in a row do not wear the session down
        for i in range(200):
            raises(lambda: rr.from_r(ri.globalenv.find("bwd_fail")(x_r)).sum().backward(),
                   "gradient rejected")
        np.testing.assert_array_equal(x.grad.numpy(), before + 2)
        r_alive()
    """)


def test_python_errors_reach_r_as_conditions() -> None:
    run_python("""
        def hook(g):
            raise ValueError("Python hook failed: gradient too small")
        def bwd(ctx, g):
            raise ZeroDivisionError("Python backward failed: division by zero")

        w = rt.torch_tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        before = w.grad.numpy().copy()
        handle = w.register_hook(hook)
        ri.globalenv["w"] = rr.to_r(w)
        catch = "tryCatch({{ {} ; 'no error' }}, error = function(e) conditionMessage(e))"
        msg = ri.evalr(catch.format("(w * w)$sum()$backward()"))[0]
        assert "Python hook failed: gradient too small" in msg, msg
        cls = ri.evalr("tryCatch((w * w)$sum()$backward(), error = function(e) class(e))")
        assert "error" in list(cls) and "condition" in list(cls), list(cls)
        handle.remove()

        twice = rt.autograd_function(forward=lambda ctx, x: x * 3, backward=bwd)
        ri.globalenv["z"] = rr.to_r(twice(w))
        msg = ri.evalr(catch.format("z$sum()$backward()"))[0]
        assert "Python backward failed: division by zero" in msg, msg
        # an engine error raised in Python, caught by R's tryCatch and by try()
        msg = ri.evalr(catch.format("w$sum(dim = 0)"))[0]
        assert msg == "Indexing starts at 1 but found a 0.", msg
        assert ri.evalr("inherits(try(w$mm(w), silent = TRUE), 'try-error')")[0]
        # R's finally/on.exit still run when a Python error unwinds R code
        ri.evalr("done <- FALSE; f <- function() { on.exit(done <<- TRUE); (w * w)$view(c(3, 3)) }")
        assert "invalid for input of size 2" in ri.evalr(catch.format("f()"))[0]
        assert ri.evalr("done")[0]
        np.testing.assert_array_equal(w.grad.numpy(), before)
        r_alive()
        for i in range(200):
            ri.evalr(catch.format("z <- twice_r <- (w * 2)$sum(dim = 0)"))
        r_alive()
    """)


# ---------------------------------------------------------------------------
# (b) `rtorch-py run`: a script failing half-way, then a clean next run

_NEXT_RUN = """
library(torch)
cat("grad mode:", autograd_is_enabled(), "\\n")
a <- torch_tensor(c(0, 1), requires_grad = TRUE)
(a$sqrt() * torch_tensor(c(0, 1)))$sum()$backward()   # would fail under anomaly mode
cat("anomaly off:", is.nan(as_array(a$grad)[1]), "\\n")
w <- torch_tensor(c(1, 2), requires_grad = TRUE)
(w * w)$sum()$backward()
cat("grad:", as_array(w$grad), "\\n")
"""
_NEXT_OUT = "grad mode: TRUE \nanomaly off: TRUE \ngrad: 2 4 \n"

_FAILING = {
    "with_no_grad": ('with_no_grad({\n  w$sub_(1)\n  stop("failed inside with_no_grad")\n})',
                     "failed inside with_no_grad"),
    "local_no_grad": ('step <- function() {\n  local_no_grad()\n  stop("failed after local_no_grad")\n}\n'
                      'step()', "failed after local_no_grad"),
    "set_grad_mode": ('autograd_set_grad_mode(FALSE)\nstop("failed with grad mode off")',
                      "failed with grad mode off"),
    "detect_anomaly": ('with_detect_anomaly({\n  bad <- autograd_function(\n'
                       '    forward = function(ctx, x) x * 2,\n'
                       '    backward = function(ctx, g) stop("failed in backward under anomaly"))\n'
                       '  bad(w)$sum()$backward()\n})', "failed in backward under anomaly"),
    "engine_error": ("w$sum(dim = 0)", "Indexing starts at 1 but found a 0."),
    "hook": ('y <- w * 2\nh <- y$register_hook(function(g) stop("failed in a hook"))\n'
             'y$sum()$backward()', "failed in a hook"),
}


@pytest.mark.parametrize("case", sorted(_FAILING))
def test_script_failing_half_way_then_a_clean_run(tmp_path: Path, case: str) -> None:
    body, message = _FAILING[case]
    res = run_r_script(tmp_path, "fails.R", f"""library(torch)
w <- torch_tensor(c(1, 2), requires_grad = TRUE)
cat("before the failure\\n")
{body}
cat("after the failure\\n")
""")
    assert res.returncode == 1, res.stdout + res.stderr
    assert res.stdout == "before the failure\n", res.stdout
    assert message in res.stderr, res.stderr
    assert res.stderr.endswith("Execution halted\n"), res.stderr
    nxt = run_r_script(tmp_path, "next.R", _NEXT_RUN)
    assert nxt.returncode == 0, nxt.stderr
    assert nxt.stdout == _NEXT_OUT
    assert nxt.stderr == ""


def test_expression_failing_half_way(tmp_path: Path) -> None:
    res = run_r("-e", "library(torch); x <- torch_ones(2, 3); cat('ok\\n')",
                "-e", "x$mm(torch_ones(4, 5))", "-e", "cat('not reached\\n')")
    assert res.returncode == 1
    assert res.stdout == "ok\n"
    assert "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)" in res.stderr
    nxt = run_r("-e", _NEXT_RUN)
    assert nxt.returncode == 0, nxt.stderr
    assert nxt.stdout == _NEXT_OUT


def test_script_steps_leave_r_protect_stack_as_found() -> None:
    """`rtorch-py run` runs R's own loop from R's top level (run_Rmainloop, as
    Rscript), so its steps leave R's pointer-protection stack as they found it. It
    once ended 4 below empty (one REPL step at a time inside R_ToplevelExec), so every
    later PROTECT wrote before the stack's memory: heap corruption that showed as
    crashes and, once, corrupted Python bytecode. The stack's top is read when the
    script ends."""
    code = textwrap.dedent(r"""
        import ctypes, os
        from rtorch_py.r import _r_home
        from rtorch_py.tools import cli
        top = ctypes.c_int.in_dll(ctypes.CDLL(os.path.join(_r_home(), "lib", "libR.so")),
                                  "R_PPStackTop")
        end = os._exit
        def ended(status):
            print("status", status, "top", top.value, flush=True)
            end(status)
        os._exit = ended
        cli.run_source(
            'library(torch)\nx <- torch_ones(2)\nx\n'
            'try(stop("caught"), silent = TRUE)\nwarning("w")\n'
            'y <- (x * 2)$sum()\ninvisible(gc())\ny$item()\n')
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "[1] 4" in res.stdout and "Warning message" in res.stderr, res.stdout + res.stderr
    assert res.stdout.strip().endswith("status 0 top 0"), res.stdout + res.stderr


def test_script_lines_longer_than_r_console_buffer(tmp_path: Path) -> None:
    """R's console buffer holds 4096 bytes; Rscript reads files without that
    limit. Long lines are fed in pieces cut inside ( or [; one that cannot be
    cut is refused with a message, never read as a silent end of input."""
    numbers = ",".join(str(i) for i in range(3000))  # ~14 KB on one line
    res = run_r_script(tmp_path, "long.R", f"""library(torch)
x <- torch_tensor(c({numbers}))
y <- list(a = c({numbers}), b = "s;t")[["a"]]; cat(x$numel(), length(y), "\\n")
f <- function(v) {{ v + 1 }}; cat(sum(f(c({numbers}))), "\\n")
""")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "3000 3000 \n4501500 \n", res.stdout + res.stderr
    res = run_r_script(tmp_path, "long_string.R", f's <- "{"a" * 5000}"\ncat("not reached")\n')
    assert res.returncode == 1 and res.stdout == "", res.stdout
    assert "line 1 of the script is longer than R's console allows" in res.stderr, res.stderr


# ---------------------------------------------------------------------------
# (c) 3,000 R training steps with resident memory flat

_TRAIN = """
library(torch)
rss_mb <- function() {
  line <- grep("^VmRSS:", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}
# The two-layer net of vignettes/03-using-autograd.Rmd, smaller.
torch_manual_seed(42)
n <- 64; d_in <- 3; h <- 16
x <- torch_randn(n, d_in)
y <- x$mm(torch_randn(d_in, 1)) + 0.1 * torch_randn(n, 1)
w1 <- torch_randn(d_in, h, requires_grad = TRUE)
w2 <- torch_randn(h, 1, requires_grad = TRUE)
b1 <- torch_zeros(1, h, requires_grad = TRUE)
b2 <- torch_zeros(1, 1, requires_grad = TRUE)
learning_rate <- 1e-3
t0 <- proc.time()[["elapsed"]]
for (t in 1:3000) {
  y_pred <- x$mm(w1)$add(b1)$clamp(min = 0)$mm(w2)$add(b2)
  loss <- (y_pred - y)$pow(2)$mean()
  loss$backward()
  with_no_grad({
    w1$sub_(learning_rate * w1$grad)
    w2$sub_(learning_rate * w2$grad)
    b1$sub_(learning_rate * b1$grad)
    b2$sub_(learning_rate * b2$grad)
    w1$grad$zero_()
    w2$grad$zero_()
    b1$grad$zero_()
    b2$grad$zero_()
  })
  if (t == 1) first_loss <- loss$item()
  if (t %% 500 == 0) {
    rss <- rss_mb()          # as the loop left it, before any explicit gc()
    invisible(gc())          # then the engine tensors R still refers to
    cat(sprintf("step %d loss %.5f rss_mb %.2f tensors %d\\n", t, loss$item(), rss,
                rtorch_live_objects("Tensor")))
  }
}
cat(sprintf("first_loss %.5f ms_per_step %.3f\\n", first_loss,
            (proc.time()[["elapsed"]] - t0) / 3000 * 1000))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_3000_r_training_steps_keep_memory_flat(tmp_path: Path) -> None:
    res = run_r_script(tmp_path, "train.R", _TRAIN)
    assert res.returncode == 0, res.stderr
    print(res.stdout)
    rows = [tuple(float(v) for v in m) for m in re.findall(
        r"step (\d+) loss ([\d.]+) rss_mb ([\d.]+) tensors (\d+)", res.stdout)]
    assert [int(r[0]) for r in rows] == [500, 1000, 1500, 2000, 2500, 3000]
    first_loss = float(re.search(r"first_loss ([\d.]+)", res.stdout).group(1))
    assert rows[-1][1] < first_loss / 10, "the net did not train"
    rss = [r[2] for r in rows]
    tensors = [r[3] for r in rows]
    # after 1,000 warm-up steps: R's heap settles at the size its collector keeps for
    # the loop's garbage (each call's frame and promises) within the first few hundred
    growth = max(rss[2:]) - rss[1]
    print(f"RSS after warm-up {rss[1]:.1f} MB, at the end {rss[-1]:.1f} MB, "
          f"max growth {growth:.2f} MB; live tensors {tensors}")
    assert growth < 15, f"resident memory grew by {growth:.1f} MB over 2,000 steps"
    assert max(tensors) - min(tensors) < 10, f"live tensors grew: {tensors}"


_BIG_TENSORS = """
library(torch)
rss <- function() {
  line <- grep("^VmRSS", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}
options(torch.threshold_call_gc = THRESHOLD)
for (i in 1:300) y <- torch_randn(1000, 1000) * 2   # 2.4 GB made in all
cat(sprintf("rss_mb %.0f\\n", rss()))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_large_tensors_are_collected_past_the_gc_threshold(tmp_path: Path) -> None:
    # R can't see a tensor's size: past options(torch.threshold_call_gc) MB of
    # tensors handed to R, the bridge runs R's collector, as R torch does.
    low = run_r_script(tmp_path, "low.R", _BIG_TENSORS.replace("THRESHOLD", "200"))
    assert low.returncode == 0, low.stderr
    rss = float(re.search(r"rss_mb (\d+)", low.stdout).group(1))
    print(f"RSS with a 200 MB threshold after 2.4 GB of tensors: {rss:.0f} MB")
    assert rss < 1200, f"tensors were not collected: RSS {rss:.0f} MB"


_CADENCE = """
library(torch)
x <- torch_randn(256, 1024)  # 1 MiB
p <- torch_randn(2, requires_grad = TRUE)
base <- rtorch_live_objects("Tensor", 1048576)
live <- function() rtorch_live_objects("Tensor", 1048576) - base
hand <- function(n) for (i in seq_len(n)) y <- x * 2  # hands R n MiB, garbage once returned
backward <- function() (p * 2)$sum()$backward()
hand(100)
cat(sprintf("no step: %d\\n", live()))
invisible(gc())
for (mib in c(5, 5, 5, 5, 5, 5, 20, 20, 20, 20)) {
  hand(mib)
  backward()
  cat(sprintf("%d MiB step: %d\\n", mib, live()))
}
for (i in 1:3) {
  hand(100)
  before <- live()
  backward()
  cat(sprintf("100 MiB step: %d before its backward, %d after\\n", before, live()))
}
hand(150)
cat(sprintf("then no step, 150 MiB: %d\\n", live()))
hand(100)
cat(sprintf("100 more: %d\\n", live()))
"""


def test_r_collects_after_backward_passes_by_the_cadence(tmp_path: Path) -> None:
    # The tensors a forward pass handed R are garbage once its backward pass has run:
    # the bridge then runs R's collector on its youngest generation (memory.c) once R
    # was handed 32 MiB since the last collection, or 8 MiB after 3 backward passes,
    # and otherwise every 64 MiB, or twice the last step's bytes if more.
    res = run_r_script(tmp_path, "cadence.R", _CADENCE)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    print(out)
    # no backward pass yet: collected every 64 MiB
    assert 30 <= int(re.search(r"no step: (\d+)", out).group(1)) <= 40, out
    # 5 MiB steps: every 3rd step (15 MiB); 20 MiB steps: every 2nd (40 MiB, past 32)
    assert re.findall(r"MiB step: (\d+)\n", out) == \
        ["5", "10", "0", "5", "10", "0", "20", "0", "20", "0"], out
    # 100 MiB steps: the first is collected in its middle (64 MiB); the next ones are
    # not (twice the last step is 200 MiB), and after each backward pass all is freed
    # but what the first step's collection aged into an older generation
    big = [tuple(map(int, m)) for m in re.findall(r"(\d+) before its backward, (\d+) after", out)]
    assert len(big) == 3 and big[0][0] < 64, out
    aged = big[0][1]
    assert aged <= 3 and big[1:] == [(100 + aged, aged)] * 2, out
    # the limit stays twice the last step (200 MiB) after the training stops
    assert int(re.search(r"150 MiB: (\d+)", out).group(1)) == 150 + aged, out
    assert int(re.search(r"100 more: (\d+)", out).group(1)) < 100, out


# ---------------------------------------------------------------------------
# R messages name R's 1-based dims and positions and R's types (each of these
# was a 0-based or Python-flavoured message while issue 6 was worked on).

def _r_message(expr: str) -> str:
    res = run_r("-e", f"library(torch); x <- torch_randn(2, 3); "
                      f"cat(tryCatch({{ {expr}; 'NO ERROR' }}, error = conditionMessage))")
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.parametrize("expr, expected", [
    ("x$sum(dim = 3)", "Dimension out of range (expected to be in range of [-2, 2], but got 3)"),
    ("x$softmax(dim = 5)", "Dimension out of range (expected to be in range of [-2, 2], but got 5)"),
    ("x$unsqueeze(5)", "Dimension out of range (expected to be in range of [-3, 3], but got 5)"),
    ("x$transpose(1, 3)", "Dimension out of range (expected to be in range of [-2, 2], but got 3)"),
    ("x$size(3)", "Dimension out of range (expected to be in range of [-2, 2], but got 3)"),
    ("x$sum(dim = 0)", "Indexing starts at 1 but found a 0."),
    ("torch_cat(list(x, torch_randn(4, 5)))",
     "Sizes of tensors must match except in dimension 1. Expected size 3 but got size 5 for "
     "tensor number 2 in the list."),
    ("x$select(1, 9)", "select(): index 9 out of range for tensor of size [2, 3] at dimension 1"),
    ("x[torch_tensor(c(TRUE, FALSE, TRUE)), ]", "The shape of the mask [3] at dimension 1"),
    ("x[5, ]", "index 5 is out of bounds for dimension 1 with size 2"),
    ("x$gather(1, torch_ones(2, 3))", "gather(): Expected dtype int64 for index"),
    ("torch_tensor(list(function(x) x))",
     "can't make a tensor from a function (element 1 of the list)"),
    ("torch_tensor(list(1, 'a'))", "can't make a tensor from a character (element 2 of the list)"),
    ("torch_tensor(list(c(1, 2), 3))", "must be numeric vectors of the same length, got lengths 2, 1"),
], ids=lambda v: v if len(v) < 40 else None)
def test_r_messages_are_1_based_and_speak_r(expr: str, expected: str) -> None:
    msg = _r_message(expr)
    assert expected in msg, msg
