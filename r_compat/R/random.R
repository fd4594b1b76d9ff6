# Seeds and generators as R torch exposes libtorch's: the generator itself
# (its stream, state bytes and transformations) is rtorch_py.random's, shared
# with Python.

# R torch hands the seed to libtorch as text (`as.character(seed)`, read back as
# an integer up to the first character that is not a digit), so a seed R
# prints in scientific notation is read as R torch reads it.
torch_manual_seed <- function(seed) {
  # R torch's option for its former behaviour seeds a second generator with a
  # draw from the default one: the draws R torch hands a NULL generator to
  # (`x$uniform_()`, layers' initialisation, ...) come from it
  .manual_seed(as.character(seed), isTRUE(getOption("torch.old_seed_behavior", FALSE)))
  invisible(NULL)
}

# The default generator seeded until the frame `.env` exits, then its state
# (the 5056 bytes of torch_get_rng_state()) as it was.
local_torch_manual_seed <- function(seed, .env = parent.frame()) {
  state <- torch_get_rng_state()
  torch_manual_seed(seed)
  restore <- bquote(torch::torch_set_rng_state(.(state)))
  do.call(base::on.exit, list(restore, add = TRUE), envir = .env)
  invisible(NULL)
}

with_torch_manual_seed <- function(code, ..., seed) {
  if (...length() > 0) {
    stop(structure(class = c("rlib_error_dots_nonempty", "error", "condition"),
                   list(message = "`...` must be empty.", call = sys.call())))
  }
  local_torch_manual_seed(seed)
  force(code)
}

`$.torch_generator` <- function(x, name) {
  switch(name,
    current_seed = function() {
      bit64::as.integer64(.External(C_call, .py$generator_method, x, "current_seed"))
    },
    set_current_seed = function(seed) {
      if (!is.integer(seed) && !inherits(seed, "integer64")) {
        .error_of_class("type_error", "Seed must be integer or integer64.")
      }
      invisible(.External(C_call, .py$generator_method, x, name, as.character(seed)))
    },
    .bound_method(x, name)
  )
}

print.torch_generator <- function(x, ...) .print_text(x, "torch_generator()\n")
