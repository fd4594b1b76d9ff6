"""Where the fixed per-op cost goes: each step of `2 * x` and its backward, timed alone.

    python -m benchmarks.breakdown

Each line times one piece of the engine's path in isolation (best of several
timeit repeats, µs per call), so the pieces can be compared with the whole op
and with PyTorch. It reaches into engine internals on purpose; a piece whose
internals have moved is shown as "n/a" rather than failing the whole table.
"""
from __future__ import annotations

import timeit

import numpy as np
import torch

import rtorch_py as rt
from rtorch_py import engine, ops, tensor
from rtorch_py.ops import recording
from rtorch_py.ops.operands import cached_number


def best_us(stmt, setup="pass", ns=None, repeat=30) -> float:
    """Best of many short repeats (~20 ms each): robust to a busy machine."""
    t = timeit.Timer(stmt, setup, globals=ns)
    n, _ = t.autorange()
    n = max(1, n // 10)
    return min(t.repeat(repeat, n)) / n * 1e6


def rows() -> list[tuple[str, str, str]]:
    """(group, piece, statement); statements run in the namespace below."""
    return [
        ("forward 2 * x", "the NumPy call: np.multiply(2, arr)", "np.multiply(2, arr)"),
        ("forward 2 * x", "the number as a cached 0-d array: cached_number(2, arr)",
         "cached_number(2, arr)"),
        ("forward 2 * x", "the NumPy call with it: np.multiply(arr, two)", "np.multiply(arr, two)"),
        ("forward 2 * x", "Tensor creation: wrap(arr)", "wrap(arr)"),
        ("forward 2 * x", "grad-mode lookup: is_grad_enabled()", "is_grad_enabled()"),
        ("forward 2 * x", "edge(x) (leaf: AccumulateGrad lookup)", "edge(x)"),
        ("forward 2 * x", "Node creation", "Node(None, MulBackward1, edges, meta, saved)"),
        ("forward 2 * x", "record(): result tensor + node", "record(arr, MulBackward1, (x,), (two,))"),
        ("forward 2 * x", "ops.mul(2, x) (whole op)", "mul(2, x)"),
        ("forward 2 * x", "2 * x (operator, via __rmul__)", "2 * x"),
        ("forward 2 * x", "2 * x_nograd (op, record exits early)", "2 * xn"),
        ("forward 2 * x", "PyTorch: 2 * tx", "2 * tx"),
        ("forward 2 * x", "PyTorch: 2 * tx without grad", "2 * txn"),
        ("backward", "(2 * x).backward() (whole)", "(2 * x).backward()"),
        ("backward", "root gradient, cached ones: implicit_grad(shape, dtype)",
         "implicit_grad(arr.shape, arr.dtype)"),
        ("backward", "grad mode off and back on", "p = set_grad_enabled(False); set_grad_enabled(p)"),
        ("backward", "formula: g * 2 as a tensor op (create_graph path)", "mul(g, 2)"),
        ("backward", "formula, array mode: node.backward_fn(node, [garr])",
         "p = set_grad_enabled(False); node.backward_fn(node, [garr]); set_grad_enabled(p)"),
        ("backward", "_conform (the gradient's check; the walk inlines its test)",
         "_conform(node, 0, garr, meta[0], sum_to, True)"),
        ("backward", "leaf accumulation into x.grad (array mode)",
         "p = set_grad_enabled(False); _accumulate(x._accum, [garr]); set_grad_enabled(p)"),
        ("backward", "PyTorch: (2 * tx).backward()", "(2 * tx).backward()"),
        ("custom function", "exp2(x) forward (autograd_function)", "exp2(x)"),
        ("custom function", "exp2(x).backward() (whole)", "exp2(x).backward()"),
        ("custom function", "PyTorch: Exp2.apply(tx)", "TorchExp2.apply(tx)"),
        ("custom function", "PyTorch: Exp2.apply(tx).backward()", "TorchExp2.apply(tx).backward()"),
        # the layers of the nn workloads (issue 12), each beside PyTorch's
        ("nn pieces", "cross_entropy 64x10, fwd + bwd", "nnf.nnf_cross_entropy(lg, yy).backward()"),
        ("nn pieces", "PyTorch: the same", "F.cross_entropy(tlg, tyy).backward()"),
        ("nn pieces", "max_pool2d(2) on 32x8x26x26, fwd + bwd", "nnf.nnf_max_pool2d(im, 2).sum().backward()"),
        ("nn pieces", "PyTorch: the same", "F.max_pool2d(tim, 2).sum().backward()"),
        ("nn pieces", "conv2d 8->16 3x3 on 32x8x13x13, fwd + bwd", "nnf.nnf_conv2d(im2, cw).sum().backward()"),
        ("nn pieces", "PyTorch: the same", "F.conv2d(tim2, tcw).sum().backward()"),
        ("nn pieces", "LSTM 16x50x32, hidden 64, fwd + bwd", "lstm(sq)[0].sum().backward()"),
        ("nn pieces", "PyTorch: the same", "tlstm(tsq)[0].sum().backward()"),
    ]


def namespace() -> dict:
    from .workloads import TorchExp2, exp2
    arr = np.ones(1, dtype=np.float32)
    x = rt.torch_tensor([1.0], requires_grad=True)
    node = (2 * x).grad_fn
    (2 * x).backward()  # x.grad exists: accumulation is in place, as in a training loop
    g = tensor.wrap(np.ones(1, dtype=np.float32))
    from rtorch_py import nn as nnf
    rng = np.random.default_rng(0)

    def pair(*shape, grad=True):
        a = rng.standard_normal(shape).astype(np.float32)
        return rt.torch_tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)
    lg, tlg = pair(64, 10)
    im, tim = pair(32, 8, 26, 26)
    im2, tim2 = pair(32, 8, 13, 13)
    cw, tcw = pair(16, 8, 3, 3)
    sq, tsq = pair(16, 50, 32, grad=False)
    lstm, tlstm = nnf.nn_lstm(32, 64, batch_first=True), torch.nn.LSTM(32, 64, batch_first=True)
    yy = rt.torch_tensor(rng.integers(0, 10, 64))
    return dict(
        nnf=nnf, F=torch.nn.functional, lg=lg, tlg=tlg, im=im, tim=tim, im2=im2, tim2=tim2,
        cw=cw, tcw=tcw, sq=sq, tsq=tsq, lstm=lstm, tlstm=tlstm, yy=yy,
        tyy=torch.tensor(yy.data),
        np=np, arr=arr, x=x, xn=rt.torch_tensor([1.0]), g=g, garr=g.data, node=node,
        two=cached_number(2, arr), cached_number=cached_number, _accumulate=engine._accumulate,
        tx=torch.ones(1, requires_grad=True), txn=torch.ones(1),
        wrap=tensor.wrap, record=recording.record, edge=engine.edge, Node=engine.Node,
        is_grad_enabled=engine.is_grad_enabled, set_grad_enabled=engine.set_grad_enabled,
        MulBackward1=ops.MulBackward1, mul=ops.mul, sum_to=ops.sum_to,
        implicit_grad=getattr(engine, "implicit_grad", None),
        _conform=getattr(engine, "_conform", None),
        edges=(engine.edge(x),), meta=((x.shape, x.data.dtype),),  # (`2 * x`: mul.Scalar)
        saved=(cached_number(2, arr),), exp2=exp2, TorchExp2=TorchExp2,
    )


def main() -> None:
    ns = namespace()
    group = None
    for grp, piece, stmt in rows():
        if grp != group:
            print(f"\n{grp}")
            group = grp
        try:
            us = f"{best_us(stmt, ns=ns):8.2f} µs"
        except Exception as err:
            us = f"{'n/a':>8}    ({type(err).__name__}: {err})"
        print(f"  {piece:<46} {us}")


if __name__ == "__main__":
    main()
