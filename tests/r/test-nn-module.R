# nn_module in R: R torch's semantics, on R6, with Python layers inside.

test_that("nn_module makes a callable module with registered parts", {
  net <- nn_module(
    "net",
    initialize = function(n_in, n_out) {
      self$fc <- nn_linear(n_in, n_out)
      self$scale <- nn_parameter(torch_ones(1))
      self$stat <- nn_buffer(torch_zeros(n_out))
      self$note <- "plain field"
    },
    forward = function(x) self$fc(x) * self$scale
  )
  expect_equal(class(net), c("net", "nn_module", "nn_module_generator"))
  m <- net(3, 2)
  expect_equal(class(m), c("net", "nn_module"))
  expect_equal(names(m$parameters), c("fc.weight", "fc.bias", "scale"))
  expect_equal(names(m$buffers), "stat")
  expect_equal(names(m$state_dict()), c("scale", "stat", "fc.weight", "fc.bias"))
  expect_equal(m$note, "plain field")
  expect_equal(m$fc$out_features, 2)
  expect_tensor_shape(m(torch_randn(4, 3)), c(4, 2))
  expect_length(m$modules, 2)
  expect_equal(names(m$children), "fc")
})

test_that("inherit, super$initialize and private/active work", {
  base <- nn_module("base", initialize = function(n) self$fc <- nn_linear(n, 1),
                    forward = function(x) self$fc(x))
  child <- nn_module("child", inherit = base,
    initialize = function(n) {
      super$initialize(n)
      private$k <- 2
    },
    forward = function(x) super$forward(x) * private$k + self$bonus,
    active = list(bonus = function() 10)
  )
  m <- child(3)
  expect_equal(class(m), c("child", "base", "nn_module"))
  x <- torch_randn(2, 3)
  expect_equal_to_tensor(m(x), m$fc(x) * 2 + 10)
  lin <- nn_module("mylin", inherit = nn_linear)
  expect_equal(class(lin(2, 3)), c("mylin", "nn_linear", "nn_module"))
})

test_that("train/eval reach Python layers and return the module", {
  m <- nn_sequential(nn_linear(4, 4), nn_dropout(0.5))
  expect_s3_class(m$eval(), "nn_module")
  expect_false(m$training)
  expect_false(m[[2]]$training)
  x <- torch_ones(10, 4)
  expect_equal_to_tensor(m(x), m(x))           # no dropout in eval
  m$train()
  y <- m[[2]](torch_ones(1000))
  expect_true(all(as_array(y) %in% c(0, 2)))
  expect_error(m$training <- "yes", "logical flag")
})

test_that("state_dict round trip, missing keys are value_errors", {
  a <- nn_linear(3, 2)
  b <- nn_linear(3, 2)
  b$load_state_dict(a$state_dict())
  expect_equal_to_tensor(b$weight, a$weight)
  expect_error(b$load_state_dict(list(weight = a$weight)), class = "value_error")
  expect_error(b$load_state_dict(list(weight = torch_zeros(3, 3), bias = a$bias)),
               "size mismatch for weight")
  expect_error(a(torch_randn(2, 4)), "last dim has 3 features")
  expect_true(a$state_dict()$weight$requires_grad)
})

test_that("$to(dtype) converts parameters, buffers and gradients in R and Python", {
  m <- nn_sequential(nn_linear(3, 2), nn_batch_norm1d(2))
  m(torch_randn(5, 3))$sum()$backward()
  m$to(dtype = torch_double())
  expect_true(m[[1]]$weight$dtype == torch_double())
  expect_true(m[[1]]$weight$grad$dtype == torch_double())
  expect_true(m[[2]]$running_mean$dtype == torch_double())
  expect_true(m(torch_randn(5, 3, dtype = torch_double()))$dtype == torch_double())
  expect_error(m$to(dtype = torch_long()), "floating point")
})

test_that("replacing a parameter of a built-in layer reaches its forward", {
  l <- nn_linear(2, 1, bias = FALSE)
  l$weight <- nn_parameter(torch_tensor(matrix(c(1, 2), nrow = 1)))
  expect_equal_to_r(l(torch_tensor(matrix(c(3, 4), nrow = 1))), matrix(11))
})

test_that("containers", {
  s <- nn_sequential(nn_linear(4, 3), nn_relu(), nn_linear(3, 1))
  expect_length(s, 3)
  expect_s3_class(s[[2]], "nn_relu")
  expect_s3_class(s[2:3], "nn_sequential")
  expect_length(nn_prune_head(s, 1), 2)
  expect_error(nn_sequential(nn_linear), "must be initialized")
  expect_error(nn_sequential(identity), "but got object of type")
  l <- nn_module_list(list(nn_linear(2, 2)))
  l$append(nn_relu())
  l$insert(1, nn_tanh())
  expect_length(l, 3)
  expect_s3_class(l[[1]], "nn_tanh")
  d <- nn_module_dict(list(a = nn_linear(1, 2), b = nn_linear(2, 1)))
  expect_tensor_shape(d$b(d$a(torch_randn(5, 1))), c(5, 1))
  expect_length(d$parameters, 4)
})

test_that("deep clones copy tensors once and keep sharing", {
  m <- nn_module(initialize = function() {
    self$a <- nn_linear(1, 1)
    self$b <- self$a
  })()
  c2 <- m$clone(deep = TRUE)
  expect_true(xptr_address(c2$a$weight) != xptr_address(m$a$weight))
  expect_true(xptr_address(c2$a$weight) == xptr_address(c2$b$weight))
  expect_equal_to_tensor(c2$a$weight, m$a$weight)
  expect_length(m$parameters, 2)   # the shared child counted once
})

test_that("printing matches R torch", {
  m <- nn_module(initialize = function() {
    self$linear <- nn_linear(10, 10)
    self$x <- nn_parameter(torch_randn(10, 10))
    self$k <- nn_buffer(torch_randn(5, 5))
  })()
  out <- withr::with_options(list(cli.width = 50), capture.output(print(m)))
  expect_equal(out, c(
    "An `nn_module` containing 210 parameters.", "",
    paste0("\u2500\u2500 Modules ", strrep("\u2500", 39)),
    "\u2022 linear: <nn_linear> #110 parameters", "",
    paste0("\u2500\u2500 Parameters ", strrep("\u2500", 36)),
    "\u2022 x: Float [1:10, 1:10]", "",
    paste0("\u2500\u2500 Buffers ", strrep("\u2500", 39)),
    "\u2022 k: Float [1:5, 1:5]"))
})

test_that("the R list of built-in layers is Python's", {
  layers <- unlist(torch:::.nn_py_layer_names())
  expect_gt(length(layers), 90)
  expect_setequal(ls(torch:::.nn_layer_classes), layers)
  for (name in layers) {
    gen <- getExportedValue("torch", name)
    expect_s3_class(gen, "nn_module_generator")
    expect_identical(class(gen)[1], name)
  }
})

test_that("a custom autograd_function inside a module's forward", {
  my_linear <- autograd_function(
    forward = function(ctx, x, w) {
      ctx$save_for_backward(x = x, w = w)
      x$mm(w$t())
    },
    backward = function(ctx, grad_output) {
      s <- ctx$saved_variables
      list(x = grad_output$mm(s$w), w = grad_output$t()$mm(s$x))
    }
  )
  net <- nn_module(
    initialize = function() self$w <- nn_parameter(torch_randn(2, 3)),
    forward = function(x) my_linear(x, self$w)
  )
  m <- net()
  x <- torch_randn(4, 3)
  m(x)$sum()$backward()
  expect_equal_to_tensor(m$w$grad, torch_ones(2, 4)$mm(x))
})

test_that("a module read back by readRDS() comes alive with load_state_dict()", {
  net <- nn_module(initialize = function() {
    self$fc <- nn_linear(3, 2)
    self$w <- nn_parameter(torch_ones(2))
  }, forward = function(x) self$fc(x) * self$w)
  m <- net()
  path <- tempfile(fileext = ".rds")
  saveRDS(m, path)
  m2 <- readRDS(path)
  expect_error(m2$fc$weight$abs(), "no longer exists")  # R restores external pointers empty
  state <- m$state_dict()
  m2$load_state_dict(state)
  expect_equal_to_tensor(m2(torch_ones(1, 3)), m(torch_ones(1, 3)))
})

# One module system: every module's parameters, buffers and children live in
# its Python module, which R reads and writes.

inner_net <- nn_module("inner_net",
  initialize = function(k) {
    self$w <- nn_parameter(torch_ones(2))
    self$k <- k
  },
  forward = function(x) x * self$w * self$k
)
outer_net <- nn_module("outer_net",
  initialize = function() {
    self$a <- inner_net(2)
    self$lin <- nn_linear(2, 2)
    self$seq <- nn_sequential(inner_net(3), nn_relu())
  },
  forward = function(x) self$seq(self$lin(self$a(x)))
)

test_that("children are the same object at every lookup, shared ones too", {
  m <- outer_net()
  expect_identical(m$a, m$a)
  m$b <- m$a
  expect_identical(m$b, m$a)
  expect_identical(attr(m$children$a, "module"), attr(m$a, "module"))
  expect_equal(names(m$parameters), c("a.w", "lin.weight", "lin.bias", "seq.0.w"))
  mha <- nn_multihead_attention(4, 2)   # a built-in layer's own Python child
  expect_s3_class(mha$out_proj, "nn_linear")
  expect_identical(mha$out_proj$weight$shape, c(4L, 4L))
})

test_that("torch_save() keeps R-defined children with their R fields and forward", {
  m <- outer_net()
  x <- torch_ones(1, 2)
  path <- tempfile(fileext = ".pt")
  torch_save(m, path)
  m2 <- torch_load(path)
  invisible(gc())
  expect_equal_to_tensor(m2(x), m(x))
  expect_equal(m2$a$k, 2)
  expect_equal(m2$seq[[1]]$k, 3)
  expect_s3_class(m2$seq[[1]], "inner_net")
  expect_true(xptr_address(m2$a$w) != xptr_address(m$a$w))
})

test_that("deep clones copy R-defined children with their R fields", {
  m <- outer_net()
  c2 <- m$clone(deep = TRUE)
  c2$a$k <- 10
  expect_equal(m$a$k, 2)
  expect_true(xptr_address(c2$seq[[1]]$w) != xptr_address(m$seq[[1]]$w))
  with_no_grad(c2$a$w$mul_(2))
  expect_equal_to_r(m$a$w, c(1, 1))
  expect_s3_class(c2$seq[[1]], "inner_net")
})

test_that("modules dropped in R are freed in Python", {
  x <- torch_ones(1, 2)
  # each level of a module tree takes a round of each language's collector
  # (R's frees the Python objects it held at its next call into Python)
  gc_rounds <- function() {
    for (i in 1:6) {
      invisible(gc())
      rtorch_live_objects("RModule")
    }
  }
  gc_rounds()
  r_modules <- rtorch_live_objects("RModule")
  layers <- rtorch_live_objects("nn_linear")
  for (i in 1:30) {
    m <- outer_net()
    m(x)$sum()$backward()
    m2 <- m$clone(deep = TRUE)
  }
  rm(m, m2)
  gc_rounds()
  expect_lt(rtorch_live_objects("RModule") - r_modules, 5)
  expect_lt(rtorch_live_objects("nn_linear") - layers, 3)
})
