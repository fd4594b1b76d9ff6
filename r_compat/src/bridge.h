/*
 * The R <-> Python crossing of the torch shim: transport only.
 *
 * This library is loaded by R inside a process whose host is Python (rpy2
 * embeds R) or that started Python itself (R/python.R), so it uses the C APIs
 * of both directly: Python's symbols come from the running interpreter, R's
 * from libR.  One R-level op costs one `.External` (calls.c): the R arguments
 * are turned into Python objects (convert.c; tensors travel as the very same
 * Python object, held by an R external pointer whose lifetime memory.c
 * manages), the Python callable runs, and its result comes back.  What the R
 * closures look like (formals, which method returns what) is decided on the
 * Python side (rtorch_py/r/closures.py) and read here at load (init.c).
 *
 * Python errors become R errors with the Python message; an R error raised
 * in an R callback (hook, custom forward/backward) travels through Python as
 * `RError` and is re-signalled in R as the original condition.
 */
#ifndef RTORCH_BRIDGE_H
#define RTORCH_BRIDGE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include <R_ext/Rallocators.h>
#include <inttypes.h>
#include <string.h>

/* The files share these names; none may be seen outside the library (in plain R,
 * libpython is loaded with global symbols: an `api` or `ready` of the process
 * would be taken for ours). */
#pragma GCC visibility push(hidden)

/* init.c: what C_init reads from the api module (rtorch_py.r.api) */
extern SEXP tag_sym;          /* tag of external pointers that hold a PyObject */
extern SEXP invoke_fn;        /* R closure: .Call(C_invoke, f, args) */
extern SEXP default_class;    /* class of Python objects without a mapping */
extern PyObject *api;         /* rtorch_py.r.api */
extern PyTypeObject *tensor_type, *namedlist_type;
extern PyObject *rerror_cls, *from_r_array, *error_message;
extern PyObject *py_warnings; /* api._PENDING_WARNINGS: Python warnings for R */
extern PyObject *py_steps_ended; /* api._STEPS_ENDED: backward passes run (memory.c) */
extern int ready;
#define MAX_CLASSES 64
#define MAX_ARGS 32 /* arguments of one call into Python */
extern PyTypeObject *class_types[MAX_CLASSES];
extern SEXP class_values[MAX_CLASSES];
extern int n_classes;

/* convert.c: values both ways, and R objects held from Python */
typedef struct {
    PyObject_HEAD
    SEXP sexp;
} RObj;
extern PyTypeObject RObj_Type;
extern int r_alive;
PyObject *wrap_robj(SEXP x);
PyObject *r_to_py(SEXP x);     /* a new reference, or NULL with a Python error */
SEXP py_to_r(PyObject *o);     /* unprotected, or NULL with a Python error */
SEXP C_invoke(SEXP f, SEXP args);

/* memory.c: handles, the collection cadence, the retry after MemoryError */
extern size_t n_pending;
void drain_pending(void);
SEXP make_ptr(PyObject *o, SEXP cls);
SEXP tensor_to_r(PyObject *o);
void collect_if_due(int step_ended);
void memory_init(void);
PyObject *call_retrying(PyObject *fn, PyObject *const *args, size_t nargsf, PyObject *kwnames);

/* calls.c: R calling Python */
void raise_python_error(PyGILState_STATE g);
SEXP C_call(SEXP args);
SEXP C_frame_call(SEXP call, SEXP op, SEXP args, SEXP env);
SEXP C_closure(SEXP fn, SEXP send_as, SEXP positional, SEXP formals, SEXP invisible, SEXP env,
               SEXP routine);
SEXP C_method(SEXP args);
SEXP C_bind(SEXP f, SEXP x);
SEXP C_bound(SEXP cache, SEXP x, SEXP name);
SEXP C_method_init(SEXP methods, SEXP policies, SEXP keep, SEXP env, SEXP getter,
                   SEXP field);
SEXP C_nn_dollar(SEXP x, SEXP name);

#pragma GCC visibility pop
#endif
