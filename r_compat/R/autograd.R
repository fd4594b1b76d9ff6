# Grad mode, anomaly detection and R-defined autograd functions.

# Runs `code` with grad mode set to `enabled`, restoring the previous mode
# however `code` exits (set_grad_mode gives the previous mode).
.with_grad_mode <- function(enabled, code) {
  previous <- .External(C_call, .py$set_grad_mode, enabled)
  on.exit(.External(C_call, .py$set_grad_mode, previous), add = TRUE)
  code
}

with_no_grad <- function(code) .with_grad_mode(FALSE, code)

with_enable_grad <- function(code) .with_grad_mode(TRUE, code)

# Forward-mode AD: `code` runs inside a dual level (make_dual(), unpack_dual());
# the tangents are dropped however it exits.
with_dual_level <- function(code) {
  scope <- .External(C_call, .py$dual_level_scope)
  on.exit(.External(C_call, .py$scope_exit, scope), add = TRUE)
  code
}

# Sets grad mode until the frame `.env` (by default the caller's) exits,
# like withr's local_*() functions.
.local_grad_mode <- function(enabled, .env) {
  previous <- .External(C_call, .py$set_grad_mode, enabled)
  restore <- bquote(.External(.(C_call), .(.py$set_grad_mode), .(previous)))
  do.call(base::on.exit, list(restore, add = TRUE), envir = .env)
  invisible(NULL)
}

local_no_grad <- function(.env = parent.frame()) .local_grad_mode(FALSE, .env)

local_enable_grad <- function(.env = parent.frame()) .local_grad_mode(TRUE, .env)

autograd_set_grad_mode <- function(enabled) {
  .External(C_call, .py$set_grad_mode, enabled)
  invisible(NULL)
}

with_detect_anomaly <- function(code) {
  warning("This mode should be enabled only for debugging as the different tests will ",
          "slow down your program execution.", call. = FALSE)
  scope <- .External(C_call, .py$anomaly_scope)
  on.exit(.External(C_call, .py$scope_exit, scope), add = TRUE)
  code
}

# Custom functions ----------------------------------------------------------

# Non-tensor R values are handed to Python boxed, so they come back to R
# unchanged (an R numeric stays numeric, a list stays a list...).
.box_values <- function(values) {
  lapply(values, function(v) if (inherits(v, "torch_tensor")) v else .Call(C_box, v))
}

# The arguments of a call of the function autograd_function() returns, in
# forward's order, as a named list ("" for what `...` caught).
.collect_args <- function(names, env, dots) {
  values <- list()
  out_names <- character()
  for (nm in names) {
    if (nm == "...") {
      values <- c(values, dots)
      dn <- names(dots)
      out_names <- c(out_names, if (is.null(dn)) rep("", length(dots)) else dn)
    } else {
      values <- c(values, list(get(nm, envir = env)))
      out_names <- c(out_names, nm)
    }
  }
  names(values) <- out_names
  values
}

autograd_function <- function(forward, backward) {
  .autograd_function(forward, backward, NULL)
}

# rtorch-py's forward mode (R torch has none): a custom function with its jvp,
# function(ctx, ...) taking the input tangents by name, returning the outputs'.
autograd_function_with_jvp <- function(forward, backward, jvp) {
  .autograd_function(forward, backward, jvp)
}

.autograd_function <- function(forward, backward, jvp) {
  fmls <- formals(forward)[-1L]
  .rtorch_names <- names(fmls)
  if (is.null(.rtorch_names)) .rtorch_names <- character()
  # Python keeps forward and backward (and calls them directly); the
  # argument count of backward decides how gradients are passed to it.
  .rtorch_fn <- .External(C_call, .py$make_autograd_function, forward, backward,
                          as.list(.rtorch_names), length(formals(backward)) - 1L, jvp)
  rm(forward, backward, jvp)

  # The function users call: forward's formals minus ctx, so R matches
  # positional, named and default arguments as it would for forward.
  has_dots <- "..." %in% .rtorch_names
  f <- function() NULL
  formals(f) <- fmls
  body(f) <- bquote({
    .rtorch_args <- .(as.name(".collect_args"))(
      .rtorch_names, environment(), .(if (has_dots) quote(list(...)) else NULL))
    .rtorch_label <- sys.call()[[1L]]  # the name it was called by, for messages
    .External(.(C_call), .(.py$apply_function), .rtorch_fn, .box_values(.rtorch_args),
              if (is.symbol(.rtorch_label)) as.character(.rtorch_label) else NULL)
  })
  f
}

`$.torch_autograd_context` <- function(x, name) {
  switch(name,
    save_for_backward = function(...) {
      invisible(.External(C_call, .py$ctx_save, x, .box_values(rlang::list2(...))))
    },
    save_for_forward = function(...) {
      invisible(.External(C_call, .py$ctx_save_for_forward, x, .box_values(rlang::list2(...))))
    },
    mark_dirty = function(...) {
      invisible(.External(C_call, .py$ctx_mark_dirty, x, rlang::list2(...)))
    },
    mark_non_differentiable = function(...) {
      invisible(.External(C_call, .py$ctx_mark_non_differentiable, x, rlang::list2(...)))
    },
    .External(C_call, .py$ctx_get, x, name)
  )
}
