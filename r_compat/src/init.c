/* Set-up (the api module, Python started from plain R), the routines R
 * registers, and small helpers called from R. */
#include "bridge.h"

SEXP tag_sym, invoke_fn, default_class;
PyObject *api;
PyTypeObject *tensor_type, *namedlist_type;
PyObject *rerror_cls, *from_r_array, *error_message, *py_warnings, *py_steps_ended;
int ready = 0;
PyTypeObject *class_types[MAX_CLASSES];
SEXP class_values[MAX_CLASSES];
int n_classes = 0;

/* ------------------------------------------------------------------------
 * Set-up and small helpers called from R.
 */
static SEXP C_init(SEXP invoke, SEXP module) {
    if (!Py_IsInitialized())
        Rf_error("the torch shim: Python is not running in this process (load the "
                 "package with library(torch), which starts it)");
    PyGILState_STATE g = PyGILState_Ensure();
    if (!ready) {
        tag_sym = Rf_install("rtorch_py");
        api = PyImport_ImportModule(CHAR(STRING_ELT(module, 0)));
        if (!api) raise_python_error(g);
        if (PyType_Ready(&RObj_Type) < 0) raise_python_error(g);
        Py_INCREF(&RObj_Type);
        tensor_type = (PyTypeObject *)PyObject_GetAttrString(api, "Tensor");
        namedlist_type = (PyTypeObject *)PyObject_GetAttrString(api, "NamedList");
        rerror_cls = PyObject_GetAttrString(api, "RError");
        from_r_array = PyObject_GetAttrString(api, "_from_r_array");
        error_message = PyObject_GetAttrString(api, "_error_message");
        py_warnings = PyObject_GetAttrString(api, "_PENDING_WARNINGS");
        py_steps_ended = PyObject_GetAttrString(api, "_STEPS_ENDED");
        PyObject *classes = PyObject_GetAttrString(api, "R_CLASSES");
        if (!tensor_type || !namedlist_type || !rerror_cls || !from_r_array || !error_message ||
            !py_warnings || !PyList_Check(py_warnings) || !py_steps_ended ||
            !PyList_Check(py_steps_ended) || !classes)
            raise_python_error(g);
        /* R_CLASSES: list of (type, (class names...)); the tensor comes first */
        Py_ssize_t nc = PyList_Size(classes);
        if (nc > MAX_CLASSES) {  /* (never drop a class silently) */
            PyErr_Format(PyExc_RuntimeError, "R_CLASSES has %zd entries, more than the bridge "
                         "holds (MAX_CLASSES, %d)", nc, MAX_CLASSES);
            raise_python_error(g);
        }
        for (Py_ssize_t i = 0; i < nc; i++) {
            PyObject *pair = PyList_GET_ITEM(classes, i);
            PyObject *names = PyTuple_GET_ITEM(pair, 1);
            Py_ssize_t k = PyTuple_Size(names);
            SEXP cls = Rf_allocVector(STRSXP, k);
            R_PreserveObject(cls);
            for (Py_ssize_t j = 0; j < k; j++)
                SET_STRING_ELT(cls, j, Rf_mkChar(PyUnicode_AsUTF8(PyTuple_GET_ITEM(names, j))));
            MARK_NOT_MUTABLE(cls);
            class_types[n_classes] = (PyTypeObject *)PyTuple_GET_ITEM(pair, 0);
            Py_INCREF(class_types[n_classes]);
            class_values[n_classes++] = cls;
        }
        Py_DECREF(classes);
        default_class = Rf_mkString("rtorch_py_object");
        R_PreserveObject(default_class);
        MARK_NOT_MUTABLE(default_class);
        memory_init();
        ready = 1;
    }
    if (invoke_fn) R_ReleaseObject(invoke_fn);
    invoke_fn = invoke;
    R_PreserveObject(invoke_fn);
    PyGILState_Release(g);
    return R_NilValue;
}

/* Plain R (Rscript, the R console, knitr, an R Jupyter kernel): no Python in
 * the process yet.  R/python.R has loaded libpython with RTLD_GLOBAL (which
 * is how this library's Python symbols resolved) and calls this before
 * C_init.  Python starts as `exe` would (so a virtual environment's
 * site-packages, editable installs included, are found), rtorch_py.r.in_r
 * tunes the process as `rtorch-py run` does and routes Python warnings to
 * R's `warn`, then the GIL is released: every crossing takes it, as under
 * rpy2.  R keeps its signal handlers (Ctrl-C interrupts R, as usual). */
static SEXP C_start_python(SEXP exe) {
    if (Py_IsInitialized()) return Rf_ScalarLogical(FALSE);
    const char *path = CHAR(STRING_ELT(exe, 0));
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;
    config.buffered_stdio = 0; /* Python's prints interleave with R's output */
    config.parse_argv = 0;
    PyStatus st = PyConfig_SetBytesString(&config, &config.program_name, path);
    if (!PyStatus_Exception(st))
        st = PyConfig_SetBytesString(&config, &config.executable, path);
    if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st))
        Rf_error("could not start Python (%s): %s", path,
                 st.err_msg ? st.err_msg : "unknown error");
    PyObject *mod = PyType_Ready(&RObj_Type) < 0 ? NULL
                  : PyImport_ImportModule("rtorch_py.r.in_r");
    PyObject *res = mod ? PyObject_CallMethod(mod, "started", NULL) : NULL;
    Py_XDECREF(mod);
    if (!res) {
        /* raise_python_error releases the GIL state it is given: hand it the
         * main thread's, so that later calls can take the GIL again */
        PyEval_SaveThread();
        raise_python_error(PyGILState_Ensure());
    }
    Py_DECREF(res);
    PyEval_SaveThread();
    return Rf_ScalarLogical(TRUE);
}

/* Is an interpreter running in this process (the host's, or one started)? */
static SEXP C_python_running(void) { return Rf_ScalarLogical(Py_IsInitialized()); }

/* The running Python's sys.executable if it cannot import rtorch_py (e.g. one
 * that reticulate started first), else NULL. */
static SEXP C_python_without_rtorch(void) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *util = PyImport_ImportModule("importlib.util");
    PyObject *spec = util ? PyObject_CallMethod(util, "find_spec", "s", "rtorch_py") : NULL;
    SEXP out = R_NilValue;
    if (spec == Py_None) {
        PyObject *exe = PySys_GetObject("executable"); /* borrowed */
        const char *s = exe && PyUnicode_Check(exe) ? PyUnicode_AsUTF8(exe) : NULL;
        out = Rf_mkString(s ? s : "?");
    }
    PyErr_Clear();
    Py_XDECREF(spec);
    Py_XDECREF(util);
    PyGILState_Release(g);
    return out;
}

/* A Python attribute of the api module, as an R external pointer. */
static SEXP C_getattr(SEXP name) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *o = PyObject_GetAttrString(api, CHAR(STRING_ELT(name, 0)));
    if (!o) raise_python_error(g);
    SEXP out = make_ptr(o, default_class);
    Py_DECREF(o);
    PyGILState_Release(g);
    return out;
}

/* The address of the object an external pointer holds, in hex: the id of a
 * Python object (as f"{id(x):x}" gives it); NA once the pointer is empty
 * (saved from another R session).  No Python call: no GIL needed. */
static SEXP C_address(SEXP x) {
    if (TYPEOF(x) != EXTPTRSXP) Rf_error("not an external pointer");
    void *p = R_ExternalPtrAddr(x);
    if (!p) return Rf_ScalarString(NA_STRING);
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIxPTR, (uintptr_t)p);
    return Rf_mkString(buf);
}
/* Hand any R value to Python untouched (it comes back as the same value). */
static SEXP C_box(SEXP x) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *o = wrap_robj(x);
    if (!o) raise_python_error(g);
    SEXP out = make_ptr(o, default_class);
    Py_DECREF(o);
    PyGILState_Release(g);
    return out;
}

/* rpy2 interop: SEXP address <-> Python object. */
static PyObject *py_sexp_to_py(PyObject *self, PyObject *addr) {
    SEXP x = (SEXP)PyLong_AsVoidPtr(addr);
    if (!x && PyErr_Occurred()) return NULL;
    return r_to_py(x);
}

static PyObject *py_py_to_sexp(PyObject *self, PyObject *obj) {
    /* Returns an RObject holding the R value for obj (keeps it alive). */
    SEXP x = py_to_r(obj);
    if (!x) return NULL;
    PROTECT(x);
    PyObject *out = wrap_robj(x);
    UNPROTECT(1);
    return out;
}

static PyObject *py_shutdown(PyObject *self, PyObject *unused) {
    r_alive = 0;
    Py_RETURN_NONE;
}

static PyMethodDef native_methods[] = {
    {"shutdown", py_shutdown, METH_NOARGS, "R is ending: stop releasing R objects"},
    {"sexp_to_py", py_sexp_to_py, METH_O, "Python object for the R value at an address"},
    {"py_to_robject", py_py_to_sexp, METH_O, "R value (as RObject) for a Python object"},
    {NULL, NULL, 0, NULL}
};

static SEXP C_export_native(void) {
    PyGILState_STATE g = PyGILState_Ensure();
    for (PyMethodDef *m = native_methods; m->ml_name; m++) {
        PyObject *f = PyCFunction_New(m, NULL);
        if (!f || PyObject_SetAttrString(api, m->ml_name, f) < 0) raise_python_error(g);
        Py_DECREF(f);
    }
    PyGILState_Release(g);
    return R_NilValue;
}

static const R_CallMethodDef call_methods[] = {
    {"C_init", (DL_FUNC)&C_init, 2},
    {"C_invoke", (DL_FUNC)&C_invoke, 2},
    {"C_getattr", (DL_FUNC)&C_getattr, 1},
    {"C_box", (DL_FUNC)&C_box, 1},
    {"C_address", (DL_FUNC)&C_address, 1},
    {"C_export_native", (DL_FUNC)&C_export_native, 0},
    {"C_start_python", (DL_FUNC)&C_start_python, 1},
    {"C_python_running", (DL_FUNC)&C_python_running, 0},
    {"C_python_without_rtorch", (DL_FUNC)&C_python_without_rtorch, 0},
    {"C_method_init", (DL_FUNC)&C_method_init, 6},
    {"C_closure", (DL_FUNC)&C_closure, 7},
    {"C_bind", (DL_FUNC)&C_bind, 2},
    {"C_bound", (DL_FUNC)&C_bound, 3},
    {"C_nn_dollar", (DL_FUNC)&C_nn_dollar, 2},
    {NULL, NULL, 0}
};

static const R_ExternalMethodDef external_methods[] = {
    {"C_call", (DL_FUNC)&C_call, -1},
    {"C_method", (DL_FUNC)&C_method, -1},
    {"C_frame_call", (DL_FUNC)&C_frame_call, -1},
    {NULL, NULL, 0}
};

__attribute__((visibility("default"))) void R_init_torch(DllInfo *dll) {
    R_registerRoutines(dll, NULL, call_methods, NULL, external_methods);
    R_useDynamicSymbols(dll, FALSE);
}

