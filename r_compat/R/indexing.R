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
  out <- list(start = first, end = stop_at, step = step)
  class(out) <- "slice"  # (not structure(): a loop over x[1:i] calls this often)
  out
}

print.slice <- function(x, ...) .print_text(x, "<slice>\n")

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
  if (!is.object(v)) if (is.null(v)) list("new") else list("value", v)  # fast path: plain R values
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

.masked_names <- c("N", "newaxis", "..")

# exprs: the unevaluated index arguments (empty ones for `x[1, ]`); env: where
# to evaluate them. Plain numbers, NULL and variables skip the masked evaluation.
.index_spec <- function(exprs, env) {
  spec <- vector("list", length(exprs))
  spliced <- FALSE
  for (i in seq_along(exprs)) {
    if (identical(exprs[[i]], quote(expr = ))) {
      spec[[i]] <- list("all")
      next
    }
    e <- exprs[[i]]
    if (is.numeric(e)) {
      spec[[i]] <- list("value", e)
    } else if (is.null(e)) {
      spec[[i]] <- list("new")
    } else if (is.call(e) && identical(e[[1L]], quote(`-`)) && length(e) == 2L &&
               is.numeric(e[[2L]])) {  # x[-1]
      spec[[i]] <- list("value", -e[[2L]])
    } else if (is.symbol(e) && match(as.character(e), .masked_names, 0L) == 0L) {
      spec[[i]] <- .index_item(eval(e, env))
    } else if (.is_splice(e)) {
      spec[[i]] <- lapply(as.list(eval(e[[2L]][[2L]][[2L]], env)), .index_item)
      spliced <- TRUE
    } else {
      spec[[i]] <- .index_item(eval(e, .index_mask, env))
    }
  }
  if (spliced) {
    spec <- do.call(c, lapply(spec, function(s) if (is.list(s[[1L]])) s else list(s)))
  }
  spec
}

`[.torch_tensor` <- function(x, ..., drop = TRUE) {
  spec <- .index_spec(as.list(substitute(list(...)))[-1L], parent.frame())
  .External(C_call, .py$index, x, spec, drop)
}

`[<-.torch_tensor` <- function(x, ..., value) {
  spec <- .index_spec(as.list(substitute(list(...)))[-1L], parent.frame())
  .External(C_call, .py$index_put, x, spec, value)
  x
}
