# A 3,000-step R training loop (linear regression through an autograd_function),
# printing resident memory every 500 steps: `rtorch-py run tests/r/bench-memory.R`.
library(torch)
rss_mb <- function() {
  line <- grep("^VmRSS:", readLines("/proc/self/status"), value = TRUE)
  as.numeric(gsub("[^0-9]", "", line)) / 1024
}
scale <- autograd_function(
  forward = function(ctx, x, k) {
    ctx$save_for_backward(k = k)
    x * k
  },
  backward = function(ctx, g) list(x = g * ctx$saved_variables$k)
)
torch_manual_seed(1)
x <- torch_randn(64, 10)
y <- x$mm(torch_randn(10, 1))
w <- torch_zeros(10, 1, requires_grad = TRUE)
b <- torch_zeros(1, requires_grad = TRUE)
t0 <- proc.time()[["elapsed"]]
for (i in 1:3000) {
  pred <- scale(x$mm(w) + b, 1)
  loss <- ((pred - y)^2)$mean()
  loss$backward()
  with_no_grad({
    w$sub_(0.05 * w$grad)
    b$sub_(0.05 * b$grad)
    w$grad$zero_()
    b$grad$zero_()
  })
  if (i %% 500 == 0) cat(sprintf("step %4d  loss %.6f  RSS %.1f MB\n", i, loss$item(), rss_mb()))
}
cat(sprintf("%.2f ms/step\n", (proc.time()[["elapsed"]] - t0) / 3000 * 1000))
