# autograd_function() with R closures (after R torch's test-autograd.R and
# the "Extending autograd" vignette).

test_that("a simple extension, used twice in one graph", {
  custom_pow <- autograd_function(
    forward = function(ctx, var1) {
      ctx$save_for_backward(var1)
      var1^2
    },
    backward = function(ctx, grad_output) {
      v <- ctx$saved_variables[[1]]
      expect_tensor(v)
      list(var1 = 2 * v)
    }
  )
  x <- torch_tensor(c(3), requires_grad = TRUE)
  out <- custom_pow(x)
  out$backward()
  expect_equal_to_r(out, 9)
  expect_equal_to_r(x$grad, 6)

  x <- torch_tensor(c(3), requires_grad = TRUE)
  out <- custom_pow(x) * custom_pow(x)
  out$backward()
  expect_equal_to_r(out, 81)
  expect_equal_to_r(x$grad, 12)
})

test_that("gradients are matched by name, not position", {
  custom <- autograd_function(
    forward = function(ctx, a, b) {
      ctx$save_for_backward(a, b)
      a^2 + b^3
    },
    backward = function(ctx, grad_output) {
      a <- ctx$saved_variables[[1]]
      b <- ctx$saved_variables[[2]]
      list(b = 3 * (b^2), a = 2 * a)
    }
  )
  x <- torch_tensor(c(3), requires_grad = TRUE)
  y <- torch_tensor(c(4), requires_grad = TRUE)
  out <- custom(x, y)
  out$backward()
  expect_equal_to_r(out, 3^2 + 4^3)
  expect_equal_to_r(x$grad, 2 * 3)
  expect_equal_to_r(y$grad, 3 * 4^2)

  x <- torch_tensor(c(3), requires_grad = TRUE)
  y <- torch_tensor(c(4), requires_grad = TRUE)
  out <- custom(b = y, a = x)   # named arguments in another order
  out$backward()
  expect_equal_to_r(x$grad, 2 * 3)
  expect_equal_to_r(y$grad, 3 * 4^2)
})

test_that("the returned function has forward's formals minus ctx", {
  f <- autograd_function(
    forward = function(ctx, input, weight, bias = NULL) input,
    backward = function(ctx, g) list(input = g)
  )
  expect_equal(names(formals(f)), c("input", "weight", "bias"))
  expect_null(formals(f)$bias)
  expect_error(f(), "missing")
})

test_that("named saved variables", {
  custom_pow <- autograd_function(
    forward = function(ctx, var1) {
      ctx$save_for_backward(var1 = var1, var2 = 2 * var1)
      var1^2
    },
    backward = function(ctx, grad_output) {
      v <- ctx$saved_variables
      expect_tensor(v$var1)
      expect_tensor(v$var2)
      expect_named(v, c("var1", "var2"))
      list(var1 = v$var2)
    }
  )
  x <- torch_tensor(c(3), requires_grad = TRUE)
  out <- custom_pow(x)
  out$backward()
  expect_equal_to_r(x$grad, 6)
})

test_that("constants and any R object can be saved and come back unchanged", {
  custom_pow <- autograd_function(
    forward = function(ctx, var1, i) {
      ctx$save_for_backward(var1 = var1, i = i, extra = list(a = 1L, f = sum),
                            label = "hi", nothing = NULL)
      var1^i
    },
    backward = function(ctx, grad_output) {
      v <- ctx$saved_variables
      expect_tensor(v$var1)
      expect_is(v$i, "numeric")
      expect_identical(v$extra, list(a = 1L, f = sum))
      expect_identical(v$label, "hi")
      expect_null(v$nothing)
      expect_named(v, c("var1", "i", "extra", "label", "nothing"))
      list(var1 = v$i * (v$var1^(v$i - 1)))
    }
  )
  x <- torch_tensor(2, requires_grad = TRUE)
  r <- custom_pow(x, 2)
  r$backward()
  expect_equal_to_r(r, 4)
  expect_equal_to_r(x$grad, 4)

  x <- torch_tensor(2, requires_grad = TRUE)
  r <- custom_pow(x, 3)
  r$backward()
  expect_equal_to_r(x$grad, 12)
})

test_that("non-tensor arguments reach forward unchanged", {
  seen <- NULL
  f <- autograd_function(
    forward = function(ctx, x, opts, n = 2L) {
      seen <<- list(opts = opts, n = n)
      x * n
    },
    backward = function(ctx, g) list(x = g * 2)
  )
  x <- torch_tensor(1, requires_grad = TRUE)
  f(x, list(a = "b", m = matrix(1:4, 2)))
  expect_identical(seen, list(opts = list(a = "b", m = matrix(1:4, 2)), n = 2L))
})

test_that("needs_input_grad is a named list", {
  needs <- NULL
  f <- autograd_function(
    forward = function(ctx, a, b, k) {
      needs <<- ctx$needs_input_grad
      a * b * k
    },
    backward = function(ctx, g) list(a = g, b = g)
  )
  f(torch_tensor(1, requires_grad = TRUE), torch_tensor(2), 3)
  expect_identical(needs, list(a = TRUE, b = FALSE, k = FALSE))
})

test_that("forward can return a list; backward gets one gradient per output", {
  custom_pow <- autograd_function(
    forward = function(ctx, var1, i) {
      ctx$save_for_backward(var1 = var1, i = i)
      list(var1^i, var1^(i + 1))
    },
    backward = function(ctx, grad_output) {
      v <- ctx$saved_variables
      expect_tensor(grad_output[[1]])
      expect_tensor(grad_output[[2]])
      list(var1 = v$i * (v$var1^(v$i - 1)))
    }
  )
  x <- torch_tensor(2, requires_grad = TRUE)
  r <- custom_pow(x, 2)
  expect_true(is.list(r))
  expect_length(r, 2)
  r[[1]]$backward()
  expect_equal_to_r(x$grad, 4)

  custom_pow <- autograd_function(
    forward = function(ctx, var1, i) {
      ctx$save_for_backward(var1 = var1, i = i)
      list(var1^i, var1^(i + 1))
    },
    backward = function(ctx, out1, out2) {
      v <- ctx$saved_variables
      expect_tensor(out1)
      expect_tensor(out2)
      list(var1 = out1 * v$i * (v$var1^(v$i - 1)) + out2 * (v$i + 1) * v$var1^v$i)
    }
  )
  x <- torch_tensor(2, requires_grad = TRUE)
  r <- custom_pow(x, 2)
  (r[[1]] + r[[2]])$backward()
  expect_equal_to_r(x$grad, 4 + 12)
})

test_that("mark_dirty", {
  inplace <- autograd_function(
    forward = function(ctx, a, b) {
      ctx$mark_dirty(a)
      list(a$add_(b), b + 2)
    },
    backward = function(ctx, ga, gb) {
      list(a = ga, b = ga + gb)
    }
  )
  x <- torch_tensor(2)
  y <- torch_tensor(3, requires_grad = TRUE)
  r <- inplace(x, y)
  expect_equal_to_tensor(r[[1]], x)
  expect_equal_to_r(x, 5)
  expect_true(r[[1]]$requires_grad)
  r[[1]]$backward()
  expect_equal_to_r(y$grad, 1)

  double_in_place <- autograd_function(
    forward = function(ctx, x) {
      x$mul_(2)
      ctx$mark_dirty(x)
      list(x, x)
    },
    backward = function(ctx, g1, g2) {
      list(x = g1 * 2 + g2 * 2)
    }
  )
  x <- torch_tensor(5, requires_grad = TRUE)
  expect_error(double_in_place(x), "leaf Variable that requires grad")
})

test_that("mark_non_differentiable", {
  myfun <- autograd_function(
    forward = function(ctx, input) {
      output <- input > 0
      ctx$mark_non_differentiable(output)
      output
    },
    backward = function(ctx, g) {
      list(input = g * 0)
    }
  )
  x <- torch_tensor(c(-1, 2), requires_grad = TRUE)
  mask <- myfun(x)
  expect_false(mask$requires_grad)
  y <- x$masked_fill(mask, 0)
  expect_no_error(y$sum()$backward())

  myfun <- autograd_function(
    forward = function(ctx, input) {
      a <- input + 1
      b <- input + 2
      ctx$mark_non_differentiable(a)
      list(a, b)
    },
    backward = function(ctx, ga, gb) {
      expect_equal_to_r(ga, 0)
      expect_equal_to_r(gb, 1)
      list(input = gb)
    }
  )
  x <- torch_tensor(1, requires_grad = TRUE)
  r <- myfun(x)
  expect_false(r[[1]]$requires_grad)
  expect_true(r[[2]]$requires_grad)
  r[[2]]$backward()
  expect_equal_to_r(x$grad, 1)
})

test_that("errors in forward and backward are R errors with their message", {
  custom_pow <- autograd_function(
    forward = function(ctx, var1) {
      stop("stop forward")
      var1^2
    },
    backward = function(ctx, grad_output) list(var1 = 2 * grad_output)
  )
  x <- torch_tensor(1, requires_grad = TRUE)
  expect_error(custom_pow(x), "stop forward")

  custom_pow <- autograd_function(
    forward = function(ctx, var1) {
      ctx$save_for_backward(var1)
      var1^2
    },
    backward = function(ctx, grad_output) {
      stop("stop backward")
    }
  )
  r <- custom_pow(x)
  expect_error(r$backward(), "stop backward")
  cond <- tryCatch(custom_pow(x)$backward(), error = identity)
  expect_identical(conditionMessage(cond), "stop backward")

  exp2 <- autograd_function(
    forward = function(ctx, i) {
      result <- i$exp()
      ctx$save_for_backward(result = result)
      result
    },
    backward = function(ctx, grad_output) {
      stop("error in GRADFOO")
    }
  )
  w2 <- torch_randn(4, 3, 5, 5)$requires_grad_()
  m2 <- exp2(w2)$mean()
  expect_error(autograd_grad(m2, w2, torch_ones_like(m2)), regexp = "GRADFOO")

  # the session keeps working and nothing was accumulated
  expect_undefined_tensor(x$grad)
  (x * 2)$backward()
  expect_equal_to_r(x$grad, 2)
})

test_that("bad backward results give clear errors", {
  f <- autograd_function(
    forward = function(ctx, x) x * 2,
    backward = function(ctx, g) list(y = g)
  )
  x <- torch_tensor(1, requires_grad = TRUE)
  expect_error(f(x)$backward(), "'y'")
  f <- autograd_function(
    forward = function(ctx, x) x * 2,
    backward = function(ctx, g) list(x = torch_ones(3))
  )
  expect_error(f(torch_ones(2, requires_grad = TRUE))$sum()$backward(), "shape")
  f <- autograd_function(
    forward = function(ctx, x) 42,
    backward = function(ctx, g) list(x = g)
  )
  expect_error(f(x), "forward must return a tensor")
})

test_that("a custom function inside a graph of built-in ops, and autograd_grad", {
  exp2 <- autograd_function(
    forward = function(ctx, i) {
      result <- i$exp()
      ctx$save_for_backward(result = result)
      result
    },
    backward = function(ctx, grad_output) {
      list(i = grad_output * ctx$saved_variables$result)
    }
  )
  torch_manual_seed(1)
  w1 <- torch_randn(4, 3, 5, 5)$requires_grad_()
  m1 <- exp(w1)$mean()
  grad1 <- autograd_grad(m1, w1, torch_ones_like(m1))
  w2 <- w1$detach()$requires_grad_()
  m2 <- exp2(w2)$mean()
  grad2 <- autograd_grad(m2, w2, torch_ones_like(m2))
  expect_equal_to_tensor(grad1[[1]], grad2[[1]])
})

test_that("second derivatives flow through a custom function", {
  cube <- autograd_function(
    forward = function(ctx, x) {
      ctx$save_for_backward(x = x)
      x^3
    },
    backward = function(ctx, g) list(x = g * 3 * ctx$saved_variables$x^2)
  )
  x <- torch_tensor(2, requires_grad = TRUE)
  g <- autograd_grad(cube(x), x, create_graph = TRUE)[[1]]
  expect_equal_to_r(g, 12)
  g2 <- autograd_grad(g, x)[[1]]
  expect_equal_to_r(g2, 12)
})

test_that("the grad_fn of a custom function prints R torch's node name", {
  f <- autograd_function(
    forward = function(ctx, x) x * 2,
    backward = function(ctx, g) list(x = g * 2)
  )
  y <- f(torch_tensor(1, requires_grad = TRUE))
  expect_output(print(y$grad_fn), "torch::autograd::CppNode<torch::autograd::LanternFunction>",
                fixed = TRUE)
})

test_that("forward with ... arguments", {
  f <- autograd_function(
    forward = function(ctx, x, ...) {
      extra <- list(...)
      x * length(extra)
    },
    backward = function(ctx, g) list(x = g)
  )
  x <- torch_tensor(1, requires_grad = TRUE)
  expect_equal_to_r(f(x, 1, 2, 3), 3)
})

test_that("R conditions keep their class through the engine", {
  g <- autograd_function(
    forward = function(ctx, x) x * 2,
    backward = function(ctx, g) {
      stop(structure(class = c("my_error", "error", "condition"),
                     list(message = "classed", call = NULL)))
    }
  )
  y <- g(torch_tensor(1, requires_grad = TRUE))
  expect_identical(tryCatch(y$backward(), my_error = function(e) conditionMessage(e)),
                   "classed")
  h <- autograd_function(
    forward = function(ctx, x) stop(structure(class = c("fwd_error", "error", "condition"),
                                              list(message = "in forward", call = NULL))),
    backward = function(ctx, g) list(x = g)
  )
  expect_error(h(torch_tensor(1, requires_grad = TRUE)), class = "fwd_error")
})

test_that("Python errors inside R callbacks come back with their message", {
  f <- autograd_function(
    forward = function(ctx, x) x$sum(dim = 0),
    backward = function(ctx, g) list(x = g)
  )
  expect_error(f(torch_ones(2, requires_grad = TRUE)), "Indexing starts at 1 but found a 0.",
               fixed = TRUE)
})
