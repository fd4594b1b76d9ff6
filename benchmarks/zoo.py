"""The model zoo of issue 27: training steps (forward, loss, backward, Adam step)
of the models R torch's book and tutorials train, at their realistic sizes,
plus a ResNet-18 forward at 224x224; each at 1 and at 2 threads.

Every model is built by one function from a table of layer constructors, once
with rtorch-py's (`nn_conv2d`, ...) and once with PyTorch's, then PyTorch's
weights are set to ours; both steps see the same batch. The group runs only
when asked for (`python -m benchmarks --only zoo`, or a row's name such as
`zoo_vgg`); `--quick` shrinks the batches and images.

Peak memory of one step, each side, is measured in a fresh interpreter
(`python -m benchmarks.zoo NAME`, JSON on stdout) as memory.py does: glibc's
mmap threshold pinned low so that freed buffers leave the resident set, and the
kernel's high-water mark (VmHWM, reset through /proc/self/clear_refs) minus the
resident set before the step.
"""
from __future__ import annotations

import ctypes
import gc
import json
import os
import sys
from types import SimpleNamespace

MB = 1 << 20


def _layers(torch_side: bool) -> SimpleNamespace:
    """The constructors one side's models are built from."""
    if torch_side:
        import torch
        t = torch.nn
        return SimpleNamespace(
            Module=t.Module, conv=t.Conv2d, bn=t.BatchNorm2d, linear=t.Linear, relu=t.ReLU,
            maxpool=t.MaxPool2d, dropout=t.Dropout, flatten=t.Flatten, seq=t.Sequential,
            avgpool=t.AdaptiveAvgPool2d, lstm=t.LSTM,
            encoder=lambda d, h, ff: t.TransformerEncoderLayer(d, h, ff, batch_first=True),
            relu_fn=torch.relu, tensor=torch.tensor, cross_entropy=t.functional.cross_entropy,
            adam=lambda ps: torch.optim.Adam(ps, lr=1e-3), no_grad=torch.no_grad)
    import rtorch_py as rt
    from rtorch_py import nn
    from rtorch_py.optim import optim_adam
    return SimpleNamespace(
        Module=nn.Module, conv=nn.nn_conv2d, bn=nn.nn_batch_norm2d, linear=nn.nn_linear,
        relu=nn.nn_relu, maxpool=nn.nn_max_pool2d, dropout=nn.nn_dropout, flatten=nn.nn_flatten,
        seq=nn.nn_sequential, avgpool=nn.nn_adaptive_avg_pool2d, lstm=nn.nn_lstm,
        encoder=lambda d, h, ff: nn.nn_transformer_encoder_layer(d, h, ff, batch_first=True),
        relu_fn=nn.nnf_relu, tensor=rt.torch_tensor, cross_entropy=nn.nnf_cross_entropy,
        adam=lambda ps: optim_adam(ps, lr=1e-3), no_grad=rt.with_no_grad)


# --------------------------------------------------------------------------
# The models, written once against a side's constructors `L`


def mnist(L):
    return L.seq(L.conv(1, 32, 3), L.relu(), L.conv(32, 64, 3), L.relu(), L.maxpool(2),
                 L.dropout(0.25), L.flatten(), L.linear(9216, 128), L.relu(), L.dropout(0.5),
                 L.linear(128, 10))


def vgg(L):
    def block(a, b):
        return [L.conv(a, b, 3, padding=1), L.bn(b), L.relu(),
                L.conv(b, b, 3, padding=1), L.bn(b), L.relu(), L.maxpool(2)]
    return L.seq(*block(3, 32), *block(32, 64), *block(64, 128), L.flatten(),
                 L.linear(128 * 4 * 4, 10))


def _resnet(L, widths, stem, classes):
    class Block(L.Module):
        def __init__(self, a, b, stride):
            super().__init__()
            self.conv1 = L.conv(a, b, 3, stride=stride, padding=1, bias=False)
            self.bn1 = L.bn(b)
            self.conv2 = L.conv(b, b, 3, padding=1, bias=False)
            self.bn2 = L.bn(b)
            self.down = (L.seq(L.conv(a, b, 1, stride=stride, bias=False), L.bn(b))
                         if stride != 1 or a != b else None)

        def forward(self, x):
            y = L.relu_fn(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return L.relu_fn(y + (x if self.down is None else self.down(x)))

    blocks, a = [], widths[0]
    for i, b in enumerate(widths):
        blocks += [Block(a, b, 1 if i == 0 else 2), Block(b, b, 1)]
        a = b
    return L.seq(*stem, *blocks, L.avgpool(1), L.flatten(), L.linear(a, classes))


def resnet_cifar(L):
    """ResNet-18's blocks at half its widths, CIFAR stem (3x3 conv, no pooling)."""
    w = (32, 64, 128, 256)
    return _resnet(L, w, [L.conv(3, w[0], 3, padding=1, bias=False), L.bn(w[0]), L.relu()], 10)


def resnet18(L):
    """ResNet-18 as torchvision builds it (7x7 stem, max pool, 1000 classes)."""
    return _resnet(L, (64, 128, 256, 512), [L.conv(3, 64, 7, stride=2, padding=3, bias=False),
                                            L.bn(64), L.relu(), L.maxpool(3, 2, 1)], 1000)


def transformer(L):
    class Encoder(L.Module):
        def __init__(self):
            super().__init__()
            self.layer = L.encoder(256, 4, 1024)
            self.head = L.linear(256, 10)

        def forward(self, x):
            return self.head(self.layer(x)[:, 0])
    return Encoder()


def lstm(L):
    class Tagger(L.Module):
        def __init__(self):
            super().__init__()
            self.lstm = L.lstm(64, 256, batch_first=True)
            self.head = L.linear(256, 10)

        def forward(self, x):
            return self.head(self.lstm(x)[0][:, -1])
    return Tagger()


def wide_mlp(L):
    return L.seq(L.linear(512, 2048), L.relu(), L.linear(2048, 2048), L.relu(),
                 L.linear(2048, 10))


# name: (builder, input shape per sample, batch, quick input, quick batch, classes, label)
MODELS = {
    "mnist": (mnist, (1, 28, 28), 128, (1, 28, 28), 4, 10,
              "MNIST convnet (2 conv, dropout, 2 linear), batch 128"),
    "vgg": (vgg, (3, 32, 32), 32, (3, 32, 32), 2, 10,
            "VGG-style CIFAR net (6 conv 3x3 + batch norm), batch 32"),
    "resnet": (resnet_cifar, (3, 32, 32), 32, (3, 16, 16), 2, 10,
               "ResNet-18-style CIFAR net (half widths), batch 32"),
    "transformer": (transformer, (128, 256), 16, (8, 256), 2, 10,
                    "transformer encoder layer (d 256, 4 heads, seq 128), batch 16"),
    "lstm": (lstm, (100, 64), 32, (5, 64), 2, 10, "LSTM (hidden 256, seq 100), batch 32"),
    "mlp": (wide_mlp, (512,), 256, (512,), 4, 10, "wide MLP 512-2048-2048-10, batch 256"),
    "resnet18_infer": (resnet18, (3, 224, 224), 1, (3, 32, 32), 1, 1000,
                       "inference: ResNet-18 forward, 224x224, batch 1"),
}


def _same_weights(mine, ref) -> None:
    import torch
    ours, theirs = list(mine.parameters()), list(ref.parameters())
    if [tuple(p.shape) for p in ours] != [tuple(q.shape) for q in theirs]:
        raise RuntimeError("the two sides' models have different parameters")
    with torch.no_grad():
        for p, q in zip(ours, theirs):
            q.copy_(torch.from_numpy(p.data.copy()))


def build(name: str, quick: bool) -> tuple:
    """(ours, theirs): one training step (or one forward, for inference) each."""
    import numpy as np
    make, shape, batch, qshape, qbatch, classes, _ = MODELS[name]
    if quick:
        shape, batch = qshape, qbatch
    sides = []
    model = None
    rng = np.random.default_rng(27)
    x = rng.standard_normal((batch,) + shape).astype(np.float32)
    y = rng.integers(0, classes, batch)
    for torch_side in (False, True):
        L = _layers(torch_side)
        m = make(L)
        if model is None:
            model = m
        else:
            _same_weights(model, m)
        X, Y = L.tensor(x), L.tensor(y)
        if name.endswith("_infer"):
            m.eval()

            def infer(m=m, X=X, L=L):
                with L.no_grad():
                    m(X)
            sides.append(infer)
            continue
        opt = L.adam(m.parameters())

        def step(m=m, X=X, Y=Y, L=L, opt=opt):
            opt.zero_grad()
            L.cross_entropy(m(X), Y).backward()
            opt.step()
        sides.append(step)
    return tuple(sides)


_LIMITS = []   # threadpoolctl limits kept alive while their rows run


def set_threads(n: int) -> None:
    """Both engines at n threads: NumPy's BLAS, torch, and rtorch's own setting."""
    import torch
    from threadpoolctl import threadpool_limits
    import rtorch_py as rt
    _LIMITS[:] = [threadpool_limits(n, user_api="blas")]
    torch.set_num_threads(n)
    rt.torch_set_num_threads(n)


def zoo_workloads(quick: bool) -> list:
    from .workloads import Workload

    def setup(name, threads):
        def f(q):
            set_threads(threads)
            return build(name, q)
        return f
    return [Workload(f"zoo_{name}_t{t}", f"zoo: {spec[-1]}, {t} thread{'s' * (t > 1)}",
                     setup(name, t), 1.2, unit="step")
            for name, spec in MODELS.items() for t in (1, 2)]


# --------------------------------------------------------------------------
# Peak memory of one step, in a fresh interpreter


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _hwm() -> int:
    with open("/proc/self/status") as f:
        line = next(s for s in f if s.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def _peak(fn) -> float:
    """MB the resident set rose above its level before `fn` ran, at its highest."""
    gc.collect()
    base = _rss()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")   # reset VmHWM to the current resident set
    fn()
    return (_hwm() - base) / MB


def measure_peak(name: str, quick: bool) -> dict:
    ctypes.CDLL("libc.so.6").mallopt(-3, 256 * 1024)  # M_MMAP_THRESHOLD, as memory.py
    set_threads(1)
    ours, theirs = build(name, quick)
    for fn in (ours, theirs, ours, theirs):   # optimizer state allocated, caches warm
        fn()
    return {"ours": _peak(ours), "torch": _peak(theirs)}


def measure_peaks(names, quick: bool) -> dict:
    """{model: {"ours": MB, "torch": MB}} (or {"error": text}), each in a fresh process."""
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = {}
    for name in names:
        res = subprocess.run([sys.executable, "-m", "benchmarks.zoo", name]
                             + (["--quick"] if quick else []),
                             cwd=root, capture_output=True, text=True, timeout=900)
        if res.returncode != 0:
            lines = res.stderr.strip().splitlines()
            out[name] = {"error": lines[-1] if lines else f"exit status {res.returncode}"}
        else:
            out[name] = json.loads(res.stdout)
    return out


if __name__ == "__main__":
    print(json.dumps(measure_peak(sys.argv[1], "--quick" in sys.argv)))
