# Learning-rate schedulers as R torch defines them (R6, written in R: they
# only change numbers in optimizer$param_groups). lr_scheduler() defines new
# ones from a get_lr() method.

LRScheduler <- R6::R6Class(
  "LRScheduler",
  lock_objects = FALSE,
  public = list(
    initialize = function(optimizer = NULL, last_epoch = -1, verbose = FALSE) {
      if (!is_optimizer(optimizer)) {
        .optim_error(paste(class(optimizer), collapse = "/"), " is not an optimizer; give ",
                     "the optimizer whose learning rate to schedule")
      }
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

.group_lrs <- function(optimizer) vapply(optimizer$param_groups, function(g) g$lr, numeric(1))

.per_group <- function(x, optimizer) {
  n <- length(optimizer$param_groups)
  if (is.list(x) || length(x) > 1 && !is.function(x)) {
    if (length(x) != n) .optim_error("expected ", n, " values (one per parameter group), got ",
                                     length(x))
    return(x)
  }
  rep(list(x), n)
}

lr_lambda <- lr_scheduler(
  "lr_lambda",
  initialize = function(optimizer, lr_lambda, last_epoch = -1, verbose = FALSE) {
    self$lr_lambdas <- .per_group(lr_lambda, optimizer)
    super$initialize(optimizer, last_epoch, verbose)
  },
  get_lr = function() {
    vapply(seq_along(self$base_lrs), function(i) {
      self$base_lrs[[i]] * self$lr_lambdas[[i]](self$last_epoch)
    }, numeric(1))
  }
)

lr_multiplicative <- lr_scheduler(
  "lr_multiplicative",
  initialize = function(optimizer, lr_lambda, last_epoch = -1, verbose = FALSE) {
    self$lr_lambdas <- .per_group(lr_lambda, optimizer)
    super$initialize(optimizer, last_epoch, verbose)
  },
  get_lr = function() {
    lrs <- .group_lrs(self$optimizer)
    if (self$last_epoch > 0) {
      lrs <- vapply(seq_along(lrs), function(i) lrs[[i]] * self$lr_lambdas[[i]](self$last_epoch),
                    numeric(1))
    }
    lrs
  }
)

lr_step <- lr_scheduler(
  "lr_step",
  initialize = function(optimizer, step_size, gamma = 0.1, last_epoch = -1) {
    self$step_size <- step_size
    self$gamma <- gamma
    super$initialize(optimizer, last_epoch)
  },
  get_lr = function() {
    lrs <- .group_lrs(self$optimizer)
    if (self$last_epoch == 0 || self$last_epoch %% self$step_size != 0) return(lrs)
    lrs * self$gamma
  }
)

lr_cosine_annealing <- lr_scheduler(
  "lr_cosine_annealing",
  initialize = function(optimizer, T_max, eta_min = 0, last_epoch = -1, verbose = FALSE) {
    self$T_max <- T_max
    self$eta_min <- eta_min
    super$initialize(optimizer, last_epoch, verbose)
  },
  get_lr = function() {
    e <- self$last_epoch
    T_max <- self$T_max
    lo <- self$eta_min
    lrs <- .group_lrs(self$optimizer)
    if (e == 0) return(lrs)
    if ((e - 1 - T_max) %% (2 * T_max) == 0) {
      return(lrs + (self$base_lrs - lo) * (1 - cos(pi / T_max)) / 2)
    }
    (1 + cos(pi * e / T_max)) / (1 + cos(pi * (e - 1) / T_max)) * (lrs - lo) + lo
  }
)

lr_one_cycle <- lr_scheduler(
  "lr_one_cycle",
  initialize = function(optimizer, max_lr, total_steps = NULL, epochs = NULL,
                        steps_per_epoch = NULL, pct_start = 0.3, anneal_strategy = "cos",
                        cycle_momentum = TRUE, base_momentum = 0.85, max_momentum = 0.95,
                        div_factor = 25, final_div_factor = 1e4, last_epoch = -1,
                        verbose = FALSE) {
    if (is.null(total_steps)) {
      if (is.null(epochs) || is.null(steps_per_epoch)) {
        .optim_error("You must define either total_steps OR (epochs AND steps_per_epoch)")
      }
      total_steps <- epochs * steps_per_epoch
    }
    if (total_steps <= 0) .optim_error("Expected positive total_steps, but got ", total_steps)
    self$total_steps <- total_steps
    self$phases <- list(
      list(end_step = pct_start * total_steps - 1, start_lr = "initial_lr", end_lr = "max_lr",
           start_momentum = "max_momentum", end_momentum = "base_momentum"),
      list(end_step = total_steps - 1, start_lr = "max_lr", end_lr = "min_lr",
           start_momentum = "base_momentum", end_momentum = "max_momentum")
    )
    if (!anneal_strategy %in% c("cos", "linear")) {
      .optim_error("anneal_strategy must be one of 'cos' or 'linear', got '",
                   anneal_strategy, "'")
    }
    self$anneal_func <- if (anneal_strategy == "cos") {
      function(start, end, pct) end + (start - end) / 2 * (cos(pi * pct) + 1)
    } else {
      function(start, end, pct) (end - start) * pct + start
    }
    max_lrs <- .per_group(max_lr, optimizer)
    if (last_epoch == -1) {
      for (i in seq_along(optimizer$param_groups)) {
        g <- optimizer$param_groups[[i]]
        g$initial_lr <- max_lrs[[i]] / div_factor
        g$max_lr <- max_lrs[[i]]
        g$min_lr <- g$initial_lr / final_div_factor
        optimizer$param_groups[[i]] <- g
      }
    }
    self$cycle_momentum <- cycle_momentum
    if (cycle_momentum) {
      if (!"momentum" %in% names(optimizer$defaults) && !"betas" %in% names(optimizer$defaults)) {
        .optim_error("optimizer must support momentum with `cycle_momentum` option enabled")
      }
      self$use_beta1 <- "betas" %in% names(optimizer$defaults)
      lo <- .per_group(base_momentum, optimizer)
      hi <- .per_group(max_momentum, optimizer)
      for (i in seq_along(optimizer$param_groups)) {
        g <- optimizer$param_groups[[i]]
        if (last_epoch == -1) g <- private$set_momentum(g, hi[[i]])
        g$max_momentum <- hi[[i]]
        g$base_momentum <- lo[[i]]
        optimizer$param_groups[[i]] <- g
      }
    }
    super$initialize(optimizer, last_epoch, verbose)
  },
  get_lr = function() {
    step_num <- self$last_epoch
    if (step_num > self$total_steps) {
      .optim_error(sprintf("Tried to step %i times. The specified number of total steps is %i",
                           as.integer(step_num), as.integer(self$total_steps)))
    }
    lrs <- numeric(0)
    for (i in seq_along(self$optimizer$param_groups)) {
      g <- self$optimizer$param_groups[[i]]
      start_step <- 0
      for (k in seq_along(self$phases)) {
        ph <- self$phases[[k]]
        end_step <- ph$end_step
        if (step_num <= end_step || k == length(self$phases)) {
          pct <- (step_num - start_step) / (end_step - start_step)
          lr <- self$anneal_func(g[[ph$start_lr]], g[[ph$end_lr]], pct)
          if (self$cycle_momentum) {
            m <- self$anneal_func(g[[ph$start_momentum]], g[[ph$end_momentum]], pct)
            self$optimizer$param_groups[[i]] <- private$set_momentum(g, m)
          }
          break
        }
        start_step <- end_step
      }
      lrs <- c(lrs, lr)
    }
    lrs
  },
  private = list(
    set_momentum = function(g, m) {
      if (isTRUE(self$use_beta1)) g$betas[[1]] <- m else g$momentum <- m
      g
    }
  )
)

lr_reduce_on_plateau <- lr_scheduler(
  "lr_reduce_on_plateau",
  initialize = function(optimizer, mode = "min", factor = 0.1, patience = 10,
                        threshold = 1e-4, threshold_mode = "rel", cooldown = 0, min_lr = 0,
                        eps = 1e-8, verbose = FALSE) {
    if (factor >= 1) .optim_error("Factor should be < 1.0.")
    if (!mode %in% c("min", "max")) .optim_error("mode '", mode, "' is unknown: use 'min' or 'max'")
    if (!threshold_mode %in% c("rel", "abs")) {
      .optim_error("threshold mode '", threshold_mode, "' is unknown: use 'rel' or 'abs'")
    }
    if (!is_optimizer(optimizer)) .optim_error("lr_reduce_on_plateau needs an optimizer")
    self$optimizer <- optimizer
    n <- length(optimizer$param_groups)
    self$min_lrs <- if (length(min_lr) == 1) rep(min_lr, n) else min_lr
    self$mode <- mode
    self$factor <- factor
    self$patience <- patience
    self$threshold <- threshold
    self$threshold_mode <- threshold_mode
    self$cooldown <- cooldown
    self$eps <- eps
    self$verbose <- verbose
    self$cooldown_counter <- 0
    self$best <- if (mode == "min") Inf else -Inf
    self$num_bad_epochs <- 0
    self$last_epoch <- 0
  },
  step = function(metrics) {
    current <- as.numeric(metrics)
    self$last_epoch <- self$last_epoch + 1
    if (private$is_better(current, self$best)) {
      self$best <- current
      self$num_bad_epochs <- 0
    } else {
      self$num_bad_epochs <- self$num_bad_epochs + 1
    }
    if (self$cooldown_counter > 0) {
      self$cooldown_counter <- self$cooldown_counter - 1
      self$num_bad_epochs <- 0
    }
    if (self$num_bad_epochs > self$patience) {
      for (i in seq_along(self$optimizer$param_groups)) {
        old <- self$optimizer$param_groups[[i]]$lr
        new <- max(old * self$factor, self$min_lrs[[i]])
        if (old - new > self$eps) {
          self$optimizer$param_groups[[i]]$lr <- new
          if (self$verbose) {
            message(sprintf("Epoch %i: reducing learning rate of group %i to %.4e",
                            as.integer(self$last_epoch), i, new))
          }
        }
      }
      self$cooldown_counter <- self$cooldown
      self$num_bad_epochs <- 0
    }
    invisible(self)
  },
  private = list(
    is_better = function(a, best) {
      rel <- self$threshold_mode == "rel"
      if (self$mode == "min") {
        a < (if (rel) best * (1 - self$threshold) else best - self$threshold)
      } else {
        a > (if (rel) best * (1 + self$threshold) else best + self$threshold)
      }
    }
  )
)
