"""A yardstick, not the engine: the leanest Python + NumPy tape for two workloads.

    python -m benchmarks.lower_bound

A throw-away tape that knows only mul/add by a constant, tanh and sum:
slotted tensors and nodes, backward formulas on arrays (no tensor ops, so no
per-formula op overhead), a version check and a shape check per node, and a
walk that touches the heap only when more than one node is ready. It shows
how low the fixed per-op cost of this design (Python + one NumPy call per op)
can go, next to the engine and PyTorch, timed interleaved as the runner does.
It lacks hooks, create_graph, dtype promotion and broadcasting reductions, so
read it as a bound, not as a target the engine must equal. "NumPy alone" is
the same NumPy calls with no tape at all: the floor under any Python engine.
"""
import gc
import itertools
import statistics
import time

import numpy as np
import torch

import rtorch_py as rt

from .workloads import _chain100, chain100

_seq = itertools.count()
F64 = np.dtype(np.float64)


class N:
    __slots__ = ("fn", "nexts", "saved", "seq", "meta")

    def __init__(self, fn, nexts, saved, meta):
        self.fn = fn; self.nexts = nexts; self.saved = saved; self.seq = next(_seq); self.meta = meta


class Acc:
    __slots__ = ("leaf", "seq", "nexts")

    def __init__(self, leaf):
        self.leaf = leaf; self.seq = -1; self.nexts = ()


class T:
    __slots__ = ("data", "rg", "grad", "grad_fn", "version", "acc")

    def __init__(self, data, rg=False):
        self.data = data; self.rg = rg; self.grad = None; self.grad_fn = None
        self.version = [0]; self.acc = None

    def _edge(self):
        if self.grad_fn is not None:
            return self.grad_fn
        if self.acc is None:
            self.acc = Acc(self)
        return self.acc

    def __mul__(self, c):
        out = T(self.data * c)
        if self.rg:
            out.rg = True
            out.grad_fn = N(_mul_bw, (self._edge(),), c, (self.data.shape, self.data.dtype))
        return out

    def __add__(self, c):
        out = T(self.data + c)
        if self.rg:
            out.rg = True
            out.grad_fn = N(_add_bw, (self._edge(),), None, (self.data.shape, self.data.dtype))
        return out

    def tanh(self):
        out = T(np.tanh(self.data))
        if self.rg:
            out.rg = True
            out.grad_fn = N(_tanh_bw, (self._edge(),), (out.data, out.version, 0),
                            (self.data.shape, self.data.dtype))
        return out

    def sum(self):
        out = T(self.data.sum(keepdims=False).reshape(1))
        if self.rg:
            out.rg = True
            out.grad_fn = N(_sum_bw, (self._edge(),), None, (self.data.shape, self.data.dtype))
        return out

    def backward(self):
        backward(self.grad_fn, np.ones(self.data.shape, self.data.dtype))


def _mul_bw(n, g):
    return (g * n.saved,)


def _add_bw(n, g):
    return (g,)


def _tanh_bw(n, g):
    r, ver, v0 = n.saved
    if ver[0] != v0:
        raise RuntimeError("modified in place")
    return (g * (1 - r * r),)


def _sum_bw(n, g):
    return (np.broadcast_to(g, n.meta[0]),)


def backward(root, g):
    # dependency count (needed for DAGs); a chain has 1 everywhere
    deps = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for nx in node.nexts:
            c = deps.get(nx)
            if c is None:
                deps[nx] = 1
                stack.append(nx)
            else:
                deps[nx] = c + 1
    grads = {root: g}
    ready = [root]
    while ready:
        if len(ready) == 1:
            node = ready.pop()
        else:  # latest-created first, as the engine does (rare in these graphs)
            node = ready.pop(max(range(len(ready)), key=lambda i: ready[i].seq))
        g = grads.pop(node)
        if type(node) is Acc:
            leaf = node.leaf
            if leaf.grad is None:
                leaf.grad = np.array(g, copy=True)
            else:
                leaf.grad += g
            continue
        outs = node.fn(node, g)
        node.saved = None
        for nx, og in zip(node.nexts, outs):
            if og.shape != node.meta[0]:
                raise RuntimeError("shape")
            prev = grads.get(nx)
            grads[nx] = og if prev is None else prev + og
            left = deps[nx] - 1
            deps[nx] = left
            if left == 0:
                ready.append(nx)


def numpy_only(a: np.ndarray):
    """The chain's NumPy work alone, no tape at all: the 100 forward ops and the
    backward formulas the engine runs (numbers pre-converted, as the engine's
    cache does). What is left between this and a tape is per-op bookkeeping."""
    c9, c1 = np.array(0.9, a.dtype), np.array(0.1, a.dtype)
    outs = []
    y = a
    for _ in range(33):
        y = np.tanh(np.add(np.multiply(y, c9), c1))
        outs.append(y)
    y.sum()
    g = np.broadcast_to(np.ones((), a.dtype), a.shape)
    for r in reversed(outs):
        g = g * (1 - r * r) * c9
    return g


def _compare(title, fns, calls, rounds=15):
    res = {"rtorch-py": [], "PyTorch": [], "lean tape": [], "NumPy alone": []}
    for f in fns:
        f()
    for _ in range(rounds):
        for k, f in zip(res, fns):
            t = time.perf_counter()
            for _ in range(calls):
                f()
            res[k].append((time.perf_counter() - t) / calls * 1e6)
    for k, v in res.items():
        ratio = statistics.median(a / b for a, b in zip(v, res["PyTorch"]))
        print(f"  {title:<22} {k:<10} {statistics.median(v):9.2f} µs   ratio to PyTorch {ratio:.2f}")


T.__rmul__ = T.__mul__


def main():
    gc.collect()
    gc.freeze()
    x = T(np.linspace(-1, 1, 10).astype(np.float32), rg=True)
    ours, theirs = chain100(False)
    _compare("100-op chain, fwd+bwd", (ours, theirs, lambda: _chain100(x).backward(),
                                        lambda: numpy_only(x.data)), 100)
    x1 = T(np.ones(1, np.float32), rg=True)
    rx = rt.torch_tensor([1.0], requires_grad=True)
    tx = torch.ones(1, requires_grad=True)
    a1, two = np.ones(1, np.float32), np.array(2, np.float32)
    _compare("2 * x, forward", (lambda: 2 * rx, lambda: 2 * tx, lambda: 2 * x1,
                                lambda: np.multiply(a1, two)), 2000)
    _compare("2 * x, fwd+bwd", (lambda: (2 * rx).backward(), lambda: (2 * tx).backward(),
                                lambda: (2 * x1).backward(),
                                lambda: np.multiply(np.multiply(a1, two), two)), 2000)


if __name__ == "__main__":
    main()
