# Distributions (distr_normal() and the others): Python objects
# (rtorch_py/distributions.py) whose R class is R torch's (torch_Normal, ...,
# torch_Distribution). `$` gives a method as a function (R/bridge.R), or a field's value.

`$.torch_Distribution` <- function(x, name) {
  f <- .bound_method(x, name)
  if (is.null(f)) .distribution_get(x, name) else f
}

`[[.torch_Distribution` <- `$.torch_Distribution`

print.torch_Distribution <- function(x, ...) .print_text(x, class(x)[[1]], " ()")
