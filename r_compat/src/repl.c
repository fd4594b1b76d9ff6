#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include <Rembedded.h>

/* One step of R's own REPL (what Rscript runs): read a line through the
 * console callback, parse, evaluate, print a visible value, print deferred
 * warnings. Run under R_ToplevelExec so that an error ends only this step.
 * Returns the REPL status (-1 at end of input), or -2 after an error.
 *
 * Called from Python through ctypes while R is idle (not through .Call):
 * R_ReplDLLdo1 resets R's protect stack, which is only safe at top level. */

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

