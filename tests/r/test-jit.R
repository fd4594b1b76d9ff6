# TorchScript from R: jit_trace(), script functions and modules, files, jit_compile(),
# jit_ops, jit_export_onnx(). (R torch's own test-trace.R etc. run as the "jit"
# conformance group; PyTorch both ways: tests/test_jit_torchscript.py.)

test_that("traced R functions replay their ops on new inputs", {
  fn <- function(x, y) torch_relu(x * 2 + y)$sum(dim = 1)
  tr <- jit_trace(fn, torch_randn(3, 2), torch_randn(3, 2))
  a <- torch_randn(5, 2)
  b <- torch_randn(5, 2)
  expect_equal_to_tensor(tr(a, b), fn(a, b))
  expect_s3_class(tr, "script_function")
  expect_equal(printed(tr), "<script_function>\n")
  expect_match(printed(tr$graph), "aten::relu")
})

test_that("R's indexing and label shifts are recorded, not frozen", {
  emb <- nn_embedding(10, 3)
  fn <- function(x, ids) x[2:3, ]$sum() + emb(ids)[, 1]$sum() + torch_argmax(x, dim = 2)$sum()
  tr <- jit_trace(fn, torch_randn(4, 5), torch_tensor(c(1L, 2L)))
  x <- torch_randn(4, 5)
  ids <- torch_tensor(c(7L, 10L, 3L))
  expect_equal_to_tensor(tr(x, ids), fn(x, ids), tolerance = 1e-5)
})

test_that("converting a traced tensor to an R value warns as libtorch does", {
  fn <- function(x) x * as.numeric(x$sum())
  expect_warning(jit_trace(fn, torch_tensor(c(1, 2))),
                 "Converting a tensor to an R value might cause the trace to be incorrect")
  expect_warning(jit_trace(function(x) x * x$max()$item(), torch_tensor(c(1, 2))),
                 "Converting a tensor to a Python number")
})

test_that("lists, named lists and tuples in and out", {
  fn <- function(x) list(a = x[[1]] + x[[2]], b = x[[1]])
  tr <- jit_trace(fn, list(torch_tensor(1), torch_tensor(2)), strict = FALSE)
  out <- tr(list(torch_tensor(3), torch_tensor(4)))
  expect_equal(names(out), c("a", "b"))
  expect_equal_to_r(out$a, 7)
  expect_error(jit_trace(fn, list(torch_tensor(1), torch_tensor(2))), "list|dict")
  tup <- jit_tuple(list(u = torch_tensor(1), v = torch_tensor(2)))
  tr2 <- jit_trace(function(p) jit_tuple(list(p$v, p$u)), tup)
  back <- tr2(jit_tuple(list(u = torch_tensor(5), v = torch_tensor(6))))
  expect_equal_to_r(back[[1]], 6)
  expect_error(tr2(list(u = torch_tensor(5), v = torch_tensor(6))), "Tuple")
  expect_error(jit_trace(function(x, y) x + y, x = torch_tensor(1), y = torch_tensor(2)),
               "by position")
})

test_that("traced modules: parameters, modes, methods, state dict", {
  Net <- nn_module(
    initialize = function() {
      self$fc <- nn_linear(4, 3)
      self$bn <- nn_batch_norm1d(3)
      self$drop <- nn_dropout(0.5)
    },
    forward = function(x) self$drop(self$bn(self$fc(x))),
    half = function(x) self$fc(x) / 2
  )
  net <- Net()
  x <- torch_randn(6, 4)
  m <- jit_trace_module(net, forward = list(x), half = x)
  expect_s3_class(m, "script_module")
  expect_length(m$parameters, 4)
  expect_length(m$buffers, 3)
  expect_equal(names(m$state_dict()), names(net$state_dict()))
  m$eval()
  net$eval()
  expect_equal_to_tensor(m(x), net(x), tolerance = 1e-6)
  expect_equal_to_tensor(m$half(x), net$half(x), tolerance = 1e-6)
  with_no_grad(m$fc$weight$zero_())
  expect_equal_to_tensor(m$half(x), net$half(x), tolerance = 1e-6)
  expect_error(m$fc(x), "Methods from submodules of traced modules are not traced")
  expect_match(printed(m), "An `nn_module` containing")
})

test_that("jit_save / jit_load / jit_serialize round trips", {
  tmp <- tempfile(fileext = ".pt")
  m <- jit_trace(nn_sequential(nn_linear(3, 2), nn_tanh()), torch_randn(4, 3))
  jit_save(m, tmp)
  back <- jit_load(tmp)
  x <- torch_randn(5, 3)
  expect_equal_to_tensor(back(x), m(x), tolerance = 1e-6)
  raw <- jit_serialize(m)
  expect_true(is.raw(raw))
  expect_equal_to_tensor(jit_unserialize(raw)(x), m(x), tolerance = 1e-6)
  expect_error(jit_unserialize("x"), "raw vector")
  expect_error(jit_save(function(x) x, tmp), "Only `script_function` or `script_module`")
})

test_that("jit_compile and jit_ops", {
  comp <- jit_compile("
  def twice(x, n: int):
    y = x
    for i in range(n):
      y = torch.mul(y, 2)
    return y
  ")
  expect_equal_to_r(comp$twice(torch_tensor(c(1, 2)), jit_scalar(3L)), c(8, 16))
  expect_equal(printed(comp), "<torch_compilation_unit>\n")
  parts <- jit_ops$aten$split(torch_arange(0, 3), jit_scalar(2L), jit_scalar(0L))
  expect_length(parts, 2)
  expect_equal(printed(jit_ops$sparse), "<torch_ops>: Handle to namespace  sparse \n")
  expect_error(jit_scalar(c(1, 2)), "length 1")
})

test_that("jit_export_onnx refuses what it can't express, by name", {
  tr <- jit_trace(function(x) torch_cumsum(x, dim = 1), torch_randn(3))
  expect_error(jit_export_onnx(tr, tempfile(fileext = ".onnx")), "torch_cumsum")
  expect_error(jit_export_onnx(function(x) x, tempfile()), "traced")
})

test_that("libtorch's TorchScript errors are signalled as R torch signals them", {
  # (through Rcpp: a C++ exception's condition, with no call; knitr shows "Error:")
  rcpp <- c("Rcpp::exception", "C++Error", "error", "condition")
  e <- tryCatch(jit_trace(function(x, y) x + y, torch_tensor(1), 1), error = identity)
  expect_s3_class(e, rcpp, exact = TRUE)
  expect_null(conditionCall(e))
  # libtorch's message, then what R torch's tracer appends: ": " and the R error (none)
  expect_equal(conditionMessage(e), paste0(
    "Only tensors or (possibly nested) dict or tuples of tensors can be inputs to traced ",
    "functions. Got float\n: "))
  fn <- jit_trace(function(x) torch_stack(lapply(torch_unbind(x, 1), function(v) v$sum())),
                  torch_randn(10, 5, 5))
  e <- tryCatch(fn(torch_randn(11, 5, 5)), error = identity)
  expect_s3_class(e, rcpp, exact = TRUE)
  expect_null(conditionCall(e))
  expect_match(conditionMessage(e), paste0(
    "^The following operation failed in the TorchScript interpreter.\nTraceback of ",
    "TorchScript \\(most recent call last\\):\nRuntimeError: Expected 10 elements in a ",
    "list but found 11\n$"))
  # an R error met by the traced function is signalled as itself
  e <- tryCatch(jit_trace(function(x) stop("mine"), torch_tensor(1)), error = identity)
  expect_equal(conditionMessage(e), "mine")
  expect_false(inherits(e, "Rcpp::exception"))
})

test_that("jit_save_for_mobile() writes the lite interpreter's archive", {
  tr <- jit_trace(function(x) torch_relu(x), torch_tensor(c(-1, 0, 1)))
  path <- tempfile("tst", fileext = ".pt")
  expect_invisible(jit_save_for_mobile(tr, path))
  files <- utils::unzip(path, list = TRUE)$Name
  expect_true(any(grepl("/bytecode.pkl$", files)))
  # the same file is a TorchScript archive
  expect_equal_to_r(jit_load(path)(torch_tensor(c(-2, 3))), c(0, 3))
  m <- jit_trace(nn_linear(3, 2), torch_randn(2, 3))
  expect_invisible(m$save_for_mobile(path))
  expect_true(any(grepl("/bytecode.pkl$", utils::unzip(path, list = TRUE)$Name)))
  expect_error(jit_save_for_mobile(function(x) x, path), "Only `script_function`")
})
