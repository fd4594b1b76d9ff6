# Distributions from R: R torch's classes and printing, R numbers as values,
# categories 1-based, gradients through log_prob (the distributions article).

test_that("distributions print, sample and score as in R torch's article", {
  n <- distr_normal(loc = 0, scale = 1)
  expect_equal(printed(n), "torch_Normal ()\n")
  expect_equal(class(n), c("torch_Normal", "torch_ExponentialFamily", "torch_Distribution",
                           "R6"))
  expect_tensor_shape(n$sample(), 1)
  expect_tensor_shape(n$sample(3), c(3, 1))
  expect_equal_to_r(n$log_prob(0), log(dnorm(0)))
  expect_equal_to_r(n$log_prob(c(0, 2, 4)), log(dnorm(c(0, 2, 4))))
  expect_equal(n$batch_shape, 1L)
  b <- distr_bernoulli(probs = torch_tensor(c(0.25, 0.5, 0.75)))
  expect_tensor_shape(b$sample(6), c(6, 3))
  expect_equal_to_r(b$mean, c(0.25, 0.5, 0.75))
})

test_that("categorical values are 1-based in R", {
  m <- distr_categorical(torch_tensor(c(0.1, 0.2, 0.7)))
  s <- m$sample(200)
  expect_true(all(as_array(s) %in% 1:3))
  expect_equal(m$sample()$dtype, torch_long())
  expect_equal_to_r(m$log_prob(torch_tensor(c(1, 3))), log(c(0.1, 0.7)))
})

test_that("the other distributions and a Gaussian linear model fit by gradient", {
  expect_tensor_shape(distr_gamma(torch_tensor(1), torch_tensor(1))$sample(), 1)
  expect_equal_to_r(distr_chi2(torch_tensor(3))$mean, 3)
  expect_equal_to_r(distr_poisson(torch_tensor(4))$log_prob(torch_tensor(2)), dpois(2, 4, log = TRUE))
  mvn <- distr_multivariate_normal(torch_zeros(2), torch_eye(2))
  expect_tensor_shape(mvn$sample(), 2)
  gmm <- distr_mixture_same_family(distr_categorical(torch_ones(5)),
                                   distr_normal(torch_randn(5), torch_rand(5) + 0.5))
  expect_tensor_shape(gmm$log_prob(torch_zeros(3)), 3)
  x <- torch_randn(100, 1)
  y <- 2 * x + 1 + torch_randn(100, 1) * 0.1
  lin <- nn_linear(1, 1)
  opt <- optim_sgd(lin$parameters, lr = 0.1)
  for (i in 1:200) {
    opt$zero_grad()
    loss <- -distr_normal(lin(x), 1)$log_prob(y)$mean()
    loss$backward()
    opt$step()
  }
  expect_equal(as_array(lin$weight)[1, 1], 2, tolerance = 0.1)
  expect_error(distr_bernoulli(0.5, 0.1), "Either `probs` or `logits`")
})
