# Expectations in the style of R torch's own test helpers.

expect_tensor <- function(object) {
  expect_true(is_torch_tensor(object))
}

expect_equal_to_r <- function(object, expected, ..., tolerance = 1e-6) {
  expect_equal(as_array(object), expected, ..., tolerance = tolerance)
}

expect_equal_to_tensor <- function(object, expected, ..., tolerance = 1e-6) {
  expect_equal(as_array(object), as_array(expected), ..., tolerance = tolerance)
}

expect_undefined_tensor <- function(object) {
  expect_true(is_undefined_tensor(object))
}

expect_tensor_shape <- function(object, expected) {
  expect_tensor(object)
  expect_equal(object$shape, expected)
}

# What print() shows, as one string with newlines.
printed <- function(x) paste0(paste(capture.output(print(x)), collapse = "\n"), "\n")
