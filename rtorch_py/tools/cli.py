"""`rtorch-py`: the console entry point. `rtorch-py run FILE.R` / `rtorch-py run
-e EXPR` is Rscript with the shim; `install-r`, `build-r`, `conformance`, `docs-check`,
`signatures` and `vignettes` are the other tools of this package.

Top-level expressions are read and evaluated one at a time, as R's REPL
does for Rscript: visible values are printed with print()/show(), errors
are reported by R's own handler (``Error in f() : msg``), then "Execution
halted" and exit status 1. Warnings are printed after each top-level call.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
from typing import Any, Sequence

from ..r import _r_home, load
from ..r.in_r import started
from . import conformance, docs_check, install, signatures, vignettes

__all__ = ["main", "run_source"]


def _write_out(s: str) -> None:
    os.write(1, s.encode("utf-8", "replace"))


def _write_err(s: str) -> None:
    os.write(2, s.encode("utf-8", "replace"))


def _setup_console() -> None:
    # Unbuffered writes to the real stdout/stderr, so R's output and ours
    # interleave as in Rscript and nothing is lost if the script calls quit().
    from rpy2.rinterface_lib import callbacks
    callbacks.consolewrite_print = _write_out
    callbacks.consolewrite_warnerror = _write_err
    callbacks.showmessage = _write_err


def _libR() -> Any:
    return ctypes.CDLL(os.path.join(_r_home(), "lib", "libR.so"))  # already loaded


def _set_command_args(argv: Sequence[str]) -> None:
    """What commandArgs() returns, laid out as Rscript lays it out."""
    arr = (ctypes.c_char_p * len(argv))(*[a.encode() for a in argv])
    _libR().R_set_command_line_arguments(len(argv), arr)  # R keeps copies


# R's REPL reads through a console buffer of 4096 bytes, of which rpy2's reader
# needs two (newline, NUL); a longer line fails inside rpy2 and reads as end
# of input. Rscript reads files without that limit, so long lines are fed in
# pieces, cut where R ignores a newline.
_CONSOLE_MAX = 4000


def _console_lines(text: str) -> list[str]:
    """The script's lines as the REPL is fed them: a line over _CONSOLE_MAX
    UTF-8 bytes is cut after tokens inside ( or [, where a newline means
    nothing to R's parser. ValueError if a long line has no such place (a
    very long string literal, say) or the script does not parse."""
    lines = text.split("\n")
    if all(len(line.encode()) <= _CONSOLE_MAX for line in lines):
        return lines
    import rpy2.rinterface as ri
    from rpy2.rinterface_lib.embedded import RRuntimeError
    terminals = ri.evalr("""function(text) {
      pd <- utils::getParseData(parse(text = text, keep.source = TRUE))
      pd <- pd[pd$terminal, ]
      pd <- pd[order(pd$line1, pd$col1), ]
      list(pd$line1, pd$text)
    }""")
    try:
        where, texts = terminals(ri.StrSexpVector([text]))
    except RRuntimeError as err:
        raise ValueError(f"the script does not parse: {err}") from None
    nesting: list[str] = []  # the brackets open before the current token
    safe_ends: dict[int, list[tuple[str, bool]]] = {}
    for line_no, tok in zip(where, texts):
        if tok in (")", "]", "}") and nesting:
            nesting.pop()
        # cutting after this token is safe inside ( or [ (not inside {)
        safe_ends.setdefault(line_no, []).append((tok, bool(nesting) and nesting[-1] != "{"))
        nesting.extend({"(": ["("], "[": ["["], "[[": ["[", "["], "{": ["{"]}.get(tok, []))
    out: list[str] = []
    for n, line in enumerate(lines, start=1):
        pieces: list[str] = []
        start = pos = 0
        cut = None  # the end of the last safe token of the current piece
        for tok, safe in safe_ends.get(n, []) if len(line.encode()) > _CONSOLE_MAX else ():
            found = line.find(tok, pos)
            if found < 0:  # a token running on to the next line
                break
            pos = found + len(tok)
            if len(line[start:pos].encode()) > _CONSOLE_MAX and cut is not None:
                pieces.append(line[start:cut])
                start, cut = cut, None
            if safe:
                cut = pos
        if len(line[start:].encode()) > _CONSOLE_MAX and cut is not None:
            pieces.append(line[start:cut])
            start = cut
        pieces.append(line[start:])
        if any(len(piece.encode()) > _CONSOLE_MAX for piece in pieces):
            raise ValueError(f"line {n} of the script is longer than R's console allows "
                             f"({_CONSOLE_MAX} bytes) and cannot be cut inside ( or [; "
                             "split it into shorter lines")
        out.extend(pieces)
    return out


def run_source(text: str, args: Sequence[str] = (), command: Sequence[str] = ()) -> int:
    """Run R code as Rscript would, through R's own REPL in this process's
    embedded R, then end the process with the script's status (as Rscript;
    1 when the R side could not be set up). `command` is how the code was given
    (`--file=F` or `-e EXPR`...) and `args` what follows, for commandArgs()."""
    import rpy2.rinterface as ri
    from rpy2.rinterface_lib import callbacks, openrlib
    from rpy2.rinterface_lib._rinterface_capi import PARSING_STATUS, RParsingError

    load(attach=False)
    started()  # as a Python that R starts: NumPy silent, gc tuned, warnings to R

    try:
        lines = _console_lines(text)
    except ValueError as err:
        _write_err(f"Error: {err}\nExecution halted\n")
        return 1
    pos = 0
    try:  # R's REPL drops an unfinished last expression; Rscript reports it
        ri.parse(text)
        unfinished = False
    except RParsingError as err:
        unfinished = err.status is PARSING_STATUS.PARSE_INCOMPLETE

    def read(prompt: str) -> str:
        nonlocal pos
        if pos >= len(lines):
            return ""  # end of input
        line = lines[pos]
        pos += 1
        return line if line else " "  # an empty reply would mean end of input

    def cleanup(saveact: int, status: int, runlast: int) -> None:
        # R ends here: at the end of input (status 0), after an error ("Execution
        # halted" said, status 1), or at quit(status = n) in the script
        if status == 0 and pos >= len(lines) and unfinished:
            _write_err("Error: unexpected end of input\nExecution halted\n")
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)

    r_exe = os.path.join(_r_home(), "bin", "exec", "R")
    _set_command_args([r_exe, "--no-echo", "--no-restore", *command,
                       *(["--args", *args] if args else [])])
    callbacks.consoleread = read
    callbacks.cleanup = cleanup
    openrlib.rlib.R_Interactive = False  # interactive() is FALSE, as under Rscript
    ri.evalr("options(showErrorCalls = TRUE)")
    lib_r = ctypes.PyDLL(os.path.join(_r_home(), "lib", "libR.so"))  # (already loaded)
    ctypes.c_int.in_dll(lib_r, "R_NoEcho").value = 1  # as --no-echo: no newline at the end
    # R's own read-eval-print loop, Rscript's: from its top level (R is idle here:
    # nothing of R's is on the C stack), each top-level expression read through
    # `read`, evaluated, a visible value printed, warnings after it; an error
    # ends it as Rscript's ends ("Execution halted"). It returns only through
    # `cleanup`. (PyDLL: R runs holding the GIL, so each crossing into Python
    # takes it for free.)
    lib_r.run_Rmainloop()
    return 1  # (not reached)


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point (`rtorch-py`). `run` ends the process itself, with
    the script's status, as Rscript does."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["install-r"]:  # the shim into an R library: see install.py
        return install.main(argv[1:])
    if argv[:1] == ["build-r"]:  # the R source package for R users: see install.py
        return install.build_main(argv[1:])
    if argv[:1] == ["vignettes"]:  # its own options: see vignettes.py
        return int(vignettes.main(argv[1:]) or 0)
    if argv[:1] == ["conformance"]:  # R torch's own tests: see conformance.py
        return conformance.main(argv[1:])
    if argv[:1] == ["docs-check"]:  # R torch's documented examples: see docs_check.py
        return docs_check.main(argv[1:])
    if argv[:1] == ["signatures"]:  # R torch's exported names and arguments: signatures.py
        return signatures.main(argv[1:])
    parser = argparse.ArgumentParser(
        prog="rtorch-py", description="R torch's API on the rtorch-py engine")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run an R script (or -e expressions) like Rscript, "
                                     "with library(torch) attaching the shim")
    run.add_argument("-e", dest="exprs", action="append", metavar="EXPR",
                     help="R expression(s) to run, as Rscript -e")
    run.add_argument("file", nargs="?", help="the R script")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments for commandArgs()")
    vig = sub.add_parser("vignettes", help="reproduce and cross-check every vignette")
    vig.add_argument("rest", nargs=argparse.REMAINDER, help="options of the vignettes tool")
    ns = parser.parse_args(argv)

    if ns.command == "vignettes":
        return int(vignettes.main(ns.rest) or 0)

    if ns.exprs:
        text = "\n".join(ns.exprs)
        command = [x for e in ns.exprs for x in ("-e", e)]
        if ns.file is not None:
            ns.args = [ns.file, *ns.args]
    elif ns.file:
        command = ["--file=" + ns.file]
        try:
            with open(ns.file, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as err:
            _write_err(f"Fatal error: cannot open file '{ns.file}': {err.strerror}\n")
            return 2
    else:
        parser.error("run needs a FILE or -e EXPR")
    _setup_console()
    status = run_source(text, ns.args or (), command)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # as Rscript ends: no teardown of the embedded R


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
