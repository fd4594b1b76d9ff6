# What kind of object a value is (R torch's is_torch_*()); memory formats and
# quantization schemes print, and memory formats compare, as layouts (R/tensor.R).

is_torch_dtype <- function(x) inherits(x, "torch_dtype")

is_torch_layout <- function(x) inherits(x, "torch_layout")

is_torch_memory_format <- function(x) inherits(x, "torch_memory_format")

is_torch_qscheme <- function(x) inherits(x, "torch_qscheme")

print.torch_memory_format <- print.torch_layout

print.torch_qscheme <- print.torch_layout

Ops.torch_memory_format <- Ops.torch_layout

# A dim's name and a list of them (R torch's internal torch_dimname() and
# torch_dimname_list(), what its generated code passes to libtorch as a Dimname and a
# DimnameList): a name is an identifier (or "*", any name), as libtorch checks it.
torch_dimname <- function(name) {
  name <- as.character(name)
  if (length(name) != 1L || !grepl("^([A-Za-z_][A-Za-z0-9_]*|\\*)$", name)) {
    .runtime_error(sprintf(paste0("Invalid name: a valid identifier contains only digits, ",
                                  "alphabetical characters and/or underscore and starts with ",
                                  "a non-digit. got: '%s'."), paste(name, collapse = ", ")))
  }
  structure(list(name = name), class = "torch_dimname")
}

torch_dimname_list <- function(names) {
  names <- vapply(as.list(names), function(n) torch_dimname(n)$name, "")
  structure(list(names = names), class = "torch_dimname_list")
}

as.character.torch_dimname <- function(x, ...) x$name

as.character.torch_dimname_list <- function(x, ...) x$names

is_torch_dimname <- function(x) inherits(x, "torch_dimname")

is_torch_dimname_list <- function(x) inherits(x, "torch_dimname_list")

print.torch_dimname <- function(x, ...) {
  print(x$name)
  invisible(x)
}

print.torch_dimname_list <- function(x, ...) {
  print(x$names)
  invisible(x)
}
