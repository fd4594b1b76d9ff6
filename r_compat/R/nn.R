# nn_module: R torch's module system on R6.
#
# A module instance is an R6 object of class nn_Module (its fields, methods,
# and registered parameters / buffers / submodules in private lists); users
# get it wrapped as a callable function of class c(<classname>, "nn_module")
# whose attribute "module" is the R6 object. Assigning through `self$x <-`
# registers tensors marked by nn_parameter() / nn_buffer() and modules.
#
# Built-in layers are Python modules (rtorch_py.nn): nn_PyModule wraps one,
# mirroring its parameters, buffers and children in the same private lists,
# so R code sees them like any module.

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
      if (!inherits(module, "nn_module")) {
        stop(sprintf("Expected <nn_module> but got object of type <%s>",
                     paste(class(module), collapse = "/")), call. = FALSE)
      }
      if (inherits(module, "nn_module_generator")) {
        stop(sprintf("Module '%s' must be initialized: call the generator first", name),
             call. = FALSE)
      }
      private$modules_[[name]] <- module
      invisible(self)
    },
    register_parameter = function(name, param) {
      private$parameters_[[name]] <- param
      invisible(self)
    },
    register_buffer = function(name, tensor, persistent = TRUE) {
      private$buffers_[[name]] <- tensor
      npb <- setdiff(private$non_persistent_buffers_, name)
      private$non_persistent_buffers_ <- if (persistent) npb else c(npb, name)
      invisible(self)
    },
    train = function(mode = TRUE) {
      self$training <- mode
      for (m in private$modules_) m$train(mode)
      invisible(create_nn_module_callable(self))
    },
    eval = function() {
      self$train(FALSE)
    },
    .apply = function(fn) {
      for (m in private$modules_) m$.apply(fn)
      for (nm in names(private$parameters_)) {
        p <- private$parameters_[[nm]]
        if (is.null(p)) next
        rg <- p$requires_grad
        g <- p$grad
        new <- with_no_grad(fn(p))
        new <- nn_parameter(new$detach(), rg)
        if (!is_undefined_tensor(g)) new$grad <- with_no_grad(fn(g))$detach()
        private$parameters_[[nm]] <- new
      }
      for (nm in names(private$buffers_)) {
        b <- private$buffers_[[nm]]
        if (!is.null(b)) private$buffers_[[nm]] <- fn(b)
      }
      invisible(create_nn_module_callable(self))
    },
    cpu = function() {
      invisible(create_nn_module_callable(self))
    },
    cuda = function(...) {
      stop("CUDA is not available: rtorch-py runs on the CPU only", call. = FALSE)
    },
    to = function(dtype = NULL, device = NULL, tensor = NULL, non_blocking = FALSE,
                  copy = FALSE, memory_format = NULL) {
      if (!is.null(device) && !identical(as.character(device), "cpu")) {
        stop(sprintf("only the 'cpu' device exists here, got '%s'", device), call. = FALSE)
      }
      if (!is.null(tensor)) dtype <- tensor$dtype
      if (is.null(dtype)) return(invisible(create_nn_module_callable(self)))
      if (!dtype$is_floating_point) {
        stop(sprintf("nn_module$to() only accepts floating point dtypes, but got %s",
                     as.character(dtype)), call. = FALSE)
      }
      self$.apply(function(x) if (x$is_floating_point()) x$to(dtype = dtype) else x)
    },
    print = function(...) {
      .nn_print(self, private)
      invisible(self)
    },
    .save_to_state_dict = function(prefix, keepvars) {
      out <- list()
      for (nm in names(private$parameters_)) {
        p <- private$parameters_[[nm]]
        if (!is.null(p)) out[[paste0(prefix, nm)]] <- .keep_or_detach(p, keepvars)
      }
      for (nm in names(private$buffers_)) {
        b <- private$buffers_[[nm]]
        if (!is.null(b) && !(nm %in% private$non_persistent_buffers_)) {
          out[[paste0(prefix, nm)]] <- .keep_or_detach(b, keepvars)
        }
      }
      out
    },
    state_dict = function(prefix = "", keepvars = FALSE) {
      out <- self$.save_to_state_dict(prefix, keepvars)
      for (nm in names(private$modules_)) {
        m <- private$modules_[[nm]]
        if (!is.null(m)) out <- c(out, m$state_dict(prefix = paste0(prefix, nm, "."),
                                                    keepvars = keepvars))
      }
      out
    },
    .load_from_state_dict = function(state_dict, prefix, refer = FALSE) {
      persistent <- setdiff(names(private$buffers_), private$non_persistent_buffers_)
      for (nm in c(names(private$parameters_), persistent)) {
        own <- if (nm %in% names(private$parameters_)) private$parameters_[[nm]]
               else private$buffers_[[nm]]
        if (is.null(own)) next
        key <- paste0(prefix, nm)
        if (!key %in% names(state_dict)) {
          # state dicts from before batch norm counted its batches lack the counter
          if (nm == "num_batches_tracked") next
          .value_error(sprintf("Could not find %s in the state_dict.", key))
        }
        value <- state_dict[[key]]
        if (.is_dead(own)) {
          # a tensor of a module read back from an .rds file: take the new value
          if (nm %in% names(private$parameters_)) {
            self$register_parameter(nm, nn_parameter(value$detach()$clone()))
          } else {
            self$register_buffer(nm, value$detach()$clone())
          }
        } else if (refer) {
          value$requires_grad_(own$requires_grad)
          if (nm %in% names(private$parameters_)) {
            self$register_parameter(nm, nn_parameter(value, own$requires_grad))
          } else {
            self$register_buffer(nm, value)
          }
        } else {
          if (!identical(as.integer(dim(value)), as.integer(dim(own)))) {
            .value_error(sprintf(
              "size mismatch for %s: the state_dict's tensor has shape [%s], the module's [%s]",
              key, paste(dim(value), collapse = ", "), paste(dim(own), collapse = ", ")))
          }
          with_no_grad(own$copy_(value))
        }
      }
    },
    load_state_dict = function(state_dict, ..., .refer_to_state_dict = FALSE) {
      load <- function(module, prefix) {
        module$.load_from_state_dict(state_dict, prefix, .refer_to_state_dict)
        kids <- module$.__enclos_env__$private$modules_
        for (nm in names(kids)) {
          if (!is.null(kids[[nm]])) load(kids[[nm]], paste0(prefix, nm, "."))
        }
      }
      load(self, "")
      invisible(create_nn_module_callable(self))
    },
    zero_grad = function(set_to_none = FALSE) {
      for (p in self$parameters) {
        if (!is_undefined_tensor(p$grad)) {
          if (set_to_none) p$grad <- NULL
          else p$grad <- torch_zeros_like(p$grad)
        }
      }
      invisible(NULL)
    },
    apply = function(fn) {
      for (m in private$modules_) m$apply(fn)
      fn(self)
      invisible(create_nn_module_callable(self))
    },
    named_parameters = function(recursive = TRUE) {
      if (recursive) self$parameters else private$parameters_
    },
    named_buffers = function(recursive = TRUE) {
      if (recursive) self$buffers else private$buffers_
    },
    requires_grad_ = function(requires_grad = TRUE) {
      for (p in self$parameters) p$requires_grad_(requires_grad)
      invisible(create_nn_module_callable(self))
    }
  ),
  private = list(
    training_ = TRUE,
    parameters_ = list(),
    buffers_ = list(),
    modules_ = list(),
    non_persistent_buffers_ = character()
  ),
  active = list(
    training = function(value) {
      if (!missing(value)) {
        if (!(is.logical(value) && length(value) == 1 && !is.na(value))) {
          .value_error("Field `training` must be a logical flag.")
        }
        private$training_ <- value
        if (!is.null(private$py)) .nn_set(private$py, "training", "", value)
      }
      private$training_
    },
    parameters = function(value) {
      if (!missing(value)) {
        .runtime_error(paste0("It's not possible to modify the parameters list.\n",
                              " You can modify the parameter in-place or use",
                              " `module$parameter_name <- new_value`"))
      }
      .unique_named(c(.prefixed(private$modules_, "parameters"),
                      .drop_null(private$parameters_)))
    },
    buffers = function(value) {
      if (!missing(value)) {
        .runtime_error("It's not possible to modify the buffers list.")
      }
      .unique_named(c(.prefixed(private$modules_, "buffers"), .drop_null(private$buffers_)))
    },
    modules = function(value) {
      if (!missing(value)) .runtime_error("It's not possible to modify the modules list.")
      out <- list(create_nn_module_callable(self))
      for (m in private$modules_) out <- c(out, m$modules)
      keep <- !duplicated(lapply(out, function(m) attr(m, "module")))
      out[keep]
    },
    children = function(value) {
      if (!missing(value)) .runtime_error("It's not possible to modify the children list.")
      private$modules_
    }
  )
)

# Each child's entries, names prefixed with the child's name ("fc.weight").
.prefixed <- function(modules, field) {
  out <- list()
  for (nm in names(modules)) {
    m <- modules[[nm]]
    if (is.null(m)) next
    vals <- m[[field]]
    if (length(vals)) {
      names(vals) <- paste0(nm, ".", names(vals))
      out <- c(out, vals)
    }
  }
  out
}

.drop_null <- function(x) x[!vapply(x, is.null, logical(1))]

.unique_named <- function(x) {
  if (!length(x)) return(list())
  ids <- vapply(x, xptr_address, character(1))
  x[!duplicated(ids)]
}

.keep_or_detach <- function(p, keepvars) {
  if (keepvars) return(p)
  out <- p$detach()
  if (p$requires_grad) out$requires_grad_(TRUE)
  out
}

.value_error <- function(msg) {
  stop(structure(class = c("value_error", "error", "condition"),
                 list(message = msg, call = NULL)))
}

.runtime_error <- function(msg) {
  stop(structure(class = c("runtime_error", "error", "condition"),
                 list(message = msg, call = NULL)))
}

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
  init <- .find_initialize(Module)
  # the generator has initialize's arguments and passes them on by name
  args <- lapply(names(formals(init)), as.name)
  names(args) <- ifelse(names(formals(init)) == "...", "", names(formals(init)))
  gen <- function() NULL
  formals(gen) <- formals(init)
  body(gen) <- bquote(create_nn_module_callable(.(as.call(c(list(quote(Module$new)), args)))))
  attr(gen, "class") <- c(classes, "nn_module_generator")
  attr(gen, "module") <- Module
  gen
}

.find_initialize <- function(gen) {
  while (!is.null(gen)) {
    init <- gen$public_methods$initialize
    if (!is.null(init)) return(init)
    gen <- gen$get_inherit()
  }
  function() NULL
}

create_nn_module_callable <- function(instance) {
  f <- instance$forward
  attr(f, "class") <- instance$.classes
  attr(f, "module") <- instance
  f
}

`$.nn_module` <- function(x, name) {
  attr(x, "module")[[name]]
}

`[[.nn_module` <- function(x, name) {
  attr(x, "module")[[name]]
}

`$.nn_Module` <- function(x, name) x[[name]]

`[[.nn_Module` <- function(x, name) {
  if (identical(name, ".__enclos_env__")) return(NextMethod())
  priv <- .subset2(x, ".__enclos_env__")$private
  if (is.numeric(name)) {
    mods <- priv$modules_
    if (name > length(mods) || name < 1) {
      stop(sprintf("subscript out of bounds: the module has %d children", length(mods)),
           call. = FALSE)
    }
    return(mods[[name]])
  }
  for (tab in c("parameters_", "buffers_", "modules_")) {
    o <- priv[[tab]][[name]]
    if (!is.null(o)) return(o)
  }
  o <- NextMethod()
  if (is.null(o) && !is.null(priv$py)) o <- .nn_attr(priv$py, name)
  o
}

`[[<-.nn_Module` <- function(x, name, value) {
  if (is_nn_module(value)) {
    x$add_module(name, value)
  } else if (is_torch_tensor(value) && nzchar(kind <- .nn_kind(value))) {
    if (kind == "parameter") x$register_parameter(name, value)
    else x$register_buffer(name, value, kind == "buffer_persistent")
  } else if (is_torch_tensor(value) &&
             !is.null(.subset2(x, ".__enclos_env__")$private$parameters_[[name]])) {
    x$register_parameter(name, nn_parameter(value, value$requires_grad))
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

# printing as R torch (cli's rules and bullets, drawn here) ----------------

.nn_print <- function(self, private) {
  width <- getOption("cli.width", getOption("width", 80))
  rule <- function(title) {
    head <- paste0("\u2500\u2500 ", title, " ")
    cat(head, strrep("\u2500", max(width - nchar(head), 0)), "\n", sep = "")
  }
  cat("An `nn_module` containing ", .comma(.param_count(self)), " parameters.\n", sep = "")
  section <- function(title, items) {
    if (!length(items)) return()
    cat("\n")
    rule(title)
    for (s in items) cat("\u2022 ", s, "\n", sep = "")
  }
  mods <- .drop_null(private$modules_)
  section("Modules", vapply(names(mods), function(n) {
    sprintf("%s: <%s> #%s parameters", n, class(mods[[n]])[1], .comma(.param_count(mods[[n]])))
  }, character(1)))
  tstr <- function(t) sprintf("%s [%s]", as.character(t$dtype),
                              paste0("1:", dim(t), collapse = ", "))
  pars <- .drop_null(private$parameters_)
  section("Parameters", vapply(names(pars), function(n) paste0(n, ": ", tstr(pars[[n]])),
                               character(1)))
  bufs <- .drop_null(private$buffers_)
  section("Buffers", vapply(names(bufs), function(n) paste0(n, ": ", tstr(bufs[[n]])),
                            character(1)))
}

.comma <- function(n) format(n, big.mark = ",", scientific = FALSE, trim = TRUE)

.param_count <- function(m) {
  pars <- m$parameters
  if (!length(pars)) return(0)
  sum(vapply(pars, function(p) prod(dim(p)), numeric(1)))
}

# cloning ---------------------------------------------------------------------

clone_module <- function(module, deep = FALSE, ...) {
  self <- if (inherits(module, "nn_module")) attr(module, "module") else module
  if (!deep) {
    return(create_nn_module_callable(self$.__enclos_env__$private$.__clone_r6__(deep = FALSE)))
  }
  .deep_copy(self, new.env())
}

# A deep copy of a module tree: each tensor and each module copied once, so
# what was shared (the same parameter, the same child twice) stays shared.
# `table` keeps tensors by address and modules as (original, copy) pairs.
.deep_copy <- function(instance, table) {
  for (pair in table$modules) {
    if (identical(pair[[1]], instance)) return(pair[[2]])
  }
  priv <- instance$.__enclos_env__$private
  if (!is.null(priv$py)) {
    copy <- .nn_wrap(.nn_clone(priv$py))
    attr(copy, "module")$.__enclos_env__$private$args_ <- priv$args_
    table$modules <- c(table$modules, list(list(instance, copy)))
    return(copy)
  }
  copy <- priv$.__clone_r6__(deep = FALSE)
  cp <- copy$.__enclos_env__$private
  copy_tensor <- function(t) {
    if (is.null(t)) return(t)
    k <- xptr_address(t)
    if (!is.null(table[[k]])) return(table[[k]])
    out <- t$detach()$clone()
    kind <- .nn_kind(t)
    if (kind == "parameter") out <- nn_parameter(out, t$requires_grad)
    else if (nzchar(kind)) out <- nn_buffer(out, kind == "buffer_persistent")
    table[[k]] <- out
    out
  }
  for (nm in names(cp$parameters_)) cp$parameters_[nm] <- list(copy_tensor(cp$parameters_[[nm]]))
  for (nm in names(cp$buffers_)) cp$buffers_[nm] <- list(copy_tensor(cp$buffers_[[nm]]))
  for (nm in names(cp$modules_)) {
    m <- cp$modules_[[nm]]
    if (!is.null(m)) cp$modules_[[nm]] <- .deep_copy(attr(m, "module"), table)
  }
  callable <- create_nn_module_callable(copy)
  table$modules <- c(table$modules, list(list(instance, callable)))
  if (!is.null(cp$finalize_deep_clone)) cp$finalize_deep_clone()
  callable
}

xptr_address <- function(x) .xptr_address(x)

# Whether an external pointer lost its object (read back by readRDS()).
.is_dead <- function(x) {
  !is.null(x) && inherits(tryCatch(.xptr_address(x), error = function(e) e), "error")
}

# Built-in layers: Python modules behind one generic wrapper -------------------

nn_PyModule <- R6::R6Class(
  classname = "nn_PyModule",
  inherit = nn_Module,
  lock_objects = FALSE,
  public = list(
    initialize = function(..., .py = NULL) {
      if (is.null(.py)) {
        private$args_ <- list(...)   # to rebuild it after saveRDS()/readRDS()
        .py <- .nn_new(private$layer_, ...)
      }
      private$py <- .py
      private$mirror()
    },
    .load_from_state_dict = function(state_dict, prefix, refer = FALSE) {
      if (.is_dead(private$py)) {
        # read back from an .rds file: the Python layer is gone; make it anew
        if (is.null(private$args_)) {
          stop("this module was saved from another R session and can't be rebuilt",
               call. = FALSE)
        }
        private$py <- do.call(.nn_new, c(list(private$layer_), private$args_))
        private$mirror()
      }
      super$.load_from_state_dict(state_dict, prefix, refer)
    },
    forward = function(...) .nn_forward(private$py, ...),
    register_parameter = function(name, param) {
      super$register_parameter(name, param)
      .nn_set(private$py, "parameter", name, param)
      invisible(self)
    },
    register_buffer = function(name, tensor, persistent = TRUE) {
      super$register_buffer(name, tensor, persistent)
      .nn_set(private$py, "buffer", name, tensor)
      invisible(self)
    },
    .apply = function(fn) {
      super$.apply(fn)
      for (nm in names(private$parameters_)) {
        .nn_set(private$py, "parameter", nm, private$parameters_[[nm]])
      }
      for (nm in names(private$buffers_)) {
        .nn_set(private$py, "buffer", nm, private$buffers_[[nm]])
      }
      invisible(create_nn_module_callable(self))
    }
  ),
  private = list(
    py = NULL,
    layer_ = NULL,
    args_ = NULL,
    mirror = function() {
      st <- .nn_state(private$py)
      private$parameters_ <- st$parameters
      private$buffers_ <- st$buffers
      private$non_persistent_buffers_ <- as.character(unlist(st$non_persistent))
      private$modules_ <- lapply(st$children, .nn_wrap)
    }
  )
)

# An R generator (class c(name, "nn_module", "nn_module_generator")) for one
# Python layer.
.py_layer <- function(name) {
  classes <- c(name, .loss_classes(name), "nn_module")
  Module <- R6::R6Class(
    classname = name,
    inherit = nn_PyModule,
    lock_objects = FALSE,
    public = list(.classes = classes),
    private = list(layer_ = name)
  )
  .finish_class(Module)
  gen <- function(...) create_nn_module_callable(Module$new(...))
  attr(gen, "class") <- c(classes, "nn_module_generator")
  attr(gen, "module") <- Module
  gen
}

.finish_class <- function(Module) {
  Module$set("private", ".__clone_r6__", nn_Module$public_methods$clone, overwrite = TRUE)
  Module$set("public", "clone", overwrite = TRUE, value = function(deep = FALSE, ...) {
    torch::clone_module(self, deep = deep)
  })
  invisible(Module)
}

# R torch's losses inherit nn_loss (those taking class weights nn_weighted_loss).
.loss_classes <- function(name) {
  if (!endsWith(name, "_loss")) return(character())
  weighted <- c("nn_nll_loss", "nn_bce_loss", "nn_cross_entropy_loss",
                "nn_multilabel_soft_margin_loss", "nn_multi_margin_loss")
  c(if (name %in% weighted) "nn_weighted_loss", "nn_loss")
}

# A Python module (a child of a built-in layer, or a clone) as an R module.
.nn_wrap <- function(py) {
  if (is.null(py)) return(NULL)
  name <- .nn_state(py)$class
  gen <- get0(name, envir = topenv(), inherits = FALSE)
  Module <- if (inherits(gen, "nn_module_generator")) attr(gen, "module") else nn_PyModule
  create_nn_module_callable(Module$new(.py = py))
}

# Every built-in layer; tests check this list against rtorch_py.nn's.
.nn_layer_names <- c(
  "nn_adaptive_avg_pool1d", "nn_adaptive_avg_pool2d", "nn_adaptive_avg_pool3d",
  "nn_adaptive_max_pool1d", "nn_adaptive_max_pool2d", "nn_adaptive_max_pool3d",
  "nn_alpha_dropout", "nn_aum_loss", "nn_avg_pool1d", "nn_avg_pool2d", "nn_avg_pool3d",
  "nn_batch_norm1d", "nn_batch_norm2d", "nn_batch_norm3d", "nn_bce_loss",
  "nn_bce_with_logits_loss", "nn_bilinear", "nn_celu", "nn_constant_pad1d",
  "nn_constant_pad2d", "nn_constant_pad3d", "nn_contrib_sparsemax", "nn_conv1d", "nn_conv2d", "nn_conv3d",
  "nn_conv_transpose1d", "nn_conv_transpose2d", "nn_conv_transpose3d",
  "nn_cosine_embedding_loss", "nn_cross_entropy_loss", "nn_dropout", "nn_dropout2d",
  "nn_dropout3d", "nn_elu", "nn_embedding", "nn_embedding_bag", "nn_flatten", "nn_gelu",
  "nn_glu", "nn_group_norm", "nn_gru", "nn_hardshrink", "nn_hardsigmoid", "nn_hardswish",
  "nn_hardtanh", "nn_hinge_embedding_loss", "nn_huber_loss", "nn_identity",
  "nn_kl_div_loss", "nn_l1_loss", "nn_layer_norm", "nn_leaky_relu", "nn_linear",
  "nn_log_sigmoid", "nn_log_softmax", "nn_lp_pool1d", "nn_lp_pool2d", "nn_lstm",
  "nn_margin_ranking_loss", "nn_max_pool1d", "nn_max_pool2d", "nn_max_pool3d", "nn_mish",
  "nn_mse_loss", "nn_multi_margin_loss", "nn_multihead_attention",
  "nn_multilabel_margin_loss",
  "nn_multilabel_soft_margin_loss", "nn_nll_loss", "nn_poisson_nll_loss", "nn_prelu",
  "nn_reflection_pad1d", "nn_reflection_pad2d", "nn_relu", "nn_relu6",
  "nn_replication_pad1d", "nn_replication_pad2d", "nn_replication_pad3d", "nn_rnn",
  "nn_selu", "nn_sigmoid", "nn_silu", "nn_smooth_l1_loss", "nn_soft_margin_loss",
  "nn_softmax", "nn_softmin", "nn_softplus", "nn_softshrink", "nn_softsign", "nn_tanh",
  "nn_tanhshrink", "nn_threshold", "nn_triplet_margin_loss", "nn_unflatten", "nn_upsample",
  "nn_zero_pad1d", "nn_zero_pad2d"
)
for (.name in .nn_layer_names) assign(.name, .py_layer(.name))
rm(.name)

# Containers (R modules, so they can hold R-defined modules) -------------------

nn_sequential <- nn_module(
  "nn_sequential",
  initialize = function(...) {
    modules <- list(...)
    nms <- names(modules)
    for (i in seq_along(modules)) {
      nm <- if (!is.null(nms) && nzchar(nms[i])) nms[i] else i - 1
      self$add_module(nm, modules[[i]])
    }
  },
  forward = function(input) {
    for (module in private$modules_) input <- module(input)
    input
  }
)

length.nn_sequential <- function(x) length(attr(x, "module")$.__enclos_env__$private$modules_)

`[[.nn_sequential` <- function(x, name) {
  if (is.numeric(name) && length(name) == 1) {
    return(attr(x, "module")$.__enclos_env__$private$modules_[[name]])
  }
  NextMethod()
}

`[.nn_sequential` <- function(x, i) {
  do.call(nn_sequential, lapply(i, function(j) x[[j]]))
}

nn_prune_head <- function(x, head_size = 1L) UseMethod("nn_prune_head")

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
    mods <- append(private$modules_, list(module), after = index - 1)
    private$modules_ <- list()
    for (i in seq_along(mods)) self$add_module(i - 1, mods[[i]])
    invisible(self)
  },
  append = function(module) {
    self$add_module(length(private$modules_), module)
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

`[[.nn_module_list` <- function(x, name) {
  if (is.numeric(name) && length(name) == 1) {
    return(attr(x, "module")$.__enclos_env__$private$modules_[[name]])
  }
  NextMethod()
}

as.list.nn_module_list <- function(x, ...) {
  unname(attr(x, "module")$.__enclos_env__$private$modules_)
}

length.nn_module_list <- function(x) length(attr(x, "module")$.__enclos_env__$private$modules_)

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
