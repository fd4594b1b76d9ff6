"""The R bridge: testthat files run through `rtorch-py run`, the runner's
Rscript behaviour, and tensors shared between Python and embedded R.

Each R-facing test runs in a subprocess (a fresh embedded R, as users get
from the runner); the Python-interop test loads the shim in-process.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import ROOT, needs_r, run_r

R_TESTS = ROOT / "tests" / "r"


# ---------------------------------------------------------------------------
# testthat files, one pytest test each

TESTTHAT_FILES = sorted(p.name for p in R_TESTS.glob("test-*.R"))


@needs_r
@pytest.mark.parametrize("name", TESTTHAT_FILES)
def test_testthat_file(name: str) -> None:
    res = run_r(str(R_TESTS / "run-testthat.R"), env={"RTORCH_TEST_FILE": str(R_TESTS / name)})
    assert res.returncode == 0, f"{name} failed:\n{res.stdout}\n{res.stderr}"
    assert "0 failed, 0 errors" in res.stdout, res.stdout


# ---------------------------------------------------------------------------
# The runner behaves like Rscript

@needs_r
def test_issue_example_prints_the_gradient() -> None:
    res = run_r("-e", "library(torch); x <- torch_tensor(1, requires_grad = TRUE); "
                      "(x * 2)$backward(); x$grad")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "torch_tensor\n 2\n[ CPUFloatType{1} ]\n"
    assert res.stderr == ""


@needs_r
def test_autoprint_only_visible_values() -> None:
    res = run_r("-e", "x <- 1", "-e", "invisible(2)", "-e", "f <- function() invisible(3); f()",
                "-e", "library(stats)", "-e", "x + 1", "-e", "print('a')")
    assert res.returncode == 0, res.stderr
    assert res.stdout == '[1] 2\n[1] "a"\n'


@needs_r
def test_error_at_top_level() -> None:
    res = run_r("-e", "cat('before\\n'); stop('boom'); cat('after\\n')")
    assert res.returncode == 1
    assert res.stdout == "before\n"
    assert res.stderr == "Error: boom\nExecution halted\n"


@needs_r
def test_error_in_a_function_names_the_call() -> None:
    res = run_r("-e", "f <- function() stop('inner'); g <- function() f(); g()")
    assert res.returncode == 1
    assert res.stderr == "Error in f() : inner\nCalls: g -> f\nExecution halted\n"


@needs_r
def test_python_error_reaches_r_as_error() -> None:
    res = run_r("-e", "library(torch); x <- torch_ones(2, 2); x$sum(dim = 0)")
    assert res.returncode == 1
    assert "Indexing starts at 1 but found a 0." in res.stderr
    assert res.stderr.endswith("Execution halted\n")


@needs_r
def test_errors_are_catchable_and_the_session_goes_on() -> None:
    res = run_r("-e", "library(torch)",
                "-e", "r <- tryCatch(torch_ones(2)$sum(dim = 0), error = function(e) "
                      "conditionMessage(e)); cat(r, '\\n')",
                "-e", "(torch_ones(2) * 3)$sum()")
    assert res.returncode == 0, res.stderr
    assert "Indexing starts at 1" in res.stdout
    assert res.stdout.endswith("torch_tensor\n6\n[ CPUFloatType{} ]\n")


@needs_r
def test_warnings_printed_as_rscript() -> None:
    res = run_r("-e", "f <- function() warning('careful'); f(); 1")
    assert res.returncode == 0
    assert res.stdout == "[1] 1\n"
    assert res.stderr == "Warning message:\nIn f() : careful\n"


@needs_r
def test_syntax_error() -> None:
    res = run_r("-e", "1", "-e", "x y")
    assert res.returncode == 1
    assert res.stdout == "[1] 1\n"
    assert res.stderr == 'Error: unexpected symbol in "x y"\nExecution halted\n'


@needs_r
def test_quit_status() -> None:
    res = run_r("-e", "cat('bye\\n'); quit(status = 3)")
    assert res.returncode == 3
    assert res.stdout == "bye\n"


@needs_r
def test_script_file_and_missing_file(tmp_path: Path) -> None:
    script = tmp_path / "s.R"
    script.write_text("library(torch)\n\nx <- torch_tensor(c(1, 2))\n\nx$sum()\n")
    res = run_r(str(script))
    assert res.returncode == 0, res.stderr
    assert res.stdout == "torch_tensor\n3\n[ CPUFloatType{} ]\n"
    res = run_r(str(tmp_path / "missing.R"))
    assert res.returncode == 2
    assert "cannot open file" in res.stderr


@needs_r
def test_other_packages_load_normally() -> None:
    res = run_r("-e", "library(testthat); library(torch); requireNamespace('stats'); "
                      "cat(is.function(test_that), is.function(torch_tensor), '\\n')")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "TRUE TRUE \n"


@needs_r
def test_require_torch() -> None:
    res = run_r("-e", "cat(require(torch, quietly = TRUE), '\\n'); torch::torch_zeros(1)")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "TRUE \ntorch_tensor\n 0\n[ CPUFloatType{1} ]\n"


# ---------------------------------------------------------------------------
# The same tensors in Python and R

_INTEROP = r'''
import numpy as np
import rpy2.rinterface as ri
import rtorch_py as rt
import rtorch_py.r as rr

rr.load()
rr.load()  # idempotent
ri.evalr("""
square <- autograd_function(
  forward = function(ctx, x) {
    ctx$save_for_backward(x = x, k = 2)
    x^2
  },
  backward = function(ctx, grad_output) {
    s <- ctx$saved_variables
    stopifnot(is.numeric(s$k))
    list(x = grad_output * s$k * s$x)
  }
)
""")
x = rt.torch_tensor([1.0, 2.0, 3.0], requires_grad=True)
x_r = rr.to_r(x)
assert rr.from_r(x_r) is x                      # the same object, not a copy
y = rr.from_r(ri.globalenv.find("square")(x_r))
assert isinstance(y, rt.Tensor) and y.grad_fn is not None
y.sum().backward()                               # backpropagated from Python
assert np.allclose(x.grad.numpy(), [2.0, 4.0, 6.0])
ri.globalenv["x"] = x_r
g = ri.evalr("as_array(x$grad)")                 # and visible from R
assert list(g) == [2.0, 4.0, 6.0], list(g)
assert ri.evalr("is_torch_tensor(x)")[0]

# an R error inside backward reaches Python with its message
ri.evalr("""
bad <- autograd_function(
  forward = function(ctx, x) x * 1,
  backward = function(ctx, g) stop("backward exploded")
)
""")
z = rr.from_r(ri.globalenv.find("bad")(x_r))
try:
    z.sum().backward()
except Exception as err:
    assert "backward exploded" in str(err), str(err)
else:
    raise AssertionError("no error")
assert np.allclose(x.grad.numpy(), [2.0, 4.0, 6.0])  # gradients untouched
# and the session still works
assert list(ri.evalr("as_array(torch_tensor(c(1, 2)) * 2)")) == [2.0, 4.0]

# rpy2's converters (what `%%R -i x -o y` use) move tensors as themselves
import rpy2.robjects as ro
w = rt.torch_tensor([3.0], requires_grad=True)
ro.globalenv["w"] = w
ro.r("v <- (w * w)$sum(); v$backward()")
v = ro.globalenv["v"]
assert isinstance(v, rt.Tensor) and v.item() == 9.0
assert w.grad.item() == 6.0
print("OK")
'''


@needs_r
def test_python_tensor_through_r_autograd_function() -> None:
    res = subprocess.run([sys.executable, "-c", _INTEROP], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("OK")


_MODULES_INTEROP = r'''
import numpy as np
import rpy2.rinterface as ri
import rtorch_py as rt
import rtorch_py.r as rr

rr.load()
ri.evalr("""
scaled <- nn_module("scaled",
  initialize = function(k) {
    self$k <- k
    self$w <- nn_parameter(torch_ones(2))
  },
  forward = function(x) x * self$w * self$k)
holder <- nn_module("holder",
  initialize = function(inner) self$inner <- inner,
  forward = function(x) self$inner(x) + 1)
""")
# an R module inside a Python container: its R forward runs, its parameters
# are the container's, gradients reach them
r_module = rr.from_r(ri.evalr("scaled(3)"))
assert isinstance(r_module, rt.nn.Module)
seq = rt.nn_sequential(r_module, rt.nn_relu())
x = rt.torch_tensor(np.array([[1.0, -2.0]], dtype=np.float32))
assert seq(x).data.tolist() == [[3.0, 0.0]]
assert list(seq.state_dict()) == ["0.w"]
seq(x).sum().backward()
assert r_module.w.grad.data.tolist() == [3.0, 0.0]
# ... and R sees the container's child as the module it made (its R field too)
ri.globalenv["s"] = rr.to_r(seq)
assert list(ri.evalr("s[[1]]$k")) == [3.0]
assert list(ri.evalr("class(s[[1]])")) == ["scaled", "nn_module"]
# a Python module inside an R module: the same object, its parameters the R module's
lin = rt.nn_linear(2, 1)
ri.globalenv["lin"] = rr.to_r(lin)
ri.evalr("h <- holder(lin)")
out = rr.from_r(ri.evalr("h(torch_ones(1, 2))"))
assert np.allclose(out.data, lin(rt.torch_ones(1, 2)).data + 1)
assert list(ri.evalr("names(h$parameters)")) == ["inner.weight", "inner.bias"]
assert rr.from_r(ri.evalr("h"))._modules["inner"] is lin
# `self$inner` is kept by name in R (`$.nn_Module`): a child replaced or removed in
# Python is seen from R at once
assert list(ri.evalr("c(h$inner$out_features, h$inner$out_features)")) == [1.0, 1.0]
rr.from_r(ri.evalr("h")).inner = rt.nn_linear(2, 3)
assert list(ri.evalr("h$inner$out_features")) == [3.0]
assert list(ri.evalr("dim(h(torch_ones(1, 2)))")) == [1, 3]
del rr.from_r(ri.evalr("h")).inner
assert ri.evalr("is.null(h$inner)")[0]
# `$` reads the R6 object's own fields in C (C_nn_dollar); an active binding is
# still called once a lookup, a NULL field still falls through to Python's side
ri.evalr("""
counted <- nn_module("counted",
  initialize = function() { self$calls <- 0; self$empty <- NULL },
  active = list(a = function() { self$calls <- self$calls + 1; NULL }),
  forward = function(x) x)
cm <- counted()
""")
assert list(ri.evalr("{cm$a; cm[['a']]; cm$calls}")) == [2.0]
assert ri.evalr("is.null(cm$empty)")[0]
print("OK")
'''


@needs_r
def test_modules_cross_between_python_and_r() -> None:
    res = subprocess.run([sys.executable, "-c", _MODULES_INTEROP], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("OK")


# ---------------------------------------------------------------------------
# The R-facing API layer, without R


def test_every_engine_op_has_an_r_form() -> None:
    """Every op's R forms are generated from the registry (1-based dims!)."""
    import rtorch_py as rt
    from rtorch_py import ops
    from rtorch_py.r import api
    methods = {s.name for s in ops.REGISTRY.values() if s.method}
    assert sorted(methods - set(api._TABLES["METHODS"])) == []
    torch_fns = {n for n in dir(rt) if n.startswith("torch_")}
    # (or written in R, over internal Python functions: torch_save, torch_load...)
    in_r = {m.group(1) for f in (ROOT / "r_compat" / "R").glob("*.R")
            for m in re.finditer(r"^(torch_\w+) <- function", f.read_text(), re.M)}
    assert sorted(torch_fns - set(api._TABLES["FUNCTIONS"]) - in_r) == []


def test_dims_are_one_based() -> None:
    from rtorch_py.r import one_based
    assert one_based.dim(1.0) == 0 and one_based.dim(2) == 1 and one_based.dim(-1) == -1
    with pytest.raises(IndexError, match="Indexing starts at 1 but found a 0."):
        one_based.dim(0)
    with pytest.raises(ValueError):
        one_based.dim(1.5)
    assert one_based.dims(np.array([1.0, 3.0])) == (0, 2)


def test_one_based_positions_labels_and_names() -> None:
    """The one place R's 1-based counting is translated, concept by concept."""
    import rtorch_py as rt
    from rtorch_py.r import one_based
    assert one_based.position(1) == 0 and one_based.position(-1) == -1
    assert one_based.positions(np.array([1.0, -2.0, 3.0])).tolist() == [0, -2, 2]
    with pytest.raises(IndexError, match="Indexing starts at 1 but found a 0."):
        one_based.positions(np.array([1, 0]))
    with pytest.raises(IndexError, match="whole numbers"):
        one_based.positions(np.array([1.5]))
    assert [one_based.position_to_r(k) for k in (0, 4, -1)] == [1, 5, -1]
    assert one_based.dim_to_r(0) == 1 and one_based.dim_to_r(-2) == -2
    with pytest.raises(IndexError, match=r"range of \[-2, 2\], but got 3"):
        one_based.dim(3, ndim=2)
    assert one_based.dims(["a", 2]) == ("a", 1) and one_based.dims(None) is None
    idx = rt.torch_tensor(np.array([0, 2], dtype=np.int64))
    assert one_based.to_r([idx, 4])[0].data.tolist() == [1, 3] and one_based.to_r(4) == 5
    # labels are numbered from 1 with no counting from the end
    assert one_based.labels(rt.torch_tensor(np.array([1, 3]))).data.tolist() == [0, 2]
    assert one_based.labels(np.array([2.0])).tolist() == [1] and one_based.labels(7) == 6
    for dt in (np.int32, np.uint8):  # (shifted as int64: no wrap-around below 1)
        shifted = one_based.labels(rt.torch_tensor(np.array([1, 3], dtype=dt))).data
        assert shifted.dtype == np.int64 and shifted.tolist() == [0, 2]
    # R torch's index tensors: from 1, a 0 an error, negatives as given (-1 ends a row
    # of multilabel_margin_loss's targets; -100 is no class, as its ignore_index)
    rows = rt.torch_tensor(np.array([[2, 1, -1], [1, -100, 3]], dtype=np.int32))
    shifted = one_based.index_tensor(rows).data
    assert shifted.dtype == np.int64 and shifted.tolist() == [[1, 0, -1], [0, -100, 2]]
    with pytest.raises(IndexError, match="Indexing starts at 1 but found a 0."):
        one_based.index_tensor(rt.torch_tensor(np.array([1, 0])))
    assert one_based.index_tensor(7) == 6
    assert one_based.ignore_label(-100) == -100 and one_based.ignore_label(3) == 2
    assert [one_based.position_to_r(one_based.ignore_label(v)) for v in (-100, 3)] == [-100, 3]
    with pytest.raises(ValueError, match="ignore_index = 0"):
        one_based.ignore_label(0)
    # dims R torch's R code counts (movedim): a 0 is a value error of its own words
    assert one_based.wrapper_dims(2) == 1
    assert one_based.wrapper_dims(np.array([1.0, -1.0])) == (0, -1)
    with pytest.raises(ValueError, match="Dimension is 1-based, but found 0."):
        one_based.wrapper_dims(0)
    assert one_based.sizes([2, np.array([3.0, 4.0])]) == (2, 3, 4)
    with pytest.raises(TypeError, match="got a logical"):
        one_based.integer(True)
    assert one_based.layer_name("weight_ih_l1_reverse") == "weight_ih_l0_reverse"
    assert one_based.layer_name_to_r("bias_hh_l0") == "bias_hh_l1"


def test_r_arrays_keep_their_layout() -> None:
    from rtorch_py.r import api, tensor_api
    buf = bytearray(np.arange(1, 7, dtype=np.float64).tobytes())  # matrix(1:6, 2) in R
    arr = api._from_r_array("d", buf, (2, 3))
    assert arr[0, 1] == 3.0 and arr[1, 0] == 2.0
    t = tensor_api.torch_tensor(arr)
    assert t.dtype.name == "float32" and t.data.flags.c_contiguous
    assert tensor_api.as_array(t).flags.f_contiguous
    assert api._from_r_array("l", bytearray(np.array([1, 0], np.int32).tobytes()), None).dtype \
        == np.bool_


def test_r_indexing_semantics_in_python() -> None:
    import rtorch_py as rt
    from rtorch_py.r import api
    x = rt.torch_tensor(np.arange(12.0).reshape(3, 4))
    # x[c(1, 3), c(2, 4)] is orthogonal, as R's `[`
    out = api.index(x, [["value", np.array([1.0, 3.0])], ["value", np.array([2.0, 4.0])]])
    assert out.data.tolist() == [[1.0, 3.0], [9.0, 11.0]]
    # x[-1, ] is the last row; x[2:3, ] inclusive; drop = FALSE keeps dims
    assert api.index(x, [["value", -1.0], ["all"]]).data.tolist() == [8.0, 9.0, 10.0, 11.0]
    assert api.index(x, [["slice", [1, 3, 1]], ["all"]]).shape == (2, 4)
    assert api.index(x, [["value", 1.0], ["all"]], False).shape == (1, 4)
    with pytest.raises(IndexError, match="Indexing starts at 1"):
        api.index(x, [["value", 0.0]])


@needs_r
def test_command_args_as_rscript(tmp_path: Path) -> None:
    script = tmp_path / "args.R"
    script.write_text('cat(commandArgs(trailingOnly = TRUE), sep = "|")\ncat("\\n")\n')
    res = run_r(str(script), "a", "b c")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "a|b c\n"


@needs_r
def test_unfinished_script(tmp_path: Path) -> None:
    script = tmp_path / "open.R"
    script.write_text("cat('start\\n')\nf <- function() {\n  1\n")
    res = run_r(str(script))
    assert res.returncode == 1
    assert res.stdout == "start\n"
    assert res.stderr == "Error: unexpected end of input\nExecution halted\n"


@needs_r
def test_r_home_share_is_rscripts() -> None:
    # R's launcher exports R_SHARE_DIR (Debian keeps it outside R_HOME); without it
    # tools::parse_Rd() finds no Rd macros
    rscript = subprocess.run(["Rscript", "-e", 'cat(R.home("share"))'], capture_output=True,
                             text=True)
    if rscript.returncode != 0:
        pytest.skip("no Rscript to compare with")
    res = run_r("-e", 'cat(R.home("share"))')
    assert res.returncode == 0, res.stderr
    assert res.stdout == rscript.stdout
