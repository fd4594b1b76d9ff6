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
      for (nm in names(settings)) {
        if (is_optim_required(settings[[nm]])) {
          .optim_error("parameter group didn't specify a value of required optimization ",
                       "parameter ", nm)
        }
      }
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

optim_ignite_sgd <- optimizer_ignite(
  "optim_ignite_sgd",
  initialize = function(params, lr = optim_required(), momentum = 0, dampening = 0,
                        weight_decay = 0, nesterov = FALSE) {
    super$initialize(params, list(lr = lr, momentum = momentum, dampening = dampening,
                                  weight_decay = weight_decay, nesterov = nesterov))
  },
  private = list(.kind = "sgd")
)

optim_ignite_adam <- optimizer_ignite(
  "optim_ignite_adam",
  initialize = function(params, lr = 1e-3, betas = c(0.9, 0.999), eps = 1e-8,
                        weight_decay = 0, amsgrad = FALSE) {
    super$initialize(params, list(lr = lr, betas = betas, eps = eps,
                                  weight_decay = weight_decay, amsgrad = amsgrad))
  },
  private = list(.kind = "adam")
)

optim_ignite_adamw <- optimizer_ignite(
  "optim_ignite_adamw",
  initialize = function(params, lr = 1e-3, betas = c(0.9, 0.999), eps = 1e-8,
                        weight_decay = 1e-2, amsgrad = FALSE) {
    super$initialize(params, list(lr = lr, betas = betas, eps = eps,
                                  weight_decay = weight_decay, amsgrad = amsgrad))
  },
  private = list(.kind = "adamw")
)

optim_ignite_rmsprop <- optimizer_ignite(
  "optim_ignite_rmsprop",
  initialize = function(params, lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0,
                        momentum = 0, centered = FALSE) {
    super$initialize(params, list(lr = lr, alpha = alpha, eps = eps,
                                  weight_decay = weight_decay, momentum = momentum,
                                  centered = centered))
  },
  private = list(.kind = "rmsprop")
)

optim_ignite_adagrad <- optimizer_ignite(
  "optim_ignite_adagrad",
  initialize = function(params, lr = 1e-2, lr_decay = 0, weight_decay = 0,
                        initial_accumulator_value = 0, eps = 1e-10) {
    super$initialize(params, list(lr = lr, lr_decay = lr_decay, weight_decay = weight_decay,
                                  initial_accumulator_value = initial_accumulator_value,
                                  eps = eps))
  },
  private = list(.kind = "adagrad")
)

# R torch's internal helpers around its ignite optimizers (its tests call them)

# the same elements, in any order
is_permutation <- function(vec1, vec2) {
  length(vec1) == length(vec2) && identical(sort(vec1), sort(vec2))
}

# libtorch's undefined tensor (a state libtorch leaves unset)
cpp_tensor_is_undefined <- function(self) is_undefined_tensor(self)
