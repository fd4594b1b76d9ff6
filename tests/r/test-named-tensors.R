# Named tensors from R: names = in creation functions, x$names, dims given by
# name to any op's dim argument, and names carried through ops (rtorch_py/named.py).

test_that("creation functions take names; x$names is NULL or a character vector", {
  x <- torch_randn(2, 3, names = c("W", "H"))
  expect_true(x$has_names())
  expect_identical(x$names, c("W", "H"))
  expect_false(torch_randn(2, 3)$has_names())
  expect_null(torch_randn(2, 3)$names)
  for (make in list(torch_zeros, torch_ones, torch_rand, torch_empty)) {
    expect_identical(make(2, 3, names = c("a", "b"))$names, c("a", "b"))
  }
  expect_identical(torch_full(c(2, 3), 1, names = c("a", "b"))$names, c("a", "b"))
  expect_identical(torch_zeros(2, names = "hello")$names, "hello")
  expect_equal(x$size("H"), 3)
  expect_identical(x$detach()$names, c("W", "H"))
  x$names <- c("p", "q")
  expect_identical(x$names, c("p", "q"))
  x$names <- NULL
  expect_null(x$names)
  # an unnamed dim reads "*", as libtorch's wildcard name
  expect_identical(torch_zeros(2, 3)$refine_names(list(NULL, "b"))$names, c("*", "b"))
})

test_that("rename, rename_, refine_names and align_to", {
  x <- torch_randn(2, 3, names = c("W", "H"))
  expect_identical(x$rename(W = "a")$names, c("a", "H"))
  expect_identical(x$rename("a", "b")$names, c("a", "b"))
  expect_identical(x$rename(c("a", "b"))$names, c("a", "b"))
  expect_identical(x$names, c("W", "H"))
  x$rename_(H = "b")
  expect_identical(x$names, c("W", "b"))
  expect_error(torch_randn(2, 2)$rename(W = "a"), class = "runtime_error")
  expect_error(x$rename(Q = "a"), "no dim is called 'Q'")
  y <- torch_zeros(2, 3)$refine_names(c("a", "b"))
  expect_identical(y$names, c("a", "b"))
  expect_error(y$refine_names(c("a", "z")), "already called 'b'")
  z <- torch_tensor(array(1:24, dim = c(2, 3, 4)))$rename("a", "b", "c")
  w <- z$align_to(c("c", "a", "b"))
  expect_identical(w$names, c("c", "a", "b"))
  expect_equal(as_array(w), aperm(array(1:24, dim = c(2, 3, 4)), c(3, 1, 2)))
  expect_equal(z$align_to(c("a", "b", "new", "c"))$shape, c(2, 3, 1, 4))
})

test_that("dims given by name are the dims of that name", {
  m <- array(as.numeric(1:24), dim = c(2, 3, 4))
  x <- torch_tensor(m)$rename("A", "B", "C")
  expect_equal_to_tensor(x$sum(dim = "B"), x$sum(dim = 2))
  expect_equal_to_tensor(torch_sum(x, dim = c("A", "C")), torch_sum(x, dim = c(1, 3)))
  expect_equal_to_tensor(x$mean(dim = "C", keepdim = TRUE), x$mean(dim = 3, keepdim = TRUE))
  expect_equal_to_tensor(torch_var(x, dim = "A"), torch_var(x, dim = 1))
  expect_equal_to_tensor(x$softmax(dim = "C"), x$softmax(dim = 3))
  expect_equal_to_tensor(x$transpose("A", "C"), x$transpose(1, 3))
  expect_equal_to_tensor(x$flip(c("A", "B")), x$flip(c(1, 2)))
  r <- x$max(dim = "B")
  expect_equal_to_tensor(r[[1]], x$max(dim = 2)[[1]])
  expect_equal_to_tensor(r[[2]], x$max(dim = 2)[[2]])  # 1-based positions, as for numbers
  y <- torch_randn(2, 4, 4, names = c("A", "B", "C"))
  expect_equal(torch_cat(list(x, y), dim = "B")$shape, c(2, 7, 4))
  vm <- torch_var_mean(x, dim = "A")
  expect_equal_to_tensor(vm[[1]], torch_var(x, dim = 1))
  expect_equal_to_tensor(vm[[2]], torch_mean(x, dim = 1))
})

test_that("names are carried through ops as PyTorch infers them", {
  x <- torch_randn(2, 3, 4, names = c("A", "B", "C"))
  expect_identical(x$exp()$names, c("A", "B", "C"))
  expect_identical(exp(x)$names, c("A", "B", "C"))
  expect_identical((x * 2)$names, c("A", "B", "C"))
  expect_identical((2 - x)$names, c("A", "B", "C"))
  expect_identical((x + torch_ones(4, names = "C"))$names, c("A", "B", "C"))
  expect_identical(x$sum(dim = "B")$names, c("A", "C"))
  expect_identical(x$sum(dim = 2, keepdim = TRUE)$names, c("A", "B", "C"))
  expect_null(x$sum()$names)
  expect_identical(torch_var(x, dim = "A")$names, c("B", "C"))
  expect_identical(torch_cat(list(x, x), dim = "C")$names, c("A", "B", "C"))
  expect_identical(x$transpose("A", "C")$names, c("C", "B", "A"))
  expect_identical(x$unsqueeze(1)$names, c("*", "A", "B", "C"))
  expect_identical(x$matmul(torch_ones(4, 5))$names, c("A", "B", "*"))
  # an op without name inference refuses named tensors, as libtorch does
  expect_error(x$reshape(c(6, 4)), "reshape is not yet supported with named tensors",
               class = "runtime_error")
  expect_error(torch_norm(x, dim = "A"), "not yet supported with named tensors")
  expect_equal(x$rename(NULL)$reshape(c(6, 4))$shape, c(6, 4))
  expect_error(x + torch_ones(4, names = "Z"), "'C' meets dim 'Z'")
  expect_identical(x$argmax(dim = "C")$names, c("A", "B"))  # 1-based positions, named
  expect_identical(x$max(dim = "B")[[2]]$names, c("A", "C"))
  expect_identical(nnf_softmax(x, dim = "B")$names, c("A", "B", "C"))
  expect_identical(nn_softmax(dim = "C")(x)$names, c("A", "B", "C"))
  expect_error(torch_stack(list(x, x)), "stack is not yet supported with named tensors")
})

test_that("E46/E47: unknown dim names and names that don't fit", {
  x <- torch_randn(2, 3, names = c("A", "B"))
  expect_error(x$sum(dim = "Z"),
               "dim = 'Z': no dim of this tensor is called 'Z'; its names are Tensor[A, B]",
               fixed = TRUE, class = "runtime_error")
  expect_error(torch_randn(2, 3)$softmax(dim = "A"), "this tensor has no dim names")
  expect_error(torch_zeros(2, 3, names = "A"), "1 names ('A') given for a tensor with 2 dims",
               fixed = TRUE)
  expect_error(torch_zeros(2, 3, names = c("A", "A")), "'A' is given to two dims")
  expect_identical(x$sum(dim = "A")$names, "B")  # the tensor still works
})
