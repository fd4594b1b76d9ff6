# The functional API, gradgradcheck and the graph picture from R (beyond R torch:
# issue 22). Expected values are worked out with base R from the functions' formulas.

dbl <- function(x, requires_grad = FALSE) {
  torch_tensor(x, dtype = torch_float64(), requires_grad = requires_grad)
}
xs <- c(0.3, -1.2, 0.8)

test_that("autograd_jacobian: one input, both strategies, vectorized or not", {
  f <- function(x) x$exp() * x
  for (strategy in c("reverse", "forward")) for (vectorize in c(FALSE, TRUE)) {
    j <- autograd_jacobian(f, dbl(xs), strategy = strategy, vectorize = vectorize)
    expect_equal_to_r(j, diag(exp(xs) * (1 + xs)), tolerance = 1e-12)
  }
})

test_that("autograd_jacobian: several inputs and outputs give nested lists", {
  a <- dbl(xs); b <- dbl(c(2, 3, 4))
  j <- autograd_jacobian(function(a, b) list(a * b, a$sin()), list(a, b))
  expect_length(j, 2); expect_length(j[[1]], 2)
  expect_equal_to_r(j[[1]][[1]], diag(c(2, 3, 4)), tolerance = 1e-12)
  expect_equal_to_r(j[[1]][[2]], diag(xs), tolerance = 1e-12)
  expect_equal_to_r(j[[2]][[1]], diag(cos(xs)), tolerance = 1e-12)
  expect_equal_to_r(j[[2]][[2]], matrix(0, 3, 3))
  # a matrix input: (output shape, input shape)
  m <- dbl(matrix(1:6 / 4, 2, 3))
  jm <- autograd_jacobian(function(m) (m * m)$sum(dim = -1), m, vectorize = TRUE)
  expect_equal(jm$shape, c(2, 2, 3))
  expect_equal_to_r(jm[1, 1, ], 2 * as.numeric(as_array(m)[1, ]), tolerance = 1e-12)
  expect_equal_to_r(jm[1, 2, ], c(0, 0, 0))
})

test_that("autograd_hessian, autograd_hvp and autograd_vhp", {
  f <- function(x) (x^3)$sum()
  expect_equal_to_r(autograd_hessian(f, dbl(xs)), diag(6 * xs), tolerance = 1e-12)
  h <- autograd_hessian(function(x, y) (x * y * y)$sum(), list(dbl(xs), dbl(c(1, 2, 3))))
  expect_equal_to_r(h[[1]][[1]], matrix(0, 3, 3))
  expect_equal_to_r(h[[1]][[2]], diag(2 * c(1, 2, 3)), tolerance = 1e-12)
  expect_equal_to_r(h[[2]][[2]], diag(2 * xs), tolerance = 1e-12)
  v <- dbl(c(1, 2, 3))
  r <- autograd_hvp(f, dbl(xs), v)
  expect_named(r, c("output", "hvp"))
  expect_equal_to_r(r$output, sum(xs^3), tolerance = 1e-12)
  expect_equal_to_r(r$hvp, 6 * xs * c(1, 2, 3), tolerance = 1e-12)
  expect_equal_to_r(autograd_vhp(f, dbl(xs), v)$vhp, 6 * xs * c(1, 2, 3), tolerance = 1e-12)
})

test_that("autograd_jvp is a directional derivative, autograd_vjp its transpose", {
  f <- function(x, y) list(x * y, x$exp())
  u <- list(dbl(c(1, 0, 1)), dbl(c(0, 1, 1)))
  r <- autograd_jvp(f, list(dbl(xs), dbl(c(2, 3, 4))), u)
  expect_named(r, c("output", "jvp"))
  expect_equal_to_r(r$jvp[[1]], c(2, 3, 4) * c(1, 0, 1) + xs * c(0, 1, 1), tolerance = 1e-12)
  expect_equal_to_r(r$jvp[[2]], exp(xs) * c(1, 0, 1), tolerance = 1e-12)
  r <- autograd_vjp(function(x) x$sin(), dbl(xs), dbl(c(1, 2, 3)))
  expect_named(r, c("output", "vjp"))
  expect_equal_to_r(r$vjp, cos(xs) * c(1, 2, 3), tolerance = 1e-12)
})

test_that("create_graph = TRUE gives a Jacobian that is differentiated again", {
  x <- dbl(xs, requires_grad = TRUE)
  j <- autograd_jacobian(function(x) x^3, x, create_graph = TRUE)
  expect_true(j$requires_grad)
  g <- autograd_grad(j$sum(), x)[[1]]
  expect_equal_to_r(g, 6 * xs, tolerance = 1e-12)
})

test_that("errors name what was wrong", {
  expect_error(autograd_hessian(function(x) x * 2, dbl(xs)), "single tensor with one element")
  expect_error(autograd_jacobian(function(x) x$sum(), dbl(xs), vectorize = TRUE),
               "leading batch dim row by row")
  expect_error(autograd_jacobian(function(x) x, dbl(xs), strategy = "sideways"),
               'strategy must be "reverse" or "forward"')
})

cube <- function(save_input) autograd_function(
  forward = function(ctx, x) {
    if (save_input) ctx$save_for_backward(x = x) else ctx$save_for_backward(x2 = x * x)
    x * x * x
  },
  backward = function(ctx, g) {
    s <- ctx$saved_variables
    list(x = g * 3 * (if (save_input) s$x * s$x else s$x2))
  })

test_that("autograd_gradgradcheck passes good functions and catches a wrong double backward", {
  x <- dbl(xs, requires_grad = TRUE)
  expect_true(autograd_gradgradcheck(function(x) x$exp() * x, list(x)))
  expect_true(autograd_gradgradcheck(cube(TRUE), list(x)))
  # an intermediate made in forward carries no history into backward
  expect_true(autograd_gradcheck(cube(FALSE), list(x)))
  expect_error(autograd_gradgradcheck(cube(FALSE), list(x)),
               "second derivatives disagree with finite differences")
  expect_false(autograd_gradgradcheck(cube(FALSE), list(x), raise_exception = FALSE))
})

test_that("autograd_graph: names, saved values, leaves; DOT, viewer, knitr", {
  my_cube <- cube(TRUE)
  w <- torch_ones(3, requires_grad = TRUE)
  y <- (my_cube(w) * 2)$sum()
  g <- autograd_graph(y, params = list(w = w))
  expect_s3_class(g, "autograd_graph")
  expect_match(g$dot, "SumBackward0", fixed = TRUE)
  expect_match(g$dot, "my_cube\ncustom function", fixed = TRUE)
  expect_match(g$dot, "saved x\n[3]", fixed = TRUE)
  expect_match(g$dot, "w\n[3]\nrequires grad", fixed = TRUE)
  # without a viewer print() shows the DOT text
  withr::local_options(viewer = NULL)
  expect_output(print(g), "digraph autograd", fixed = TRUE)
  # with one (RStudio's), an HTML page holding the SVG
  if (!is.null(g$svg)) {
    shown <- NULL
    withr::local_options(viewer = function(url, ...) shown <<- url)
    expect_invisible(print(g))
    page <- paste(readLines(shown), collapse = "\n")
    expect_match(page, "^<!DOCTYPE html>")
    expect_match(page, "<svg", fixed = TRUE)
    expect_false(grepl("<?xml", page, fixed = TRUE))
  }
  # knitr outside HTML output: the DOT text as a code block
  expect_match(as.character(knitr::knit_print(g)), "```\ndigraph", fixed = TRUE)
  # in HTML output (R Markdown): the <svg> element alone, as a raw HTML block
  if (!is.null(g$svg)) {
    old <- knitr::opts_knit$set(rmarkdown.pandoc.to = "html")
    on.exit(knitr::opts_knit$set(old), add = TRUE)
    expect_match(as.character(knitr::knit_print(g)), "^\n```\\{=html\\}\n<svg")
  }
  expect_error(autograd_graph(torch_ones(2)), "does not require grad")
})
