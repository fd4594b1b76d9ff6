# R torch's installer functions. The shim runs on NumPy and needs no libtorch:
# nothing to download or install; they answer as an installed R torch does.

install_torch <- function(reinstall = FALSE, ..., .inform_restart = TRUE) {
  invisible(TRUE)
}

torch_install_path <- function(check_writable = FALSE) {
  normalizePath(system.file(package = "torch"), mustWork = FALSE)
}

get_install_libs_url <- function(version = NA, type = NA) {
  stop("rtorch-py needs no libtorch or lantern libraries: there is nothing to download",
       call. = FALSE)
}

install_torch_from_file <- function(version = NA, type = NA, libtorch, liblantern, ...) {
  stop("install_torch_from_file() is deprecated (as in R torch); rtorch-py needs no libtorch, ",
       "so there is nothing to install", call. = FALSE)
}

install_torch_sitrep <- function(verbose = TRUE) {
  info <- list(
    torch = as.character(utils::packageVersion("torch")),
    backend = "rtorch-py (NumPy; no libtorch)",
    install_path = torch_install_path(),
    r = R.version.string
  )
  if (verbose) {
    for (nm in names(info)) cat(nm, ": ", info[[nm]], "\n", sep = "")
  }
  invisible(info)
}
