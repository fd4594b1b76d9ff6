# dtypes and devices as R torch has them: bit64 integers, bfloat16, quantized
# dtypes, the meta device, storages, tensors over an R vector's memory, and
# the R attributes that detach() and clone() keep.

test_that("long tensors come back as bit64's integer64 through as.integer64()", {
  x <- array(1:8, dim = c(2, 2, 2))
  o <- bit64::as.integer64(torch_tensor(x))
  expect_s3_class(o, "integer64")
  expect_equal(dim(o), c(2L, 2L, 2L))
  expect_equal(as.integer(o[2, 1, 2]), x[2, 1, 2])
  big <- bit64::as.integer64(.Machine$integer.max) * 2
  back <- bit64::as.integer64(torch_tensor(big))
  expect_identical(class(back), "integer64")
  expect_true(back == big)
  expect_true(torch_tensor(big)$dtype == torch_long())
})

test_that("detach() and clone() keep nn_parameter's and nn_buffer's classes", {
  p <- nn_parameter(torch_tensor(1)$requires_grad_(TRUE))
  expect_true(inherits(p, "nn_parameter"))
  d <- p$detach()
  expect_true(inherits(d, "nn_parameter"))
  expect_true(is_nn_parameter(d))
  expect_false(d$requires_grad)
  expect_equal(attributes(p$clone()), attributes(p))
  b <- nn_buffer(torch_tensor(2), persistent = FALSE)
  expect_equal(attributes(b$detach()), attributes(b))
  expect_true(is_nn_buffer(b$clone()))
  m <- nn_module(initialize = function() {
    self$w <- p$detach()
  })()
  expect_equal(names(m$parameters), "w")
  plain <- torch_tensor(3)
  expect_equal(attributes(plain$detach()), attributes(plain))
})

test_that("storages: views share one, clones have their own", {
  x <- torch_randn(10, 10)
  expect_true(x[2:3, ]$storage()$data_ptr() == x$storage()$data_ptr())
  expect_false(x$clone()$storage()$data_ptr() == x$storage()$data_ptr())
  expect_match(x$data_ptr(), "^0x[0-9a-f]+$")
  expect_false(x[2, ]$data_ptr() == x$data_ptr())
  expect_equal(x$storage()$nbytes(), 400)
})

test_that("torch_tensor_from_buffer shares the R vector's memory", {
  x <- runif(6)
  y <- torch_tensor_from_buffer(x, shape = c(2, 3), dtype = "float64")
  expect_equal(as_array(y), matrix(x, 2, 3, byrow = TRUE))
  before <- x[1]
  y$add_(1)
  expect_equal(x[1], before + 1)
  r <- buffer_from_torch_tensor(torch_tensor(c(1.5, -2)))
  z <- torch_tensor_from_buffer(r, shape = 2, dtype = "float")
  rm(r)
  gc()
  expect_equal(as_array(z), c(1.5, -2))  # the tensor keeps the R vector alive
  i <- c(1L, 2L, 3L)
  expect_equal(as_array(torch_tensor_from_buffer(i, 3, dtype = "int32")), i)
  expect_error(torch_tensor_from_buffer(1:10, 10, dtype = "int32"), "compact")
  expect_error(torch_tensor_from_buffer(runif(3), 4, dtype = "float64"), "needs 32")
  expect_error(torch_tensor_from_buffer(list(1), 1), "must be a numeric")
})

test_that("bfloat16 tensors, by name or dtype", {
  for (d in list("bfloat16", torch_bfloat16())) {
    x <- torch_empty(2, 2, dtype = d)
    expect_true(x$dtype == torch_bfloat16())
    expect_true(x$device == torch_device("cpu"))
  }
  b <- torch_tensor(c(1.1, 2.5, -3.3), dtype = torch_bfloat16())
  expect_equal(printed(b), "torch_tensor\n 1.1016\n 2.5000\n-3.2969\n[ CPUBFloat16Type{3} ]\n")
  expect_equal(as_array(b * 2), c(2.203125, 5, -6.59375))
  expect_equal(b$element_size(), 2L)
  expect_true((b$sum())$dtype == torch_bfloat16())
  expect_true(torch_bfloat16()$is_floating_point)
})

test_that("quantized dtypes: element sizes, values, printing", {
  x <- torch_tensor(c(1, 2.55, 100))
  sizes <- c(1L, 1L, 4L)
  types <- list(torch_quint8(), torch_qint8(), torch_qint32())
  for (i in seq_along(types)) {
    q <- torch_quantize_per_tensor(x, scale = 0.1, zero_point = 10, dtype = types[[i]])
    expect_true(q$dtype == types[[i]])
    expect_identical(q$element_size(), sizes[i])
    expect_true(q$is_quantized())
    expect_equal(q$q_scale(), 0.1)
    expect_equal(q$q_zero_point(), 10L)
  }
  q <- torch_quantize_per_tensor(x, scale = 0.1, zero_point = 10, dtype = torch_quint8())
  expect_equal(as_array(q), c(1, 2.6, 24.5), tolerance = 1e-6)  # clamped at 255
  expect_equal(as_array(q$int_repr()), as.raw(c(20, 36, 255)))
  expect_equal(as_array(torch_dequantize(q)), as_array(q$dequantize()))
  expect_equal(length(torch_dequantize(list(q, q))), 2L)
  expect_match(printed(q), "[ QuantizedCPUQUInt8Type{3}, qscheme: per_tensor_affine, scale: 0.1, zero_point: 10 ]",
               fixed = TRUE)
  expect_error(q + 1, "not supported for quantized tensors", class = "not_implemented_error")
  expect_false(x$is_quantized())
})

test_that("the meta device: shape and dtype, no data", {
  x <- torch_randn(10, 10)
  y <- x$to(dtype = "double", device = "meta")
  expect_true(y$dtype == torch_double())
  expect_true(y$device == torch_device("meta"))
  expect_equal(y$device$type, "meta")
  expect_equal(printed(y), "torch_tensor\n...\n[ METADoubleType{10,10} ]\n")
  z <- (y$matmul(y) + 1)$sum(dim = 1)
  expect_true(z$device == torch_device("meta"))
  expect_equal(z$shape, 10L)
  e <- torch_empty(3, 4, device = "meta")
  expect_equal(e$device$type, "meta")
  expect_equal(dim(e$t()), c(4L, 3L))
  w <- torch_tensor(c(1, 2), device = "meta", requires_grad = TRUE)
  expect_equal(printed(w), "torch_tensor\n...\n[ METAFloatType{2} ][ requires_grad = TRUE ]\n")
  expect_error(as_array(y), "meta tensor")
  expect_error(y$to(device = "cpu"), "no data", class = "not_implemented_error")
  expect_error(y$cpu(), "no data", class = "not_implemented_error")
  expect_true(x$to(device = y$device)$device == torch_device("meta"))
  expect_identical(x$cpu(), x)
  expect_equal(torch_device("cuda")$type, "cuda")  # named, as R torch does without a GPU
  expect_error(torch_device("gpu"), "device type at start of device string: gpu")
})

test_that("creation functions make meta tensors without their memory", {
  for (x in list(torch_zeros(1e5, 1e5, device = "meta"), torch_ones(1e5, 1e5, device = "meta"),
                 torch_randn(1e5, 1e5, device = "meta"), torch_rand(1e5, 1e5, device = "meta"),
                 torch_empty(1e5, 1e5, device = "meta"),
                 torch_full(c(1e5, 1e5), 2, device = "meta"))) {
    expect_equal(x$device$type, "meta")
    expect_equal(x$shape, c(1e5, 1e5))
  }
  expect_true(torch_full(c(2, 2), 3L, device = "meta")$dtype == torch_long())
  expect_equal(torch_arange(1, 5, device = "meta")$shape, 5)
  expect_equal(torch_eye(3, device = "meta")$device$type, "meta")
  expect_error(torch_zeros(2, device = "cuda"), "PyTorch is not linked with support for cuda devices")
})

test_that("with_device() and local_device(): the device new tensors get when none is given", {
  with_device(device = "meta", {
    x <- torch_randn(10, 10)
    with_device(device = "cpu", a <- torch_zeros(2))
    model <- nn_linear(10, 10)
    y <- torch_randn(2, device = "cpu")
  })
  expect_equal(x$device$type, "meta")
  expect_equal(a$device$type, "cpu")
  expect_equal(model$weight$device$type, "meta")
  expect_equal(y$device$type, "cpu")
  expect_equal(torch_randn(2)$device$type, "cpu")
  f <- function() {
    local_device("meta")
    torch_ones(3)
  }
  expect_equal(f()$device$type, "meta")
  expect_equal(torch_ones(3)$device$type, "cpu")
  expect_error(with_device(torch_ones(1), device = "cuda"),
               "PyTorch is not linked with support for cuda devices")
  expect_equal(torch_ones(3)$device$type, "cpu")
})
