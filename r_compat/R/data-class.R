# Shared by optimizer(), dataset() and lr_scheduler(): R6 classes with a
# generator function, as R torch builds them.

# An R6 class plus the generator function users call (its arguments are
# initialize's); `attr_name` holds the class on the generator.
.torch_class <- function(name, inherit, public, private, active, parent_env, attr_name,
                         constructor_class) {
  if (!is.null(attr(inherit, attr_name))) inherit <- attr(inherit, attr_name)
  e <- new.env(parent = parent_env)
  e$inherit <- inherit
  cls <- R6::R6Class(classname = name, inherit = inherit, lock_objects = FALSE,
                     public = public, private = private, active = active, parent_env = e)
  init <- .r6_find_initialize(cls)
  gen <- function() NULL
  formals(gen) <- if (is.null(init)) alist(... = ) else formals(init)
  # re-issue the call to cls$new: arguments are matched as initialize matches them
  body(gen) <- bquote({
    .call <- sys.call()
    .call[[1L]] <- .(cls)$new
    eval(.call, parent.frame())
  })
  environment(gen) <- baseenv()
  attr(gen, attr_name) <- cls
  class(gen) <- constructor_class
  gen
}

# The initialize() an R6 class has or inherits (NULL if none).
.r6_find_initialize <- function(cls) {
  while (!is.null(cls)) {
    if (!is.null(cls$public_methods$initialize)) return(cls$public_methods$initialize)
    cls <- cls$get_inherit()
  }
  NULL
}

