# Autograd from R: backward, hooks, grad_fn, autograd_backward/grad,
# requires_grad, anomaly detection (after R torch's test-autograd.R).

test_that("backward accumulates into leaves and is invisible", {
  x <- torch_tensor(c(1), requires_grad = TRUE)
  y <- 2 * x
  expect_invisible(y$backward())
  expect_equal_to_r(x$grad, 2)
  (3 * x)$backward()
  expect_equal_to_r(x$grad, 5)
})

test_that("grad is an undefined tensor before backward", {
  x <- torch_tensor(1, requires_grad = TRUE)
  expect_undefined_tensor(x$grad)
  expect_tensor(x$grad)
  expect_identical(printed(x$grad), "torch_tensor\n[ Tensor (undefined) ]\n")
})

test_that("requires_grad can be read and set in every spelling", {
  x <- torch_tensor(1, requires_grad = FALSE)
  expect_false(x$requires_grad)
  x$requires_grad_(TRUE)
  expect_true(x$requires_grad)
  x$requires_grad <- FALSE
  expect_false(x$requires_grad)
  x[["requires_grad"]] <- TRUE
  expect_true(x$requires_grad)
  x[["requires_grad"]] <- FALSE
  expect_false(x[["requires_grad"]])
  expect_error(torch_tensor(1L)$requires_grad_(TRUE), "floating point")
})

test_that("grad can be assigned", {
  x <- torch_tensor(c(1, 2), requires_grad = TRUE)
  x$grad <- torch_tensor(c(5, 6))
  expect_equal_to_r(x$grad, c(5, 6))
  (x * 1)$sum()$backward()
  expect_equal_to_r(x$grad, c(6, 7))
})

test_that("is_leaf, grad_fn and next_functions", {
  x <- torch_ones(c(2, 2), requires_grad = TRUE)
  expect_true(x$is_leaf)
  expect_null(x$grad_fn)
  y <- x$mean()
  expect_false(y$is_leaf)
  expect_output(print(y$grad_fn), "MeanBackward0")
  expect_identical(printed(y$grad_fn), "MeanBackward0\n")
  k <- y$grad_fn$next_functions
  expect_length(k, 1)
  expect_output(print(k[[1]]), "AccumulateGrad")
  expect_length(k$next_functions, 0)
  # An R number as `other` is a libtorch Scalar: the Scalar overload's node.
  z <- x * 2
  expect_output(print(z$grad_fn), "MulBackward1")
  expect_length(z$grad_fn$next_functions, 1)
  expect_output(print((2 * x)$grad_fn), "MulBackward0")
  expect_output(print((x + 1)$grad_fn), "AddBackward1")
  expect_output(print((x - 1)$grad_fn), "SubBackward1")
  expect_output(print((x / 2)$grad_fn), "DivBackward1")
  expect_output(print((x * x)$grad_fn), "MulBackward0")
  expect_null(torch_tensor(1)$grad_fn)
})

test_that("tensor printing shows requires_grad and grad_fn", {
  x <- torch_tensor(c(1, 2), requires_grad = TRUE)
  expect_identical(printed(x),
                   "torch_tensor\n 1\n 2\n[ CPUFloatType{2} ][ requires_grad = TRUE ]\n")
  expect_identical(printed(x * 2),
                   "torch_tensor\n 2\n 4\n[ CPUFloatType{2} ][ grad_fn = <MulBackward1> ]\n")
})

test_that("register_hook sees the gradient, can replace it, and can be removed", {
  x <- torch_tensor(c(2), requires_grad = TRUE)
  x$register_hook(function(grad) {
    print("hello")
  })
  y <- 2 * x
  expect_output(y$backward(), "hello")
  expect_equal_to_r(x$grad, 2)

  x <- torch_tensor(c(2), requires_grad = TRUE)
  x$register_hook(function(grad) print(grad))
  expect_output((2 * x)$backward(), "torch_tensor")

  x <- torch_tensor(c(2), requires_grad = TRUE)
  x$register_hook(function(grad) print("ABABA"))
  y <- 2 * x
  y$register_hook(function(grad) print("EBEBE"))
  expect_output(y$backward(), "EBEBE.*ABABA")

  x <- torch_tensor(c(2), requires_grad = TRUE)
  x$register_hook(function(grad) 2 * grad)
  y <- 2 * x
  y$backward(retain_graph = TRUE)
  expect_equal_to_r(x$grad, 4)

  v <- NULL
  x <- torch_tensor(1, requires_grad = TRUE)
  hook <- x$register_hook(function(grad) v <<- c(v, "x"))
  expect_output(print(hook), "<torch_hook>")
  (2 * x)$backward()
  expect_equal(v, "x")
  expect_invisible(hook$remove())
  (2 * x)$backward()
  expect_equal(v, "x")
})

test_that("a hook on a non-leaf and hooks that call backward", {
  x <- torch_randn(5, requires_grad = TRUE)
  x_list <- x$unbind()
  hook_results <- NULL
  x_list[[1]]$register_hook(function(grad) hook_results <<- grad)
  x_list[[1]]$backward()
  expect_equal_to_r(hook_results, 1)
  expect_equal_to_r(x$grad, c(1, 0, 0, 0, 0))

  v <- NULL
  x <- torch_tensor(1, requires_grad = TRUE)
  y <- 2 * x
  x$register_hook(function(grad) v <<- c(v, "x"))
  a <- torch_tensor(1, requires_grad = TRUE)
  a$register_hook(function(grad) {
    v <<- c(v, "a")
    y$backward()
  })
  k <- torch_tensor(1, requires_grad = TRUE)
  l <- 2 * k
  k$register_hook(function(grad) {
    v <<- c(v, "k")
    a$backward()
  })
  l$backward()
  expect_equal(v, c("k", "a", "x"))
})

test_that("an error in a hook is an R error and the session goes on", {
  x <- torch_tensor(c(2), requires_grad = TRUE)
  x$register_hook(function(grad) stop("hook failed"))
  y <- 2 * x
  expect_error(y$backward(), "hook failed")
  e <- tryCatch((3 * x)$backward(), error = function(e) e)
  expect_s3_class(e, "simpleError")
  expect_equal(conditionMessage(e), "hook failed")
  z <- torch_tensor(1, requires_grad = TRUE)
  (z * 3)$backward()
  expect_equal_to_r(z$grad, 3)
})

test_that("retain_grad is invisible and keeps a non-leaf's grad", {
  x <- torch_tensor(1, requires_grad = TRUE)
  expect_invisible(x$retain_grad())
  y <- x * 3
  expect_invisible(y$retain_grad())
  (y * 2)$backward()
  expect_equal_to_r(y$grad, 2)
  expect_equal_to_r(x$grad, 6)
})

test_that("backward twice without retain_graph fails", {
  x <- torch_tensor(2, requires_grad = TRUE)
  y <- x * x
  y$backward(retain_graph = TRUE)
  y$backward()
  expect_equal_to_r(x$grad, 8)
  expect_error(y$backward(), "second time")
})

test_that("non-scalar backward needs a gradient", {
  x <- torch_tensor(c(1, 2), requires_grad = TRUE)
  y <- x * 2
  expect_error(y$backward(), "only for scalar outputs")
  y$backward(torch_ones(2))
  expect_equal_to_r(x$grad, c(2, 2))
})

test_that("autograd_backward", {
  x <- torch_tensor(1, requires_grad = TRUE)
  y <- 2 * x
  a <- torch_tensor(1, requires_grad = TRUE)
  b <- 3 * a
  on <- torch_ones(c(1))
  expect_invisible(autograd_backward(list(y, b), list(on, on)))
  expect_equal_to_r(x$grad, 2)
  expect_equal_to_r(a$grad, 3)

  x <- torch_tensor(1, requires_grad = TRUE)
  a <- torch_tensor(1, requires_grad = TRUE)
  autograd_backward(list(2 * x, 3 * a), list(NULL, on))
  expect_equal_to_r(x$grad, 2)
  expect_equal_to_r(a$grad, 3)

  x <- torch_tensor(1, requires_grad = TRUE)
  autograd_backward(2 * x)
  expect_equal_to_r(x$grad, 2)
})

test_that("autograd_grad with create_graph gives higher derivatives", {
  x <- torch_randn(c(2, 2), requires_grad = TRUE)
  y <- torch_randn(c(2, 2), requires_grad = TRUE)
  z <- x^2 + y * x + y^2
  z$backward(torch_ones(c(2, 2)), create_graph = TRUE)
  x_grad <- 2 * x + y
  y_grad <- x + 2 * y
  expect_equal_to_tensor(x$grad, x_grad)
  expect_equal_to_tensor(y$grad, y_grad)

  grad_sum <- 2 * x$grad + y$grad
  x_hv <- autograd_grad(
    outputs = grad_sum,
    grad_outputs = torch_ones(c(2, 2)),
    inputs = x,
    create_graph = TRUE
  )
  expect_equal_to_tensor(x_hv[[1]], torch_ones(c(2, 2)) * 5)
  expect_equal_to_tensor(x$grad, x_grad)

  u <- torch_tensor(3, requires_grad = TRUE)
  g <- autograd_grad(u^3, u, create_graph = TRUE)[[1]]
  expect_equal_to_r(g, 27)
  g2 <- autograd_grad(g, u)[[1]]
  expect_equal_to_r(g2, 18)
})

test_that("autograd_grad retain_graph and allow_unused", {
  w <- torch_tensor(0.5, requires_grad = TRUE)
  b <- torch_tensor(0.9, requires_grad = TRUE)
  x <- torch_tensor(runif(100))
  y <- 2 * x + 1
  loss <- ((y - (w * x + b))^2)$mean()
  out <- autograd_grad(loss, list(w, b))
  expect_length(out, 2)
  expect_error(autograd_grad(loss, list(w, b)), regexp = "graph a second time")

  loss <- ((y - (w * x))^2)$mean()
  expect_error(autograd_grad(loss, list(w, b), retain_graph = TRUE),
               regexp = "not have been used in the graph")
  out <- autograd_grad(loss, list(w, b), allow_unused = TRUE)
  expect_length(out, 2)
  expect_tensor(out[[1]])
  expect_undefined_tensor(out[[2]])
  expect_undefined_tensor(w$grad)
})

test_that("with_detect_anomaly warns and names the failing op", {
  x <- torch_randn(2, requires_grad = TRUE)
  y <- torch_randn(1)
  b <- (x^y)$sum()
  y$add_(1)
  expect_error(b$backward(retain_graph = TRUE), regexp = "detect_anomaly")
  expect_warning(regexp = "should be enabled only for debugging", {
    expect_error(regexp = "one of the variables needed", {
      with_detect_anomaly({
        b$backward()
      })
    })
  })
})

test_that("in-place on a leaf that requires grad is refused", {
  x <- torch_tensor(1, requires_grad = TRUE)
  expect_error(x$add_(1), "leaf Variable that requires grad")
  with_no_grad(x$add_(1))
  expect_equal_to_r(x, 2)
})

test_that("autograd_gradcheck checks an R autograd_function", {
  cube <- autograd_function(
    forward = function(ctx, x) {
      ctx$save_for_backward(x = x)
      x^3
    },
    backward = function(ctx, g) list(x = g * 3 * ctx$saved_variables$x^2)
  )
  x <- torch_tensor(c(0.5, -1.2, 2), dtype = torch_double(), requires_grad = TRUE)
  expect_true(autograd_gradcheck(cube, list(x)))
  wrong <- autograd_function(
    forward = function(ctx, x) x^3,
    backward = function(ctx, g) list(x = g)
  )
  expect_error(autograd_gradcheck(wrong, list(x)), "Jacobian mismatch")
})
