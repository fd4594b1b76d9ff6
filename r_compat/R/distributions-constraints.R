# The distributions' constraints as R torch has them inside its namespace (not
# exported): R6 objects whose check(value) says, element by element (or event by
# event), whether value lies in the region. The engine's distributions check
# their own arguments in Python (rtorch_py/distributions.py); these are the R
# objects R torch's internal code and tests call.

Constraint <- R6::R6Class(
  "torch_Constraint",
  lock_objects = FALSE,
  public = list(
    check = function(value) .not_implemented_error("check() is not implemented for this constraint"),
    print = function() cat(class(self))
  )
)

# A constraint with bounds prints them after each of its classes, as R torch does
.bounded_print <- function(self, bounds, prefix = TRUE) {
  shown <- paste0("(", paste0(names(bounds), "=", unlist(bounds), collapse = ", "), ")")
  cat(if (prefix) paste0(class(self), ": ", shown) else shown)
}

.Dependent <- R6::R6Class(
  "torch_Dependent",
  inherit = Constraint,
  lock_objects = FALSE,
  public = list(
    check = function(x) .value_error("Cannot determine validity of dependent constraint")
  )
)

is_dependent <- function(object) inherits(object, "torch_Dependent")

# A base constraint over the last reinterpreted_batch_ndims dims taken as one event
.IndependentConstraint <- R6::R6Class(
  "torch_IndependentConstraint",
  inherit = Constraint,
  lock_objects = FALSE,
  public = list(
    initialize = function(base_constraint, reinterpreted_batch_ndims) {
      self$base_constraint <- base_constraint
      self$reinterpreted_batch_ndims <- reinterpreted_batch_ndims
    },
    check = function(value) {
      ok <- self$base_constraint$check(value)
      n <- self$reinterpreted_batch_ndims
      if (ok$dim() < n) {
        needed <- (if (is.null(self$base_constraint$event_dim)) 0 else
          self$base_constraint$event_dim) + n
        .value_error(sprintf("Expected value$dim() >= %d but got %d", needed, value$dim()))
      }
      ok$reshape(c(head(ok$shape, ok$dim() - n), -1))$all(dim = -1)
    }
  )
)

.Boolean <- R6::R6Class(
  "torch_Boolean",
  inherit = Constraint,
  lock_objects = FALSE,
  public = list(check = function(value) (value == 0) | (value == 1))
)

.IntegerGreaterThan <- R6::R6Class(
  "torch_IntegerGreaterThan",
  inherit = Constraint,
  lock_objects = FALSE,
  public = list(
    lower_bound = NULL,
    initialize = function(lower_bound) self$lower_bound <- lower_bound,
    check = function(value) (value %% 1 == 0) & (value >= self$lower_bound),
    print = function() .bounded_print(self, list(lower_bound = self$lower_bound))
  )
)

.Real <- R6::R6Class(
  "torch_Real",
  inherit = Constraint,
  lock_objects = FALSE,
  public = list(check = function(value) !torch_isnan(value))
)

.GreaterThan <- R6::R6Class(
  "torch_GreaterThan",
  inherit = Constraint,
  lock_objects = FALSE,
  public = list(
    lower_bound = NULL,
    initialize = function(lower_bound) self$lower_bound <- lower_bound,
    check = function(value) self$lower_bound < value,
    print = function() .bounded_print(self, list(lower_bound = self$lower_bound))
  )
)

.GreaterThanEq <- R6::R6Class(
  "torch_GreaterThanEq",
  inherit = Constraint,
  lock_objects = FALSE,
  public = list(
    lower_bound = NULL,
    initialize = function(lower_bound) self$lower_bound <- lower_bound,
    check = function(value) self$lower_bound <= value,
    print = function() .bounded_print(self, list(lower_bound = self$lower_bound))
  )
)

# value < upper_bound, as its name, PyTorch's less_than and R torch's own test say
# (R torch's source compares upper_bound < value, a slip its test catches)
.LessThan <- R6::R6Class(
  "torch_LessThan",
  inherit = Constraint,
  lock_objects = FALSE,
  public = list(
    upper_bound = NULL,
    initialize = function(upper_bound) self$upper_bound <- upper_bound,
    check = function(value) value < self$upper_bound,
    print = function() .bounded_print(self, list(upper_bound = self$upper_bound))
  )
)

# [lower_bound, upper_bound]
.Interval <- R6::R6Class(
  "torch_Interval",
  inherit = Constraint,
  lock_objects = FALSE,
  public = list(
    lower_bound = NULL,
    upper_bound = NULL,
    initialize = function(lower_bound, upper_bound) {
      self$lower_bound <- lower_bound
      self$upper_bound <- upper_bound
    },
    check = function(value) (self$lower_bound <= value) & (value <= self$upper_bound),
    print = function() .bounded_print(self, list(lower_bound = self$lower_bound,
                                                 upper_bound = self$upper_bound), FALSE)
  )
)

# [lower_bound, upper_bound)
.HalfOpenInterval <- R6::R6Class(
  "torch_HalfOpenInterval",
  inherit = Constraint,
  lock_objects = FALSE,
  public = list(
    lower_bound = NULL,
    upper_bound = NULL,
    initialize = .Interval$public_methods$initialize,
    check = function(value) (self$lower_bound <= value) & (value < self$upper_bound),
    print = .Interval$public_methods$print
  )
)

# Matrices (the last two dims) with a Cholesky factor: libtorch's info is 0
.PositiveDefinite <- R6::R6Class(
  "torch_PositiveDefinite",
  inherit = Constraint,
  public = list(check = function(value) linalg_cholesky_ex(value)$info$eq(0)$unsqueeze(1))
)

# Lower-triangular matrices with a positive diagonal
.LowerCholesky <- R6::R6Class(
  "torch_LowerCholesky",
  inherit = Constraint,
  public = list(
    check = function(value) {
      flat <- c(head(value$shape, -2), -1)
      lower <- (value$tril() == value)$view(flat)$min(-1)[[1]]
      positive <- (value$diagonal(dim1 = -2, dim2 = -1) > 0)$min(-1)[[1]]
      lower & positive
    }
  )
)

.Simplex <- R6::R6Class(
  "torch_Simplex",
  inherit = Constraint,
  public = list(
    event_dim = 1,
    check = function(value) {
      torch_all(value >= 0, dim = -1) && ((value$sum(dim = -1) - 1)$abs() < 1e-6)
    }
  )
)

constraint_dependent <- .Dependent$new()
constraint_boolean <- .Boolean$new()
constraint_nonnegative_integer <- .IntegerGreaterThan$new(0)
constraint_positive_integer <- .IntegerGreaterThan$new(1)
constraint_real <- .Real$new()
constraint_real_vector <- .IndependentConstraint$new(constraint_real, 1)
constraint_positive <- .GreaterThan$new(0)
constraint_greater_than <- .GreaterThan
constraint_greater_than_eq <- .GreaterThanEq
constraint_less_than <- .LessThan
constraint_unit_interval <- .Interval$new(0, 1)
constraint_interval <- .Interval
constraint_half_open_interval <- .HalfOpenInterval
constraint_positive_definite <- .PositiveDefinite$new()
constraint_lower_cholesky <- .LowerCholesky$new()
constraint_simplex <- .Simplex$new()
