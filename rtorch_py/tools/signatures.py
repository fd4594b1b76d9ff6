"""`rtorch-py signatures SOURCE`: R torch's exported API, name by name, against the shim's.

SOURCE is the git directory of a fetched mlverse/torch snapshot. What R torch
exports is read from it at run time (never copied into the project): the names
from its `NAMESPACE`, each function's formal arguments from the `\\usage` section
of its `man/*.Rd` page, and the tensor methods with theirs from `R/gen-method.R`.

The shim's side: every exported function's formals as R reads them (`formals()`,
what `args()` and RStudio show), those generated from the Python tables
(`rtorch_py.r.tables`: ops, the tensor API, nn, optim, data) included: R torch's
declared ones or the Python function's as R sees them (`rtorch_py.r.closures`).
A tensor method's are those of the Python function behind it, a built-in
layer's its constructor's.

The methods of R torch's R6 classes (a distribution's, a constraint's, a storage's, a
module's: `OBJECT_SAMPLES` makes one object of each here) are read from its `R6Class`
definitions with their parents'; here each must not be `function(...)` where R torch
declares formals (`differs`), and is `unchecked` where the shim's object has no such method.

Every name is then `ok`, `missing` (the shim has no such function or method),
or `differs` (other argument names, another order, other defaults). Defaults are
compared as values where both are constants (`1L` and `1.0` agree; R's `list()`,
R torch's mark of an optional tensor list, agrees with None); an expression
default (`torch_preserve_format()`) only with the same expression.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..r import tables
from ..r.closures import NO_DEFAULT, python_formals, r_name, shim_formals
from .docs_check import find_git_dir, read_blobs

__all__ = ["Entry", "check", "format_report", "main", "python_formals", "NO_DEFAULT"]

# --------------------------------------------------------------------------
# The R side: R torch's formals parsed by R, the shim's looked up in the shim

_DRIVER = r"""
suppressPackageStartupMessages(library(torch))
local({
  src <- Sys.getenv("RTORCH_SIG_SRC")
  out <- Sys.getenv("RTORCH_SIG_OUT")
  # A default as JSON: a constant's value (NULL, logicals, numbers, strings, c()
  # and list() of them, negative numbers, arithmetic on them: 1/8), else its R text.
  constant <- function(e) {
    if (is.null(e) || is.atomic(e)) return(TRUE)
    is.call(e) && as.character(e[[1]]) %in% c("c", "list", "-", "+", "*", "/") &&
      all(vapply(as.list(e)[-1], constant, TRUE))
  }
  value <- function(e) {
    if (constant(e)) {
      v <- eval(e, baseenv())
      list(value = if (is.list(v)) lapply(v, unlist) else v)
    } else list(expr = paste(deparse(e, width.cutoff = 500L), collapse = " "))
  }
  empty <- function(x) is.symbol(x) && !nzchar(as.character(x))  # (a formal's "no default")
  formals_of <- function(args) {
    lapply(seq_along(args), function(i) {
      nm <- names(args)[i]
      if (is.null(nm) || !nzchar(nm)) {  # a usage line's argument without a default
        return(list(name = as.character(args[[i]]), default = NULL))
      }
      if (empty(args[[i]])) return(list(name = nm, default = NULL))
      list(name = nm, default = value(args[[i]]))
    })
  }
  # R torch: each Rd page's usage, parsed as R calls
  usage <- list()
  for (f in list.files(file.path(src, "man"), pattern = "\\.Rd$", full.names = TRUE)) {
    rd <- tools::parse_Rd(f)
    tags <- vapply(rd, function(x) attr(x, "Rd_tag"), "")
    if (!any(tags == "\\usage")) next
    text <- paste(as.character(rd[tags == "\\usage"][[1]]), collapse = "")
    text <- gsub("\\\\(S4)?method\\{[^}]*\\}\\{[^}]*\\}", ".s3method", text)  # S3/S4 methods
    text <- gsub("\\dots", "...", text, fixed = TRUE)
    calls <- tryCatch(parse(text = text, keep.source = FALSE), error = function(e) NULL)
    for (cl in as.list(calls)) {
      if (!is.call(cl) || !is.symbol(cl[[1]])) next
      fname <- as.character(cl[[1]])
      if (fname == ".s3method" || !is.null(usage[[fname]])) next
      args <- as.list(cl)[-1]
      usage[[fname]] <- formals_of(args)
    }
  }
  # a name whose Rd page has no usage (overloads told in prose, re-exports): the formals
  # of its definition (`name <- function(...)`) in R torch's R/ sources
  for (f in list.files(file.path(src, "R"), pattern = "\\.R$", full.names = TRUE)) {
    for (e in as.list(tryCatch(parse(f, keep.source = FALSE), error = function(e) NULL))) {
      if (is.call(e) && identical(e[[1]], as.name("<-")) && is.symbol(e[[2]]) &&
          is.call(e[[3]]) && identical(e[[3]][[1]], as.name("function"))) {
        fname <- as.character(e[[2]])
        if (is.null(usage[[fname]])) usage[[fname]] <- formals_of(as.list(e[[3]][[2]]))
      }
    }
  }
  exports <- parseNamespaceFile(basename(src), dirname(src))$exports
  # R torch's tensor methods: Tensor$set("public", name, function(...) ...)
  methods <- list()
  for (e in as.list(parse(file.path(src, "R", "gen-method.R"), keep.source = FALSE))) {
    if (is.call(e) && identical(e[[2]], "public") && is.call(e[[4]])) {
      fml <- e[[4]][[2]]
      methods[[e[[3]]]] <- formals_of(as.list(fml))
    }
  }
  # R torch's R6 classes (`X <- R6::R6Class("classname", inherit = Y, public = list(...))`):
  # their public methods' formals, inherited ones included (R7 classes' `$` is R7's own
  # `function(...)`: not read)
  own <- list(); parent <- list(); class_of <- list()
  for (f in list.files(file.path(src, "R"), pattern = "\\.R$", full.names = TRUE)) {
    for (e in as.list(tryCatch(parse(f, keep.source = FALSE), error = function(e) NULL))) {
      if (!(is.call(e) && identical(e[[1]], as.name("<-")) && is.symbol(e[[2]]) &&
            is.call(e[[3]]) && deparse(e[[3]][[1]]) %in% c("R6::R6Class", "R6Class"))) next
      a <- as.list(e[[3]])[-1]
      cls <- if (!is.null(a$classname)) a$classname else a[[1]]
      if (!is.character(cls)) next
      class_of[[as.character(e[[2]])]] <- cls
      if (is.symbol(a$inherit)) parent[[cls]] <- as.character(a$inherit)
      pub <- if (is.call(a$public)) as.list(a$public)[-1] else list()
      fns <- Filter(function(m) is.call(m) && identical(m[[1]], as.name("function")), pub)
      own[[cls]] <- lapply(fns, function(m) formals_of(as.list(m[[2]])))
    }
  }
  r6_methods <- function(cls) {
    up <- class_of[[if (is.null(parent[[cls]])) "" else parent[[cls]]]]
    mine <- own[[cls]]
    if (is.null(up)) mine else c(mine, r6_methods(up)[setdiff(names(r6_methods(up)), names(mine))])
  }
  # each of R torch's classes the shim gives an object of (Python's OBJECT_SAMPLES): its
  # methods here, `obj$name` as the shim gives it
  samples <- jsonlite::fromJSON(Sys.getenv("RTORCH_SIG_SAMPLES"))
  objects <- list()
  for (cls in intersect(names(samples), names(own))) {
    obj <- eval(str2lang(samples[[cls]]), asNamespace("torch"))
    ms <- r6_methods(cls)
    objects[[cls]] <- lapply(setNames(nm = setdiff(names(ms), "initialize")), function(m) {
      f <- tryCatch(eval(call("$", obj, m)), error = function(e) NULL)
      list(r_torch = ms[[m]], shim = if (is.function(f)) formals_of(as.list(formals(f))))
    })
  }
  # The shim: each of those names as it exists here
  ns <- asNamespace("torch")
  shim_exports <- getNamespaceExports("torch")
  shim_kind <- function(name) {
    if (!name %in% shim_exports) return(list(kind = "missing"))
    f <- getExportedValue("torch", name)
    if (!is.function(f)) return(list(kind = "value"))
    if (inherits(f, "nn_module_generator")) {  # its initialize's formals (a layer's: Python's)
      init <- attr(f, "module")$public_methods$initialize
      if (is.null(init)) return(list(kind = "layer"))
      return(list(kind = "r", formals = formals_of(as.list(formals(init)))))
    }
    list(kind = "r", formals = formals_of(as.list(formals(f))))
  }
  shim_functions <- lapply(setNames(nm = exports), shim_kind)
  shim_methods <- lapply(setNames(nm = names(methods)), function(nm) {
    list(kind = if (!is.null(ns$.methods[[nm]])) "table" else "missing")
  })
  writeLines(jsonlite::toJSON(list(exports = exports, usage = usage, methods = methods,
                                   shim_functions = shim_functions, shim_methods = shim_methods,
                                   objects = objects),
                              auto_unbox = TRUE, null = "null", digits = NA), out)
})
"""


# An object of each of R torch's R6 classes with methods to check (R source, run in the
# namespace): each method R torch declares formals for must not be `function(...)` here.
OBJECT_SAMPLES = {
    "torch_Normal": "distr_normal(0, 1)",
    "torch_Bernoulli": "distr_bernoulli(0.3)",
    "torch_Categorical": "distr_categorical(probs = c(0.2, 0.8))",
    "torch_Gamma": "distr_gamma(1, 2)",
    "torch_Chi2": "distr_chi2(3)",
    "torch_Poisson": "distr_poisson(2)",
    "torch_MultivariateNormal": "distr_multivariate_normal(torch_zeros(2), torch_eye(2))",
    "torch_MixtureSameFamily": "distr_mixture_same_family(distr_categorical(c(0.5, 0.5)), "
                               "distr_normal(torch_zeros(2), torch_ones(2)))",
    "torch_Real": "constraint_real",
    "torch_LessThan": "constraint_less_than$new(1)",
    "torch_Interval": "constraint_interval$new(0, 1)",
    "torch_storage": "torch_randn(2)$storage()",
    "torch_hook": "torch_ones(1, requires_grad = TRUE)$register_hook(function(grad) grad)",
    "nn_Module": "nn_linear(1, 1)",
    "torch_optimizer": "optim_sgd(nn_linear(1, 1)$parameters, lr = 0.1)",
    "OptimizerIgnite": "optim_ignite_adam(nn_linear(1, 1)$parameters)",
    "LRScheduler": "lr_step(optim_sgd(nn_linear(1, 1)$parameters, lr = 0.1), step_size = 1)",
    "dataset": "tensor_dataset(torch_ones(2, 1))",
    "dataloader": "dataloader(tensor_dataset(torch_ones(2, 1)), batch_size = 1)",
    "AmpGradScaler": "cuda_amp_grad_scaler()",
    "nn_utils_weight_norm": "nn_utils_weight_norm$new('weight', NULL)",
}


def _r_side(git_dir: Path, work: Path) -> dict:
    """Run the driver in the shim on R torch's NAMESPACE, man/ and R/ sources."""
    src = work / "torch"
    for name, data in read_blobs(git_dir, "HEAD", ("NAMESPACE", "man/", "R/"))\
            .items():
        target = src / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    driver, out = work / "driver.R", work / "signatures.json"
    driver.write_text(_DRIVER, encoding="utf-8")
    env = dict(os.environ, RTORCH_SIG_SRC=str(src), RTORCH_SIG_OUT=str(out),
               RTORCH_SIG_SAMPLES=json.dumps(OBJECT_SAMPLES))
    res = subprocess.run([sys.executable, "-m", "rtorch_py.tools.cli", "run", str(driver)],
                         capture_output=True, text=True, env=env, cwd=work)
    if res.returncode != 0 or not out.exists():
        raise RuntimeError(f"the signature driver failed: {res.stderr[-2000:]}")
    return json.loads(out.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------
# Comparing

@dataclass
class Entry:
    name: str
    kind: str                  # function | method | object (an R6 object's `$` method)
    status: str                # ok | missing | differs | unchecked (no usage in R torch)
    r_torch: str = ""          # R torch's formals, as R writes them
    shim: str = ""             # the shim's
    problems: list[str] = field(default_factory=list)


def _r_default(d: Any) -> Any:
    """A default from the driver's JSON as a comparable value, or ("expr", text)."""
    if d is None:
        return NO_DEFAULT
    if "expr" in d:
        return ("expr", d["expr"])
    return _plain(d["value"])


def _plain(v: Any) -> Any:
    if isinstance(v, list):
        if len(v) == 1 and not isinstance(v[0], list):
            return _plain(v[0])
        return tuple(_plain(x) for x in v)
    if isinstance(v, str) and v in ("Inf", "-Inf", "NaN"):  # jsonlite's spelling
        return float(v.lower().replace("nan", "nan"))
    return v


# R torch's defaults that mean what the engine's None means (the same calls behave
# the same): the default device and memory format, and an expression naming another
# argument (`m = n`, `retain_graph = create_graph`: None is "as that one").
_MEANS_NONE = {("expr", "torch_preserve_format()"), ("expr", "torch_contiguous_format()")}


def _same_default(r: Any, py: Any, name: str = "", others: Sequence[str] = ()) -> bool:
    if isinstance(r, tuple) and r[:1] == ("expr",):
        if py is None and (r in _MEANS_NONE or r[1] in others):
            return True
        return r == py  # (an R function's own default: the same expression)
    if r == () and py is None:  # list(): R torch's optional tensor list
        return True
    if name == "device" and r is None and py == "cpu":  # the default device
        return True
    if isinstance(r, tuple) and len(r) > 1 and all(isinstance(x, str) for x in r):
        return py in (r[0], r)  # R's match.arg(): c("mean", "sum", "none") means "mean"
    if isinstance(py, list):
        py = tuple(py)
    if isinstance(r, tuple) and not isinstance(py, tuple) and len(r) == 1:
        r = r[0]
    if isinstance(py, tuple) and not isinstance(r, tuple) and len(py) == 1:
        py = py[0]
    if isinstance(r, bool) or isinstance(py, bool):
        return type(r) is type(py) and r == py
    if isinstance(r, (int, float)) and isinstance(py, (int, float)):
        # (R's numbers come printed to 15 significant digits: 1/3 is 0.333333333333333)
        return math.isclose(r, py, rel_tol=1e-14) or (math.isnan(r) and math.isnan(py))
    if isinstance(r, tuple) and isinstance(py, tuple):
        return len(r) == len(py) and all(_same_default(a, b) for a, b in zip(r, py))
    return r == py


def _show(name: str, d: Any, has: bool) -> str:
    if name == "...":
        return "..."
    if not has:
        return name
    if isinstance(d, tuple) and d[:1] == ("expr",):
        return f"{name} = {d[1]}"
    return f"{name} = {_r_text(d)}"


def _r_text(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (tuple, list)):
        return "c(" + ", ".join(_r_text(x) for x in v) + ")"
    return repr(v)


def compare(r_formals: list[tuple[str, Any, bool]], ours: list[tuple[str, Any, bool]]) -> list[str]:
    """What differs between R torch's formals and ours: names and order, then defaults."""
    r_names, our_names = [f[0] for f in r_formals], [r_name(f[0]) for f in ours]
    if [r_name(n) for n in r_names] != our_names:
        return [f"arguments ({', '.join(r_names)}) here ({', '.join(our_names)})"]
    problems = []
    for (name, rd, rhas), (_, od, ohas) in zip(r_formals, ours):
        if name == "...":
            continue
        if not rhas and ohas and od is None:
            continue  # optional here; R torch dispatches on missing() (torch_sum(x))
        if rhas != ohas:
            problems.append(f"{name}: " + (f"R torch's default {_show(name, rd, rhas)}, none here"
                                           if rhas else
                                           f"no default in R torch, here {_show(name, od, ohas)}"))
        elif rhas and not _same_default(rd, od, name, r_names):
            problems.append(f"{name}: R torch's default {_show(name, rd, rhas)}, here "
                            f"{_show(name, od, ohas)}")
    return problems


def check(git_dir: Path, work: Path) -> list[Entry]:
    """Every function R torch exports and every tensor method of gen-method.R."""
    data = _r_side(git_dir, work)
    table = tables.build()
    entries = []
    usage = data["usage"]
    for name in sorted(data["exports"]):
        shim = data["shim_functions"][name]
        e = Entry(name, "function", "")
        r_f = [(a["name"], _r_default(a["default"]), a["default"] is not None)
               for a in usage.get(name, [])] if name in usage else None
        if r_f is not None:
            e.r_torch = f"{name}(" + ", ".join(_show(*f) for f in r_f) + ")"
        if shim["kind"] == "missing":
            e.status = "missing"
        elif shim["kind"] == "value" or r_f is None:
            e.status = "unchecked"
        else:
            ours = shim_formals("function", name, table) if shim["kind"] in ("table", "layer") \
                else [(a["name"], _r_default(a["default"]), a["default"] is not None)
                      for a in shim["formals"]]
            e.shim = f"{name}(" + ", ".join(_show(*f) for f in ours) + ")"
            e.problems = compare(r_f, ours)
            e.status = "differs" if e.problems else "ok"
        entries.append(e)
    for name in sorted(data["methods"]):
        r_f = [(a["name"], _r_default(a["default"]), a["default"] is not None)
               for a in data["methods"][name]]
        e = Entry(name, "method", "", f"x${name}(" + ", ".join(_show(*f) for f in r_f) + ")")
        if data["shim_methods"][name]["kind"] == "missing":
            e.status = "missing"
        else:
            ours = shim_formals("method", name, table)
            e.shim = f"x${name}(" + ", ".join(_show(*f) for f in ours) + ")"
            e.problems = compare(r_f, ours)
            e.status = "differs" if e.problems else "ok"
        entries.append(e)
    for cls, methods in sorted(data["objects"].items()):
        for m, both in sorted(methods.items()):
            r_f = [(a["name"], _r_default(a["default"]), a["default"] is not None)
                   for a in both["r_torch"]]
            e = Entry(f"{cls}${m}", "object", "unchecked",
                      f"{cls}${m}(" + ", ".join(_show(*f) for f in r_f) + ")")
            if both["shim"] is not None:  # (a method the shim lacks: unchecked)
                ours = [(a["name"], _r_default(a["default"]), a["default"] is not None)
                        for a in both["shim"]]
                e.shim = f"{cls}${m}(" + ", ".join(_show(*f) for f in ours) + ")"
                dots = [f[0] for f in ours] == ["..."] and [f[0] for f in r_f] != ["..."]
                e.problems = ["function(...) here, R torch declares formals"] if dots else []
                e.status = "differs" if dots else "ok"
            entries.append(e)
    return entries


def format_report(entries: Sequence[Entry], show: Sequence[str] = ("differs",)) -> str:
    out = []
    for kind in ("function", "method", "object"):
        es = [e for e in entries if e.kind == kind]
        counts = {s: sum(e.status == s for e in es) for s in ("ok", "differs", "missing",
                                                               "unchecked")}
        out.append(f"{kind}s: {len(es)}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    for e in entries:
        if e.status in show:
            out.append(f"[{e.status}] {e.r_torch or e.name}")
            if e.shim:
                out.append(f"    here: {e.shim}")
            out += [f"    {p}" for p in e.problems]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="rtorch-py signatures",
        description="Compare every function and tensor method R torch exports (names, "
                    "argument names, order, defaults) with the shim's.")
    p.add_argument("source", help="the git directory of an mlverse/torch snapshot")
    p.add_argument("--show", default="differs",
                   help="statuses to list, comma-separated (ok, differs, missing, unchecked)")
    p.add_argument("--json", metavar="FILE", help="write every entry to FILE")
    ns = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="rtorch-signatures-"))
    try:
        entries = check(find_git_dir(ns.source), work)
    except (ValueError, RuntimeError, subprocess.CalledProcessError) as err:
        print(f"rtorch-py signatures: {err}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(format_report(entries, ns.show.split(",")))
    if ns.json:
        Path(ns.json).write_text(json.dumps([e.__dict__ for e in entries], indent=1),
                                 encoding="utf-8")
    return 0 if not any(e.status == "differs" for e in entries) else 1
