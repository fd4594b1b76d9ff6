"""Issue 27's elementwise-side yardstick: one training step (forward, cross-entropy,
backward, optimiser step) of a wide MLP (512-2048-2048-10, batch 256), a transformer
encoder layer (d 256, 4 heads, seq 128, batch 16) and an LSTM (hidden 256, seq 100,
batch 32), on rtorch-py and on PyTorch with the same weights, alternated in one
process at the same thread count (BLAS limited through threadpoolctl).

    python -m benchmarks.paired_steps MODEL THREADS [REPS] [--sgd] [--profile]

MODEL: mlp, transformer or lstm. Prints each side's fastest step and the median of
the paired ratios ours / PyTorch; --profile prints a cProfile of our steps instead.
"""
import sys, time, cProfile, pstats
import numpy as np
import torch
from threadpoolctl import threadpool_limits
import rtorch_py as rt
from rtorch_py import nn
from rtorch_py.optim import optim_adam, optim_sgd


def same(m, r):
    with torch.no_grad():
        for p, q in zip(m.parameters(), r.parameters()):
            assert tuple(p.shape) == tuple(q.shape), (p.shape, q.shape)
            q.copy_(torch.from_numpy(p.data.copy()))


def mlp():
    rng = np.random.default_rng(1)
    m = nn.nn_sequential(nn.nn_linear(512, 2048), nn.nn_relu(), nn.nn_linear(2048, 2048),
                         nn.nn_relu(), nn.nn_linear(2048, 10))
    r = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 10))
    same(m, r)
    x = rng.standard_normal((256, 512)).astype(np.float32)
    y = rng.integers(0, 10, 256)
    return m, r, x, y, lambda mod, a: mod(a)


def transformer():
    rng = np.random.default_rng(2)
    m = nn.nn_transformer_encoder_layer(256, 4)
    r = torch.nn.TransformerEncoderLayer(256, 4)
    same(m, r)
    x = rng.standard_normal((128, 16, 256)).astype(np.float32)
    y = rng.integers(0, 10, 16)
    # head: mean over sequence, first 10 features as logits
    return m, r, x, y, lambda mod, a: mod(a).mean(0)[:, :10]


def lstm():
    rng = np.random.default_rng(3)

    class T(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.nn_lstm(64, 256, batch_first=True)
            self.head = nn.nn_linear(256, 10)

        def forward(self, x):
            return self.head(self.lstm(x)[0][:, -1])

    class TT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(64, 256, batch_first=True)
            self.head = torch.nn.Linear(256, 10)

        def forward(self, x):
            return self.head(self.lstm(x)[0][:, -1])
    m, r = T(), TT()
    same(m, r)
    x = rng.standard_normal((32, 100, 64)).astype(np.float32)
    y = rng.integers(0, 10, 32)
    return m, r, x, y, lambda mod, a: mod(a)


def build(name, opt="adam"):
    m, r, x, y, f = {"mlp": mlp, "transformer": transformer, "lstm": lstm}[name]()
    X, Y = rt.torch_tensor(x), rt.torch_tensor(y)
    tX, tY = torch.tensor(x), torch.tensor(y)
    if opt == "adam":
        o, to = optim_adam(m.parameters(), lr=1e-3), torch.optim.Adam(r.parameters(), lr=1e-3)
    else:
        o = optim_sgd(m.parameters(), lr=1e-3, momentum=0.9)
        to = torch.optim.SGD(r.parameters(), lr=1e-3, momentum=0.9)

    def ours():
        o.zero_grad()
        nn.nnf_cross_entropy(f(m, X), Y).backward()
        o.step()

    def theirs():
        to.zero_grad()
        torch.nn.functional.cross_entropy(f(r, tX), tY).backward()
        to.step()
    return ours, theirs


def main():
    name, threads = sys.argv[1], int(sys.argv[2])
    reps = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3].isdigit() else 5
    opt = "sgd" if "--sgd" in sys.argv else "adam"
    torch.set_num_threads(threads)
    rt.torch_set_num_threads(threads)
    with threadpool_limits(threads, user_api="blas"):
        ours, theirs = build(name, opt)
        for _ in range(2):
            ours(); theirs()
        if "--profile" in sys.argv:
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(reps):
                ours()
            pr.disable()
            pstats.Stats(pr).sort_stats("tottime").print_stats(25)
            return
        a, b = [], []
        for _ in range(reps):
            t = time.perf_counter(); ours(); a.append(time.perf_counter() - t)
            t = time.perf_counter(); theirs(); b.append(time.perf_counter() - t)
        r = np.median(np.array(a) / np.array(b))
        a, b = min(a), min(b)
        print(f"{name} {opt} threads={threads}: ours min {a*1e3:.1f} ms  torch min {b*1e3:.1f} ms  "
              f"ratio of mins {a/b:.2f}  median paired ratio {r:.2f}")


if __name__ == "__main__":
    main()
