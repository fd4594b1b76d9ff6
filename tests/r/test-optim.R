# Optimizers and schedulers from R: R torch's objects, stepping through the
# engine (the update rules themselves are checked against PyTorch in
# tests/test_optim.py).

quadratic_step <- function(opt, x, times = 1) {
  for (i in seq_len(times)) {
    opt$zero_grad()
    loss <- (x^2)$sum()
    loss$backward()
    opt$step()
  }
  invisible(x)
}

test_that("optim_sgd with momentum follows the update rule", {
  x <- torch_tensor(1, requires_grad = TRUE)
  opt <- optim_sgd(x, lr = 0.1, momentum = 0.9)
  quadratic_step(opt, x)          # grad 2: buf 2, x = 1 - 0.2
  expect_equal(x$item(), 0.8, tolerance = 1e-6)
  quadratic_step(opt, x)          # grad 1.6: buf 0.9 * 2 + 1.6 = 3.4
  expect_equal(x$item(), 0.8 - 0.34, tolerance = 1e-6)
  expect_equal(as_array(opt$state$get(x)$momentum_buffer), 3.4, tolerance = 1e-6)
})

test_that("optim_adam's first step moves each parameter by about lr", {
  x <- torch_tensor(c(1, -2, 3), requires_grad = TRUE)
  opt <- optim_adam(x, lr = 0.1)
  quadratic_step(opt, x)
  expect_equal(as_array(x), c(0.9, -1.9, 2.9), tolerance = 1e-6)
  st <- opt$state_dict()$state[["1"]]
  expect_equal(st$step, 1)
  expect_named(st, c("step", "exp_avg", "exp_avg_sq"))
})

test_that("every built-in optimizer decreases a quadratic", {
  makers <- list(
    function(p) optim_sgd(p, lr = 0.1), function(p) optim_adam(p, lr = 0.1),
    function(p) optim_adamw(p, lr = 0.1), function(p) optim_rmsprop(p, lr = 0.01),
    function(p) optim_adagrad(p, lr = 0.1), function(p) optim_adadelta(p, lr = 1),
    function(p) optim_asgd(p, lr = 0.1), function(p) optim_rprop(p, lr = 0.1)
  )
  for (make in makers) {
    x <- torch_tensor(c(1, -2), requires_grad = TRUE)
    quadratic_step(make(x), x, times = 20)
    expect_lt(sum(as_array(x)^2), 5)
  }
})

test_that("param groups and lr changed through param_groups", {
  a <- torch_tensor(1, requires_grad = TRUE)
  b <- torch_tensor(1, requires_grad = TRUE)
  opt <- optim_sgd(list(list(params = list(a)), list(params = list(b), lr = 0.5)), lr = 0.1)
  expect_equal(opt$param_groups[[2]]$lr, 0.5)
  opt$param_groups[[1]]$lr <- 0.25
  opt$zero_grad()
  (a * 2 + b * 2)$backward()
  opt$step()
  expect_equal(a$item(), 0.5, tolerance = 1e-6)
  expect_equal(b$item(), 0, tolerance = 1e-6)
})

test_that("a closure's loss is returned and zero_grad can set grads to undefined", {
  x <- torch_tensor(3, requires_grad = TRUE)
  opt <- optim_sgd(x, lr = 0.1)
  loss <- opt$step(function() {
    opt$zero_grad()
    l <- x^2
    l$backward()
    l
  })
  expect_equal(loss$item(), 9)
  expect_equal(x$item(), 2.4, tolerance = 1e-6)
  opt$zero_grad()
  expect_equal(x$grad$item(), 0)
  opt$zero_grad(set_to_none = TRUE)
  expect_true(is_undefined_tensor(x$grad))
})

test_that("zero_grad() detaches a gradient made with create_graph (Hessian-vector products)", {
  x <- torch_tensor(c(1, 2, 3), requires_grad = TRUE)
  opt <- optim_sgd(list(x), lr = 0.1)
  net <- nn_module(initialize = function() self$x <- nn_parameter(x))()
  for (zero in list(opt$zero_grad, net$zero_grad)) {
    for (i in 1:2) {
      zero()
      (x^3)$sum()$backward(create_graph = TRUE)
      hv <- autograd_grad(x$grad, x, grad_outputs = torch_ones(3))[[1]]
      expect_equal(as_array(hv), 6 * as_array(x), tolerance = 1e-6)
      with_no_grad(x$sub_(0.1 * x$grad))
    }
  }
  g <- x$grad
  opt$zero_grad(set_to_none = FALSE)
  expect_true(is.null(x$grad$grad_fn))
  expect_false(x$grad$requires_grad)
  expect_equal(as_array(g), c(0, 0, 0))
})

test_that("state_dict and load_state_dict let a copy continue identically", {
  x <- torch_tensor(c(1, 2), requires_grad = TRUE)
  opt <- optim_adam(x, lr = 0.1, amsgrad = TRUE)
  quadratic_step(opt, x, 3)
  y <- torch_tensor(as_array(x), requires_grad = TRUE)
  opt2 <- optim_adam(y, lr = 1)
  opt2$load_state_dict(opt$state_dict())
  expect_equal(opt2$param_groups[[1]]$lr, 0.1)
  quadratic_step(opt, x, 2)
  quadratic_step(opt2, y, 2)
  expect_equal(as_array(x), as_array(y))
})

test_that("custom optimizers defined in R with optimizer() and state()", {
  optim_sgd2 <- optimizer(
    "optim_sgd2",
    initialize = function(params, learning_rate) {
      super$initialize(params, list(learning_rate = learning_rate))
    },
    step = function() {
      with_no_grad({
        for (g in seq_along(self$param_groups)) {
          group <- self$param_groups[[g]]
          for (p in seq_along(group$params)) {
            param <- group$params[[p]]
            if (is.null(param$grad) || is_undefined_tensor(param$grad)) next
            n <- state(param)[["n"]]
            state(param) <- list(n = if (is.null(n)) 1 else n + 1)
            param$sub_(param$grad * group$learning_rate)
          }
        }
      })
    }
  )
  expect_equal(class(optim_sgd2), c("optim_sgd2", "torch_optimizer_generator"))
  x <- torch_tensor(1, requires_grad = TRUE)
  opt <- optim_sgd2(x, learning_rate = 0.1)
  expect_true(is_optimizer(opt))
  quadratic_step(opt, x, 2)
  expect_equal(x$item(), 0.64, tolerance = 1e-6)
  expect_equal(opt$state$get(x)$n, 2)
})

test_that("optim_lbfgs minimises a quadratic with and without line search", {
  for (ls in list(NULL, "strong_wolfe")) {
    x <- torch_tensor(c(3, -4), requires_grad = TRUE)
    opt <- optim_lbfgs(x, line_search_fn = ls)
    closure <- function() {
      opt$zero_grad()
      l <- ((x - 1)^2)$sum()
      l$backward()
      l
    }
    opt$step(closure)
    expect_equal(as_array(x), c(1, 1), tolerance = 1e-4)
    expect_gte(opt$state$get(x)$func_evals, 2)
  }
})

test_that("bad settings are refused with clear errors", {
  x <- torch_tensor(1, requires_grad = TRUE)
  expect_error(optim_sgd(x), "Need to specify a learning rate", class = "value_error")
  expect_error(optim_adam(x, lr = -1), "Invalid learning rate")
  # R torch's own texts (tests/test_optim_checks.py tries every declared check)
  expect_error(optim_adam(x, eps = -1 / 3), "^Invalid eps: -0.333333333333333$",
               class = "value_error")
  expect_error(optim_adamw(x, eps = -1), "^Invalid epsilon value: -1$")
  expect_error(optim_adamw(x, betas = c(0.9, 2)), "^Invalid betas\\[2\\] parameter value: 2$")
  expect_error(optim_rprop(x, etas = c(1.5, 2)), "Invalid eta values: 1.5, 2", fixed = TRUE)
  expect_silent(optim_adam(x, betas = c(1, 0.9)))  # (PyTorch refuses a beta of 1)
  expect_error(optim_sgd(x * 2, lr = 0.1), "non-leaf")
  expect_error(optim_sgd(list(1, 2), lr = 0.1), "Wrong parameters")
  expect_error(optim_lbfgs(x)$step(), "closure")
})

test_that("schedulers change the optimizer's lr as R torch's do", {
  x <- torch_tensor(1, requires_grad = TRUE)
  o <- optim_sgd(x, lr = 1)
  s <- lr_step(o, step_size = 2, gamma = 0.5)
  lrs <- vapply(1:5, function(i) { s$step(); o$param_groups[[1]]$lr }, numeric(1))
  expect_equal(lrs, c(1, 0.5, 0.5, 0.25, 0.25))

  o <- optim_adam(x, lr = 1)
  expect_message({
    s <- lr_one_cycle(o, max_lr = 1, steps_per_epoch = 2, epochs = 3, verbose = TRUE,
                      div_factor = 1)
    for (i in 1:6) s$step()
  })
  expect_equal(o$param_groups[[1]]$lr, 0.1335607, tolerance = 1e-6)  # as PyTorch gives
  expect_error(s$step(), "Tried to step 7 times")

  o <- optim_adam(x, lr = 1)
  s <- lr_reduce_on_plateau(o, factor = 0.1, patience = 1)
  for (i in 1:5) s$step(1)
  expect_equal(o$param_groups[[1]]$lr, 0.01)

  o <- optim_sgd(x, lr = 1)
  s <- lr_lambda(o, function(e) 1 / (e + 1))
  s$step()
  expect_equal(o$param_groups[[1]]$lr, 0.5)
  d <- s$state_dict()
  expect_equal(d$last_epoch, 1)
  expect_false("optimizer" %in% names(d))
})

test_that("built-in schedulers are Python's: fields, state dicts, ignite optimizers", {
  x <- torch_tensor(1, requires_grad = TRUE)
  o <- optim_adam(x, lr = 1)
  s <- lr_one_cycle(o, max_lr = 1, total_steps = 6)
  expect_s3_class(s, "LRScheduler")
  s$step()
  expect_equal(s$last_epoch, 1)
  expect_equal(s$base_lrs, 0.04)
  expect_equal(s$get_last_lr(), o$param_groups[[1]]$lr)
  expect_equal(o$param_groups[[1]]$betas[[2]], 0.999)  # only beta1 cycles
  expect_true(o$param_groups[[1]]$betas[[1]] < 0.95)
  d <- s$state_dict()
  s$step()
  s$load_state_dict(d)
  expect_equal(s$last_epoch, 1)
  s$last_epoch <- 3
  expect_equal(s$last_epoch, 3)

  o <- optim_ignite_sgd(x, lr = 1, momentum = 0.9)
  s <- lr_step(o, step_size = 1, gamma = 0.5)
  s$step()
  expect_equal(o$param_groups[[1]]$lr, 0.5)
  o$param_groups[[1]]$lr <- 4  # changed from R between steps: the scheduler sees it
  s$step()
  expect_equal(o$param_groups[[1]]$lr, 2)
  expect_error(lr_step(o, 1, verbose = TRUE), "unused argument")
  expect_error(lr_step(o), 'argument "step_size" is missing')
  expect_message(lr_cosine_annealing(o, T_max = 2, verbose = TRUE),
                 "^Adjusting learning rate of group 1 to 2.0000\n$")
})

test_that("custom schedulers with lr_scheduler()", {
  halving <- lr_scheduler(
    "halving",
    initialize = function(optimizer, last_epoch = -1) super$initialize(optimizer, last_epoch),
    get_lr = function() self$base_lrs / 2^self$last_epoch
  )
  x <- torch_tensor(1, requires_grad = TRUE)
  o <- optim_sgd(x, lr = 1)
  s <- halving(o)
  s$step()
  s$step()
  expect_equal(o$param_groups[[1]]$lr, 0.25)
})
