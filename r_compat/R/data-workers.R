# dataloader(num_workers > 0): batches are made by R worker processes
# (socket workers of R's parallel package). Each worker loads the shim, the
# worker_packages and worker_globals, seeds its generators, runs
# worker_init_fn(id) and receives the dataset through .serialize_with_python() (R/save.R);
# batches come back the same way, in order, one batch in flight per worker.

.workers_available <- function() requireNamespace("parallel", quietly = TRUE)

# Runs in the worker.
.worker_setup <- function(libpaths, id, num_workers, seed, init_fn, globals, packages,
                          dataset_raw) {
  .libPaths(libpaths)
  suppressPackageStartupMessages(library(torch))
  for (p in packages) library(p, character.only = TRUE)
  for (nm in names(globals)) assign(nm, globals[[nm]], envir = globalenv())
  assign(".worker_info", list(id = id, workers = num_workers, seed = seed), envir = globalenv())
  set.seed(seed)
  torch::torch_manual_seed(seed)
  if (!is.null(init_fn)) init_fn(id)
  assign(".rtorch_worker_dataset", torch:::.unserialize_with_python(dataset_raw), envir = globalenv())
  TRUE
}

# Runs in the worker: one batch, serialized for the trip back.
.worker_fetch <- function(idx, has_getbatch, collate_fn) {
  ds <- get(".rtorch_worker_dataset", envir = globalenv())
  # the default collation is the worker's own (functions calling Python can't travel)
  if (is.null(collate_fn)) collate_fn <- if (has_getbatch) .data_default_convert else .data_collate
  data <- if (has_getbatch) ds$.getbatch(idx) else lapply(idx, function(i) ds$.getitem(i))
  torch:::.serialize_with_python(list(batch = collate_fn(data)))
}

.WorkerIter <- R6::R6Class(
  "dataloader_worker_iter",
  lock_objects = FALSE,
  public = list(
    initialize = function(loader) {
      self$loader <- loader
      n <- loader$num_workers
      seeds <- sample.int(1e6, n)  # from R's generator: set.seed() makes runs repeatable
      dataset_raw <- .serialize_with_python(loader$dataset)
      private$cluster <- parallel::makePSOCKcluster(n)
      for (i in seq_len(n)) {
        parallel:::sendCall(private$cluster[[i]], .worker_setup,
                            list(.libPaths(), i, n, seeds[[i]], loader$worker_init_fn,
                                 loader$worker_globals, loader$worker_packages, dataset_raw))
      }
      for (i in seq_len(n)) private$result(i, -1)
      private$batches <- if (loader$.auto_collation) loader$batch_sampler$.iter() else
        loader$sampler$.iter()
      for (i in seq_len(n)) private$dispatch(i)
    },
    .next = function() {
      if (length(private$queue) == 0) {
        private$close()
        return(exhausted())
      }
      i <- private$queue[[1]]
      private$queue <- private$queue[-1]
      raw <- private$result(i, self$loader$timeout)
      private$dispatch(i)
      .unserialize_with_python(raw)$batch
    }
  ),
  private = list(
    cluster = NULL,
    batches = NULL,
    queue = integer(0),
    dispatch = function(i) {
      idx <- private$batches()
      if (is_exhausted(idx)) return(invisible())
      l <- self$loader
      parallel:::sendCall(private$cluster[[i]], .worker_fetch,
                          list(idx, l$.has_getbatch, if (l$.custom_collate) l$collate_fn))
      private$queue <- c(private$queue, i)
    },
    # Worker i's answer; `timeout` in milliseconds (<= 0: wait as long as it takes).
    result = function(i, timeout) {
      node <- private$cluster[[i]]
      if (!is.null(timeout) && timeout > 0 &&
          !socketSelect(list(node$con), FALSE, timeout = timeout / 1000)) {
        private$close()
        .runtime_error("dataloader worker timed out.")
      }
      out <- parallel:::recvResult(node)
      if (inherits(out, "try-error")) {
        private$close()
        cond <- attr(out, "condition")
        .runtime_error("dataloader worker ", i, " failed: ",
                       if (is.null(cond)) as.character(out) else conditionMessage(cond))
      }
      out
    },
    close = function() {
      if (!is.null(private$cluster)) try(parallel::stopCluster(private$cluster), silent = TRUE)
      private$cluster <- NULL
      private$queue <- integer(0)
    },
    finalize = function() private$close()
  )
)

# worker_globals given by name: their values, from where dataloader() was called.
.worker_globals <- function(globals, env) {
  if (!is.character(globals)) return(globals)
  found <- mget(globals, envir = env, inherits = TRUE, ifnotfound = list(NULL))
  missing <- globals[vapply(found, is.null, logical(1))]
  if (length(missing)) {
    .runtime_error("Could not find an object with name '", paste(missing, collapse = "', '"),
                   "' for worker_globals.")
  }
  found
}
