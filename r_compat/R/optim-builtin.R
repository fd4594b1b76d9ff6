# R torch's built-in optimizers, made at load (.onLoad) with the formals of Python's
# (rtorch_py/optim/optimizer.py, through .py_generators): each checks its settings as
# R torch does (.optim_check, from the optimizer's declaration) and steps through
# Python: one call per parameter group updates its parameters; their states stay in
# Python (State$.python()).

.make_builtin <- function(ns) {
  .py_generators(ns, "builtin", function(args, name) {
    bquote({
      settings <- mget(.(args[-1]))
      .optim_check(.(name), settings)
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

# R torch's error for the first check of optimizer `name`'s settings they fail (Python
# says which: rtorch_py/optim/optimizer.py declares them), its message a glue template
# ("{lr}") filled in as glue does, with as.character()
.optim_check <- function(name, settings) {
  failed <- .optim_failed_check(name, Filter(Negate(is_optim_required), settings))
  if (is.null(failed)) return(invisible())
  parts <- strsplit(failed[[1]], "[{}]")[[1]]  # (text, expression, text, ...)
  fill <- seq_along(parts) %% 2 == 0
  parts[fill] <- vapply(parts[fill], function(e) as.character(eval(str2lang(e), settings)), "")
  message <- paste(parts, collapse = "")
  if (failed[[2]] == "value_error") {
    rlang::abort(message, class = "value_error", call = call("value_error", failed[[1]]))
  }
  rlang::abort(message, call = str2lang(failed[[2]]))  # (R torch's cli_abort() in that call)
}

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
