# R torch's indexing (after its test-indexing.R): 1-based, inclusive ranges,
# negative from the end, `..`, newaxis, N, slc(), vectors act per dim,
# boolean masks, drop = FALSE, assignment, and autograd through both.

test_that("[ works like R on arrays", {
  x <- torch_randn(c(10, 10, 10))
  a <- as_array(x)
  expect_equal(as_array(x[1, 1, 1]), a[1, 1, 1])
  expect_equal(as_array(x[1, , ]), a[1, , ])
  expect_equal(as_array(x[1:5, , ]), a[1:5, , ])
  expect_equal(as_array(x[1:10:2, , ]), a[seq(1, 10, by = 2), , ])
  expect_equal(as_array(x[, 2:3, 4]), a[, 2:3, 4])

  x <- torch_tensor(0:9)
  expect_equal(as_array(x[-1]$to(dtype = torch_int())), 9)
  expect_equal(as_array(x[-2:10]$to(dtype = torch_int())), c(8, 9))
  expect_equal(as_array(x[2:N]$to(dtype = torch_int())), c(1:9))

  x <- torch_randn(c(10, 10, 10, 10))
  a <- as_array(x)
  expect_equal(as_array(x[1, ..]), a[1, , , ])
  expect_equal(as_array(x[1, 1, ..]), a[1, 1, , ])
  expect_equal(as_array(x[.., 1]), a[, , , 1])
  expect_equal(as_array(x[.., 1, 1]), a[, , 1, 1])

  i <- c(1, 2, 3, 4)
  expect_equal(as_array(x[!!!i]), a[1, 2, 3, 4])
  i <- c(1, 2)
  expect_equal(as_array(x[!!!i, 3, 4]), a[1, 2, 3, 4])
})

test_that("integer and numeric vectors select per dim", {
  x <- torch_tensor(1:10)
  y <- 1:10
  expect_equal_to_r(x[c(1, 3, 2, 5)]$to(dtype = torch_int()), y[c(1, 3, 2, 5)])
  index <- 1:3
  expect_equal_to_r(x[index]$to(dtype = torch_int()), y[index])

  x <- torch_randn(10, 10)
  expect_equal_to_r(x[c(2, 3, 1), c(3, 2, 1)], as_array(x)[c(2, 3, 1), c(3, 2, 1)])
  x <- torch_randn(3, 3, 3)
  expect_equal_to_tensor(x[c(1, 2), 1:2, c(1, 2)], x[1:2, 1:2, 1:2])
  expect_equal_to_tensor(x[c(1, 2), , c(1, 2)], x[1:2, , 1:2])
  expect_equal_to_tensor(x[c(1, 2), newaxis, 1:2, c(1, 2)], x[1:2, newaxis, 1:2, 1:2])
  b <- c(1, 2, 3)
  torch_randn(c(6, 4))[b]
  expect_equal(b, c(1, 2, 3))
})

test_that("new axes, drop = FALSE and slc()", {
  x <- torch_randn(10)
  expect_tensor_shape(x[, NULL], c(10L, 1L))
  expect_tensor_shape(x[NULL, , NULL], c(1L, 10L, 1L))
  expect_tensor_shape(x[, newaxis], c(10L, 1L))
  expect_tensor_shape(x[newaxis, , newaxis, newaxis], c(1L, 10L, 1L, 1L))
  expect_equal_to_tensor(x[1:5, ..], x[1:5])

  x <- torch_randn(10, 10)
  expect_tensor_shape(x[1, , drop = FALSE], c(1L, 10L))
  expect_tensor_shape(x[.., 1, drop = FALSE], c(10L, 1L))
  expect_tensor_shape(x[.., -1, drop = FALSE], c(10L, 1L))
  expect_tensor_shape(x[1, 1], integer(0))

  r <- as_array(x)
  expect_equal_to_r(x[slc(start = 1, end = 5, step = 2), ], r[seq(1, 5, by = 2), ])
  expect_equal_to_r(x[slc(start = 1, end = 5, step = 2), 1], r[seq(1, 5, by = 2), 1])
  expect_equal_to_tensor(x[slc(2, Inf), ], x[2:N, ])
  expect_output(print(slc(1, 3, 5)), "<slice>")
})

test_that("the fast paths (literal -k, NULL, ranges, plain values) agree with the general ones", {
  x <- torch_randn(5, 4)
  a <- as_array(x)
  expect_equal_to_tensor(x[-1, ], x[-(1), ])
  expect_equal_to_r(x[-2, ], a[4, ])
  expect_equal_to_tensor(x[, NULL, 2:3], x[, newaxis, 2:3])
  expect_tensor_shape(x[2:3, NULL], c(2L, 1L, 4L))
  k <- 2L
  n <- 4
  expect_equal_to_r(x[k:n, 1], a[2:4, 1])
  expect_equal_to_r(x[k:N, -1], a[2:5, 4])
  expect_equal_to_r(x[1:n:2, ], a[c(1, 3), ])
  i <- torch_tensor(3L)
  expect_equal_to_tensor(x[i, ], x[3:3, ])
  expect_error(x[-6, ], "out of bounds")
  expect_error(x[, 1:2, 1], "too many indices")
})

test_that("negative ranges and vectors count from the end", {
  x <- torch_tensor(c(1, 2, 3))
  expect_equal_to_r(x[2:-1], c(2, 3))
  expect_equal_to_r(x[-2:-1], c(2, 3))
  expect_equal_to_r(x[-3:-2], c(1, 2))
  expect_equal_to_r(x[c(-1, -2)], c(3, 2))
})

test_that("index errors", {
  x <- torch_randn(c(10, 10, 10, 10))
  expect_error(x[1, 1, 1, 1, 1])
  x <- torch_tensor(10)
  expect_error(x[0], "Indexing starts at 1")
  expect_error(x[c(0, 1)], "Indexing starts at 1")
  expect_error(x[2], "out of bounds")
  expect_error(torch_tensor(NULL)[1], regexp = "out of bounds")
})

test_that("boolean masks: tensors and R logical vectors", {
  x <- torch_tensor(c(-1, -2, 0, 1, 2))
  expect_equal_to_r(x[x < 0], c(-1, -2))
  x <- torch_tensor(rbind(c(-1, -2, 0, 1, 2), c(2, 1, 0, -1, -2)))
  expect_equal_to_r(x[x < 0], c(-1, -2, -1, -2))
  expect_error(x[x < 0, 1])

  x <- torch_tensor(c(1, 2))
  expect_equal_to_r(x[c(TRUE, FALSE)], 1)
  x <- torch_tensor(c(1))
  expect_equal_to_r(x[TRUE], 1)
  x <- torch_zeros(2, 2)
  expect_equal(dim(x[c(TRUE, FALSE), ]), c(1, 2))
  expect_equal(dim(x[c(TRUE, FALSE), c(TRUE, FALSE)]), c(1, 1))
  x <- torch_randn(4, 4, 4)
  index <- c(TRUE, FALSE, TRUE, FALSE)
  expect_equal_to_r(x[index, index, index], as_array(x)[index, index, index])
})

test_that("long tensors as indices are 1-based", {
  x <- torch_randn(4, 4)
  index <- torch_tensor(1, dtype = torch_long())
  expect_equal(x[index, index]$item(), x[1, 1]$item())
  expect_tensor_shape(x[index, index], c(1L, 1L))
  index <- torch_scalar_tensor(1, dtype = torch_long())
  expect_equal_to_tensor(x[index, index], x[1, 1])
  index <- torch_tensor(-1, dtype = torch_long())
  expect_equal(x[index, index]$item(), x[-1, -1]$item())
  index <- torch_tensor(c(-1, 1), dtype = torch_long())
  expect_equal_to_tensor(x[index, index], x[c(-1, 1), c(-1, 1)])
  index <- torch_tensor(c(-1, 0, 1), dtype = torch_long())
  expect_error(x[index, ], regexp = "Indexing starts at 1")
  a <- torch_randn(c(3, 4, 2))
  b <- torch_tensor(c(1, 3), dtype = torch_long())
  expect_equal_to_r(a[.., b, ], as.array(a)[, c(1, 3), ])
})

test_that("assignment", {
  x <- torch_randn(2, 2)
  x[1, 1] <- torch_tensor(0)
  expect_equal_to_r(x[1, 1], 0)
  x[1, 2] <- 0
  expect_equal_to_r(x[1, 2], 0)
  x[1, 2] <- 1L
  expect_equal_to_r(x[1, 2], 1)
  x[2, ] <- c(5, 6)
  expect_equal_to_r(x[2, ], c(5, 6))

  x <- torch_tensor(c(TRUE, FALSE))
  x[2] <- TRUE
  expect_equal_to_r(x[2], TRUE)

  x <- torch_tensor(rbind(c(-1, -2, 0, 1, 2), c(2, 1, 0, -1, -2)))
  x[x <= 0] <- 1
  expect_true(as_array(torch_all(x > 0)))

  x <- torch_tensor(c(1, 2, 3, 4, 5))
  x[1:2] <- c(0, 0)
  expect_equal_to_r(x[1:2], c(0, 0))
  x[c(5, 3)] <- 9
  expect_equal_to_r(x, c(0, 0, 9, 4, 9))

  m <- torch_zeros(3, 3)
  # as R torch: two vector indices in an assignment are refused, m unchanged
  expect_error(m[c(1, 3), c(1, 3)] <- 1, "Only one tensor is allowed in the index")
  expect_equal_to_r(m$sum(), 0)
  m <- torch_zeros(3, 3)
  m[1, c(1, 3)] <- 5
  m[c(2, 3), 2] <- 7
  m[3, ] <- c(1, 2, 3)
  expect_equal_to_r(m, rbind(c(5, 0, 5), c(0, 7, 0), c(1, 2, 3)))
  x <- torch_zeros(2, 3, 4)
  x[.., c(1, 4)] <- 1
  expect_equal_to_r(x$sum(), 12)
  x[c(TRUE, FALSE), , 2] <- 9
  expect_equal_to_r(x$sum(), 39)
  v <- torch_zeros(3)
  v[torch_tensor(c(1L, 3L))] <- torch_tensor(c(4, 5))
  expect_equal_to_r(v, c(4, 0, 5))
})

test_that("indexing and assignment are differentiable", {
  x <- torch_tensor(c(1, 2, 3), requires_grad = TRUE)
  y <- x[2:3]
  expect_output(print(y$grad_fn), "SliceBackward0")
  (y * c(10, 20))$sum()$backward()
  expect_equal_to_r(x$grad, c(0, 10, 20))

  x <- torch_tensor(c(1, 2, 3), requires_grad = TRUE)
  x[c(1, 1, 3)]$sum()$backward()
  expect_equal_to_r(x$grad, c(2, 0, 1))

  x <- torch_tensor(c(-1, 2, -3), requires_grad = TRUE)
  x[x > 0]$sum()$backward()
  expect_equal_to_r(x$grad, c(0, 1, 0))

  w <- torch_tensor(c(1, 2, 3), requires_grad = TRUE)
  v <- torch_tensor(5, requires_grad = TRUE)
  z <- w * 1
  z[2] <- v * 2
  z$sum()$backward()
  expect_equal_to_r(w$grad, c(1, 0, 1))
  expect_equal_to_r(v$grad, 2)

  w <- torch_tensor(c(-1, 2, -3), requires_grad = TRUE)
  z <- w * 2
  z[z < 0] <- 0
  z$sum()$backward()
  expect_equal_to_r(w$grad, c(0, 2, 0))
})

test_that("numeric and logical matrices index as tensors of their shape", {
  x <- torch_tensor(matrix(1:16, 4, 4), dtype = torch_float())
  y <- rbind(c(1, 1), c(1, 2))
  expect_equal(x[y]$shape, c(2, 2, 4))
  expect_equal_to_r(x[y], as_array(x[torch_tensor(y, dtype = torch_long())]))
  expect_equal_to_r(x[y][2, 2, ], c(2, 6, 10, 14))
  m <- as.array(x > 8)
  expect_equal_to_r(x[m], as_array(x[x > 8]))
  # and in assignment (one index, as R torch allows)
  z <- torch_zeros(4, 3)
  z[y] <- 1
  expect_equal_to_r(z$sum(2), c(3, 3, 0, 0))
  x[m] <- 0
  expect_equal_to_r((x > 8)$sum(), 0L)
  w <- torch_zeros(3, 3)
  w[torch_tensor(matrix(c(1L, 3L), 1, 2)), 2] <- 5
  expect_equal_to_r(w[, 2], c(5, 0, 5))
})
