/* R calling Python: an op's `.External` (C_call, C_frame_call for the
 * exported functions, which read their arguments from the call's frame),
 * x$name for tensors (C_method), and Python errors and warnings brought back
 * to R. */
#include "bridge.h"

/* ------------------------------------------------------------------------
 * Errors: leave Python, then signal in R (longjmp) with no Python state on
 * the C stack.
 */
static char errbuf[8192];

/* Python warnings raised during a call, as R strings (GIL held); the list is
 * emptied. They are signalled once back in R's context (signal_warnings), so
 * that R's handlers (withCallingHandlers, expect_warning) see them. */
static SEXP take_warnings(void) {
    Py_ssize_t n = py_warnings ? PyList_GET_SIZE(py_warnings) : 0; /* (none before init) */
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

void raise_python_error(PyGILState_STATE g) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    /* the call's warnings come before its error (else the next call would signal them) */
    SEXP warns = PROTECT(take_warnings());
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
    signal_warnings(warns);
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

/* fn(stack...) in Python, the first npos positional, the others keywords named
 * by kwnames; the references in stack (n of them, one free slot before it) and
 * kwnames are the call's.  The result as an R value; a Python error as an R one. */
static SEXP finish_call(PyGILState_STATE g, PyObject *fn, PyObject **stack, Py_ssize_t n,
                        Py_ssize_t npos, PyObject *kwnames) {
    PyObject *res = call_retrying(fn, stack, npos | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
    for (Py_ssize_t i = 0; i < n; i++) Py_DECREF(stack[i]);
    Py_XDECREF(kwnames);
    if (!res) raise_python_error(g);
    SEXP out = py_to_r(res);
    if (!out) {
        Py_DECREF(res);
        raise_python_error(g);
    }
    PROTECT(out);
    Py_DECREF(res);
    Py_ssize_t steps = PyList_GET_SIZE(py_steps_ended);
    if (steps) PyList_SetSlice(py_steps_ended, 0, steps, NULL);
    collect_if_due(steps > 0);
    SEXP warns = PROTECT(take_warnings());
    PyGILState_Release(g);
    signal_warnings(warns);
    UNPROTECT(2);
    return out;
}

static PyObject *python_function(SEXP fptr) {
    if (!ready) Rf_error("the torch shim is not initialised");
    if (TYPEOF(fptr) != EXTPTRSXP || R_ExternalPtrTag(fptr) != tag_sym ||
        !R_ExternalPtrAddr(fptr))
        Rf_error("not a Python function of the torch shim");
    return (PyObject *)R_ExternalPtrAddr(fptr);
}

/* Converts vals[0..n-1] into stack[0..n-1]; on failure releases what it made. */
static int convert_all(SEXP *vals, Py_ssize_t n, PyObject **stack) {
    for (Py_ssize_t i = 0; i < n; i++) {
        stack[i] = r_to_py(vals[i]);
        if (!stack[i]) {
            while (i > 0) Py_DECREF(stack[--i]);
            return 0;
        }
    }
    return 1;
}

/* .External(C_call, fn, ...): fn(...) with R's argument names as keywords. */
SEXP C_call(SEXP args) {
    args = CDR(args);
    PyObject *fn = python_function(CAR(args));
    args = CDR(args);
    SEXP vals[MAX_ARGS];
    SEXP tags[MAX_ARGS];
    Py_ssize_t n = 0, nkw = 0;
    for (SEXP a = args; a != R_NilValue; a = CDR(a)) {
        if (n == MAX_ARGS) Rf_error("too many arguments (at most %d)", MAX_ARGS);
        if (TAG(a) != R_NilValue) nkw++;
        n++;
    }
    /* Positional first, then keywords (vectorcall's order); positional
     * arguments keep their relative order, as R's matching does. */
    Py_ssize_t npos = n - nkw, ip = 0, ik = npos;
    for (SEXP a = args; a != R_NilValue; a = CDR(a)) {
        Py_ssize_t at = TAG(a) == R_NilValue ? ip++ : ik++;
        vals[at] = CAR(a);
        tags[at] = TAG(a);
    }
    PyGILState_STATE g = PyGILState_Ensure();
    if (n_pending) drain_pending();
    PyObject *stack[MAX_ARGS + 1];
    if (!convert_all(vals, n, stack + 1)) raise_python_error(g);
    PyObject *kwnames = NULL;
    if (nkw) {
        kwnames = PyTuple_New(nkw);
        for (Py_ssize_t i = 0; kwnames && i < nkw; i++) {
            PyObject *k = PyUnicode_InternFromString(CHAR(PRINTNAME(tags[npos + i])));
            if (!k) Py_CLEAR(kwnames);
            else PyTuple_SET_ITEM(kwnames, i, k);
        }
        if (!kwnames) {
            for (Py_ssize_t i = 0; i < n; i++) Py_DECREF(stack[1 + i]);
            raise_python_error(g);
        }
    }
    return finish_call(g, fn, stack + 1, n, npos, kwnames);
}

/* Does `...` hold rlang's splice, `!!!x` (as R torch's functions take it,
 * through rlang::list2)?  Its promise's expression starts with `!!`. */
static int spliced(SEXP dots) {
    static SEXP not_sym = NULL;
    if (!not_sym) not_sym = Rf_install("!");
    for (SEXP d = dots; d != R_NilValue; d = CDR(d)) {
        SEXP e = TYPEOF(CAR(d)) == PROMSXP ? R_PromiseExpr(CAR(d)) : R_NilValue;
        if (TYPEOF(e) == LANGSXP && CAR(e) == not_sym && TYPEOF(CADR(e)) == LANGSXP &&
            CAR(CADR(e)) == not_sym)
            return 1;
    }
    return 0;
}

/* `...` of the frame `env` as rlang::list2(...) gives it (the splice done), as a
 * pairlist tagged with the names. */
static SEXP splice(SEXP env) {
    SEXP ns = PROTECT(R_FindNamespace(PROTECT(Rf_mkString("rlang"))));
    SEXP call = PROTECT(Rf_lang2(Rf_findVarInFrame3(ns, Rf_install("list2"), TRUE),
                                 R_DotsSymbol));
    SEXP out = Rf_VectorToPairList(PROTECT(Rf_eval(call, env)));
    UNPROTECT(4);
    return out;
}

/* .External2(C_frame_call, info[, x]): the body of an exported function (made by
 * C_closure), whose formals are R torch's; of a tensor method, x first (C_method).  R has matched the call's arguments
 * to them; they are read from the closure's frame (`env`, which .External2
 * gives, unlike .External): each formal given (a promise, forced here, or a value), `...`
 * spread, the ones left out not sent, so that the Python side's defaults apply.
 * The leading formals go by position while none is left out (up to the count
 * the Python side gave, rtorch_py/r/closures.py), the others under the names
 * the Python side gave; `...`'s unnamed values by position after them.
 *
 * A formal is left out when its binding is R's missing argument, or the
 * promise of its own default: a promise to be evaluated in the frame itself
 * (an argument given is the caller's), of the formals' expression itself (the
 * same object: the closure's formals are the ones in `info`; a default changed
 * with formals<- is evaluated and sent).  PRENV is declared by R 4.2's headers;
 * R >= 4.6 has R_GetBindingType for the same question. */
SEXP C_frame_call(SEXP call, SEXP op, SEXP args, SEXP env) {
    SEXP info = CADR(args);
    SEXP parts = R_ExternalPtrProtected(info);
    PyObject *fn = python_function(VECTOR_ELT(parts, 0));
    SEXP send_as = VECTOR_ELT(parts, 1);
    int positional = INTEGER(VECTOR_ELT(parts, 2))[0];
    SEXP formals = VECTOR_ELT(parts, 3);
    /* 1. in R (an error while forcing a promise leaves nothing behind) */
    SEXP pos[MAX_ARGS], kw[MAX_ARGS], kw_tag[MAX_ARGS];
    int kw_at[MAX_ARGS]; /* the formal's index (its name in send_as), or -1: kw_tag */
    Py_ssize_t npos = 0, nkw = 0;
    int gap = 0, i = 0, nprot = 0; /* gap: 1 + the index of the first formal left out */
    if (CDDR(args) != R_NilValue) pos[npos++] = CADDR(args);  /* a method's tensor */
    for (SEXP f = formals; f != R_NilValue; f = CDR(f), i++) {
        if (TAG(f) == R_DotsSymbol) {
            SEXP dots = Rf_findVarInFrame3(env, R_DotsSymbol, TRUE);
            if (TYPEOF(dots) != DOTSXP) continue;
            if (spliced(dots)) dots = PROTECT(splice(env)), nprot++;
            int k = 0;
            for (SEXP d = dots; d != R_NilValue; d = CDR(d), k++) {
                SEXP v = CAR(d);
                if (v == R_MissingArg) Rf_error("argument %d is empty", i + k + 1);
                if (npos + nkw == MAX_ARGS) Rf_error("too many arguments (at most %d)", MAX_ARGS);
                if (TYPEOF(v) == PROMSXP) v = Rf_eval(v, env);
                if (TAG(d) != R_NilValue && CHAR(PRINTNAME(TAG(d)))[0]) {
                    kw[nkw] = v;
                    kw_tag[nkw] = TAG(d);
                    kw_at[nkw++] = -1;
                } else if (gap) {  /* (R fills the formals first: it was given empty) */
                    Rf_error("argument %d is empty", gap);
                } else {
                    pos[npos++] = v;
                }
            }
            continue;
        }
        SEXP v = Rf_findVarInFrame3(env, TAG(f), TRUE);
        if (v == R_MissingArg || v == R_UnboundValue ||
            (TYPEOF(v) == PROMSXP && PRENV(v) == env && R_PromiseExpr(v) == CAR(f))) {
            if (!gap) gap = i + 1;
            continue;
        }
        if (npos + nkw == MAX_ARGS) Rf_error("too many arguments (at most %d)", MAX_ARGS);
        if (TYPEOF(v) == PROMSXP) v = Rf_eval(v, env);
        if (!gap && i < positional) {
            pos[npos++] = v;
        } else {
            kw[nkw] = v;
            kw_at[nkw++] = i;
        }
    }
    /* 2. in Python (the values are held by the frame) */
    PyGILState_STATE g = PyGILState_Ensure();
    if (n_pending) drain_pending();
    PyObject *stack[MAX_ARGS + 1];
    if (!convert_all(pos, npos, stack + 1)) raise_python_error(g);
    if (!convert_all(kw, nkw, stack + 1 + npos)) {
        for (Py_ssize_t j = 0; j < npos; j++) Py_DECREF(stack[1 + j]);
        raise_python_error(g);
    }
    PyObject *kwnames = NULL;
    if (nkw) {
        PyObject *names = (PyObject *)R_ExternalPtrAddr(send_as);
        kwnames = PyTuple_New(nkw);
        for (Py_ssize_t j = 0; kwnames && j < nkw; j++) {
            PyObject *k;
            if (kw_at[j] >= 0) {
                k = PyTuple_GET_ITEM(names, kw_at[j]);
                Py_INCREF(k);
            } else {
                k = PyUnicode_InternFromString(CHAR(PRINTNAME(kw_tag[j])));
            }
            if (!k) Py_CLEAR(kwnames);
            else PyTuple_SET_ITEM(kwnames, j, k);
        }
        if (!kwnames) {
            for (Py_ssize_t j = 0; j < npos + nkw; j++) Py_DECREF(stack[1 + j]);
            raise_python_error(g);
        }
    }
    SEXP out = finish_call(g, fn, stack + 1, npos + nkw, npos, kwnames);
    UNPROTECT(nprot);
    return out;
}

/* A closure of these formals, body and environment (the caller protects them). */
static SEXP closure(SEXP formals, SEXP body, SEXP env) {
    SEXP fun = Rf_allocSExp(CLOSXP);
    SET_FORMALS(fun, formals);
    SET_BODY(fun, body);
    SET_CLOENV(fun, env);
    return fun;
}

/* .Call(C_closure, fn, send_as, positional, formals, invisible, env, routine):
 * an exported function: `formals` its formals, its body one
 * .External2(routine = C_frame_call, info), invisibly with `invisible`. */
SEXP C_closure(SEXP fn, SEXP send_as, SEXP positional, SEXP formals, SEXP invisible, SEXP env,
               SEXP routine) {
    SEXP parts = PROTECT(Rf_allocVector(VECSXP, 4));
    SET_VECTOR_ELT(parts, 0, fn);
    SET_VECTOR_ELT(parts, 1, send_as);
    SET_VECTOR_ELT(parts, 2, Rf_ScalarInteger(Rf_asInteger(positional)));
    SET_VECTOR_ELT(parts, 3, formals);
    SEXP info = PROTECT(R_MakeExternalPtr(R_ExternalPtrAddr(fn), R_NilValue, parts));
    SEXP body = PROTECT(Rf_lang3(Rf_install(".External2"), routine, info));
    if (Rf_asLogical(invisible)) body = Rf_lang2(Rf_install("invisible"), body);
    PROTECT(body);
    SEXP fun = closure(formals, body, env);
    UNPROTECT(4);
    return fun;
}

/* ------------------------------------------------------------------------
 * x$name for tensors: the method as a closure over x, made here (R/tensor.R).
 */
static SEXP methods_env;     /* method name -> its closure without x (C_closure's) */
static SEXP policies_env;    /* method name -> its policy (rtorch_py.r.closures.METHOD_POLICIES) */
static SEXP method_env;      /* the namespace */
static SEXP brace_fn, invisible_fn, keep_attributes_fn;
static SEXP field_getter;    /* Python's tensor_get */
static SEXP field_in_r;      /* R's .tensor_field: the fields R finishes */
static SEXP device_sym, names_sym;
enum { POLICY_VALUE, POLICY_SELF, POLICY_KEEP_ATTRIBUTES, POLICY_INVISIBLE };

SEXP C_method_init(SEXP methods, SEXP policies, SEXP keep, SEXP env, SEXP getter,
                   SEXP field) {
    SEXP keepers[] = {methods, policies, keep, env, getter, field};
    for (int i = 0; i < 6; i++) R_PreserveObject(keepers[i]);
    methods_env = methods;
    policies_env = policies;
    keep_attributes_fn = keep;
    method_env = env;
    field_getter = getter;
    field_in_r = field;
    device_sym = Rf_install("device");
    names_sym = Rf_install("names");
    brace_fn = Rf_eval(Rf_install("{"), R_BaseEnv);
    invisible_fn = Rf_eval(Rf_install("invisible"), R_BaseEnv);
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

/* .External(C_method, x, name): x$name.  A method: its closure (R torch's
 * formals, made once by C_closure) with x added to the body's
 * .External2(C_frame_call, info, x) (no environment to make), its result shaped
 * by the method's policy (x itself, x's R attributes kept, invisibly).
 * Otherwise the field's value (tensor_field). */
SEXP C_method(SEXP args) {
    SEXP x = CADR(args), name = CADDR(args);
    if (TYPEOF(name) != STRSXP || XLENGTH(name) != 1) return tensor_field(x, name, NULL);
    SEXP sym = Rf_installTrChar(STRING_ELT(name, 0));
    SEXP f = Rf_findVarInFrame3(methods_env, sym, TRUE);
    if (f == R_UnboundValue) return tensor_field(x, name, sym);
    SEXP policy = Rf_findVarInFrame3(policies_env, sym, TRUE);
    SEXP call = BODY(f);  /* .External2(C_frame_call, info) */
    SEXP body = PROTECT(Rf_lang4(CAR(call), CADR(call), CADDR(call), x));
    switch (TYPEOF(policy) == INTSXP ? INTEGER(policy)[0] : POLICY_VALUE) {
    case POLICY_SELF: body = Rf_lang3(brace_fn, body, x); break;
    case POLICY_KEEP_ATTRIBUTES: body = Rf_lang3(keep_attributes_fn, body, x); break;
    case POLICY_INVISIBLE: body = Rf_lang2(invisible_fn, body); break;
    default: break;
    }
    PROTECT(body);
    SEXP fun = closure(FORMALS(f), body, method_env);
    UNPROTECT(2);
    return fun;
}

/* .Call(C_bind, f, x): `x$name` of a Python object R calls methods of (R/bridge.R's
 * .bound_method): the closure C_closure made of the method (its formals the Python
 * method's) with x added to its body, sent first, as C_method does for tensors. */
SEXP C_bind(SEXP f, SEXP x) {
    static SEXP invisible_sym = NULL;  /* (symbols live as long as R: looked up once) */
    if (!invisible_sym) invisible_sym = Rf_install("invisible");
    SEXP call = BODY(f);  /* .External2(C_frame_call, info), or invisible() of it */
    int invisible = CAR(call) == invisible_sym;
    if (invisible) call = CADR(call);
    SEXP body = PROTECT(Rf_lang4(CAR(call), CADR(call), CADDR(call), x));
    if (invisible) body = Rf_lang2(CAR(BODY(f)), body);
    PROTECT(body);
    SEXP fun = closure(FORMALS(f), body, CLOENV(f));
    UNPROTECT(2);
    return fun;
}

/* .Call(C_bound, cache, x, name): `x$name` from the closures .bound_method made (cache:
 * "<class>$<name>" -> the closure, or FALSE for a field): the closure with x (C_bind),
 * FALSE, or NULL when not made yet (fast path: no R code, no crossing). */
SEXP C_bound(SEXP cache, SEXP x, SEXP name) {
    SEXP cls = Rf_getAttrib(x, R_ClassSymbol);
    if (TYPEOF(cls) != STRSXP || XLENGTH(cls) < 1 || TYPEOF(name) != STRSXP ||
        XLENGTH(name) != 1)
        return R_NilValue;
    char key[256];
    if (snprintf(key, sizeof key, "%s$%s", CHAR(STRING_ELT(cls, 0)),
                 CHAR(STRING_ELT(name, 0))) >= (int)sizeof key)
        return R_NilValue;
    SEXP f = Rf_findVarInFrame3(cache, Rf_install(key), TRUE);
    if (f == R_UnboundValue) return R_NilValue;
    return TYPEOF(f) == CLOSXP ? C_bind(f, x) : f;
}

/* ------------------------------------------------------------------------
 * .Call(C_nn_dollar, x, name): `x$name` of a module's R6 object `x` when it is
 * found without R code, else NULL and `$.nn_Module` looks it up as before:
 * - a field or method of the R6 object itself (not NULL; an active binding or
 *   a promise is left to R);
 * - a child seen before under that name: the callable `$.nn_Module` keeps in
 *   the parent's cache (private$children_) under "$name", if Python still has
 *   that very module as the parent's child `name` (and no parameter or buffer
 *   of that name, which come first).  Python's tables are read as they are
 *   now, so any change made in Python (a child replaced, removed) is seen.
 * No conversion, no allocation on the R side: the lookup in every forward()
 * kept to one .Call and a dictionary read.
 */
static PyObject *str_parameters, *str_buffers, *str_modules;
static SEXP py_sym;

static PyObject *module_table(PyObject *m, PyObject *name) {
    PyObject *t = PyObject_GetAttr(m, name);
    if (t && !PyDict_Check(t)) Py_CLEAR(t);
    return t;
}

static SEXP nn_child(SEXP py, const char *nm, SEXP cache) {
    if (TYPEOF(cache) != ENVSXP || TYPEOF(py) != EXTPTRSXP || R_ExternalPtrTag(py) != tag_sym)
        return R_NilValue;
    char key[256];
    if (snprintf(key, sizeof key, "$%s", nm) >= (int)sizeof key) return R_NilValue;
    SEXP f = Rf_findVarInFrame3(cache, Rf_install(key), TRUE);
    if (f == R_UnboundValue) return R_NilValue;
    if (!py_sym) py_sym = Rf_install("py");
    SEXP holder = Rf_getAttrib(f, py_sym);
    SEXP child = TYPEOF(holder) == ENVSXP ? Rf_findVarInFrame3(holder, py_sym, TRUE)
                                          : R_UnboundValue;
    if (TYPEOF(child) != EXTPTRSXP || R_ExternalPtrTag(child) != tag_sym ||
        !R_ExternalPtrAddr(child))
        return R_NilValue;
    PyGILState_STATE g = PyGILState_Ensure();
    if (!str_modules) {
        str_parameters = PyUnicode_InternFromString("_parameters");
        str_buffers = PyUnicode_InternFromString("_buffers");
        str_modules = PyUnicode_InternFromString("_modules");
    }
    int same = 0;
    PyObject *m = r_to_py(py); /* (a weak handle: the module it refers to) */
    PyObject *k = m ? PyUnicode_FromString(nm) : NULL;
    PyObject *params = k ? module_table(m, str_parameters) : NULL;
    PyObject *bufs = params ? module_table(m, str_buffers) : NULL;
    PyObject *mods = bufs ? module_table(m, str_modules) : NULL;
    if (mods) {
        PyObject *p = PyDict_GetItemWithError(params, k); /* (borrowed) */
        PyObject *b = p || PyErr_Occurred() ? NULL : PyDict_GetItemWithError(bufs, k);
        PyObject *c = p || b || PyErr_Occurred() ? NULL : PyDict_GetItemWithError(mods, k);
        same = (p == NULL || p == Py_None) && (b == NULL || b == Py_None) &&
               c == (PyObject *)R_ExternalPtrAddr(child);
    }
    PyErr_Clear(); /* (a failure is a miss: Python's own lookup says what is wrong) */
    Py_XDECREF(mods);
    Py_XDECREF(bufs);
    Py_XDECREF(params);
    Py_XDECREF(k);
    Py_XDECREF(m);
    PyGILState_Release(g);
    return same ? f : R_NilValue;
}

static SEXP in_frame(SEXP env, SEXP sym) { /* (a promise or nothing: R_UnboundValue) */
    if (TYPEOF(env) != ENVSXP) return R_UnboundValue;
    SEXP v = Rf_findVarInFrame3(env, sym, TRUE);
    return TYPEOF(v) == PROMSXP || v == R_MissingArg ? R_UnboundValue : v;
}

SEXP C_nn_dollar(SEXP x, SEXP name) {
    static SEXP enclos_sym = NULL, private_sym, children_sym;
    if (!ready || TYPEOF(x) != ENVSXP || TYPEOF(name) != STRSXP || XLENGTH(name) != 1 ||
        STRING_ELT(name, 0) == NA_STRING || !CHAR(STRING_ELT(name, 0))[0])
        return R_NilValue;
    if (!enclos_sym) {
        enclos_sym = Rf_install(".__enclos_env__");
        private_sym = Rf_install("private");
        children_sym = Rf_install("children_");
    }
    const char *nm = Rf_translateCharUTF8(STRING_ELT(name, 0));
    SEXP sym = Rf_installTrChar(STRING_ELT(name, 0));
    if (R_existsVarInFrame(x, sym)) { /* (a child is no field: one scan of the frame) */
        if (R_BindingIsActive(sym, x)) return R_NilValue; /* (R calls it, once, as before) */
        SEXP own = in_frame(x, sym);
        if (own != R_UnboundValue && own != R_NilValue) return own;
    }
    SEXP priv = in_frame(in_frame(x, enclos_sym), private_sym);
    if (priv == R_UnboundValue) return R_NilValue;
    if (!py_sym) py_sym = Rf_install("py");
    return nn_child(in_frame(priv, py_sym), nm, in_frame(priv, children_sym));
}
