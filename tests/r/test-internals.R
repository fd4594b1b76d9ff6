# Memory and view internals, private methods and contrib_sort_vertices, called from R
# (tests/test_internals.py checks them against PyTorch).

test_that("views share memory and the version counter counts in-place changes", {
  x <- torch_tensor(c(1, 2, 3))
  a <- x$alias()
  expect_true(a$is_set_to(x))
  v0 <- x$`_version`()
  a$add_(1)
  expect_equal(x$`_version`(), v0 + 1)
  expect_equal(as_array(x), c(2, 3, 4))
  y <- torch_arange(0, 5)
  y$as_strided_(c(2, 2), c(1, 2), 1)
  expect_equal(as_array(y), rbind(c(1, 3), c(2, 4)))
  z <- torch_arange(0, 5)$as_strided_scatter(torch_ones(2, 2), c(2, 2), c(1, 2), 1)
  expect_equal(as_array(z), c(0, 1, 1, 1, 1, 5))
  r <- torch_arange(0, 5)$`_reshape_alias`(c(3, 2), c(2, 1))
  expect_equal(dim(r), c(3, 2))
})

test_that("slice_inverse gives back the tensor a slice came from (dim 1-based)", {
  b <- torch_arange(0, 11)$reshape(c(3, 4))
  s <- b[, 2:3]
  expect_equal(as_array(s$slice_inverse(b, dim = 2, start = 1, end = 3)), as_array(b))
})

test_that("set_, set_data, resize_as_ and nonzero_static", {
  src <- torch_arange(0, 5)
  y <- torch_empty(0)
  y$set_(src)
  expect_true(y$is_set_to(src))
  z <- torch_empty(0)
  z$set_(src$storage(), 1, c(2, 2), c(1, 2))
  expect_equal(as_array(z), rbind(c(1, 3), c(2, 4)))
  expect_equal(torch_zeros(3)$set_()$numel(), 0)
  w <- torch_zeros(2, requires_grad = TRUE)
  w$set_data(torch_ones(3))
  expect_equal(w$shape, 3)
  expect_true(w$requires_grad)
  r <- torch_arange(0, 5)
  r$resize_as_(torch_ones(2, 2))
  expect_equal(as_array(r), rbind(c(0, 1), c(2, 3)))
  n <- torch_tensor(rbind(c(1, 0), c(0, 3)))$nonzero_static(size = 3)
  # 0-based, as R torch's (its nonzero_static is libtorch's, unshifted)
  expect_equal(as_array(n), rbind(c(0, 0), c(1, 1), c(-1, -1)))
})

test_that("private methods", {
  z <- torch_tensor(complex(real = 1, imaginary = 2))
  expect_equal(as_array(z$`_conj`()), complex(real = 1, imaginary = -2))
  expect_equal(as_array(z$`_conj_physical`()), complex(real = 1, imaginary = -2))
  x <- torch_tensor(c(1, -2), requires_grad = TRUE)
  y <- x$`_neg_view`()
  expect_equal(as_array(y), c(-1, 2))
  expect_output(print(y$grad_fn), "NegViewBackward0")
  expect_output(print(x$`_lazy_clone`()$grad_fn), "LazyCloneBackward0")
  expect_true(as_array(torch_tensor(c(TRUE, TRUE))$`_is_all_true`()))
  expect_false(as_array(torch_tensor(c(FALSE, FALSE))$`_is_any_true`()))
  expect_false(x$`_is_zerotensor`())
  expect_false(x$is_distributed())
  a <- torch_zeros(2, 3)$`_addmm_activation`(torch_ones(2, 4), -torch_ones(4, 3))
  expect_equal(as_array(a), matrix(0, 2, 3))
  h <- torch_ones(2)$`_autocast_to_reduced_precision`(FALSE, TRUE, torch_float16(),
                                                       torch_bfloat16())
  expect_true(h$dtype == torch_bfloat16())
  expect_true(h$`_autocast_to_full_precision`(FALSE, TRUE)$dtype == torch_float32())
  with_dual_level({
    d <- make_dual(torch_ones(2), torch_tensor(c(3, 3)))
    expect_equal(as_array(unpack_dual(d$`_fw_primal`(0))$tangent), c(0, 0))
  })
})

test_that("contrib_sort_vertices orders a polygon's vertices anticlockwise", {
  v <- torch_zeros(1, 1, 24, 2)
  v[1, 1, 1:4, ] <- torch_tensor(rbind(c(1, 1), c(-1, -1), c(1, -1), c(-1, 1)))
  m <- torch_zeros(1, 1, 24, dtype = torch_bool())
  m[1, 1, 1:4] <- TRUE
  nv <- torch_sum(m$to(dtype = torch_int()), dim = -1)$to(dtype = torch_int())
  idx <- contrib_sort_vertices(v, m, nv)
  expect_true(idx$dtype == torch_int())
  # 0-based indices, as R torch's kernel returns them: 45, 135, 225, 315 degrees
  expect_equal(as.integer(as_array(idx)), c(0L, 3L, 1L, 2L, 0L, 8L, 8L, 8L, 8L))
})

test_that("complex32: float16 parts, the ops libtorch runs on it, the others refused", {
  x <- torch_tensor(c(1+2i, 3-1i))$chalf()
  expect_true(x$dtype == torch_chalf())
  expect_equal(x$element_size(), 4)
  expect_output(print(x), "CPUComplexHalfType{2}", fixed = TRUE)
  expect_equal(as_array(x * x), c(-3+4i, 8-6i))
  expect_true(x$abs()$dtype == torch_float16())
  expect_true((x + torch_ones(2))$dtype == torch_cfloat())
  expect_error(x$exp(), "\"exp_vml_cpu\" not implemented for 'ComplexHalf'", fixed = TRUE)
  expect_true(torch_zeros(2, dtype = torch_chalf())$dtype == torch_chalf())
})
