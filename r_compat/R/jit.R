# TorchScript, as R torch's jit_* functions (rtorch_py.jit underneath, through
# rtorch_py/r/jit_api.py): tracing R functions and modules into script functions
# and script modules, TorchScript archives both ways with PyTorch, jit_compile(),
# jit_ops, and ONNX export (jit_export_onnx(), which R torch lacks).
#
# A script_function is an R function (class "script_function") holding its
# Python ScriptFunction in attribute "ScriptFunction"; a script_module is an
# nn_module callable (class c("script_module", "nn_module")) over a Python
# ScriptModule. Arguments cross as: tensors, lists (TorchScript lists), named
# lists (dicts), jit_tuple() lists (tuples), jit_scalar() values (scalars).

# -- values ---------------------------------------------------------------

jit_scalar <- function(x) {
  if (length(x) != 1) .value_error("jit_scalar() needs a vector of length 1.")
  class(x) <- c("jit_scalar", class(x))
  x
}

jit_tuple <- function(x) {
  if (!is.list(x)) .value_error("jit_tuple() needs a list.")
  class(x) <- c("jit_tuple", setdiff(class(x), "jit_tuple"))
  x
}

# R values as the tracer and script functions take them.
.jit_to_py <- function(x) {
  if (inherits(x, "jit_tuple")) return(.jit_tuple_py(lapply(unclass(x), .jit_to_py)))
  if (inherits(x, "jit_scalar")) return(as.vector(unclass(x)))
  if (is.list(x) && !is.object(x)) return(lapply(x, .jit_to_py))
  x
}

# ... and back: a tuple that R made is a jit_tuple again.
.jit_from_py <- function(x) {
  if (inherits(x, "rtorch_jit_tuple")) return(jit_tuple(lapply(.jit_tuple_values(x),
                                                               .jit_from_py)))
  if (is.list(x) && !is.object(x)) return(lapply(x, .jit_from_py))
  x
}

# An R function as the tracer calls it (Python values in, Python values out).
.jit_traceable <- function(fn) {
  force(fn)
  function(...) .jit_to_py(do.call(fn, lapply(list(...), .jit_from_py)))
}

.jit_check_dots_unnamed <- function(dots) {
  if (!is.null(names(dots)) && any(nzchar(names(dots)))) {
    .value_error("Arguments in `...` must be passed by position, not name.")
  }
}

# -- script functions -------------------------------------------------------

.jit_function <- function(fn) {
  force(fn)
  f <- function(...) .jit_call(fn, lapply(list(...), .jit_to_py))
  class(f) <- "script_function"
  attr(f, "ScriptFunction") <- fn
  f
}

print.script_function <- function(x, ...) .print_text(x, "<script_function>\n")

`$.script_function` <- function(x, name) {
  fn <- attr(x, "ScriptFunction")
  switch(name,
    graph = .jit_graph_object(.jit_graph(fn)),
    save = function(filename) jit_save(x, filename),
    save_for_mobile = function(filename) jit_save_for_mobile(x, filename),
    ptr = fn,
    NULL)
}

.jit_graph_object <- function(str) structure(list(str = str), class = "script_method_graph")

print.script_method_graph <- function(x, ...) .print_text(x, x$str)

# -- tracing ---------------------------------------------------------------

jit_trace <- function(func, ..., strict = TRUE, respect_mode = TRUE) {
  dots <- list(...)
  .jit_check_dots_unnamed(dots)
  if (inherits(func, "nn_module")) {
    if (inherits(func, "nn_module_generator")) {
      .value_error("You must initialize the nn_module before tracing.")
    }
    return(jit_trace_module(func, forward = dots, strict = strict,
                            respect_mode = respect_mode))
  }
  if (!is.function(func) || is.primitive(func)) {
    .value_error("jit_trace needs a function or nn_module.")
  }
  .jit_function(.jit_trace_fn(.jit_traceable(func), lapply(dots, .jit_to_py), strict))
}

jit_trace_module <- function(mod, ..., strict = TRUE, respect_mode = TRUE) {
  inputs <- list(...)
  if (!inherits(mod, "nn_module")) .value_error("`mod` must be a `nn_module()`.")
  if (!is.logical(respect_mode) || length(respect_mode) != 1) {
    .value_error("`respect_mode` must be a logical(1).")
  }
  if (length(inputs) && (is.null(names(inputs)) || any(!nzchar(names(inputs))))) {
    .value_error("Arguments passed trough `...` must be named.")
  }
  if (any(c("evalforward", "trainforward") %in% names(inputs))) {
    .value_error("Methods `evalforward` and `trainforward` are reserved.")
  }
  methods <- list()
  for (name in names(inputs)) {
    method <- mod[[name]]
    if (!is.function(method)) {
      .value_error(sprintf("Method '%s' does not exist in `mod` and therefore can't be traced.",
                           name))
    }
    inp <- inputs[[name]]
    if (!is.list(inp) || inherits(inp, "jit_tuple")) inp <- list(inp)
    inputs[[name]] <- lapply(inp, .jit_to_py)
    methods[[name]] <- .jit_traceable(method)
  }
  py <- .jit_trace_module(.nn_py_of(mod), methods, inputs, strict, respect_mode)
  .jit_module(py)
}

# -- script modules ----------------------------------------------------------

nn_ScriptModule <- R6::R6Class(
  classname = "nn_ScriptModule",
  inherit = nn_PyModule,
  lock_objects = FALSE,
  public = list(
    .classes = c("script_module", "nn_module"),
    forward = function(...) .jit_call(.nn_py(self), lapply(list(...), .jit_to_py)),
    graph_for = function(...) self$graph,
    eval = function() {  # (R torch's script modules give their mode back)
      self$train(FALSE)
      self$training
    },
    save = function(path) {
      .jit_save(.nn_py(self), normalizePath(path, mustWork = FALSE))
      invisible(self)
    },
    save_for_mobile = function(path) {
      .jit_save_for_mobile(.nn_py(self), normalizePath(path, mustWork = FALSE))
      invisible(self)
    },
    ..ptr.. = function() .nn_py(self)
  ),
  active = list(
    graph = function() .jit_graph_object(.jit_graph(.nn_py(self)))
  )
)

.jit_module <- function(py) create_nn_module_callable(nn_ScriptModule$new(.py = py))

# A script module's traced or loaded methods (`m$testing(x)`) after what every
# module has (`$train()`, `$parameters`, ...: R's, not the archive's methods).
`$.script_module` <- function(x, name) {
  if (!exists(name, envir = attr(x, "module"), inherits = FALSE)) {
    method <- .jit_find_method(.nn_py_of(x), name)
    if (!is.null(method)) return(.jit_function(method))
  }
  NextMethod()
}

`[[.script_module` <- `$.script_module`

# -- files -----------------------------------------------------------------

jit_save <- function(obj, path, ...) .jit_write(.jit_save, obj, path)

# The lite interpreter's archive (PyTorch's torch.jit.mobile._load_for_lite_interpreter()
# loads it): jit_save()'s, with the traced code compiled to its bytecode.
jit_save_for_mobile <- function(obj, path, ...) .jit_write(.jit_save_for_mobile, obj, path)

.jit_write <- function(write, obj, path) {
  py <- .jit_py(obj)
  if (is.null(py)) {
    .value_error("Only `script_function` or `script_module` can be saved with `jit_save`.")
  }
  write(py, normalizePath(path, mustWork = FALSE))
  invisible(obj)
}

# The Python object a script function or module holds (NULL for anything else).
.jit_py <- function(obj) {
  if (inherits(obj, "script_function")) attr(obj, "ScriptFunction")
  else if (inherits(obj, "script_module")) .nn_py_of(obj)
}

jit_load <- function(path, ...) .jit_module(.jit_load(normalizePath(path, mustWork = TRUE)))

jit_serialize <- function(obj) {
  if (!inherits(obj, "script_module")) {
    .value_error("Only `script_module` can be serialized with `jit_serialize`.")
  }
  .jit_serialize(.nn_py_of(obj))
}

jit_unserialize <- function(obj) {
  if (!is.raw(obj)) .value_error("`obj` to be deserialized must be a raw vector.")
  .jit_module(.jit_unserialize(obj))
}

# -- compiled TorchScript ----------------------------------------------------

jit_compile <- function(source) .jit_compile(source)

`$.torch_compilation_unit` <- function(x, name) {
  f <- .jit_cu_get(x, name)
  if (is.null(f)) return(NULL)
  .jit_function(f)
}

print.torch_compilation_unit <- function(x, ...) .print_text(x, "<torch_compilation_unit>\n")

# -- jit_ops -----------------------------------------------------------------

jit_ops <- structure(list(), class = "torch_ops")

`$.torch_ops` <- function(x, y, ...) {
  if (length(x) == 0) return(structure(list(y), class = "torch_ops"))
  opname <- paste(x[[1]], y, sep = "::")
  op <- function(...) {
    .jit_ops_call(opname, lapply(list(...), .jit_to_py))
  }
  class(op) <- "torch_ops"
  attr(op, "opname") <- opname
  op
}

print.torch_ops <- function(x, ...) {
  if (is.function(x)) {
    cat(.jit_ops_info(attr(x, "opname")))
  } else if (length(x) == 1) {
    cat("<torch_ops>: Handle to namespace ", x[[1]], "\n")
  } else {
    cat("Object of class <torch_ops>\n")
  }
  invisible(x)
}

# -- ONNX --------------------------------------------------------------------

jit_export_onnx <- function(obj, path, ..., opset_version = 17L, input_names = NULL,
                            output_names = NULL, dynamic_batch = FALSE) {
  target <- .jit_py(obj)
  if (is.null(target)) {
    .value_error(paste("jit_export_onnx() exports a traced `script_function` or",
                       "`script_module` (made by jit_trace())"))
  }
  .jit_export_onnx(target, normalizePath(path, mustWork = FALSE), as.integer(opset_version),
                   input_names, output_names, dynamic_batch)
  invisible(obj)
}
