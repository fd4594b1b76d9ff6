# R torch's built-in optimizers. Each checks its settings as R torch does and
# steps through Python (private$kernel_step): one call per parameter group.

.check_positive <- function(value, what) {
  if (!is_optim_required(value) && any(value < 0)) .optim_error("Invalid ", what, ": ", value)
}

optim_sgd <- optimizer(
  "optim_sgd",
  initialize = function(params, lr = optim_required(), momentum = 0, dampening = 0,
                        weight_decay = 0, nesterov = FALSE) {
    .check_positive(lr, "learning rate")
    .check_positive(momentum, "momentum value")
    .check_positive(weight_decay, "weight_decay value")
    if (nesterov && (momentum <= 0 || dampening != 0)) {
      .optim_error("Nesterov momentum requires a momentum and zero dampening")
    }
    super$initialize(params, list(lr = lr, momentum = momentum, dampening = dampening,
                                  weight_decay = weight_decay, nesterov = nesterov))
  },
  step = function(closure = NULL) private$kernel_step("sgd", closure)
)

.check_adam <- function(lr, betas, eps, weight_decay) {
  .check_positive(lr, "learning rate")
  .check_positive(eps, "eps")
  if (betas[[1]] < 0 || betas[[1]] > 1) .optim_error("Invalid beta parameter at index 1")
  if (betas[[2]] < 0 || betas[[2]] > 1) .optim_error("Invalid beta parameter at index 2")
  .check_positive(weight_decay, "weight decay value")
}

optim_adam <- optimizer(
  "optim_adam",
  initialize = function(params, lr = 1e-3, betas = c(0.9, 0.999), eps = 1e-8,
                        weight_decay = 0, amsgrad = FALSE) {
    .check_adam(lr, betas, eps, weight_decay)
    super$initialize(params, list(lr = lr, betas = betas, eps = eps,
                                  weight_decay = weight_decay, amsgrad = amsgrad))
  },
  step = function(closure = NULL) private$kernel_step("adam", closure)
)

optim_adamw <- optimizer(
  "optim_adamw",
  initialize = function(params, lr = 1e-3, betas = c(0.9, 0.999), eps = 1e-8,
                        weight_decay = 1e-2, amsgrad = FALSE) {
    .check_adam(lr, betas, eps, weight_decay)
    super$initialize(params, list(lr = lr, betas = betas, eps = eps,
                                  weight_decay = weight_decay, amsgrad = amsgrad))
  },
  step = function(closure = NULL) private$kernel_step("adamw", closure)
)

optim_rmsprop <- optimizer(
  "optim_rmsprop",
  initialize = function(params, lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0,
                        momentum = 0, centered = FALSE) {
    .check_positive(lr, "learning rate")
    .check_positive(eps, "epsilon value")
    .check_positive(momentum, "momentum value")
    .check_positive(weight_decay, "weight_decay value")
    .check_positive(alpha, "alpha value")
    super$initialize(params, list(lr = lr, alpha = alpha, eps = eps,
                                  weight_decay = weight_decay, momentum = momentum,
                                  centered = centered))
  },
  step = function(closure = NULL) private$kernel_step("rmsprop", closure)
)

optim_adagrad <- optimizer(
  "optim_adagrad",
  initialize = function(params, lr = 1e-2, lr_decay = 0, weight_decay = 0,
                        initial_accumulator_value = 0, eps = 1e-10) {
    .check_positive(lr, "learning rate")
    .check_positive(lr_decay, "lr_decay value")
    .check_positive(weight_decay, "weight_decay value")
    .check_positive(initial_accumulator_value, "initial_accumulator_value value")
    .check_positive(eps, "epsilon value")
    super$initialize(params, list(lr = lr, lr_decay = lr_decay, weight_decay = weight_decay,
                                  initial_accumulator_value = initial_accumulator_value,
                                  eps = eps))
  },
  step = function(closure = NULL) private$kernel_step("adagrad", closure)
)

optim_adadelta <- optimizer(
  "optim_adadelta",
  initialize = function(params, lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0) {
    .check_positive(lr, "learning rate")
    if (rho < 0 || rho > 1) .optim_error("Invalid rho value: ", rho)
    .check_positive(eps, "epsilon value")
    .check_positive(weight_decay, "weight_decay value")
    super$initialize(params, list(lr = lr, rho = rho, eps = eps, weight_decay = weight_decay))
  },
  step = function(closure = NULL) private$kernel_step("adadelta", closure)
)

optim_asgd <- optimizer(
  "optim_asgd",
  initialize = function(params, lr = 1e-2, lambda = 1e-4, alpha = 0.75, t0 = 1e6,
                        weight_decay = 0) {
    .check_positive(lr, "learning rate")
    .check_positive(weight_decay, "weight_decay value")
    super$initialize(params, list(lr = lr, lambda = lambda, alpha = alpha, t0 = t0,
                                  weight_decay = weight_decay))
  },
  step = function(closure = NULL) private$kernel_step("asgd", closure)
)

optim_rprop <- optimizer(
  "optim_rprop",
  initialize = function(params, lr = 1e-2, etas = c(0.5, 1.2), step_sizes = c(1e-6, 50)) {
    .check_positive(lr, "learning rate")
    if (etas[[1]] <= 0 || etas[[1]] >= 1 || etas[[2]] <= 1) {
      .optim_error("Invalid eta values: ", etas[[1]], ", ", etas[[2]])
    }
    super$initialize(params, list(lr = lr, etas = etas, step_sizes = step_sizes))
  },
  step = function(closure = NULL) private$kernel_step("rprop", closure)
)

# L-BFGS keeps its history in Python; opt$state shows func_evals and n_iter
# for the first parameter, as R torch's does.
optim_lbfgs <- optimizer(
  "optim_lbfgs",
  initialize = function(params, lr = 1, max_iter = 20, max_eval = NULL,
                        tolerance_grad = 1e-7, tolerance_change = 1e-9, history_size = 100,
                        line_search_fn = NULL) {
    if (is.null(max_eval)) max_eval <- as.integer(max_iter * 5 / 4)
    super$initialize(params, list(lr = lr, max_iter = max_iter, max_eval = max_eval,
                                  tolerance_grad = tolerance_grad,
                                  tolerance_change = tolerance_change,
                                  history_size = history_size,
                                  line_search_fn = line_search_fn))
    if (length(self$param_groups) != 1) {
      .optim_error("LBFGS doesn't support per-parameter options (parameter groups)")
    }
    private$py <- .lbfgs_new(self$param_groups[[1]]$params,
                             self$param_groups[[1]][setdiff(names(self$param_groups[[1]]),
                                                            "params")])
  },
  step = function(closure) {
    if (missing(closure) || is.null(closure)) {
      .optim_error("optim_lbfgs needs a closure that recomputes the loss (and calls ",
                   "backward): opt$step(closure)")
    }
    out <- .lbfgs_step(private$py, closure, self$param_groups[[1]])
    self$state$set(self$param_groups[[1]]$params[[1]], out[[2]])
    out[[1]]
  },
  private = list(py = NULL)
)
