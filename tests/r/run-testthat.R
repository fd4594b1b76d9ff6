# Runs one testthat file (its path in RTORCH_TEST_FILE) through the shim and
# exits non-zero when any expectation failed or errored.
library(testthat)
library(torch)
path <- Sys.getenv("RTORCH_TEST_FILE")
res <- as.data.frame(test_file(path, reporter = "summary", stop_on_failure = FALSE))
cat(sprintf("\n[rtorch] %d tests, %d expectations, %d failed, %d errors\n",
            nrow(res), sum(res$nb), sum(res$failed), sum(res$error)))
if (sum(res$failed) + sum(res$error) > 0) quit(status = 1)
