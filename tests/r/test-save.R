# torch_save / torch_load from R.

test_that("tensors and lists of tensors round-trip", {
  f <- tempfile(fileext = ".pt")
  x <- torch_randn(3, 4, requires_grad = TRUE)
  torch_save(x, f)
  y <- torch_load(f)
  expect_equal_to_tensor(x, y)
  expect_true(y$requires_grad)

  z <- torch_tensor(1:3)
  l <- list(torch_tensor(1), a = z, b = list(x = z, y = 4), c = "text", d = 1:3)
  torch_save(l, f)
  l2 <- torch_load(f)
  expect_equal(names(l2), c("", "a", "b", "c", "d"))
  expect_true(l2$a$dtype == torch_long())
  expect_equal(xptr_address(l2$a), xptr_address(l2$b$x))   # shared stays shared
  expect_equal(l2$b$y, 4)
  expect_equal(l2$c, "text")
  expect_equal(l2$d, 1:3)
  expect_equal(dim(torch_load(torch_serialize(torch_scalar_tensor(2)))), integer(0))
})

test_that("R objects (datasets, optimizer state) round-trip through torch_serialize", {
  ds <- dataset(
    initialize = function() self$x <- torch_randn(5, 2),
    .getitem = function(i) self$x[i, ],
    .length = function() 5
  )()
  raw <- torch_serialize(ds)
  expect_true(is.raw(raw))
  expect_false(is_rds(raw))
  ds2 <- torch_load(raw)
  expect_equal_to_tensor(ds2[2], ds[2])

  x <- torch_tensor(c(1, 2), requires_grad = TRUE)
  opt <- optim_adam(x, lr = 0.1)
  (x^2)$sum()$backward()
  opt$step()
  sd <- torch_load(torch_serialize(opt$state_dict()))
  expect_equal(sd$param_groups[[1]]$lr, 0.1)
  expect_equal_to_tensor(sd$state[[1]]$exp_avg, opt$state$get(x)$exp_avg)
})

test_that("PyTorch state dicts are read; other files are refused clearly", {
  sd <- load_state_dict(file.path("assets", "pytorch_state_dict.pth"))
  expect_equal(names(sd), c("weight", "bias", "steps"))
  expect_equal(as_array(sd$weight), matrix(0:5, 2, 3, byrow = TRUE))
  expect_true(sd$steps$dtype == torch_long())
  f <- tempfile()
  writeLines("not a torch file", f)
  expect_error(torch_load(f), "not a file saved by torch_save")
  expect_error(torch_load(tempfile()), "existing file")
  expect_error(torch_load(f, device = "cuda"), "cpu")
})
