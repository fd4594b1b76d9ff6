# Ops R torch exposes from libtorch's namespace, called from R: 1-based class
# indices, R torch's defaults (reduction codes, `list()` for no tensor), the
# results as R gets them (lists, integers), node names.

test_that("one_hot and multi_margin_loss take 1-based classes", {
  expect_equal_to_r(torch_one_hot(torch_tensor(c(1L, 3L))),
                    rbind(c(1L, 0L, 0L), c(0L, 0L, 1L)))
  expect_tensor_shape(torch_one_hot(torch_tensor(2L), num_classes = 4), c(1, 4))
  expect_error(torch_one_hot(torch_tensor(0L)), "Indexing starts at 1")
  x <- torch_tensor(rbind(c(0.1, 0.2, 0.4), c(0.3, 0.9, 0.5)), requires_grad = TRUE)
  y <- torch_tensor(c(3L, 2L))
  # each sample: the hinge 1 - x[target] + x[other] over the other classes, / 3
  per <- c((1 - 0.4 + 0.1) + (1 - 0.4 + 0.2), (1 - 0.9 + 0.3) + (1 - 0.9 + 0.5)) / 3
  loss <- torch_multi_margin_loss(x, y)
  expect_equal_to_r(loss, mean(per))
  expect_output(print(loss$grad_fn), "MultiMarginLossBackward0")
  expect_equal_to_r(torch_multi_margin_loss(x, y, reduction = torch_reduction_sum()), sum(per))
  expect_equal_to_r(torch_multi_margin_loss(x, y, reduction = torch_reduction_none()), per)
  expect_equal_to_tensor(loss, nnf_multi_margin_loss(x, y))
  loss$backward()
  expect_equal_to_r(x$grad, rbind(c(1, 1, -2), c(1, -2, 1)) / 6)
  expect_error(torch_multi_margin_loss(x, torch_tensor(c(4L, 1L))), "out of range")
})

test_that("adaptive average pooling and its backward", {
  x <- torch_arange(1, 16, dtype = torch_float())$view(c(1, 4, 4))
  p <- torch_adaptive_avg_pool2d(x, c(2, 2))
  expect_equal_to_r(p[1, , ], rbind(c(3.5, 5.5), c(11.5, 13.5)))
  expect_equal_to_r(torch__adaptive_avg_pool2d(x, c(2, 2)), as_array(p))
  b <- torch__adaptive_avg_pool2d_backward(torch_ones(1, 2, 2), x)
  expect_equal_to_r(b, array(0.25, dim = c(1, 4, 4)))
  x$requires_grad_(TRUE)
  expect_output(print(torch_adaptive_avg_pool2d(x, c(2, 2))$grad_fn),
                "AdaptiveAvgPool2DBackward0")
  expect_output(print(torch_adaptive_avg_pool2d(x, 1)$grad_fn), "MeanBackward1")
})

test_that("_batch_norm_impl_index gives its five results and updates running stats", {
  x <- torch_tensor(rbind(c(1, 2), c(3, 6)))
  rm <- torch_zeros(2)
  rv <- torch_ones(2)
  out <- torch__batch_norm_impl_index(x, NULL, NULL, rm, rv, TRUE, 1, 0, TRUE)
  expect_length(out, 5)
  expect_identical(out[[5]], 0L)
  expect_equal_to_r(out[[1]], rbind(c(-1, -1), c(1, 1)))
  expect_equal_to_r(out[[2]], c(2, 4))
  expect_equal_to_r(rm, c(2, 4))
  expect_equal_to_r(rv, c(2, 8))    # the unbiased variances
  expect_tensor_shape(out[[4]], 0)
})

test_that("stft from R: R torch's arguments, real pairs or complex", {
  x <- torch_stft(torch_ones(64), n_fft = 16, hop_length = 8, center = FALSE,
                  return_complex = FALSE)
  expect_tensor_shape(x, c(9, 7, 2))
  expect_equal_to_r(x[1, , 1], rep(16, 7))
  expect_equal_to_r(x[2, , ], matrix(0, 7, 2), tolerance = 1e-5)
  z <- torch_stft(torch_ones(64), n_fft = 16, window = torch_hann_window(16),
                  return_complex = TRUE)
  expect_true(z$dtype == torch_cfloat())
  expect_tensor_shape(z, c(9, 17))   # centred: 1 + 64 %/% 4 frames
  expect_error(torch_stft(torch_ones(64), n_fft = 16), "return_complex")
})

test_that("scaled_dot_product_attention with R torch's defaults", {
  q <- torch_randn(2, 3, 4, 5, requires_grad = TRUE)
  o <- torch_scaled_dot_product_attention(q, q, q)
  expect_tensor_shape(o, c(2, 3, 4, 5))
  expect_output(print(o$grad_fn), "ScaledDotProductFlashAttentionForCpuBackward0")
  w <- torch_softmax(torch_matmul(q, q$transpose(3, 4)) / sqrt(5), dim = 4)
  expect_equal_to_tensor(o, torch_matmul(w, q), tolerance = 1e-5)
  causal <- torch_scaled_dot_product_attention(q[, , 1:2, ], q, q, is_causal = TRUE)
  expect_equal_to_tensor(causal[, , 1, ], q[, , 1, ], tolerance = 1e-5)
})

test_that("_cdist_backward and _cholesky_solve_helper", {
  x <- torch_tensor(rbind(c(0, 0), c(1, 2)))
  y <- torch_tensor(rbind(c(1, 1)))
  d <- torch_tensor(matrix(c(2, 1), ncol = 1))       # the p = 1 distances
  g <- torch__cdist_backward(torch_ones(2, 1), x, y, 1, d)
  expect_equal_to_r(g, rbind(c(-1, -1), c(0, 1)))
  a <- torch_tensor(rbind(c(2, 0), c(1, 1)))          # a lower Cholesky factor
  b <- torch_tensor(matrix(c(1, 2), ncol = 1))
  s <- torch__cholesky_solve_helper(b, a, FALSE)
  expect_equal_to_tensor(torch_matmul(torch_matmul(a, a$t()), s), b, tolerance = 1e-5)
})

test_that("torch_cdist with R torch's arguments", {
  x <- torch_tensor(rbind(c(0, 0), c(3, 4)), requires_grad = TRUE)
  y <- torch_tensor(rbind(c(0, 0)))
  d <- torch_cdist(x, y)
  expect_equal_to_r(d, matrix(c(0, 5), ncol = 1))
  expect_output(print(d$grad_fn), "CdistBackward0")
  expect_equal_to_r(torch_cdist(x, y, p = 1), matrix(c(0, 7), ncol = 1))
  d$sum()$backward()
  expect_equal_to_r(x$grad, rbind(c(0, 0), c(0.6, 0.8)))
})
