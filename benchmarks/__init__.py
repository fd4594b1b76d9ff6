"""Side-by-side benchmarks: rtorch-py against PyTorch CPU, in one process.

Run with `python -m benchmarks` (see `--help`). Each workload is a setup
function returning two callables, ours and PyTorch's, that do the same work;
the runner times them interleaved over several rounds and reports medians.
PyTorch is a benchmark dependency only: the engine never imports it.
"""
