# Datasets, samplers and data loaders from R, with R torch's semantics
# (1-based indices, R6 objects, coro loops).

test_that("tensor_dataset and dataloader give batches in order", {
  x <- torch_tensor(matrix(1:30, ncol = 3, byrow = TRUE), dtype = torch_float())
  y <- torch_tensor(1:10)
  ds <- tensor_dataset(x, y)
  expect_s3_class(ds, "dataset")
  expect_length(ds, 10)
  expect_equal(as_array(ds[2][[1]]), c(4, 5, 6))
  expect_equal(as_array(ds[[3]][[2]]), 3L)
  dl <- dataloader(ds, batch_size = 4)
  expect_true(is_dataloader(dl))
  expect_length(dl, 3)
  it <- dataloader_make_iter(dl)
  b1 <- dataloader_next(it)
  expect_equal(as_array(b1[[2]]), 1:4)
  expect_equal(dim(b1[[1]]), c(4, 3))
  dataloader_next(it)
  b3 <- dataloader_next(it)
  expect_equal(dim(b3[[1]]), c(2, 3))     # the last, short batch keeps its dims
  expect_null(dataloader_next(it))
  expect_equal(dataloader_next(it, completed = "done"), "done")
})

test_that("shuffle gives a permutation fixed by torch_manual_seed", {
  ds <- tensor_dataset(torch_tensor(1:50))
  order_of <- function() {
    torch_manual_seed(1)
    unlist(lapply(coro::collect(dataloader(ds, batch_size = 8, shuffle = TRUE)),
                  function(b) as_array(b[[1]])))
  }
  a <- order_of()
  expect_equal(sort(a), 1:50)
  expect_false(identical(a, 1:50))
  expect_equal(order_of(), a)
  dl <- dataloader(ds, batch_size = 8, shuffle = TRUE, drop_last = TRUE)
  expect_length(dl, 6)
  expect_length(coro::collect(dl), 6)
})

test_that("custom datasets: .getitem is 1-based and collation follows R torch", {
  ds <- dataset(
    "squares",
    initialize = function(n) self$n <- n,
    .getitem = function(i) list(x = i * 1.5, i = i, even = i %% 2 == 0, v = c(i, i)),
    .length = function() self$n
  )
  d <- ds(5)
  expect_equal(class(d), c("squares", "dataset", "R6"))
  expect_equal(d[1]$i, 1L)
  b <- dataloader_next(dataloader_make_iter(dataloader(d, batch_size = 5)))
  expect_named(b, c("x", "i", "even", "v"))
  expect_true(b$x$dtype == torch_float())
  expect_true(b$i$dtype == torch_long())
  expect_true(b$even$dtype == torch_bool())
  expect_equal(as_array(b$i), 1:5)
  expect_equal(dim(b$v), c(5, 2))
})

test_that(".getbatch is used for whole batches", {
  calls <- 0
  ds <- dataset(
    initialize = function() NULL,
    .getbatch = function(idx) {
      calls <<- calls + 1
      expect_true(is.integer(idx))
      array(idx, dim = c(length(idx), 1))
    },
    .length = function() 7
  )
  out <- coro::collect(dataloader(ds(), batch_size = 3))
  expect_equal(calls, 3)
  expect_equal(as_array(out[[3]]), matrix(7, 1, 1))
})

test_that("coro::loop runs over a dataloader, with break", {
  dl <- dataloader(tensor_dataset(torch_randn(10, 2)), batch_size = 3)
  seen <- 0
  coro::loop(for (b in dl) {
    seen <- seen + 1
    if (seen == 2) break
  })
  expect_equal(seen, 2)
  total <- 0
  coro::loop(for (b in dl) total <- total + b[[1]]$size(1))
  expect_equal(total, 10)
  # as in coro, the loop variable keeps the last batch (luz's tests read it)
  expect_equal(b[[1]]$size(1), 1)
  expect_false(coro::is_exhausted(b))
})

test_that("as_iterator() of a loader gives the batches its iterator object gives", {
  ds <- tensor_dataset(torch_randn(10, 2), torch_tensor(1:10))
  read <- function(next_batch) {
    out <- list()
    repeat {
      b <- next_batch()
      if (coro::is_exhausted(b)) break
      out[[length(out) + 1L]] <- b
    }
    out
  }
  for (shuffle in c(FALSE, TRUE)) {
    dl <- dataloader(ds, batch_size = 3, shuffle = shuffle)
    torch_manual_seed(3)
    fast <- read(coro::as_iterator(dl))  # (the function alone: fast path)
    torch_manual_seed(3)
    plain <- read(dataloader_make_iter(dl)$.next)
    expect_equal(length(fast), 4)
    expect_equal(lapply(fast, function(b) as_array(b[[2]])), lapply(plain, function(b) as_array(b[[2]])))
  }
  # a loader whose .iter() was replaced is read through it
  dl <- dataloader(ds, batch_size = 3)
  unlockBinding(".iter", dl)
  dl$.iter <- function() list(.next = function() coro::exhausted())
  expect_equal(length(coro::collect(dl)), 0)
})

test_that("iterable datasets, samplers and subsets", {
  counter <- iterable_dataset(
    "counter",
    initialize = function(n) self$n <- n,
    .iter = function() {
      i <- 0
      function() {
        i <<- i + 1
        if (i > self$n) coro::exhausted() else i
      }
    }
  )
  out <- coro::collect(dataloader(counter(70), batch_size = 32))
  expect_equal(vapply(out, function(b) b$size(1), numeric(1)), c(32, 32, 6))
  expect_true(is.na(length(dataloader(counter(5), batch_size = 2))))

  ds <- tensor_dataset(torch_randn(100, 2))
  expect_length(SequentialSampler(ds), 100)
  expect_length(RandomSampler(ds, num_samples = 10), 10)
  expect_length(BatchSampler(RandomSampler(ds), 32, drop_last = FALSE), 4)
  it <- RandomSampler(ds, replacement = TRUE, num_samples = 20)$.iter()
  draws <- vapply(1:20, function(i) it(), numeric(1))
  expect_true(all(draws >= 1 & draws <= 100))
  expect_true(coro::is_exhausted(it()))

  sub <- dataset_subset(ds, 11:20)
  expect_length(sub, 10)
  expect_equal(as_array(sub[1][[1]]), as_array(ds[11][[1]]))
})

test_that("num_workers > 0: worker processes make the same batches, in order", {
  x <- torch_randn(10, 3)
  ds <- tensor_dataset(x, torch_tensor(1:10))
  seq_batches <- coro::collect(dataloader(ds, batch_size = 4))
  # (its tensors' fields warn, as R torch's: tested below)
  par_batches <- coro::collect(suppressWarnings(dataloader(ds, batch_size = 4, num_workers = 2)))
  expect_length(par_batches, 3)
  for (i in 1:3) {
    expect_equal_to_tensor(par_batches[[i]][[1]], seq_batches[[i]][[1]])
    expect_equal(as_array(par_batches[[i]][[2]]), as_array(seq_batches[[i]][[2]]))
  }
  who <- dataset(
    initialize = function() NULL,
    .getitem = function(i) list(worker = .worker_info$id, n = .worker_info$workers),
    .length = function() 6
  )
  out <- coro::collect(dataloader(who(), batch_size = 2, num_workers = 2))
  expect_equal(vapply(out, function(b) as_array(b$worker)[[1]], numeric(1)), c(1, 2, 1))
  expect_equal(as_array(out[[1]]$n), c(2L, 2L))
})

test_that("worker errors and time-outs reach the caller as runtime errors", {
  failing <- dataset(initialize = function() NULL, .getitem = function(i) stop("bad item 42"),
                     .length = function() 4)
  it <- dataloader_make_iter(dataloader(failing(), batch_size = 2, num_workers = 1))
  expect_error(dataloader_next(it), "bad item 42", class = "runtime_error")
  slow <- dataset(initialize = function() NULL,
                  .getitem = function(i) { Sys.sleep(2); 1 }, .length = function() 4)
  it <- dataloader_make_iter(dataloader(slow(), batch_size = 2, num_workers = 1, timeout = 50))
  expect_error(dataloader_next(it), "timed out", class = "runtime_error")
  expect_error(dataloader(slow(), num_workers = 1, worker_globals = "no_such_object"),
               "no_such_object", class = "runtime_error")
})

test_that("data that can't be batched gives a clear error", {
  ds <- dataset(initialize = function() NULL, .getbatch = function(i) "a", .length = function() 4)
  expect_error(dataloader_next(dataloader_make_iter(dataloader(ds(), batch_size = 2))),
               "Can't convert data of class", class = "value_error")
  ds2 <- dataset(initialize = function() NULL, .getitem = function(i) sum,
                 .length = function() 4)
  expect_error(dataloader_next(dataloader_make_iter(dataloader(ds2(), batch_size = 2))),
               "Can't collate")
})

test_that("a parallel dataloader warns, as R torch's, of each field holding tensors", {
  ds <- dataset(
    initialize = function() {
      self$x <- torch_randn(4, 2)
      self$z <- list(k = torch_tensor(1), 2)
      private$p <- torch_ones(1)
    },
    .getitem = function(i) self$x[i, ],
    .length = function() 4,
    active = list(a = function() torch_randn(1)),  # (not read: an active field)
    private = list(p = NULL)
  )()
  seen <- character()
  withCallingHandlers(dataloader(ds, batch_size = 2, num_workers = 2), warning = function(w) {
    seen <<- c(seen, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  expect_length(seen, 3)
  expect_true(all(grepl("parallel dataloader", seen)))
  expect_setequal(sub(".*Field '(.*)' holds one.$", "\\1", seen), c("x", "z$k", "p"))
  expect_no_warning(dataloader(ds, batch_size = 2))
  plain <- dataset(initialize = function() self$n <- 4, .getitem = function(i) i,
                   .length = function() 4)()
  expect_no_warning(dataloader(plain, batch_size = 2, num_workers = 2))
})
