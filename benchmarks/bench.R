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
#   call N NAME   N times one of issue 21's calls (call_exprs) -> "ok SECONDS"
#   loop N [MODEL [ROWS]]  N epochs of the nn_module / optim_adam / dataloader
#              loop of MODEL (loop_models: mlp, convnet, wide; mlp if not given),
#              after one untimed epoch of the fresh model (its first steps touch
#              new memory: the rows time steps)
#              -> "ok SECONDS_PER_STEP LOSS_SUM_OF_LAST_EPOCH"
#   loop_memory N  that loop for N epochs -> "ok PEAK_MB_AFTER_HALF PEAK_MB_AT_END"
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

# RTORCH_BENCH_CLOCK=cpu (python -m benchmarks --clock cpu): the process's CPU
# time, user + system (ms resolution), instead of wall-clock time
now <- if (identical(Sys.getenv("RTORCH_BENCH_CLOCK"), "cpu")) {
  function() sum(proc.time()[1:2])
} else {
  function() as.double(Sys.time())
}

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

# The R-level cost of the calls R code makes (issue 21's table): x 100x3, w 3x32.
torch_manual_seed(1)
cx <- torch_randn(100, 3)
cw <- torch_randn(3, 32)
cb <- torch_randn(32)
cy <- cx$mm(cw)
cxg <- torch_randn(100, 3, requires_grad = TRUE)
call_exprs <- list(
  mul = quote(cx * 2),
  mm = quote(cx$mm(cw)),
  torch_mm = quote(torch_mm(cx, cw)),
  add = quote(cy$add(cb)),
  mm_add = quote(cx$mm(cw) + cb),
  clamp = quote(cx$clamp(min = 0)),
  pow_mean = quote(cx$pow(2)$mean()),
  sum_item = quote(cx$sum()$item()),
  no_grad = quote(with_no_grad(cx * 2)),
  index = quote(cx[1, ]),
  backward = quote(cxg$sum()$backward())
)
# one function per call, each a loop R compiles, as it compiles a script's functions
call_loops <- lapply(call_exprs, function(e) {
  eval(bquote(function(n) {
    t0 <- now()
    for (i in seq_len(n)) .(e)
    now() - t0
  }))
})

# Training loops as R users write them: an nn_module, optim_adam,
# nnf_cross_entropy, a shuffled dataloader over a tensor_dataset iterated with
# coro::loop. The same seed gives the Python twins (benchmarks/rside.py) the
# same data, weights, dropout masks and batch order. The models:
#   mlp      issue 21's: 20 -> 64 -> 3 with nnf_relu; 1,600 rows, batches of 32
#   convnet  MNIST-sized (issue 27): 2 conv 3x3, max pool, dropout, 2 linear;
#            1 x 28 x 28 images, 10 classes, batches of 128
#   wide     issue 27's wide MLP: 512 -> 2048 -> 2048 -> 10; batches of 256
loop_models <- list(
  mlp = list(rows = 1600, shape = 20, classes = 3, batch = 32, net = nn_module(
    initialize = function() {
      self$fc1 <- nn_linear(20, 64)
      self$fc2 <- nn_linear(64, 3)
    },
    forward = function(x) {
      x <- self$fc1(x)
      x <- nnf_relu(x)
      self$fc2(x)
    }
  )),
  convnet = list(rows = 640, shape = c(1, 28, 28), classes = 10, batch = 128, net = nn_module(
    initialize = function() {
      self$conv1 <- nn_conv2d(1, 32, 3)
      self$conv2 <- nn_conv2d(32, 64, 3)
      self$dropout1 <- nn_dropout(0.25)
      self$dropout2 <- nn_dropout(0.5)
      self$fc1 <- nn_linear(9216, 128)
      self$fc2 <- nn_linear(128, 10)
    },
    forward = function(x) {
      x <- nnf_relu(self$conv1(x))
      x <- nnf_relu(self$conv2(x))
      x <- nnf_max_pool2d(x, 2)
      x <- self$dropout1(x)
      x <- torch_flatten(x, start_dim = 2)
      x <- nnf_relu(self$fc1(x))
      x <- self$dropout2(x)
      self$fc2(x)
    }
  )),
  wide = list(rows = 1280, shape = 512, classes = 10, batch = 256, net = nn_module(
    initialize = function() {
      self$fc1 <- nn_linear(512, 2048)
      self$fc2 <- nn_linear(2048, 2048)
      self$fc3 <- nn_linear(2048, 10)
    },
    forward = function(x) {
      x <- nnf_relu(self$fc1(x))
      x <- nnf_relu(self$fc2(x))
      self$fc3(x)
    }
  ))
)

# `rows`: fewer rows than the model's own (the quick runs)
loop_setup <- function(kind = "mlp", rows = NULL) {
  m <- loop_models[[kind]]
  rows <- if (is.null(rows)) m$rows else rows
  torch_manual_seed(21)
  x <- torch_randn(c(rows, m$shape))
  y <- torch_randint(1, m$classes + 1, size = rows, dtype = torch_long())
  model <- m$net()
  list(dl = dataloader(tensor_dataset(x, y), batch_size = m$batch, shuffle = TRUE),
       model = model, opt = optim_adam(model$parameters, lr = 1e-3))
}

loop_epoch <- function(s) {
  model <- s$model
  opt <- s$opt
  total <- 0
  coro::loop(for (b in s$dl) {
    opt$zero_grad()
    loss <- nnf_cross_entropy(model(b[[1]]), b[[2]])
    loss$backward()
    opt$step()
    total <- total + loss$item()
  })
  total
}

bench_loop <- function(epochs, kind = "mlp", rows = NULL) {
  s <- loop_setup(kind, rows)  # untimed; each round starts from the same weights
  loop_epoch(s)  # the warm-up epoch, untimed (as the Python twins' in rside.py)
  t0 <- now()
  for (e in seq_len(epochs)) total <- loop_epoch(s)
  c((now() - t0) / (epochs * length(s$dl)), total)
}

rss_mb <- function(field = "VmRSS") {
  line <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}

# The training loop for `epochs` epochs: peak resident memory after the first
# half (warm-up) and at the end, MB.
bench_loop_memory <- function(epochs) {
  s <- loop_setup()
  half <- epochs %/% 2
  for (e in seq_len(half)) loop_epoch(s)
  warm <- rss_mb("VmHWM")
  for (e in seq_len(epochs - half)) loop_epoch(s)
  c(warm, rss_mb("VmHWM"))
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
    loop = answer(bench_loop(n, if (length(words) > 2) words[[3]] else "mlp",
                             if (length(words) > 3) as.integer(words[[4]]))),
    loop_memory = answer(bench_loop_memory(n)),
    call = answer(call_loops[[words[[3]]]](n)),
    gc = {invisible(gc()); answer(0)},
    stop("unknown command: ", line)
  )
}
close(con)
