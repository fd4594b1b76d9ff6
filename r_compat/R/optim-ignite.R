# R torch's ignite optimizers: libtorch's C++ optimizers there, Python ones
# here (rtorch_py/optim/ignite.py) that R's OptimizerIgnite holds. Their groups
# and state live in Python; `param_groups` reads and writes them, state_dict()
# gives them as R torch does (parameters numbered from 1).

OptimizerIgnite <- R6::R6Class(
  "OptimizerIgnite",
  inherit = Optimizer,
  lock_objects = FALSE,
  public = list(
    initialize = function(params, defaults) {
      self$defaults <- defaults
      if (is_torch_tensor(params)) params <- list(params)
      if (!is.list(params) || !length(params)) {
        .value_error("The `params` must have length > 0.")
      }
      groups <- if (.is_named_list(params[[1]])) params else list(list(params = params))
      first <- groups[[1]]
      settings <- modifyList(defaults, first[setdiff(names(first), "params")])
      .check_required(settings)
      # later groups take what they lack from the defaults, as in R torch
      required <- names(Filter(is_optim_required, defaults))
      private$py <- .ignite_new(private$.kind, first$params, settings,
                                modifyList(defaults, settings[required]))
      for (g in groups[-1]) self$add_param_group(g)
    },
    state_dict = function() .ignite_state_dict(private$py),
    load_state_dict = function(state_dict) {
      .ignite_load_state_dict(private$py, state_dict)
      invisible(self)
    },
    step = function(closure = NULL) {
      loss <- if (!is.null(closure)) with_enable_grad(closure())
      .ignite_step(private$py)
      loss
    },
    zero_grad = function() {
      .ignite_zero_grad(private$py)
      invisible(NULL)
    },
    add_param_group = function(param_group) {
      params <- param_group$params
      if (!is.list(params) || !all(vapply(params, is_torch_tensor, TRUE))) {
        .value_error("The `params` must be a list of tensors.")
      }
      .ignite_add_param_group(private$py, param_group)
      invisible(self)
    }
  ),
  active = list(
    param_groups = function(rhs) {
      if (!missing(rhs)) .ignite_set_param_groups(private$py, rhs)
      .ignite_param_groups(private$py)
    }
  ),
  private = list(
    py = NULL,
    .kind = NULL,
    deep_clone = function(name, value) {
      .value_error("OptimizerIgnite cannot be deep cloned")
    }
  )
)

optimizer_ignite <- function(name = NULL, ..., private = NULL, active = NULL,
                             parent_env = parent.frame()) {
  optimizer(name = c(name, "optim_ignite"), inherit = OptimizerIgnite, ...,
            private = private, active = active, parent_env = parent_env)
}

# optim_ignite_sgd() and the others, made when the package loads (R/bridge.R): their
# formals are the Python functions' (R torch's); the settings go to Python, which
# checks them.
.make_ignite <- function(ns) {
  .py_generators(ns, "ignite", function(args, name) {
    bquote(super$initialize(params, mget(.(args[-1]))))
  }, function(name, init) {
    optimizer_ignite(name, initialize = init,
                     private = list(.kind = sub("optim_ignite_", "", name, fixed = TRUE)))
  })
}

# R torch's internal helpers around its ignite optimizers (its tests call them)

# the same elements, in any order
is_permutation <- function(vec1, vec2) {
  length(vec1) == length(vec2) && identical(sort(vec1), sort(vec2))
}

# libtorch's undefined tensor (a state libtorch leaves unset)
cpp_tensor_is_undefined <- function(self) is_undefined_tensor(self)
