# What kind of object a value is (R torch's is_torch_*()), and how memory
# formats and quantization schemes print (their name, no newline, as R torch).

is_torch_dtype <- function(x) inherits(x, "torch_dtype")

is_torch_layout <- function(x) inherits(x, "torch_layout")

is_torch_memory_format <- function(x) inherits(x, "torch_memory_format")

is_torch_qscheme <- function(x) inherits(x, "torch_qscheme")

print.torch_memory_format <- function(x, ...) {
  cat(.External(C_call, .py$dtype_repr, x))
  invisible(x)
}

print.torch_qscheme <- print.torch_memory_format

Ops.torch_memory_format <- function(e1, e2) {
  if (!.Generic %in% c("==", "!=")) {
    stop(sprintf("`%s` is not defined for memory formats", .Generic), call. = FALSE)
  }
  same <- identical(.External(C_call, .py$dtype_repr, e1), .External(C_call, .py$dtype_repr, e2))
  if (.Generic == "==") same else !same
}
