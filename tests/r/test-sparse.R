# Sparse tensors from R: 1-based indices in and out, conversions, head()/tail(),
# printing, as_array()'s refusal, gradients to the values, other ops' errors.

coo_example <- function(...) {
  i <- torch_tensor(matrix(c(1, 2, 2, 3, 1, 3), ncol = 3, byrow = TRUE), dtype = torch_int64())
  torch_sparse_coo_tensor(i, c(3, 4, 5), size = c(3, 3), ...)
}

test_that("indices are 1-based in and out; the dense form puts values there", {
  x <- coo_example()
  expect_true(x$is_sparse())
  expect_false(x$is_sparse_csr())
  expect_equal(x$shape, c(3L, 3L))
  expect_equal(as_array(x$to_dense()), rbind(c(0, 0, 3), c(4, 0, 5), c(0, 0, 0)))
  expect_equal(as_array(x$coalesce()$indices()), rbind(c(1L, 2L, 2L), c(3L, 1L, 3L)))
  expect_equal(as_array(x$coalesce()$values()), c(3, 4, 5))
  expect_false(x$is_coalesced())
  expect_equal(as_array(x$`_indices`()), rbind(c(0L, 1L, 1L), c(2L, 0L, 2L)))  # (raw: 0-based)
  expect_equal(x$`_nnz`(), 3)
  expect_true(x$coalesce()$is_coalesced())
  # an R matrix, integer or double, gives the indices too; the size is inferred
  y <- torch_sparse_coo_tensor(rbind(c(1L, 3L), c(2L, 2L)), c(1, 2))
  expect_equal(y$shape, c(3L, 2L))
  expect_equal(as_array(y$to_dense()), rbind(c(0, 1), c(0, 0), c(0, 2)))
  expect_error(torch_sparse_coo_tensor(rbind(c(0, 1)), c(1, 2)), "start at 1")
  expect_true(x$layout == torch_sparse_coo())
  expect_true(torch_randn(2)$layout == torch_strided())
  expect_identical(capture.output(print(x$to_sparse_csr()$layout)), "torch_sparse_csr")
})

test_that("dense to COO and CSR and back", {
  x <- torch_randn(3, 4, 5)
  s <- x$to_sparse(dense_dim = 1L)
  expect_equal(s$sparse_dim(), 2)
  expect_equal(s$dense_dim(), 1)
  expect_equal(as_array(s$to_dense()), as_array(x))
  expect_equal(x$to_sparse(sparse_dim = 1L)$sparse_dim(), 1)
  e <- torch_eye(3)
  csr <- e$to_sparse_csr()
  expect_true(csr$is_sparse_csr())
  expect_equal(as_array(csr$crow_indices()), c(0L, 1L, 2L, 3L))  # (0-based, as R torch)
  expect_equal(as_array(csr$col_indices()), c(0L, 1L, 2L))
  expect_equal(as_array(csr$to_sparse()$to_dense()), diag(3))
})

test_that("head() and tail() take rows of sparse and dense tensors", {
  x <- coo_example()
  expect_equal(as_array(head(x, 2)$to_dense()), as_array(x$to_dense())[1:2, ])
  expect_equal(as_array(tail(x, 1)$to_dense()), as_array(x$to_dense())[3, , drop = FALSE])
  expect_true(head(x, 2)$is_sparse())
  v <- torch_tensor(1:10)
  expect_equal(as_array(head(v, 3)), 1:3)
  expect_equal(as_array(tail(v, 3)), 8:10)
  expect_equal(as_array(head(v, -8)), 1:2)
  expect_equal(as_array(tail(v, -8)), 9:10)
  expect_equal(as_array(head(v, 20)), 1:10)
})

test_that("printing: libtorch's sparse form (0-based indices), CSR as its values", {
  x <- coo_example()
  expect_identical(printed(x), paste0(
    "torch_tensor\n[ SparseCPUFloatType{}\nindices:\n 0  1  1\n 2  0  2\n",
    "[ CPULongType{2,3} ]\nvalues:\n 3\n 4\n 5\n[ CPUFloatType{3} ]\nsize:\n[3, 3]\n]\n"))
  v <- torch_tensor(c(3, 4, 5), requires_grad = TRUE)
  i <- torch_tensor(rbind(c(1, 2, 2), c(3, 1, 3)), dtype = torch_long())
  expect_match(printed(torch_sparse_coo_tensor(i, v, c(3, 3))),
               "\n\\]\\[ grad_fn = <SparseCooTensorWithDimsAndTensorsBackward0> \\]\n$")
  e <- torch_eye(2)
  expect_identical(printed(e$to_sparse_csr()), printed(e))
})

test_that("as_array() refuses sparse tensors with R torch's message", {
  expect_error(as_array(coo_example()),
               "Sparse tensors are not supported for as_array conversion.", fixed = TRUE)
  expect_error(as_array(torch_eye(2)$to_sparse_csr()), "to_dense", fixed = TRUE)
})

test_that("gradients reach the values; other ops name themselves", {
  v <- torch_tensor(c(3, 4, 5), requires_grad = TRUE)
  i <- torch_tensor(rbind(c(1, 2, 2), c(3, 1, 3)), dtype = torch_long())
  s <- torch_sparse_coo_tensor(i, v, c(3, 3))
  w <- torch_tensor(matrix(as.numeric(1:9), 3, 3))
  (s$to_dense() * w)$sum()$backward()
  expect_equal(as_array(v$grad), c(7, 2, 8))
  expect_error(s$exp(), "exp() is not supported for sparse tensors", fixed = TRUE)
  expect_error(s + 1, "to_dense()", fixed = TRUE)
  # creation functions make dense tensors only: another layout is refused, not ignored
  expect_error(torch_zeros(2, 2, layout = torch_sparse_coo()), "to_sparse()", fixed = TRUE,
               class = "not_implemented_error")
  expect_error(torch_randn(2, layout = torch_sparse_coo()), "not supported by torch_randn()",
               fixed = TRUE)
  expect_equal(torch_ones(2, layout = torch_strided())$shape, 2L)
})

test_that("CSC, BSR and BSC: parts (0-based), values, to_dense, layouts, conversions", {
  m <- rbind(c(1, 0, 2, 0), c(0, 0, 3, 0))
  x <- torch_tensor(m)
  csc <- x$to_sparse_csc()
  expect_identical(capture.output(print(csc$layout)), "torch_sparse_csc")
  expect_equal(as_array(csc$ccol_indices()), c(0L, 1L, 1L, 3L, 3L))
  expect_equal(as_array(csc$row_indices()), c(0L, 0L, 1L))
  expect_equal(as_array(csc$values()), c(1, 2, 3))
  expect_equal(as_array(csc$to_dense()), m)
  bsr <- x$to_sparse_bsr(c(1, 2))
  expect_identical(capture.output(print(bsr$layout)), "torch_sparse_bsr")
  expect_equal(as_array(bsr$crow_indices()), c(0L, 2L, 3L))
  expect_equal(as_array(bsr$col_indices()), c(0L, 1L, 1L))
  expect_equal(bsr$values()$shape, c(3L, 1L, 2L))
  expect_equal(as_array(bsr$to_dense()), m)
  bsc <- x$to_sparse(layout = x$to_sparse_bsc(c(2, 1))$layout, blocksize = c(2, 1))
  expect_identical(capture.output(print(bsc$layout)), "torch_sparse_bsc")
  expect_equal(as_array(bsc$ccol_indices()), c(0L, 1L, 1L, 2L, 2L))
  expect_equal(as_array(bsc$to_sparse()$to_dense()), m)
  expect_equal(as_array(x$`_to_sparse_csc`()$`_to_dense`()), m)
  expect_equal(as_array(x$to_sparse()$to_sparse_bsc(c(1, 1))$to_dense()), m)
  expect_equal(csc$sparse_dim(), 2)
  expect_equal(csc$`_nnz`(), 3)
})

test_that("sparse_mask, smm, sspaddmm, the resizes and the private COO methods", {
  i <- torch_tensor(rbind(c(1, 1, 2), c(1, 2, 4)), dtype = torch_long())
  s <- torch_sparse_coo_tensor(i, c(1, 2, 3), size = c(2, 4))
  d <- torch_tensor(matrix(1:12, 4, 3), dtype = torch_float())
  p <- s$smm(d)
  expect_true(p$is_sparse())
  expect_equal(as_array(p$to_dense()), as_array(s$to_dense()) %*% as_array(d))
  q <- s$smm(d)$sspaddmm(s, d, beta = 2, alpha = 3)
  expect_equal(as_array(q$to_dense()), 5 * as_array(s$to_dense()) %*% as_array(d))
  x <- torch_randn(2, 4, requires_grad = TRUE)
  m <- x$sparse_mask(s)
  expect_equal(as_array(m$to_dense()), as_array(x$detach()) * as_array(s$to_dense() != 0))
  m$to_dense()$sum()$backward()
  expect_equal(as_array(x$grad), as_array(s$to_dense() != 0) * 1)
  pr <- s$`_sparse_mask_projection`(torch_sparse_coo_tensor(i[, 1:2], c(9, 9), size = c(2, 4)))
  expect_equal(as_array(pr$`_values`()), c(1, 2, 0))
  expect_equal(s$`_dimI`(), 2)
  expect_equal(s$`_dimV`(), 0)
  expect_false(s$is_coalesced())
  expect_true(s$`_coalesced_`(TRUE)$is_coalesced())
  s$sparse_resize_(c(3, 5), 2, 0)
  expect_equal(s$shape, c(3L, 5L))
  s$sparse_resize_and_clear_(c(2, 2, 2), 2, 1)
  expect_equal(s$`_nnz`(), 0)
  expect_equal(s$dense_dim(), 1)
  t <- torch_randn(4, 6)$to_sparse()
  s$sparse_resize_and_clear_(c(1, 1), 2, 0)$resize_as_sparse_(t)
  expect_equal(s$shape, c(4L, 6L))
})

test_that("to_mkldnn(): libtorch's print, to_dense() back, gradients through it", {
  x <- torch_tensor(rbind(c(1.5, 0, 2), c(0, 0, 3)), requires_grad = TRUE)
  m <- x$to_mkldnn()
  expect_identical(capture.output(print(m$layout)), "torch_")
  expect_identical(capture.output(print(m)), c(
    "torch_tensor", "MKLDNN Tensor:  1.5000  0.0000  2.0000", " 0.0000  0.0000  3.0000",
    "[ MkldnnCPUFloatType{2,3} ][ grad_fn = <ToMkldnnBackward0> ]"))
  (m$to_dense() * 2)$sum()$backward()
  expect_equal(as_array(x$grad), matrix(2, 2, 3))
  expect_error(torch_randn(2, dtype = torch_float64())$to_mkldnn(), "dense_to_mkldnn expects float")
})

test_that("batch dims: every batch compressed alike", {
  a <- torch_zeros(2, 2, 4)
  a[, 1, 1] <- 1
  a[, 2, 4] <- 2
  csr <- a$to_sparse_csr()
  expect_equal(csr$crow_indices()$shape, c(2L, 3L))
  expect_equal(csr$values()$shape, c(2L, 2L))
  expect_equal(as_array(csr$to_dense()), as_array(a))
  expect_equal(as_array(a$to_sparse_bsc(c(2, 1))$to_sparse()$to_dense()), as_array(a))
  a[2, 2, 4] <- 0
  expect_error(a$to_sparse_csr(), "Expect the same number of specified elements per batch.")
})
