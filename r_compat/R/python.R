# Where the shim's Python comes from.
#
# Inside a Python process (`rtorch-py run`, rpy2, Jupyter's %%R) the Python C
# API is already in the process and the shim's library (src/) loads
# as it is. In plain R (Rscript, the R console, RStudio, knitr, an R Jupyter
# kernel) it is not: the package then finds a Python that has rtorch_py,
# loads its libpython with global symbols and starts it in this process
# (.start_python, called first thing in .onLoad). Either way an R op is one
# .External into the same engine.
#
# Which Python, first found wins:
#   options(rtorch.python = "/path/to/.venv/bin/python")
#   Sys.setenv(RTORCH_PYTHON = "/path/to/.venv/bin/python")
#   the engine install_torch() made (a virtual environment in torch_install_path())
#   the Python the package was installed with (recorded by ./configure), if it has
#   rtorch_py (`rtorch-py install-r`, or R CMD INSTALL from the checkout)
# A Python named by the option or the variable must work (else loading fails,
# saying why). With neither set and no engine found, the package loads without
# one, as R torch does before install_torch(): torch_is_installed() is FALSE and
# every torch function stops, saying to run install_torch() (R/install-torch.R).

# The native routines, bound by .start_python (the library is loaded by hand,
# not by useDynLib, because in plain R Python must be loaded first).
C_init <- C_call <- C_invoke <- C_getattr <- C_box <- C_address <- C_export_native <-
  C_start_python <- C_python_running <- C_python_without_rtorch <- C_method_init <-
  C_method <- C_closure <- C_frame_call <- C_nn_dollar <- NULL

# This session's engine: running (TRUE once the engine answers), python (its
# executable, or NA inside a Python process), from (where it was found) and, when
# none was, problem (why).
.engine <- new.env(parent = emptyenv())
.engine$running <- FALSE

# Starts (or joins) the engine; FALSE when there is none to start.
.start_python <- function(libname, pkgname) {
  ns <- topenv()
  dll <- tryCatch(library.dynam(pkgname, pkgname, libname), error = function(e) e)
  started <- FALSE
  if (inherits(dll, "error")) {
    # The Python C API is not in this process: plain R. Start Python here.
    py <- .find_python(libname, pkgname)
    if (is.null(py)) return(FALSE)
    dyn.load(py$libpython, local = FALSE, now = TRUE)
    dll <- library.dynam(pkgname, pkgname, libname)
    started <- TRUE
  }
  routines <- getDLLRegisteredRoutines(dll)
  for (r in c(routines$.Call, routines$.External)) assign(r$name, r, envir = ns)
  if (!started && !.Call(C_python_running)) {
    # libpython is in the process (loaded by something else) but not started
    py <- .find_python(libname, pkgname)
    if (is.null(py)) return(FALSE)
    started <- TRUE
  }
  if (started) {
    .Call(C_start_python, py$executable)
    .engine$python <- py$executable
    .engine$from <- py$from
  } else if (!is.null(other <- .Call(C_python_without_rtorch))) {
    stop("torch: a Python is already running in this R session ('", other, "', started ",
         "by reticulate or another package) and it cannot import rtorch_py. Load torch ",
         "first in a new session, or make that package use rtorch-py's Python (for ",
         "reticulate: RETICULATE_PYTHON=/path/to/rtorch-py/.venv/bin/python).", call. = FALSE)
  } else {
    .engine$python <- NA_character_
    .engine$from <- "the Python process R runs in"
  }
  .engine$running <- TRUE
  TRUE
}

# (said when the Python the option or RTORCH_PYTHON names does not work)
.python_help <- paste0(
  "Set the environment variable RTORCH_PYTHON (or options(rtorch.python = ...)) to the ",
  "python of an environment where rtorch-py is installed, for example ",
  "RTORCH_PYTHON=/path/to/rtorch-py/.venv/bin/python, or unset both to use the engine ",
  "install_torch() sets up.")

# What ./configure recorded: the Python the C part was built for, and its version.
.recorded_python <- function(libname = dirname(system.file(package = "torch")),
                             pkgname = "torch") {
  file <- file.path(libname, pkgname, "python")
  rec <- if (file.exists(file)) readLines(file, warn = FALSE) else character()
  list(executable = if (length(rec)) rec[[1]] else "",
       version = if (length(rec) >= 2) rec[[2]] else "")
}

# The Python to start: list(executable, libpython, version, from); NULL when none
# is set and none found (why: .engine$problem); an error when the one the option
# or RTORCH_PYTHON names does not work.
.find_python <- function(libname, pkgname) {
  recorded <- .recorded_python(libname, pkgname)
  engine <- .engine_python(libname, pkgname)
  candidates <- list(
    list(getOption("rtorch.python", ""), "options(rtorch.python)", "set"),
    list(Sys.getenv("RTORCH_PYTHON"), "RTORCH_PYTHON", "set"),
    list(if (file.exists(engine)) engine else "", "install_torch()", "engine"),
    list(recorded$executable, "the Python recorded at install", "recorded"))
  problems <- character()
  for (cand in candidates) {
    exe <- cand[[1]]
    from <- cand[[2]]
    kind <- cand[[3]]
    if (!nzchar(exe)) next
    info <- .python_info(exe, from, recorded$version, need_rtorch = kind != "recorded")
    # (the Python a package from the tarball was built with has no rtorch_py:
    # install_torch() makes the engine from it)
    if (is.list(info) && kind == "recorded" && !info$rtorch) next
    if (is.list(info)) return(c(info, from = from))
    if (kind == "set") stop(info, " ", .python_help, call. = FALSE)
    problems <- c(problems, info)
  }
  .engine$problem <- paste(problems, collapse = " ")
  NULL
}

# Ask the Python itself: its version, its shared libpython, whether it has
# rtorch_py (without importing it: a fraction of a second). A list, or the
# problem as a sentence.
.python_info <- function(exe, from, built_for = "", need_rtorch = TRUE) {
  if (!file.exists(exe)) return(paste0("torch: no Python at '", exe, "' (from ", from, ")."))
  # absolute, but not through symlinks: a virtualenv's bin/python is a link
  # whose own place is what makes it that environment's Python
  exe <- file.path(normalizePath(dirname(exe)), basename(exe))
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
    return(paste0("torch: could not run the Python '", exe, "' (from ", from, "): ",
                  paste(out, collapse = "\n"), "\n"))
  }
  if (!nzchar(out[[2]])) {
    return(paste0("torch: the Python '", exe, "' (from ", from, ") has no shared libpython, ",
                  "which R needs to load it: use a Python built with --enable-shared ",
                  "(Debian's python3 with libpython3-dev has one)."))
  }
  if (nzchar(built_for) && out[[1]] != built_for) {
    return(paste0("torch: this package was built for Python ", built_for, " but ", from,
                  " is Python ", out[[1]], " ('", exe, "')."))
  }
  if (need_rtorch && out[[3]] != "True") {
    return(paste0("torch: the Python '", exe, "' (from ", from, ") cannot import rtorch_py."))
  }
  list(executable = exe, version = out[[1]], libpython = out[[2]], rtorch = out[[3]] == "True")
}
