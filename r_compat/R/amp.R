# Automatic mixed precision, as R torch's: autocast on the CPU (bfloat16 matrix
# products and convolutions; the op lists are libtorch's, in rtorch_py/ops/dispatch.py)
# and the gradient scaler, which on the CPU passes everything through when
# disabled and refuses CPU tensors when enabled, as R torch's does. set_autocast() and
# unset_autocast() are rtorch_py.amp's (made from the Python tables).

local_autocast <- function(device_type, dtype = NULL, enabled = TRUE, cache_enabled = NULL, ...,
                           .env = parent.frame()) {
  context <- set_autocast(device_type, dtype = dtype, enabled = enabled,
                          cache_enabled = cache_enabled)
  withr::defer(unset_autocast(context), envir = .env)
  invisible(context)
}

with_autocast <- function(code, ..., device_type, dtype = NULL, enabled = TRUE,
                          cache_enabled = NULL) {
  local_autocast(device_type, dtype = dtype, enabled = enabled, cache_enabled = cache_enabled)
  force(code)
}

cuda_amp_grad_scaler <- function(init_scale = 2^16, growth_factor = 2, backoff_factor = 0.5,
                                 growth_interval = 2000, enabled = TRUE) {
  .GradScaler$new(init_scale, growth_factor, backoff_factor, growth_interval, enabled)
}

.GradScaler <- R6::R6Class(
  "AmpGradScaler",
  lock_objects = FALSE,
  public = list(
    initialize = function(init_scale, growth_factor, backoff_factor, growth_interval, enabled) {
      self$.enabled <- enabled
      if (!enabled) return()
      if (growth_factor <= 1) {
        .value_error(sprintf("`growth_factor` should be > 1 but got %s.", growth_factor))
      }
      if (backoff_factor >= 1) {
        .value_error(sprintf("`backoff_factor` should be < 1 but got %s.", backoff_factor))
      }
      self$.init_scale <- init_scale
      self$.growth_factor <- growth_factor
      self$.backoff_factor <- backoff_factor
      self$.growth_interval <- growth_interval
      self$.scale <- NULL
      self$.growth_tracker <- NULL
    },
    scale = function(outputs) {
      if (!self$.enabled) return(outputs)
      if (is.list(outputs)) return(lapply(outputs, self$scale))
      if (!is_torch_tensor(outputs)) {
        .value_error(sprintf("`outputs` must be a tensor or a list of tensors, got <%s>.",
                             paste(class(outputs), collapse = "/")))
      }
      # scaling needs CUDA's kernels: on the CPU, R torch refuses it
      .value_error(sprintf('`outputs` device must be "cuda", got "%s".', outputs$device$type))
    },
    unscale_ = function(optimizer) {
      if (!self$.enabled) return(invisible(NULL))
      private$needs_scale("unscale_")
    },
    step = function(optimizer, ...) {
      if (!self$.enabled) return(optimizer$step(...))
      private$needs_scale("step")
    },
    update = function(new_scale = NULL) {
      if (!self$.enabled) return(invisible(NULL))
      private$needs_scale("update")
    }
  ),
  private = list(
    # (scale() never succeeds on the CPU, so the scale is never made)
    needs_scale = function(what) {
      .value_error(sprintf(paste0("Attempted `%s()` but `.scale` is NULL. This may indicate ",
                                  "your script did not use scaler.scale(loss or outputs) ",
                                  "earlier in the iteration."), what))
    }
  )
)
