# The seed documents' examples, verbatim (R torch's autograd_function
# reference page and the "Extending autograd" vignette).

test_that("exp2 from the autograd_function reference page", {
  exp2 <- autograd_function(
    forward = function(ctx, i) {
      result <- i$exp()
      ctx$save_for_backward(result = result)
      result
    },
    backward = function(ctx, grad_output) {
      list(i = grad_output * ctx$saved_variable$result)
    }
  )
  x <- torch_tensor(c(0, 1, 2), requires_grad = TRUE)
  y <- exp2(x)
  expect_equal_to_r(y, exp(c(0, 1, 2)))
  y$sum()$backward()
  expect_equal_to_r(x$grad, exp(c(0, 1, 2)))
})

test_that("linear from the vignette, with 1-based dims", {
  linear <- autograd_function(
    forward = function(ctx, input, weight, bias = NULL) {
      ctx$save_for_backward(input = input, weight = weight, bias = bias)
      output <- input$mm(weight$t())
      if (!is.null(bias))
        output <- output + bias$unsqueeze(1)$expand_as(output)

      output
    },
    backward = function(ctx, grad_output) {
      s <- ctx$saved_variables

      grads <- list(
        input = NULL,
        weight = NULL,
        bias = NULL
      )

      if (ctx$needs_input_grad$input)
        grads$input <- grad_output$mm(s$weight)

      if (ctx$needs_input_grad$weight)
        grads$weight <- grad_output$t()$mm(s$input)

      if (!is.null(s$bias) && ctx$needs_input_grad$bias)
        grads$bias <- grad_output$sum(dim = 1)

      grads
    }
  )
  x <- torch_tensor(matrix(c(1, 2, 3, 4), ncol = 2), requires_grad = TRUE)
  w <- torch_tensor(matrix(c(2, 3, 4, 5), ncol = 2), requires_grad = TRUE)
  b <- torch_tensor(c(1, 1), requires_grad = TRUE)
  o <- linear(x, w, b)
  expect_equal_to_r(o, matrix(c(15, 21, 19, 27), ncol = 2))
  o$sum()$backward()
  expect_equal_to_r(w$grad, matrix(c(3, 3, 7, 7), ncol = 2))
  expect_equal_to_r(b$grad, c(2, 2))
  expect_equal_to_r(x$grad, matrix(c(5, 5, 9, 9), ncol = 2))

  # without the optional bias
  w2 <- torch_tensor(matrix(c(2, 3), ncol = 2), requires_grad = TRUE)
  o <- linear(torch_tensor(matrix(c(1, 1, 1, 1), ncol = 2)), w2)
  l <- torch_mean((torch_tensor(matrix(c(2, 2), ncol = 1)) - o)^2)
  l$backward()
  expect_equal_to_r(w2$grad, matrix(c(6, 6), ncol = 2))
})

test_that("the vignette's sum(dim = 0) is refused, as in R torch", {
  x <- torch_ones(2, 2)
  expect_error(x$sum(dim = 0), "Indexing starts at 1 but found a 0.", fixed = TRUE)
})

test_that("mul_constant from the vignette prints R torch's output", {
  mul_constant <- autograd_function(
    forward = function(ctx, tensor, constant) {
      ctx$save_for_backward(constant = constant)
      tensor * constant
    },
    backward = function(ctx, grad_output) {
      v <- ctx$saved_variables
      list(
        tensor = grad_output * v$constant
      )
    }
  )
  x <- torch_tensor(1, requires_grad = TRUE)
  o <- mul_constant(x, 2)
  o$backward()
  expect_identical(printed(x$grad), "torch_tensor\n 2\n[ CPUFloatType{1} ]\n")
})
