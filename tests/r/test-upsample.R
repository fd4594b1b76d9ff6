# Upsampling from R: the torch_upsample_* ops with R torch's arguments,
# nnf_interpolate and nn_upsample (values, gradients, error classes).

test_that("nearest and bilinear upsampling give R torch's values and gradients", {
  x <- torch_arange(start = 1, end = 4, dtype = torch_float())$view(c(1, 1, 2, 2))
  x$requires_grad_(TRUE)
  y <- nn_upsample(scale_factor = 2, mode = "nearest")(x)
  expect_equal_to_r(y[1, 1, , ], rbind(c(1, 1, 2, 2), c(1, 1, 2, 2), c(3, 3, 4, 4),
                                       c(3, 3, 4, 4)))
  y$sum()$backward()
  expect_equal_to_r(x$grad, array(4, dim = c(1, 1, 2, 2)))
  expect_output(print(y$grad_fn), "UpsampleNearest2DBackward0")
  b <- nnf_interpolate(x, scale_factor = 2, mode = "bilinear", align_corners = TRUE)
  expect_equal_to_r(b[1, 1, c(1, 4), c(1, 4)], rbind(c(1, 2), c(3, 4)))
  expect_equal_to_r(b[1, 1, 1, ], c(1, 4 / 3, 5 / 3, 2), tolerance = 1e-5)
  l <- nnf_interpolate(torch_tensor(array(c(0, 3), dim = c(1, 1, 2))), size = 4,
                       mode = "linear")
  expect_equal_to_r(l[1, 1, ], c(0, 0.75, 2.25, 3))
})

test_that("the ops take R torch's argument names and R vectors", {
  x <- torch_rand(2, 2, 3)
  a <- torch_upsample_nearest1d(x, output_size = 6)
  b <- torch_upsample_nearest1d(self = x, output_size = c(6))
  c <- torch_upsample_nearest1d(input = x, scale_factors = 2)
  expect_equal_to_tensor(a, b)
  expect_equal_to_tensor(a, c)
  expect_equal_to_tensor(a[, , c(1, 3, 5)], x)
  g <- torch_upsample_nearest1d_backward(torch_ones(2, 2, 6), 6, c(2, 2, 3))
  expect_equal_to_r(g, array(2, dim = c(2, 2, 3)))
  t <- torch_upsample_trilinear3d(torch_rand(1, 1, 2, 2, 2), output_size = c(3, 3, 3),
                                  align_corners = TRUE)
  expect_tensor_shape(t, c(1, 1, 3, 3, 3))
  expect_tensor_shape(nnf_interpolate(torch_ones(3, 32, 32), size = 40), c(3, 32, 40))
  expect_tensor_shape(nnf_interpolate(torch_ones(1, 3, 8, 8), scale_factor = c(0.5, 2),
                                      mode = "bicubic"), c(1, 3, 4, 16))
})

test_that("argument errors are value_errors with clear messages", {
  x <- torch_ones(1, 1, 2, 2)
  expect_error(nn_upsample(scale_factor = 2, size = c(4, 4))(x), "only one of",
               class = "value_error")
  expect_error(nn_upsample()(x), "either size or scale_factor", class = "value_error")
  expect_error(nnf_interpolate(x, scale_factor = c(2, 2, 2)), "one per spatial dim",
               class = "value_error")
  expect_error(torch_upsample_nearest1d(x, output_size = 3), "expected a 3-D input")
  expect_error(nnf_interpolate(x, size = 3, mode = "trilinear"), "needs a 5-D input")
})
