# Optimizers as R torch defines them: R6 objects whose `param_groups` and
# `state` are R lists scripts may read and change. Built-in optimizers do
# their arithmetic in Python, one call per parameter group per step
# (rtorch_py/r/optim_api.py); optimizers defined in R with optimizer() work
# as in R torch.

optim_required <- function() structure(list(), class = "optim_required")

is_optim_required <- function(x) inherits(x, "optim_required")

is_optimizer <- function(x) inherits(x, "torch_optimizer")

print.torch_optimizer_generator <- function(x, ...) {
  .print_text(x, "<optimizer generator> ", class(x)[[1]], " \n")
}

.optim_error <- function(...) stop(paste0(...), call. = FALSE)

.is_named_list <- function(x) is.list(x) && !is.null(names(x)) && all(names(x) != "")

# R torch's error for a setting left at optim_required() (the first one).
.check_required <- function(settings) {
  required <- names(Filter(is_optim_required, settings))
  if (length(required)) {
    .optim_error("parameter group didn't specify a value of required optimization ",
                 "parameter ", required[[1]])
  }
}

Optimizer <- R6::R6Class(
  "torch_optimizer",
  lock_objects = FALSE,
  public = list(
    initialize = function(params, defaults) {
      self$defaults <- defaults
      self$param_groups <- list()
      if (is_torch_tensor(params)) {
        groups <- list(list(params = list(params)))
      } else if (is.list(params) && length(params) > 0 && is_torch_tensor(params[[1]])) {
        groups <- list(list(params = unname(params)))
      } else if (is.list(params) && length(params) > 0 && .is_named_list(params[[1]])) {
        groups <- params
      } else {
        .optim_error("Wrong parameters specification: give a tensor, a list of tensors ",
                     "(e.g. model$parameters) or a list of parameter groups ",
                     "(named lists with `params`).")
      }
      for (g in groups) self$add_param_group(g)
      self$state <- State$new()
    },
    add_param_group = function(param_group) {
      if (!.is_named_list(param_group)) .optim_error("`param_group` is not named")
      if (is_torch_tensor(param_group$params)) param_group$params <- list(param_group$params)
      param_group$params <- unname(param_group$params)
      for (p in param_group$params) {
        if (!is_torch_tensor(p)) {
          .optim_error("optimizer can only optimize Tensors, but one of the params is ",
                       paste(class(p), collapse = "/"))
        }
        if (!p$is_leaf) .optim_error("can't optimize a non-leaf Tensor")
      }
      lacking <- setdiff(names(self$defaults), names(param_group))
      param_group[lacking] <- self$defaults[lacking]
      .check_required(param_group)
      self$param_groups <- append(self$param_groups, list(param_group))
      invisible(self)
    },
    zero_grad = function(set_to_none = FALSE) {
      for (g in .subset2(self, "param_groups")) .optim_zero_grad(g$params, set_to_none)
      invisible(NULL)
    },
    state_dict = function() {
      params <- unlist(lapply(self$param_groups, function(g) g$params))
      keys <- vapply(params, xptr_address, "")
      st <- self$state$map
      names(st) <- as.character(match(names(st), keys))
      groups <- lapply(self$param_groups, function(g) {
        g$params <- match(vapply(g$params, xptr_address, ""), keys)
        g
      })
      list(param_groups = groups, state = st)
    },
    load_state_dict = function(state_dict, ..., .refer_to_state_dict = FALSE) {
      if (length(self$param_groups) != length(state_dict$param_groups)) {
        .optim_error("Loaded state dict has a different number of parameter groups")
      }
      for (i in seq_along(self$param_groups)) {
        if (length(self$param_groups[[i]]$params) != length(state_dict$param_groups[[i]]$params)) {
          .optim_error("Loaded state dict contains a parameter group that doesn't match ",
                       "the size of the optimizer's group")
        }
      }
      params <- unlist(lapply(self$param_groups, function(g) g$params))
      for (o in names(state_dict$state)) {
        value <- state_dict$state[[o]]
        if (!.refer_to_state_dict) {
          # copies: the loaded dict and this optimizer never share tensors
          value <- lapply(value, function(v) if (is_torch_tensor(v)) v$detach()$clone() else v)
        }
        self$state$set(params[[as.integer(o)]], value)
      }
      for (i in seq_along(state_dict$param_groups)) {
        g <- state_dict$param_groups[[i]]
        for (nm in setdiff(names(g), "params")) self$param_groups[[i]][nm] <- list(g[[nm]])
      }
      invisible(self)
    }
  ),
  private = list(
    # R torch's template for optimizers written in R: loop_fun(group, param, g, p)
    # for every parameter that has a gradient, under no-grad.
    step_helper = function(closure, loop_fun) {
      local_no_grad()
      loss <- NULL
      if (!is.null(closure)) loss <- with_enable_grad(closure())
      for (g in seq_along(self$param_groups)) {
        group <- self$param_groups[[g]]
        for (p in seq_along(group$params)) {
          param <- group$params[[p]]
          if (is.null(param$grad) || is_undefined_tensor(param$grad)) next
          loop_fun(group, param, g, p)
        }
      }
      loss
    }
  )
)

# An optimizer's per-parameter state, by xptr_address(param): an R list, or,
# once a built-in optimizer has stepped, kept in Python between steps (`map`
# is then made from it on demand; rtorch_py/r/optim_api.py).
State <- R6::R6Class(
  "State",
  lock_objects = FALSE,
  public = list(
    initialize = function() private$r_map <- list(),
    set = function(key, value) {
      k <- xptr_address(key)
      if (is.null(private$py)) private$r_map[[k]] <- value else .optim_state_set(private$py, k, value)
      invisible(self)
    },
    get = function(key) {
      k <- xptr_address(key)
      if (is.null(private$py)) private$r_map[[k]] else .optim_state_get(private$py, k)
    },
    keys = function() names(self$map),
    .python = function() {
      if (is.null(private$py)) {
        private$py <- .optim_state_new(private$r_map)
        private$r_map <- NULL
      }
      private$py
    }
  ),
  private = list(r_map = NULL, py = NULL),
  active = list(
    map = function(value) {
      if (missing(value)) {
        if (is.null(private$py)) private$r_map else .optim_state_map(private$py)
      } else if (is.null(private$py)) {
        private$r_map <- value
      } else {
        .optim_state_replace(private$py, value)
      }
    }
  )
)

# state(param) and state(param) <- value inside an optimizer's methods
state <- function(self) {
  opt <- get("self", envir = parent.frame(), inherits = TRUE)
  opt$state$get(self)
}

`state<-` <- function(self, value) {
  opt <- get("self", envir = parent.frame(), inherits = TRUE)
  opt$state$set(self, value)
  self
}

optimizer <- function(name = NULL, inherit = Optimizer, ..., private = NULL, active = NULL,
                      parent_env = parent.frame()) {
  .torch_class(name, inherit, list(...), private, active, parent_env, "Optimizer",
               c(name, "torch_optimizer_generator"))
}
