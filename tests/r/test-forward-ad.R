# Forward-mode AD from R: dual tensors, custom functions' jvp, gradcheck's forward
# check, against the derivatives written out in R (tests/test_forward_ad.py checks
# every op's tangents against PyTorch).

test_that("dual tensors carry tangents through ops, and only inside their level", {
  x <- torch_tensor(c(0.5, 1, 2), dtype = torch_float64())
  t <- torch_tensor(c(1, -1, 0.5), dtype = torch_float64())
  w <- torch_tensor(matrix(c(1, 2, 3, 4, 5, 6), 2, 3), dtype = torch_float64())
  with_dual_level({
    d <- make_dual(x, t)
    y <- torch_matmul(w, torch_tanh(d) * d)$sum()
    u <- unpack_dual(y)
    expect_equal(names(u), c("primal", "tangent"))
    xa <- as_array(x); ta <- as_array(t)
    dy <- (tanh(xa) + xa * (1 - tanh(xa)^2)) * ta
    expect_equal(as_array(u$tangent), sum(as_array(w) %*% dy), tolerance = 1e-12)
    expect_equal(as_array(u$primal), as_array(y))
    expect_null(unpack_dual(x)$tangent)
    s <- unpack_dual(nnf_softmax(d, dim = 1))$tangent
    p <- exp(xa) / sum(exp(xa))
    expect_equal(as_array(s), p * ta - p * sum(p * ta), tolerance = 1e-12)
    kept <- d
  })
  expect_null(unpack_dual(kept)$tangent)
})

test_that("a custom function's jvp gets the input tangents by name, NULL where none", {
  seen <- NULL
  f <- autograd_function_with_jvp(
    forward = function(ctx, x, y) {
      ctx$save_for_forward(x = x, y = y)
      x * torch_exp(y)
    },
    backward = function(ctx, grad_output) list(x = grad_output, y = grad_output),
    jvp = function(ctx, x, y) {
      seen <<- c(x = is.null(x), y = is.null(y))
      s <- ctx$saved_variables
      out <- torch_zeros_like(s$x)
      if (!is.null(x)) out <- out + x * torch_exp(s$y)
      if (!is.null(y)) out <- out + s$x * torch_exp(s$y) * y
      out
    }
  )
  a <- torch_tensor(c(1, 2), dtype = torch_float64())
  b <- torch_tensor(c(0.5, -1), dtype = torch_float64())
  with_dual_level({
    got <- unpack_dual(f(make_dual(a, torch_ones_like(a)), b))$tangent
    expect_equal(seen, c(x = FALSE, y = TRUE))
    expect_equal(as_array(got), exp(c(0.5, -1)))
    got <- unpack_dual(f(a, make_dual(b, torch_ones_like(b))))$tangent
    expect_equal(seen, c(x = TRUE, y = FALSE))
    expect_equal(as_array(got), c(1, 2) * exp(c(0.5, -1)))
  })
})

test_that("autograd_gradcheck(check_forward_ad = TRUE) checks forward-mode tangents", {
  x <- torch_tensor(c(0.3, 0.7, -0.2), dtype = torch_float64(), requires_grad = TRUE)
  expect_true(autograd_gradcheck(function(v) torch_cumsum(v$exp() * v, 1), list(x),
                                 check_forward_ad = TRUE))
  wrong_jvp <- autograd_function_with_jvp(
    forward = function(ctx, x) { ctx$save_for_backward(x = x); x^2 },
    backward = function(ctx, g) list(x = 2 * ctx$saved_variables$x * g),
    jvp = function(ctx, x) 3 * x
  )
  expect_true(autograd_gradcheck(wrong_jvp, list(x)))
  expect_false(autograd_gradcheck(wrong_jvp, list(x), check_forward_ad = TRUE,
                                  raise_exception = FALSE))
  expect_error(autograd_gradcheck(wrong_jvp, list(x), check_forward_ad = TRUE),
               "Forward-mode Jacobian mismatch")
})
