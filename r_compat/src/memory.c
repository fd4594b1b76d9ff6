/* The lifetime of what R holds of Python, and R's collector told about it. */
#include "bridge.h"

/* ------------------------------------------------------------------------
 * Handles: external pointers that own a reference to a Python object.
 *
 * A handle needs no finalizer (R runs each finalizer in a context of its own,
 * keeps a finalized object alive one more collection and so ages it into an
 * older generation).  Its protected field is an owner: a small raw vector made
 * by a custom allocator, which R's collector frees, calling our free function,
 * in the same sweep that frees the handle.  The free function only queues the
 * Python reference (the collector must not run Python code); the queue is
 * emptied at the next crossing into Python.
 */
static PyObject **pending = NULL; /* Python references released by R's sweeps */
size_t n_pending = 0;
static size_t pending_cap = 0;
static int swept = 0;             /* R's collector has freed handles since last looked */

void drain_pending(void) { /* GIL held; a release may run Python code, which
                                     may call R, whose collector may queue more */
    while (n_pending > 0) {
        PyObject *o = pending[--n_pending];
        Py_DECREF(o);
    }
}

static void *owner_alloc(R_allocator_t *allocator, size_t size) { return malloc(size); }

static void owner_free(R_allocator_t *allocator, void *mem) { /* inside R's collector */
    PyObject *o = (PyObject *)allocator->data;
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

/* A handle on o (a new reference is taken) of R class cls. */
SEXP make_ptr(PyObject *o, SEXP cls) {
    R_allocator_t allocator = {owner_alloc, owner_free, NULL, o};
    Py_INCREF(o); /* (first: from here on, the owner's sweep releases it) */
    SEXP owner = PROTECT(Rf_allocVector3(RAWSXP, 1, &allocator));
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

/* R's collector cannot see how much memory a tensor holds: a loop whose
 * tensors are large and whose R objects are few would outrun it.  Counted in
 * the bytes of tensors handed to R, minor collections (R's youngest
 * generation), at the cost of 1-3 ms each (R marks its roots and walks its
 * string cache every time):
 *
 * - after a call that ran a backward pass (Python's STEPS_ENDED says so), once
 *   R has been handed STEP_MAX bytes since its last collection, or STEP_MIN
 *   bytes when STEP_EVERY backward passes have run since: the forward's
 *   tensors R was handed are garbage by then, and collected while still young
 *   they free their memory for the next steps' (cache-warm) instead of aging
 *   into a generation that R collects only every 20th time.  A small model's
 *   loop collects every STEP_MIN (thousands of steps: its memory stays flat), a
 *   wide one every few steps, not after each;
 * - otherwise once R has been handed YOUNG_LIMIT bytes, or twice the bytes of
 *   the last step (from one backward pass to the next) if more, up to
 *   YOUNG_MAX: memory stays flat in a loop without backward passes, and a
 *   training step that hands R more than YOUNG_LIMIT is not collected in its
 *   middle, which would age the forward's live tensors;
 * - a full collection every options(torch.threshold_call_gc) MB (default
 *   4000), as R torch does; the option is looked up every 64 MB, so it can
 *   be set at any time.
 *
 * (The limits are fixed, or sized by the last step: sized to what R holds,
 * the limit grew with the garbage that had aged, and a training loop's memory
 * rotated through hundreds of MB.) */
#define MB 1048576.0
#define STEP_MIN (8 * MB)
#define STEP_MAX (32 * MB)
#define STEP_EVERY 3
#define YOUNG_LIMIT (64 * MB)
#define YOUNG_MAX (512 * MB)
#define GC_CHECK_STEP (64 * MB)
static double young_bytes = 0;
static int young_steps = 0;                 /* backward passes since R's last collection */
static double step_handed = 0, last_step_bytes = 0; /* handed to R this step, and last step */
static double bytes_since_gc = 0, next_gc_check = GC_CHECK_STEP;
static PyObject *data_str, *nbytes_str;
static SEXP minor_gc_call; /* .Internal(gc(FALSE, FALSE, FALSE)): gc(full = FALSE) */
/* R's gc(full = TRUE), called by name as R torch's allocator does when an
 * allocation fails (its finalizers free what R no longer holds; trace(gc) sees it) */
static SEXP full_gc_call;

static double gc_threshold(void) {
    SEXP mb = Rf_GetOption1(Rf_install("torch.threshold_call_gc"));
    if (Rf_isNumeric(mb) && Rf_length(mb) == 1 && Rf_asReal(mb) > 0)
        return Rf_asReal(mb) * MB;
    return 4000 * MB;
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

/* Run R's collector if a cadence says so (step_ended: the call ran a backward
 * pass), then release what it swept.  Called with the GIL held, where every R
 * value of the caller is protected. */
void collect_if_due(int step_ended) {
    if (swept) { /* R collected on its own since: its youngest generation starts anew */
        swept = 0;
        young_bytes = 0;
        young_steps = 0;
    }
    int full = 0;
    if (bytes_since_gc >= next_gc_check) {
        next_gc_check = bytes_since_gc + GC_CHECK_STEP;
        full = bytes_since_gc > gc_threshold();
    }
    int due;
    if (step_ended) {
        young_steps++;
        last_step_bytes = step_handed;
        step_handed = 0;
        due = young_bytes > STEP_MAX || (young_bytes > STEP_MIN && young_steps >= STEP_EVERY);
    } else {
        due = young_bytes > fmin(fmax(YOUNG_LIMIT, 2 * last_step_bytes), YOUNG_MAX);
    }
    if (!full && !due) return;
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
    young_steps = 0;
    drain_pending();
}

SEXP tensor_to_r(PyObject *o) {
    double bytes = tensor_bytes(o);
    young_bytes += bytes;
    step_handed += bytes;
    bytes_since_gc += bytes;
    return make_ptr(o, class_values[0]);
}

/* fn(args) in Python; out of memory, R's full collection (its finalizers free
 * what R no longer holds), then the call once more, as R torch's allocator
 * retries an allocation. */
PyObject *call_retrying(PyObject *fn, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    PyObject *res = PyObject_Vectorcall(fn, args, nargsf, kwnames);
    if (!res && PyErr_ExceptionMatches(PyExc_MemoryError)) {
        PyErr_Clear();
        int err = 0;
        R_tryEvalSilent(full_gc_call, R_GlobalEnv, &err);
        drain_pending();
        res = PyObject_Vectorcall(fn, args, nargsf, kwnames);
    }
    return res;
}

/* The calls the cadence makes, and the names it reads (once, from C_init). */
void memory_init(void) {
    minor_gc_call = Rf_lang2(Rf_install(".Internal"),
                             Rf_lang4(Rf_install("gc"), Rf_ScalarLogical(FALSE),
                                      Rf_ScalarLogical(FALSE), Rf_ScalarLogical(FALSE)));
    R_PreserveObject(minor_gc_call);
    full_gc_call = Rf_lang2(Rf_install("gc"), Rf_ScalarLogical(TRUE));
    SET_TAG(CDR(full_gc_call), Rf_install("full"));
    R_PreserveObject(full_gc_call);
    data_str = PyUnicode_InternFromString("data");
    nbytes_str = PyUnicode_InternFromString("nbytes");
}
