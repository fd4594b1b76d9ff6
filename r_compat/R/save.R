# torch_save() / torch_load() in R torch 0.17's format: a safetensors file whose
# metadata "__r__" says what it holds (rtorch_py/serialization.py writes and reads
# the bytes): a tensor; a list (its tensors stored by name, the list itself
# serialize()d by R as the uint8 tensor "__robj__", each tensor replaced by its
# name); a module (its state dict, and the module object); a dataset (its state
# dict, and the object). Loading never runs code from the file: modules are
# rebuilt from a description of their Python side (written here) or, for files
# R torch wrote, from their class as defined in the session; datasets get their
# tensors assigned. torch_load() also reads R torch's older RDS files, plain
# safetensors files (as a named list of tensors), PyTorch's .pt/.pth zip files
# and the zip files earlier versions of this shim wrote.

torch_save <- function(obj, path, ..., compress = TRUE) {
  UseMethod("torch_save")
}

torch_save.default <- function(obj, path, ..., compress = TRUE) {
  .runtime_error(sprintf(paste0("torch_save() saves tensors, lists, modules and datasets, ",
                                "not an object of class <%s>"),
                         paste(class(obj), collapse = "/")))
}

torch_save.torch_tensor <- function(obj, path, ..., compress = TRUE) {
  .save_file(path, "tensor", list("...unnamed..." = obj))
  invisible(obj)
}

torch_save.list <- function(obj, path, ..., compress = TRUE) {
  tensors <- new.env(parent = emptyenv())  # each tensor by the name that replaces it
  object <- .map_leaves(obj, is_torch_tensor, function(v) {
    key <- xptr_address(v)
    assign(key, v, envir = tensors)
    structure(key, class = "torch_tensor_address")
  })
  .save_file(path, "list", as.list(tensors, sorted = TRUE), object)
  invisible(obj)
}

torch_save.nn_module <- function(obj, path, ..., compress = TRUE) {
  described <- .nn_describe(.nn_py_of(obj))  # list(json, modules with an R side, extra tensors)
  object <- obj
  attr(object, "rtorch_module") <- list(
    structure = described[[1]],
    fronts = lapply(described[[2]], .nn_front)
  )
  .save_file(path, "module", obj$state_dict(), object, described[[3]])
  invisible(obj)
}

torch_save.dataset <- function(obj, path, ..., compress = TRUE) {
  .save_file(path, "state_dict", obj$state_dict(), obj)
  invisible(obj)
}

torch_save.name <- function(obj, path, ..., compress = TRUE) {
  if (!is_exhausted(obj)) .runtime_error("Cannot save `name` object.")
  # (R torch writes this one as RDS)
  con <- .write_con(path)
  on.exit(if (!identical(con, path)) close(con), add = TRUE)
  saveRDS(list(type = "coro::exhausted", version = 3), con)
  invisible(obj)
}

# The list `x` with each element `is_leaf()` holds for, in it or in the plain
# lists nested in it, replaced by leaf(element).
.map_leaves <- function(x, is_leaf, leaf) {
  lapply(x, function(v) {
    if (is_leaf(v)) leaf(v)
    else if (is.list(v) && !is.object(v)) .map_leaves(v, is_leaf, leaf)
    else v
  })
}

.save_file <- function(path, kind, state, object = NULL, extra = list()) {
  robj <- if (is.null(object)) NULL else serialize(object, connection = NULL)
  bytes <- .r_file(kind, as.list(names(state)), unname(state), robj, as.list(names(extra)),
                   unname(extra))
  con <- .write_con(path)
  on.exit(if (!identical(con, path)) close(con), add = TRUE)
  writeBin(bytes, con)
}

.write_con <- function(path) {
  if (inherits(path, "connection")) return(path)
  if (!is.character(path) || length(path) != 1) {
    .value_error(sprintf("`path` must be a connection or an actual path, got <%s>.",
                         paste(class(path), collapse = "/")))
  }
  file(path.expand(path), open = "wb")
}

torch_serialize <- function(obj, ...) {
  con <- rawConnection(raw(), open = "wb")
  on.exit(close(con), add = TRUE)
  torch_save(obj = obj, path = con, ...)
  rawConnectionValue(con)
}

torch_load <- function(path, device = "cpu") {
  if (is.null(device)) .value_error('Unexpected device NULL')
  if (!identical(as.character(device), "cpu")) {
    stop(sprintf("only the 'cpu' device exists here, got '%s'", device), call. = FALSE)
  }
  data <- .read_all(path)
  if (is_rds(data)) return(.legacy_torch_load(data))
  if (.is_zip(data)) return(.load_zip(data))
  file <- .read_r_file(data)  # list(kind, names, tensors, robj)
  kind <- file[[1]]
  state <- stats::setNames(file[[3]], unlist(file[[2]]))
  if (is.null(kind)) {
    warning(paste0("File not saved with `torch_save()`, returning as is.\n",
                   "Use `safetensors::safe_load_file()` to silence this warning."),
            call. = FALSE)
    return(state)
  }
  if (kind == "tensor") return(state[[1]])
  object <- unserialize(file[[4]])
  switch(kind,
    list = .map_leaves(object, function(v) inherits(v, "torch_tensor_address"),
                       function(v) state[[v]]),
    module = .load_module(object, state),
    state_dict = .load_fields(object, state),
    .not_implemented_error(sprintf("torch_load: files of type '%s' are not supported", kind))
  )
}

# All the bytes of a file, a raw vector or a connection (from its position on).
.read_all <- function(path) {
  if (is.raw(path)) return(path)
  if (inherits(path, "connection")) {
    if (!isOpen(path)) {
      open(path, "rb")
      on.exit(close(path), add = TRUE)
    }
    chunks <- list()
    repeat {
      chunk <- readBin(path, what = "raw", n = 1048576L)
      if (!length(chunk)) break
      chunks[[length(chunks) + 1L]] <- chunk
    }
    return(do.call(c, c(list(raw()), chunks)))
  }
  if (!is.character(path) || length(path) != 1 || !file.exists(path.expand(path))) {
    .value_error(paste0("torch_load(): `path` must be an existing file, a connection or a raw ",
                        "vector (from torch_serialize())"))
  }
  path <- path.expand(path)
  readBin(path, what = "raw", n = file.size(path))
}

.is_zip <- function(data) length(data) >= 4 && identical(data[1:4], as.raw(c(0x50, 0x4b, 3, 4)))

# A dataset's tensors (its state dict) assigned to its fields, as R torch's
# default load_state_dict() does (the object's own methods are not called).
.load_fields <- function(object, state) {
  for (nm in names(state)) assign(nm, state[[nm]], envir = object)
  object
}

# Modules: the Python side rebuilt from the description saved with it, each
# module with an R side joined to its saved R6 object; or, for a module R torch
# saved, rebuilt from its class as defined in this session.
.load_module <- function(object, state) {
  saved <- attr(object, "rtorch_module")
  if (is.null(saved)) return(.load_rtorch_module(object, state))
  rebuilt <- .nn_rebuild(saved$structure, state)  # list(root, modules with an R side)
  for (i in seq_along(saved$fronts)) .nn_relink(saved$fronts[[i]], rebuilt[[2]][[i]])
  .nn_callable(rebuilt[[1]])
}

# Earlier versions of this shim wrote zip files (their R objects with the Python
# objects taken out); PyTorch's .pt/.pth files are zips too.
.load_zip <- function(data) {
  tmp <- tempfile(fileext = ".pt")
  on.exit(unlink(tmp), add = TRUE)
  writeBin(data, tmp)
  out <- .load_r(tmp)
  if (identical(out[[1]], "value")) return(out[[2]])
  refs <- out[[4]]
  obj <- unserialize(as.raw(out[[3]]), refhook = function(s) refs[[as.integer(s)]])
  if (!inherits(obj, "rtorch_with_modules")) return(obj)
  for (pair in obj[[2]]) .nn_relink(pair[[2]], pair[[1]])
  obj[[1]]
}

# R torch's older files: RDS of list(values, type, version), the tensors in
# libtorch's own format (serialize_version 1 and 2).
.legacy_torch_load <- function(data) {
  con <- gzcon(rawConnection(data))
  on.exit(close(con), add = TRUE)
  r <- readRDS(con)
  if (!is.null(r$version) && r$version > 3) {
    .not_implemented_error("This version of torch can't load files with serialization version > 3")
  }
  switch(r$type,
    tensor = .legacy_tensor(r),
    list = .map_leaves(r$values, function(v) inherits(v, "torch_serialized_tensor"),
                       function(v) .legacy_torch_load(unclass(v))),
    module = .load_rtorch_module(r$module, lapply(r$state_dict, .legacy_torch_load)),
    "coro::exhausted" = exhausted(),
    .not_implemented_error(sprintf("torch_load: legacy files of type '%s' are not supported",
                                   r$type))
  )
}

.legacy_tensor <- function(r) {
  bytes <- r$values
  if (is.character(bytes)) bytes <- .base64_bytes(paste(bytes, collapse = ""))  # (version 1)
  .libtorch_tensor(bytes)
}

# A state dict saved by PyTorch (torch.save(model.state_dict(), path)) or by
# torch_save(): a named list of tensors.
load_state_dict <- function(path, ..., legacy_stream = FALSE) {
  out <- torch_load(path)
  if (!is.list(out) || is.null(names(out))) {
    stop("load_state_dict(): the file doesn't hold a state dict (a named list of tensors)",
         call. = FALSE)
  }
  out
}

# Whether a raw vector or connection starts like an R serialization (compressed by
# gzip, bzip2 or xz, or not); a connection's position is left unchanged.
is_rds <- function(con) {
  if (is.raw(con)) {
    bytes <- con[seq_len(min(6L, length(con)))]
  } else {
    pos <- seek(con)
    bytes <- readBin(con, what = "raw", n = 6L)
    seek(con, pos)
  }
  if (length(bytes) < 2) return(FALSE)
  starts <- function(magic) length(bytes) >= length(magic) &&
    identical(bytes[seq_along(magic)], magic)
  starts(as.raw(c(0x1f, 0x8b))) || starts(charToRaw("BZh")) ||
    starts(as.raw(c(0xfd, 0x37, 0x7a, 0x58, 0x5a))) ||
    (bytes[[2]] == as.raw(0x0a) && bytes[[1]] %in% charToRaw("XAB"))
}

# The shim's own transport of R objects holding Python ones (the data loader's
# worker processes): R's serialization with every Python object (tensors, modules'
# Python modules) taken out by a refhook and stored beside it; modules' R6 objects
# go with them, joined to their Python modules again on loading.
.serialize_with_python <- function(obj) {
  fronts <- .nn_fronts(.python_modules_in(obj))  # list(list(module, R6 object), ...)
  if (length(fronts)) obj <- structure(list(obj, fronts), class = "rtorch_with_modules")
  refs <- list()
  keys <- character()
  hook <- function(x) {
    # other external pointers are written as R writes them (null once loaded)
    if (typeof(x) != "externalptr" || !.is_saveable_py(x)) return(NULL)
    k <- .py_key(x)
    i <- match(k, keys)
    if (is.na(i)) {
      refs[[length(refs) + 1L]] <<- x
      keys <<- c(keys, k)
      i <- length(refs)
    }
    as.character(i)
  }
  rds <- serialize(obj, connection = NULL, refhook = hook)
  tmp <- tempfile(fileext = ".pt")
  on.exit(unlink(tmp), add = TRUE)
  .save_r(tmp, as.integer(rds), refs)
  readBin(tmp, what = "raw", n = file.size(tmp))
}

.unserialize_with_python <- function(raw) .load_zip(raw)

# The Python modules an R value holds (in its modules' callables).
.python_modules_in <- function(obj) {
  found <- list()
  serialize(obj, connection = NULL, refhook = function(x) {
    if (inherits(x, "nn_py_module")) found[[length(found) + 1L]] <<- x
    NULL
  })
  found
}

# A module R torch saved holds R torch's own R6 instance, whose methods are R
# torch's (they don't run here, and loading runs no code from the file). The
# module is made again from its class as defined in this session, without
# calling initialize(): the saved instance gives its fields, children,
# parameters' and buffers' names; the state dict their values. Built-in layers
# are made by their generator, given the saved fields their arguments are named by.
.load_rtorch_module <- function(object, state, prefix = "") {
  inst <- if (is.environment(object)) object else attr(object, "module")
  if (!is.environment(inst) || is.null(.subset2(inst, ".__enclos_env__"))) {
    .value_error("torch_load: the file's module is damaged (no R6 object in it)")
  }
  saved <- .subset2(inst, ".__enclos_env__")$private
  classes <- .subset2(inst, ".classes")
  gen <- .module_class(classes[[1]])
  key <- function(name) paste0(prefix, name)
  fields <- .saved_fields(inst)
  if (!is.null(attr(gen, "module")$private_fields$layer_)) {  # a built-in layer
    args <- fields[intersect(names(fields), unlist(.nn_layer_args(classes[[1]])))]
    module <- do.call(gen, args)
    py <- .nn_py_of(module)
    for (nm in names(.nn_named(py, "parameters", FALSE))) {
      if (!key(nm) %in% names(state)) .nn_register(py, "parameter", nm, NULL)
    }
  } else {
    module <- create_nn_module_callable(.r6_uninitialized(attr(gen, "module")))
    self <- attr(module, "module")
    for (nm in names(fields)) assign(nm, fields[[nm]], envir = self)
    for (nm in names(saved$modules_)) {
      self$add_module(nm, .load_rtorch_module(saved$modules_[[nm]], state, key(paste0(nm, "."))))
    }
    py <- .nn_py_of(module)
  }
  for (nm in names(saved$parameters_)) {
    if (key(nm) %in% names(state)) {
      .nn_register(py, "parameter", nm, nn_parameter(state[[key(nm)]]))
    }
  }
  for (nm in names(saved$buffers_)) {
    if (key(nm) %in% names(state)) {
      .nn_register(py, "buffer", nm, state[[key(nm)]],
                   !nm %in% saved$non_persistent_buffers_)
    }
  }
  if (isFALSE(saved$training_)) module$eval()
  module
}

# A module class defined in this session (or a package's, or torch's own) by its
# class name: a generator of that name, else one whose class it is.
.module_class <- function(classname) {
  is_gen <- function(x) inherits(x, "nn_module_generator") && identical(class(x)[[1]], classname)
  places <- c(list(globalenv(), topenv()), lapply(loadedNamespaces(), asNamespace))
  for (env in places) {
    gen <- get0(classname, envir = env, inherits = FALSE)
    if (is_gen(gen)) return(gen)
  }
  for (nm in ls(globalenv())) {
    gen <- get0(nm, envir = globalenv(), inherits = FALSE)
    if (is_gen(gen)) return(gen)
  }
  .value_error(sprintf(paste0("torch_load: can't rebuild the module saved by R torch: its ",
                              "class '%s' is not defined in this session. Define it (with ",
                              "nn_module(\"%s\", ...)) before loading, as its code is not ",
                              "run from the file."), classname, classname))
}

# The saved instance's own fields (not its methods, nor R6's and R torch's parts).
.saved_fields <- function(inst) {
  out <- list()
  for (nm in ls(inst, all.names = TRUE)) {
    if (nm %in% c(".__enclos_env__", ".classes", "training") || bindingIsActive(nm, inst)) next
    value <- get(nm, envir = inst)
    if (!is.function(value)) out[nm] <- list(value)
  }
  out
}

# An object of an R6 class made without running its initialize().
.r6_uninitialized <- function(Class) {
  env <- new.env(parent = topenv())
  env$Class <- Class
  Bare <- R6::R6Class(inherit = Class, lock_objects = FALSE, parent_env = env,
                      public = list(initialize = function(...) invisible(NULL)))
  .finish_class(Bare)
  Bare$new()
}
