# torch_<name>_out(out, ...) from R: made from the registry for every function
# op with one tensor result; R's conventions (1-based dims, sizes) as in the
# plain function; the result written into `out`, which is returned.

test_that("the result is written into out and returned", {
  out <- torch_zeros(c(2, 2))
  x <- torch_rand(c(2, 2))
  y <- torch_rand(2)
  z <- torch_rand(2)
  k <- torch_addr_out(out, x, y, z, beta = 0.5, alpha = 2)
  expect_equal_to_tensor(out, k)
  expect_equal_to_tensor(out, torch_addr(x, y, z, beta = 0.5, alpha = 2))
  out <- torch_empty(0)
  torch_add_out(out = out, torch_ones(3), 2)
  expect_equal_to_r(out, c(3, 3, 3))
})

test_that("dims are 1-based and sizes are R's, as in the plain functions", {
  x <- torch_tensor(rbind(c(1, 2, 3), c(4, 5, 6)))
  out <- torch_empty(0)
  torch_sum_out(out, x, dim = 2)
  expect_equal_to_r(out, c(6, 15))
  torch_cumsum_out(out, x, dim = 1)
  expect_equal_to_r(out, rbind(c(1, 2, 3), c(5, 7, 9)))
  o <- torch_ones(2)
  torch_zeros_out(o, c(2, 3))
  expect_equal(o$shape, c(2, 3))
  expect_equal_to_r(o$sum(), 0)
  l <- torch_empty(0, dtype = torch_long())
  torch_ones_out(l, 4)
  expect_true(l$dtype == torch_long())
  expect_equal(as_array(l), rep(1, 4))
})

test_that("upsample out forms, and grad_input for the backward ops", {
  x <- torch_rand(c(1, 2, 3))
  y <- torch_zeros(c(1, 2, 6))
  torch_upsample_nearest1d_out(y, self = x, output_size = 6)
  expect_equal_to_tensor(y, torch_upsample_nearest1d(x, output_size = 6))
  y2 <- torch_zeros(c(1, 2, 6))
  torch_upsample_nearest1d_out(out = y2, self = x, output_size = c(6))
  expect_equal_to_tensor(y2, y)
  g <- torch_rand(c(1, 2, 6))
  gi <- torch_zeros(c(1, 2, 3))
  torch_upsample_nearest1d_backward_out(grad_input = gi, grad_output = g, output_size = 6,
                                        input_size = c(1, 2, 3))
  expect_equal_to_tensor(gi, torch_upsample_nearest1d_backward(g, 6, c(1, 2, 3)))
  expect_equal_to_tensor(gi, g$view(c(1, 2, 3, 2))$sum(dim = 4))
})

test_that("out forms refuse autograd and lossy casts, with clear messages", {
  x <- torch_ones(3, requires_grad = TRUE)
  expect_error(torch_exp_out(torch_zeros(3), x), "don't support automatic differentiation")
  expect_error(torch_exp_out(torch_zeros(3, requires_grad = TRUE), torch_ones(3)),
               "leaf that requires grad")
  with_no_grad(torch_exp_out(o <- torch_zeros(3), x))
  expect_equal_to_r(o, rep(exp(1), 3))
  expect_error(torch_abs_out(torch_zeros(3, dtype = torch_long()), torch_ones(3)),
               "result type Float can't be cast to the desired output type Long")
  expect_warning(torch_add_out(torch_zeros(2), torch_ones(3), 1), "was resized")
  expect_error(torch_where_out(torch_zeros(2), torch_tensor(c(TRUE, FALSE))), "not one tensor")
})
