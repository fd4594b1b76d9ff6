"""The built-in optimizers' setting checks, generated from their one declaration
(each class's `checks` in rtorch_py/optim/optimizer.py): a bad setting gives
PyTorch's error in Python (torch.optim's own, compared) and R torch's in R (its
message, condition class and call; every R case in one R process); good settings
pass on both sides, and each side keeps its own bounds where they differ."""
from __future__ import annotations

import inspect
import re

import pytest
import torch

from helpers import needs_r, run_r
from rtorch_py import torch_zeros
from rtorch_py.optim import optimizer
from rtorch_py.optim.optimizer import Check, required

# Values tried for each setting (with the others at their defaults); each prints
# the same with Python's "g" format as with R's as.character(). Boundaries where
# PyTorch and R torch differ are among them (a beta of 1, etas of 1).
TRIES: dict[str, list[dict]] = {
    "lr": [dict(lr=-1), dict(lr=-1e-05), dict(lr=0.5)],
    "momentum": [dict(momentum=-0.5), dict(momentum=0.9)],
    "weight_decay": [dict(weight_decay=-1), dict(weight_decay=0.25)],
    "eps": [dict(eps=-1), dict(eps=0.001)],
    "betas": [dict(betas=(b1, b2)) for b1, b2 in
              [(1.5, 0.9), (-0.5, 0.9), (0.9, 2), (0.9, -1), (1, 0.9), (0.9, 1), (0.5, 0.5)]],
    "alpha": [dict(alpha=-0.5), dict(alpha=0.5)],
    "lr_decay": [dict(lr_decay=-1)],
    "initial_accumulator_value": [dict(initial_accumulator_value=-2)],
    "rho": [dict(rho=2), dict(rho=-0.5), dict(rho=1)],
    "etas": [dict(etas=e) for e in [(1.5, 2), (0.5, 0.5), (-0.5, 2), (0, 1.2), (1, 1), (0.5, 1)]],
    "nesterov": [dict(nesterov=True), dict(nesterov=True, momentum=0.9),
                 dict(nesterov=True, momentum=0.9, dampening=0.5)],
}


def _optimizers() -> dict[str, type]:
    """optim_sgd ... -> the class it makes (its return annotation)."""
    return {name: getattr(optimizer, inspect.signature(fn).return_annotation)
            for name, fn in vars(optimizer).items() if name.startswith("optim_")}


def _defaults(name: str) -> dict:
    return {p.name: p.default for p in inspect.signature(getattr(optimizer, name)).parameters
            .values() if p.default is not p.empty}


def _cases() -> list[tuple[str, dict]]:
    """(optimizer, settings given) for every setting it has a try for; SGD's lr is
    given (it has no default) unless the case is about lr, and once left out."""
    out = []
    for name in _optimizers():
        base = {"lr": 0.5} if _defaults(name)["lr"] is required else {}
        out.append((name, dict(base)))
        out += [(name, {**base, **t}) for setting in _defaults(name)
                for t in TRIES.get(setting, [])]
    out.append(("optim_sgd", {}))
    return list({f"{n}{sorted(s.items())}": (n, s) for n, s in out}.values())


CASES = _cases()


def _first_failing(name: str, given: dict, r: bool) -> Check | None:
    settings = {**_defaults(name), **given}
    for check in _optimizers()[name].checks:
        if r and not (check.r_ok or check.ok)(settings):
            return check
        if not r and check.message is not None and not check.ok(settings):
            return check
    return None


def _case_id(case: tuple[str, dict]) -> str:
    name, given = case
    return name + "(" + ", ".join(f"{k}={v}" for k, v in given.items()) + ")"


def test_every_check_is_tried_on_both_sides() -> None:
    """Each declared check is the first to fail for some case, in Python (when
    PyTorch makes it) and in R: a new check needs a try above."""
    for name, cls in _optimizers().items():
        for check in cls.checks:
            for r in (False, True):
                if check.message is None and not r:
                    continue
                assert any(_first_failing(n, g, r) is check for n, g in CASES if n == name), \
                    (name, check.r_message if r else check.message)


# -- Python: PyTorch's errors, as torch.optim raises them ------------------------


@pytest.mark.parametrize("case", [c for c in CASES if "lr" in c[1] or
                                  _defaults(c[0])["lr"] is not required], ids=_case_id)
def test_python_raises_pytorchs_error(case: tuple[str, dict]) -> None:
    name, given = case
    params = [torch.zeros(2, requires_grad=True)]
    theirs: str | None = None
    try:
        getattr(torch.optim, _optimizers()[name].__name__)(params, **given)
    except ValueError as e:
        theirs = str(e)
    failing = _first_failing(name, given, r=False)
    expected = None if failing is None else failing.message.format(**{**_defaults(name), **given})
    assert expected == theirs
    ours = [torch_zeros(2, requires_grad=True)]
    if expected is None:
        getattr(optimizer, name)(ours, **given)
    else:
        with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
            getattr(optimizer, name)(ours, **given)


# -- R: R torch's errors, one R process for every case ----------------------------


def _r_value(v: object) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, tuple):
        return "c(" + ", ".join(map(_r_value, v)) + ")"
    return repr(v)


def _r_message(template: str, settings: dict) -> str:
    """R torch's glue template filled in: {x}, {x[i]} and {x[[i]]} (1-based)."""
    def value(m: re.Match) -> str:
        v = settings[m[1]]
        return format(v if m[2] is None else v[int(m[2]) - 1], "g")
    return re.sub(r"\{(\w+)(?:\[\[?(\d)\]?\])?\}", value, template)


@pytest.fixture(scope="module")
def r_outcomes() -> dict[str, str]:
    """Each case's outcome in R: "ok", or the condition's class, message and call."""
    lines = ["library(torch)", "x <- torch_tensor(1, requires_grad = TRUE)",
             "outcome <- function(expr) tryCatch({expr; 'ok'}, error = function(e) paste(",
             "  paste(class(e), collapse = '/'), conditionMessage(e),",
             "  paste(deparse(conditionCall(e)), collapse = ''), sep = ' | '))"]
    for i, (name, given) in enumerate(CASES):
        args = "".join(f", {'lambda' if k == 'lambd' else k} = {_r_value(v)}"
                       for k, v in given.items())
        lines.append(f"cat('{i}', outcome({name}(x{args})), sep = '\\t'); cat('\\n')")
    res = run_r("-e", "\n".join(lines))
    assert res.returncode == 0, res.stderr
    return dict(line.split("\t", 1) for line in res.stdout.splitlines() if "\t" in line)


@needs_r
@pytest.mark.parametrize("i", range(len(CASES)), ids=[_case_id(c) for c in CASES])
def test_r_raises_r_torchs_error(i: int, r_outcomes: dict[str, str]) -> None:
    name, given = CASES[i]
    failing = _first_failing(name, given, r=True)
    if failing is None:
        expected = "ok"
    else:
        template = failing.r_message
        message = _r_message(template, {**_defaults(name), **given})
        if failing.r_call == "value_error":
            expected = f'value_error/rlang_error/error/condition | {message} | ' \
                       f'value_error("{template}")'
        else:
            expected = f"rlang_error/error/condition | {message} | {failing.r_call}"
    assert r_outcomes[str(i)] == expected
