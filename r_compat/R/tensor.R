# torch_tensor objects: external pointers (class c("torch_tensor", "R7")) that
# hold the engine's Python Tensor. `$` gives methods (closures over x) and
# properties; operators and Math functions go straight to Python.

is_torch_tensor <- function(x) inherits(x, "torch_tensor")

# a method's closure over x, or a field's value (src/calls.c; .tensor_field
# for the fields R finishes)
`$.torch_tensor` <- function(x, name) .External(C_method, x, name)

.tensor_field <- function(x, name) {
  v <- .External(C_call, .py$tensor_get, x, name)
  if (inherits(v, "rtorch_missing_member")) return(.missing_member(name))
  if (identical(name, "device")) return(torch_device(v))
  if (identical(name, "names") && is.list(v)) return(as.character(unlist(v)))  # dim names
  v
}

# x$detach() and x$clone() keep x's R attributes (nn_parameter's and nn_buffer's
# classes), as R torch's do, and the engine's parameter / buffer mark with them.
.keep_attributes <- function(out, x) {
  a <- attributes(x)
  if (length(a) == 1L && length(a$class) == 2L) return(out)
  if (inherits(x, "nn_parameter")) .nn_mark(out, "parameter", out$requires_grad)
  if (inherits(x, "nn_buffer")) .nn_mark(out, "buffer", !isFALSE(attr(x, "persistent")))
  attributes(out) <- a
  out
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

`[[<-.torch_tensor` <- `$<-.torch_tensor`

print.torch_tensor <- function(x, n = 30, ...) {
  .print_text(x, .External(C_call, .py$tensor_repr, x, n), "\n")
}

# A print method's end: the text (its parts pasted) shown, x returned invisibly.
.print_text <- function(x, ...) {
  cat(..., sep = "")
  invisible(x)
}

str.torch_tensor <- function(object, ...) {
  cat(as.character(object$dtype), " [", paste0("1:", dim(object), collapse = ", "), "]\n",
      sep = "")
}

# Operators: `x * 2`, `2 - x`, `-x`, `x == y`, `!m` ... one crossing each. Each
# operator of the tables has an S3 method of its own (`*.torch_tensor`), its
# Python function held in its body: R's dispatch finds it before Ops.torch_tensor
# and it has nothing to look up. Ops.torch_tensor answers the others.
.register_operators <- function(ns) {
  for (op in union(names(.binary), names(.unary))) {
    unary <- .unary[[op]]
    binary <- .binary[[op]]
    body <- if (is.null(binary)) {
      bquote(.External(.(C_call), .(unary), e1))
    } else if (is.null(unary)) {
      bquote(.External(.(C_call), .(binary), e1, e2))
    } else {
      bquote(if (missing(e2)) .External(.(C_call), .(unary), e1)
             else .External(.(C_call), .(binary), e1, e2))
    }
    f <- function(e1, e2) NULL
    body(f) <- body
    environment(f) <- ns
    registerS3method(op, "torch_tensor", f, envir = ns)
  }
}

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

# sum(x), max(x, y), prod(x, dim = 1): each tensor reduced (along `dim` when one
# tensor is given), then the results combined, as R torch does.
Summary.torch_tensor <- function(..., na.rm = FALSE) {
  if (na.rm) stop("Torch tensors do not have NAs!", call. = FALSE)
  f <- .summary[[.Generic]]
  if (is.null(f)) stop(sprintf("`%s()` is not supported for tensors", .Generic), call. = FALSE)
  args <- list(...)
  opts <- if (is.null(names(args))) logical(length(args)) else names(args) != ""
  if (sum(!opts) == 1L) {
    if (!any(opts)) return(.External(C_call, f, args[[1]]))
    return(do.call(get(paste0("torch_", .Generic)), args))  # (R matches the options given)
  }
  if (any(opts)) {
    stop(sprintf("`%s()` takes `%s` only with a single tensor", .Generic,
                 names(args)[opts][1]), call. = FALSE)
  }
  parts <- lapply(args, function(a) .External(C_call, f, torch_tensor(a)))
  Reduce(.summary_combine[[.Generic]], parts)
}

.summary_combine <- list(
  sum = `+`, prod = `*`, any = `|`, all = `&`,
  max = function(x, y) torch_maximum(x, y), min = function(x, y) torch_minimum(x, y)
)

# R torch's formals (`...` takes what it ignores); the method's arguments by position
mean.torch_tensor <- function(x, dim, keepdim = FALSE, na.rm = FALSE, ...) {
  if (na.rm) .value_error("Torch tensors do not have NAs!")
  if (missing(dim)) .External(C_call, .methods$mean, x)
  else .External(C_call, .methods$mean, x, dim, keepdim)
}

dim.torch_tensor <- function(x) x$shape

t.torch_tensor <- function(x) x$t()

length.torch_tensor <- function(x) prod(dim(x))

as_array <- function(x) UseMethod("as_array")
as_array.torch_tensor <- function(x) .External(C_call, .py$as_array, x)
# The tensor shares the R vector's memory, as R torch's does: the vector goes to
# Python untouched (boxed), not as the copy other arguments become.
torch_tensor_from_buffer <- function(buffer, shape, dtype = "float") {
  if (!is.atomic(buffer) || is.character(buffer)) {
    stop("`buffer` must be a numeric, integer, logical, raw or complex vector", call. = FALSE)
  }
  .tensor_from_buffer(.Call(C_box, buffer), shape, dtype)
}

# bit64's integer64 (the int64 values' bits in a double vector), as R torch gives them
as.integer64.torch_tensor <- function(x, keep.names = FALSE, ...) {
  out <- .int64_bits(x)
  class(out) <- if (is.null(dim(out))) "integer64" else c(class(out), "integer64")
  out
}

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

# head()/tail(): the first or last n slices along the first dim (sparse tensors too)
head.torch_tensor <- function(x, n = 6L, ...) .slices(x, n, from_end = FALSE)

tail.torch_tensor <- function(x, n = 6L, ...) .slices(x, n, from_end = TRUE)

.slices <- function(x, n, from_end) {
  len <- x$size(1)
  n <- if (n < 0) max(len + n, 0) else min(n, len)
  torch_index_select(x, 1L, torch_tensor(seq_len(n) + if (from_end) len - n else 0,
                                         dtype = torch_long()))
}

# layouts (x$layout, torch_strided(), torch_sparse_coo()), memory formats and
# quantization schemes print as R torch's do (their name, no newline), and
# compare by it
print.torch_layout <- function(x, ...) .print_text(x, .External(C_call, .py$dtype_repr, x))

Ops.torch_layout <- function(e1, e2) {
  if (!.Generic %in% c("==", "!=")) {
    what <- if (inherits(e1, "torch_layout") || inherits(e2, "torch_layout")) "layouts" else
      "memory formats"
    stop(sprintf("`%s` is not defined for %s", .Generic, what), call. = FALSE)
  }
  same <- identical(.External(C_call, .py$dtype_repr, e1), .External(C_call, .py$dtype_repr, e2))
  if (.Generic == "==") same else !same
}

# dtypes -------------------------------------------------------------------

`$.torch_dtype` <- function(x, name) {
  switch(name,
    is_floating_point = .dtype_is_floating_point(x),
    .type = function() as.character(x),
    NULL
  )
}

`$.torch_storage` <- .bound_method

as.complex.torch_tensor <- function(x, ...) as.complex(as_array(x))

print.torch_dtype <- function(x, ...) .print_text(x, .External(C_call, .py$dtype_repr, x), "\n")

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

print.autograd_node <- function(x, ...) .print_text(x, .External(C_call, .py$node_repr, x))

`$.torch_hook` <- .bound_method

print.torch_hook <- function(x, ...) .print_text(x, "<torch_hook>")

# A few environment queries R torch scripts use -----------------------------

# A device: R torch's torch_device (`$type`, `$index`, printed as torch_device(type='cpu')).
# It is its type underneath ("cuda"), which is what the engine receives: any of
# libtorch's device types can be named, tensors live on the cpu or meta device
# (the engine refuses the others as libtorch without them does).
torch_device <- function(type, index = NULL) {
  if (inherits(type, "torch_device")) return(type)
  if (grepl(":", type, fixed = TRUE)) {
    if (!is.null(index)) {
      .value_error(sprintf("type %s should not include any index because index was passed explicitly.",
                           type))
    }
    index <- as.integer(strsplit(type, ":", fixed = TRUE)[[1]][2])
    type <- strsplit(type, ":", fixed = TRUE)[[1]][1]
  }
  type <- .External(C_call, .py_fn("device_type"), type)
  structure(type, index = if (!is.null(index)) as.integer(index), class = "torch_device")
}

is_torch_device <- function(x) inherits(x, "torch_device")

is_meta_device <- function(x) x$type == "meta"  # (R torch's internal helper)

`$.torch_device` <- function(x, name) {
  switch(name, type = as.character(unclass(x)), index = attr(x, "index"), NULL)
}

print.torch_device <- function(x, ...) {
  idx <- attr(x, "index")
  # R torch's cat(s, "\n"): a space before the newline
  cat(paste0("torch_device(type='", unclass(x)[1], "'", if (!is.null(idx)) paste0(", index=", idx),
             ")"), "\n")
  invisible(x)
}

as.character.torch_device <- function(x, ...) {
  idx <- attr(x, "index")
  paste0(unclass(x)[1], if (!is.null(idx)) paste0(":", idx))
}
