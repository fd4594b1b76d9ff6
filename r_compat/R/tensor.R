# torch_tensor objects: external pointers (class c("torch_tensor", "R7")) that
# hold the engine's Python Tensor. `$` gives methods (closures over x) and
# properties; operators and Math functions go straight to Python.

is_torch_tensor <- function(x) inherits(x, "torch_tensor")

`$.torch_tensor` <- function(x, name) {
  f <- .methods[[name]]
  if (!is.null(f)) return(function(...) .External(C_call, f, x, ...))
  f <- .imethods[[name]]
  if (!is.null(f)) return(function(...) invisible(.External(C_call, f, x, ...)))
  v <- .External(C_call, .py$tensor_get, x, name)
  if (inherits(v, "rtorch_missing_member")) return(.missing_member(name))
  v
}

.missing_member <- function(name) {
  function(...) {
    stop(sprintf("`%s` is not a method or field of a torch_tensor", name), call. = FALSE)
  }
}

`[[.torch_tensor` <- function(x, i) {
  if (!is.character(i)) stop("tensors are indexed with `[`; `[[` takes a field name")
  `$.torch_tensor`(x, i)
}

`$<-.torch_tensor` <- function(x, name, value) {
  .External(C_call, .py$tensor_set, x, name, value)
  x
}

`[[<-.torch_tensor` <- function(x, i, value) {
  .External(C_call, .py$tensor_set, x, i, value)
  x
}

print.torch_tensor <- function(x, n = 30, ...) {
  cat(.External(C_call, .py$tensor_repr, x, n), "\n", sep = "")
  invisible(x)
}

str.torch_tensor <- function(object, ...) {
  cat(as.character(object$dtype), " [", paste0("1:", dim(object), collapse = ", "), "]\n",
      sep = "")
}

# Operators: `x * 2`, `2 - x`, `-x`, `x == y`, `!m` ... one crossing each.
Ops.torch_tensor <- function(e1, e2) {
  if (missing(e2)) return(.External(C_call, .unary[[.Generic]], e1))
  f <- .binary[[.Generic]]
  if (is.null(f)) stop(sprintf("operator `%s` is not supported for tensors", .Generic))
  .External(C_call, f, e1, e2)
}

Math.torch_tensor <- function(x, ...) {
  f <- .math[[.Generic]]
  if (is.null(f)) stop(sprintf("`%s()` is not supported for tensors", .Generic))
  .External(C_call, f, x, ...)
}

Summary.torch_tensor <- function(..., na.rm = FALSE) {
  args <- list(...)
  if (length(args) != 1L) stop(sprintf("`%s()` takes a single tensor", .Generic))
  .External(C_call, .summary[[.Generic]], args[[1L]])
}

mean.torch_tensor <- function(x, ...) .External(C_call, .methods$mean, x, ...)

dim.torch_tensor <- function(x) x$shape

t.torch_tensor <- function(x) x$t()

length.torch_tensor <- function(x) prod(dim(x))

as_array <- function(x) UseMethod("as_array")
as_array.torch_tensor <- function(x) .External(C_call, .py$as_array, x)
as_array.default <- function(x) {
  stop(sprintf("as_array() expects a torch_tensor, got an object of class %s",
               paste(class(x), collapse = "/")))
}

as.array.torch_tensor <- function(x, ...) as_array(x)
as.matrix.torch_tensor <- function(x, ...) as.matrix(as_array(x))
as.vector.torch_tensor <- function(x, mode = "any") as.vector(as_array(x), mode)
as.numeric.torch_tensor <- function(x, ...) as.numeric(as_array(x))
as.double.torch_tensor <- function(x, ...) as.double(as_array(x))
as.integer.torch_tensor <- function(x, ...) as.integer(as_array(x))
as.logical.torch_tensor <- function(x, ...) as.logical(as_array(x))

# dtypes -------------------------------------------------------------------

`$.torch_dtype` <- function(x, name) {
  switch(name,
    is_floating_point = as.character(x) %in% c("Float", "Double"),
    .type = function() as.character(x),
    NULL
  )
}

print.torch_dtype <- function(x, ...) {
  cat(.External(C_call, .py$dtype_repr, x), "\n", sep = "")
  invisible(x)
}

as.character.torch_dtype <- function(x, ...) {
  sub("^torch_", "", .External(C_call, .py$dtype_repr, x))
}

Ops.torch_dtype <- function(e1, e2) {
  eq <- .External(C_call, .py$dtype_eq, e1, e2)
  switch(.Generic,
    `==` = eq,
    `!=` = !eq,
    stop(sprintf("operator `%s` is not defined for dtypes", .Generic))
  )
}

# autograd nodes (x$grad_fn) and hooks -------------------------------------

`$.autograd_node` <- function(x, name) .External(C_call, .py$node_get, x, name)

print.autograd_node <- function(x, ...) {
  cat(.External(C_call, .py$node_repr, x))
  invisible(x)
}

`$.torch_hook` <- function(x, name) {
  if (identical(name, "remove")) {
    return(function() invisible(.External(C_call, .py$hook_remove, x)))
  }
  NULL
}

print.torch_hook <- function(x, ...) {
  cat("<torch_hook>")
  invisible(x)
}

# A few environment queries R torch scripts use -----------------------------

torch_is_installed <- function() TRUE

cuda_is_available <- function() FALSE

backends_mps_is_available <- function() FALSE

torch_device <- function(type, index = NULL) {
  if (!identical(type, "cpu")) stop(sprintf("only the 'cpu' device exists here, got '%s'", type))
  "cpu"
}
