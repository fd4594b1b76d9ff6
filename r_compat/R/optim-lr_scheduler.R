# Learning-rate schedulers as R torch defines them: R6 objects that change
# numbers in optimizer$param_groups. lr_scheduler() defines new ones in R from a
# get_lr() method; the built-in ones are Python's (see PyScheduler below).

LRScheduler <- R6::R6Class(
  "LRScheduler",
  lock_objects = FALSE,
  public = list(
    initialize = function(optimizer = NULL, last_epoch = -1, verbose = FALSE) {
      .check_optimizer(optimizer)
      self$optimizer <- optimizer
      if (last_epoch == -1) {
        optimizer$param_groups <- lapply(optimizer$param_groups, function(g) {
          if (is.null(g[["initial_lr"]])) g[["initial_lr"]] <- g[["lr"]]
          g
        })
      } else if (any(vapply(optimizer$param_groups, function(g) is.null(g[["initial_lr"]]),
                            logical(1)))) {
        .optim_error("param 'initial_lr' is not specified in param_groups when resuming ",
                     "an optimizer")
      }
      self$base_lrs <- vapply(optimizer$param_groups, function(g) g[["initial_lr"]], numeric(1))
      self$last_epoch <- last_epoch
      self$verbose <- verbose
      self$step()
    },
    get_lr = function() .optim_error("a scheduler must define get_lr()"),
    get_last_lr = function() self$.last_lr,
    print_lr = function(is_verbose, group, lr) {
      if (is_verbose) message(sprintf("Adjusting learning rate of group %s to %.4f", group, lr))
    },
    step = function() {
      self$last_epoch <- self$last_epoch + 1
      values <- self$get_lr()
      for (i in seq_along(self$optimizer$param_groups)) {
        self$optimizer$param_groups[[i]]$lr <- values[[i]]
        self$print_lr(self$verbose, i, values[[i]])
      }
      self$.last_lr <- vapply(self$optimizer$param_groups, function(g) g$lr, numeric(1))
      invisible(self)
    },
    state_dict = function() .scheduler_fields(self),
    load_state_dict = function(state_dict) {
      for (nm in names(state_dict)) self[[nm]] <- state_dict[[nm]]
      invisible(self)
    }
  )
)

.check_optimizer <- function(optimizer) {
  if (!is_optimizer(optimizer)) {
    .optim_error(paste(class(optimizer), collapse = "/"), " is not an optimizer; give ",
                 "the optimizer whose learning rate to schedule")
  }
}

# The scheduler's settings and counters: its fields minus the optimizer and functions.
.scheduler_fields <- function(self) {
  out <- list()
  for (nm in ls(self, all.names = TRUE)) {
    if (nm %in% c("optimizer", ".__enclos_env__", ".__active__")) next
    v <- get(nm, envir = self)
    if (!is.function(v) && !is.environment(v)) out[nm] <- list(v)
  }
  out
}

lr_scheduler <- function(classname = NULL, inherit = LRScheduler, ...,
                         parent_env = parent.frame()) {
  members <- list(...)  # (`private =` and `active =` lists among them, taken as R6 takes them)
  .torch_class(classname, inherit, members[setdiff(names(members), c("private", "active"))],
               members$private, members$active, parent_env, "scheduler",
               c(classname, "lr_scheduler"))
}

# R torch's built-in schedulers: Python's (rtorch_py/optim/schedulers.py, their
# formulas there), over a mirror of the optimizer's groups. Each call sends the
# groups' settings to Python and writes back those the scheduler changed
# (rtorch_py/r/optim_api.py); the scheduler's fields are active bindings to it.
PyScheduler <- R6::R6Class(
  "PyScheduler",
  inherit = LRScheduler,
  lock_objects = FALSE,
  public = list(
    initialize = function(optimizer, ...) {
      .check_optimizer(optimizer)
      self$optimizer <- optimizer
      out <- .sched_new(private$kind, optimizer$param_groups, optimizer$defaults, ...)
      private$py <- out[[1]]
      private$update(out[-1])
      for (nm in unlist(.sched_fields(private$py))) private$bind(nm)
    },
    step = function(...) {
      private$update(.sched_step(private$py, self$optimizer$param_groups, ...))
      invisible(self)
    },
    get_lr = function() .sched_lrs(private$py, self$optimizer$param_groups, "get_lr"),
    get_last_lr = function() .sched_lrs(private$py, self$optimizer$param_groups, "get_last_lr"),
    state_dict = function() .sched_state_dict(private$py),
    load_state_dict = function(state_dict) {
      .sched_load_state_dict(private$py, state_dict)
      invisible(self)
    }
  ),
  private = list(
    py = NULL,
    # out: the settings changed per group, and the messages to give
    update = function(out) {
      groups <- self$optimizer$param_groups
      for (i in seq_along(out[[1]])) {
        changed <- out[[1]][[i]]
        for (nm in names(changed)) groups[[i]][nm] <- list(changed[[nm]])
      }
      self$optimizer$param_groups <- groups
      for (m in out[[2]]) message(m)
    },
    bind = function(name) {
      py <- private$py
      makeActiveBinding(name, function(value) {
        if (missing(value)) .sched_field(py, name) else .sched_field(py, name, value)
      }, self)
    }
  )
)

# Each built-in's generator, made when the package loads (R/bridge.R): its
# formals are the Python function's signature (R torch's).
.make_schedulers <- function(ns) {
  steps <- .scheduler_step_methods()
  .py_generators(ns, "schedulers", function(args, name) {
    bquote(do.call(super$initialize, quote = TRUE,
                   c(list(optimizer), .nn_given(environment(), .(args[-1])))))
  }, function(kind, init) {
    lr_scheduler(kind, inherit = PyScheduler, initialize = init, step = steps[[kind]],
                 private = list(kind = kind))
  })
}

# Each built-in's step() with R torch's formals (step(metrics) for
# lr_reduce_on_plateau, step() for the others), calling PyScheduler's.
.scheduler_step_methods <- function() {
  lapply(.scheduler_steps(), function(args) {
    step <- function() NULL
    formals(step) <- stats::setNames(rep(list(quote(expr = )), length(args)), unlist(args))
    body(step) <- as.call(c(quote(super$step), lapply(unlist(args), as.name)))
    step
  })
}

# Generators over Python functions, made at load: per function of `family`
# (rtorch_py/r/optim_api.py's generator_names), make(name, initialize), the
# initialize() of the function's formals (R/bridge.R's .closure_shapes) and the body
# body_of(their names, name).
.py_generators <- function(ns, family, body_of, make) {
  shapes <- .closure_shapes(unlist(.generator_names(family)), family)
  for (name in names(shapes)) {
    init <- function() NULL
    formals(init) <- shapes[[name]]$formals
    body(init) <- body_of(names(formals(init)), name)
    assign(name, make(name, init), envir = ns)
  }
}
