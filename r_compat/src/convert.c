/* Values both ways between R and Python, and R objects held from Python. */
#include "bridge.h"

/* ------------------------------------------------------------------------
 * RObject: a Python handle on any R value (kept alive with R_PreserveObject).
 * Calling it calls the R function it holds.
 */
PyObject *wrap_robj(SEXP x) {
    RObj *o = PyObject_New(RObj, &RObj_Type);
    if (!o) return NULL;
    R_PreserveObject(x);
    o->sexp = x;
    return (PyObject *)o;
}

int r_alive = 1; /* cleared when the embedded R is shutting down */

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
SEXP C_invoke(SEXP f, SEXP args) {
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

PyTypeObject RObj_Type = {
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

PyObject *r_to_py(SEXP x) {
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
/* Returns an unprotected SEXP, or NULL with a Python error set. */
SEXP py_to_r(PyObject *o) {
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
