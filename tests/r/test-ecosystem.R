# What packages built on R torch (luz, torchvision, safetensors, torchopt) use from
# it, checked directly (issue 19). Python's side: tests/test_ecosystem.py.

test_that("coro's iterators: R torch's methods and re-exports", {
  expect_identical(torch::loop, coro::loop)
  expect_identical(torch::yield, coro::yield)
  expect_identical(torch::as_iterator, coro::as_iterator)
  dl <- dataloader(tensor_dataset(torch_arange(1, 10)), batch_size = 4)
  it <- coro::as_iterator(dl)
  expect_true(is.function(it))
  expect_equal(as_array(it()[[1]]), c(1, 2, 3, 4))
  it()
  it()
  expect_true(coro::is_exhausted(it()))
  total <- 0
  loop(for (b in dl) total <- total + b[[1]]$sum()$item())
  expect_equal(total, 55)
  expect_equal(unlist(coro::collect(sampler_seq <- dl$sampler)), 1:10)
  counter <- iterable_dataset(
    initialize = function(n) self$n <- n,
    .iter = function() {
      i <- 0
      function() {
        i <<- i + 1
        if (i > self$n) coro::exhausted() else torch_tensor(i)
      }
    }
  )
  expect_equal(length(coro::collect(counter(3))), 3)
  # (R torch ignores shuffle for an iterable dataset: its order is the dataset's)
  batches <- coro::collect(dataloader(counter(5), batch_size = 2, shuffle = TRUE))
  expect_equal(as_array(batches[[1]]), matrix(c(1, 2), 2))
  expect_length(batches, 3)
})

test_that("dynamic dots where R torch collects `...` with rlang::list2()", {
  layers <- list(nn_linear(2, 3), nn_relu(), nn_linear(3, 1))
  net <- nn_sequential(!!!layers)
  expect_length(net, 3)
  expect_equal(net(torch_ones(4, 2))$shape, c(4, 1))
  expect_length(nn_sequential(nn_linear(1, 1), !!!layers[2:3]), 3)
  tensors <- list(torch_randn(5, 2), torch_randn(5))
  expect_equal(length(tensor_dataset(!!!tensors)), 5)
  f <- autograd_function(
    forward = function(ctx, x) {
      saved <- list(a = x, b = 2)
      ctx$save_for_backward(!!!saved)
      x * 2
    },
    backward = function(ctx, g) {
      expect_named(ctx$saved_variables, c("a", "b"))
      list(x = g * ctx$saved_variables$b)
    }
  )
  x <- torch_ones(2, requires_grad = TRUE)
  f(x)$sum()$backward()
  expect_equal(as_array(x$grad), c(2, 2))
})

test_that("autocast: matrix products in bfloat16 on the CPU, as luz's AMP callback checks", {
  x <- torch_randn(4, 3)
  ctx <- set_autocast(device_type = "cpu")
  expect_equal(torch_matmul(x, x$t())$dtype$.type(), "BFloat16")
  expect_equal((x + x)$dtype$.type(), "Float")
  unset_autocast(ctx)
  expect_equal(torch_matmul(x, x$t())$dtype$.type(), "Float")
  inside <- function() {
    local_autocast("cpu")
    torch_mm(x, x$t())$dtype$.type()
  }
  expect_equal(inside(), "BFloat16")
  expect_equal(torch_mm(x, x$t())$dtype$.type(), "Float")
  expect_equal(with_autocast(torch_mm(x, x$t())$dtype$.type(), device_type = "cpu",
                             dtype = torch_float16()), "Half")
  expect_equal(nnf_linear(x, torch_randn(2, 3), torch_zeros(2))$dtype$.type(), "Float")
})

test_that("cuda_amp_grad_scaler behaves as R torch's does on the CPU", {
  x <- torch_randn(2)
  off <- cuda_amp_grad_scaler(enabled = FALSE)
  expect_identical(off$scale(x), x)
  p <- torch_zeros(1, requires_grad = TRUE)
  opt <- optim_sgd(p, lr = 1)
  (p * 2)$sum()$backward()
  off$step(opt)
  off$update()
  expect_equal(as_array(p), -2)
  on <- cuda_amp_grad_scaler()
  expect_error(on$scale(x), 'device must be "cuda"')
  expect_error(on$update(), "scale")
  expect_error(cuda_amp_grad_scaler(growth_factor = 1), "growth_factor")
})

test_that("the names packages import exist and answer as R torch's do on the CPU", {
  for (nm in c("nnf_grid_sample", "nnf_affine_grid", "torch_is_floating_point",
               "cuda_amp_grad_scaler", "set_autocast", "unset_autocast", "local_autocast",
               "with_autocast", "cuda_current_device", "torch_float8_e4m3fn",
               "torch_float8_e5m2", "as_iterator", "loop", "yield")) {
    expect_true(nm %in% getNamespaceExports("torch"), info = nm)
  }
  expect_identical(cuda_current_device(), -1L)
  expect_true(torch_is_floating_point(torch_ones(1)))
  expect_false(torch_is_floating_point(torch_ones(1, dtype = torch_long())))
  f8 <- torch_tensor(c(1.5, 300))$to(dtype = torch_float8_e4m3fn())
  expect_true(f8$dtype$is_floating_point)
  expect_equal(as_array(f8$to(dtype = torch_float())), c(1.5, 288))
  expect_equal(f8$dtype$.type(), "Float8_e4m3fn")
})

test_that("one-element tensors where R torch takes a number", {
  a <- torch_tensor(c(1, 2, 3))
  b <- torch_tensor(c(2, 4, 8))
  x <- torch_zeros(3)
  x$addcdiv_(a, b, value = torch_tensor(-0.5))
  expect_equal(as_array(x), -0.5 * c(1, 2, 3) / c(2, 4, 8))
  expect_equal(as_array(torch_zeros(3)$addcmul(a, b, value = torch_tensor(2))),
               2 * c(2, 8, 24))
  expect_equal(as_array(a$add(b, alpha = torch_tensor(2))), c(5, 10, 19))
  expect_equal(as_array(torch_arange(1, 10)$narrow(1, start = torch_tensor(3L), length = 2)),
               c(3, 4))
  # a float tensor too (torchvision's grid: `start = 1 + torch_tensor(16L)$sum(dim = 1)`)
  expect_equal(as_array(torch_arange(1, 10)$narrow(1, start = 1 + torch_tensor(2L)$sum(dim = 1),
                                                   length = 2)), c(3, 4))
})

test_that("the _like creators take an R vector as R torch does, as a tensor", {
  # (torchvision's tests call torch_rand_like(c(3, 5, 5)) for a non-image input)
  expect_equal(torch_rand_like(c(3, 5, 5))$shape, 3)
  expect_equal(torch_rand_like(c(3, 5, 5))$dtype, torch_float())
  expect_equal(torch_randn_like(matrix(1, 2, 3))$shape, c(2, 3))
  expect_equal(torch_empty_like(1:4)$dtype, torch_long())
  expect_equal(torch_randint_like(c(1L, 2L), 0, 5)$dtype, torch_long())
})

test_that("layers: positional inplace, conv kernels, one value per batch-norm channel", {
  x <- torch_tensor(c(-1, 2))
  nn_relu(TRUE)(x)
  expect_equal(as_array(x), c(0, 2))
  expect_error(nnf_conv2d(torch_randn(1, 1, 2, 2), torch_randn(1, 1, 3, 3)),
               "Kernel size can't be greater than actual input size")
  expect_equal(nn_batch_norm1d(3)(torch_randn(1, 3))$shape, c(1, 3))
})

test_that("parameters' storages: one per parameter, the same after $to()", {
  net <- nn_sequential(nn_linear(2, 3), nn_linear(3, 1))
  ptrs <- vapply(net$parameters, function(p) p$storage()$data_ptr(), "")
  expect_equal(anyDuplicated(ptrs), 0)
  net$to(device = "cpu")
  expect_equal(vapply(net$parameters, function(p) p$storage()$data_ptr(), ""), ptrs)
})

test_that("lr_reduce_on_plateau's message is worded as R torch's", {
  p <- torch_zeros(1, requires_grad = TRUE)
  sched <- lr_reduce_on_plateau(optim_sgd(p, lr = 1), patience = 0, verbose = TRUE)
  sched$step(1)
  expect_message(sched$step(1), "^Epoch 2: reducing learning rate of group 1 to 1.0000e-01\n$")
})

test_that("schedulers' step() has R torch's formals (luz gives the metric when it has `metrics`)", {
  o <- optim_sgd(torch_zeros(1, requires_grad = TRUE), lr = 1)
  expect_identical(names(formals(lr_reduce_on_plateau(o)$step)), "metrics")
  expect_null(formals(lr_step(o, step_size = 1)$step))
  expect_null(formals(lr_multiplicative(o, lr_lambda = function(e) 0.5)$step))
  s <- lr_reduce_on_plateau(o, patience = 0)
  s$step(metrics = 1)
  s$step(metrics = 1)
  expect_equal(o$param_groups[[1]]$lr, 0.1)
  expect_error(s$step(), "metrics")
})

# -- torch_save() / torch_load() ------------------------------------------------

# What R safetensors' write_safe() writes for one tensor, with R torch's __r__ metadata.
safetensors_bytes <- function(name, values, dtype, meta) {
  header <- sprintf('{"%s":{"shape":[%s],"dtype":"%s","data_offsets":[0,%d]},"__metadata__":{"__r__":%s}}',
                    name, paste(values$shape, collapse = ","), dtype,
                    length(buffer_from_torch_tensor(values)),
                    jsonlite::toJSON(meta, auto_unbox = TRUE))
  con <- rawConnection(raw(), open = "wb")
  on.exit(close(con))
  writeBin(nchar(header, type = "bytes"), con, size = 8L)
  writeBin(charToRaw(header), con)
  writeBin(buffer_from_torch_tensor(values), con)
  rawConnectionValue(con)
}

test_that("a tensor's file is laid out as R torch's R/save.R writes it", {
  x <- torch_tensor(matrix(1:6, 2, 3) / 2, requires_grad = TRUE)
  meta <- jsonlite::toJSON(list(type = "tensor", version = 3,
                                requires_grad = list("...unnamed..." = TRUE),
                                special_dtype = list()), auto_unbox = TRUE)
  expect_identical(torch_serialize(x), safetensors_bytes("...unnamed...", x, "F32", meta))
})

test_that("a list's file holds its tensors by name and the list serialize()d", {
  w <- torch_tensor(c(1, 2))
  l <- list(w = w, n = 3, inner = list(w2 = w, s = "text"))
  raw <- torch_serialize(l)
  n <- readBin(raw[1:8], "integer", size = 8)
  header <- jsonlite::fromJSON(rawToChar(raw[9:(8 + n)]), simplifyVector = FALSE)
  key <- names(header)[[1]]
  expect_equal(names(header), c(key, "__robj__", "__metadata__"))
  address <- structure(key, class = "torch_tensor_address")
  object <- list(w = address, n = 3, inner = list(w2 = address, s = "text"))
  robj <- serialize(object, connection = NULL)
  expect_identical(header[["__robj__"]]$data_offsets[[2]] - header[["__robj__"]]$data_offsets[[1]],
                   length(robj))
  expect_identical(tail(raw, length(robj)), robj)
  back <- torch_load(raw)
  expect_equal(as_array(back$inner$w2), c(1, 2))
  expect_equal(back[c("n", "inner")][[2]]$s, "text")
})

test_that("files go to and come from connections, as luz saves its models", {
  x <- torch_randn(3)
  con <- rawConnection(raw(), open = "wr")
  torch_save(x, con)
  bytes <- rawConnectionValue(con)
  close(con)
  con <- rawConnection(bytes)
  expect_equal(as_array(torch_load(con)), as_array(x))
  close(con)
  f <- tempfile()
  con <- file(f, open = "wb")
  torch_save(list(a = x), con)
  close(con)
  expect_equal(as_array(torch_load(file(f))$a), as_array(x))
})

test_that("modules round-trip: their fields, children, parameters, buffers and mode", {
  Net <- nn_module("Net",
    initialize = function(k) {
      self$k <- k
      self$fc <- nn_linear(3, 2)
      self$body <- nn_sequential(nn_relu(), nn_linear(2, 2))
      self$counts <- nn_buffer(torch_tensor(c(1, 2)))
      # (not in the state dict: kept beside it in the file)
      self$half <- nn_buffer(torch_tensor(0.5), persistent = FALSE)
    },
    forward = function(x) self$body(self$fc(x)) * self$k * self$half + self$counts$sum()
  )
  net <- Net(k = 3)
  net$eval()
  back <- torch_load(torch_serialize(net))
  x <- torch_randn(4, 3)
  expect_equal(as_array(back(x)), as_array(net(x)))
  expect_equal(back$k, 3)
  expect_false(back$training)
  expect_equal(names(back$state_dict()), names(net$state_dict()))
  expect_true(inherits(back, "Net"))
  expect_true(back$fc$weight$requires_grad)
  back$fc$weight$requires_grad_(FALSE)
  expect_true(net$fc$weight$requires_grad)  # (a copy, not the same parameters)
})

test_that("datasets round-trip, their tensors assigned to their fields", {
  ds <- dataset(
    initialize = function() self$x <- torch_randn(5, 2),
    .getitem = function(i) self$x[i, ],
    .length = function() 5
  )()
  expect_equal(names(ds$state_dict()), "x")
  back <- torch_load(torch_serialize(ds))
  expect_equal(as_array(back[2]), as_array(ds[2]))
})

test_that("a module R torch saved loads when its class is defined in the session", {
  # R torch's own R6 layout (its R/nn.R): the module's children, parameters and
  # buffers in private lists, its mode in private$training_
  rtorch_instance <- function(classes, fields, parameters = list(), buffers = list(),
                              children = list()) {
    Gen <- R6::R6Class(classes[[1]], lock_objects = FALSE,
      public = c(list(.classes = classes, forward = function(...) stop("R torch's code")),
                 fields),
      private = list(training_ = TRUE, parameters_ = parameters, buffers_ = buffers,
                     modules_ = children, non_persistent_buffers_ = character()))
    inst <- Gen$new()
    f <- inst$forward
    attr(f, "class") <- classes
    attr(f, "module") <- inst
    f
  }
  linear <- rtorch_instance(c("nn_linear", "nn_module"),
                            list(in_features = 3, out_features = 2),
                            parameters = list(weight = NULL, bias = NULL))
  saved <- rtorch_instance(c("SavedNet", "nn_module"), list(scale = 10),
                           buffers = list(shift = NULL), children = list(fc = linear))
  state <- list(fc.weight = torch_randn(2, 3), fc.bias = torch_randn(2),
                shift = torch_tensor(c(1, 2)))
  f <- tempfile()
  torch:::.save_file(f, "module", state, saved)  # (torch_save()'s writer, R torch's object)
  expect_error(torch_load(f), "class 'SavedNet' is not defined in this session")
  SavedNet <- nn_module("SavedNet",
    initialize = function() stop("not run on loading"),
    forward = function(x) self$fc(x) * self$scale + self$shift
  )
  assign("SavedNet", SavedNet, envir = globalenv())
  on.exit(rm("SavedNet", envir = globalenv()))
  net <- torch_load(f)
  x <- torch_randn(4, 3)
  expect_equal(as_array(net(x)),
               as_array((x$matmul(state$fc.weight$t()) + state$fc.bias) * 10 + state$shift),
               tolerance = 1e-6)
  expect_equal(names(net$state_dict()), c("shift", "fc.weight", "fc.bias"))  # (own first)
})

test_that("plain safetensors files load as named tensors, with R torch's warning", {
  f <- tempfile()
  writeBin(safetensors_bytes("a", torch_tensor(c(1L, 2L)), "I64", "{}"), f)  # (no __r__ in it)
  expect_warning(out <- torch_load(f), "File not saved with `torch_save()`", fixed = TRUE)
  expect_equal(names(out), "a")
  expect_equal(as_array(out$a), c(1, 2))
})

test_that("R torch's older RDS files: coro's exhausted() and lists", {
  expect_true(coro::is_exhausted(torch_load(torch_serialize(coro::exhausted()))))
  f <- tempfile()
  saveRDS(list(values = list(a = 1, b = list(c = "x")), type = "list", version = 2), f)
  expect_equal(torch_load(f), list(a = 1, b = list(c = "x")))
})

test_that("private$modules_, parameters_ and buffers_ hold a module's own, as in R torch", {
  # (torchvision's sequential modules forward through private$modules_, its
  # resnet initialises its layers by it)
  chain <- nn_module(
    initialize = function(...) {
      layers <- list(...)
      for (i in seq_along(layers)) self$add_module(i - 1, layers[[i]])
      self$w <- nn_parameter(torch_ones(2))
      self$b <- nn_buffer(torch_zeros(1))
      self$seen <- names(private$modules_)
    },
    forward = function(x) {
      for (m in private$modules_) x <- m(x)
      x
    },
    own = function() list(names(private$parameters_), names(private$buffers_)),
    spoil = function() private$modules_[["x"]] <- nn_relu()
  )
  m <- chain(nn_linear(3, 4), nn_relu(), nn_linear(4, 2))
  expect_equal(m$seen, c("0", "1", "2"))
  x <- torch_randn(5, 3)
  expect_equal(as_array(m(x)), as_array(m[["2"]](m[["1"]](m[["0"]](x)))))
  expect_equal(m$own(), list("w", "b"))
  expect_error(m$spoil(), "private\\$modules_ can't be modified")
  # a clone forwards through its own layers
  copy <- m$clone(deep = TRUE)
  with_no_grad(copy[["0"]]$weight$zero_())
  expect_equal(as_array(copy(x)), as_array(copy[["2"]](copy[["1"]](copy[["0"]](x)))))
  expect_false(isTRUE(all.equal(as_array(copy(x)), as_array(m(x)))))
})

test_that("a child's name may hold dots, as R torch allows (torchvision's maxvit: \"stem.0\")", {
  m <- nn_sequential("stem.0" = nn_sequential("0" = nn_linear(2, 3), "1" = nn_relu()),
                     "stem.1" = nn_gru(3, 2))
  expect_equal(names(m$children), c("stem.0", "stem.1"))
  keys <- c("stem.0.0.weight", "stem.0.0.bias", "stem.1.weight_ih_l1", "stem.1.weight_hh_l1",
            "stem.1.bias_ih_l1", "stem.1.bias_hh_l1")
  expect_equal(names(m$state_dict()), keys)
  state <- lapply(m$state_dict(), function(t) t + 1)
  m$load_state_dict(state)
  expect_equal(as_array(m[["stem.0"]][["0"]]$bias), as_array(state[["stem.0.0.bias"]]))
  expect_error(nn_module(initialize = function() self$add_module("", nn_relu()))(), "non-empty")
})
