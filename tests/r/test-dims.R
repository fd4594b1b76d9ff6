# Every dim argument is 1-based; negative dims count from the end; 0 fails.

test_that("reductions", {
  m <- matrix(c(1, 2, 3, 4, 5, 6), nrow = 2)
  x <- torch_tensor(m)
  expect_equal_to_r(x$sum(dim = 1), colSums(m))
  expect_equal_to_r(x$sum(dim = 2), rowSums(m))
  expect_equal_to_r(x$sum(dim = -1), rowSums(m))
  expect_equal_to_r(x$sum(dim = c(1, 2)), sum(m))
  expect_equal(x$sum(dim = 1, keepdim = TRUE)$shape, c(1L, 3L))
  expect_equal_to_r(x$mean(dim = 2), rowMeans(m))
  expect_equal_to_r(torch_sum(x, dim = 1), colSums(m))
  expect_equal_to_r(torch_mean(x, 1), colMeans(m))
  expect_error(x$sum(dim = 0), "Indexing starts at 1 but found a 0.", fixed = TRUE)
  expect_error(x$mean(dim = 3), "out of range")
})

test_that("max and min with dim give 1-based indices", {
  x <- torch_tensor(matrix(c(1, 5, 3, 2, 9, 0), nrow = 2))
  r <- x$max(dim = 2)
  expect_true(is.list(r))
  expect_equal_to_r(r[[1]], c(9, 5))
  expect_equal_to_r(r[[2]], c(3L, 1L))
  r <- x$min(dim = 1)
  expect_equal_to_r(r[[1]], c(1, 2, 0))
  expect_equal_to_r(r[[2]], c(1L, 2L, 2L))
  expect_equal_to_r(x$argmax(), 3L)  # row-major position, as torch
  expect_equal_to_r(x$argmax(dim = 1), c(2L, 1L, 1L))
  expect_equal_to_r(x$argmin(dim = 2), c(1L, 3L))
  expect_equal_to_r(torch_argmax(x, dim = 2), c(3L, 1L))
  expect_equal_to_r(x$max(), 9)
  expect_equal_to_r(torch_max(x, dim = 1)[[2]], c(2L, 1L, 1L))
  expect_equal_to_r(x$max(other = torch_zeros(2, 3) + 4), matrix(c(4, 5, 4, 4, 9, 4), 2))
})

test_that("shape ops", {
  x <- torch_randn(2, 3, 4)
  expect_equal(x$unsqueeze(1)$shape, c(1L, 2L, 3L, 4L))
  expect_equal(x$unsqueeze(4)$shape, c(2L, 3L, 4L, 1L))
  expect_equal(x$unsqueeze(-1)$shape, c(2L, 3L, 4L, 1L))
  expect_error(x$unsqueeze(0), "Indexing starts at 1")
  expect_equal(x$transpose(1, 3)$shape, c(4L, 3L, 2L))
  expect_equal(x$permute(c(3, 1, 2))$shape, c(4L, 2L, 3L))
  expect_equal(x$flatten()$shape, 24L)
  expect_equal(x$flatten(start_dim = 2)$shape, c(2L, 12L))
  expect_equal(torch_ones(1, 3, 1)$squeeze()$shape, 3L)
  expect_equal(torch_ones(1, 3, 1)$squeeze(1)$shape, c(3L, 1L))
  expect_equal(torch_ones(1, 3, 1)$squeeze(-1)$shape, c(1L, 3L))
  chunks <- x$chunk(2, dim = 3)
  expect_length(chunks, 2)
  expect_equal(chunks[[1]]$shape, c(2L, 3L, 2L))
  parts <- x$split(1, dim = 1)
  expect_length(parts, 2)
  expect_length(x$unbind(2), 3)
  expect_equal_to_r(torch_tensor(1:5)$narrow(1, 2, 3), 2:4)
  expect_equal_to_r(torch_tensor(1:5)$select(1, 2), 2L)
  expect_equal_to_r(torch_tensor(1:5)$select(1, -1), 5L)
  sm <- torch_tensor(matrix(c(1, 1, 2, 2), 2))$softmax(dim = 2)
  expect_equal_to_r(sm$sum(dim = 2), c(1, 1))
  expect_equal_to_r(torch_log_softmax(torch_zeros(2, 2), dim = 1), matrix(log(0.5), 2, 2))
  g <- torch_tensor(matrix(c(1, 2, 3, 4), 2))$gather(2, torch_tensor(matrix(c(2L, 1L), 2)))
  expect_equal_to_r(g, matrix(c(3, 2), 2))
})

test_that("dims in autograd", {
  x <- torch_tensor(matrix(c(1, 2, 3, 4), 2), requires_grad = TRUE)
  x$sum(dim = 1)$sum()$backward()
  expect_equal_to_r(x$grad, matrix(1, 2, 2))
  x <- torch_tensor(matrix(c(1, 5, 3, 2), 2), requires_grad = TRUE)
  x$max(dim = 1)[[1]]$sum()$backward()
  expect_equal_to_r(x$grad, matrix(c(0, 1, 1, 0), 2))
})

test_that("libtorch's messages name dims, list positions, targets and indices from 1", {
  # (R torch's translate_error_msg: the engine says libtorch's words, R counts them from 1)
  expect_error(torch_cat(list(torch_randn(8, 2, 7), torch_randn(8, 3, 7)), dim = 1),
               paste("Sizes of tensors must match except in dimension 1. Expected size 2 but",
                     "got size 3 for tensor number 2 in the list."), fixed = TRUE)
  a <- torch_arange(start = 1, end = 60)$reshape(c(3, 4, 5))
  b <- torch_arange(start = 1, end = 24)$reshape(c(4, 3, 2))
  expect_error(torch_tensordot(a, b, list(c(2, 1), c(1, 3))),
               "first has size 3 in dim 1 and second has size 2 in dim 3", fixed = TRUE)
  expect_error(torch_cross(torch_randn(4, 3), torch_randn(4, 3), dim = 1),
               "inputs dimension 1 must have length 3", fixed = TRUE)
  pooled <- nnf_max_pool2d(torch_randn(1, 4, 4), c(2, 2), return_indices = TRUE)
  expect_error(nnf_max_unpool2d(pooled[[1]], torch_ones_like(pooled[[2]]) * 35L, c(2, 2),
                                output_size = c(4, 4)),
               "Found an invalid max index: 35", fixed = TRUE)
  x <- torch_randn(2, 5)
  expect_error(nnf_nll_loss(x, torch_tensor(c(6L, 1L))), "Target 6 is out of bounds.", fixed = TRUE)
  expect_error(nnf_cross_entropy(x, torch_tensor(c(0L, 1L))), "Indexing starts at 1 but found a 0.",
               fixed = TRUE)
  expect_equal(as.numeric(nnf_nll_loss(x, torch_tensor(c(-100L, 2L)))), -as.numeric(x[2, 2]),
               tolerance = 1e-6)  # (the default ignore_index, -100: a negative target as given)
  expect_error(nn_embedding(10, 3)(torch_tensor(c(0L, 1L))), "Indexing starts at 1 but found a 0.",
               fixed = TRUE)
  expect_error(torch_tensor(integer())[1], "index 1 is out of bounds for dimension 1 with size 0",
               fixed = TRUE)
  # an error R itself raised (a hook's) is shown as it was
  y <- torch_tensor(2, requires_grad = TRUE)
  y$register_hook(function(grad) torch_tensor(1)$sum(dim = 4))
  expect_error((2 * y)$backward(),
               "Dimension out of range (expected to be in range of [-1, 1], but got 4)", fixed = TRUE)
})

test_that("movedim's dims are counted by R torch's R code: a 0 is a value_error", {
  x <- torch_randn(3, 2, 1)
  expect_error(torch_movedim(x, 0, 1), "Dimension is 1-based, but found 0.", fixed = TRUE,
               class = "value_error")
  expect_error(x$movedim(1, 0), "Dimension is 1-based, but found 0.", fixed = TRUE,
               class = "value_error")
  expect_error(torch_movedim(x, 4, 3),
               "Dimension out of range (expected to be in range of [-3, 3], but got 4)", fixed = TRUE)
  expect_equal(torch_movedim(x, c(1, -1), c(3, 1))$shape, c(1L, 2L, 3L))
  expect_error(nnf_contrib_sparsemax(torch_randn(2, 2), dim = 0), "Dimension is 1-based",
               class = "value_error")
  expect_equal(as_array(nnf_contrib_sparsemax(torch_tensor(rbind(c(0, 9), c(9, 0))), dim = 1)),
               rbind(c(0, 1), c(1, 0)))
})
