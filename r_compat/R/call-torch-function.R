# call_torch_function(): any torch_* function of the package by name, exported
# or not (R torch's escape hatch to its internal functions), with R torch's
# warning unless quiet.

.call_torch_function_warning <- paste(
  "Because this function allows access to unexported functions, please use with caution, and",
  "            only if you are sure know what you are doing. Unexported functions will expect inputs that",
  "            are more C++-like than R-like. For example, they will expect all indexes to be 0-based instead",
  "            of 1-based. In addition unexported functions may be subject to removal from the API without",
  "            warning. Set quiet = TRUE to silence this warning.", sep = "\n")

call_torch_function <- function(name, ..., quiet = FALSE) {
  # (`!!!` splices a list of arguments where rlang is installed, as in R torch)
  args <- if (requireNamespace("rlang", quietly = TRUE)) rlang::list2(...) else list(...)
  if (!quiet) warning(.call_torch_function_warning)
  if (!grepl("^torch_", name)) {
    .value_error("Only functions prefixed with 'torch_' are available from this function.")
  }
  f <- get0(name, envir = topenv(), mode = "function", inherits = FALSE)
  if (is.null(f)) {
    .value_error(sprintf(paste("No function named %s can be found. Please check your spelling",
                               "and that the desired function exists."), name))
  }
  do.call(f, args)
}
