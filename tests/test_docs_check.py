"""R torch's rendered documentation as the yardstick (`rtorch-py docs-check`).

The site is other people's text and is not in the repository: the check of every
page runs when `RTORCH_CONFORMANCE_SOURCE` (default: `../.mirror/mlverse+torch/repo`
from the repository root, the git directory of a fetched mlverse/torch snapshot)
exists, and says plainly that it did not run otherwise.

`tests/docs/pages-expected.txt` lists the pages known to print what R torch printed
(exactly, or in layout for random pages and those on PLATFORM_NOISE). A listed page
that no longer matches fails here; a page that matches but is not listed is reported
(`RTORCH_DOCS_UPDATE=1` adds it).

The runner itself is checked on pages of our own, in a git repository made here.
"""
from __future__ import annotations

import os
import subprocess
import warnings
from pathlib import Path

import pytest
import torch

from helpers import ROOT, needs_r
from rtorch_py.tools import docs_check as dc

SOURCE = Path(os.environ.get("RTORCH_CONFORMANCE_SOURCE",
                             ROOT.parent / ".mirror" / "mlverse+torch" / "repo"))
EXPECTED = Path(__file__).parent / "docs" / "pages-expected.txt"


def read_expected() -> list[str]:
    lines = (ln.strip() for ln in EXPECTED.read_text(encoding="utf-8").splitlines())
    return [ln for ln in lines if ln and not ln.startswith("#")]


# --------------------------------------------------------------------------
# Reading pages (markdown of our own, in the shapes pkgdown and knitr write)

REFERENCE = """# A function

## Usage

``` r
f(x)
```

## Examples

``` r
if (TRUE) {
# a comment, not a heading
x <- 1

x
}
#> [1] 1
y <- 2
y
#> [1] 2
#> 
```

## See also
"""

ARTICLE = """# An article

``` r

library(torch)
x <- 1
x
#> [1] 1
```

Text.

``` r
print("a")
```

    ## [1] "a"

``` sh
echo not R
```
"""


def test_a_reference_page_is_its_examples_section() -> None:
    blocks = dc.parse_blocks(dc._examples_section(REFERENCE))
    assert dc.transcript(blocks) == ["if (TRUE) {", "# a comment, not a heading", "x <- 1",
                                     "x", "}", "#> [1] 1", "y <- 2", "y", "#> [1] 2", "#> "]
    # each run of code with the output after it: what is evaluated, in order
    assert dc.segments(blocks) == [
        ("if (TRUE) {\n# a comment, not a heading\nx <- 1\n\nx\n}", ["#> [1] 1"]),
        ("y <- 2\ny", ["#> [1] 2", "#> "])]


def test_an_article_keeps_knitr_output_blocks() -> None:
    # knitr's uncollapsed chunks (`## ` lines in a block of their own) are output too;
    # other languages' blocks are not code
    assert dc.transcript(dc.parse_blocks(ARTICLE)) == [
        "library(torch)", "x <- 1", "x", "#> [1] 1", 'print("a")', '#> [1] "a"']


def test_libtorch_backtraces_are_dropped() -> None:
    md = "``` r\nf()\n#> Error : boom\n#> Exception raised from f at x.cpp:1:\n" \
         "#> frame #0: c10::Error + 56 (0x1 in libc10.dylib)\n#> \n#> [1] 2\n#> \n```\n"
    assert dc.transcript(dc.parse_blocks(md)) == ["f()", "#> Error : boom", "#> [1] 2", "#> "]


def test_what_follows_a_libtorch_backtrace_keeps_its_line() -> None:
    # R torch's tracer appends ": " (and the R error) to libtorch's message, whose
    # backtrace ends in a line break: a ":" line of its own, which is not noise
    md = "``` r\ng()\n#> Error:\n#> ! boom\n#> Exception raised from f at x.cpp:1 (most " \
         "recent call first):\n#> frame #0: c10::Error + 56 (0x1 in libc10.dylib)\n" \
         "#> frame #1: f + 8 (0x2 in libtorch_cpu.dylib)\n#> :\n```\n"
    blocks = dc.parse_blocks(md)
    assert dc.transcript(blocks) == ["g()", "#> Error:", "#> ! boom", "#> :"]
    assert dc.has_backtrace(blocks)
    assert not dc.has_backtrace(dc.parse_blocks("``` r\ng()\n#> Error:\n#> ! boom\n```\n"))
    report = dc.format_report([dc.PageResult("articles/a", "exact", backtrace=True),
                               dc.PageResult("articles/b", "exact")])
    assert "Compared without libtorch's C++ backtrace" in report
    assert "  articles/a" in report and "articles/b" not in report


def test_layout_keeps_shapes_and_line_structure_only() -> None:
    a = ["x", "#> torch_tensor", "#> Columns 1 to 10 0.2295  0.4362", "#> 0.01 *",
         "#>  1.5000", "#> [ CPUFloatType{2,3} ]"]
    b = ["x", "#> torch_tensor", "#> Columns 1 to 10-3.4922  0.8076", "#>  -1.2500",
         "#> [ CPUFloatType{2,3} ]"]
    assert dc.layout(a) == dc.layout(b)
    assert dc.layout(a) != dc.layout(b[:-1] + ["#> [ CPUFloatType{2,4} ]"])  # a shape
    assert dc.layout(a) != dc.layout(b[:-1] + ["#> [ CPUDoubleType{2,3} ]"])  # a dtype
    assert dc.layout(a) != dc.layout(b[:-2] + ["#> [ CPUFloatType{2,3} ]"])  # a line
    assert dc.layout(a) != dc.layout(["y", *b[1:]])  # the code


# --------------------------------------------------------------------------
# The runner, on a site of our own

def _torch_draws(seed: int, n: int) -> list[float]:
    """PyTorch's (libtorch's) first n standard normal draws after manual_seed(seed)."""
    torch.manual_seed(seed)
    return torch.randn(n).tolist()


OWN_PAGES = {
    "dev/reference/exact.md":
        "# t\n\n## Examples\n\n``` r\nx <- torch_tensor(c(1, 2))\nx\n#> torch_tensor\n#>  1\n"
        "#>  2\n#> [ CPUFloatType{2} ]\nx$sum()\n#> torch_tensor\n#> 3\n#> [ CPUFloatType{} ]\n```\n",
    "dev/reference/differs.md":
        "# t\n\n## Examples\n\n``` r\n1 + 1\n#> [1] 3\n```\n",
    "dev/reference/random.md":
        "# t\n\n## Examples\n\n``` r\ntorch_randn(2)\n#> torch_tensor\n#> -0.1234\n"
        "#>  1.5678\n#> [ CPUFloatType{2} ]\n```\n",
    # how many values a mask selects follows the draws: R torch's layout shows from
    # some seeds only
    "dev/reference/masked.md":
        "# t\n\n## Examples\n\n``` r\nx <- torch_randn(8)\ntorch_masked_select(x, x > 0)\n"
        "#> torch_tensor\n#>  0.1234\n#>  0.5678\n#>  1.2345\n#>  0.0123\n#>  2.5000\n"
        "#>  0.3000\n#> [ CPUFloatType{6} ]\n```\n",
    # draws, but prints nothing that follows them: what it prints is compared whole
    "dev/reference/draws_quietly.md":
        "# t\n\n## Examples\n\n``` r\nx <- torch_randn(2)\nx$shape\n#> [1] 2 1\n```\n",
    # seeds the generator first: its draws are libtorch's, compared byte for byte
    "dev/reference/seeded.md":
        "# t\n\n## Examples\n\n``` r\ntorch_manual_seed(1)\ntorch_randn(3)\n"
        "#> torch_tensor\n" + "".join(f"#> {v: .4f}\n" for v in _torch_draws(1, 3)) +
        "#> [ CPUFloatType{3} ]\n```\n",
    "dev/reference/missing.md":
        "# t\n\n## Examples\n\n``` r\nno_such_function(1)\n#> [1] 1\n```\n",
    "dev/reference/noisy.md":
        "# t\n\n## Examples\n\n``` r\ntorch_tensor(-0)\n#> torch_tensor\n#>  7\n"
        "#> [ CPUFloatType{1} ]\n```\n",
    "dev/reference/quits.md":
        "# t\n\n## Examples\n\n``` r\nquit(save = \"no\", status = 3)\n```\n",
    "dev/reference/slow.md":
        "# t\n\n## Examples\n\n``` r\nSys.sleep(60)\n```\n",
    "dev/reference/warns.md":
        "# t\n\n## Examples\n\n``` r\nwarning(\"careful\")\nmessage(\"note\")\n"
        "#> Warning: careful\n#> note\n```\n",
    "dev/reference/zzz_after.md":
        "# t\n\n## Examples\n\n``` r\nsum(1:3)\n#> [1] 6\n```\n",
    "dev/reference/nocode.md": "# t\n\nNo examples.\n",
    "dev/articles/demo.md":
        "# demo\n\n``` r\n\nlibrary(torch)\ntorch_ones(2)$sum()\n#> torch_tensor\n#> 2\n"
        "#> [ CPUFloatType{} ]\n"
        # an error as knitr (1.50 on) shows it: entraced with rlang
        "stop(errorCondition(\"bare\", call = NULL))\n#> Error:\n#> ! bare\n```\n",
}
OWN_RMD = ("---\ntitle: demo\n---\n\n```{r, include = FALSE}\nknitr::opts_chunk$set(collapse = "
           "TRUE, comment = \"#>\")\n```\n\n```{r}\nlibrary(torch)\ntorch_ones(2)$sum()\n"
           "stop(errorCondition(\"bare\", call = NULL))\n```\n")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env={**os.environ, "GIT_AUTHOR_NAME": "t",
                                          "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                                          "GIT_COMMITTER_EMAIL": "t@t"}).stdout.strip()


@pytest.fixture(scope="module")
def own_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("site")
    _git(repo, "init", "-q", "-b", "main")
    (repo / "vignettes").mkdir()
    (repo / "vignettes" / "demo.Rmd").write_text(OWN_RMD, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "source")
    source = _git(repo, "rev-parse", "--short", "HEAD")
    _git(repo, "checkout", "-q", "--orphan", "gh-pages")
    _git(repo, "rm", "-rq", "--cached", ".")
    for name, text in OWN_PAGES.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "add", "dev")
    _git(repo, "commit", "-q", "-m", f"Built site for torch@0.17.0: {source}")
    return repo / ".git"


@needs_r
def test_runner_classifies_pages(own_site: Path, tmp_path: Path) -> None:
    git_dir = dc.find_git_dir(own_site)
    pages = dc.read_pages(git_dir)
    assert [p.name for p in pages if p.kind == "articles"] == ["articles/demo"]
    vignettes = dc.extract_vignettes(git_dir, tmp_path / "src")
    results = {r.page: r for r in dc.check(pages, vignettes, tmp_path, jobs=1, page_time=4,
                                           noise={"reference/noisy": "a -0 from somewhere"})}
    status = {k: r.status for k, r in results.items()}
    assert status == {
        "articles/demo": "exact", "reference/exact": "exact", "reference/warns": "exact",
        "reference/zzz_after": "exact",  # after the page that ended its process
        "reference/differs": "differ", "reference/random": "layout",
        "reference/masked": "layout", "reference/draws_quietly": "differ",
        "reference/seeded": "exact",
        "reference/noisy": "layout", "reference/missing": "error",
        "reference/quits": "error", "reference/slow": "error", "reference/nocode": "none"}
    assert results["reference/random"].random and not results["reference/differs"].random
    assert results["reference/masked"].random
    # a page not exact runs from two more seeds; one that drew from the generator as
    # it found it, from more until it shows R torch's layout (up to LAYOUT_SEEDS)
    assert results["reference/differs"].runs == 3
    assert 3 < results["reference/masked"].runs <= dc.LAYOUT_SEEDS
    assert results["reference/draws_quietly"].runs == dc.LAYOUT_SEEDS
    assert not results["reference/draws_quietly"].random
    assert "could not find function" in results["reference/missing"].cause
    assert "stopped after 13 s" in results["reference/slow"].cause  # (a sleep: R cannot stop it)
    assert "process ended" in results["reference/quits"].cause
    assert results["reference/differs"].diff[-2:] == ["-#> [1] 3", "+#> [1] 2"]
    report = dc.format_report(list(results.values()))
    assert "[differ] reference/differs: -#> [1] 3" in report


# --------------------------------------------------------------------------
# R torch's site

@pytest.fixture(scope="module")
def site_results(tmp_path_factory: pytest.TempPathFactory) -> list:
    if not SOURCE.exists():
        pytest.skip(f"R torch's documented examples did NOT run: {SOURCE} does not exist "
                    "(fetch mlverse/torch, or set RTORCH_CONFORMANCE_SOURCE to its git directory)")
    work = tmp_path_factory.mktemp("docs-check")
    git_dir = dc.find_git_dir(SOURCE)
    pages = dc.read_pages(git_dir)
    return dc.check(pages, dc.extract_vignettes(git_dir, work / "src"), work, jobs=2)


def test_expected_list_is_well_formed() -> None:
    names = read_expected()
    assert names == sorted(set(names)), "pages-expected.txt: sorted, no duplicates"
    assert all(n.startswith(("reference/", "articles/")) for n in names)


@needs_r
def test_documented_examples_print_what_r_torch_printed(site_results: list) -> None:
    print("\nR torch's documented examples in the shim:\n" + dc.format_report(site_results))
    matching = {r.page for r in site_results if r.status in ("exact", "layout")}
    by_page = {r.page: r for r in site_results}
    expected = read_expected()
    new = sorted(matching - set(expected))
    if new:
        msg = f"{len(new)} page(s) match but are not in pages-expected.txt:\n  " + \
              "\n  ".join(new)
        if os.environ.get("RTORCH_DOCS_UPDATE") == "1":  # (the list kept sorted)
            header = [ln for ln in EXPECTED.read_text(encoding="utf-8").splitlines()
                      if ln.startswith("#")]
            EXPECTED.write_text("\n".join([*header, *sorted({*expected, *new})]) + "\n",
                                encoding="utf-8")
        else:
            warnings.warn(msg + "\n(RTORCH_DOCS_UPDATE=1 adds them)")
    broken = [f"{p}: {by_page[p].status if p in by_page else 'not found'}: "
              f"{by_page[p].cause if p in by_page else ''}"
              for p in expected if p not in matching]
    assert not broken, f"{len(broken)} page(s) listed as matching no longer do:\n  " + \
        "\n  ".join(broken)


def test_platform_noise_names_pages_of_the_site() -> None:
    if not SOURCE.exists():
        pytest.skip(f"{SOURCE} does not exist")
    names = {p.name for p in dc.read_pages(dc.find_git_dir(SOURCE))}
    assert set(dc.PLATFORM_NOISE) <= names and set(dc.R_INSTALLATION) <= names
    assert all(len(why) > 20 for why in [*dc.PLATFORM_NOISE.values(),
                                         *dc.R_INSTALLATION.values()])
