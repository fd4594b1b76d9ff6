# with_no_grad, with_enable_grad, local_no_grad, local_enable_grad,
# autograd_set_grad_mode: scoped like R torch (and withr).

test_that("with_no_grad and with_enable_grad nest and restore", {
  x <- torch_tensor(1, requires_grad = TRUE)
  with_no_grad({
    y <- x * 2
    with_enable_grad({
      z <- x * 2
    })
    w <- x * 2
  })
  expect_false(y$requires_grad)
  expect_true(z$requires_grad)
  expect_false(w$requires_grad)
  expect_true((x * 2)$requires_grad)
  z$backward()
  expect_equal_to_r(x$grad, 2)
  expect_equal(with_no_grad(3), 3)
})

test_that("grad mode is restored when the block fails", {
  x <- torch_tensor(1, requires_grad = TRUE)
  expect_error(with_no_grad({
    stop("inside")
  }), "inside")
  expect_true((x * 2)$requires_grad)
})

test_that("in-place updates of leaves under with_no_grad (training step)", {
  w <- torch_tensor(c(1, 2), requires_grad = TRUE)
  loss <- (w * w)$sum()
  loss$backward()
  with_no_grad({
    w$sub_(0.5 * w$grad)
    w$grad$zero_()
  })
  expect_equal_to_r(w, c(0, 0))
  expect_equal_to_r(w$grad, c(0, 0))
  expect_true(w$requires_grad)
})

test_that("local_no_grad lasts until the calling function returns", {
  x <- torch_tensor(1, requires_grad = TRUE)
  f <- function() {
    local_no_grad()
    y <- x * 2
    g <- function() x * 3
    list(y$requires_grad, g()$requires_grad)
  }
  expect_equal(f(), list(FALSE, FALSE))
  expect_true((x * 2)$requires_grad)

  h <- function() {
    local_no_grad()
    inner <- function() {
      local_enable_grad()
      (x * 2)$requires_grad
    }
    c(inner(), (x * 2)$requires_grad)
  }
  expect_equal(h(), c(TRUE, FALSE))
  expect_true((x * 2)$requires_grad)

  failing <- function() {
    local_no_grad()
    stop("oops")
  }
  expect_error(failing(), "oops")
  expect_true((x * 2)$requires_grad)
})

test_that("autograd_set_grad_mode", {
  x <- torch_tensor(1, requires_grad = TRUE)
  expect_invisible(autograd_set_grad_mode(FALSE))
  expect_false((x * 2)$requires_grad)
  autograd_set_grad_mode(TRUE)
  expect_true((x * 2)$requires_grad)
})
