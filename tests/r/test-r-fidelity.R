# R torch's conventions that the conformance run checks too, tested here as
# well so that they hold where R torch's own test files are not at hand.

test_that("R's Summary group reduces each tensor, then combines, as R torch does", {
  t1 <- torch_tensor(c(1, 5, 3))
  t2 <- torch_tensor(c(4, 2))
  expect_equal_to_r(max(t1, t2), 5)
  expect_equal_to_r(min(t1, t2), 1)
  expect_equal_to_r(sum(t1, t2), 15)
  expect_equal_to_r(prod(t1, t2), 120)
  m <- torch_tensor(matrix(1:6, 2))
  expect_equal_to_r(sum(m, dim = 1), c(3L, 7L, 11L))
  expect_equal_to_r(prod(m, dim = 2), c(15L, 48L))
  expect_error(sum(t1, t2, dim = 1), "only with a single tensor")
  expect_error(sum(t1, na.rm = TRUE), "do not have NAs")
})

test_that("devices are torch_device objects", {
  x <- torch_tensor(1)
  expect_s3_class(x$device, "torch_device")
  expect_equal(x$device$type, "cpu")
  expect_equal(as.character(torch_device("cpu:0")), "cpu:0")
  expect_equal(printed(torch_device("cpu")), "torch_device(type='cpu') \n")  # R torch's cat(s, "\n")
  expect_equal(x$to(device = torch_device("cpu"))$device$type, "cpu")
  expect_equal(printed(torch_device("cuda:1")), "torch_device(type='cuda', index=1) \n")
  expect_error(torch_tensor(1)$to(device = torch_device("cuda:1")),
               "PyTorch is not linked with support for cuda devices", class = "runtime_error")
})

test_that("engine errors carry R torch's condition classes and R's call", {
  x <- torch_tensor(c(1, 2))
  e <- tryCatch(x$sum(dim = 5), error = identity)
  expect_s3_class(e, "runtime_error")
  expect_match(conditionMessage(e), "Dimension out of range")
  expect_equal(deparse(conditionCall(e)), "x$sum(dim = 5)")
  expect_s3_class(tryCatch(x$reshape(c(1.5, 2)), error = identity), "value_error")
  expect_s3_class(tryCatch(torch_tensor(list(sum)), error = identity), "type_error")
})

test_that("in-place methods return the very object they changed", {
  x <- torch_tensor(c(-1, 2))
  y <- x$abs_()$abs_()
  expect_identical(rlang::obj_address(x), rlang::obj_address(y))
  expect_equal_to_r(x, c(1, 2))
})

test_that("x$data(), x$set_grad_() and torch_linalg_norm() as in R torch", {
  w <- torch_ones(2, 3, requires_grad = TRUE)
  w$set_grad_(torch_full(c(2, 3), 2))
  expect_equal_to_r(w$grad$data()$sum(), 12)
  expect_false(w$data()$requires_grad)
  expect_equal_to_r(torch_linalg_norm(torch_tensor(c(3, -4)), ord = Inf), 4)
})

test_that("R values: integer64 becomes int64; a broadcast shape is a numeric vector", {
  x <- torch_tensor(bit64::as.integer64(c(1, 2, 2^40)))
  expect_true(x$dtype == torch_long())
  expect_equal(x$sum()$item(), 2 + 2^40 + 1)
  expect_equal(torch_broadcast_shapes(c(2, 1), c(1, 3)), c(2L, 3L))
})

test_that("testthat's edition-3 comparison of tensors looks at values, requires_grad and grad_fn", {
  testthat::local_edition(3)
  expect_equal(torch_tensor(c(1, 2)), torch_tensor(c(1, 2)))
  expect_failure(expect_equal(torch_tensor(1), torch_tensor(2)))
  x <- torch_tensor(1, requires_grad = TRUE)
  expect_failure(expect_equal(x, x$clone()))
})

test_that("cross-entropy's ignore_index is a 1-based class", {
  logits <- torch_tensor(matrix(c(10, 0, 0, 10), 2))
  target <- torch_tensor(c(1L, 2L))
  expect_true(is.nan(as.numeric(nnf_cross_entropy(logits, torch_tensor(c(2L, 2L)),
                                                  ignore_index = 2))))
  expect_error(nnf_cross_entropy(logits, target, ignore_index = 0), "1 based class index")
})

# R torch 0.17's pages (dev/reference), as rtorch-py docs-check runs them
test_that("the shim is R torch 0.17.0, with magrittr's pipe", {
  expect_equal(as.character(packageVersion("torch")), "0.17.0")
  expect_equal(as_array(torch_tensor(c(1, 4)) %>% torch_sqrt()), c(1, 2))
})

test_that("a generator's seed is an integer64 (torch_generator's page)", {
  g <- torch_generator()
  g$set_current_seed(1234567L)
  expect_s3_class(g$current_seed(), "integer64")
  expect_equal(capture.output(print(g$current_seed())), c("integer64", "[1] 1234567"))
})

test_that("unique_consecutive gives libtorch's three outputs (torch_unique_consecutive's page)", {
  x <- torch_tensor(c(1, 1, 2, 2, 3, 1, 1, 2))
  out <- torch_unique_consecutive(x, return_counts = TRUE)
  expect_length(out, 3)
  expect_equal(printed(out[[2]]), "torch_tensor\n[ CPULongType{0} ]\n")
  expect_equal(as_array(out[[3]]), c(2, 2, 1, 2, 1))
  expect_length(torch_unique_consecutive(x), 3)
})

test_that("torch_randint gives the default dtype, as libtorch's randint (its page)", {
  expect_true(torch_randint(0, 10, c(2, 2))$dtype == torch_float())
  expect_true(torch_randint(0, 10, c(2, 2), dtype = torch_long())$dtype == torch_long())
})

test_that("an error of the backward pass carries no call and libtorch's words (with_detect_anomaly's page)", {
  x <- torch_randn(2, requires_grad = TRUE)
  y <- torch_randn(1)
  b <- (x^y)$sum()
  y$add_(1)
  e <- tryCatch(b$backward(), error = identity)
  expect_null(conditionCall(e))
  expect_match(conditionMessage(e), "[CPUFloatType [1]] is at version 1; expected version 0 instead. Hint: enable anomaly detection", fixed = TRUE)
})

test_that("CUDA and MPS answer as on a machine without them", {
  expect_false(cuda_is_available())
  expect_identical(cuda_device_count(), 0L)
  expect_false(backends_mps_is_available())
  expect_error(cuda_memory_stats(), "CUDA is not available.", class = "runtime_error")
  expect_error(nn_linear(2, 2)$cuda(), "PyTorch is not linked with support for cuda devices")
  expect_error(torch_ones(2)$cuda(), "PyTorch is not linked with support for cuda devices")
})
