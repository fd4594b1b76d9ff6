"""R torch's own test files, run unchanged in the shim, against expected-pass lists.

The suite is other people's code and is not in the repository: it runs when
`RTORCH_CONFORMANCE_SOURCE` (default: `../.mirror/mlverse+torch/repo` from the
repository root, the git directory of a fetched mlverse/torch snapshot, or any
directory of its test files) exists, and says plainly that it did not run
otherwise.

`tests/conformance/<group>-expected.txt` lists, one `file: test name` per
line, the tests known to pass. A listed test that does not pass fails here;
a test that passes but is not listed is reported, so the list can grow
(`RTORCH_CONFORMANCE_UPDATE=1` appends them). Skips other than R torch's own
on a CPU-only machine are reported too.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from helpers import ROOT, needs_r
from rtorch_py.tools import conformance

EXPECTED_DIR = Path(__file__).parent / "conformance"
SOURCE = Path(os.environ.get("RTORCH_CONFORMANCE_SOURCE",
                             ROOT.parent / ".mirror" / "mlverse+torch" / "repo"))
TIMEOUT = float(os.environ.get("RTORCH_CONFORMANCE_TIMEOUT", "300"))
JOBS = int(os.environ.get("RTORCH_CONFORMANCE_JOBS", "2"))


def read_expected(group: str) -> list[str]:
    path = EXPECTED_DIR / f"{group}-expected.txt"
    if not path.exists():
        return []
    lines = (ln.strip() for ln in path.read_text(encoding="utf-8").splitlines())
    return [ln for ln in lines if ln and not ln.startswith("#")]


def left_out(group: str) -> set[str]:
    """Tests named in a '# Left out on purpose: file: test' comment (flaky ones)."""
    path = EXPECTED_DIR / f"{group}-expected.txt"
    tag = "# Left out on purpose: "
    return {ln[len(tag):].strip() for ln in path.read_text(encoding="utf-8").splitlines()
            if ln.startswith(tag)} if path.exists() else set()


def key(file: str, test: str) -> str:
    return f"{file}: {test}"


@pytest.fixture(scope="module")
def test_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SOURCE.exists():
        pytest.skip(f"R torch's conformance suite did NOT run: {SOURCE} does not exist "
                    "(fetch mlverse/torch, or set RTORCH_CONFORMANCE_SOURCE to its git "
                    "directory or to a directory of its test files)")
    return conformance.find_test_dir(SOURCE, tmp_path_factory.mktemp("rtorch-testthat"))


def test_expected_lists_are_well_formed() -> None:
    for group in conformance.GROUPS:
        names = read_expected(group)
        assert len(names) == len(set(names)), f"{group}-expected.txt has duplicate lines"
        for line in names:
            file, sep, test = line.partition(": ")
            assert sep and test, f"{group}-expected.txt: {line!r} is not 'file: test name'"
            assert file in conformance.GROUPS[group], \
                f"{group}-expected.txt: {file!r} is not a file of the {group} group"


# Our own small testthat files (not R torch's), to check the runner itself.
_DEMO = {
    "helper-demo.R": "helper_value <- 42\n",
    "test-demo.R": """
test_that("passes", { expect_equal(helper_value, 42); expect_true(is_torch_tensor(torch_tensor(1))) })
test_that("fails", { expect_equal(1, 2) })
test_that("errors", { stop("boom") })
test_that("skips as R torch does without a GPU", { skip("A GPU is not available for testing.") })
test_that("skips for another reason", { skip("no reason R torch has") })
test_that("leaves gctorture on", { gctorture2(500); expect_true(TRUE) })  # every 500th allocation: cheaper than gctorture(TRUE), same switch
test_that("passes", { expect_true(TRUE) })
""",
    "test-hang.R": """
test_that("before", { expect_true(TRUE) })
test_that("hangs", { Sys.sleep(600) })
test_that("after", { expect_true(TRUE) })
""",
}


@needs_r
def test_runner_classifies_tests_and_stops_a_hung_file(tmp_path: Path) -> None:
    tdir = tmp_path / "testthat"
    tdir.mkdir()
    for name, text in _DEMO.items():
        (tdir / name).write_text(text, encoding="utf-8")
    assert conformance.select_files(tdir) == ["demo", "hang"]
    demo, hang = conformance.run(tdir, ["demo", "hang"], timeout=25, jobs=2,
                                 work=tmp_path / "runs")

    assert demo.status == "ok"
    got = {t.test: t.status for t in demo.tests}
    assert got == {"passes": "passed", "fails": "failed", "errors": "error",
                   "skips as R torch does without a GPU": "skipped",
                   "skips for another reason": "skipped",
                   "leaves gctorture on": "passed", "passes [2]": "passed"}
    by_name = {t.test: t for t in demo.tests}
    assert "boom" in by_name["errors"].message
    assert conformance.allowed_skip(by_name["skips as R torch does without a GPU"])
    assert not conformance.allowed_skip(by_name["skips for another reason"])
    assert any("gctorture" in w["message"] for w in by_name["leaves gctorture on"].warning_messages)

    assert hang.status == "timeout" and hang.running == "hangs"
    assert [(t.test, t.status) for t in hang.tests] == \
        [("before", "passed"), ("hangs", "not run"), ("after", "not run")]
    report = conformance.format_report([demo, hang])
    assert "stopped while running: hangs" in report and "[failed] fails" in report


@pytest.fixture(scope="module")
def all_results(test_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Every group's files in one pool, so the long files of each overlap."""
    names = [n for g in sorted(conformance.GROUPS) for n in conformance.select_files(test_dir, g)]
    results = conformance.run(test_dir, names, timeout=TIMEOUT, jobs=JOBS,
                              work=tmp_path_factory.mktemp("conformance-runs"))
    return {r.file: r for r in results}


@needs_r
@pytest.mark.parametrize("group", sorted(conformance.GROUPS))
def test_conformance_group(group: str, test_dir: Path, all_results: dict) -> None:
    names = conformance.select_files(test_dir, group)
    results = [all_results[n] for n in names]
    print(f"\nR torch's {group} tests in the shim:\n"
          + conformance.format_report(results))

    for f in results:
        if f.note:
            warnings.warn(f"{group}: test-{f.file}.R: {f.note}")
    status = {key(f.file, t.test): t for f in results for t in f.tests}
    passed = {k for k, t in status.items() if t.status == "passed"}
    expected = read_expected(group)

    sources = {n: (test_dir / f"test-{n}.R").read_text(encoding="utf-8", errors="replace")
               for n in names if (test_dir / f"test-{n}.R").exists()}
    odd_skips = [f"{key(f.file, t.test)}: {t.message}" for f in results for t in f.tests
                 if t.status == "skipped" and not conformance.allowed_skip(t, sources.get(f.file, ""))]
    if odd_skips:
        warnings.warn(f"{group}: skips R torch would not take on a CPU-only machine:\n  "
                      + "\n  ".join(odd_skips))

    new = sorted(passed - set(expected) - left_out(group))
    if new:
        msg = f"{group}: {len(new)} test(s) pass but are not in {group}-expected.txt:\n  " \
              + "\n  ".join(new)
        print(msg)
        if os.environ.get("RTORCH_CONFORMANCE_UPDATE") == "1":
            EXPECTED_DIR.mkdir(exist_ok=True)
            with open(EXPECTED_DIR / f"{group}-expected.txt", "a", encoding="utf-8") as fh:
                fh.write("".join(f"{n}\n" for n in new))
        else:
            warnings.warn(msg + "\n(RTORCH_CONFORMANCE_UPDATE=1 adds them)")

    broken = []
    for k in expected:
        t = status.get(k)
        if t is None:
            broken.append(f"{k}: not found (renamed in the suite, or its file did not run)")
        elif t.status != "passed":
            broken.append(f"{k}: {t.status}: {t.message}")
    assert not broken, (f"{len(broken)} test(s) of R torch's {group} group listed as passing "
                        f"no longer pass:\n  " + "\n  ".join(broken))
