# Where the shim's Python comes from.
#
# Inside a Python process (`rtorch-py run`, rpy2, Jupyter's %%R) the Python C
# API is already in the process and the shim's library (src/bridge.c) loads
# as it is. In plain R (Rscript, the R console, RStudio, knitr, an R Jupyter
# kernel) it is not: the package then finds a Python that has rtorch_py,
# loads its libpython with global symbols and starts it in this process
# (.start_python, called first thing in .onLoad). Either way an R op is one
# .External into the same engine.
#
# Which Python, first found wins:
#   options(rtorch.python = "/path/to/.venv/bin/python")
#   Sys.setenv(RTORCH_PYTHON = "/path/to/.venv/bin/python")
#   the Python the package was installed with (recorded by ./configure)

# The native routines, bound by .start_python (the library is loaded by hand,
# not by useDynLib, because in plain R Python must be loaded first).
C_init <- C_call <- C_invoke <- C_getattr <- C_box <- C_address <- C_export_native <-
  C_start_python <- C_python_running <- C_python_without_rtorch <- C_method_init <-
  C_method <- NULL

.start_python <- function(libname, pkgname) {
  ns <- topenv()
  dll <- tryCatch(library.dynam(pkgname, pkgname, libname), error = function(e) e)
  started <- FALSE
  if (inherits(dll, "error")) {
    # The Python C API is not in this process: plain R. Start Python here.
    py <- .find_python(libname, pkgname)
    dyn.load(py$libpython, local = FALSE, now = TRUE)
    dll <- library.dynam(pkgname, pkgname, libname)
    started <- TRUE
  }
  routines <- getDLLRegisteredRoutines(dll)
  for (r in c(routines$.Call, routines$.External)) assign(r$name, r, envir = ns)
  if (!started && !.Call(C_python_running)) {
    # libpython is in the process (loaded by something else) but not started
    py <- .find_python(libname, pkgname)
    started <- TRUE
  }
  if (started) {
    .Call(C_start_python, py$executable)
  } else if (!is.null(other <- .Call(C_python_without_rtorch))) {
    stop("torch: a Python is already running in this R session ('", other, "', started ",
         "by reticulate or another package) and it cannot import rtorch_py. Load torch ",
         "first in a new session, or make that package use rtorch-py's Python (for ",
         "reticulate: RETICULATE_PYTHON=/path/to/rtorch-py/.venv/bin/python).", call. = FALSE)
  }
  invisible(started)
}

.python_help <- paste0(
  "Set the environment variable RTORCH_PYTHON (or options(rtorch.python = ...)) ",
  "to the python of the environment where rtorch-py is installed, for example ",
  "RTORCH_PYTHON=/path/to/rtorch-py/.venv/bin/python, or reinstall the R ",
  "package with `rtorch-py install-r`.")

# The Python to start: list(executable, libpython), or a clear error.
.find_python <- function(libname, pkgname) {
  recorded <- file.path(libname, pkgname, "python")
  recorded <- if (file.exists(recorded)) readLines(recorded, warn = FALSE) else character()
  candidates <- list(
    list(getOption("rtorch.python", ""), "options(rtorch.python)"),
    list(Sys.getenv("RTORCH_PYTHON"), "RTORCH_PYTHON"),
    list(if (length(recorded)) recorded[[1]] else "", "the Python recorded at install"))
  built_for <- if (length(recorded) >= 2) recorded[[2]] else ""
  for (cand in candidates) {
    exe <- cand[[1]]
    from <- cand[[2]]
    if (!nzchar(exe)) next
    if (!file.exists(exe)) {
      stop("torch: no Python at '", exe, "' (from ", from, "). ", .python_help, call. = FALSE)
    }
    # absolute, but not through symlinks: a virtualenv's bin/python is a link
    # whose own place is what makes it that environment's Python
    exe <- file.path(normalizePath(dirname(exe)), basename(exe))
    info <- .python_info(exe, from)
    if (nzchar(built_for) && info$version != built_for) {
      stop("torch: this package was built for Python ", built_for, " but ", from,
           " is Python ", info$version, " ('", exe, "'). ", .python_help, call. = FALSE)
    }
    return(info)
  }
  stop("torch (the rtorch-py shim) needs Python with rtorch_py and found none. ",
       .python_help, call. = FALSE)
}

# Ask the Python itself: its version, its shared libpython, whether it has
# rtorch_py (without importing it: a fraction of a second).
.python_info <- function(exe, from) {
  code <- paste(
    "import importlib.util, os, sys, sysconfig",
    "v = sysconfig.get_config_var",
    "dirs = [v('LIBDIR'), os.path.join(sys.base_prefix, 'lib'), v('LIBPL'),",
    "        os.path.join('/usr/lib', v('MULTIARCH') or '')]",
    "names = [v('INSTSONAME'), v('LDLIBRARY'), 'libpython%d.%d.so' % sys.version_info[:2]]",
    "libs = [os.path.join(d, n) for d in dirs if d for n in names",
    "        if n and ('.so' in n or n.endswith('.dylib'))]",
    "print('%d.%d' % sys.version_info[:2])",
    "print(next((p for p in libs if os.path.exists(p)), ''))",
    "sys.path.pop(0)  # the current directory, which the started Python won't see",
    "print(importlib.util.find_spec('rtorch_py') is not None)",
    sep = "\n")
  out <- suppressWarnings(tryCatch(
    system2(exe, c("-c", shQuote(code)), stdout = TRUE, stderr = TRUE),
    error = function(e) conditionMessage(e)))
  status <- attr(out, "status")
  if (length(out) != 3 || (!is.null(status) && status != 0)) {
    stop("torch: could not run the Python '", exe, "' (from ", from, "): ",
         paste(out, collapse = "\n"), "\n", .python_help, call. = FALSE)
  }
  if (!nzchar(out[[2]])) {
    stop("torch: the Python '", exe, "' (from ", from, ") has no shared libpython, ",
         "which R needs to load it: use a Python built with --enable-shared (Debian's ",
         "python3 with libpython3-dev has one). ", .python_help, call. = FALSE)
  }
  if (out[[3]] != "True") {
    stop("torch: the Python '", exe, "' (from ", from, ") cannot import rtorch_py. ",
         .python_help, call. = FALSE)
  }
  list(executable = exe, version = out[[1]], libpython = out[[2]])
}
