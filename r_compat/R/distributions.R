# Distributions (distr_normal() and the others): Python objects
# (rtorch_py/distributions.py) whose R class is R torch's (torch_Normal, ...,
# torch_Distribution). `$` gives a method as a function, or a field's value.

`$.torch_Distribution` <- function(x, name) {
  if (.distribution_has_method(x, name)) {
    return(function(...) .distribution_call(x, name, ...))
  }
  .distribution_get(x, name)
}

`[[.torch_Distribution` <- `$.torch_Distribution`

print.torch_Distribution <- function(x, ...) .print_text(x, class(x)[[1]], " ()")
