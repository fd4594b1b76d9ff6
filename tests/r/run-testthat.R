# Runs one testthat file (commandArgs-free: the path comes in RTORCH_TEST_FILE)
# and exits non-zero when any expectation failed or errored.
library(testthat)
library(torch)
path <- Sys.getenv("RTORCH_TEST_FILE")
res <- as.data.frame(test_file(path, reporter = "summary", stop_on_failure = FALSE))
bad <- sum(res$failed) + sum(res$error) + sum(res$skipped & FALSE)
cat(sprintf("\n[rtorch] %d tests, %d expectations, %d failed, %d errors\n",
            nrow(res), sum(res$nb), sum(res$failed), sum(res$error)))
if (bad > 0) quit(status = 1)
