# Samplers: R6 objects whose .iter() returns a function giving the next
# (1-based) index, or coro's exhausted() at the end; .length().

Sampler <- R6::R6Class(
  "utils_sampler",
  lock_objects = FALSE,
  public = list(
    initialize = function(data_source) self$data_source <- data_source,
    .length = function() stop("a sampler must define .length()", call. = FALSE),
    .iter = function() {
      idx <- self$.indices()
      i <- 0L
      function() {
        i <<- i + 1L
        if (i > length(idx)) exhausted() else idx[[i]]
      }
    }
  )
)

sampler <- function(name = NULL, inherit = Sampler, ..., private = NULL, active = NULL,
                    parent_env = parent.frame()) {
  .torch_class(name, inherit, list(...), private, active, parent_env, "Sampler",
               c(name, "utils_sampler_generator"))
}

length.utils_sampler <- function(x) x$.length()

# How many batches of `size` items `n` items make.
.n_batches <- function(n, size, drop_last) if (drop_last) n %/% size else (n + size - 1) %/% size

# The next `size` items of the iterator `it` (a list; fewer at its end unless
# `drop_last`), or exhausted() when none are left.
.next_items <- function(it, size, drop_last) {
  items <- list()
  repeat {
    item <- it()
    if (is_exhausted(item)) break
    items[[length(items) + 1L]] <- item
    if (length(items) == size) break
  }
  if (length(items) == 0 || (drop_last && length(items) < size)) exhausted() else items
}

SequentialSampler <- sampler(
  "utils_sampler_sequential",
  .indices = function() seq_len(length(self$data_source)),
  .length = function() length(self$data_source)
)

RandomSampler <- sampler(
  "utils_sampler_random",
  initialize = function(data_source, replacement = FALSE, num_samples = NULL,
                        generator = NULL) {
    if (!is.logical(replacement) || length(replacement) != 1) {
      .value_error("replacement should be TRUE or FALSE")
    }
    if (!is.null(num_samples) && (num_samples <= 0)) {
      .value_error("num_samples should be a positive integer, got ", num_samples)
    }
    self$data_source <- data_source
    self$replacement <- replacement
    self$.num_samples <- num_samples
  },
  .indices = function() {
    n <- length(self$data_source)
    m <- self$num_samples  # (an active binding: read once, it measures the dataset)
    # (R torch's draws: torch_randint() and torch_randperm() counted from 1)
    if (self$replacement) return(as_array(torch_randint(0, n, m, dtype = torch_long())) + 1L)
    out <- integer(0)
    while (length(out) < m) out <- c(out, as_array(torch_randperm(n)) + 1L)
    if (length(out) == m) out else out[seq_len(m)]
  },
  .length = function() self$num_samples,
  active = list(
    num_samples = function() {
      if (is.null(self$.num_samples)) length(self$data_source) else self$.num_samples
    }
  )
)

SubsetRandomSampler <- sampler(
  "utils_sampler_subset_random",
  initialize = function(indices, generator = NULL) self$indices <- indices,
  .indices = function() self$indices[as_array(torch_randperm(length(self$indices))) + 1L],
  .length = function() length(self$indices)
)

BatchSampler <- sampler(
  "utils_sampler_batch",
  initialize = function(sampler, batch_size, drop_last) {
    if (!is.numeric(batch_size) || batch_size <= 0) {
      .value_error("batch_size should be a positive integer, got ", batch_size)
    }
    self$sampler <- sampler
    self$batch_size <- as.integer(batch_size)
    self$drop_last <- isTRUE(drop_last)
  },
  .iter = function() {
    bs <- self$batch_size
    drop_last <- self$drop_last
    if (!is.null(self$sampler$.indices)) {
      # whole order at once: batches are slices of it
      idx <- self$sampler$.indices()
      n <- length(idx)
      start <- 1L
      return(function() {
        if (start > n) return(exhausted())
        end <- min(start + bs - 1L, n)
        if (drop_last && end - start + 1L < bs) return(exhausted())
        out <- idx[start:end]
        start <<- end + 1L
        out
      })
    }
    it <- self$sampler$.iter()
    function() {
      batch <- .next_items(it, bs, drop_last)
      if (is_exhausted(batch)) batch else unlist(batch)
    }
  },
  .length = function() .n_batches(length(self$sampler), self$batch_size, self$drop_last)
)
