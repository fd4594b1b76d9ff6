"""The backward walk's fast paths against the plain walk (engine.plain_walk()).

Each graph is built afresh and walked twice: once as usual, once with no fast
path (every formula on tensors, every node through the heap). Every gradient
the walk leaves behind (leaves, retain_grad(), what autograd_grad returns) must
be the same, bit for bit.
"""
import contextlib

import numpy as np
import pytest

import rtorch_py as rt
from rtorch_py import engine
from rtorch_py.ops import recording


def leaf(values, dtype):
    return rt.torch_tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def chain(dtype):
    x = leaf(np.linspace(-1, 1, 7), dtype)
    y = x
    for _ in range(10):
        y = (y * 0.9 + 0.1).tanh()
    y.sum().backward()
    return [x.grad]


def diamond(dtype):
    # one tensor feeds two branches: its node waits until both have sent
    x = leaf([0.5, -1.5, 2.0], dtype)
    y = x * x
    z = y.exp() + y.sin() * x
    (z * z).sum().backward()
    return [x.grad]


def broadcast(dtype):
    # gradients summed back to their inputs' shapes
    x = leaf(np.arange(3).reshape(3, 1) / 3, dtype)
    w = leaf([0.1, -0.2, 0.3, 0.4], dtype)
    b = leaf([2.0], dtype)
    ((x + w) * b - w / (1 + x * x)).pow(2).mean().backward()
    return [x.grad, w.grad, b.grad]


def mixed_dtypes(dtype):
    # a float64 operand makes the result float64: the float32 input's gradient
    # is cast back
    x = leaf([1.0, 2.0, 3.0], np.float32)
    y = leaf([0.5, 0.25, 2.0], np.float64)
    (x * y + x.exp()).sum().backward()
    return [x.grad, y.grad]


def several_outputs(dtype):
    x = leaf(np.arange(12).reshape(3, 4) % 5 - 2.5, dtype)
    values, _ = x.max(dim=1)
    a, b, c, d = x.unbind(1)
    top = x.topk(2)[0]
    (values.sum() + (a * d).sum() + b.exp().sum() + top.pow(2).sum()).backward()
    return [x.grad]


def matmul_net(dtype):
    rng = np.random.default_rng(3)
    a = leaf(rng.standard_normal((5, 4)), dtype)
    w1 = leaf(rng.standard_normal((4, 6)), dtype)
    w2 = leaf(rng.standard_normal((6, 2)), dtype)
    ((a @ w1).relu() @ w2).log_softmax(dim=1).mean().backward()
    return [a.grad, w1.grad, w2.grad]


def _exp2_forward(ctx, i):
    result = i.exp()
    ctx.save_for_backward(result=result)
    return result


exp2 = rt.autograd_function(
    forward=_exp2_forward,
    backward=lambda ctx, g: {"i": g * ctx.saved_variables.result})


def custom_function(dtype):
    x = leaf([0.1, 0.7, -1.2], dtype)
    (exp2(x * 2) * x).sum().backward()
    return [x.grad]


def one_element(dtype):
    # one-element leaves of each rank: gradients added as NumPy scalars, each
    # walk's last leaf accumulated at once (FAST PATH 3), several walks summing
    xs = [leaf(v, dtype) for v in (0.7, [-0.0], [[1e-8]])]
    for k in range(3):
        for x in xs:
            exp2(x * (k - 1.5)).sum().backward()
        (xs[0] * xs[1] * xs[2]).sum().backward()  # three leaves: all but one deferred
    return [x.grad for x in xs]


def residual(dtype):
    # blocks with a skip connection, on arrays past FAST PATH 4's size: the skip's
    # gradient waits while the block's nodes run, then the other is summed into it
    rng = np.random.default_rng(4)
    x = leaf(rng.standard_normal((8, 1024)), dtype)
    w = leaf(rng.standard_normal(1024), dtype)
    h = x
    for _ in range(3):
        h = ((h * w).tanh() * 0.5 + 0.25 * h.sin() + h).relu()
    (h * h).sum().backward()
    return [x.grad, w.grad]


def conv_residual(dtype):
    # a residual block of convolutions (oneDNN in float32, im2col in float64): the
    # skip's gradient waits at the block's input while the block runs; the first
    # convolution hands its input gradient on to be summed into it (FAST PATH 5)
    rng = np.random.default_rng(8)
    x = leaf(rng.standard_normal((3, 16, 6, 6)), dtype)
    w1, w2 = (leaf(rng.standard_normal((16, 16, 3, 3)) * 0.2, dtype) for _ in range(2))
    h = (x * 1.5).relu()
    z = rt.nnf_conv2d(rt.nnf_conv2d(h, w1, padding=1).relu(), w2, padding=1) + h
    (z * z).sum().backward()
    return [x.grad, w1.grad, w2.grad]


def hooks_and_retain_grad(dtype):
    x = leaf([1.0, -2.0, 3.0], dtype)
    y = x * 3
    y.retain_grad()
    y.register_hook(lambda g: g * 2)
    z = (y.tanh() * y).sum()
    x.register_hook(lambda g: g + 1)
    z.backward()
    return [x.grad, y.grad]


def accumulation_and_retain_graph(dtype):
    x = leaf([0.3, 0.6], dtype)
    loss = (x.sin() * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    (x * x).sum().backward()
    return [x.grad]


def autograd_grad_capture(dtype):
    x = leaf([0.4, -0.8, 1.6], dtype)
    y = x.exp() * x
    z = (y * y.sin()).sum() + x.sum()
    return rt.autograd_grad(z, [y, x])


def second_order(dtype):
    x = leaf([0.5, 1.5, -0.25], dtype)
    (g,) = rt.autograd_grad((x.pow(3) * x.sin()).sum(), x, create_graph=True)
    (g * g).sum().backward()
    return [g, x.grad]


def large_activations(dtype):
    # past a block of elements: ReLU's backward a block at a time (its fast path),
    # max pooling's scatter a few planes at a time; NaN, -0 and ties included
    rng = np.random.default_rng(3)
    values = rng.standard_normal((4, 16, 24, 24)).astype(dtype)
    values[0, 0, 0, :4] = [np.nan, -0.0, 0.0, 1.0]
    x = leaf(values, dtype)
    y = rt.nnf_max_pool2d(rt.nnf_relu(x * 1.5), 2)
    (y * y.detach().cos()).sum().backward()
    return [x.grad]


GRAPHS = [large_activations, chain, diamond, broadcast, mixed_dtypes, several_outputs, matmul_net,
          custom_function, one_element, residual, conv_residual, hooks_and_retain_grad, accumulation_and_retain_graph,
          autograd_grad_capture, second_order]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.__name__)
def test_fast_paths_give_the_plain_walks_gradients(graph, dtype):
    fast = [g.detach().numpy() for g in graph(dtype)]
    with engine.plain_walk():
        plain = [g.detach().numpy() for g in graph(dtype)]
    assert len(fast) == len(plain)
    for f, p in zip(fast, plain):
        assert f.dtype == p.dtype and f.shape == p.shape
        np.testing.assert_array_equal(f, p)


def test_plain_walk_takes_no_fast_path(monkeypatch):
    """Inside plain_walk() an array formula sees tensors (not arrays), every
    node waits in the heap and the leaf's gradient is deferred; outside, arrays,
    no heap for a chain, and the last leaf accumulated at once."""
    seen = []

    @recording.formula(arrays=True)
    def TwiceBackward0(node, g):
        seen.append(type(g))
        return (g * 2,)

    pushed = []
    push = engine.heapq.heappush
    monkeypatch.setattr(engine.heapq, "heappush",
                        lambda heap, item: (pushed.append(item[1].name), push(heap, item)))
    deferred = []
    defer = engine._Walk.defer
    monkeypatch.setattr(engine._Walk, "defer",
                        lambda walk, node, grads: (deferred.append(node.name),
                                                   defer(walk, node, grads)))

    def walk():
        x = leaf([1.0, 2.0], np.float64)
        y = recording.record(x.data * 2, TwiceBackward0, (x,))
        (y * y).sum().backward()
        return x.grad.numpy()

    fast = walk()
    assert seen == [np.ndarray] and pushed == [] and deferred == []
    seen.clear()
    pushed.clear()
    with engine.plain_walk():
        plain = walk()
    assert seen == [rt.Tensor]
    assert pushed == ["SumBackward0", "MulBackward0", "TwiceBackward0", "AccumulateGrad"]
    assert deferred == ["AccumulateGrad"]
    np.testing.assert_array_equal(fast, plain)
    assert engine.FAST_WALK[0]  # back on after the block


@pytest.mark.parametrize("plain", [False, True])
def test_failed_walk_leaves_leaves_untouched(plain):
    """Leaf gradients are committed only once the whole walk succeeded."""
    import contextlib
    with engine.plain_walk() if plain else contextlib.nullcontext():
        x = leaf([1.0, 2.0], np.float64)
        w = leaf([3.0, 4.0], np.float64)
        h = w.exp()
        hh = (h * h).sum()
        loss = hh + (x * 2).sum()  # x's branch is newer: it reaches x's leaf first
        h.add_(1)  # a saved tensor changed in place: h * h's node fails after that
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()
        assert x.grad is None and w.grad is None


def test_importing_leaves_every_op_on_its_fast_path():
    """Importing the package makes no special tensor, mode, or bfloat16/meta
    array: ops start on their fast paths (a regression once cost every op)."""
    import subprocess
    import sys
    code = ("import rtorch_py; from rtorch_py import modes, meta; "
            "print(bool(modes.STACK[0]), bool(modes.MODES), modes.active(modes.COMPLEX32), "
            "meta.WATCH[0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False", "False", "False"]


@pytest.mark.parametrize("positions", [1000, 1 << 16])  # several pieces, a ragged last one
def test_large_activations_against_pytorch(monkeypatch, positions):
    torch = pytest.importorskip("torch")
    from rtorch_py.ops import nn_primitives
    monkeypatch.setattr(nn_primitives, "_SCATTER_POSITIONS", positions)
    rng = np.random.default_rng(5)
    values = rng.standard_normal((4, 16, 24, 24)).astype(np.float32)
    x = rt.torch_tensor(values, requires_grad=True)
    (rt.nnf_max_pool2d(rt.nnf_relu(x), 2) * 2).sum().backward()
    tx = torch.tensor(values, requires_grad=True)
    (torch.nn.functional.max_pool2d(torch.relu(tx), 2) * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("plain", [False, True])
def test_a_walk_frees_arrays_a_node_saved_as_plain_values(plain):
    # max pooling saves its indices as an array among plain values: a walk frees
    # them as it frees saved tensors (the step's peak memory), and a second walk
    # through the node is the usual error; retain_graph keeps them.
    def pooled():
        x = rt.torch_tensor(np.arange(64.0).reshape(1, 1, 8, 8), requires_grad=True)
        return x, rt.nn.nnf_max_pool2d(x, 2)
    x, y = pooled()
    node = y.grad_fn
    assert any(type(v) is np.ndarray for v in node.saved)
    with engine.plain_walk() if plain else contextlib.nullcontext():
        y.sum().backward(retain_graph=True)
        assert any(type(v) is np.ndarray for v in node.saved)
        y.sum().backward()
        assert node.saved is engine.FREED_VALUES
        np.testing.assert_array_equal(x.grad.data.reshape(8, 8)[1::2, 1::2], np.full((4, 4), 2.0))
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.sum().backward()


SPECIALS = [0.0, -0.0, 1.0, -2.5, 1e-30, 3.4e38, np.inf, -np.inf, np.nan, 1 / 3]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_one_element_gradient_added_as_scalars_matches_arrays(dtype, shape):
    # _add_array adds a one-element gradient as NumPy scalars (a one-element
    # ufunc call costs more): the same sums, bit for bit, as arrays give
    for a in SPECIALS:
        for b in SPECIALS:
            with np.errstate(all="ignore"):  # (3.4e38 is inf in float16)
                x = rt.torch_tensor(np.zeros(shape, dtype=dtype), requires_grad=True)
                x.grad = rt.torch_tensor(np.full(shape, a, dtype=dtype))
                g = np.full(shape, b, dtype=dtype)
                want = np.full(shape, a, dtype=dtype) + g
                before = x.grad._version[0] if x.grad._version is not engine.NEW_VERSION else 0
                engine._add_array(x, g, owned=False)
            got = x.grad.numpy()
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes() or (np.isnan(got).all() and np.isnan(want).all())
            assert x.grad._version[0] == before + 1  # the version bump, inline


def test_a_residual_walk_sums_in_place_only_on_the_fast_path(monkeypatch):
    sums_in_place = []
    add = np.add

    def spy(a, b, *args, out=None, **kwargs):
        if out is a and a.shape == (8, 1024):  # (other ops sum in place too)
            sums_in_place.append(a.shape)
        return add(a, b, *args, out=out, **kwargs)

    monkeypatch.setattr(np, "add", spy)
    fast = residual(np.float64)
    assert sums_in_place
    sums_in_place.clear()
    with engine.plain_walk():
        plain = residual(np.float64)
    assert sums_in_place == []
    for f, p in zip(fast, plain):
        np.testing.assert_array_equal(f.numpy(), p.numpy())


def test_a_gradient_held_elsewhere_is_not_summed_in_place():
    # the same array handed to two inputs (x + x, u + u.tanh()): summing into it
    # in place would change the other's; the walk makes a new one there
    rng = np.random.default_rng(6)
    values = rng.standard_normal((8, 1024))
    for plain in (False, True):
        with engine.plain_walk() if plain else contextlib.nullcontext():
            x = leaf(values, np.float64)
            u = x * 1.5
            ((u + u) * 3 + (u + u.tanh()) * 2).sum().backward()
            np.testing.assert_array_equal(
                x.grad.numpy(), 1.5 * (6.0 + 2 * (1 + (1 - np.tanh(values * 1.5) ** 2))))


def test_leaves_take_the_last_nodes_gradients_without_a_copy(monkeypatch):
    # the walk lets go of the last node's outputs before committing: each leaf's
    # .grad is then the walk's own array (no copy), and still its own
    owned = []
    add = engine._add_array
    monkeypatch.setattr(engine, "_add_array",
                        lambda leaf_, g, own: (owned.append(own), add(leaf_, g, own))[1])
    rng = np.random.default_rng(8)
    x = leaf(rng.standard_normal((50, 40)), np.float64)
    w = leaf(rng.standard_normal((50, 40)), np.float64)
    ((x * w).exp()).sum().backward()
    assert owned == [True, True]
    assert not np.shares_memory(x.grad.numpy(), w.grad.numpy())
    xv, wv = x.detach().numpy(), w.detach().numpy()
    e = np.exp(xv * wv)
    np.testing.assert_array_equal(x.grad.numpy(), e * wv)
    np.testing.assert_array_equal(w.grad.numpy(), e * xv)


def _node_fields(t):
    """What a recorded tensor and its node hold, comparable across two recordings."""
    n = t.grad_fn
    if n is None:
        return (t._rg, None)
    saved = n.saved
    saved = [("saved", s.tensor is None, s.data is t.data, s.version_box is t._version, s.version)
             if type(s) is engine.SavedTensor else s for s in saved]
    return (t._rg, n.name, n.backward_fn, n.next_functions, n.input_meta, saved, n.hooked,
            type(n.seq), t._version[0] if type(t._version) is list else t._version)


@pytest.mark.parametrize("case", ["leaf", "inner", "no_grad_input", "no_grad_mode", "0-d",
                                  "anomaly"])
@pytest.mark.parametrize("saved", ["none", "value", "output"])
def test_record_one_makes_records_tensor_and_node(case, saved):
    """record_one (the fast path of add/sub/mul with a number, and tanh) against
    record: the same tensor and node, on its fast path and on every way off it."""
    from rtorch_py.ops.pointwise import MulBackward1, TanhBackward0, AddBackward1
    fn, args = {"none": (AddBackward1, ((), ())), "value": (MulBackward1, ((0.5,), (0.5,))),
                "output": (TanhBackward0, (recording.OUTPUT, (recording.OUTPUT,)))}[saved]
    x = leaf([0.25, -1.0] if case != "0-d" else 0.25, np.float64)
    if case == "inner":
        x = x * 1.0
    elif case == "no_grad_input":
        x = x.detach()
    ctx = (rt.with_no_grad() if case == "no_grad_mode" else
           rt.with_detect_anomaly() if case == "anomaly" else contextlib.nullcontext())
    with ctx:
        fast = recording.record_one(np.tanh(x.data), fn, x, args[0])
        plain = recording.record(np.tanh(x.data), fn, (x,), args[1])
    assert type(fast.data) is np.ndarray and fast.data.shape == plain.data.shape
    assert _node_fields(fast) == _node_fields(plain)
    if case == "anomaly":
        assert fast.grad_fn.trace  # (anomaly mode notes the forward's stack)
    if plain.grad_fn is not None:
        assert fast.grad_fn.seq < plain.grad_fn.seq  # in creation order
        a, = rt.autograd_grad(fast.sum(), x, retain_graph=True)
        b, = rt.autograd_grad(plain.sum(), x)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex128])
def test_array_formulas_one_is_numpys(dtype):
    """tanh's and sigmoid's backward on arrays subtract from a cached 0-d 1 of
    the array's dtype: the same values and dtype as from a Python 1."""
    from rtorch_py.ops.pointwise import _ONE
    r = np.array([0.0, -0.0, 0.3, -0.7, 1.0, 2.0, np.inf, -np.inf, np.nan], dtype)
    one = _ONE.get(r.dtype, 1)  # (as the formulas take it)
    assert type(one) is (int if dtype is np.complex128 else np.ndarray)
    with np.errstate(invalid="ignore"):  # (complex inf * inf)
        np.testing.assert_array_equal(one - r * r, 1 - r * r)
        np.testing.assert_array_equal(one - r, 1 - r)
    assert (one - r).dtype == (1 - r).dtype == r.dtype


def test_a_convolution_hands_its_input_gradient_on_only_on_the_fast_path(monkeypatch):
    from rtorch_py.ops import nn_primitives
    handed = []
    real = nn_primitives.hand_on
    monkeypatch.setattr(nn_primitives, "hand_on",
                        lambda node, i, g: handed.append(real(node, i, g)) or handed[-1])
    fast = conv_residual(np.float32)
    assert handed == [True]      # the first convolution's: the second's meets nothing
    handed.clear()
    with engine.plain_walk():
        plain = conv_residual(np.float32)
    assert handed == []
    for f, p in zip(fast, plain):
        np.testing.assert_array_equal(f.numpy(), p.numpy())


def test_a_hooked_node_hands_nothing_on():
    # a post-hook sees every input gradient the node made: none is handed on early
    rng = np.random.default_rng(9)
    x = leaf(rng.standard_normal((2, 4, 5, 5)), np.float32)
    w = leaf(rng.standard_normal((4, 4, 3, 3)), np.float32)
    h = x.relu()
    y = rt.nnf_conv2d(h, w, padding=1)
    seen = []
    y.grad_fn.register_hook(lambda grad_in, grad_out: seen.append(grad_in[0]))
    (y * y + h).sum().backward()
    assert seen[0] is not None and seen[0].shape == (2, 4, 5, 5)
