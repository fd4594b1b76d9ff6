# CUDA, MPS and the other accelerators, answered as R torch answers on a machine
# without them: the engine computes on the CPU (NumPy), with no MKL, MKL-DNN or
# OpenMP of libtorch's.

.no_cuda <- function(...) .runtime_error("CUDA is not available.")

cuda_is_available <- function() FALSE

cuda_device_count <- function() 0L

cuda_current_device <- function() -1L  # (libtorch's answer without a CUDA device)

cuda_synchronize <- function(device = NULL) .no_cuda()

cuda_get_device_capability <- function(device = cuda_current_device()) {
  if (device < 0 | device >= cuda_device_count()) {
    .value_error("device must be an integer between 0 and the number of devices minus 1")
  }
}

cuda_memory_stats <- function(device = cuda_current_device()) .no_cuda()

cuda_memory_summary <- function(device = cuda_current_device()) print(cuda_memory_stats(device))

cuda_runtime_version <- function() .no_cuda()

cuda_empty_cache <- function() invisible(NULL)  # nothing cached

cuda_record_memory_history <- function(enabled, context = "all", stacks = "all",
                                       max_entries = 1) .no_cuda()

cuda_memory_snapshot <- function() .no_cuda()

cuda_dump_memory_snapshot <- function(filepath) {
  snapshot <- cuda_memory_snapshot()
  con <- file(filepath, "wb")
  on.exit(close(con))
  writeBin(snapshot, con)
}

cuda_get_rng_state <- function(device = NULL) .no_cuda()

cuda_set_rng_state <- function(state, device = NULL) .no_cuda()

backends_cudnn_is_available <- function() FALSE

backends_cudnn_version <- function() .runtime_error("CuDNN is not available.")

backends_mps_is_available <- function() FALSE

backends_mps_synchronize <- function() .runtime_error("MPS is not available.")

backends_mkl_is_available <- function() FALSE

backends_mkldnn_is_available <- function() FALSE

backends_openmp_is_available <- function() FALSE

# The device new tensors are made on when none is given (cpu or meta here), for
# the calling function's frame, or for a block of code.
local_device <- function(device, ..., .env = parent.frame()) {
  previous <- .set_default_device(device)
  withr::defer(.set_default_device(previous), envir = .env)
}

with_device <- function(code, ..., device) {
  local_device(device)
  force(code)
}
