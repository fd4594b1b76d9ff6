# R torch's installer functions. R torch downloads libtorch; the shim's engine is
# rtorch-py's Python package, which install_torch() installs into a virtual
# environment of its own (the engine) in torch_install_path(), made from the
# Python the package was built for (recorded by ./configure). The tarball that
# `rtorch-py build-r` makes carries what it installs (inst/engine: rtorch-py's
# wheel and the locked versions of its runtime dependencies); pip fetches those
# dependencies, and reads its own settings from the environment (PIP_INDEX_URL,
# PIP_FIND_LINKS, PIP_NO_INDEX, ...), so an offline machine can point it at a
# directory of wheels.

# Work without an engine (the rest stops, saying to run install_torch()).
.installer_names <- c("install_torch", "install_torch_sitrep", "torch_is_installed",
                      "torch_install_path", "get_install_libs_url", "install_torch_from_file")

install_torch <- function(reinstall = FALSE, ..., .inform_restart = TRUE) {
  if (.engine$running && !identical(.engine$from, "install_torch()")) {
    message("torch: the engine in use is ", .engine_label(), "; nothing to install")
    return(invisible(TRUE))
  }
  path <- torch_install_path(check_writable = TRUE)
  env <- file.path(path, "venv")
  python <- .engine_python()
  if (!reinstall && file.exists(python) && is.list(.python_info(python, "install_torch()"))) {
    message("torch: the engine is already installed in ", env,
            " (install_torch(reinstall = TRUE) installs it again)")
    return(invisible(TRUE))
  }
  files <- system.file("engine", package = "torch")
  wheel <- list.files(files, pattern = "^rtorch_py-.*[.]whl$", full.names = TRUE)
  requirements <- file.path(files, "requirements.txt")
  if (length(wheel) != 1 || !file.exists(requirements)) {
    .install_error("this torch package carries no engine to install (it was installed from ",
                   "rtorch-py's sources, not from the tarball `rtorch-py build-r` makes). Set ",
                   "RTORCH_PYTHON to the python of an environment that has rtorch-py, or ",
                   "install the shim with `rtorch-py install-r`.")
  }
  base <- .base_python()
  message("torch: creating a Python ", base$version, " environment for rtorch-py's engine in ",
          env, " (from ", base$executable, ")")
  unlink(env, recursive = TRUE)
  dir.create(path, recursive = TRUE, showWarnings = FALSE)
  ld <- .python_library_path(base$executable)
  out <- .run(base$executable, c("-m", "venv", env), ld)
  if (!identical(attr(out, "status"), NULL)) {
    unlink(env, recursive = TRUE)
    .install_error("creating the environment failed:\n", paste(out, collapse = "\n"))
  }
  pins <- grep("^[A-Za-z]", readLines(requirements, warn = FALSE), value = TRUE)
  message("torch: installing rtorch-py ", sub("^rtorch_py-([^-]+)-.*", "\\1", basename(wheel)),
          " and ", paste(pins, collapse = ", "), " with pip (its output follows)")
  status <- system2(python, c("-m", "pip", "install", "--disable-pip-version-check",
                              "--progress-bar", "off", "-r", shQuote(requirements),
                              shQuote(wheel)), env = ld)
  if (status != 0) {
    unlink(env, recursive = TRUE)
    .install_error("pip could not install the engine (exit status ", status, ", its output is ",
                   "above). pip reads its settings from PIP_* environment variables (for ",
                   "example PIP_INDEX_URL, or PIP_NO_INDEX=1 with PIP_FIND_LINKS=a directory ",
                   "of wheels).")
  }
  info <- .python_info(python, "install_torch()", base$version)
  if (!is.list(info)) .install_error("the new engine does not work: ", info)
  message("torch: the engine is installed: Python ", info$version, " at ", python)
  if (.inform_restart) message("torch: restart R to use it (library(torch) starts it)")
  invisible(TRUE)
}

# Where install_torch() puts the engine: TORCH_HOME if set (as R torch), else the
# package's own directory if writable (as R torch), else R's user data directory
# for torch.
torch_install_path <- function(check_writable = FALSE) {
  path <- .install_path()
  if (check_writable) {
    dir.create(path, recursive = TRUE, showWarnings = FALSE)
    if (file.access(path, 2) != 0) {
      .install_error("cannot write into ", path, ": set TORCH_HOME to a directory where ",
                     "install_torch() may install the engine")
    }
  }
  normalizePath(path, mustWork = FALSE)
}

.install_path <- function(pkgdir = system.file(package = "torch")) {
  home <- Sys.getenv("TORCH_HOME")
  if (nzchar(home)) return(path.expand(home))
  if (nzchar(pkgdir) && file.access(pkgdir, 2) == 0) return(pkgdir)
  tools::R_user_dir("torch", "data")
}

# The engine's python (it may not exist yet).
.engine_python <- function(libname = NULL, pkgname = "torch") {
  pkgdir <- if (is.null(libname)) system.file(package = "torch") else file.path(libname, pkgname)
  file.path(.install_path(pkgdir), "venv", "bin", "python")
}

# Is the engine there: running in this session, or installed where it is found?
torch_is_installed <- function(recheck = FALSE) {
  if (.engine$running) return(TRUE)
  python <- .engine_python()
  file.exists(python) && is.list(.python_info(python, "install_torch()",
                                               .recorded_python()$version))
}

# The Python the package's C part was built for: the one the engine is made from.
.base_python <- function() {
  rec <- .recorded_python()
  if (!nzchar(rec$executable)) {
    .install_error("the package records no Python it was built for: reinstall it")
  }
  info <- .python_info(rec$executable, "the Python recorded at install", rec$version,
                       need_rtorch = FALSE)
  if (!is.list(info)) {
    .install_error(info, " Reinstall the torch package with a Python >= 3.11 that has its ",
                   "C headers and a shared libpython (it uses python3 on the PATH, or ",
                   "RTORCH_PYTHON).")
  }
  probe <- .run(info$executable, c("-c", shQuote("import venv, ensurepip")))
  if (!identical(attr(probe, "status"), NULL)) {
    .install_error("the Python ", info$version, " at ", info$executable, " cannot make ",
                   "virtual environments with pip (its modules venv and ensurepip are ",
                   "missing): install them (Debian/Ubuntu: apt-get install python",
                   info$version, "-venv)")
  }
  info
}

.run <- function(command, args, env = character()) {
  suppressWarnings(tryCatch(system2(command, args, stdout = TRUE, stderr = TRUE, env = env),
                            error = function(e) structure(conditionMessage(e), status = 127L)))
}

# For a Python started from R: R's start-up puts its own library directories first
# on LD_LIBRARY_PATH, where another build's libpython can shadow the Python's own
# (a pyenv Python beside Debian's libpython3.x: its _ssl module then fails to load,
# and pip cannot reach an https index). The Python's own LIBDIR goes first.
.python_library_path <- function(python) {
  libdir <- .run(python, c("-c", shQuote("import sysconfig; print(sysconfig.get_config_var('LIBDIR') or '')")))
  if (!is.null(attr(libdir, "status")) || !length(libdir) || !nzchar(libdir[[1]])) {
    return(character())
  }
  old <- Sys.getenv("LD_LIBRARY_PATH")
  paste0("LD_LIBRARY_PATH=", shQuote(paste(c(libdir[[1]], if (nzchar(old)) old), collapse = ":")))
}

.install_error <- function(...) .error_of_class("torch_install_error", "install_torch(): ", ...)

# What every torch function says before install_torch() has run.
.engine_missing <- function() {
  found <- if (nzchar(.engine$problem)) paste0(": ", .engine$problem) else ""
  stop(structure(class = c("torch_not_installed", "error", "condition"), list(
    message = paste0("torch: rtorch-py's Python engine is not installed (no Python with ",
                     "rtorch_py found", found, "). Run install_torch(), then restart R; or ",
                     "set RTORCH_PYTHON (or options(rtorch.python = ...)) to the python of an ",
                     "environment where rtorch-py is installed."),
    call = sys.call(-1))))
}

.engine_label <- function() {
  if (is.na(.engine$python)) return(.engine$from)
  paste0("the Python at ", .engine$python, " (from ", .engine$from, ")")
}

get_install_libs_url <- function(version = NA, type = NA) {
  stop("rtorch-py needs no libtorch or lantern libraries: there is nothing to download",
       call. = FALSE)
}

install_torch_from_file <- function(version = NA, type = NA, libtorch, liblantern, ...) {
  stop("install_torch_from_file() is deprecated (as in R torch); rtorch-py needs no libtorch: ",
       "install_torch() installs its engine", call. = FALSE)
}

# What is installed where, and whether this session runs it.
install_torch_sitrep <- function(verbose = TRUE) {
  rec <- .recorded_python()
  python <- if (.engine$running) .engine$python else NA_character_
  from <- if (.engine$running) .engine$from else NA_character_
  if (!.engine$running && torch_is_installed()) {
    python <- .engine_python()
    from <- "install_torch()"
  }
  versions <- list(rtorch_py = NA_character_, numpy = NA_character_, python = NA_character_)
  exe <- if (is.na(python)) NULL else python
  if (.engine$running && is.na(python)) exe <- NULL  # the host process: ask it below
  if (!is.null(exe)) {
    out <- .run(exe, c("-c", shQuote(paste(
      "import sys, importlib.metadata as m",
      "print('%d.%d.%d' % sys.version_info[:3])",
      "print(m.version('rtorch-py'))", "print(m.version('numpy'))", sep = "\n"))))
    if (is.null(attr(out, "status")) && length(out) == 3) {
      versions <- list(rtorch_py = out[[2]], numpy = out[[3]], python = out[[1]])
    }
  }
  info <- list(
    torch = as.character(utils::packageVersion("torch")),
    package_path = normalizePath(system.file(package = "torch"), mustWork = FALSE),
    built_for = rec,
    install_path = torch_install_path(),
    installed = torch_is_installed(),
    running = .engine$running,
    python = python, from = from,
    python_version = versions$python, rtorch_py = versions$rtorch_py, numpy = versions$numpy,
    problem = if (is.null(.engine$problem) || !nzchar(.engine$problem)) NA_character_ else
      .engine$problem)
  if (verbose) {
    line <- function(...) cat(..., "\n", sep = "")
    line("torch ", info$torch, " (rtorch-py's shim; its engine is Python on NumPy, no libtorch)")
    line("  package:        ", info$package_path)
    line("  built for:      Python ", rec$version, " (", rec$executable, ")")
    line("  install path:   ", info$install_path, if (nzchar(Sys.getenv("TORCH_HOME")))
      " (TORCH_HOME)")
    if (!is.na(python)) {
      line("  engine:         ", python, " (from ", from, ")")
      if (!is.na(info$rtorch_py)) {
        line("                  Python ", info$python_version, ", rtorch-py ", info$rtorch_py,
             ", NumPy ", info$numpy)
      }
    } else if (.engine$running) {
      line("  engine:         ", .engine$from)
    } else {
      line("  engine:         not installed: run install_torch()")
    }
    line("  in this session: ", if (.engine$running) "running" else if (info$installed)
      "not started (restart R to use it)" else "not available")
    if (!is.na(info$problem) && !info$installed) line("  why:            ", info$problem)
  }
  invisible(info)
}
