"""The `rtorch-py` command and the tools behind it, above the library and its R bridge.

- `cli.py`: the console entry point, `rtorch-py run FILE.R` / `run -e EXPR`
  (Rscript with the shim) and the dispatch to the other commands;
- `install.py`: `rtorch-py install-r [--lib DIR]` (the shim into an R library);
- `conformance.py`: `rtorch-py conformance SOURCE` (R torch's own test files);
- `docs_check.py`: `rtorch-py docs-check SOURCE` (R torch's documented examples, every
  page of its rendered site, against what R torch printed);
- `signatures.py`: `rtorch-py signatures SOURCE` (R torch's exported functions and
  tensor methods against the shim's: argument names, order, defaults);
- `vignettes.py`: `rtorch-py vignettes` (reproduce and cross-check the vignettes).

Nothing below imports this package: the bridge (`rtorch_py.r`) keeps what it
needs at run time itself (building the shim into its private library).
"""
