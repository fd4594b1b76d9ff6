# R torch's internal helpers (its code and tests call them from inside the
# namespace): the distributions' constraints, is_permutation, set_names,
# cpp_tensor_is_undefined, is_meta_device; the allocator's gc() on failure.

internal <- function(name) get(name, envir = asNamespace("torch"))

test_that("the helpers are found inside the namespace and not exported", {
  for (nm in c("constraint_real_vector", "constraint_less_than", "is_permutation",
               "cpp_tensor_is_undefined", "is_meta_device", "set_names")) {
    expect_false(nm %in% getNamespaceExports("torch"), info = nm)
    expect_false(is.null(internal(nm)), info = nm)
  }
})

test_that("constraints check values as R torch's do", {
  x <- torch_tensor(rbind(c(1, 2), c(NaN, 3), c(-Inf, 0)))
  expect_equal(as_array(internal("constraint_real_vector")$check(x)), c(TRUE, FALSE, TRUE))
  expect_equal(as_array(internal("constraint_real")$check(x)), !is.nan(as.matrix(x)))
  expect_error(internal("constraint_real_vector")$check(torch_scalar_tensor(1)), "Expected value")

  m <- array(c(2, 1, 1, 2, -1, 0, 0, 1), dim = c(2, 2, 2))  # m[,,1] positive definite
  batch <- torch_tensor(aperm(m, c(3, 1, 2)))
  definite <- sapply(1:2, function(i) all(eigen(m[, , i])$values > 0))
  expect_equal(as_array(internal("constraint_positive_definite")$check(batch)),
               matrix(definite, nrow = 1))

  lower <- torch_tensor(rbind(c(1, 0), c(5, 2)))$unsqueeze(1)
  expect_equal(as_array(internal("constraint_lower_cholesky")$check(lower)), TRUE)
  expect_equal(as_array(internal("constraint_lower_cholesky")$check(lower$transpose(2, 3))), FALSE)
  expect_equal(as_array(internal("constraint_lower_cholesky")$check(-lower)), FALSE)

  v <- c(-1, 0, 0.5, 1, 2)
  half_open <- internal("constraint_half_open_interval")$new(0, 1)
  expect_equal(as_array(half_open$check(torch_tensor(v))), v >= 0 & v < 1)
  expect_equal(as_array(internal("constraint_unit_interval")$check(torch_tensor(v))),
               v >= 0 & v <= 1)
  less <- internal("constraint_less_than")$new(1)
  expect_equal(less$upper_bound, 1)
  expect_equal(as_array(less$check(torch_tensor(v))), v < 1)
  expect_equal(as_array(internal("constraint_positive")$check(torch_tensor(v))), v > 0)
  expect_equal(as_array(internal("constraint_boolean")$check(torch_tensor(v))), v %in% c(0, 1))
  expect_equal(as_array(internal("constraint_nonnegative_integer")$check(torch_tensor(v))),
               v >= 0 & v %% 1 == 0)
  expect_error(internal("constraint_dependent")$check(torch_tensor(1)), "dependent")
  expect_true(internal("is_dependent")(internal("constraint_dependent")))
  expect_false(internal("is_dependent")(internal("constraint_real")))
})

test_that("constraints print as R torch's", {
  expect_equal(capture.output(print(internal("constraint_real"))),
               "torch_Real torch_Constraint R6")
  expect_equal(capture.output(print(internal("constraint_less_than")$new(2))),
               "torch_LessThan: (upper_bound=2) torch_Constraint: (upper_bound=2) R6: (upper_bound=2)")
  expect_equal(capture.output(print(internal("constraint_half_open_interval")$new(0, 1))),
               "(lower_bound=0, upper_bound=1)")
  expect_equal(class(internal("constraint_half_open_interval")$new(0, 1)),
               c("torch_HalfOpenInterval", "torch_Constraint", "R6"))
})

test_that("is_permutation, set_names, cpp_tensor_is_undefined and is_meta_device", {
  is_permutation <- internal("is_permutation")
  expect_true(is_permutation(c("step", "sum"), c("sum", "step")))
  expect_false(is_permutation(c("step", "sum"), c("sum", "sum")))
  expect_false(is_permutation("step", c("step", "sum")))
  expect_identical(internal("set_names")(list(1, 2), c("a", "b")), list(a = 1, b = 2))
  expect_identical(internal("set_names")(list(), character()), setNames(list(), character()))
  x <- torch_tensor(1, requires_grad = TRUE)
  expect_true(internal("cpp_tensor_is_undefined")(x$grad))
  expect_false(internal("cpp_tensor_is_undefined")(x))
  expect_true(internal("is_meta_device")(torch_randn(2, device = "meta")$device))
  expect_false(internal("is_meta_device")(torch_randn(2)$device))
})

test_that("an allocation that fails calls R's gc(), then fails", {
  env <- new.env()
  trace(gc, print = FALSE, function() env$gc_called <- TRUE)
  on.exit(untrace(gc))
  expect_error(torch_randn(1e9, 1e9), "allocate")
  expect_true(isTRUE(env$gc_called))
})

test_that("named arguments before positional ones match as R matches them", {
  x <- torch_randn(3, 2)
  expect_equal_to_tensor(torch_diag_embed(x, offset = 1, -2, -1), torch_diag_embed(x, 1, -2, -1))
  expect_equal_to_tensor(torch_diag_embed(offset = 1, x, 1, 2), torch_diag_embed(x, 1, 1, 2))
})

test_that("R torch's unexported generated functions, in libtorch's form", {
  for (nm in c("torch_nll_loss", "torch_size", "torch_max_pool2d_with_indices", "torch_dimname",
               "torch_dimname_list")) {
    expect_false(nm %in% getNamespaceExports("torch"), info = nm)
  }
  x <- torch_randn(3, 5)
  target <- torch_tensor(c(2L, 5L, 1L))
  nll <- internal("torch_nll_loss")
  expect_equal(names(formals(nll)), c("self", "target", "weight", "reduction", "ignore_index"))
  expect_equal(as.numeric(nll(x, target)), as.numeric(nnf_nll_loss(x, target)))
  expect_equal(as_array(nll(x, target, reduction = torch_reduction_none())),
               as_array(nnf_nll_loss(x, target, reduction = "none")))
  expect_equal(as.numeric(nll(x, target, ignore_index = 5L)),
               as.numeric(nnf_nll_loss(x, target, ignore_index = 5L)))
  expect_error(nll(x, torch_tensor(c(0L, 1L, 1L))), "Indexing starts at 1 but found a 0.",
               fixed = TRUE)
  expect_error(nll(x, torch_tensor(c(6L, 1L, 1L))), "Target 6 is out of bounds.", fixed = TRUE)

  y <- torch_randn(1, 4, 4)
  pooled <- internal("torch_max_pool2d_with_indices")(y, kernel_size = c(2, 2))
  expected <- nnf_max_pool2d(y, c(2, 2), return_indices = TRUE)
  expect_equal(as_array(pooled[[1]]), as_array(expected[[1]]))
  expect_equal(as_array(pooled[[2]]), as_array(expected[[2]]))  # (1-based, both)
  expect_true(all(as_array(pooled[[2]]) >= 1))
  expect_equal(as_array(y$flatten(start_dim = 2)[1, ][pooled[[2]]$flatten()]),
               as_array(pooled[[1]]$flatten()))

  size <- internal("torch_size")
  expect_equal(size(torch_randn(2, 3), 2), 3)
  expect_equal(size(torch_randn(2, 3), -2), 2)
  expect_error(size(torch_randn(2, 3), 3),
               "Dimension out of range (expected to be in range of [-2, 2], but got 3)", fixed = TRUE)
  expect_error(size(torch_randn(2, 3), 0), "Indexing starts at 1 but found a 0.", fixed = TRUE)

  expect_output(print(internal("torch_dimname")("hello")), "hello")
  expect_equal(as.character(internal("torch_dimname_list")(c("a", "b"))), c("a", "b"))
  expect_error(internal("torch_dimname")("1a"), "valid identifier")
})
