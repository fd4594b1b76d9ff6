# The functions whose R torch formals differ from the Python function's, called from R
# with R torch's argument names, positions and defaults (rtorch_py/formals.py).

test_that("R torch's positions and names reach the op (dims 1-based, R's defaults)", {
  x <- torch_tensor(matrix(c(1, 2, 3, 4, 5, 7), 2, 3))
  expect_equal(as_array(torch_std(x, 1)), apply(as_array(x), 2, sd), tolerance = 1e-6)
  expect_equal(as_array(x$var(dim = 2, unbiased = FALSE)),
               apply(as_array(x), 1, function(r) mean((r - mean(r))^2)), tolerance = 1e-6)
  expect_equal(x$reshape(c(3, 2))$shape, c(3, 2))
  expect_equal(torch_reshape(x, shape = c(6))$shape, 6)
  expect_equal(x$permute(c(2, 1))$shape, c(3, 2))
  expect_equal(x$`repeat`(repeats = c(2, 1))$shape, c(4, 3))
  expect_equal(x$expand(c(2, 2, 3), implicit = FALSE)$shape, c(2, 2, 3))
  expect_equal(x$sum_to_size(size = c(1, 3))$shape, c(1, 3))
  expect_equal(as_array(torch_argsort(torch_tensor(c(3, 1, 2)), descending = TRUE)),
               c(1L, 3L, 2L))
  expect_equal(as_array(torch_diagonal(x, offset = 1)), c(3, 7))
  expect_equal(as_array(x$diagonal(dim1 = 2, dim2 = 1)), c(1, 4))
  expect_equal(as_array(torch_round(torch_tensor(1.26), decimals = 1)), 1.3, tolerance = 1e-6)
  expect_equal(torch_kaiser_window(5)$shape, 5)  # (periodic, beta: libtorch's defaults)
  expect_equal(as_array(torch_tensor(c(NaN, 1))$nan_to_num()), c(0, 1))
  g <- torch_meshgrid(list(torch_tensor(1:2), torch_tensor(1:3)), indexing = "xy")
  expect_equal(g[[1]]$shape, c(3, 2))
})

test_that("R torch's other arguments: out_dtype, outdim, dims, out_dim, names, align_to_window", {
  a <- torch_randn(2, 3); b <- torch_randn(3, 2)
  expect_equal(as_array(torch_mm(a, b, out_dtype = NULL)), as_array(a$mm(b)))
  expect_equal(torch_addmm(torch_zeros(2, 2), a, b, beta = 0.5)$shape, c(2, 2))
  y <- torch_randn(2, 3, 4)$refine_names(c("A", "B", "C"))
  expect_equal(y$diagonal(outdim = "D", dim1 = "A", dim2 = "B")$names, c("C", "D"))
  expect_equal(y$flatten(dims = c("B", "C"), out_dim = "E")$names, c("A", "E"))
  expect_equal(y$flatten(start_dim = 2, out_dim = "E")$shape, c(2, 12))
  z <- torch_randn(2, 12)$refine_names(c("A", "B"))
  expect_equal(z$unflatten("B", c(3, 4), c("X", "Y"))$names, c("A", "X", "Y"))
  s <- torch_randn(40)
  f <- s$stft(n_fft = 16, hop_length = 4, win_length = 8, window = torch_hann_window(8),
              center = FALSE, return_complex = TRUE, align_to_window = TRUE)
  expect_equal(f$shape, c(9, 9))  # (frames of the window's 8 samples: 1 + (40 - 8) / 4)
  expect_error(s$stft(n_fft = 16, center = TRUE, return_complex = TRUE, align_to_window = TRUE),
               "align_to_window should only be set when center = false")
  l <- torch_lu(A = torch_randn(3, 3))
  expect_length(l, 2)
  out <- torch_empty(2, 2)
  got <- nnf_normalize(torch_ones(2, 2), out = out)
  expect_equal(as_array(out), matrix(sqrt(0.5), 2, 2), tolerance = 1e-6)
  expect_true(torch_is_installed(recheck = TRUE))
})

test_that("creation options, modules and functions take R torch's arguments", {
  x <- torch_randn(2)
  expect_true(x$new_zeros(c(2, 2), options = list(dtype = torch_float64()))$dtype ==
                torch_float64())
  expect_equal(x$new_full(2, 3)$shape, 2)
  expect_true(torch_normal(0, 1, size = c(2), dtype = torch_float64())$dtype == torch_float64())
  expect_true(torch_randperm(3)$dtype == torch_long())
  e <- nn_embedding(4, 2, .weight = torch_ones(4, 2))
  expect_equal(as_array(e$weight), matrix(1, 4, 2))
  expect_equal(nn_rnn(2, 3, nonlinearity = "relu")$nonlinearity, "relu")
  expect_equal(nn_rnn(2, 3)$nonlinearity, "tanh")
  bag <- nnf_embedding_bag(torch_tensor(c(1L, 2L, 3L, 4L)), torch_eye(4),
                           torch_tensor(c(0L, 2L, 4L)), include_last_offset = TRUE,
                           mode = "sum")
  expect_equal(as_array(bag), rbind(c(1, 1, 0, 0), c(0, 0, 1, 1)))
  q <- torch_randn(3, 1, 4)
  w <- torch_randn(12, 4)
  o <- nnf_multi_head_attention_forward(q, q, q, 4, 2, w, NULL, NULL, NULL, FALSE, 0,
                                        torch_eye(4), NULL, avg_weights = FALSE)
  expect_equal(o[[2]]$shape, c(1, 2, 3, 3))
  ob <- nnf_multi_head_attention_forward(q$transpose(1, 2), q$transpose(1, 2), q$transpose(1, 2),
                                         4, 2, w, NULL, NULL, NULL, FALSE, 0, torch_eye(4), NULL,
                                         batch_first = TRUE)
  expect_equal(as_array(ob[[1]]$transpose(1, 2)), as_array(o[[1]]), tolerance = 1e-6)
  m <- nn_linear(2, 2)
  shared <- clone_module(m, deep = TRUE, replace_values = FALSE)
  expect_true(torch_equal(shared$weight, m$weight))
  with_no_grad(shared$weight$add_(1))
  expect_true(torch_equal(shared$weight, m$weight))  # (the same tensor)
  own <- clone_module(m, deep = TRUE)
  with_no_grad(own$weight$add_(1))
  expect_false(torch_equal(own$weight, m$weight))
  net <- nn_sequential(nn_linear(2, 2), nn_relu())
  expect_length(nn_prune_head(net, 1), 1)
})

test_that("a name before positions matches as R does; a position too many is R's error", {
  x <- torch_randn(2, 3)
  expect_equal(torch_diag_embed(x, offset = 0, -2, -1)$shape, c(2, 3, 3))
  expect_error(torch_diag_embed(x, offset = 0, -2, -1, 7), "unused argument (7)", fixed = TRUE)
})
