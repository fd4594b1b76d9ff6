# Cost of one R-level op through the bridge (`rtorch-py run tests/r/bench-ops.R`).
# CPU time (user + system) of this process, best of 5 runs of n ops each,
# so that other load on the machine counts as little as possible.
library(torch)
n <- 100000
cpu <- function() {
  p <- proc.time()
  p[["user.self"]] + p[["sys.self"]]
}
bench <- function(label, f) {
  best <- Inf
  for (r in 1:5) {
    t0 <- cpu()
    f()
    best <- min(best, cpu() - t0)
  }
  cat(sprintf("%-36s %6.2f us/op\n", label, best / n * 1e6))
}
x <- torch_tensor(1, requires_grad = TRUE)
x0 <- torch_tensor(1)
m <- torch_randn(10, 10, requires_grad = TRUE)
bench("y <- x * 2   (x requires grad)", function() for (i in seq_len(n)) y <- x * 2)
bench("y <- x0 * 2  (no grad)", function() for (i in seq_len(n)) y <- x0 * 2)
bench("y <- x$mul(2)", function() for (i in seq_len(n)) y <- x$mul(2))
bench("y <- exp(x)", function() for (i in seq_len(n)) y <- exp(x))
bench("y <- torch_exp(x)", function() for (i in seq_len(n)) y <- torch_exp(x))
bench("y <- m$sum(dim = 1)", function() for (i in seq_len(n)) y <- m$sum(dim = 1))
bench("y <- m[1, ]", function() for (i in seq_len(n)) y <- m[1, ])
bench("s <- x$shape", function() for (i in seq_len(n)) s <- x$shape)
