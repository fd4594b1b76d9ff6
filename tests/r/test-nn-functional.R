# nnf_* and layers from R: 1-based dims and class indices, R torch's defaults.

test_that("class indices are 1-based", {
  x <- torch_tensor(rbind(c(2, 0, 0), c(0, 0, 3)))
  y <- torch_tensor(c(1L, 3L))
  logp <- as_array(nnf_log_softmax(x, dim = 2))
  expect_equal_to_r(nnf_cross_entropy(x, y), -mean(c(logp[1, 1], logp[2, 3])))
  expect_equal_to_r(nnf_nll_loss(nnf_log_softmax(x, 2), y, reduction = "sum"),
                    -(logp[1, 1] + logp[2, 3]))
  expect_equal_to_r(nn_cross_entropy_loss()(x, y), -mean(c(logp[1, 1], logp[2, 3])))
  # a loss module's inputs by name, in any order, as R torch's forward(input, target)
  expect_equal_to_r(nn_cross_entropy_loss()(target = y, input = x),
                    -mean(c(logp[1, 1], logp[2, 3])))
  expect_error(nn_cross_entropy_loss()(x, labels = y), "unexpected argument 'labels'")
  expect_equal_to_r(nnf_cross_entropy(x, torch_tensor(c(1L, -100L))), -logp[1, 1])
  expect_error(nnf_cross_entropy(x, torch_tensor(c(1L, 4L))), "out of bounds")
  expect_equal_to_r(nnf_one_hot(torch_tensor(c(1L, 3L))), rbind(c(1, 0, 0), c(0, 0, 1)))
  e <- nn_embedding(4, 2)
  expect_equal_to_tensor(e(torch_tensor(c(4L, 1L))), e$weight[c(4, 1), ])
})

test_that("dims are 1-based", {
  x <- torch_randn(3, 4)
  expect_equal_to_r(nnf_softmax(x, dim = 2)$sum(dim = 2), rep(1, 3))
  expect_equal_to_r(nn_softmax(dim = 1)(x)$sum(dim = 1), rep(1, 4))
  expect_tensor_shape(nn_flatten()(torch_randn(2, 3, 4)), c(2, 12))
  expect_tensor_shape(nnf_flatten(torch_randn(2, 3, 4), start_dim = 2), c(2, 12))
  expect_tensor_shape(nn_unflatten(2, c(3, 4))(torch_randn(2, 12)), c(2, 3, 4))
})

test_that("max pooling returns 1-based indices", {
  x <- torch_tensor(array(c(1, 5, 2, 3), dim = c(1, 1, 4)))
  res <- nnf_max_pool1d(x, 2, return_indices = TRUE)
  expect_equal_to_r(res[[1]], array(c(5, 3), dim = c(1, 1, 2)))
  expect_equal(as.integer(as_array(res[[2]])), c(2L, 4L))
})

test_that("layers train from R", {
  torch_manual_seed(1)
  x <- torch_randn(64, 2)
  y <- (x[, 1] * x[, 2] > 0)$to(dtype = torch_long()) + 1L
  model <- nn_sequential(nn_linear(2, 16), nn_relu(), nn_linear(16, 2))
  first <- NULL
  for (i in 1:200) {
    model$zero_grad()
    loss <- nnf_cross_entropy(model(x), y)
    if (is.null(first)) first <- loss$item()
    loss$backward()
    with_no_grad({
      for (p in model$parameters) p$sub_(p$grad * 0.5)
    })
  }
  expect_lt(loss$item(), first / 2)
})

test_that("convolution, pooling, norm and recurrent layers run from R", {
  cnn <- nn_sequential(nn_conv2d(1, 4, 3, padding = 1), nn_relu(), nn_max_pool2d(c(2, 2)),
                       nn_batch_norm2d(4), nn_flatten(), nn_linear(4 * 4 * 4, 3))
  expect_tensor_shape(cnn(torch_randn(2, 1, 8, 8)), c(2, 3))
  lstm <- nn_lstm(3, 5, batch_first = TRUE)
  out <- lstm(torch_randn(2, 7, 3))
  expect_tensor_shape(out[[1]], c(2, 7, 5))
  expect_tensor_shape(out[[2]][[1]], c(1, 2, 5))
  # R torch numbers the layers from 1
  expect_equal(names(lstm$parameters), c("weight_ih_l1", "weight_hh_l1", "bias_ih_l1",
                                         "bias_hh_l1"))
  expect_equal(lstm$mode, "LSTM")
  with_no_grad(lstm$weight_hh_l1$zero_())
  lstm$weight_ih_l1 <- nn_parameter(torch_zeros(20, 3))   # reaches the Python layer
  b <- as_array(lstm$bias_ih_l1 + lstm$bias_hh_l1)   # gates i, f, g, o; h0 = c0 = 0
  expect_equal_to_r(lstm(torch_zeros(1, 1, 3))[[2]][[2]]$sum(),
                    sum(plogis(b[1:5]) * tanh(b[11:15])), tolerance = 1e-5)
})

test_that("init and clip_grad", {
  w <- torch_empty(3, 4)
  nn_init_constant_(w, 2)
  expect_equal_to_r(w, matrix(2, 3, 4))
  nn_init_eye_(w)
  expect_equal_to_r(w, diag(1, 3, 4))
  p <- torch_ones(4, requires_grad = TRUE)
  (p * torch_tensor(c(3, 4, 0, 0)))$sum()$backward()
  norm <- nn_utils_clip_grad_norm_(list(p), 1)
  expect_equal(norm$item(), 5, tolerance = 1e-6)
  expect_equal_to_r(p$grad, c(0.6, 0.8, 0, 0), tolerance = 1e-5)
  nn_utils_clip_grad_value_(list(p), 0.7)
  expect_equal_to_r(p$grad, c(0.6, 0.7, 0, 0), tolerance = 1e-5)
  q <- torch_ones(2)  # a bare tensor without a gradient: left alone, a norm of 0
  expect_equal(nn_utils_clip_grad_norm_(q, 1)$item(), 0)
  nn_utils_clip_grad_value_(q, 1)
  expect_undefined_tensor(q$grad)
})

test_that("a call's warnings are signalled with its error, not by the next call", {
  seen <- character()
  withCallingHandlers(
    expect_error(nnf_mse_loss(torch_ones(12), torch_ones(3, 4)), "can't be broadcast"),
    warning = function(w) {
      seen <<- c(seen, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  expect_match(seen, "target size \\(\\[3, 4\\]\\) that is different to the input size")
  expect_silent(torch_ones(1))
})

test_that("bad input gives clear errors", {
  expect_error(nnf_softmax(torch_randn(2), dim = 0), "Indexing starts at 1")
  expect_error(nn_dropout(p = 2), "between 0 and 1")
  expect_error(nnf_nll_loss(torch_randn(2, 3), torch_tensor(c(0.5, 1))), "class indices")
  expect_error(nnf_conv2d(torch_randn(1, 3, 5), torch_randn(2, 3, 3, 3)), "expected input[1, 1, 3, 5] to have 3 channels, but got 1", fixed = TRUE)
  expect_error(nnf_conv2d(torch_randn(5), torch_randn(2, 3, 3, 3)), "4-D input")
})
