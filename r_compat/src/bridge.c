/*
 * The R <-> Python crossing of the torch shim.
 *
 * This library is loaded by R (useDynLib) inside a process whose host is
 * Python (rpy2 embeds R), so it uses the C APIs of both directly: Python's
 * symbols come from the running interpreter, R's from libR.  One R-level op
 * costs one `.External(C_call, fn, ...)`: the R arguments are turned into
 * Python objects (tensors travel as the very same Python object, held by an
 * R external pointer), the Python callable runs, and its result comes back.
 *
 * Python errors become R errors with the Python message; an R error raised
 * in an R callback (hook, custom forward/backward) travels through Python as
 * `RError` and is re-signalled in R as the original condition.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include <R_ext/Rallocators.h>
#include <inttypes.h>
#include <string.h>

extern Rboolean R_Visible; /* exported by libR, not declared in its headers */

static SEXP tag_sym;          /* tag of external pointers that hold a PyObject */
static SEXP invoke_fn;        /* R closure: .Call(C_invoke, f, args) */
static SEXP default_class;    /* class of Python objects without a mapping */
static PyObject *api;         /* rtorch_py.r.api */
static PyTypeObject *tensor_type, *namedlist_type;
static PyObject *rerror_cls, *from_r_array, *error_message;
static PyObject *py_warnings; /* api._PENDING_WARNINGS: Python warnings for R */
static int ready = 0;

#define MAX_CLASSES 64
static PyTypeObject *class_types[MAX_CLASSES];
static SEXP class_values[MAX_CLASSES];
static int n_classes = 0;

/* ------------------------------------------------------------------------
 * RObject: a Python handle on any R value (kept alive with R_PreserveObject).
 * Calling it calls the R function it holds.
 */
typedef struct {
    PyObject_HEAD
    SEXP sexp;
} RObj;

static PyTypeObject RObj_Type;
static SEXP py_to_r(PyObject *o);
static PyObject *r_to_py(SEXP x);

static PyObject *wrap_robj(SEXP x) {
    RObj *o = PyObject_New(RObj, &RObj_Type);
    if (!o) return NULL;
    R_PreserveObject(x);
    o->sexp = x;
    return (PyObject *)o;
}

static int r_alive = 1; /* cleared when the embedded R is shutting down */

static void RObj_dealloc(RObj *self) {
    if (self->sexp && r_alive) R_ReleaseObject(self->sexp);
    PyObject_Free(self);
}

static PyObject *RObj_repr(RObj *self) {
    return PyUnicode_FromFormat("<R object of type %s>", Rf_type2char(TYPEOF(self->sexp)));
}

/* Calling R from Python.  The call runs under R_tryEvalSilent (an R error
 * cannot unwind through Python frames) and inside a calling error handler
 * that keeps the condition, so it can travel through Python as RError and be
 * re-signalled unchanged.  Cheaper than an R-level tryCatch. */
static SEXP last_condition = NULL; /* preserved; set by the handler below */

static SEXP keep_condition(SEXP cond, void *data) {
    if (last_condition == NULL) {
        last_condition = cond;
        R_PreserveObject(cond);
    }
    return R_NilValue; /* a calling handler: the error goes on unwinding */
}

static SEXP eval_body(void *call) { return Rf_eval((SEXP)call, R_GlobalEnv); }

/* .Call(C_invoke, f, args): f(args...) under the condition keeper. The
 * arguments are values: the call holds them directly, as do.call() does. */
static SEXP C_invoke(SEXP f, SEXP args) {
    SEXP nms = Rf_getAttrib(args, R_NamesSymbol);
    SEXP call = PROTECT(Rf_lcons(f, R_NilValue));
    SEXP tail = call;
    for (R_xlen_t i = 0; i < XLENGTH(args); i++) {
        SETCDR(tail, Rf_cons(VECTOR_ELT(args, i), R_NilValue));
        tail = CDR(tail);
        if (nms != R_NilValue && CHAR(STRING_ELT(nms, i))[0] != '\0')
            SET_TAG(tail, Rf_installTrChar(STRING_ELT(nms, i)));
    }
    SEXP out = R_withCallingErrorHandler(eval_body, call, keep_condition, NULL);
    UNPROTECT(1);
    return out;
}

/* Call the R function f with (name, value) pairs ("" for positional). */
static PyObject *call_r(SEXP f, Py_ssize_t n, PyObject *const *values, PyObject *const *names) {
    SEXP lst = PROTECT(Rf_allocVector(VECSXP, n));
    SEXP nms = PROTECT(Rf_allocVector(STRSXP, n));
    for (Py_ssize_t i = 0; i < n; i++) {
        SEXP v = py_to_r(values[i]);
        if (!v) { UNPROTECT(2); return NULL; }
        SET_VECTOR_ELT(lst, i, v);
        const char *nm = names && names[i] ? PyUnicode_AsUTF8(names[i]) : "";
        if (!nm) { UNPROTECT(2); return NULL; }
        SET_STRING_ELT(nms, i, nm[0] ? Rf_mkCharCE(nm, CE_UTF8) : R_BlankString);
    }
    Rf_setAttrib(lst, R_NamesSymbol, nms);
    SEXP call = PROTECT(Rf_lang3(invoke_fn, f, lst));
    SEXP outer = last_condition; /* an enclosing call's, if nested */
    last_condition = NULL;
    int err = 0;
    SEXP res = R_tryEvalSilent(call, R_GlobalEnv, &err);
    SEXP cond = last_condition;
    last_condition = outer;
    if (!err) {
        if (cond) R_ReleaseObject(cond);
        PROTECT(res);
        PyObject *out = r_to_py(res);
        UNPROTECT(4);
        return out;
    }
    PyObject *e = NULL;
    if (cond) {
        /* the condition's message, evaluated safely */
        SEXP mcall = PROTECT(Rf_lang2(Rf_install("conditionMessage"), cond));
        int merr = 0;
        SEXP msg = R_tryEvalSilent(mcall, R_BaseEnv, &merr);
        const char *m = (!merr && TYPEOF(msg) == STRSXP && XLENGTH(msg) > 0)
                            ? Rf_translateCharUTF8(STRING_ELT(msg, 0)) : R_curErrorBuf();
        PyObject *pycond = wrap_robj(cond);
        R_ReleaseObject(cond);
        UNPROTECT(1);
        if (pycond) e = PyObject_CallFunction(rerror_cls, "sO", m, pycond);
        Py_XDECREF(pycond);
    } else {
        e = PyObject_CallFunction(rerror_cls, "s", R_curErrorBuf());
    }
    if (e) { PyErr_SetObject(rerror_cls, e); Py_DECREF(e); }
    UNPROTECT(3);
    return NULL;
}

static PyObject *RObj_call(RObj *self, PyObject *args, PyObject *kwargs) {
    Py_ssize_t npos = PyTuple_GET_SIZE(args);
    Py_ssize_t nkw = kwargs ? PyDict_GET_SIZE(kwargs) : 0;
    if (!nkw) return call_r(self->sexp, npos, &PyTuple_GET_ITEM(args, 0), NULL);
    PyObject **values = PyMem_Malloc(sizeof(PyObject *) * 2 * (npos + nkw));
    if (!values) return PyErr_NoMemory();
    PyObject **names = values + npos + nkw;
    for (Py_ssize_t i = 0; i < npos; i++) {
        values[i] = PyTuple_GET_ITEM(args, i);
        names[i] = NULL;
    }
    PyObject *k, *v;
    Py_ssize_t pos = 0, i = npos;
    while (PyDict_Next(kwargs, &pos, &k, &v)) {
        values[i] = v;
        names[i++] = k;
    }
    PyObject *out = call_r(self->sexp, npos + nkw, values, names);
    PyMem_Free(values);
    return out;
}

/* f.call_named(names, values): names may repeat or be "" (positional). */
static PyObject *RObj_call_named(RObj *self, PyObject *args) {
    PyObject *names, *values;
    if (!PyArg_ParseTuple(args, "OO", &names, &values)) return NULL;
    PyObject *n = PySequence_Fast(names, "names must be a sequence");
    PyObject *v = n ? PySequence_Fast(values, "values must be a sequence") : NULL;
    PyObject *out = NULL;
    if (v && PySequence_Fast_GET_SIZE(n) != PySequence_Fast_GET_SIZE(v))
        PyErr_SetString(PyExc_ValueError, "names and values differ in length");
    else if (v)
        out = call_r(self->sexp, PySequence_Fast_GET_SIZE(v), PySequence_Fast_ITEMS(v),
                     PySequence_Fast_ITEMS(n));
    Py_XDECREF(n);
    Py_XDECREF(v);
    return out;
}

static PyMethodDef RObj_methods[] = {
    {"call_named", (PyCFunction)RObj_call_named, METH_VARARGS,
     "call the R function with arguments given as (names, values); '' is positional"},
    {NULL}
};

static PyObject *RObj_get_rtype(RObj *self, void *closure) {
    return PyUnicode_FromString(Rf_type2char(TYPEOF(self->sexp)));
}

static PyObject *RObj_get_address(RObj *self, void *closure) {
    return PyLong_FromVoidPtr(self->sexp);
}

static PyGetSetDef RObj_getset[] = {
    {"rtype", (getter)RObj_get_rtype, NULL, "the R type of the value", NULL},
    {"address", (getter)RObj_get_address, NULL, "the SEXP address (for rpy2)", NULL},
    {NULL}
};

/* The buffer protocol: an R atomic vector's own memory, as bytes, with no
 * copy (torch_tensor_from_buffer shares it, as R torch does). The exporter is
 * this RObject, so a NumPy array made on it keeps the R value preserved. R
 * compact vectors (1:10) have no memory until R makes it: refused here, where
 * R must not allocate (an R error cannot unwind through Python). */
static int RObj_getbuffer(RObj *self, Py_buffer *view, int flags) {
    SEXP x = self->sexp;
    size_t size;
    switch (TYPEOF(x)) {
    case REALSXP: size = sizeof(double); break;
    case INTSXP: case LGLSXP: size = sizeof(int); break;
    case RAWSXP: size = 1; break;
    case CPLXSXP: size = sizeof(Rcomplex); break;
    default:
        view->obj = NULL;
        PyErr_Format(PyExc_BufferError, "an R %s has no memory to share: give an atomic "
                     "vector (double, integer, logical, raw or complex)",
                     Rf_type2char(TYPEOF(x)));
        return -1;
    }
    void *p = (void *)DATAPTR_OR_NULL(x);
    if (!p) {
        view->obj = NULL;
        PyErr_SetString(PyExc_BufferError, "this R vector is a compact one (such as 1:10) "
                        "with no memory of its own yet; make it an ordinary vector first "
                        "(e.g. x[1] <- x[1])");
        return -1;
    }
    return PyBuffer_FillInfo(view, (PyObject *)self, p, (Py_ssize_t)(XLENGTH(x) * size), 0,
                             flags);
}

static PyBufferProcs RObj_as_buffer = {.bf_getbuffer = (getbufferproc)RObj_getbuffer};

static PyTypeObject RObj_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rtorch_py.r.RObject",
    .tp_basicsize = sizeof(RObj),
    .tp_dealloc = (destructor)RObj_dealloc,
    .tp_repr = (reprfunc)RObj_repr,
    .tp_call = (ternaryfunc)RObj_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An R value held from Python; calling it calls the R function.",
    .tp_getset = RObj_getset,
    .tp_methods = RObj_methods,
    .tp_as_buffer = &RObj_as_buffer,
};

/* ------------------------------------------------------------------------
 * Handles: external pointers that own a reference to a Python object.
 *
 * A handle needs no finalizer (R runs each finalizer in a context of its own,
 * keeps a finalized object alive one more collection and so ages it into an
 * older generation).  Its protected field is an owner: a one-element raw
 * vector made by a custom allocator, which R's collector frees, calling our
 * free function, in the same sweep that frees the handle.  The free function
 * only queues the Python reference (the collector must not run Python code);
 * the queue is emptied at the next crossing into Python.  The owner records
 * the bytes of the tensor it holds, so that the bytes R holds are known.
 */
static PyObject **pending = NULL; /* Python references released by R's sweeps */
static size_t n_pending = 0, pending_cap = 0;
static double held_bytes = 0;     /* tensor bytes held by live handles */
static int swept = 0;             /* R's collector has freed handles since last looked */

static void drain_pending(void) { /* GIL held; a release may run Python code, which
                                     may call R, whose collector may queue more */
    while (n_pending > 0) {
        PyObject *o = pending[--n_pending];
        Py_DECREF(o);
    }
}

static void *owner_alloc(R_allocator_t *allocator, size_t size) { return malloc(size); }

static void owner_free(R_allocator_t *allocator, void *mem) { /* inside R's collector */
    PyObject *o = (PyObject *)allocator->data;
    /* the owner's data: after the allocator copy and R's vector header */
    SEXP owner = (SEXP)(allocator + 1);
    held_bytes -= *(double *)RAW(owner);
    swept = 1;
    free(mem);
    if (n_pending == pending_cap) {
        size_t cap = pending_cap ? 2 * pending_cap : 1024;
        PyObject **grown = realloc(pending, cap * sizeof(PyObject *));
        if (!grown) return; /* no memory: the object stays alive, nothing breaks */
        pending = grown;
        pending_cap = cap;
    }
    pending[n_pending++] = o;
}

/* A handle on o (a new reference is taken) of R class cls; `bytes`: what it
 * holds, for the collection cadence (see collect_if_due). */
static SEXP make_handle(PyObject *o, SEXP cls, double bytes) {
    R_allocator_t allocator = {owner_alloc, owner_free, NULL, o};
    Py_INCREF(o); /* (first: from here on, the owner's sweep releases it) */
    SEXP owner = PROTECT(Rf_allocVector3(RAWSXP, sizeof(double), &allocator));
    *(double *)RAW(owner) = bytes;
    held_bytes += bytes;
    SEXP p = PROTECT(R_MakeExternalPtr(o, tag_sym, owner));
    /* the class attribute, set directly: a fresh pairlist node holding the
     * shared (immutable) class vector */
    SEXP attr = Rf_cons(cls, R_NilValue);
    SET_TAG(attr, R_ClassSymbol);
    SET_ATTRIB(p, attr);
    SET_OBJECT(p, 1);
    UNPROTECT(2);
    return p;
}

static SEXP make_ptr(PyObject *o, SEXP cls) { return make_handle(o, cls, 0); }

static SEXP class_for(PyObject *o) {
    PyTypeObject *t = Py_TYPE(o);
    for (int i = 0; i < n_classes; i++)
        if (class_types[i] == t) return class_values[i];
    for (int i = 0; i < n_classes; i++)
        if (PyType_IsSubtype(t, class_types[i])) return class_values[i];
    return default_class;
}

/* A weak handle: R holds a Python weak reference where holding the object
 * would make a cycle across the two languages' collectors (an nn_module's R6
 * object and its Python module, which holds the R6 object).  Crossing into
 * Python, it is the object it refers to. */
static PyObject *weak_target(PyObject *ref) {
    PyObject *o;
#if PY_VERSION_HEX >= 0x030D0000
    if (PyWeakref_GetRef(ref, &o) < 0) return NULL;
#else
    o = PyWeakref_GetObject(ref);
    if (o == Py_None) o = NULL;
    else Py_INCREF(o);
#endif
    if (!o)
        PyErr_SetString(PyExc_RuntimeError,
                        "this module's Python side no longer exists: an R module lives as "
                        "long as its callable (what nn_linear() or net() returned) or a "
                        "parent module holds it, not its R6 object alone");
    return o;
}

/* ------------------------------------------------------------------------
 * R -> Python.  Scalars become Python scalars, other atomic vectors NumPy
 * arrays (through api._from_r_array), lists lists or NamedLists, our
 * external pointers their Python object, anything else an RObject.
 */
static PyObject *r_vector_to_py(SEXP x) {
    R_xlen_t n = XLENGTH(x);
    size_t size;
    const char *code;
    switch (TYPEOF(x)) {
    case REALSXP: /* (bit64's integer64 keeps int64s in a double vector) */
        size = n * sizeof(double);
        code = Rf_inherits(x, "integer64") ? "I" : "d";
        break;
    case INTSXP: size = n * sizeof(int); code = Rf_inherits(x, "factor") ? "f" : "i"; break;
    case LGLSXP: size = n * sizeof(int); code = "l"; break;
    case RAWSXP: size = n; code = "r"; break;
    case CPLXSXP: size = n * sizeof(Rcomplex); code = "c"; break;
    default: return NULL;
    }
    PyObject *buf = PyByteArray_FromStringAndSize((const char *)DATAPTR(x), (Py_ssize_t)size);
    if (!buf) return NULL;
    SEXP dim = Rf_getAttrib(x, R_DimSymbol);
    PyObject *dims;
    if (dim == R_NilValue) {
        dims = Py_None;
        Py_INCREF(dims);
    } else {
        dims = PyTuple_New(XLENGTH(dim));
        for (R_xlen_t i = 0; i < XLENGTH(dim); i++)
            PyTuple_SET_ITEM(dims, i, PyLong_FromLong(INTEGER(dim)[i]));
    }
    PyObject *out = PyObject_CallFunction(from_r_array, "sOO", code, buf, dims);
    Py_DECREF(buf);
    Py_DECREF(dims);
    return out;
}

static PyObject *r_to_py(SEXP x) {
    switch (TYPEOF(x)) {
    case NILSXP:
        Py_RETURN_NONE;
    case EXTPTRSXP:
        if (R_ExternalPtrTag(x) == tag_sym) {
            PyObject *o = (PyObject *)R_ExternalPtrAddr(x);
            if (!o) {
                PyErr_SetString(PyExc_RuntimeError,
                                "this object no longer exists (it was saved from another R "
                                "session); create it again (a module: its load_state_dict() "
                                "rebuilds it)");
                return NULL;
            }
            if (PyWeakref_CheckRef(o)) return weak_target(o);
            Py_INCREF(o);
            return o;
        }
        break;
    case REALSXP:
        if (XLENGTH(x) == 1 && ATTRIB(x) == R_NilValue)
            return PyFloat_FromDouble(REAL(x)[0]);
        return r_vector_to_py(x);
    case INTSXP:
        if (XLENGTH(x) == 1 && ATTRIB(x) == R_NilValue) {
            int v = INTEGER(x)[0];
            if (v == NA_INTEGER) Py_RETURN_NONE;
            return PyLong_FromLong(v);
        }
        return r_vector_to_py(x);
    case LGLSXP:
        if (XLENGTH(x) == 1 && ATTRIB(x) == R_NilValue) {
            int v = LOGICAL(x)[0];
            if (v == NA_LOGICAL) Py_RETURN_NONE;
            return PyBool_FromLong(v);
        }
        return r_vector_to_py(x);
    case RAWSXP:  /* raw and complex vectors are always arrays: uint8, complex */
    case CPLXSXP:
        return r_vector_to_py(x);
    case STRSXP: /* (a torch_device is its type string, "cpu") */
        if (XLENGTH(x) == 1 && (ATTRIB(x) == R_NilValue || Rf_inherits(x, "torch_device"))) {
            SEXP s = STRING_ELT(x, 0);
            if (s == NA_STRING) Py_RETURN_NONE;
            return PyUnicode_FromString(Rf_translateCharUTF8(s));
        }
        if (ATTRIB(x) == R_NilValue) { /* a plain character vector: list of str */
            R_xlen_t n = XLENGTH(x);
            PyObject *out = PyList_New(n);
            for (R_xlen_t i = 0; i < n && out; i++) {
                SEXP s = STRING_ELT(x, i);
                PyObject *v;
                if (s == NA_STRING) { v = Py_None; Py_INCREF(v); }
                else v = PyUnicode_FromString(Rf_translateCharUTF8(s));
                if (!v) { Py_CLEAR(out); break; }
                PyList_SET_ITEM(out, i, v);
            }
            return out;
        }
        break;
    case VECSXP: {
        if (OBJECT(x) && !Rf_inherits(x, "rtorch_list")) break; /* classed lists stay R */
        R_xlen_t n = XLENGTH(x);
        PyObject *values = PyList_New(n);
        if (!values) return NULL;
        for (R_xlen_t i = 0; i < n; i++) {
            PyObject *v = r_to_py(VECTOR_ELT(x, i));
            if (!v) { Py_DECREF(values); return NULL; }
            PyList_SET_ITEM(values, i, v);
        }
        SEXP nms = Rf_getAttrib(x, R_NamesSymbol);
        if (nms == R_NilValue) return values;
        PyObject *names = PyList_New(n);
        for (R_xlen_t i = 0; i < n; i++)
            PyList_SET_ITEM(names, i, PyUnicode_FromString(Rf_translateCharUTF8(STRING_ELT(nms, i))));
        PyObject *out = PyObject_CallFunctionObjArgs((PyObject *)namedlist_type, names, values, NULL);
        Py_DECREF(names);
        Py_DECREF(values);
        return out;
    }
    default:
        break;
    }
    return wrap_robj(x);
}

/* ------------------------------------------------------------------------
 * Python -> R.
 */
static SEXP buffer_to_r(PyObject *o) {
    Py_buffer v;
    if (PyObject_GetBuffer(o, &v, PyBUF_F_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    const char *f = v.format ? v.format : "B";
    while (*f == '<' || *f == '>' || *f == '=' || *f == '@' || *f == '!') f++;
    R_xlen_t n = v.itemsize ? v.len / v.itemsize : 0;
    SEXP out;
    switch (*f) {
    case 'd':
        out = PROTECT(Rf_allocVector(REALSXP, n));
        memcpy(REAL(out), v.buf, n * sizeof(double));
        break;
    case 'f': {
        out = PROTECT(Rf_allocVector(REALSXP, n));
        const float *src = (const float *)v.buf;
        for (R_xlen_t i = 0; i < n; i++) REAL(out)[i] = src[i];
        break;
    }
    case 'i':
        out = PROTECT(Rf_allocVector(INTSXP, n));
        memcpy(INTEGER(out), v.buf, n * sizeof(int));
        break;
    case 'q': case 'l': {
        out = PROTECT(Rf_allocVector(INTSXP, n));
        const long long *src = (const long long *)v.buf;
        for (R_xlen_t i = 0; i < n; i++)
            INTEGER(out)[i] = (src[i] > INT_MAX || src[i] <= INT_MIN) ? NA_INTEGER : (int)src[i];
        break;
    }
    case 'B':  /* uint8: R raw, as R torch gives it */
        out = PROTECT(Rf_allocVector(RAWSXP, n));
        memcpy(RAW(out), v.buf, n);
        break;
    case 'Z': {  /* complex: 'Zd' (complex128) or 'Zf' (complex64) */
        out = PROTECT(Rf_allocVector(CPLXSXP, n));
        if (f[1] == 'd') {
            memcpy(COMPLEX(out), v.buf, n * sizeof(Rcomplex));
        } else {
            const float *src = (const float *)v.buf;
            for (R_xlen_t i = 0; i < n; i++) {
                COMPLEX(out)[i].r = src[2 * i];
                COMPLEX(out)[i].i = src[2 * i + 1];
            }
        }
        break;
    }
    case '?': {
        out = PROTECT(Rf_allocVector(LGLSXP, n));
        const unsigned char *src = (const unsigned char *)v.buf;
        for (R_xlen_t i = 0; i < n; i++) LOGICAL(out)[i] = src[i] != 0;
        break;
    }
    default:
        PyErr_Format(PyExc_TypeError, "can't convert an array of format '%s' to R", v.format);
        PyBuffer_Release(&v);
        return NULL;
    }
    if (v.ndim >= 2) {
        SEXP dim = PROTECT(Rf_allocVector(INTSXP, v.ndim));
        for (int i = 0; i < v.ndim; i++) INTEGER(dim)[i] = (int)v.shape[i];
        Rf_setAttrib(out, R_DimSymbol, dim);
        UNPROTECT(1);
    }
    PyBuffer_Release(&v);
    UNPROTECT(1);
    return out;
}

static SEXP seq_to_r(PyObject *seq, PyObject *names) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    SEXP out = PROTECT(Rf_allocVector(VECSXP, n));
    for (Py_ssize_t i = 0; i < n; i++) {
        SEXP v = py_to_r(items[i]);
        if (!v) { UNPROTECT(1); return NULL; }
        SET_VECTOR_ELT(out, i, v);
    }
    if (names) {
        SEXP nms = PROTECT(Rf_allocVector(STRSXP, n));
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *s = PySequence_GetItem(names, i);
            const char *c = s ? PyUnicode_AsUTF8(s) : NULL;
            Py_XDECREF(s);
            if (!c) { UNPROTECT(2); return NULL; }
            SET_STRING_ELT(nms, i, Rf_mkCharCE(c, CE_UTF8));
        }
        Rf_setAttrib(out, R_NamesSymbol, nms);
        UNPROTECT(1);
    }
    UNPROTECT(1);
    return out;
}

/* R's collector cannot see how much memory a tensor holds: a loop whose
 * tensors are large and whose R objects are few would outrun it.  Two
 * cadences, counted in the bytes of tensors handed to R:
 *
 * - a minor collection (R's youngest generation: the handles of the last
 *   steps) once R has been handed more bytes since its last collection than
 *   max(YOUNG_MIN, what its handles held then), as a generational collector
 *   sizes its nursery: memory stays flat in a long loop, at the cost of one
 *   minor collection (~0.5 ms) per YOUNG_MIN of tensors at least;
 * - a full collection every options(torch.threshold_call_gc) MB (default
 *   4000), as R torch does; the option is looked up every 64 MB, so it can
 *   be set at any time. */
#define YOUNG_MIN (16.0 * 1048576.0)
#define GC_CHECK_STEP (64.0 * 1048576.0)
static double young_bytes = 0, young_limit = YOUNG_MIN;
static double bytes_since_gc = 0, next_gc_check = GC_CHECK_STEP;
static PyObject *data_str, *nbytes_str;
static SEXP minor_gc_call; /* .Internal(gc(FALSE, FALSE, FALSE)): gc(full = FALSE) */
/* R's gc(full = TRUE), called by name as R torch's allocator does when an
 * allocation fails (its finalizers free what R no longer holds; trace(gc) sees it) */
static SEXP full_gc_call;

static double gc_threshold(void) {
    SEXP mb = Rf_GetOption1(Rf_install("torch.threshold_call_gc"));
    if (Rf_isNumeric(mb) && Rf_length(mb) == 1 && Rf_asReal(mb) > 0)
        return Rf_asReal(mb) * 1048576.0;
    return 4000.0 * 1048576.0;
}

static double tensor_bytes(PyObject *o) {
    PyObject *arr = PyObject_GetAttr(o, data_str);
    PyObject *nb = arr ? PyObject_GetAttr(arr, nbytes_str) : NULL;
    Py_XDECREF(arr);
    if (!nb) {
        PyErr_Clear();
        return 0;
    }
    double n = PyLong_AsDouble(nb);
    Py_DECREF(nb);
    return n;
}

/* Run R's collector if a cadence says so, then release what it swept.
 * Called with the GIL held, where every R value of the caller is protected. */
static void collect_if_due(void) {
    if (swept) { /* R collected on its own since: its youngest generation starts anew */
        swept = 0;
        young_bytes = 0;
        young_limit = held_bytes > YOUNG_MIN ? held_bytes : YOUNG_MIN;
    }
    int full = 0;
    if (bytes_since_gc >= next_gc_check) {
        next_gc_check = bytes_since_gc + GC_CHECK_STEP;
        full = bytes_since_gc > gc_threshold();
    }
    if (!full && young_bytes <= young_limit) return;
    if (full) {
        bytes_since_gc = 0;
        next_gc_check = GC_CHECK_STEP;
        R_gc();
        R_RunPendingFinalizers(); /* what R's gc() does next */
    } else {
        int err = 0;
        R_tryEvalSilent(minor_gc_call, R_BaseEnv, &err);
    }
    swept = 0;
    young_bytes = 0;
    young_limit = held_bytes > YOUNG_MIN ? held_bytes : YOUNG_MIN;
    drain_pending();
}

static SEXP tensor_to_r(PyObject *o) {
    double bytes = tensor_bytes(o);
    young_bytes += bytes;
    bytes_since_gc += bytes;
    return make_handle(o, class_values[0], bytes);
}

/* Returns an unprotected SEXP, or NULL with a Python error set. */
static SEXP py_to_r(PyObject *o) {
    PyTypeObject *t = Py_TYPE(o);
    if (t == tensor_type) return tensor_to_r(o);
    if (o == Py_None) return R_NilValue;
    if (t == &PyBool_Type) return Rf_ScalarLogical(o == Py_True);
    if (t == &PyFloat_Type) return Rf_ScalarReal(PyFloat_AS_DOUBLE(o));
    if (t == &PyLong_Type) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (!overflow && v > INT_MIN && v <= INT_MAX) return Rf_ScalarInteger((int)v);
        return Rf_ScalarReal(PyLong_AsDouble(o));
    }
    if (t == &PyUnicode_Type) {
        const char *s = PyUnicode_AsUTF8(o);
        return s ? Rf_ScalarString(Rf_mkCharCE(s, CE_UTF8)) : NULL;
    }
    if (t == &RObj_Type) return ((RObj *)o)->sexp;
    if (t == &PyList_Type || t == &PyTuple_Type) {
        PyObject *seq = PySequence_Fast(o, "");
        SEXP out = seq_to_r(seq, NULL);
        Py_DECREF(seq);
        return out;
    }
    if (PyObject_TypeCheck(o, namedlist_type)) {
        PyObject *names = PyObject_GetAttrString(o, "_names");
        PyObject *values = PyObject_GetAttrString(o, "_values");
        SEXP out = NULL;
        if (names && values) {
            PyObject *seq = PySequence_Fast(values, "");
            out = seq_to_r(seq, names);
            Py_DECREF(seq);
        }
        Py_XDECREF(names);
        Py_XDECREF(values);
        return out;
    }
    if (PyDict_Check(o)) {
        PyObject *keys = PyDict_Keys(o), *values = PyDict_Values(o);
        SEXP out = seq_to_r(values, keys);
        Py_DECREF(keys);
        Py_DECREF(values);
        return out;
    }
    if (PyObject_TypeCheck(o, tensor_type)) return tensor_to_r(o);
    if (PyObject_CheckBuffer(o)) return buffer_to_r(o);
    return make_ptr(o, class_for(o));
}

/* ------------------------------------------------------------------------
 * Errors: leave Python, then signal in R (longjmp) with no Python state on
 * the C stack.
 */
static char errbuf[8192];

static void raise_python_error(PyGILState_STATE g) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    SEXP cond = R_NilValue;
    if (v && rerror_cls && PyObject_IsInstance(v, rerror_cls) == 1) {
        PyObject *c = PyObject_GetAttrString(v, "condition");
        if (c && Py_TYPE(c) == &RObj_Type) cond = ((RObj *)c)->sexp;
        Py_XDECREF(c);
    }
    /* R torch's condition classes: value_error, type_error, ... */
    const char *cls = !t ? "runtime_error"
        : PyErr_GivenExceptionMatches(t, PyExc_NotImplementedError) ? "not_implemented_error"
        : PyErr_GivenExceptionMatches(t, PyExc_ValueError) ? "value_error"
        : PyErr_GivenExceptionMatches(t, PyExc_TypeError) ? "type_error" : "runtime_error";
    PyErr_Clear();
    PyObject *msg = !v ? NULL
                  : error_message ? PyObject_CallFunctionObjArgs(error_message, v, NULL)
                                  : PyObject_Str(v);
    const char *s = msg ? PyUnicode_AsUTF8(msg) : NULL;
    snprintf(errbuf, sizeof errbuf, "%s", s ? s : "unknown Python error");
    PyErr_Clear();
    PROTECT(cond);
    Py_XDECREF(msg);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
    PyGILState_Release(g);
    if (cond != R_NilValue) {
        SEXP call = PROTECT(Rf_lang2(Rf_install("stop"), cond));
        Rf_eval(call, R_BaseEnv);
    }
    /* the condition R torch would signal, made by .python_condition (R/bridge.R) */
    SEXP ns = PROTECT(R_FindNamespace(PROTECT(Rf_mkString("torch"))));
    SEXP make = PROTECT(Rf_lang3(Rf_install(".python_condition"), PROTECT(Rf_mkString(errbuf)),
                                 PROTECT(Rf_mkString(cls))));
    SEXP pycond = PROTECT(Rf_eval(make, ns));
    Rf_eval(PROTECT(Rf_lang2(Rf_install("stop"), pycond)), R_BaseEnv);
    Rf_error("%s", errbuf); /* (not reached) */
}

/* ------------------------------------------------------------------------
 * .External(C_call, fn, ...): fn(...) with R's argument names as keywords.
 */
#define MAX_ARGS 32

/* Python warnings raised during a call, as R strings (GIL held); the list is
 * emptied. They are signalled once back in R's context (signal_warnings), so
 * that R's handlers (withCallingHandlers, expect_warning) see them. */
static SEXP take_warnings(void) {
    Py_ssize_t n = PyList_GET_SIZE(py_warnings);
    if (!n) return R_NilValue;
    SEXP out = PROTECT(Rf_allocVector(STRSXP, n));
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *s = PyUnicode_AsUTF8(PyList_GET_ITEM(py_warnings, i));
        SET_STRING_ELT(out, i, Rf_mkCharCE(s ? s : "(a warning)", CE_UTF8));
    }
    PyErr_Clear();
    PyList_SetSlice(py_warnings, 0, n, NULL);
    UNPROTECT(1);
    return out;
}

static void signal_warnings(SEXP warns) { /* GIL released: a warning may be an error */
    for (R_xlen_t i = 0; i < Rf_xlength(warns); i++)
        Rf_warningcall(R_NilValue, "%s", CHAR(STRING_ELT(warns, i)));
}

static SEXP C_call(SEXP args) {
    args = CDR(args);
    SEXP fptr = CAR(args);
    args = CDR(args);
    if (!ready) Rf_error("the torch shim is not initialised");
    if (TYPEOF(fptr) != EXTPTRSXP || R_ExternalPtrTag(fptr) != tag_sym ||
        !R_ExternalPtrAddr(fptr))
        Rf_error("not a Python function of the torch shim");
    PyGILState_STATE g = PyGILState_Ensure();
    if (n_pending) drain_pending();
    PyObject *fn = (PyObject *)R_ExternalPtrAddr(fptr);
    PyObject *stack[MAX_ARGS + 1];
    PyObject *kwnames = NULL;
    Py_ssize_t n = 0, nkw = 0;
    for (SEXP a = args; a != R_NilValue; a = CDR(a)) {
        if (n == MAX_ARGS) {
            PyErr_SetString(PyExc_TypeError, "too many arguments");
            goto fail;
        }
        if (TAG(a) != R_NilValue) nkw++;
        n++;
    }
    /* Positional first, then keywords (vectorcall's order); positional
     * arguments keep their relative order, as R's matching does. */
    Py_ssize_t npos = n - nkw, ip = 0, ik = 0;
    if (nkw) kwnames = PyTuple_New(nkw);
    for (SEXP a = args; a != R_NilValue; a = CDR(a)) {
        PyObject *v = r_to_py(CAR(a));
        if (!v) goto fail_args;
        if (TAG(a) != R_NilValue) {
            stack[1 + npos + ik] = v;
            PyTuple_SET_ITEM(kwnames, ik, PyUnicode_InternFromString(CHAR(PRINTNAME(TAG(a)))));
            ik++;
        } else {
            stack[1 + ip] = v;
            ip++;
        }
    }
    PyObject *res = PyObject_Vectorcall(fn, stack + 1, npos | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                        kwnames);
    if (!res && PyErr_ExceptionMatches(PyExc_MemoryError)) {
        /* out of memory: R's full collection, then the call once more (as R
         * torch's allocator retries the allocation) */
        PyErr_Clear();
        int err = 0;
        R_tryEvalSilent(full_gc_call, R_GlobalEnv, &err);
        drain_pending();
        res = PyObject_Vectorcall(fn, stack + 1, npos | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
    }
    for (Py_ssize_t i = 0; i < n; i++) Py_DECREF(stack[1 + i]);
    Py_XDECREF(kwnames);
    if (!res) raise_python_error(g);
    SEXP out = py_to_r(res);
    if (!out) {
        Py_DECREF(res);
        raise_python_error(g);
    }
    PROTECT(out);
    Py_DECREF(res);
    collect_if_due();
    SEXP warns = PROTECT(take_warnings());
    PyGILState_Release(g);
    signal_warnings(warns);
    UNPROTECT(2);
    return out;

fail_args:
    /* release the converted arguments (positional part then keywords) */
    for (Py_ssize_t i = 0; i < ip; i++) Py_DECREF(stack[1 + i]);
    for (Py_ssize_t i = 0; i < ik; i++) Py_DECREF(stack[1 + npos + i]);
fail:
    if (kwnames) {
        /* unfilled slots are NULL-initialised by PyTuple_New */
        Py_DECREF(kwnames);
    }
    raise_python_error(g);
    return R_NilValue;
}

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
        PyObject *classes = PyObject_GetAttrString(api, "R_CLASSES");
        if (!tensor_type || !namedlist_type || !rerror_cls || !from_r_array || !error_message ||
            !py_warnings || !PyList_Check(py_warnings) || !classes)
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
        minor_gc_call = Rf_lang2(Rf_install(".Internal"),
                                 Rf_lang4(Rf_install("gc"), Rf_ScalarLogical(FALSE),
                                          Rf_ScalarLogical(FALSE), Rf_ScalarLogical(FALSE)));
        R_PreserveObject(minor_gc_call);
        full_gc_call = Rf_lang2(Rf_install("gc"), Rf_ScalarLogical(TRUE));
        SET_TAG(CDR(full_gc_call), Rf_install("full"));
        R_PreserveObject(full_gc_call);
        data_str = PyUnicode_InternFromString("data");
        nbytes_str = PyUnicode_InternFromString("nbytes");
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

/* ------------------------------------------------------------------------
 * x$name for tensors: the method as a closure over x, made here (R/tensor.R).
 */
static SEXP methods_env, imethods_env; /* method name -> Python callable (visible, invisible) */
static SEXP method_formals;            /* alist(... = ) */
static SEXP method_env;                /* the namespace */
static SEXP external_fn, brace_fn, invisible_fn, call_routine, keep_attributes_fn;
static SEXP field_getter;              /* Python's tensor_get */
static SEXP field_in_r;                /* R's .tensor_field: the fields R finishes */
static SEXP device_sym, names_sym;

static SEXP C_method_init(SEXP methods, SEXP imethods, SEXP routine, SEXP keep, SEXP env,
                          SEXP getter, SEXP field) {
    SEXP keepers[] = {methods, imethods, routine, keep, env, getter, field};
    for (int i = 0; i < 7; i++) R_PreserveObject(keepers[i]);
    methods_env = methods;
    imethods_env = imethods;
    call_routine = routine;
    keep_attributes_fn = keep;
    method_env = env;
    field_getter = getter;
    field_in_r = field;
    device_sym = Rf_install("device");
    names_sym = Rf_install("names");
    external_fn = Rf_eval(Rf_install(".External"), R_BaseEnv);
    brace_fn = Rf_eval(Rf_install("{"), R_BaseEnv);
    invisible_fn = Rf_eval(Rf_install("invisible"), R_BaseEnv);
    method_formals = Rf_cons(R_MissingArg, R_NilValue);
    SET_TAG(method_formals, R_DotsSymbol);
    R_PreserveObject(method_formals);
    return R_NilValue;
}

/* x$name for a field: one crossing to tensor_get, its value as it comes;
 * R's .tensor_field gives the fields R finishes (x$device, x$names) and
 * answers a name that is no member (or not one string). */
static SEXP tensor_field(SEXP x, SEXP name, SEXP sym) {
    if (sym != NULL && sym != device_sym && sym != names_sym) {
        SEXP call = PROTECT(Rf_lcons(R_NilValue, Rf_list3(field_getter, x, name)));
        SEXP v = C_call(call);
        UNPROTECT(1);
        if (!Rf_inherits(v, "rtorch_missing_member")) return v;
    }
    SEXP call = PROTECT(Rf_lang3(field_in_r, x, name));
    SEXP v = Rf_eval(call, method_env);
    UNPROTECT(1);
    return v;
}

/* .External(C_method, x, name): x$name.  A method: the function(...) that
 * calls it, the Python callable and x held in its body (no environment to
 * make); what R torch's methods return: an in-place one (name_) x itself,
 * detach() and clone() x's R attributes kept, invisible ones invisibly.
 * Otherwise the field's value (tensor_field). */
static SEXP C_method(SEXP args) {
    SEXP x = CADR(args), name = CADDR(args);
    if (TYPEOF(name) != STRSXP || XLENGTH(name) != 1) return tensor_field(x, name, NULL);
    SEXP sym = Rf_installTrChar(STRING_ELT(name, 0));
    int invisible = 0;
    SEXP f = Rf_findVarInFrame3(methods_env, sym, TRUE);
    if (f == R_UnboundValue) {
        f = Rf_findVarInFrame3(imethods_env, sym, TRUE);
        if (f == R_UnboundValue) return tensor_field(x, name, sym);
        invisible = 1;
    }
    const char *nm = CHAR(PRINTNAME(sym));
    size_t len = strlen(nm);
    SEXP body = PROTECT(Rf_lang5(external_fn, call_routine, f, x, R_DotsSymbol));
    if (invisible) body = Rf_lang2(invisible_fn, body);
    else if (len && nm[len - 1] == '_') body = Rf_lang3(brace_fn, body, x);
    else if (!strcmp(nm, "detach") || !strcmp(nm, "clone")) body = Rf_lang3(keep_attributes_fn, body, x);
    PROTECT(body);
    SEXP fun = Rf_allocSExp(CLOSXP);
    SET_FORMALS(fun, method_formals);
    SET_BODY(fun, body);
    SET_CLOENV(fun, method_env);
    UNPROTECT(2);
    return fun;
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


/* One step of R's own REPL (what Rscript runs): read a line through the
 * console callback, parse, evaluate, print a visible value, print deferred
 * warnings. Run under R_ToplevelExec so that an error ends only this step.
 * Returns the REPL status (-1 at end of input), or -2 after an error.
 *
 * Called from Python through ctypes while R is idle (not through .Call):
 * R_ReplDLLdo1 resets R's protect stack, which is only safe at top level. */
extern int R_ReplDLLdo1(void);

/* R's pointer-protection stack: libR exports it, its headers do not declare it. */
extern int R_PPStackTop;
extern SEXP *R_PPStack;

/* R_ReplDLLdo1 empties the protection stack (it expects R's own top level,
 * where nothing is protected), but R_ToplevelExec has protected values of its
 * own below us and unprotects them when we return: left alone, the stack top
 * ends at -4 and every later PROTECT writes before the stack's memory.  So
 * copies of those values stay alive while the step runs, and the stack is put
 * back as R_ToplevelExec left it. (After an error R itself resets the top.) */
static SEXP repl_below = NULL; /* preserved during a step */

static void repl_body(void *data) {
    int base = R_PPStackTop;
    SEXP below = PROTECT(Rf_allocVector(VECSXP, base));
    for (int i = 0; i < base; i++) SET_VECTOR_ELT(below, i, R_PPStack[i]);
    R_PreserveObject(below);
    UNPROTECT(1);
    repl_below = below;
    *(int *)data = R_ReplDLLdo1();
    for (int i = 0; i < base; i++) R_PPStack[i] = VECTOR_ELT(below, i);
    R_PPStackTop = base;
}

int rtorch_repl_do1(void) {
    int status = 0;
    Rboolean ok = R_ToplevelExec(repl_body, &status);
    if (repl_below) {
        R_ReleaseObject(repl_below);
        repl_below = NULL;
    }
    return ok ? status : -2;
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
    {"C_method_init", (DL_FUNC)&C_method_init, 7},
    {NULL, NULL, 0}
};

static const R_ExternalMethodDef external_methods[] = {
    {"C_call", (DL_FUNC)&C_call, -1},
    {"C_method", (DL_FUNC)&C_method, -1},
    {NULL, NULL, 0}
};

void R_init_torch(DllInfo *dll) {
    R_registerRoutines(dll, NULL, call_methods, NULL, external_methods);
    R_useDynamicSymbols(dll, FALSE);
}
