# The R side of the benchmarks, driven by benchmarks/rside.py.
#
#   rtorch-py run benchmarks/bench.R DATA_DIR
#
# Reads one command a line on stdin and answers one line on stdout, so that
# the Python runner can interleave R rounds with its own (same machine load):
#
#   op N       N times `y <- x * 2`              -> "ok SECONDS"
#   op_bwd N   N times `(x * 2)$backward()`      -> "ok SECONDS"
#   train N    the "using autograd" loop, N steps,
#              from the vignette's initial weights -> "ok SECONDS LAST_LOSS"
#   gc 0       a full R garbage collection (untimed, as system.time() does
#              before timing)                   -> "ok 0"
#   quit
#
# Every timed loop runs inside a function (byte-compiled, as R compiles
# top-level loops too) and is timed in R with Sys.time(), so the figures are
# R-level costs: R's evaluator, the shim's R code, the R -> Python crossing
# and the engine, with no Python-side timer in the way.

library(torch)

args <- commandArgs(trailingOnly = TRUE)
data_dir <- if (length(args)) args[[1]] else file.path("vignettes", "data")

now <- function() as.double(Sys.time())

x <- torch_tensor(1, requires_grad = TRUE)

bench_op <- function(n) {
  t0 <- now()
  for (i in seq_len(n)) y <- x * 2
  now() - t0
}

bench_op_bwd <- function(n) {
  t0 <- now()
  for (i in seq_len(n)) (x * 2)$backward()
  now() - t0
}

# vignettes/03-using-autograd.Rmd's training chunk, the same sizes (100x3 ->
# 32 -> 1), data and initial weights; only the progress `cat()` is left out.
read_matrix <- function(file) unname(as.matrix(read.csv(file.path(data_dir, file), header = FALSE)))
x_mat <- read_matrix("x.csv")
y_mat <- read_matrix("y.csv")
w1_mat <- read_matrix("w1.csv")
w2_mat <- read_matrix("w2.csv")

bench_train <- function(steps) {
  # set-up, untimed: the vignette's starting point every round
  x <- torch_tensor(x_mat)
  y <- torch_tensor(y_mat)
  w1 <- torch_tensor(w1_mat, requires_grad = TRUE)
  w2 <- torch_tensor(w2_mat, requires_grad = TRUE)
  b1 <- torch_zeros(1, 32, requires_grad = TRUE)
  b2 <- torch_zeros(1, 1, requires_grad = TRUE)
  learning_rate <- 1e-4
  losses <- numeric(steps)
  t0 <- now()
  for (t in seq_len(steps)) {
    y_pred <- x$mm(w1)$add(b1)$clamp(min = 0)$mm(w2)$add(b2)
    loss <- (y_pred - y)$pow(2)$mean()
    losses[t] <- loss$item()

    loss$backward()

    with_no_grad({
      w1$sub_(learning_rate * w1$grad)
      w2$sub_(learning_rate * w2$grad)
      b1$sub_(learning_rate * b1$grad)
      b2$sub_(learning_rate * b2$grad)
      w1$grad$zero_()
      w2$grad$zero_()
      b1$grad$zero_()
      b2$grad$zero_()
    })
  }
  c(now() - t0, losses[steps])
}

answer <- function(values) {
  cat("ok", sprintf("%.9g", values), "\n")
  flush(stdout())
}

con <- file("stdin", open = "r")
cat("ready", R.version.string, "\n")
flush(stdout())
repeat {
  line <- readLines(con, n = 1)
  if (!length(line) || line == "quit") break
  words <- strsplit(line, " ", fixed = TRUE)[[1]]
  n <- as.integer(words[[2]])
  switch(words[[1]],
    op = answer(bench_op(n)),
    op_bwd = answer(bench_op_bwd(n)),
    train = answer(bench_train(n)),
    gc = {invisible(gc()); answer(0)},
    stop("unknown command: ", line)
  )
}
close(con)
