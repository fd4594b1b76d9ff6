# The part of coro's iterator protocol torch uses, with coro's own semantics:
# an iterator is a function returning the next value, or exhausted() at the end.

exhausted <- function() as.symbol(".__exhausted__.")

is_exhausted <- function(x) is.symbol(x) && identical(x, quote(.__exhausted__.))

# Functions are iterators already; other objects are read with length() and
# `[[`. Packages add methods (torch's data loaders, samplers, iterable datasets).
as_iterator <- function(x) UseMethod("as_iterator")

as_iterator.default <- function(x) {
  if (is.function(x)) return(x)
  n <- length(x)
  i <- 0L
  function() {
    if (i == n) return(exhausted())
    i <<- i + 1L
    x[[i]]
  }
}

# Generators are the real coro's: outside one, yield() is an error there too.
yield <- function(x) {
  stop("`yield()` can't be called directly or within function arguments ",
       "(generators need the real coro package)", call. = FALSE)
}

# loop(for (x in iterable) body): runs the for loop over an iterator, in the
# caller's environment; break and next work as in a plain for loop, and as in
# coro, `x` keeps the last element afterwards (never the exhausted sentinel).
loop <- function(loop) {
  expr <- substitute(loop)
  env <- parent.frame()
  if (!is.call(expr) || !identical(expr[[1L]], quote(`for`))) {
    stop("loop() takes a `for` loop: loop(for (x in iterable) ...)", call. = FALSE)
  }
  var <- expr[[2L]]
  it <- as_iterator(eval(expr[[3L]], env))
  body <- expr[[4L]]
  value <- NULL
  more <- function() !is_exhausted(value <<- it())
  current <- function() value
  # repeat { if (more()) var <- current() else break; body }, built directly
  # (bquote() walks the whole body: ~0.1 ms, more than a small epoch's R work)
  step <- call("if", as.call(list(more)), call("<-", var, as.call(list(current))),
               quote(break))
  run <- call("repeat", call("{", step, body))
  eval(run, env)
  invisible(exhausted())
}

# All (or the first n) values of an iterator, as a list.
collect <- function(x, n = NULL) {
  it <- as_iterator(x)
  out <- list()
  while (is.null(n) || length(out) < n) {
    v <- it()
    if (is_exhausted(v)) break
    out[length(out) + 1L] <- list(v)
  }
  out
}
