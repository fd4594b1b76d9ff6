# The exported functions made from the Python tables have real formals (R torch's,
# which tests/test_signatures.py compares), read from the call's frame by one
# .External2. For every such function taking one tensor first and nothing else
# required, a call by position, by name and by partial name gives what the former
# `function(...) .External(C_call, fn, ...)` gave by position.

ns <- asNamespace("torch")
pointers <- torch:::.pointers("FUNCTIONS")
generated <- Filter(function(nm) {
  if (startsWith(nm, ".")) return(FALSE)  # (the package's own helpers)
  f <- get(nm, envir = ns)
  b <- body(f)
  if (is.call(b) && length(b) == 2 && identical(b[[1]], as.name("invisible"))) b <- b[[2]]
  is.call(b) && identical(b[[1]], as.name(".External2"))
}, names(pointers))

# the former closure: R's arguments as given, no formals
former <- function(nm) {
  f <- function(...) NULL
  body(f) <- bquote(.External(C_call, .(pointers[[nm]]), ...))
  environment(f) <- ns
  f
}

outcome <- function(f, args) {
  torch_manual_seed(1)
  tryCatch(list(value = suppressWarnings(do.call(f, args))),
           error = function(e) list(error = conditionMessage(e)))
}

same <- function(a, b) {
  if (is_torch_tensor(a) && is_torch_tensor(b)) {
    return(identical(a$shape, b$shape) && a$dtype == b$dtype &&
             identical(as_array(a$detach()$cpu()), as_array(b$detach()$cpu())))
  }
  if (is.list(a) && is.list(b) && !is_torch_tensor(a) && !is_torch_tensor(b)) {
    return(length(a) == length(b) && identical(names(a), names(b)) &&
             all(mapply(same, a, b)))
  }
  identical(class(a), class(b)) && (is.environment(a) || isTRUE(all.equal(a, b)))
}

# the shortest prefix of `name` no other formal before `...` starts with
partial <- function(name, names) {
  for (n in seq_len(nchar(name))) {
    p <- substr(name, 1, n)
    if (sum(startsWith(names, p)) == 1) return(p)
  }
  name
}

test_that("one tensor first: by position, name and partial name, as before", {
  checked <- 0
  for (nm in generated) {
    fml <- formals(get(nm, envir = ns))
    if (length(fml) == 0) next
    first <- names(fml)[1]
    if (!first %in% c("self", "input", "x", "A", "tensor")) next
    before_dots <- names(fml)[seq_len(match("...", names(fml), nomatch = length(fml) + 1) - 1)]
    required <- vapply(fml[-1], function(d) is.symbol(d) && !nzchar(as.character(d)), TRUE)
    if (any(required)) next
    x <- torch_tensor(matrix(c(0.5, -1.5, 2, 3.25, -0.75, 1), 2, 3))
    want <- outcome(former(nm), list(x$clone()))
    f <- get(nm, envir = ns)
    by_name <- setNames(list(x$clone()), first)
    by_partial <- setNames(list(x$clone()), partial(first, before_dots))
    for (args in list(list(x$clone()), by_name, by_partial)) {
      got <- outcome(f, args)
      label <- paste0(nm, "(", paste(names(args), collapse = ""), ")")
      if (!is.null(want$error)) {
        expect_identical(got$error, want$error, label = label)
      } else {
        expect_true(is.null(got$error) && same(got$value, want$value), label = label)
      }
    }
    checked <- checked + 1
  }
  expect_gt(checked, 150)
})

test_that("named and partial arguments after the first, and defaults left out", {
  x <- torch_tensor(matrix(c(1, 2, 3, 4, 5, 7), 2, 3))
  old_std <- former("torch_std")
  expect_true(same(torch_std(x, 2, FALSE, TRUE), old_std(x, 2, FALSE, TRUE)))
  expect_true(same(torch_std(x, keepdim = TRUE, dim = 1), old_std(x, dim = 1, keepdim = TRUE)))
  expect_true(same(torch_std(x, di = 1, unb = FALSE), old_std(x, dim = 1, unbiased = FALSE)))
  expect_true(same(torch_std(self = x), old_std(x)))
  expect_error(torch_std(x, 1, nope = 2), "unused argument \\(nope = 2\\)")
  old_ce <- former("nnf_cross_entropy")
  i <- torch_randn(3, 4)
  t <- torch_tensor(c(1L, 2L, 4L))
  expect_true(same(nnf_cross_entropy(i, t, red = "sum"), old_ce(i, t, reduction = "sum")))
  expect_true(same(nnf_cross_entropy(target = t, input = i), old_ce(i, t)))
  old_zeros <- former("torch_zeros")
  expect_true(same(torch_zeros(2, 3, dtype = torch_float64()),
                   old_zeros(2, 3, dtype = torch_float64())))
  expect_true(same(torch_zeros(c(2, 3)), old_zeros(c(2, 3))))
  # a defaulted formal given by position reaches the engine by its name, where R's
  # conventions look for it (arange's inclusive end must not take `dtype` as a number)
  expect_equal(torch_arange(0, 1, 1, torch_float64())$dtype, torch_float64())
  expect_equal(torch_arange(0, 1, 1, dtype = torch_float64())$dtype, torch_float64())
  expect_equal(length(torch_arange(0, 1, 1, torch_float64())), 2)
})

test_that("rlang's splice and injection in `...`, as R torch's list2() takes them", {
  sizes <- c(2, 3)
  expect_equal(torch_zeros(1, !!!sizes)$shape, c(1, 2, 3))
  expect_equal(torch_empty(!!!list(4, 5))$shape, c(4, 5))
  n <- 3
  expect_equal(torch_ones(!!n, 2)$shape, c(3, 2))
})

test_that("args() shows the formals; a function made in R keeps its own", {
  expect_identical(names(formals(torch_std)), c("self", "dim", "unbiased", "keepdim"))
  expect_identical(formals(torch_std)$unbiased, TRUE)
  expect_identical(names(formals(torch_zeros))[1], "...")
  expect_identical(formals(nnf_cross_entropy)$reduction, quote(c("mean", "sum", "none")))
})

test_that("layer and optimizer generators have R torch's formals; R matches their calls", {
  expect_identical(formals(nn_linear), as.pairlist(alist(in_features = , out_features = ,
                                                         bias = TRUE)))
  expect_identical(formals(nn_rnn)$nonlinearity, NULL)
  expect_identical(formals(nn_lstm)$num_layers, 1)
  expect_identical(names(formals(nn_embedding))[8], ".weight")
  expect_identical(names(formals(optim_asgd)), c("params", "lr", "lambda", "alpha", "t0",
                                                 "weight_decay"))
  expect_identical(formals(optim_sgd)$lr, quote(optim_required()))
  expect_error(nn_linear(3, 2, biass = TRUE), "unused argument \\(biass = TRUE\\)")
  expect_error(nn_linear(3, 2, TRUE, 4), "unused argument \\(4\\)")
  expect_equal(nn_linear(out = 2, 3, FALSE)$weight$shape, c(2, 3))  # (partial name)
  expect_null(nn_linear(out = 2, 3, FALSE)$bias)
  expect_equal(nn_rnn(3, 4, 1, "relu")$nonlinearity, "relu")  # (R torch's order)
  expect_error(nn_lstm(3, 4, foo = 1), "must be empty")
  w <- torch_ones(3, 2)
  expect_equal(as_array(nn_embedding(3, 2, .weight = w)$weight), as_array(w))
  base <- nn_module(inherit = nn_rnn, initialize = function() super$initialize(2, 3, 1, "relu"))
  expect_equal(base()$nonlinearity, "relu")  # (by position: R torch's order)
  expect_error(optim_sgd(nn_linear(1, 1)$parameters, lr = 0.1, nesterov = TRUE), "Nesterov")
})

test_that("a layer's initialize(), its class's constructors and mean() have real formals", {
  init <- attr(nn_rnn, "module")$public_methods$initialize
  expect_identical(formals(init), formals(nn_rnn))  # (super$initialize(): matched by R)
  expect_identical(names(formals(nn_embedding_bag$from_pretrained))[1:3],
                   c("embeddings", "freeze", "max_norm"))
  w <- torch_randn(4, 2)
  bag <- nn_embedding_bag$from_pretrained(w, FALSE, mode = "sum")
  expect_true(bag$weight$requires_grad)
  expect_equal(as_array(bag(torch_tensor(c(1L, 2L)), torch_tensor(0L))),  # (offsets: 0-based)
               as_array(w[1:2, ]$sum(1, keepdim = TRUE)), tolerance = 1e-6)
  expect_error(nn_embedding_bag$from_pretrained(w, nope = 1), "unused argument \\(nope = 1\\)")
  expect_identical(names(formals(mean.torch_tensor)), c("x", "dim", "keepdim", "na.rm", "..."))
  x <- torch_tensor(rbind(c(1, 2), c(3, 5)))
  expect_equal(as_array(mean(x, 1)), c(2, 3.5))
  expect_equal(mean(x, dim = 2, keepdim = TRUE)$shape, c(2, 1))
  expect_error(mean(x, na.rm = TRUE), "do not have NAs", class = "value_error")
  expect_equal(as_array(max(x, dim = 2)[[1]]), c(2, 5))  # (Summary: the options matched by R)
  expect_error(max(x, foo = 1), "unused argument \\(foo = 1\\)")
  expect_error(sum(x, foo = 1), "unused argument \\(foo = 1\\)")
})

# Tensor methods have R torch's formals too (x$std: dim, unbiased, keepdim), the tensor
# added per access (C_method): each method taking nothing required, called with no
# argument, gives what the former `function(...) .External(C_call, fn, x, ...)` gave.
former_method <- function(nm, x) {
  f <- function(...) NULL
  body(f) <- bquote(.External(C_call, .(get(nm, envir = torch:::.methods)), .(x), ...))
  environment(f) <- ns
  f
}

dense <- function(v) {
  if (is_torch_tensor(v) && !identical(v$layout, torch_strided())) v$to_dense() else v
}

test_that("tensor methods: their formals, and a call without arguments as before", {
  x <- torch_tensor(matrix(c(0.5, -1.5, 2, 3.25, -0.75, 1), 2, 3))
  checked <- 0
  for (nm in ls(torch:::.methods)) {
    f <- x$clone()[[nm]]
    expect_true(is.function(f), label = nm)
    fml <- formals(f)
    required <- vapply(fml, function(d) is.symbol(d) && !nzchar(as.character(d)), TRUE)
    if (any(required[names(fml) != "..."])) next
    # (the same tensor for both, but for an in-place method: x$data_ptr() is its address)
    y <- x$clone()
    want <- outcome(former_method(nm, y), list())
    got <- outcome((if (endsWith(nm, "_")) x$clone() else y)[[nm]], list())
    if (!is.null(want$error)) {
      expect_identical(got$error, want$error, label = nm)
    } else {
      expect_true(is.null(got$error) && same(dense(got$value), dense(want$value)), label = nm)
    }
    checked <- checked + 1
  }
  expect_gt(checked, 150)
  expect_identical(names(formals(x$std)), c("dim", "unbiased", "keepdim"))
  expect_identical(names(formals(x$add)), c("other", "alpha"))
  expect_true(same(x$std(di = 1, unb = FALSE), former_method("std", x)(dim = 1, unbiased = FALSE)))
  expect_true(same(x$sum(keepdim = TRUE, dim = 2), former_method("sum", x)(2, TRUE)))
  expect_true(same(x$view(3, 2), x$view(c(3, 2))))
  expect_identical(x$add_(1), x)  # (an in-place method gives x itself)
})

test_that("methods of distributions, storages, generators and hooks have real formals", {
  d <- distr_normal(torch_zeros(2), torch_ones(2))
  expect_identical(formals(d$sample), as.pairlist(alist(sample_shape = NULL)))
  expect_identical(names(formals(d$log_prob)), "value")
  expect_equal(as_array(d$log_prob(value = torch_zeros(2))), rep(-0.9189385, 2),
               tolerance = 1e-6)
  expect_equal(d$sample(c(3))$shape, c(3, 2))
  expect_error(d$log_prob(1, 2), "unused argument \\(2\\)")  # (R matches the call)
  expect_equal(as_array(d$mean), c(0, 0))  # (a field)
  expect_equal(as_array(d[["stddev"]]), c(1, 1))
  cat_ <- distr_categorical(probs = torch_tensor(c(0.2, 0.8)))
  expect_equal(as_array(cat_$log_prob(torch_tensor(2L))), log(0.8), tolerance = 1e-6)
  expect_identical(formals(torch_randn(2)$storage()$data_ptr), NULL)
  g <- torch_generator()
  expect_identical(names(formals(g$manual_seed)), "seed")
  g$manual_seed(7)
  expect_equal(as.numeric(g$current_seed()), 7)
  x <- torch_ones(1, requires_grad = TRUE)
  h <- x$register_hook(function(grad) grad * 2)
  expect_invisible(h$remove())
  x$backward()
  expect_equal(as_array(x$grad), 1)  # (the hook was removed)
  expect_null(h$nope)
})
