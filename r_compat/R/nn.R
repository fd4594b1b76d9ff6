# nn_module: R torch's module system, on the engine's modules.
#
# Every module has one Python module (rtorch_py.nn.Module) holding its
# parameters, buffers and children: a built-in layer's is the Python layer, a
# module defined with nn_module() has a Python RModule whose forward is the R
# one (rtorch_py/r/modules.py). The R6 object (class nn_Module) keeps what is
# R's: fields, methods, class. Users get a callable, the R6 object's forward
# with class c(<classname>, "nn_module") and two attributes: "module", the R6
# object, and "py", holding the Python module. `self$x <- value` registers tensors
# marked by nn_parameter() / nn_buffer() and modules in Python (anything else
# is an R field); `self$x` reads the R6 object's fields first, then Python.
#
# Who holds whom: a callable holds its Python module, which holds its R6
# object; the R6 object refers to its Python module weakly (private$py, a
# weak handle once a callable exists: no cycle across the two collectors)
# and keeps its children's callables (private$children_), so that `self$fc`
# is the same object every time.

nn_Module <- R6::R6Class(
  classname = "nn_Module",
  lock_objects = FALSE,
  public = list(
    .classes = "nn_module",
    initialize = function() {},
    forward = function(...) {
      stop("Forward method is not implemented", call. = FALSE)
    },
    add_module = function(name, module) {
      self$register_module(name, module)
    },
    register_module = function(name, module) {
      if (is.numeric(name)) name <- as.character(name)
      .nn_check_module(name, module)
      py <- .nn_py_of(module)
      .nn_register(.nn_py(self), "module", name, py)
      .nn_unshadow(self, name)
      assign(.py_address(py), module, envir = .nn_children_cache(self))
      invisible(self)
    },
    register_parameter = function(name, param) {
      .nn_register(.nn_py(self), "parameter", name, param)
      .nn_unshadow(self, name)
      invisible(self)
    },
    register_buffer = function(name, tensor, persistent = TRUE) {
      .nn_register(.nn_py(self), "buffer", name, tensor, persistent)
      .nn_unshadow(self, name)
      invisible(self)
    },
    train = function(mode = TRUE) {
      .nn_train(.nn_py(self), mode)
      invisible(create_nn_module_callable(self))
    },
    eval = function() {
      self$train(FALSE)
    },
    .apply = function(fn) {
      .nn_apply_tensors(.nn_py(self), fn)
      invisible(create_nn_module_callable(self))
    },
    cpu = function() {
      invisible(create_nn_module_callable(self))
    },
    cuda = function(device = NULL, non_blocking = FALSE, memory_format = NULL) {
      self$to(device = if (is.null(device)) "cuda" else device)
    },
    to = function(dtype = NULL, device = NULL, tensor = NULL, non_blocking = FALSE,
                  copy = FALSE, memory_format = NULL) {
      .External(C_call, .py_fn("cpu_only"), device)
      if (!is.null(tensor)) dtype <- tensor$dtype
      if (is.null(dtype)) return(invisible(create_nn_module_callable(self)))
      if (!dtype$is_floating_point) {
        stop(sprintf("nn_module$to() only accepts floating point dtypes, but got %s",
                     as.character(dtype)), call. = FALSE)
      }
      .nn_to(.nn_py(self), dtype)
      invisible(create_nn_module_callable(self))
    },
    print = function() {
      cat(.nn_format(.nn_py(self), getOption("cli.width", getOption("width", 80))), "\n",
          sep = "")
      invisible(self)
    },
    state_dict = function(prefix = "", keepvars = FALSE) {
      .nn_state_dict(.nn_py(self), prefix, keepvars)
    },
    load_state_dict = function(state_dict, ..., .refer_to_state_dict = FALSE) {
      if (.nn_is_dead(self)) .nn_revive(self)
      .nn_load_state_dict(.nn_py(self), state_dict, .refer_to_state_dict)
      invisible(create_nn_module_callable(self))
    },
    zero_grad = function(set_to_none = FALSE) {
      .nn_zero_grad(.nn_py(self), set_to_none)
      invisible(NULL)
    },
    apply = function(fn) {
      for (m in self$children) m$apply(fn)
      fn(self)
      invisible(create_nn_module_callable(self))
    },
    named_parameters = function(recursive = TRUE) {
      .nn_named(.nn_py(self), "parameters", recursive)
    },
    named_buffers = function(recursive = TRUE) {
      .nn_named(.nn_py(self), "buffers", recursive)
    },
    requires_grad_ = function(requires_grad = TRUE) {
      .nn_requires_grad(.nn_py(self), requires_grad)
      invisible(create_nn_module_callable(self))
    }
  ),
  private = list(
    py = NULL,         # the Python module (a weak handle once a callable holds it)
    children_ = NULL,  # the children's callables, by their Python module's address
    args_ = NULL,      # what initialize() was given, to rebuild it (.nn_revive)
    pinned_ = FALSE    # the R6 object holds its Python module itself (.nn_revive)
  ),
  active = list(
    training = function(value) {
      if (missing(value)) return(.nn_training(.nn_py(self)))
      if (!(is.logical(value) && length(value) == 1 && !is.na(value))) {
        .value_error("Field `training` must be a logical flag.")
      }
      .nn_set_training(.nn_py(self), value)
    },
    parameters = function(value) {
      if (!missing(value)) {
        .runtime_error(paste0("It's not possible to modify the parameters list.\n",
                              " You can modify the parameter in-place or use",
                              " `module$parameter_name <- new_value`"))
      }
      .nn_named(.nn_py(self), "parameters", TRUE)
    },
    buffers = function(value) {
      if (!missing(value)) {
        .runtime_error("It's not possible to modify the buffers list.")
      }
      .nn_named(.nn_py(self), "buffers", TRUE)
    },
    modules = function(value) {
      if (!missing(value)) .runtime_error("It's not possible to modify the modules list.")
      out <- list(create_nn_module_callable(self))
      for (m in self$children) out <- c(out, m$modules)
      keep <- !duplicated(lapply(out, function(m) attr(m, "module")))
      out[keep]
    },
    children = function(value) {
      if (!missing(value)) .runtime_error("It's not possible to modify the children list.")
      kids <- .nn_children(.nn_py(self))
      out <- lapply(kids, function(py) .nn_callable_in(self, py))
      names(out) <- names(kids)
      out
    }
  )
)

# The module's Python module; a module defined in R gets its RModule on first
# use, and the private views of it.
.nn_py <- function(self) {
  priv <- .subset2(self, ".__enclos_env__")$private
  py <- priv$py
  if (is.null(py)) {
    py <- priv$py <- .nn_module_new()
    .nn_private_views(self, priv)
  }
  py
}

# R torch keeps a module's own children, parameters and buffers in
# private$modules_, private$parameters_ and private$buffers_, and packages read
# them (torchvision's sequential modules forward through private$modules_):
# here they are read-only views of the Python module's.
.nn_private_views <- function(self, priv) {
  force(self)  # (unforced, the promise would keep the caller's frame and its
  #              strong reference to the Python module: a cycle across collectors)
  views <- list(modules_ = function() self$children,
                parameters_ = function() .nn_named(.nn_py(self), "parameters", FALSE),
                buffers_ = function() .nn_named(.nn_py(self), "buffers", FALSE))
  for (name in names(views)) {
    if (exists(name, envir = priv, inherits = FALSE)) rm(list = name, envir = priv)
    makeActiveBinding(name, .nn_read_only(views[[name]], name), priv)
  }
}

.nn_read_only <- function(read, name) {
  force(read)
  force(name)
  function(value) {
    if (!missing(value)) {
      .runtime_error(sprintf(paste0("private$%s can't be modified: register with ",
                                    "self$add_module(), self$register_parameter() or ",
                                    "self$register_buffer()"), name))
    }
    read()
  }
}

.nn_children_cache <- function(self) {
  priv <- .subset2(self, ".__enclos_env__")$private
  if (is.null(priv$children_)) priv$children_ <- new.env(parent = emptyenv())
  priv$children_
}

# The callable of a child (a Python module `py` found in `parent`): the one
# the parent keeps, else a new one (from the child's R6 object, made if the
# child was made in Python).
.nn_callable_in <- function(parent, py) {
  cache <- .nn_children_cache(parent)
  key <- .Call(C_address, py)
  f <- cache[[key]]
  if (is.null(f)) {
    f <- .nn_callable(py)
    assign(key, f, envir = cache)
  }
  f
}

.nn_callable <- function(py) {
  front <- .nn_front(py)  # its R6 object, or its class name when it has none yet
  if (is.character(front)) {
    Module <- get0(front, envir = .nn_layer_classes, inherits = FALSE)
    if (is.null(Module)) Module <- nn_PyModule
    if (identical(Module, nn_PyModule)) {
      front <- Module$new(.py = py)
    } else {
      .nn_wrapping$py <- py  # (a layer's initialize() has the layer's formals alone)
      front <- Module$new()
    }
  }
  create_nn_module_callable(front)
}

# A field that a registration takes the name of goes (registered things are
# read from Python).
.nn_unshadow <- function(self, name) {
  if (exists(name, envir = self, inherits = FALSE) && !bindingIsLocked(name, self) &&
      !bindingIsActive(name, self)) {
    rm(list = name, envir = self)
  }
}

.nn_check_module <- function(name, module) {
  if (!inherits(module, "nn_module")) {
    stop(sprintf("Expected <nn_module> but got object of type <%s>",
                 paste(class(module), collapse = "/")), call. = FALSE)
  }
  if (inherits(module, "nn_module_generator")) {
    stop(sprintf("Module '%s' must be initialized: call the generator first", name),
         call. = FALSE)
  }
}

# R torch's error classes (`value_error`, ...), the message pasted from `...`
.error_of_class <- function(cls, ...) {
  stop(structure(class = c(cls, "error", "condition"), list(message = paste0(...), call = NULL)))
}
.value_error <- function(...) .error_of_class("value_error", ...)
.runtime_error <- function(...) .error_of_class("runtime_error", ...)
.not_implemented_error <- function(...) .error_of_class("not_implemented_error", ...)

# parameters / buffers ------------------------------------------------------

nn_parameter <- function(x, requires_grad = TRUE) {
  if (!is_torch_tensor(x)) stop("`x` must be a tensor.", call. = FALSE)
  .nn_class(.nn_mark(x, "parameter", requires_grad), "nn_parameter")
}

# R torch marks parameters and buffers with a class too (`inherits(x, "nn_parameter")`)
.nn_class <- function(x, cls) {
  if (!inherits(x, cls)) class(x) <- c(class(x), cls)
  x
}

is_nn_parameter <- function(x) is_torch_tensor(x) && identical(.nn_kind(x), "parameter")

nn_buffer <- function(x, persistent = TRUE) {
  if (!is_torch_tensor(x)) stop("`x` must be a tensor.", call. = FALSE)
  x <- .nn_class(.nn_mark(x, "buffer", persistent), "nn_buffer")
  attr(x, "persistent") <- persistent
  x
}

is_nn_buffer <- function(x) is_torch_tensor(x) && startsWith(.nn_kind(x), "buffer")

is_nn_module <- function(x) inherits(x, "nn_module") && !inherits(x, "nn_module_generator")

# nn_module() ---------------------------------------------------------------

.inherited_classes <- function(inherit) {
  cls <- inherit$public_fields$.classes
  if (is.null(cls)) {
    parent <- inherit$get_inherit()
    if (!is.null(parent)) return(.inherited_classes(parent))
    return(character())
  }
  setdiff(cls, c("nn_Module", "nn_module", "nn_module_generator", "R6ClassGenerator"))
}

nn_module <- function(classname = NULL, inherit = nn_Module, ...,
                      private = NULL, active = NULL, parent_env = parent.frame()) {
  if (inherits(inherit, "nn_module")) inherit <- attr(inherit, "module")
  env <- new.env(parent = parent_env)
  env$inherit <- inherit
  classes <- c(classname, .inherited_classes(inherit), "nn_module")
  Module <- R6::R6Class(
    classname = classname,
    inherit = inherit,
    lock_objects = FALSE,
    public = list(.classes = classes, ...),
    private = private,
    active = active,
    parent_env = env
  )
  .finish_class(Module)
  .generator(Module, formals(.r6_find_initialize(Module)), classes)
}

# The generator of Module: a function of `formals` (initialize's) that passes on the
# arguments given.
.generator <- function(Module, formals, classes) {
  gen <- function() NULL
  formals(gen) <- formals
  body(gen) <- bquote(.nn_construct(Module, .nn_given(environment(), .(names(formals)))))
  attr(gen, "class") <- c(classes, "nn_module_generator")
  attr(gen, "module") <- Module
  gen
}

# The arguments a generator was given (of its formals `names`), as values:
# what initialize() gets, kept to rebuild the module (.nn_revive).
.nn_given <- function(env, names) {
  args <- list()
  for (n in names) {
    if (n == "...") {
      args <- c(args, eval(quote(rlang::list2(...)), env))  # dynamic dots, as R torch
    } else if (!eval(call("missing", as.name(n)), env)) {
      args[n] <- list(get(n, envir = env))
    }
  }
  args
}

.nn_construct <- function(Module, args) {
  instance <- do.call(Module$new, args, quote = TRUE)
  priv <- .subset2(instance, ".__enclos_env__")$private
  priv$args_ <- args
  create_nn_module_callable(instance)
}

create_nn_module_callable <- function(instance) {
  priv <- .subset2(instance, ".__enclos_env__")$private
  f <- .subset2(instance, "forward")
  classes <- .subset2(instance, ".classes")
  handles <- .nn_bind(.nn_py(instance), instance, f, classes[[1]])
  if (!isTRUE(priv$pinned_)) priv$py <- handles[[2]]
  # (in an environment: a callable deparses, and all.equal() compares it, the
  # same whichever Python module it holds)
  holder <- new.env(parent = emptyenv())
  holder$py <- handles[[1]]
  attributes(f) <- list(class = classes, module = instance, py = holder)
  f
}

# The Python module a callable holds.
.nn_py_of <- function(module) attr(module, "py")$py

`$.nn_module` <- function(x, name) {
  attr(x, "module")[[name]]
}

`[[.nn_module` <- `$.nn_module`

# The R6 object's own fields and methods first, then its Python module's
# parameters, buffers, children (`x[[i]]`: the i-th) and plain attributes:
# one crossing (the lookup in every forward(): kept short). A child found by
# name is kept in the children's cache under "$name"; C_nn_dollar gives it back
# while Python still has it under that name (a dictionary read, no conversion),
# and gives the R6 object's own fields, all in one .Call (fast path).
`$.nn_Module` <- function(x, name) {
  f <- .Call(C_nn_dollar, x, name)
  if (!is.null(f)) return(f)
  if (is.character(name)) {
    o <- .subset2(x, name)
    if (!is.null(o)) return(o)
  }
  priv <- .subset2(.subset2(x, ".__enclos_env__"), "private")
  py <- priv$py
  if (is.null(py)) py <- .nn_py(x)
  o <- .External(C_call, .py$nn_get, py, name)
  if (!inherits(o, "nn_py_module")) return(o)
  f <- priv$children_[[.Call(C_address, o)]]  # (.nn_callable_in, its common case inline)
  if (is.null(f)) f <- .nn_callable_in(x, o)
  if (is.character(name) && length(name) == 1L) assign(paste0("$", name), f, envir = priv$children_)
  f
}

`[[.nn_Module` <- `$.nn_Module`

`[[<-.nn_Module` <- function(x, name, value) {
  if (is_nn_module(value)) {
    x$add_module(name, value)
  } else if (is_torch_tensor(value) && .nn_assign(.nn_py(x), name, value)) {
    .nn_unshadow(x, name)
  } else {
    NextMethod()
  }
  invisible(x)
}

`$<-.nn_Module` <- function(x, name, value) {
  x[[name]] <- value
  invisible(x)
}

`$<-.nn_module` <- function(x, name, value) {
  attr(x, "module")[[name]] <- value
  invisible(x)
}

`[[<-.nn_module` <- `$<-.nn_module`

names.nn_module <- function(x) names(attr(x, "module"))

print.nn_module <- function(x, ...) {
  attr(x, "module")$print()
  invisible(x)
}

# cloning, saving -----------------------------------------------------------

clone_module <- function(module, deep = FALSE, ..., replace_values = TRUE) {
  self <- if (inherits(module, "nn_module")) attr(module, "module") else module
  if (!deep) return(.nn_clone_r6(self, .nn_copy(.nn_py(self))))
  # each tensor and each module copied once, so what was shared stays shared
  # (replace_values = FALSE: the modules copied, their tensors the original's)
  copied <- .nn_deep_copy(.nn_py(self), isTRUE(replace_values))  # list(copy, list(list(module, its copy), ...))
  for (pair in rev(copied[[2]])) {  # children first: their finalize_deep_clone() first
    front <- .nn_front(pair[[1]])
    if (!is.character(front)) .nn_clone_r6(front, pair[[2]], deep = TRUE)
  }
  .nn_callable(copied[[1]])
}

# A copy of an R6 object, its Python module `py`.
.nn_clone_r6 <- function(instance, py, deep = FALSE) {
  copy <- .subset2(instance, ".__enclos_env__")$private$.__clone_r6__(deep = FALSE)
  priv <- .subset2(copy, ".__enclos_env__")$private
  priv$py <- py
  priv$children_ <- NULL
  priv$pinned_ <- FALSE
  # (cloning copied the original's views, if it had them, as values)
  if (exists("modules_", envir = priv, inherits = FALSE)) .nn_private_views(copy, priv)
  f <- create_nn_module_callable(copy)
  if (deep && !is.null(priv$finalize_deep_clone)) priv$finalize_deep_clone()
  f
}

# The R6 object and its Python module read back by torch_load(), joined again.
.nn_relink <- function(instance, py) {
  priv <- .subset2(instance, ".__enclos_env__")$private
  priv$py <- py
  priv$children_ <- NULL
  priv$pinned_ <- FALSE
  create_nn_module_callable(instance)
}

# A module read back by readRDS(): its Python module is gone (R restores
# external pointers empty) until load_state_dict() rebuilds it with
# initialize() and the arguments it was first made with.
.nn_is_dead <- function(self) {
  py <- .subset2(self, ".__enclos_env__")$private$py
  !is.null(py) && is.na(.py_address(py))
}

.nn_revive <- function(self) {
  priv <- .subset2(self, ".__enclos_env__")$private
  if (is.null(priv$args_)) {
    stop("this module was saved from another R session and can't be rebuilt", call. = FALSE)
  }
  priv$py <- NULL
  priv$children_ <- NULL
  priv$pinned_ <- TRUE  # the callables read back hold empty pointers: the R6 object holds it
  do.call(.subset2(self, "initialize"), priv$args_, quote = TRUE)
  create_nn_module_callable(self)
}

.py_address <- function(x) .Call(C_address, x)

xptr_address <- function(x) {
  address <- .py_address(x)
  if (is.na(address)) {
    stop("this object no longer exists (it was saved from another R session)", call. = FALSE)
  }
  address
}

# Built-in layers: Python modules behind one generic wrapper -------------------

nn_PyModule <- R6::R6Class(
  classname = "nn_PyModule",
  inherit = nn_Module,
  lock_objects = FALSE,
  public = list(
    initialize = function(..., .py = NULL) {
      if (is.null(.py)) .py <- .nn_py_new(private$layer_, list(...))
      private$py <- .py
    },
    forward = function(...) .External(C_call, .py$nn_forward, private$py, ...)
  ),
  private = list(layer_ = NULL)
)

.finish_class <- function(Module) {
  Module$set("private", ".__clone_r6__", nn_Module$public_methods$clone, overwrite = TRUE)
  Module$set("public", "clone", overwrite = TRUE, value = function(deep = FALSE, ...) {
    torch::clone_module(self, deep = deep)
  })
  invisible(Module)
}
.finish_class(nn_PyModule)
.finish_class(nn_ScriptModule)  # (R/jit.R)

# The Python layer `name` made from the arguments given; modules given (a transformer's
# layer) go as their Python side.
.nn_py_new <- function(name, args) {
  args <- lapply(args, function(a) if (is_nn_module(a)) .nn_py_of(a) else a)
  do.call(.nn_new, c(list(name), args))
}

# A built-in layer's initialize(): its generator's formals, so that R matches a
# subclass's `super$initialize(...)` as the generator's call; or the Python layer
# being wrapped (.nn_callable).
.nn_wrapping <- new.env(parent = emptyenv())
.py_initialize <- function(formals) {
  init <- function() NULL
  formals(init) <- formals
  body(init) <- bquote({
    private$py <- .nn_wrapping$py
    .nn_wrapping$py <- NULL
    if (is.null(private$py)) {
      private$py <- .nn_py_new(private$layer_, .nn_given(environment(), .(names(formals))))
    }
  })
  init
}

# An R generator (class c(name, "nn_module", "nn_module_generator")) for one
# Python layer.
.py_layer <- function(name) {
  classes <- c(name, .loss_classes(name), "nn_module")
  # R torch's formals, or the Python layer's as R sees them (R matches the call)
  formals <- .closure_shapes(name, "layer")[[1]]$formals
  Module <- R6::R6Class(
    classname = name,
    inherit = nn_PyModule,
    lock_objects = FALSE,
    public = list(.classes = classes, initialize = .py_initialize(formals)),
    private = list(layer_ = name)
  )
  .finish_class(Module)
  # (nn_embedding_bag$from_pretrained(...): a closure of its formals, R/bridge.R)
  methods <- .closures(.nn_class_methods(name), "class_method", topenv())
  for (m in names(methods)) {
    body(methods[[m]]) <- call(".nn_callable", body(methods[[m]]))
    Module[[sub(".*[$]", "", m)]] <- methods[[m]]
  }
  .generator(Module, formals, classes)
}

# R torch's losses inherit nn_loss (those taking class weights nn_weighted_loss).
.loss_classes <- function(name) {
  if (!endsWith(name, "_loss")) return(character())
  weighted <- c("nn_nll_loss", "nn_bce_loss", "nn_cross_entropy_loss",
                "nn_multilabel_soft_margin_loss", "nn_multi_margin_loss")
  c(if (name %in% weighted) "nn_weighted_loss", "nn_loss")
}

# Every layer rtorch_py.nn exports gets its generator when the package loads
# (.onLoad): R's list of layers is Python's. Each is made on first use (R's
# collector then has fewer objects to walk). Their R6 classes by name, for
# Python modules met from R (a layer's children, a clone's).
.nn_layer_classes <- new.env(parent = emptyenv())

.nn_make_layers <- function(ns) {
  for (name in unlist(.nn_py_layer_names())) .nn_make_layer(name, ns)
}

.nn_make_layer <- function(name, ns) {
  force(name)
  delayedAssign(name, .py_layer(name), assign.env = ns)
  delayedAssign(name, attr(get(name, envir = ns), "module"), assign.env = .nn_layer_classes)
}

# Containers (R modules, so they can hold R-defined modules) -------------------

nn_sequential <- nn_module(
  "nn_sequential",
  initialize = function(...) {
    modules <- rlang::list2(...)
    nms <- names(modules)
    for (i in seq_along(modules)) {
      nm <- if (!is.null(nms) && nzchar(nms[i])) nms[i] else i - 1
      self$add_module(nm, modules[[i]])
    }
  },
  forward = function(input) {
    for (module in self$children) input <- module(input)
    input
  }
)

length.nn_sequential <- function(x) length(x$children)

`[.nn_sequential` <- function(x, i) {
  do.call(nn_sequential, lapply(i, function(j) x[[j]]))
}

nn_prune_head <- function(x, head_size) UseMethod("nn_prune_head")

nn_prune_head.nn_sequential <- function(x, head_size = 1L) {
  do.call(nn_sequential, unname(x$children[seq_len(length(x) - head_size)]))
}

nn_prune_head.nn_module <- function(x, head_size = 1L) {
  kids <- x$children
  do.call(nn_sequential, kids[seq_len(length(kids) - head_size)])
}

nn_module_list <- nn_module(
  "nn_module_list",
  initialize = function(modules = list()) {
    for (i in seq_along(modules)) self$add_module(i - 1, modules[[i]])
  },
  insert = function(index, module) {
    .nn_check_module(index, module)
    .nn_insert(.nn_py(self), index, .nn_py_of(module))
    invisible(self)
  },
  append = function(module) {
    self$add_module(length(self$children), module)
    invisible(self)
  },
  extend = function(modules) {
    for (m in modules) self$append(m)
    invisible(self)
  },
  forward = function(...) {
    stop("nn_module_list has no forward method: call its elements", call. = FALSE)
  }
)

as.list.nn_module_list <- function(x, ...) unname(x$children)

length.nn_module_list <- function(x) length(x$children)

nn_module_dict <- nn_module(
  "nn_module_dict",
  initialize = function(dict) {
    nms <- names(dict)
    if (length(dict) && (is.null(nms) || any(!nzchar(nms)))) {
      stop("All elements in `dict` must be named.", call. = FALSE)
    }
    for (nm in nms) self$add_module(nm, dict[[nm]])
  },
  forward = function(...) {
    stop("nn_module_dict has no forward method: call its elements", call. = FALSE)
  }
)
