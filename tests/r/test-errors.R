# The error catalogue (docs/errors.md) as an R torch user meets it: each
# mistake ends in an R error whose message says what was wrong, and afterwards
# the session works, grad mode is on, anomaly mode is off and the gradient
# accumulated before the error is unchanged.

# A parameter `w` holding a gradient accumulated before the error.
err_state <- function() {
  w <- torch_tensor(c(1, 2, 3), requires_grad = TRUE)
  (w * w)$sum()$backward()                      # w$grad = 2 * w
  list(w = w, before = as_array(w$grad))
}

# The state after an error: grad mode on, `w$grad` as before, a following
# computation (built-in ops and a custom function) works and accumulates.
expect_intact <- function(s) {
  expect_true(autograd_is_enabled())
  expect_equal(as_array(s$w$grad), s$before)
  (s$w * 3)$sum()$backward()
  expect_equal(as_array(s$w$grad), s$before + 3)
  sq <- autograd_function(
    forward = function(ctx, a) {
      ctx$save_for_backward(a = a)
      a * a
    },
    backward = function(ctx, g) list(a = 2 * ctx$saved_variables$a * g)
  )
  x <- torch_tensor(c(0.5, -1), requires_grad = TRUE)
  (x$exp() + sq(x))$sum()$backward()
  expect_equal(as_array(x$grad), exp(c(0.5, -1)) + 2 * c(0.5, -1), tolerance = 1e-6)
  # anomaly mode is off: a NaN gradient flows silently, without an error
  a <- torch_tensor(c(0, 1), requires_grad = TRUE)
  (a$sqrt() * torch_tensor(c(0, 1)))$sum()$backward()
  expect_true(is.nan(as_array(a$grad)[1]))
}

# -- Making tensors -----------------------------------------------------------

test_that("E01: non-numeric data to torch_tensor", {
  s <- err_state()
  # character data
  expect_error(torch_tensor("abc"), "torch_tensor\\(\\) can't make a tensor from (a )?character")
  expect_error(torch_tensor(c("a", "b")), "can't make a tensor from (a )?character")
  expect_error(torch_tensor(list(1, "a")),
               "can't make a tensor from a character \\(element 2 of the list\\)")
  # an R list of functions: the R type and the 1-based position are named
  expect_error(torch_tensor(list(function(x) x)),
               "can't make a tensor from a function \\(element 1 of the list\\)")
  expect_error(torch_tensor(list(1, function(x) x)), "a function \\(element 2 of the list\\)")
  expect_intact(s)
})

test_that("E02: ragged nested lists", {
  s <- err_state()
  msg <- "elements must be numeric vectors of the same length, got lengths 2, 1"
  expect_error(torch_tensor(list(list(1, 2), list(3))), msg)
  expect_error(torch_tensor(list(c(1, 2), 3)), msg)
  expect_intact(s)
})

test_that("E03: requires_grad on integer or logical tensors", {
  s <- err_state()
  msg <- "only Tensors of floating point dtype can require gradients \\(got torch_Long\\)"
  expect_error(torch_tensor(1:3, requires_grad = TRUE), msg)
  expect_error(torch_zeros(2, dtype = torch_long(), requires_grad = TRUE), msg)
  expect_error(torch_tensor(c(TRUE, FALSE), requires_grad = TRUE), "got torch_Bool")
  expect_error(torch_tensor(1L)$requires_grad_(TRUE), "floating point")
  expect_intact(s)
})

# -- Shapes, dims and indices ------------------------------------------------

test_that("E04-E09: shape mismatches", {
  s <- err_state()
  a <- torch_randn(2, 3)
  b <- torch_randn(4, 5)
  expect_error(a$mm(b), "mat1 and mat2 shapes cannot be multiplied \\(2x3 and 4x5\\)")
  expect_error(torch_mm(a, b), "cannot be multiplied")
  expect_error(a$matmul(b), "matmul: shapes \\[2, 3\\] and \\[4, 5\\] don't match")
  expect_error(a + b, "add: the shapes \\[2, 3\\] and \\[4, 5\\] can't be broadcast")
  expect_error(a * torch_randn(4), "can't be broadcast")
  expect_error(torch_cat(list(a, b)), paste("Sizes of tensors must match except in dimension 1.",
               "Expected size 3 but got size 5 for tensor number 2 in the list."), fixed = TRUE)
  expect_error(a$reshape(c(4, 2)), "shape '\\[4, 2\\]' is invalid for input of size 6")
  expect_error(a$view(c(4, 2)), "is invalid for input of size 6")
  expect_error(a$expand(c(4, 5)), "expand: the expanded size \\[4, 5\\] doesn't fit")
  expect_error(a$expand(3), "number of sizes provided \\(1\\) must be greater or equal")
  # a shape error in a graph of tensors that require grad leaves w alone
  expect_error((s$w * 2)$view(c(2, 2)), "invalid for input of size 3")
  expect_intact(s)
})

test_that("E10: dims out of range, and dim = 0", {
  s <- err_state()
  x <- torch_randn(2, 3)
  expect_error(x$sum(dim = 0), "Indexing starts at 1 but found a 0.", fixed = TRUE)
  expect_error(x$softmax(dim = 0), "Indexing starts at 1 but found a 0.", fixed = TRUE)
  expect_error(x$unsqueeze(0), "Indexing starts at 1")
  expect_error(x$size(0), "Indexing starts at 1 and got a 0.", fixed = TRUE)
  expect_error(x$movedim(0, 1), "Dimension is 1-based, but found 0.", fixed = TRUE,
               class = "value_error")
  expect_error(s$w$sum(dim = 0), "Indexing starts at 1")
  # the range and the dim are R's: 1..2 and -2..-1 for a 2-d tensor
  in_range <- function(lo, hi, got) {
    sprintf("Dimension out of range \\(expected to be in range of \\[%d, %d\\], but got %d\\)", lo, hi, got)
  }
  expect_error(x$sum(dim = 3), in_range(-2, 2, 3))
  expect_error(x$softmax(dim = 5), in_range(-2, 2, 5))
  expect_error(x$transpose(1, 3), in_range(-2, 2, 3))
  expect_error(x$unsqueeze(5), in_range(-3, 3, 5))
  expect_error(x$size(3), in_range(-2, 2, 3))
  expect_error(x$sum(dim = -3), "Dimension out of range")
  expect_error(torch_cat(list(x, x), dim = 3), in_range(-2, 2, 3))
  # negative dims count from the end, as in R torch
  expect_equal(x$sum(dim = -1)$shape, 2)
  expect_intact(s)
})

test_that("E11: indices out of range (R's 1-based indices)", {
  s <- err_state()
  x <- torch_randn(2, 3)
  expect_error(x[0, 1], "Indexing starts at 1 but found a 0.", fixed = TRUE)
  expect_error(x[5, ], "index 5 is out of bounds for dimension 1 with size 2")
  expect_error(x[1, 4], "index 4 is out of bounds for dimension 2 with size 3")
  expect_error(x[1, 1, 1], "too many indices")
  expect_error(x[torch_tensor(c(1L, 7L)), ], "index 7 is out of bounds")
  expect_error(x[torch_tensor(c(TRUE, FALSE, TRUE)), ], "shape of the mask \\[3\\] at dimension 1")
  expect_error(x$select(1, 9), "index 9 out of range for tensor of size \\[2, 3\\] at dimension 1")
  expect_error(x[torch_tensor(1.5), ], "must be long, int or bool tensors, got torch_Float")
  expect_error(x["a"], "can't index a tensor")
  expect_error(x[5, 1] <- 1, "index 5 is out of bounds")
  expect_error(s$w[4], "index 4 is out of bounds")
  expect_error(s$w[4] <- 0, "out of bounds|in-place")
  expect_equal(as_array(x[-1, ]), as_array(x[2, ]))
  expect_intact(s)
})

# -- Backward -------------------------------------------------------------------

test_that("E12: backward on a tensor that doesn't require grad", {
  s <- err_state()
  expect_error(torch_ones(2)$sum()$backward(), "does not require grad and does not have a grad_fn")
  expect_error(with_no_grad((s$w * 2)$sum())$backward(), "does not require grad")
  expect_intact(s)
})

test_that("E13: implicit gradient of a non-scalar; a gradient of the wrong shape", {
  s <- err_state()
  expect_error((s$w * 2)$backward(),
               "grad can be implicitly created only for scalar outputs: this tensor has shape \\[3\\]")
  expect_error((s$w * s$w)$backward(torch_ones(2)),
               "Mismatch in shape: grad_output\\[0\\] has a shape of \\[2\\]")
  expect_intact(s)
})

test_that("E14: backward twice without retain_graph", {
  s <- err_state()
  y <- (s$w * s$w)$sum()
  y$backward()
  g <- as_array(s$w$grad)
  expect_error(y$backward(), "backward through the graph a second time.*retain_graph")
  expect_equal(as_array(s$w$grad), g)
  s$w$grad$zero_()$add_(torch_tensor(s$before))
  # retain_graph = TRUE allows it
  z <- torch_tensor(2, requires_grad = TRUE)
  q <- (z * z)$sum()
  q$backward(retain_graph = TRUE)
  q$backward()
  expect_equal(as_array(z$grad), 8)
  expect_intact(s)
})

test_that("E15: in-place on a leaf that requires grad", {
  s <- err_state()
  msg <- "a leaf Variable that requires grad is being used in an in-place operation"
  expect_error(s$w$add_(1), msg)
  expect_error(s$w$mul_(2), msg)
  expect_error(s$w[1] <- 5, msg)
  expect_equal(as_array(s$w), c(1, 2, 3))
  expect_intact(s)
})

test_that("E16: in-place change of a tensor saved for backward", {
  s <- err_state()
  z <- s$w * 1
  q <- z$sin()
  z$add_(1)
  expect_error(q$sum()$backward(),
               "modified by an inplace operation.*is at version 1; expected version 0")
  expect_intact(s)
})

test_that("E17: autograd_grad for an input that isn't used", {
  s <- err_state()
  v <- torch_ones(3, requires_grad = TRUE)
  expect_error(autograd_grad(list((s$w * 2)$sum()), list(v)),
               "appears to not have been used in the graph.*allow_unused")
  expect_intact(s)
})

# -- Custom functions -----------------------------------------------------------

test_that("E18: backward returns a gradient under an unknown name", {
  s <- err_state()
  my_mul <- autograd_function(
    forward = function(ctx, x, y) x * y,
    backward = function(ctx, g) list(x = g, z = g)
  )
  expect_error(my_mul(s$w, torch_ones(3, requires_grad = TRUE))$sum()$backward(),
               "my_mul: backward returned a gradient named 'z', which is not an argument of forward \\(its arguments are: x, y\\)")
  expect_intact(s)
})

test_that("E19: backward returns a gradient of the wrong shape", {
  s <- err_state()
  twice <- autograd_function(
    forward = function(ctx, x) x * 2,
    backward = function(ctx, g) list(x = torch_ones(2))
  )
  expect_error(twice(s$w)$sum()$backward(),
               "twice: backward returned a gradient of shape \\[2\\] for 'x', whose shape is \\[3\\]")
  expect_intact(s)
})

test_that("E20: backward returns an integer gradient", {
  s <- err_state()
  twice <- autograd_function(
    forward = function(ctx, x) x * 2,
    backward = function(ctx, g) list(x = torch_ones(3, dtype = torch_long()))
  )
  expect_error(twice(s$w)$sum()$backward(),
               "twice: backward returned a gradient of dtype torch_Long for 'x', which is torch_Float")
  expect_intact(s)
})

test_that("E21: backward returns a non-tensor, or an unnamed list", {
  s <- err_state()
  twice <- autograd_function(
    forward = function(ctx, x) x * 2,
    backward = function(ctx, g) list(x = 3)
  )
  expect_error(twice(s$w)$sum()$backward(),
               "twice: backward returned a .* as the gradient for 'x'; gradients must be tensors")
  twice <- autograd_function(
    forward = function(ctx, x) x * 2,
    backward = function(ctx, g) list(g)
  )
  expect_error(twice(s$w)$sum()$backward(),
               "twice: backward must return a named list of gradients keyed by forward's argument names \\(x\\)")
  expect_intact(s)
})

test_that("E23: forward returns something that isn't a tensor", {
  s <- err_state()
  f <- autograd_function(forward = function(ctx, x) NULL, backward = function(ctx, g) list(x = g))
  expect_error(f(s$w), "f: forward must return a tensor or a list of tensors, got")
  f <- autograd_function(forward = function(ctx, x) "a", backward = function(ctx, g) list(x = g))
  expect_error(f(s$w), "forward must return a tensor")
  f <- autograd_function(forward = function(ctx, x) list(x * 1, 3L),
                         backward = function(ctx, g) list(x = g))
  expect_error(f(s$w), "but the list it returned holds")
  expect_intact(s)
})

test_that("E24: mark_dirty on something that is not an input", {
  s <- err_state()
  f <- autograd_function(
    forward = function(ctx, x) {
      y <- x * 2
      ctx$mark_dirty(y)
      y
    },
    backward = function(ctx, g) list(x = g)
  )
  expect_error(f(s$w), "f: mark_dirty\\(\\) was given a tensor that is not an input of forward")
  f <- autograd_function(
    forward = function(ctx, x) {
      ctx$mark_dirty(3)
      x * 1
    },
    backward = function(ctx, g) list(x = g)
  )
  expect_error(f(s$w), "mark_dirty\\(\\) takes tensors")
  expect_intact(s)
})

test_that("E25: stop() inside forward: message kept, catchable, nothing attached", {
  s <- err_state()
  f <- autograd_function(
    forward = function(ctx, x) {
      y <- x * 2
      stop("forward exploded on purpose")
    },
    backward = function(ctx, g) list(x = g)
  )
  expect_error(f(s$w), "forward exploded on purpose")
  msg <- tryCatch(f(s$w), error = function(e) conditionMessage(e))
  expect_match(msg, "forward exploded on purpose")
  # the condition's class survives the crossing
  g <- autograd_function(
    forward = function(ctx, x) {
      stop(structure(class = c("my_condition", "error", "condition"),
                     list(message = "typed failure", call = NULL)))
    },
    backward = function(ctx, g) list(x = g)
  )
  expect_equal(tryCatch(g(s$w), my_condition = function(e) conditionMessage(e)), "typed failure")
  expect_intact(s)
})

test_that("E26: stop() inside backward and inside a hook", {
  s <- err_state()
  f <- autograd_function(
    forward = function(ctx, x) x * 2,
    backward = function(ctx, g) stop("backward exploded on purpose")
  )
  expect_error(f(s$w)$sum()$backward(), "backward exploded on purpose")
  msg <- tryCatch(f(s$w)$sum()$backward(), error = function(e) conditionMessage(e))
  expect_match(msg, "backward exploded on purpose")
  # an error inside with_no_grad() inside backward restores the grad mode
  f <- autograd_function(
    forward = function(ctx, x) x * 2,
    backward = function(ctx, g) {
      with_no_grad(stop("deep in backward"))
      list(x = g)
    }
  )
  expect_error(f(s$w)$sum()$backward(create_graph = TRUE), "deep in backward")
  expect_true(autograd_is_enabled())

  y <- s$w * 2
  h <- y$register_hook(function(g) stop("hook exploded on purpose"))
  out <- y$sum()
  expect_error(out$backward(retain_graph = TRUE), "hook exploded on purpose")
  expect_equal(as_array(s$w$grad), s$before)
  # once the failing hook is removed, the retained graph can be backwarded
  h$remove()
  out$backward()
  expect_equal(as_array(s$w$grad), s$before + 2)
  s$w$grad$sub_(2)
  expect_intact(s)
})

test_that("E28: hooks returning a wrong shape or dtype; R values other than tensors are ignored", {
  s <- err_state()
  y <- s$w * 2
  y$register_hook(function(g) torch_ones(5))
  expect_error(y$sum()$backward(),
               "hook returned a gradient of shape \\[5\\] but the gradient it replaces has shape \\[3\\]")
  y <- s$w * 2
  y$register_hook(function(g) torch_ones(3, dtype = torch_long()))
  expect_error(y$sum()$backward(), "hook returned a gradient of dtype torch_Long")
  expect_equal(as_array(s$w$grad), s$before)
  # as in R torch, a hook whose value is not a tensor (print(), cat()...) leaves the gradient
  y <- s$w * 2
  y$register_hook(function(g) "just looking")
  y$sum()$backward()
  expect_equal(as_array(s$w$grad), s$before + 2)
  s$w$grad$sub_(2)
  expect_intact(s)
})

test_that("E29: NaN in backward under with_detect_anomaly", {
  s <- err_state()
  a <- torch_tensor(c(0, 1), requires_grad = TRUE)
  cc <- torch_tensor(c(0, 1))
  expect_warning(
    expect_error(with_detect_anomaly((a$sqrt() * cc)$sum()$backward()),
                 "Function 'SqrtBackward0' returned nan values in its 0th output"),
    "should be enabled only for debugging")
  expect_true(is_undefined_tensor(a$grad))
  # expect_intact() checks that anomaly mode is off again
  expect_intact(s)
})

test_that("E30: a failing backward leaves every leaf's grad as it was", {
  s <- err_state()
  v <- torch_tensor(c(1, 1, 1), requires_grad = TRUE)
  (v * 5)$sum()$backward()
  bad <- autograd_function(
    forward = function(ctx, x) x * 1,
    backward = function(ctx, g) stop("late failure")
  )
  # v's branch is reached before the failing node
  expect_error((v * 3 + bad(s$w * 2))$sum()$backward(), "late failure")
  expect_equal(as_array(v$grad), c(5, 5, 5))
  expect_intact(s)
})

test_that("E31-E33: other misuse", {
  s <- err_state()
  xl <- torch_tensor(c(1L, 2L))
  expect_error(xl$add_(torch_tensor(c(0.5, 0.5))), "result type Float can't be cast to the desired output type Long")
  expect_equal(as_array(xl), c(1, 2))
  expect_error(nn_dropout(0.5)(1:3), "dropout: result type Float can't be cast to the desired output type Long")
  expect_error(s$w$grad <- torch_ones(5), "assigned grad has data of a different size")
  expect_error(s$w$grad <- 3, "assigned grad expected to be a Tensor")
  expect_error(torch_ones(3)$retain_grad(), "can't retain_grad on Tensor that has requires_grad=False")
  expect_error(torch_ones(3)$register_hook(function(g) g), "cannot register a hook on a tensor that doesn't require gradient")
  expect_error(s$w$item(), "a Tensor with 3 elements cannot be converted to Scalar")
  expect_error((s$w * 2)$requires_grad_(FALSE), "you can only change requires_grad flags of leaf variables")
  expect_error(torch_ones(3, device = "cuda"), "PyTorch is not linked with support for cuda devices")
  expect_error(torch_ones(3, dtype = torch_long())$mean(), "could not infer output dtype")
  expect_error(torch_ones(3, dtype = torch_long())$softmax(1), "expected a floating point tensor")
  expect_error(torch_ones(2, 2)$mm(torch_ones(2, 2, dtype = torch_long())), "same dtype")
  # (its advice in words, not in Python's syntax: an R integer matrix into a linear layer)
  expect_error(nn_linear(3, 2)(matrix(1:6, 2)),
               "but got Long and Float; convert one to the other's dtype first", fixed = TRUE)
  expect_error(torch_zeros(-1), "negative dimension -1")
  expect_error(torch_ones(3)$masked_fill(torch_ones(3), 0), "the mask must be a bool tensor")
  expect_error(torch_where(torch_ones(3), torch_ones(3), torch_ones(3)), "condition to be a boolean tensor")
  expect_error(torch_ones(2, 3)$gather(1, torch_ones(2, 3)), "gather\\(\\): Expected dtype int64 for index")
  expect_intact(s)
})

test_that("E34: calling a custom function with the wrong arguments is R's own error", {
  s <- err_state()
  f <- autograd_function(forward = function(ctx, x, y) x * y,
                         backward = function(ctx, g) list(x = g, y = g))
  expect_error(f(s$w), "argument \"y\" is missing")
  expect_error(f(s$w, s$w, s$w), "unused argument")
  expect_intact(s)
})

# -- Grad mode after errors ------------------------------------------------------

test_that("an error inside with_no_grad() restores grad mode", {
  s <- err_state()
  expect_error(with_no_grad({
    y <- s$w * 2
    stop("inside no_grad")
  }), "inside no_grad")
  expect_true(autograd_is_enabled())
  expect_error(with_no_grad(with_enable_grad(stop("nested"))), "nested")
  expect_true(autograd_is_enabled())
  # an engine error inside with_no_grad()
  expect_error(with_no_grad(torch_ones(2)$sum(dim = 0)), "Indexing starts at 1")
  expect_true(autograd_is_enabled())
  expect_intact(s)
})

test_that("an error in a function that called local_no_grad() restores grad mode", {
  s <- err_state()
  g <- function() {
    local_no_grad()
    expect_false(autograd_is_enabled())
    stop("failed under local_no_grad")
  }
  expect_error(g(), "failed under local_no_grad")
  expect_true(autograd_is_enabled())
  expect_intact(s)
})

test_that("an error in with_detect_anomaly() turns anomaly mode off", {
  s <- err_state()
  expect_error(suppressWarnings(with_detect_anomaly(stop("in anomaly block"))), "in anomaly block")
  expect_intact(s)  # checks that a NaN backward no longer errors
})

test_that("E36: an op on an undefined tensor", {
  s <- err_state()
  x <- torch_tensor(c(1, 2), requires_grad = TRUE)
  expect_true(is_undefined_tensor(x$grad))
  expect_error(x$grad$zero_(), "this tensor is undefined .* check is_undefined_tensor\\(\\) first")
  expect_intact(s)
})

test_that("E37: a tensor method that does not exist", {
  s <- err_state()
  expect_error(s$w$foo(), "`foo` is not a method or field of a torch_tensor")
  expect_error(torch_ones(2)$no_such_method(1, 2), "`no_such_method` is not a method")
  expect_intact(s)
})

test_that("E38: reading $grad of a non-leaf tensor warns", {
  s <- err_state()
  y <- s$w * 2
  expect_warning(g <- y$grad, "not a leaf Tensor.*retain_grad")
  expect_true(is_undefined_tensor(g))
  y$retain_grad()
  expect_silent(y$grad)
  expect_intact(s)
})

test_that("E40-E42: upsample arguments and _out forms", {
  s <- err_state()
  expect_error(torch_upsample_nearest2d(torch_ones(1, 1, 2), output_size = c(2, 2)),
               "expected a 4-D input")
  expect_error(nnf_interpolate(torch_ones(1, 1, 2, 2), size = 3, scale_factor = 2),
               "only one of size or scale_factor", class = "value_error")
  expect_error(nnf_interpolate(torch_ones(1, 1, 2, 2), size = 3, mode = "trilinear"),
               "trilinear mode needs a 5-D input")
  expect_error(torch_exp_out(torch_zeros(3), s$w), "don't support automatic differentiation")
  expect_error(torch_abs_out(torch_zeros(3, dtype = torch_long()), torch_ones(3)),
               "result type Float can't be cast to the desired output type Long")
  expect_intact(s)
})

test_that("E43-E45: class indices, stft arguments, kernels without a derivative", {
  s <- err_state()
  x <- torch_randn(3, 2)
  expect_error(torch_multi_margin_loss(x, torch_tensor(1:3)), "got class 3 for an input of 2")
  expect_error(nnf_multi_margin_loss(x, torch_tensor(1:3)), "got class 3 for an input of 2")
  expect_error(torch_one_hot(torch_tensor(c(1L, 4L)), 3), "num_classes \\(3 classes\\), got class 4")
  expect_error(torch_one_hot(torch_tensor(0L)), "Indexing starts at 1")
  expect_error(nnf_cross_entropy(x, torch_tensor(c(1L, 3L, 2L))), "Target 3 is out of bounds.",
               fixed = TRUE)
  expect_error(nnf_nll_loss(x, torch_tensor(c(-3L, 1L, 2L))), "Target -2 is out of bounds.",
               fixed = TRUE)  # (a negative target is as given, and the message shifted: R torch's)
  expect_error(nn_nll_loss()(x, torch_tensor(c(0L, 1L, 2L))), "Indexing starts at 1 but found a 0.",
               fixed = TRUE)
  expect_error(nn_embedding(3, 2)(torch_tensor(c(0L, 1L))), "Indexing starts at 1 but found a 0.",
               fixed = TRUE)
  expect_error(nn_embedding(3, 2)(torch_tensor(c(1L, 4L))), "index out of range in self",
               fixed = TRUE)
  expect_error(torch_stft(torch_ones(100), 16), "return_complex parameter be given")
  y <- torch_randn(2, 2, requires_grad = TRUE)
  expect_error(torch__cdist_backward(y, y, y, 1, y)$sum()$backward(),
               "derivative for '_cdist_backward' is not implemented")
  expect_intact(s)
})

test_that("E46: a dim given by name that the tensor doesn't have", {
  s <- err_state()
  x <- torch_zeros(2, 3, names = c("A", "B"))
  expect_error(x$sum(dim = "Z"),
               "dim = 'Z': no dim of this tensor is called 'Z'; its names are Tensor[A, B]",
               fixed = TRUE, class = "runtime_error")
  expect_error(torch_zeros(2, 3)$softmax(dim = "A"), "this tensor has no dim names")
  expect_intact(s)
})

test_that("E47: names that don't fit the tensor", {
  s <- err_state()
  expect_error(torch_zeros(2, 3, names = "A"), "1 names ('A') given for a tensor with 2 dims",
               fixed = TRUE, class = "runtime_error")
  expect_error(torch_zeros(2, 3, names = c("A", "A")), "'A' is given to two dims")
  expect_error(torch_zeros(2, 3)$rename(W = "a"), "the tensor has no names",
               class = "runtime_error")
  x <- torch_zeros(2, 3, 4, names = c("A", "B", "C"))
  expect_error(x + torch_ones(4, names = "Z"), "'C' meets dim 'Z'")
  expect_error(torch_norm(x, dim = "A"), "norm is not yet supported with named tensors",
               class = "runtime_error")
  expect_intact(s)
})

test_that("E48-E49: sparse tensors: ops without a sparse form, parts that don't fit", {
  s <- err_state()
  sp <- torch_sparse_coo_tensor(rbind(c(1, 2), c(2, 1)), c(1, 2), size = c(2, 2))
  expect_error(sp$exp(), "exp() is not supported for sparse tensors (layout torch_sparse_coo)",
               fixed = TRUE, class = "not_implemented_error")
  expect_error(sp + 1, "convert the tensor with to_dense() first", fixed = TRUE)
  expect_error(as_array(sp), "Sparse tensors are not supported for as_array conversion.",
               fixed = TRUE, class = "runtime_error")
  expect_error(torch_sparse_coo_tensor(rbind(c(0, 1)), c(1, 2)), "indices start at 1, found 0",
               fixed = TRUE)
  expect_error(torch_sparse_coo_tensor(rbind(c(1, 2)), c(1, 2, 3)), "same nnz")
  expect_error(torch_sparse_coo_tensor(rbind(c(1, 4)), c(1, 2), size = 3),
               "for dim 0, size is 3 but found index 3", fixed = TRUE)
  expect_error(torch_sparse_coo_tensor(rbind(c(1, 1)), c(1, 2))$values(), "uncoalesced")
  expect_equal(as_array(sp$to_dense()), rbind(c(0, 1), c(2, 0)))
  expect_intact(s)
})


test_that("E50-E52: meta tensors' values, quantized tensors, buffers that can't be shared", {
  s <- err_state()
  y <- torch_randn(2, 3)$to(device = "meta")
  expect_error(as_array(y), "as_array() of a meta tensor", fixed = TRUE, class = "runtime_error")
  expect_error(y[1, 1]$item(), "no values", class = "runtime_error")
  expect_error(y$to(device = "cpu"), "Cannot copy out of meta tensor; no data!", fixed = TRUE,
               class = "not_implemented_error")
  expect_error(torch_ones(2)$to(device = "cuda"), "PyTorch is not linked with support for cuda devices",
               fixed = TRUE)
  expect_error((y$requires_grad_(TRUE) * 2)$sum()$backward(), "backward() from a meta tensor",
               fixed = TRUE, class = "not_implemented_error")
  q <- torch_quantize_per_tensor(torch_tensor(c(1, 2)), scale = 0.1, zero_point = 0,
                                 dtype = torch_quint8())
  expect_error(q + 1, "add() is not supported for quantized tensors: dequantize() them first",
               fixed = TRUE, class = "not_implemented_error")
  expect_error(torch_quantize_per_tensor(torch_tensor(1L), 0.1, 0, torch_quint8()),
               "quantizes a floating point tensor, got torch_Long", fixed = TRUE)
  expect_error(torch_tensor(1)$dequantize(), "needs a quantized tensor")
  expect_error(torch_tensor_from_buffer(runif(3), 4, dtype = "float64"),
               "the buffer has 24 bytes, shape [4] of torch_Double needs 32", fixed = TRUE,
               class = "value_error")
  expect_error(torch_tensor_from_buffer(1:10, 10, dtype = "int32"),
               "compact one (such as 1:10)", fixed = TRUE, class = "runtime_error")
  expect_error(torch_tensor_from_buffer(list(1), 1), "must be a numeric")
  expect_intact(s)
})

test_that("E45: second derivatives of pdist and ctc_loss", {
  s <- err_state()
  m <- torch_randn(3, 2, requires_grad = TRUE)
  g <- autograd_grad(torch_pdist(m)$sum(), m, create_graph = TRUE)[[1]]
  expect_error(g$sum()$backward(), "derivative for '_pdist_backward' is not implemented",
               fixed = TRUE)
  expect_intact(s)
})

test_that("E58: arguments that don't fit an nn op", {
  s <- err_state()
  x <- torch_randn(1, 6, 2, 2)
  expect_error(nnf_pixel_shuffle(x, 2), "input.size(-3)=6 is not divisible by 4", fixed = TRUE)
  expect_error(torch_channel_shuffle(x, 4), "Got 6 channels and 4 groups", fixed = TRUE)
  expect_error(nnf_max_unpool2d(torch_ones(1, 1, 1, 1), torch_tensor(array(10L, c(1, 1, 1, 1))), 2),
               "Found an invalid max index: 10 (output volumes are of size 2x2)", fixed = TRUE)
  expect_error(nnf_fractional_max_pool2d(torch_randn(1, 1, 4, 4), 3, output_size = c(3, 2)),
               "pool height 3 too large relative to input height 4", fixed = TRUE)
  expect_error(nnf_ctc_loss(torch_randn(6, 1, 3), torch_tensor(matrix(1L)), 9L, 1L),
               "input_lengths to have value at most 6, but got value 9", fixed = TRUE)
  expect_error(torch_pdist(torch_randn(2, 2, 2)), "pdist only supports 2D tensors, got: 3D",
               fixed = TRUE)
  expect_intact(s)
})

test_that("E59: packed sequences that can't be made or read", {
  s <- err_state()
  x <- torch_randn(4, 3, 2)
  expect_error(nn_utils_rnn_pack_padded_sequence(x, c(2, 4, 3)), "sorted in decreasing order")
  expect_error(nn_utils_rnn_pack_padded_sequence(x, c(4, 2, 0)),
               "Length of all samples has to be greater than 0")
  expect_error(nn_utils_rnn_pad_packed_sequence(x), "expected a PackedSequence")
  expect_intact(s)
})

test_that("E60: a distribution given what it can't take", {
  s <- err_state()
  expect_error(distr_bernoulli(0.5, 0.2), "Either `probs` or `logits` must be specified",
               fixed = TRUE)
  expect_error(distr_multivariate_normal(torch_zeros(2)),
               "Exactly one of covariance_matrix or precision_matrix or scale_tril")
  expect_error(distr_poisson(torch_tensor(2), validate_args = TRUE)$log_prob(torch_tensor(-1)),
               "must be within the support")
  expect_error(distr_categorical(torch_tensor(c(0.5, 0.5)))$entropy(),
               "torch_Categorical has no entropy()", fixed = TRUE,
               class = "not_implemented_error")
  expect_intact(s)
})

test_that("E61: an ignite optimizer set up or loaded wrongly", {
  s <- err_state()
  a <- torch_randn(2, requires_grad = TRUE)
  expect_error(optim_ignite_sgd(a), "required optimization parameter lr")
  expect_error(optim_ignite_adam(a, betas = c(0.9, 1.5)), "Invalid beta parameter at index 1")
  o <- optim_ignite_sgd(a, lr = 0.1)
  expect_error(o$param_groups <- list(list(params = list(torch_randn(2)), lr = 0.1, momentum = 0,
                                           dampening = 0, weight_decay = 0, nesterov = FALSE)),
               "Cannot change the parameter groups")
  expect_error(o$load_state_dict(list(state = list())),
               "must be a list with elements 'param_groups' and 'state'")
  expect_intact(s)
})

test_that("E62: call_torch_function() of a name that is not a torch function", {
  s <- err_state()
  expect_error(call_torch_function("nnf_relu", torch_ones(2), quiet = TRUE),
               "Only functions prefixed with 'torch_'", class = "value_error")
  expect_error(call_torch_function("torch_nope", quiet = TRUE), "No function named torch_nope")
  expect_intact(s)
})

test_that("E79: a distribution's constraint asked what it can't answer", {
  s <- err_state()
  internal <- function(name) get(name, envir = asNamespace("torch"))
  expect_error(internal("constraint_real_vector")$check(torch_scalar_tensor(1)),
               "Expected value$dim() >= 1 but got 0", fixed = TRUE, class = "value_error")
  expect_error(internal("Constraint")$new()$check(torch_ones(2)),
               "check() is not implemented for this constraint", fixed = TRUE,
               class = "not_implemented_error")
  expect_error(internal("constraint_dependent")$check(torch_ones(2)),
               "Cannot determine validity of dependent constraint", class = "value_error")
  expect_intact(s)
})

test_that("E53: dual tensors and custom functions under forward mode", {
  s <- err_state()
  x <- torch_tensor(c(1, 2))
  expect_error(make_dual(x, x), "make_dual: no dual level is active", class = "runtime_error")
  square <- autograd_function(function(ctx, x) x * x, function(ctx, g) list(x = g))
  wrong <- autograd_function_with_jvp(function(ctx, x) x * x, function(ctx, g) list(x = g),
                                       jvp = function(ctx, x) torch_ones(3))
  with_dual_level({
    expect_error(make_dual(x, torch_ones(3)),
                 "the tangent's shape [3] differs from the primal's [2]", fixed = TRUE)
    expect_error(make_dual(torch_tensor(1:2), x), "only floating point tensors have tangents")
    expect_error(with_dual_level(NULL), "nested dual levels are not supported")
    d <- make_dual(x, torch_ones(2))
    expect_error(square(d), "square has a dual input (forward-mode AD) but no jvp", fixed = TRUE,
                 class = "runtime_error")
    expect_error(wrong(d), "jvp returned a tangent of shape [3] for output 1", fixed = TRUE)
    w <- make_dual(torch_tensor(c(1, 2), requires_grad = TRUE), torch_ones(2))
    expect_error(autograd_grad((w * w)$sum(), w, create_graph = TRUE),
                 "create_graph = TRUE of a dual tensor (forward-mode AD) is not supported",
                 fixed = TRUE, class = "runtime_error")
  })
  with_dual_level(expect_equal(as_array(unpack_dual(make_dual(x, x) * 2)$tangent), c(2, 4)))
  expect_intact(s)
})

# -- The functional API, gradgradcheck, the graph (issue 22) -----------------

test_that("E54-E57: the functional API's misuse, vectorize, gradgradcheck, autograd_graph", {
  s <- err_state()
  x <- torch_tensor(c(1, 2, 3))
  expect_error(autograd_jacobian(function(a) a, "x"),
               "inputs must be a tensor or a list of tensors, got str", fixed = TRUE)
  expect_error(autograd_vjp(function(a) a * 2, x, torch_ones(2)),
               "v[0] has shape [2] but must have the shape of its tensor, [3]", fixed = TRUE)
  expect_error(autograd_hessian(function(a) a * 2, x),
               "must return a single tensor with one element (a scalar), got shape [3]",
               fixed = TRUE)
  expect_error(autograd_jacobian(function(a) a, x, strategy = "sideways"),
               'strategy must be "reverse" or "forward"', fixed = TRUE)
  expect_error(autograd_jacobian(function(a) a[1:2], x, vectorize = TRUE),
               "given 2 stacked copies of its inputs it returned shape [2, 3], not [2, 2]",
               fixed = TRUE)
  cube <- autograd_function(
    forward = function(ctx, x) {
      ctx$save_for_backward(x2 = x * x)
      x * x * x
    },
    backward = function(ctx, g) list(x = g * 3 * ctx$saved_variables$x2))
  v <- torch_tensor(c(0.5, -1.5), dtype = torch_float64(), requires_grad = TRUE)
  expect_true(autograd_gradcheck(cube, list(v)))
  expect_error(autograd_gradgradcheck(cube, list(v)),
               "gradgradcheck: second derivatives disagree with finite differences",
               fixed = TRUE)
  expect_error(autograd_graph(torch_ones(2) * 2),
               "output 0 does not require grad, so it has no backward graph", fixed = TRUE)
  expect_intact(s)
})

test_that("E63-E66: the sparse layouts' block sizes, conversions, parts, products", {
  s <- err_state()
  x <- torch_randn(2, 3)
  expect_error(x$to_sparse_bsr(c(2, 2)),
               "tensor sparse size (2,3) must be divisible by given blocksize (2,2)", fixed = TRUE)
  expect_error(torch_randn(2, 4)$to_sparse_bsr(c(1, 2))$to_sparse_csr(),
               "expected SparseCsr or SparseCsc layout but got SparseBsr")
  expect_error(x$to_sparse_csr()$ccol_indices(),
               "ccol_indices expected sparse column compressed tensor layout but got SparseCsr")
  expect_error(print(x$to_sparse_csc()), "Sparse CSC tensors do not have is_contiguous")
  expect_error(torch_randn(2, 4)$to_sparse()$smm(torch_randn(5, 3)),
               "Expected dim 0 size 4, got 5")
  expect_error(torch_randn(3, 4)$sparse_mask(torch_randn(2, 4)$to_sparse()),
               "operands have incompatible sizes")
  expect_intact(s)
})

test_that("E67: a method for an accelerator or a nested tensor, on a CPU tensor", {
  s <- err_state()
  x <- torch_ones(2)
  expect_error(x$pin_memory(), "Cannot access accelerator device when none is available")
  expect_error(x$record_stream(NULL), "Could not run 'aten::record_stream'", fixed = TRUE)
  expect_error(x$to_padded_tensor(0), "takes a nested tensor")
  expect_error(x$`_nested_tensor_size`(), "Could not run 'aten::_nested_tensor_size'",
               fixed = TRUE)
  expect_false(x$is_pinned())
  expect_intact(s)
})

test_that("E68: a private method given a tensor it doesn't take", {
  s <- err_state()
  expect_error(torch_ones(2)$`_conj`(), "_conj() takes a complex tensor, got torch_Float",
               fixed = TRUE)
  expect_error(torch_ones(2)$`_is_all_true`(), "_is_all_true() takes a bool tensor",
               fixed = TRUE)
  expect_error(torch_ones(2)$nonzero_static(size = -1),
               "'size' must be an non-negative integer")
  expect_intact(s)
})

test_that("E69: set_() or as_strided_scatter() onto memory that doesn't fit", {
  s <- err_state()
  expect_error(torch_zeros(2)$set_(torch_ones(2, dtype = torch_float64())),
               "Could not set tensor of type float64 to a tensor of type float32")
  x <- torch_arange(0, 5)
  expect_error(torch_empty(0)$set_(x$storage(), 0, c(3, 3)),
               "need 9 elements, but the storage has 6")
  y <- torch_ones(2, requires_grad = TRUE) * 1
  expect_error(y$set_(torch_ones(3)), "set_() of a tensor that requires grad", fixed = TRUE)
  expect_error(torch_ones(2, 2)$as_strided_scatter(torch_ones(3), 2, 1),
               "src size = [3], slice size = [2]", fixed = TRUE)
  expect_intact(s)
})

test_that("E70: contrib_sort_vertices() given tensors of the wrong kind", {
  s <- err_state()
  v <- torch_zeros(1, 2, 24, 2)
  m <- torch_zeros(1, 2, 24, dtype = torch_bool())
  expect_error(contrib_sort_vertices(v, m, torch_zeros(1, 2, dtype = torch_long())),
               "num_valid must be an int32 tensor (torch_int()) of shape [1, 2]", fixed = TRUE)
  expect_intact(s)
})

test_that("E71: an argument R torch's function does not have", {
  s <- err_state()
  x <- torch_randn(3, 4)
  # (R's own error for a closure of R torch's formals, functions and methods alike)
  expect_error(torch_std(x, correction = 0), "unused argument (correction = 0)", fixed = TRUE)
  expect_error(x$std(correction = 0), "unused argument (correction = 0)", fixed = TRUE)
  expect_identical(names(formals(x$std)), c("dim", "unbiased", "keepdim"))
  expect_error(x$reshape(4, 3), "unused argument (3)", fixed = TRUE)
  expect_error(x$new_zeros(c(2, 2), dtype = torch_float64()), "unused argument (dtype",
               fixed = TRUE)
  expect_error(nnf_cross_entropy(torch_randn(2, 3), torch_tensor(c(1L, 2L)),
                                 label_smoothing = 0.1), "unused argument (label_smoothing",
               fixed = TRUE)
  expect_error(nn_conv2d(1, 2, 3, output_padding = 1), "unused argument (output_padding = 1)",
               fixed = TRUE)
  expect_intact(s)
})

test_that("E72: `...` given something where R torch keeps it empty", {
  s <- err_state()
  expect_error(linalg_lstsq(torch_randn(3, 3), torch_randn(3, 2), NULL, "gelsy"),
               "`...` must be empty", fixed = TRUE, class = "type_error")
  expect_error(torch_normal(0, 1, size = 2, foo = 1), "* foo", fixed = TRUE)
  expect_intact(s)
})

test_that("E73: out_dtype on the CPU", {
  s <- err_state()
  expect_error(torch_mm(torch_randn(2, 3), torch_randn(3, 2), out_dtype = torch_float()),
               "Could not run 'aten::mm.dtype'", fixed = TRUE, class = "not_implemented_error")
  expect_intact(s)
})

test_that("E75: jit_save_for_mobile() of a trace the lite interpreter's bytecode is not written for", {
  tr <- jit_trace(function(x) torch_relu(x)$cumsum(1), torch_ones(2))
  path <- tempfile(fileext = ".pt")
  expect_error(jit_save_for_mobile(tr, path),
               "the operator aten::cumsum is not given to the lite interpreter here")
  expect_false(file.exists(path))
})

test_that("E80: an R value an argument can't take", {
  s <- err_state()
  x <- torch_randn(3)
  expect_error(torch_maximum(x, "0"), "torch_maximum(): `other` must be a tensor (or an R number",
               fixed = TRUE, class = "type_error")
  expect_error(torch_stack("a"), "`tensors` must be a list of tensors, not a character string",
               fixed = TRUE)
  expect_error(torch_stack(list(x, "a")), "`tensors[[2]]` must be a tensor", fixed = TRUE)
  expect_equal(as_array(torch_maximum(x, 0)), pmax(as_array(x), 0))  # (a number: a tensor)
  # a whole number: a fraction or a string is refused, naming the argument
  expect_error(torch_randperm(2.5), "expected an integer n, got 2.5", fixed = TRUE)
  expect_error(torch_randperm("a"), "expected an integer n, got a character string",
               fixed = TRUE)
  expect_error(torch_multinomial(torch_ones(3), 1.5), "expected an integer num_samples",
               fixed = TRUE)
  expect_error(torch_zeros("a"), "size must be whole numbers, got the string 'a' at position 1",
               fixed = TRUE)
  expect_intact(s)
})


test_that("E81: a layer norm whose normalized shape doesn't fit the input", {
  s <- err_state()
  x <- torch_randn(2, 3, 4)
  expect_error(nnf_layer_norm(x, c(3, 5)),
               "Given normalized_shape=[3, 5], expected input with shape [*, 3, 5], but got input of size[2, 3, 4]",
               fixed = TRUE, class = "runtime_error")
  expect_error(nnf_layer_norm(x, c(3, 4), weight = torch_ones(4)),
               "Expected weight to be of same shape as normalized_shape", class = "runtime_error")
  expect_error(nn_layer_norm(c(3, 4))(torch_randn(2, 3, 5)), "expected input with shape [*, 3, 4]",
               fixed = TRUE, class = "runtime_error")
  expect_intact(s)
})


test_that("E82: a required argument left out", {
  s <- err_state()
  x <- torch_randn(3)
  expect_error(torch_add(x), 'argument "other" is missing, with no default', fixed = TRUE,
               class = "type_error")
  expect_error(x$add(), 'argument "other" is missing, with no default', fixed = TRUE)
  expect_error(nn_linear(3), 'argument "out_features" is missing, with no default', fixed = TRUE)
  expect_error(distr_normal(0, 1)$log_prob(), 'argument "value" is missing', fixed = TRUE)
  expect_intact(s)
})


test_that("E83: a convolution whose input channels don't fit its weight", {
  s <- err_state()
  conv <- nn_conv2d(3, 8, 3)
  expect_error(conv(torch_randn(1, 1, 28, 28)),
               "Given groups=1, weight of size [8, 3, 3, 3], expected input[1, 1, 28, 28] to have 3 channels, but got 1 channels instead",
               fixed = TRUE, class = "runtime_error")
  expect_error(nnf_conv_transpose2d(torch_randn(1, 3, 5, 5), torch_randn(4, 2, 3, 3)),
               "expected input[1, 3, 5, 5] to have 4 channels", fixed = TRUE)
  expect_equal(conv(torch_randn(1, 3, 5, 5))$shape, c(1, 8, 3, 3))
  expect_intact(s)
})


test_that("E84: an optimizer's setting out of range", {
  s <- err_state()
  a <- torch_randn(2, requires_grad = TRUE)
  expect_error(optim_sgd(a), "^Need to specify a learning rate$", class = "value_error")
  expect_error(optim_adam(a, betas = c(1.5, 0.9)), "^Invalid beta parameter at index 1$",
               class = "value_error")
  expect_error(optim_adamw(a, eps = -1), "^Invalid epsilon value: -1$", class = "rlang_error")
  expect_error(optim_adam(a, lr = "a"), "optim_adam(): `lr` must be a number", fixed = TRUE,
               class = "type_error")
  expect_error(optim_adam(a, lr = NA), "`lr` must be a number", fixed = TRUE)
  expect_intact(s)
})

test_that("E85: gradient clipping given what it can't use", {
  s <- err_state()
  expect_error(nn_utils_clip_grad_norm_(list(s$w, 3), 1),
               "nn_utils_clip_grad_norm_: parameters must be tensors", fixed = TRUE)
  expect_error(nn_utils_clip_grad_norm_(list(s$w), "a"), "max_norm must be a number, got 'a'")
  expect_error(nn_utils_clip_grad_value_(list(s$w), "x"), "clip_value must be a number")
  expect_intact(s)
})

test_that("E86: a recurrent layer given an input or state that doesn't fit", {
  s <- err_state()
  lstm <- nn_lstm(3, 4)
  expect_error(lstm(torch_randn(5, 2, 4)),
               "input.size(-1) must be equal to input_size. Expected 3, got 4", fixed = TRUE)
  expect_error(nn_gru(3, 4)(torch_randn(5, 2, 2, 3)), "expected an input of 2 dims")
  expect_error(lstm(torch_randn(5, 2, 3), list(torch_zeros(1, 2, 4))),
               "hx must be two tensors, (h_0, c_0), got 1", fixed = TRUE)
  expect_equal(lstm(torch_randn(5, 2, 3))[[1]]$shape, c(5, 2, 4))
  expect_intact(s)
})

