# The ignite optimizers from R: R torch's OptimizerIgnite objects, their param
# groups and state dicts as R torch shows them (the update rules are checked
# against PyTorch in tests/test_optim_ignite.py).

ignite_steps <- function(opt, params, times = 2) {
  for (i in seq_len(times)) {
    opt$zero_grad()
    loss <- Reduce(`+`, lapply(params, function(p) (p^2)$sum()))
    loss$backward()
    opt$step()
  }
}

test_that("state dicts hold R torch's entries, numbered from 1", {
  w <- torch_randn(3, requires_grad = TRUE)
  z <- torch_randn(2, requires_grad = TRUE)
  opt <- optim_ignite_adamw(list(w, z), lr = 0.1)
  ignite_steps(opt, list(w))
  sd <- opt$state_dict()
  expect_equal(names(sd), c("param_groups", "state"))
  expect_equal(names(sd$state), "1")
  expect_equal(names(sd$state[[1]]), c("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"))
  expect_undefined_tensor(sd$state[[1]]$max_exp_avg_sq)
  expect_equal(as.numeric(sd$state[[1]]$step), 2)
  expect_equal(sd$param_groups[[1]]$params, 1:2)
  expect_true(inherits(opt, c("optim_ignite_adamw", "optim_ignite", "OptimizerIgnite")))
})

test_that("param groups can be read, changed and added; state dicts load", {
  n <- nn_linear(1, 1)
  o <- optim_ignite_sgd(n$parameters, lr = 0.1, momentum = 0.9)
  expect_equal(o$param_groups[[1]]$lr, 0.1)
  o$param_groups[[1]]$lr <- 0.01
  expect_equal(o$param_groups[[1]]$lr, 0.01)
  o$add_param_group(list(params = nn_linear(1, 1)$parameters, lr = 19))
  expect_equal(o$param_groups[[2]]$lr, 19)
  x <- torch_tensor(1, requires_grad = TRUE)
  a <- optim_ignite_rmsprop(x, momentum = 0.5, centered = TRUE)
  ignite_steps(a, list(x))
  b <- optim_ignite_rmsprop(x, momentum = 0.5, centered = TRUE)
  b$load_state_dict(a$state_dict())
  expect_equal(lapply(b$state_dict()$state[[1]], as_array),
               lapply(a$state_dict()$state[[1]], as_array))
  expect_error(optim_ignite_sgd(x), "required optimization parameter lr")
})

test_that("every ignite optimizer reduces a quadratic", {
  for (make in list(optim_ignite_sgd, optim_ignite_adam, optim_ignite_adamw,
                    optim_ignite_rmsprop, optim_ignite_adagrad)) {
    x <- torch_tensor(c(1, -2), requires_grad = TRUE)
    opt <- make(x, lr = 0.1)
    ignite_steps(opt, list(x), times = 20)
    expect_true(sum(as_array(x)^2) < 5)
  }
})

test_that("a state dict with undefined tensors saves and loads, undefined kept", {
  w <- torch_randn(3, requires_grad = TRUE)
  opt <- optim_ignite_adam(list(w), lr = 0.1)  # no amsgrad: max_exp_avg_sq undefined
  ignite_steps(opt, list(w))
  sd <- opt$state_dict()
  back <- torch_load(torch_serialize(sd))
  expect_undefined_tensor(back$state[[1]]$max_exp_avg_sq)
  expect_equal(as_array(back$state[[1]]$exp_avg), as_array(sd$state[[1]]$exp_avg))
  opt$load_state_dict(back)
  expect_undefined_tensor(opt$state_dict()$state[[1]]$max_exp_avg_sq)
  expect_equal(as.numeric(opt$state_dict()$state[[1]]$step), 2)
})
