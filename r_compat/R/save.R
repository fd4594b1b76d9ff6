# torch_save() / torch_load(). Tensors and plain lists of tensors, numbers
# and vectors are written in rtorch-py's format (a zip of JSON and .npy
# arrays, readable from Python too). Other R values (modules, datasets...)
# are serialized by R with every Python object (tensors, modules' Python
# modules) taken out by a refhook and stored beside it; modules' R6 objects
# go with them (the Python modules hold their children's, R doesn't), joined
# to their Python modules again on loading. Loading never runs code.

.is_plain_value <- function(x) {
  if (is_torch_tensor(x)) return(TRUE)
  if (is.null(x)) return(TRUE)
  if (is.atomic(x)) {
    extra <- setdiff(names(attributes(x)), "names")
    return(length(extra) == 0 && is.null(names(x)) && !is.character(x) || 
             is.character(x) && length(x) == 1 && is.null(attributes(x)))
  }
  if (is.list(x) && !is.object(x)) return(all(vapply(x, .is_plain_value, logical(1))))
  FALSE
}

torch_save <- function(obj, path, ..., compress = TRUE) {
  if (!is.character(path) || length(path) != 1) {
    stop("torch_save(): `path` must be a file name (use torch_serialize() for a raw vector)",
         call. = FALSE)
  }
  path <- path.expand(path)
  if (.is_plain_value(obj)) {
    .save_value(obj, path)
  } else {
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
    .save_r(path, as.integer(rds), refs)
  }
  invisible(obj)
}

# The Python modules an R value holds (in its modules' callables).
.python_modules_in <- function(obj) {
  found <- list()
  serialize(obj, connection = NULL, refhook = function(x) {
    if (inherits(x, "nn_py_module")) found[[length(found) + 1L]] <<- x
    NULL
  })
  found
}

torch_serialize <- function(obj, ...) {
  tmp <- tempfile(fileext = ".pt")
  on.exit(unlink(tmp), add = TRUE)
  torch_save(obj, path = tmp, ...)
  readBin(tmp, what = "raw", n = file.size(tmp))
}

torch_load <- function(path, device = "cpu") {
  .External(C_call, .py_fn("cpu_only"), device)
  if (is.raw(path)) {
    tmp <- tempfile(fileext = ".pt")
    on.exit(unlink(tmp), add = TRUE)
    writeBin(path, tmp)
    path <- tmp
  }
  if (!is.character(path) || length(path) != 1 || !file.exists(path)) {
    stop("torch_load(): `path` must be an existing file (or a raw vector from ",
         "torch_serialize())", call. = FALSE)
  }
  out <- .load_r(path.expand(path))
  if (identical(out[[1]], "value")) return(out[[2]])
  refs <- out[[4]]
  obj <- unserialize(as.raw(out[[3]]), refhook = function(s) refs[[as.integer(s)]])
  if (!inherits(obj, "rtorch_with_modules")) return(obj)
  for (pair in obj[[2]]) .nn_relink(pair[[2]], pair[[1]])
  obj[[1]]
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

# Whether a raw vector or connection starts like an R serialization (gzip or
# an uncompressed RDS header); a connection's position is left unchanged.
is_rds <- function(con) {
  if (is.raw(con)) {
    bytes <- con[seq_len(min(2L, length(con)))]
  } else {
    pos <- seek(con)
    bytes <- readBin(con, what = "raw", n = 2L)
    seek(con, pos)
  }
  if (length(bytes) < 2) return(FALSE)
  identical(bytes, as.raw(c(0x1f, 0x8b))) ||
    (bytes[[2]] == as.raw(0x0a) && bytes[[1]] %in% charToRaw("XAB"))
}
