"""Issue 27's per-op figures for the elementwise side, at 1 thread in one process:
the path before (a replica of the code it replaced), the path now, and PyTorch.

    python -m benchmarks.paired_ops
"""
import numpy as np, time, math, torch
from threadpoolctl import threadpool_limits
import rtorch_py as rt
from rtorch_py.optim import kernels as K
from rtorch_py.random.generator import Generator
from rtorch_py.random import distributions as D
from rtorch_py.ops.sum_kernel import libtorch_sum
torch.set_num_threads(1); rt.torch_set_num_threads(1)
def t(f, k=7):
    f(); ts = []
    for _ in range(k):
        s = time.perf_counter(); f(); ts.append(time.perf_counter() - s)
    return min(ts) * 1e3
rng = np.random.default_rng(0)
with threadpool_limits(1):
    shapes = [(2048, 512), (2048,), (2048, 2048), (2048,), (10, 2048), (10,)]
    P = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    G = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    st = [{} for _ in P]
    grp = dict(lr=1e-3, eps=1e-8, weight_decay=0, betas=(0.9, 0.999), amsgrad=False)
    M = [np.zeros_like(p) for p in P]; V = [np.zeros_like(p) for p in P]
    def old_adam():
        for p, g, m, v in zip(P, G, M, V):
            tmp = np.subtract(g, m); tmp *= 0.1; m += tmp
            np.multiply(g, 0.001, out=tmp); tmp *= g; v *= 0.999; v += tmp
            np.sqrt(v, out=tmp); tmp /= 0.03; tmp += 1e-8; np.divide(m, tmp, out=tmp); tmp *= 0.01; p -= tmp
    tp = [torch.nn.Parameter(torch.from_numpy(p.copy())) for p in P]
    for q, g in zip(tp, G): q.grad = torch.from_numpy(g.copy())
    topt = torch.optim.Adam(tp, lr=1e-3)
    print(f"Adam step, wide-MLP params (5.2M): old {t(old_adam):.1f} ms  new {t(lambda: K.adam(P, G, st, grp)):.1f} ms  torch {t(topt.step):.1f} ms")
    n = 128 * 16 * 2048
    out = np.empty(n, np.float32); g = Generator(1)
    x = torch.randn(n)
    print(f"dropout draw bernoulli_(0.9), {n} float32: old {t(lambda: D._cast(D._unit_double(g, n) < 0.9, out.dtype)):.1f} ms  "
          f"new {t(lambda: D.bernoulli_(g, out, 0.9)):.1f} ms  torch {t(lambda: x.bernoulli_(0.9)):.1f} ms  (raw mt19937 draws alone {t(lambda: g.random(2 * n)):.1f} ms)")
    y = rng.standard_normal(n).astype(np.float32); ty = torch.from_numpy(y)
    print(f"float32 full sum, {n} values: new {t(lambda: libtorch_sum(y, None)):.1f} ms  np.sum {t(lambda: y.sum()):.1f} ms  torch {t(lambda: ty.sum()):.1f} ms")
    a = y.reshape(8192, 16, 32)
    def old_level():
        o = a[:, 0] + np.float32(0)
        for r in range(1, 16): o = o + a[:, r]
    def new_level():
        o = a[:, 0] + np.float32(0)
        for r in range(1, 16): np.add(o, a[:, r], out=o)
    print(f"  its first cascade level: old {t(old_level):.1f} ms  new {t(new_level):.1f} ms")
    W = rng.standard_normal((2048, 2048)).astype(np.float32); xx = rng.standard_normal((256, 2048)).astype(np.float32)
    gg = rng.standard_normal((256, 2048)).astype(np.float32)
    print(f"linear weight grad 2048x2048 (batch 256): old (x^T g, then row-major copy) {t(lambda: np.array((xx.T @ gg).T, order='C')):.1f} ms  "
          f"new ((g^T x) in place) {t(lambda: gg.T @ xx):.1f} ms  torch {t(lambda: torch.from_numpy(gg).T @ torch.from_numpy(xx)):.1f} ms")
