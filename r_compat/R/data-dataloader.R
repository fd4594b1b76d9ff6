# dataloader(): batches from a dataset, as R torch's. Map-style datasets are
# read through a batch sampler (.getbatch(indices) when the dataset has it,
# else .getitem(i) per example, collated in one Python call); iterable
# datasets are read until exhausted. With num_workers > 0, R worker
# processes make the batches (data-workers.R).

DataLoader <- R6::R6Class(
  "dataloader",
  lock_objects = FALSE,
  public = list(
    initialize = function(dataset, batch_size = 1, shuffle = FALSE, sampler = NULL,
                          batch_sampler = NULL, num_workers = 0, collate_fn = NULL,
                          pin_memory = FALSE, drop_last = FALSE, timeout = -1,
                          worker_init_fn = NULL, worker_globals = NULL,
                          worker_packages = NULL) {
      if (num_workers > 0) .warn_tensor_fields(dataset)
      if (num_workers > 0 && (inherits(dataset, "iterable_dataset") || !.workers_available())) {
        # no worker processes then: the same batches, loaded in this process
        warning(sprintf(paste0("num_workers = %s is ignored: batches are loaded in this process ",
                               "(%s); results are the same"), num_workers,
                        if (inherits(dataset, "iterable_dataset")) "iterable dataset" else
                          "the parallel package is not available"), call. = FALSE)
        num_workers <- 0
      }
      self$dataset <- dataset
      self$batch_size <- batch_size
      self$drop_last <- drop_last
      self$num_workers <- num_workers
      self$timeout <- timeout
      self$worker_init_fn <- worker_init_fn
      self$worker_globals <- worker_globals
      self$worker_packages <- worker_packages
      self$.iterable <- inherits(dataset, "iterable_dataset")
      if (self$.iterable) {
        # (shuffle is ignored, as R torch ignores it: the dataset gives the order)
        if (!is.null(sampler) || !is.null(batch_sampler)) {
          .value_error("an iterable dataset can't be used with a sampler or batch_sampler")
        }
      } else {
        if (!is.null(batch_sampler)) {
          if (batch_size != 1 || isTRUE(shuffle) || !is.null(sampler) || isTRUE(drop_last)) {
            .value_error("batch_sampler option is mutually exclusive with batch_size, ",
                         "shuffle, sampler, and drop_last")
          }
          batch_size <- NULL
          self$batch_size <- NULL
        } else {
          if (!is.null(sampler) && isTRUE(shuffle)) {
            .value_error("sampler option is mutually exclusive with shuffle")
          }
          if (is.null(sampler)) {
            sampler <- if (isTRUE(shuffle)) RandomSampler(dataset) else SequentialSampler(dataset)
          }
          if (!is.null(batch_size)) batch_sampler <- BatchSampler(sampler, batch_size, drop_last)
        }
      }
      self$sampler <- sampler
      self$batch_sampler <- batch_sampler
      self$.auto_collation <- !is.null(batch_sampler)
      self$.has_getbatch <- !self$.iterable && !is.null(dataset$.getbatch)
      self$.custom_collate <- !is.null(collate_fn)
      if (is.null(collate_fn)) {
        collate_fn <- if (self$.has_getbatch) .data_default_convert else .data_collate
      }
      self$collate_fn <- collate_fn
    },
    .iter = function() {
      if (self$num_workers > 0) .WorkerIter$new(self) else .DataLoaderIter$new(self)
    },
    .length = function() {
      if (self$.iterable) {
        n <- length(self$dataset)
        if (is.na(n)) return(NA_integer_)
        return(.n_batches(n, self$batch_size, self$drop_last))
      }
      if (!is.null(self$batch_sampler)) length(self$batch_sampler) else length(self$sampler)
    }
  )
)

.DataLoaderIter <- R6::R6Class(
  "dataloader_iter",
  lock_objects = FALSE,
  public = list(
    .next = NULL,  # the next batch, or coro's exhausted(): a plain function (.loader_next)
    initialize = function(loader) {
      self$loader <- loader
      self$.next <- .loader_next(loader)
    },
    .has_next = function() stop("use dataloader_next() and test for its `completed` value")
  )
)

# The function giving a loader's batches one by one. What a batch needs (the
# dataset's batch or item reader, the collate function, the sampler's order) is
# taken once, when iteration starts: per batch, one call of each.
.loader_next <- function(l) {
  if (l$.iterable) return(.iterable_next(l))
  ds <- l$dataset
  if (!l$.auto_collation) {
    indices <- l$sampler$.iter()
    return(function() {
      idx <- indices()
      if (is_exhausted(idx)) idx else ds[idx]
    })
  }
  fast <- .tensor_batches(l)
  if (!is.null(fast)) return(fast)
  batches <- l$batch_sampler$.iter()
  collate <- l$collate_fn
  read <- if (l$.has_getbatch) ds$.getbatch else function(idx) lapply(idx, function(i) ds$.getitem(i))
  function() {
    idx <- batches()
    if (is_exhausted(idx)) idx else collate(read(idx))
  }
}

# Fast path (labelled): a tensor_dataset read by the built-in batch sampler over
# the built-in random or sequential sampler, with the default collation. The
# epoch's order is drawn in R, as the batch sampler draws it; Python cuts it and
# reads the rows: one crossing a batch instead of the sampler's, the reader's and
# the collation's R closures. NULL for any other loader.
.tensor_batches <- function(l) {
  ds <- l$dataset
  bs <- l$batch_sampler
  if (l$.custom_collate || class(ds)[[1]] != "tensor_dataset" ||
      class(bs)[[1]] != "utils_sampler_batch" ||
      !class(bs$sampler)[[1]] %in% c("utils_sampler_random", "utils_sampler_sequential") ||
      !identical(body(ds$.getbatch), body(.tensor_dataset_class$public_methods$.getbatch))) {
    return(NULL)
  }
  epoch <- .data_batches(bs$sampler$.indices(), bs$batch_size, bs$drop_last)
  function() {
    b <- .data_next_batch(epoch, .subset2(ds, "tensors"))  # (.subset2: `$` without dispatch)
    if (is.null(b)) exhausted() else b
  }
}

.iterable_next <- function(l) {
  it <- as_iterator.iterable_dataset(l$dataset)
  collate <- l$collate_fn
  function() {
    batch <- .next_items(it, l$batch_size, l$drop_last)
    if (is_exhausted(batch)) batch else collate(batch)
  }
}

dataloader <- function(dataset, batch_size = 1, shuffle = FALSE, sampler = NULL,
                       batch_sampler = NULL, num_workers = 0, collate_fn = NULL,
                       pin_memory = FALSE, drop_last = FALSE, timeout = -1,
                       worker_init_fn = NULL, worker_globals = NULL, worker_packages = NULL) {
  if (num_workers > 0) worker_globals <- .worker_globals(worker_globals, parent.frame())
  DataLoader$new(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn,
                 pin_memory, drop_last, timeout, worker_init_fn, worker_globals,
                 worker_packages)
}

is_dataloader <- function(x) inherits(x, "dataloader")

length.dataloader <- function(x) x$.length()

dataloader_make_iter <- function(dataloader) dataloader$.iter()

dataloader_next <- function(iter, completed = NULL) {
  out <- iter$.next()
  if (is_exhausted(out)) completed else out
}

# What .getbatch returns, as tensors (R arrays and vectors become tensors).
.data_default_convert <- function(data) {
  if (is.list(data)) {
    # (inherits() inline: this runs once a batch)
    for (d in data) if (!inherits(d, "torch_tensor")) return(lapply(data, .data_default_convert))
    return(data)  # (tensors already: as .getbatch() of a tensor_dataset gives them)
  }
  if (is_torch_tensor(data)) return(data)
  cls <- paste(class(data), collapse = "/")
  tryCatch(torch_tensor(data), error = function(e) {
    .value_error("Can't convert data of class: '", cls,
                 "' to a tensor; give the dataloader a collate_fn")
  })
}

# Deprecated in R torch: all batches as a list, for `for (b in enumerate(dl))`.
enumerate <- function(x, ...) UseMethod("enumerate")

enumerate.dataloader <- function(x, max_len = 1e6, ...) {
  warning(structure(class = c("deprecated", "warning", "condition"),
                    list(message = "enumerate() is deprecated; use coro::loop(for (b in dl) ...)",
                         call = NULL)))
  it <- x$.iter()
  out <- list()
  repeat {
    b <- it$.next()
    if (is_exhausted(b) || length(out) >= max_len) break
    out[[length(out) + 1L]] <- b
  }
  out
}

# coro's iterators (R torch registers these methods and re-exports loop(),
# yield() and as_iterator()): for (b in dl) inside coro::loop() or a generator.
as_iterator.dataloader <- function(x) {
  # (a loader's own .iter() in this process makes an iterator object around the
  # function .loader_next gives: the function alone, made once an epoch, is that)
  if (x$num_workers == 0 && identical(body(x$.iter), body(DataLoader$public_methods$.iter))) {
    return(.loader_next(x))
  }
  dataloader_make_iter(x)$.next  # (exhausted() at the end)
}

as_iterator.iterable_dataset <- function(x) {
  it <- x$.iter()
  if (is.function(it)) it else function() it$.next()
}

as_iterator.utils_sampler <- function(x) x$.iter()

# R torch warns, for a parallel dataloader, about each field of the dataset (public,
# not active, or private) that is a tensor or a list holding one: its workers can't
# receive tensors. Ours can (the dataset travels through Python), but the script
# would not run on R torch: the same warning, one per field, in words of our own.
.warn_tensor_fields <- function(dataset) {
  if (!is.environment(dataset)) return(invisible())
  warn <- function(x, nm) {
    if (is_torch_tensor(x)) {
      warning(sprintf(paste0("Datasets used with a parallel dataloader (num_workers > 0) ",
                             "should hold no tensors in their fields: R torch can't pass them ",
                             "to its worker processes (rtorch-py copies them to each worker). ",
                             "Field '%s' holds one."), nm), call. = FALSE)
    } else if (is.list(x) && !is.object(x)) {
      labels <- if (is.null(names(x))) seq_along(x) else
        ifelse(names(x) == "", seq_along(x), names(x))
      for (i in seq_along(x)) warn(x[[i]], paste0(nm, "$", labels[[i]]))
    }
  }
  fields <- function(env) {
    nms <- ls(env, all.names = TRUE, sorted = FALSE)
    nms <- nms[!vapply(nms, bindingIsActive, TRUE, env = env)]
    for (nm in nms) warn(get(nm, envir = env, inherits = FALSE), nm)
  }
  fields(dataset)
  private <- dataset$.__enclos_env__$private
  if (is.environment(private)) fields(private)
  invisible()
}
