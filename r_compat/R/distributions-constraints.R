# The distributions' constraints as R torch has them inside its namespace (not
# exported): Python's (rtorch_py/distributions.py, the distributions' own), with
# R torch's classes (torch_Real, torch_Constraint, R6). `$` gives a method as a
# function, or a field (R/distributions.R); the classes taking bounds are
# generators, as R6's: constraint_less_than$new(1).

`$.torch_Constraint` <- function(x, name) `$.torch_Distribution`(x, name)

`[[.torch_Constraint` <- `$.torch_Constraint`

print.torch_Constraint <- function(x, ...) .print_text(x, .distribution_call(x, "r_print"))

is_dependent <- function(object) inherits(object, "torch_Dependent")

# Made when the package loads (R/bridge.R), from Python's table.
.make_constraints <- function(ns) {
  made <- .constraints()
  for (nm in names(made)) {
    x <- made[[nm]]
    if (is.list(x)) x <- list(new = .closure_of(x))  # (a class: its constructor's shape)
    assign(nm, x, envir = ns)
  }
}
