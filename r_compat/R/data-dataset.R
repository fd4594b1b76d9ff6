# Datasets as R torch defines them: R6 objects with .getitem(i) (1-based),
# .length() and optionally .getbatch(indices); dataset() makes new ones.

Dataset <- R6::R6Class(
  "dataset",
  lock_objects = FALSE,
  public = list(
    .getitem = function(index) {
      stop("a dataset must define .getitem(index) (or .getbatch(indices))", call. = FALSE)
    },
    # (what torch_save() stores of a dataset, as R torch's: its tensor fields)
    state_dict = function() {
      out <- list()
      for (f in names(self)) {
        value <- .subset2(self, f)
        if (is_torch_tensor(value)) out[[f]] <- value
      }
      out
    },
    load_state_dict = function(x, ..., .refer_to_state_dict = FALSE) {
      if (!.refer_to_state_dict) {
        .runtime_error(paste0("Loading the state_dict is only implemented when ",
                              "`.refer_to_state_dict` is TRUE"))
      }
      for (nm in names(x)) assign(nm, x[[nm]], envir = self)
      invisible(NULL)
    }
  )
)

IterableDataset <- R6::R6Class(
  "iterable_dataset",
  lock_objects = FALSE,
  public = list(
    .iter = function() {
      stop("an iterable dataset must define .iter()", call. = FALSE)
    }
  )
)

dataset <- function(name = NULL, inherit = Dataset, ..., private = NULL, active = NULL,
                    parent_env = parent.frame()) {
  .torch_class(name, inherit, list(...), private, active, parent_env, "Dataset",
               c(name, "dataset_generator"))
}

iterable_dataset <- function(name = NULL, inherit = IterableDataset, ..., private = NULL,
                             active = NULL, parent_env = parent.frame()) {
  .torch_class(name, inherit, list(...), private, active, parent_env, "Dataset",
               c(name, "iterable_dataset_generator", "dataset_generator"))
}

is_dataset <- function(x) inherits(x, "dataset")

print.dataset_generator <- function(x, ...) {
  cat("<dataset_generator>\n")
  print(attr(x, "Dataset"))
  invisible(x)
}

`[.dataset` <- function(x, y) {
  if (!is.null(x$.getbatch) && (is.list(y) || length(y) > 1)) {
    return(x$.getbatch(as.integer(unlist(y))))
  }
  if (is.list(y)) y <- unlist(y)
  x$.getitem(y)
}

`[[.dataset` <- function(x, y) {
  if (is.character(y)) return(get(y, envir = x))
  x$.getitem(y)
}

length.dataset <- function(x) {
  if (is.null(x$.length)) {
    if (inherits(x, "iterable_dataset")) return(NA_integer_)
    stop("this dataset has no .length() method", call. = FALSE)
  }
  x$.length()
}

length.iterable_dataset <- length.dataset

tensor_dataset <- function(...) .tensor_dataset_class$new(...)

.tensor_dataset_class <- R6::R6Class(
  "tensor_dataset",
  inherit = Dataset,
  lock_objects = FALSE,
  public = list(
    tensors = NULL,
    initialize = function(...) {
      tensors <- rlang::list2(...)
      if (length(tensors) == 0) .value_error("tensor_dataset() needs at least one tensor")
      if (!all(vapply(tensors, is_torch_tensor, logical(1)))) {
        .value_error("tensor_dataset() takes tensors only")
      }
      self$tensors <- tensors
    },
    .getitem = function(index) .data_rows(self$tensors, index, TRUE),
    .getbatch = function(index) .data_rows(self$tensors, as.integer(index), FALSE),
    .length = function() self$tensors[[1]]$shape[[1]]
  )
)

dataset_subset <- function(dataset, indices) {
  obj <- .subset_class$new(dataset, indices)
  first <- class(dataset)[[1]]
  if (!first %in% c("dataset", "R6")) class(obj) <- c(paste0(first, "_subset"), class(obj))
  obj
}

.subset_class <- R6::R6Class(
  "dataset_subset",
  inherit = Dataset,
  lock_objects = FALSE,
  public = list(
    initialize = function(dataset, indices) {
      self$dataset <- dataset
      self$indices <- as.integer(indices)
      if (!is.null(dataset$.getbatch)) {
        self$.getbatch <- function(idx) self$dataset$.getbatch(self$indices[idx])
      }
    },
    .getitem = function(idx) self$dataset[self$indices[idx]],
    .length = function() length(self$indices)
  )
)
