# The crossing into Python. Every R-level op is one .External into src/calls.c
# holding an external pointer to a Python callable of rtorch_py.r.api; the C
# side turns R values into Python ones and back (src/convert.c). What the
# closures look like (formals, what a method returns) is the Python side's
# (rtorch_py/r/closures.py).

.api_module <- "rtorch_py.r.api"

# Tables of Python callables, filled by .onLoad.
.py <- new.env(parent = emptyenv())        # api functions by name
.methods <- new.env(parent = emptyenv())   # tensor methods
.method_policies <- new.env(parent = emptyenv())  # what each returns (closures.METHOD_POLICIES)
.binary <- new.env(parent = emptyenv())    # Ops group, two arguments
.unary <- new.env(parent = emptyenv())     # Ops group, one argument
.math <- new.env(parent = emptyenv())      # Math group
.summary <- new.env(parent = emptyenv())   # Summary group

# How Python calls an R function: f(args...) with the error condition kept
# for Python (see call_r in src/convert.c).
.invoke <- function(f, args) .Call(C_invoke, f, args)

.py_fn <- function(name) .Call(C_getattr, name)

# The condition for an error raised in Python: R torch's class (value_error,
# type_error, runtime_error, not_implemented_error) and the call of the R
# function that called into Python (the bridge signals it).
.python_condition <- function(message, class) {
  call <- sys.call(-1L)
  # R torch's errors from the backward pass (libtorch's autograd engine, on a thread
  # of its own) carry no call: `try(x$backward())` prints "Error : ..."
  if (is.call(call) && is.call(call[[1]]) && identical(call[[1]][[1]], as.name("$")) &&
      identical(call[[1]][[3]], as.name("backward"))) call <- NULL
  # R torch's TorchScript (the `.jit_*` functions here) is libtorch's, reached through
  # Rcpp: its errors are C++ exceptions as Rcpp signals them, with no call
  if (is.call(call) && is.name(call[[1]]) && startsWith(as.character(call[[1]]), ".jit_")) {
    return(structure(class = c("Rcpp::exception", "C++Error", "error", "condition"),
                     list(message = message, call = NULL)))
  }
  structure(class = c(class, "error", "condition"), list(message = message, call = call))
}

# Python dict (as a named R list of pointers) -> environment of pointers.
.fill <- function(env, table) {
  for (nm in names(table)) assign(nm, table[[nm]], envir = env)
}

.onLoad <- function(libname, pkgname) {
  # plain R: start Python here (R/python.R); without an engine, load as R torch
  # does before install_torch()
  if (!.start_python(libname, pkgname)) return(.load_without_engine(topenv(), libname, pkgname))
  .Call(C_init, .invoke, .api_module)
  .Call(C_export_native)
  ns <- topenv()
  for (nm in c("tensor_get", "tensor_set", "tensor_repr", "node_get", "node_repr",
               "dtype_repr", "dtype_eq", "index", "index_put",
               "make_autograd_function", "apply_function", "ctx_get", "ctx_save",
               "ctx_save_for_forward", "dual_level_scope",
               "ctx_mark_dirty", "ctx_mark_non_differentiable", "set_grad_mode",
               "is_grad_enabled", "anomaly_scope", "scope_exit",
               "as_array", "generator_method", "bound_method", "nn_get", "nn_forward")) {
    assign(nm, .py_fn(nm), envir = .py)
  }
  .fill(.methods, .pointers("METHODS"))
  .fill(.method_policies, .External(C_call, .py_fn("_method_policies")))
  .Call(C_method_init, list2env(.closures(as.list(.methods), "method", ns)), .method_policies,
        .keep_attributes, ns, .py$tensor_get, .tensor_field)
  .fill(.binary, .pointers("BINARY_OPS"))
  .fill(.unary, .pointers("UNARY_OPS"))
  .register_operators(ns)  # (R/tensor.R)
  .fill(.math, .pointers("MATH"))
  .fill(.summary, .pointers("SUMMARY"))
  # torch_*() and friends: one R function per Python function, with R torch's
  # formals; its body one .External(C_frame_call, info) that reads the arguments
  # from the call's frame, the Python callable held in `info` (no lookup).
  fns <- .pointers("FUNCTIONS")
  fns <- fns[!vapply(names(fns), exists, TRUE, envir = ns, inherits = FALSE)]  # (written in R)
  list2env(.closures(fns, "function", ns, .names_of("INVISIBLE_FUNCTIONS")), ns)
  .nn_make_layers(ns)  # (R/nn.R)
  .make_schedulers(ns)  # (R/optim-lr_scheduler.R)
  .make_ignite(ns)  # (R/optim-ignite.R)
  .make_builtin(ns)  # (R/optim-builtin.R)
  .make_constraints(ns)  # (R/distributions-constraints.R)
  .register_compare_proxy()  # (R/compare.R)
  .keep_internal(ns, c(.internal_names, .names_of("INTERNAL_FUNCTIONS")))
}

# No engine yet (install_torch() not run): the namespace has every name it has
# with one (the functions made from Python's tables are listed in engine/exports,
# written by `rtorch-py build-r` and `install-r`), and each torch function stops,
# saying to run install_torch(); the installer's functions work.
.load_without_engine <- function(ns, libname, pkgname) {
  .keep_internal(ns)
  listed <- file.path(libname, pkgname, "engine", "exports")
  listed <- if (file.exists(listed)) readLines(listed, warn = FALSE) else character()
  for (nm in union(ls(ns), listed)) {
    if (nm %in% .installer_names) next
    defined <- exists(nm, envir = ns, inherits = FALSE)
    f <- if (defined) get(nm, envir = ns) else NULL
    if (defined && !is.function(f)) next  # C_call, ... (NULL without the engine)
    stub <- function(...) .engine_missing()
    if (is.function(f) && !is.primitive(f)) formals(stub) <- formals(f)
    environment(stub) <- ns
    assign(nm, stub, envir = ns)
  }
}

# The closures of Python callables `fns` (a named list; kind "function" or "method"),
# each with its formals and a body of one .External2(C_frame_call, info); a method's
# without the tensor, which C_method adds per access.
.closures <- function(fns, kind, ns, invisible_fns = character()) {
  shapes <- .closure_shapes(names(fns), kind)
  out <- vector("list", length(fns))
  for (i in seq_along(fns)) {
    out[[i]] <- .Call(C_closure, fns[[i]], shapes[[i]]$send_as, shapes[[i]]$positional,
                      shapes[[i]]$formals, names(fns)[[i]] %in% invisible_fns, ns,
                      quote(C_frame_call))
  }
  names(out) <- names(fns)
  out
}

# The shapes of the closures of `names` (rtorch_py/r/closures.py's function_shape; kind
# "layer": a built-in layer's generator, R/nn.R), their formals as a pairlist.
.closure_shapes <- function(names, kind) {
  shapes <- .External(C_call, .py_fn("_closures"), names, kind)
  formals <- lapply(parse(text = vapply(shapes, `[[`, "", "formals"), keep.source = FALSE),
                    function(e) as.pairlist(eval(e, baseenv())))
  for (i in seq_along(shapes)) shapes[[i]]["formals"] <- list(formals[[i]])
  shapes
}

# `x$name` of a Python object whose methods R calls (distributions, constraints, storages,
# generators, hooks: rtorch_py/r/api.py's BOUND): a method is a closure with the Python method's
# formals, made once per class and name, x added per access (C_bind); a field is NULL.
.bound <- new.env(parent = emptyenv())

.bound_method <- function(x, name) {
  f <- .Call(C_bound, .bound, x, name)
  if (is.null(f)) {  # (first asked: made and kept under the key C_bound reads)
    shape <- .External(C_call, .py$bound_method, x, name)
    f <- if (is.null(shape)) FALSE else .closure_of(shape)
    assign(paste0(class(x)[[1L]], "$", name), f, envir = .bound)
    if (is.function(f)) f <- .Call(C_bind, f, x)
  }
  if (is.function(f)) f
}

# The closure of a Python callable, its shape from rtorch_py/r/closures.py's bound_closure.
.closure_of <- function(shape) {
  formals <- as.pairlist(eval(str2lang(shape$formals), baseenv()))
  .Call(C_closure, shape$fn, shape$send_as, shape$positional, formals, shape$invisible,
        topenv(), quote(C_frame_call))
}

.onAttach <- function(libname, pkgname) {
  if (!.engine$running) {
    packageStartupMessage("torch: rtorch-py's Python engine is not installed yet: run ",
                          "install_torch(), then restart R.")
  }
}

# R torch's internal helpers, which its own code and tests call from inside the
# namespace (these, and the functions of Python's INTERNAL_FUNCTIONS table: R
# torch's unexported generated functions): moved to the namespace's imports
# environment (still found from inside, as R torch's unexported names are) before
# R reads the exports from the namespace by NAMESPACE's exportPattern.
.internal_names <- c(
  "Constraint", "is_dependent", "is_permutation", "cpp_tensor_is_undefined", "is_meta_device",
  "torch_dimname", "torch_dimname_list", "is_torch_dimname", "is_torch_dimname_list",
  paste0("constraint_", c("dependent", "boolean", "nonnegative_integer", "positive_integer",
                          "real", "real_vector", "positive", "greater_than", "greater_than_eq",
                          "less_than", "unit_interval", "interval", "half_open_interval",
                          "positive_definite", "lower_cholesky", "simplex")))

.keep_internal <- function(ns, names = .internal_names) {
  for (nm in intersect(names, ls(ns, all.names = TRUE))) {  # (no engine: none)
    assign(nm, get(nm, envir = ns, inherits = FALSE), envir = parent.env(ns))
    rm(list = nm, envir = ns)
  }
}

# A dict of the api module as a named list of external pointers.
.pointers <- function(dict) {
  .External(C_call, .Call(C_getattr, "_pointers"), dict)
}

.names_of <- function(set) {
  .External(C_call, .Call(C_getattr, "_names"), set)
}
