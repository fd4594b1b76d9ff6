# R torch's built-in optimizers, made at load (.onLoad) with the formals of Python's
# (rtorch_py/optim/optimizer.py, through .py_generators): each checks its settings as
# R torch does (.optim_checks, given them by name) and steps through Python: one call
# per parameter group updates its parameters; their states stay in Python
# (State$.python()).

.make_builtin <- function(ns) {
  .py_generators(ns, "builtin", function(args, name) {
    bquote({
      settings <- mget(.(args[-1]))
      do.call(.optim_checks[[.(name)]], settings)
      super$initialize(params, settings)
    })
  }, function(name, init) {
    optimizer(name, initialize = init,
              step = function(closure = NULL) {
                loss <- NULL
                if (!is.null(closure)) loss <- with_enable_grad(closure())
                state <- .subset2(.subset2(self, "state"), ".python")()  # (.subset2: no S3 lookups)
                kind <- private$kind
                for (g in .subset2(self, "param_groups")) .optim_step(kind, g, state)
                loss
              },
              private = list(kind = sub("optim_", "", name, fixed = TRUE)))
  })
}

.check_positive <- function(value, what) {
  if (!is_optim_required(value) && any(value < 0)) .optim_error("Invalid ", what, ": ", value)
}

.check_adam <- function(lr, betas, eps, weight_decay, amsgrad) {
  .check_positive(lr, "learning rate")
  .check_positive(eps, "eps")
  if (betas[[1]] < 0 || betas[[1]] > 1) .optim_error("Invalid beta parameter at index 1")
  if (betas[[2]] < 0 || betas[[2]] > 1) .optim_error("Invalid beta parameter at index 2")
  .check_positive(weight_decay, "weight decay value")
}

.optim_checks <- list(
  optim_sgd = function(lr, momentum, dampening, weight_decay, nesterov) {
    .check_positive(lr, "learning rate")
    .check_positive(momentum, "momentum value")
    .check_positive(weight_decay, "weight_decay value")
    if (nesterov && (momentum <= 0 || dampening != 0)) {
      .optim_error("Nesterov momentum requires a momentum and zero dampening")
    }
  },
  optim_adam = .check_adam,
  optim_adamw = .check_adam,
  optim_rmsprop = function(lr, alpha, eps, weight_decay, momentum, centered) {
    .check_positive(lr, "learning rate")
    .check_positive(eps, "epsilon value")
    .check_positive(momentum, "momentum value")
    .check_positive(weight_decay, "weight_decay value")
    .check_positive(alpha, "alpha value")
  },
  optim_adagrad = function(lr, lr_decay, weight_decay, initial_accumulator_value, eps) {
    .check_positive(lr, "learning rate")
    .check_positive(lr_decay, "lr_decay value")
    .check_positive(weight_decay, "weight_decay value")
    .check_positive(initial_accumulator_value, "initial_accumulator_value value")
    .check_positive(eps, "epsilon value")
  },
  optim_adadelta = function(lr, rho, eps, weight_decay) {
    .check_positive(lr, "learning rate")
    if (rho < 0 || rho > 1) .optim_error("Invalid rho value: ", rho)
    .check_positive(eps, "epsilon value")
    .check_positive(weight_decay, "weight_decay value")
  },
  optim_asgd = function(lr, lambda, alpha, t0, weight_decay) {
    .check_positive(lr, "learning rate")
    .check_positive(weight_decay, "weight_decay value")
  },
  optim_rprop = function(lr, etas, step_sizes) {
    .check_positive(lr, "learning rate")
    if (etas[[1]] <= 0 || etas[[1]] >= 1 || etas[[2]] <= 1) {
      .optim_error("Invalid eta values: ", etas[[1]], ", ", etas[[2]])
    }
  }
)

# L-BFGS keeps its history in Python; opt$state shows func_evals and n_iter
# for the first parameter, as R torch's does.
optim_lbfgs <- optimizer(
  "optim_lbfgs",
  initialize = function(params, lr = 1, max_iter = 20, max_eval = NULL,
                        tolerance_grad = 1e-7, tolerance_change = 1e-9, history_size = 100,
                        line_search_fn = NULL) {
    if (is.null(max_eval)) max_eval <- as.integer(max_iter * 5 / 4)
    super$initialize(params, mget(setdiff(names(formals()), "params")))  # (the settings)
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
