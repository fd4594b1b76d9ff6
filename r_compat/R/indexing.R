# R torch's indexing: x[1, ], x[, 1:2], x[.., 2], x[-1], x[2:N], x[mask],
# x[1, , drop = FALSE], x[newaxis, ], x[slc(1, 5, 2)], x[!!!idx], and the
# assignment forms. The index expressions are evaluated here, with `:`, `N`,
# `newaxis` and `..` given R torch's meaning, and sent to Python as one spec.

# A range of positions: start and end are 1-based and inclusive, negative
# counts from the end; stored 0-based with an exclusive end (Python's slice).
slc <- function(start, end, step = 1) {
  big <- .Machine$integer.max
  stop_at <- if (is.infinite(end) && end > 0) big
             else if (end == -1) big
             else if (end < -1) end + 1
             else end
  first <- if (start > 0) start - 1 else start
  structure(list(start = first, end = stop_at, step = step), class = "slice")
}

print.slice <- function(x, ...) {
  cat("<slice>\n")
  invisible(x)
}

.fill_marker <- structure(list(), class = "fill")

.index_mask <- list(
  `:` = function(from, to) {
    if (inherits(from, "slice")) {  # a:b:step
      from$step <- to
      return(from)
    }
    slc(from, to)
  },
  N = .Machine$integer.max,
  newaxis = NULL,
  `..` = .fill_marker
)

.index_item <- function(v) {
  if (is.null(v)) list("new")
  else if (inherits(v, "fill")) list("fill")
  else if (inherits(v, "slice")) list("slice", c(v$start, v$end, v$step))
  else list("value", v)
}

.is_splice <- function(e) {
  bang <- as.name("!")
  is.call(e) && identical(e[[1L]], bang) &&
    is.call(e[[2L]]) && identical(e[[2L]][[1L]], bang) &&
    is.call(e[[2L]][[2L]]) && identical(e[[2L]][[2L]][[1L]], bang)
}

# exprs: the unevaluated index arguments; missing: which of them are empty.
.index_spec <- function(exprs, missing, env) {
  spec <- list()
  for (i in seq_along(missing)) {
    if (missing[[i]]) {
      spec[[length(spec) + 1L]] <- list("all")
      next
    }
    e <- exprs[[i]]
    if (.is_splice(e)) {
      for (v in as.list(eval(e[[2L]][[2L]][[2L]], env))) {
        spec[[length(spec) + 1L]] <- .index_item(v)
      }
      next
    }
    spec[[length(spec) + 1L]] <- .index_item(eval(e, .index_mask, env))
  }
  spec
}

.dots_missing <- function(n, frame) {
  vapply(seq_len(n), function(i) eval(call("missing", as.name(paste0("..", i))), frame),
         logical(1))
}

`[.torch_tensor` <- function(x, ..., drop = TRUE) {
  exprs <- as.list(substitute(list(...)))[-1L]
  spec <- .index_spec(exprs, .dots_missing(length(exprs), environment()), parent.frame())
  .External(C_call, .py$index, x, spec, drop)
}

`[<-.torch_tensor` <- function(x, ..., value) {
  exprs <- as.list(substitute(list(...)))[-1L]
  spec <- .index_spec(exprs, .dots_missing(length(exprs), environment()), parent.frame())
  .External(C_call, .py$index_put, x, spec, value)
  x
}
