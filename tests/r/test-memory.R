# R's garbage collector releases the engine's tensors, and a long training
# loop keeps resident memory flat.

rss_mb <- function() {
  line <- grep("^VmRSS:", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}

test_that("tensors dropped in R are freed in Python", {
  invisible(gc())
  before <- rtorch_live_objects("Tensor")
  for (i in 1:2000) y <- torch_ones(10, requires_grad = TRUE) * 2
  rm(y)
  invisible(gc())
  expect_lt(rtorch_live_objects("Tensor") - before, 10)
})

test_that("custom functions, their contexts and saved R values are freed", {
  invisible(gc())
  tensors <- rtorch_live_objects("Tensor")
  fns <- rtorch_live_objects("RAutogradFunction")
  robjs <- rtorch_live_objects("RObject")
  for (i in 1:200) {
    f <- autograd_function(
      forward = function(ctx, x, k) {
        ctx$save_for_backward(x = x, k = k, note = list(i = i))
        x * k
      },
      backward = function(ctx, g) list(x = g * ctx$saved_variables$k)
    )
    x <- torch_ones(3, requires_grad = TRUE)
    f(x, 2)$sum()$backward()
    y <- f(x, 3)  # a graph never backpropagated
  }
  rm(f, x, y)
  invisible(gc())
  expect_lt(rtorch_live_objects("Tensor") - tensors, 10)
  expect_lt(rtorch_live_objects("RAutogradFunction") - fns, 3)
  expect_lt(rtorch_live_objects("RObject") - robjs, 10)
})

test_that("a 3,000-step training loop keeps RSS flat", {
  skip_if_not(file.exists("/proc/self/status"))
  scale <- autograd_function(
    forward = function(ctx, x, k) {
      ctx$save_for_backward(k = k)
      x * k
    },
    backward = function(ctx, g) list(x = g * ctx$saved_variables$k)
  )
  torch_manual_seed(1)
  x <- torch_randn(64, 10)
  y <- x$mm(torch_randn(10, 1))
  w <- torch_zeros(10, 1, requires_grad = TRUE)
  b <- torch_zeros(1, requires_grad = TRUE)
  rss <- numeric()
  for (i in 1:3000) {
    pred <- scale(x$mm(w) + b, 1)
    loss <- ((pred - y)^2)$mean()
    loss$backward()
    with_no_grad({
      w$sub_(0.05 * w$grad)
      b$sub_(0.05 * b$grad)
      w$grad$zero_()
      b$grad$zero_()
    })
    if (i %% 500 == 0) rss <- c(rss, rss_mb())
  }
  expect_lt(loss$item(), 1e-4)
  # after warm-up (first 1,000 steps), no growth beyond allocator noise
  expect_lt(max(rss[2:6]) - rss[2], 8)
})

test_that("an R training loop (nn_module, optim_adam, dataloader, coro::loop) keeps memory flat", {
  skip_if_not(file.exists("/proc/self/status"))
  net <- nn_module(
    initialize = function() {
      self$fc1 <- nn_linear(20, 64)
      self$fc2 <- nn_linear(64, 3)
    },
    forward = function(x) self$fc2(nnf_relu(self$fc1(x)))
  )
  torch_manual_seed(21)
  ds <- tensor_dataset(torch_randn(1600, 20), torch_randint(1, 4, size = 1600, dtype = torch_long()))
  dl <- dataloader(ds, batch_size = 32, shuffle = TRUE)
  model <- net()
  opt <- optim_adam(model$parameters, lr = 1e-3)
  r_heap_mb <- function() sum(gc(full = FALSE)[, 2])  # R's own cells in use, MB
  rss <- heap <- tensors <- numeric()
  for (epoch in 1:40) {  # 2,000 steps
    coro::loop(for (b in dl) {
      opt$zero_grad()
      loss <- nnf_cross_entropy(model(b[[1]]), b[[2]])
      loss$backward()
      opt$step()
    })
    if (epoch %% 10 == 0) {
      rss <- c(rss, rss_mb())
      heap <- c(heap, r_heap_mb())
      tensors <- c(tensors, rtorch_live_objects("Tensor"))
    }
  }
  # after warm-up (the first 500 steps): neither the process, R's heap nor the
  # engine's live tensors grow
  expect_lt(max(rss) - rss[1], 8)
  expect_lt(max(heap) - heap[1], 2)
  expect_lt(max(tensors) - tensors[1], 50)
})
