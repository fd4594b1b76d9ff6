# Dtypes, complex and raw data, printing of 0-d and complex tensors, and R
# torch's creation conventions, as R torch behaves (its reference pages'
# printed output where they show it).

test_that("0-d tensors print shortest round-trip digits (linalg_norm's page)", {
  expect_equal(capture.output(print(torch_tensor(60)$sqrt()$sum())),
               c("torch_tensor", "7.745966911315918", "[ CPUFloatType{} ]"))
  expect_equal(capture.output(print(torch_tensor(-1)$sum())),
               c("torch_tensor", "-1", "[ CPUFloatType{} ]"))
})

test_that("complex tensors: R complex in and out, parts, printing", {
  z <- torch_tensor(c(1 + 2i, 3 - 1i))
  expect_true(z$dtype == torch_cfloat())
  expect_true(torch_tensor(1i, dtype = torch_cdouble())$dtype == torch_cdouble())
  expect_true(z$is_complex())
  expect_equal(as_array(z), c(1 + 2i, 3 - 1i))
  expect_equal(as_array(z$real), c(1, 3))
  expect_equal(as_array(z$imag), c(2, -1))
  out <- capture.output(print(torch_complex(torch_tensor(c(1, 2)), torch_tensor(c(3, 4)))))
  expect_equal(out[3], "[ CPUComplexFloatType{2} ]")
  expect_match(out[2], "Use `\\$real` or `\\$imag` to print the contents of this tensor.")
  y <- torch_ones(2) * (0 + 1i)
  expect_equal(as_array(y), c(1i, 1i))
  p <- torch_polar(torch_tensor(c(1, 2)), torch_tensor(c(0, pi / 2)))
  expect_equal(as_array(p), c(1 + 0i, 2i), tolerance = 1e-6)
  expect_error(torch_tensor(1)$imag, "non-complex")
  z$real <- torch_tensor(c(5, 6))
  z$imag <- torch_tensor(c(7, 8))
  expect_equal(as_array(z), c(5 + 7i, 6 + 8i))
})

test_that("buffers: a tensor's bytes and back", {
  x <- torch_randn(3, 4)
  b <- buffer_from_torch_tensor(x)
  expect_true(is.raw(b) && length(b) == 48)
  expect_true(torch_equal(torch_tensor_from_buffer(b, shape = c(3, 4), dtype = "float"), x))
  expect_error(torch_tensor_from_buffer(b, shape = c(5, 4), dtype = "float"), "needs 80")
  expect_equal(x$stride(), c(4, 1))
})

test_that("complex parts are differentiable", {
  a <- torch_tensor(c(1, 2), requires_grad = TRUE)
  b <- torch_tensor(c(3, 4), requires_grad = TRUE)
  z <- torch_complex(a, b)
  (z$real * 2 + z$imag * 3)$sum()$backward()
  expect_equal(as_array(a$grad), c(2, 2))
  expect_equal(as_array(b$grad), c(3, 3))
})

test_that("raw vectors are uint8 and come back raw", {
  r <- torch_tensor(as.raw(c(1, 255)))
  expect_true(r$dtype == torch_uint8())
  expect_equal(as_array(r), as.raw(c(1, 255)))
  expect_equal(r$element_size(), 1)
})

test_that("small dtypes: creation, conversion, element sizes, as_array", {
  for (d in list(torch_int8(), torch_int16(), torch_uint8(), torch_float16())) {
    x <- torch_tensor(c(1, 2, 3))$to(dtype = d)
    expect_true(x$dtype == d)
  }
  expect_equal(torch_ones(2, dtype = torch_float16())$element_size(), 2)
  expect_equal(torch_ones(2, dtype = torch_int16())$element_size(), 2)
  expect_equal(as_array(torch_tensor(c(1.5, 2))$to(dtype = torch_half())), c(1.5, 2))
  expect_equal(capture.output(print(torch_tensor(c(-1, 2))$to(dtype = torch_int8()))),
               c("torch_tensor", "-1", " 2", "[ CPUCharType{2} ]"))
  expect_true(torch_ones(2, dtype = torch_bfloat16())$dtype == torch_bfloat16())
})

test_that("dtype comparison refuses what is not a dtype", {
  expect_error(NULL == torch_float64(), "not a dtype")
  expect_true(torch_cfloat() == torch_complex64())
  expect_false(torch_cfloat() == torch_cdouble())
})

test_that("default dtype, finfo and iinfo", {
  on.exit(torch_set_default_dtype(torch_float()))
  torch_set_default_dtype(torch_float64())
  expect_true(torch_randn(2)$dtype == torch_double())
  expect_true(torch_tensor(1)$dtype == torch_double())
  expect_true(torch_zeros(2)$dtype == torch_double())
  expect_error(torch_set_default_dtype(torch_int()), "floating-point")
  torch_set_default_dtype(torch_float())
  expect_equal(torch_finfo(torch_float())$eps, 2^-23)
  expect_equal(torch_iinfo(torch_int16())$max, 32767)
  expect_error(torch_iinfo(torch_float()), "integer dtype")
})

test_that("creation: R's arange, randperm, multinomial, empty_strided", {
  expect_equal(as_array(torch_arange(3)), c(1, 2, 3))
  expect_equal(as_array(torch_arange(0, 1, 0.5)), c(0, 0.5, 1))
  expect_error(torch_arange(0, 1, -1), "inconsistent")
  expect_equal(sort(as_array(torch_randperm(5))), 0:4)
  m <- torch_multinomial(torch_tensor(c(0, 0, 1)), 3, replacement = TRUE)
  expect_equal(as_array(m), c(3, 3, 3))
  x <- torch_empty_strided(c(2, 3), stride = c(1, 2))
  expect_equal(x$stride(), c(1, 2))
})

test_that("in-place fills draw from their distributions; generator = is accepted", {
  x <- torch_empty(10000)
  x$uniform_(from = -1, to = 1)
  expect_true(as.logical((x >= -1)$all()$item()) && as.logical((x < 1)$all()$item()))
  x$normal_(mean = 3, std = 0.5)
  expect_equal(x$mean()$item(), 3, tolerance = 0.05)
  x <- torch_randint(0, 10, c(200), generator = torch_generator())
  expect_true(as.logical(((x >= 0) & (x < 10))$all()$item()))
  expect_error(torch_ones(2, dtype = torch_long())$normal_(), "floating point")
})

test_that("the complex dtypes' bit-count names count both parts, as R torch's", {
  expect_true(torch_cfloat32() == torch_chalf())
  expect_true(torch_cfloat64() == torch_cfloat())
  expect_true(torch_cfloat128() == torch_cdouble())
  expect_equal(torch_zeros(2, dtype = torch_cfloat64())$dtype$.type(), "ComplexFloat")
})
