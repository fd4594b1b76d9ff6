# Seeds and generators as R torch exposes them. (What the random functions
# draw is compared with PyTorch, bit for bit, by tests/test_random_ops.py.)

same_values <- function(a, b) identical(as_array(a), as_array(b))

test_that("torch_generator() prints, and keeps its seed in integer64, as R torch's", {
  g <- torch_generator()
  expect_identical(printed(g), "torch_generator()\n")
  expect_identical(g$current_seed(), bit64::as.integer64("67280421310721"))
  g$set_current_seed(1234567L)
  expect_identical(g$current_seed(), bit64::as.integer64(1234567))
  g$set_current_seed(bit64::as.integer64("123456789101112"))
  expect_identical(g$current_seed(), bit64::as.integer64("123456789101112"))
  expect_error(g$set_current_seed(5), class = "type_error")
})

test_that("a generator given as generator = draws its own stream", {
  g <- torch_generator()
  g$set_current_seed(3L)
  torch_manual_seed(1)
  a <- torch_randn(4, generator = g)
  b <- torch_randn(4)
  g$set_current_seed(3L)
  expect_true(same_values(torch_randn(4, generator = g), a))
  torch_manual_seed(1)
  expect_true(same_values(torch_randn(4), b))
  g$set_current_seed(3L)
  expect_true(same_values(torch_empty(4)$normal_(generator = g), a))
})

test_that("torch_manual_seed reads the seed as R torch does (its text)", {
  torch_manual_seed(1)
  one <- torch_rand(3)
  torch_manual_seed(1e5)   # R writes "1e+05": R torch reads 1
  expect_true(same_values(torch_rand(3), one))
  torch_manual_seed(1L)
  expect_true(same_values(torch_rand(3), one))
  expect_invisible(torch_manual_seed(2))
})

test_that("torch_get_rng_state() is libtorch's 5056 bytes and restores the stream", {
  torch_manual_seed(4)
  state <- torch_get_rng_state()
  expect_equal(state$dtype, torch_uint8())
  expect_equal(state$shape, 5056)
  a <- torch_randn(30)
  torch_set_rng_state(state)
  expect_true(same_values(torch_randn(30), a))
})

test_that("local_torch_manual_seed() restores the state when its frame exits", {
  torch_manual_seed(9)
  state <- as_array(torch_get_rng_state())
  seeded <- function() {
    local_torch_manual_seed(5)
    torch_randn(3)
  }
  inside <- seeded()
  expect_identical(as_array(torch_get_rng_state()), state)
  torch_manual_seed(5)
  expect_true(same_values(torch_randn(3), inside))
})

test_that("with_torch_manual_seed() returns the code's value and takes no other argument", {
  torch_manual_seed(9)
  state <- as_array(torch_get_rng_state())
  x <- with_torch_manual_seed(torch_rand(2), seed = 5)
  expect_identical(as_array(torch_get_rng_state()), state)
  torch_manual_seed(5)
  expect_true(same_values(torch_rand(2), x))
  expect_error(with_torch_manual_seed(1, 2, seed = 5), "must be empty")
})

test_that("the old seed behaviour makes R torch's extra draw, the seed fills draw from", {
  withr_old <- options(torch.old_seed_behavior = TRUE)
  on.exit(options(withr_old))
  torch_manual_seed(2019)
  a <- torch_randn(1)
  w <- nn_linear(3, 2)$weight
  options(torch.old_seed_behavior = FALSE)
  torch_manual_seed(2019)
  seed <- torch_randint(1, 1e6, 1, dtype = torch_long())$item()
  expect_true(same_values(torch_randn(1), a))
  g <- torch_generator()
  g$set_current_seed(as.integer(seed))
  bound <- 1 / sqrt(3)  # nn_linear's kaiming_uniform_(a = sqrt(5))
  expect_true(same_values(torch_empty(2, 3)$uniform_(-bound, bound, generator = g), w))
})

test_that("torch_randint gives R torch's default dtype unless told", {
  expect_equal(torch_randint(0, 10, 3)$dtype, torch_float())
  expect_equal(torch_randint(0, 10, 3, dtype = torch_long())$dtype, torch_long())
})
