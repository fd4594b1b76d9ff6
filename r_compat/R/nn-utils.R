# nn_utils_*: packed sequences (Python objects R reads with `$`, positions
# 1-based) and R torch's weight normalisation helper, an R6 class over the
# Python one (rtorch_py/nn/utils.py) acting on a module's Python side.

`$.PackedSequence` <- function(x, name) .packed_sequence_get(x, name)

print.PackedSequence <- function(x, ...) .print_text(x, "<PackedSequence>\n")

nn_utils_weight_norm <- R6::R6Class(
  classname = "nn_utils_weight_norm",
  lock_objects = FALSE,
  public = list(
    name = NULL,
    dim = NULL,
    initialize = function(name, dim) {
      self$name <- name
      self$dim <- if (is.null(dim)) -1 else dim
      private$py <- .weight_norm_new(name, self$dim)
    },
    compute_weight = function(module, name = NULL, dim = NULL) {
      .weight_norm_call(private$py, "compute_weight", .nn_py_of(module), name, dim)
    },
    apply = function(module, name = NULL, dim = NULL) {
      .weight_norm_call(private$py, "apply", .nn_py_of(module), name, dim)
      invisible(module)
    },
    call = function(module) {
      .weight_norm_call(private$py, "call", .nn_py_of(module))
      invisible(module)
    },
    recompute = function(module) {
      self$call(module)
    },
    remove = function(module, name = NULL) {
      .weight_norm_call(private$py, "remove", .nn_py_of(module), name)
      invisible(module)
    }
  ),
  private = list(py = NULL)
)
