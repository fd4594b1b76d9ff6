"""nn layers, losses, init and the module system, checked against PyTorch:
same weights and inputs -> same outputs and the same gradients (of the input
and of every parameter)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt
from rtorch_py import nn
from helpers import check_vs_torch, rand

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _torch_float64():
    """PyTorch's layers made here get float64 weights, like the arrays compared
    with them; restored afterwards (other test files expect PyTorch's float32)."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def arr(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape)


def ours(a, grad=True):
    return rt.torch_tensor(np.array(a, dtype=np.float64), requires_grad=grad)


def theirs(a, grad=True):
    return torch.tensor(np.array(a, dtype=np.float64), requires_grad=grad)


def copy_weights(mine: nn.Module, ref: torch.nn.Module) -> None:
    """Give `mine` the parameters of `ref` (same names)."""
    ref_params = dict(ref.named_parameters())
    mine.to(dtype="float64")
    for name, p in mine.parameters.items():
        nn.module.write_(p, ref_params[name].detach().numpy())


def close(a, b, tol=1e-6):
    a = a.data if isinstance(a, rt.Tensor) else np.asarray(a)
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def check_module(mine, ref, *inputs, tol=1e-6, out_index=None):
    """Forward and backward through both; compare outputs and all gradients."""
    copy_weights(mine, ref)
    xs = [ours(x) for x in inputs]
    ts = [theirs(x) for x in inputs]
    y, t = mine(*xs), ref(*ts)
    if out_index is not None:
        y, t = y[out_index], t[out_index]
    close(y, t, tol)
    w = arr(*t.shape)
    (y * ours(w, False)).sum().backward()
    (t * theirs(w, False)).sum().backward()
    for x, tx in zip(xs, ts):
        close(x.grad, tx.grad, tol)
    ref_params = dict(ref.named_parameters())
    for name, p in mine.parameters.items():
        close(p.grad, ref_params[name].grad, tol)


LAYERS = [
    (lambda: nn.nn_linear(4, 3), lambda: torch.nn.Linear(4, 3), [(5, 4)]),
    (lambda: nn.nn_linear(4, 3, bias=False), lambda: torch.nn.Linear(4, 3, bias=False), [(2, 6, 4)]),
    (lambda: nn.nn_bilinear(3, 4, 2), lambda: torch.nn.Bilinear(3, 4, 2), [(5, 3), (5, 4)]),
    (lambda: nn.nn_conv1d(2, 3, 3, stride=2, padding=1),
     lambda: torch.nn.Conv1d(2, 3, 3, stride=2, padding=1), [(2, 2, 9)]),
    (lambda: nn.nn_conv2d(2, 4, 3, padding=1, dilation=2, groups=2),
     lambda: torch.nn.Conv2d(2, 4, 3, padding=1, dilation=2, groups=2), [(2, 2, 7, 6)]),
    (lambda: nn.nn_conv2d(1, 3, (2, 3), stride=(2, 1)),
     lambda: torch.nn.Conv2d(1, 3, (2, 3), stride=(2, 1)), [(2, 1, 6, 5)]),
    (lambda: nn.nn_conv3d(2, 2, 2), lambda: torch.nn.Conv3d(2, 2, 2), [(1, 2, 4, 3, 4)]),
    (lambda: nn.nn_conv_transpose1d(2, 3, 3, stride=2, padding=1, output_padding=1),
     lambda: torch.nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1, output_padding=1),
     [(2, 2, 5)]),
    (lambda: nn.nn_conv_transpose2d(4, 2, 3, stride=2, groups=2),
     lambda: torch.nn.ConvTranspose2d(4, 2, 3, stride=2, groups=2), [(1, 4, 3, 4)]),
    (lambda: nn.nn_max_pool2d(2), lambda: torch.nn.MaxPool2d(2), [(2, 3, 6, 5)]),
    (lambda: nn.nn_max_pool1d(3, stride=2, padding=1),
     lambda: torch.nn.MaxPool1d(3, stride=2, padding=1), [(2, 3, 8)]),
    (lambda: nn.nn_max_pool2d(3, stride=2, ceil_mode=True),
     lambda: torch.nn.MaxPool2d(3, stride=2, ceil_mode=True), [(1, 2, 8, 7)]),
    (lambda: nn.nn_avg_pool2d(3, stride=2, padding=1),
     lambda: torch.nn.AvgPool2d(3, stride=2, padding=1), [(2, 2, 7, 6)]),
    (lambda: nn.nn_avg_pool1d(2), lambda: torch.nn.AvgPool1d(2), [(2, 2, 7)]),
    (lambda: nn.nn_adaptive_avg_pool2d((2, 3)), lambda: torch.nn.AdaptiveAvgPool2d((2, 3)),
     [(2, 2, 5, 7)]),
    (lambda: nn.nn_adaptive_max_pool1d(3), lambda: torch.nn.AdaptiveMaxPool1d(3), [(2, 2, 9)]),
    (lambda: nn.nn_batch_norm1d(3), lambda: torch.nn.BatchNorm1d(3), [(6, 3)]),
    (lambda: nn.nn_batch_norm2d(3), lambda: torch.nn.BatchNorm2d(3), [(4, 3, 2, 3)]),
    (lambda: nn.nn_layer_norm((3, 4)), lambda: torch.nn.LayerNorm((3, 4)), [(2, 3, 4)]),
    (lambda: nn.nn_group_norm(2, 4), lambda: torch.nn.GroupNorm(2, 4), [(3, 4, 5)]),
    (lambda: nn.nn_prelu(), lambda: torch.nn.PReLU(), [(3, 4)]),
    (lambda: nn.nn_flatten(), lambda: torch.nn.Flatten(), [(2, 3, 4)]),
    (lambda: nn.nn_reflection_pad2d(2), lambda: torch.nn.ReflectionPad2d(2), [(1, 2, 4, 5)]),
    (lambda: nn.nn_replication_pad1d((1, 3)), lambda: torch.nn.ReplicationPad1d((1, 3)),
     [(1, 2, 4)]),
    (lambda: nn.nn_constant_pad2d((1, 0, 2, 1), 0.5),
     lambda: torch.nn.ConstantPad2d((1, 0, 2, 1), 0.5), [(1, 2, 3, 3)]),
]


@pytest.mark.parametrize("make, make_ref, shapes", LAYERS,
                         ids=[type(m()).__name__ + str(i) for i, (m, _, _) in enumerate(LAYERS)])
def test_layer_matches_torch(make, make_ref, shapes):
    check_module(make(), make_ref(), *[arr(*s) for s in shapes])


def test_batch_norm_running_stats_and_eval():
    mine, ref = nn.nn_batch_norm1d(3), torch.nn.BatchNorm1d(3)
    copy_weights(mine, ref)
    x = arr(8, 3)
    mine(ours(x))
    ref(theirs(x))
    close(mine.running_mean, ref.running_mean)
    close(mine.running_var, ref.running_var)
    assert int(mine.num_batches_tracked.item()) == 1
    mine.eval()
    ref.eval()
    close(mine(ours(x)), ref(theirs(x)))


@pytest.mark.parametrize("mode", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("batch_first, bidirectional", [(False, False), (True, True)])
def test_recurrent_matches_torch(mode, batch_first, bidirectional):
    mine = getattr(nn, "nn_" + mode.lower())(3, 4, num_layers=2, batch_first=batch_first,
                                              bidirectional=bidirectional)
    ref = getattr(torch.nn, mode)(3, 4, num_layers=2, batch_first=batch_first,
                                  bidirectional=bidirectional)
    check_module(mine, ref, arr(5, 2, 3), out_index=0)


def test_multihead_attention_matches_torch():
    mine = nn.nn_multihead_attention(8, 2)
    ref = torch.nn.MultiheadAttention(8, 2)
    copy_weights(mine, ref)
    q, k = arr(4, 2, 8), arr(5, 2, 8)
    y, w = mine(ours(q), ours(k), ours(k))
    ty, tw = ref(theirs(q), theirs(k), theirs(k))
    close(y, ty)
    close(w, tw)
    y.sum().backward()
    ty.sum().backward()
    ref_params = dict(ref.named_parameters())
    for name, p in mine.parameters.items():
        close(p.grad, ref_params[name].grad)


ACTIVATIONS = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {"alpha": 0.7}),
    ("celu", {"alpha": 1.3}), ("selu", {}), ("gelu", {}), ("gelu", {"approximate": "tanh"}),
    ("silu", {}), ("mish", {}), ("softplus", {"beta": 2.0}), ("sigmoid", {}), ("tanh", {}),
    ("hardtanh", {"min_val": -0.5, "max_val": 1.5}), ("logsigmoid", {}), ("softsign", {}),
    ("tanhshrink", {}), ("hardsigmoid", {}), ("hardswish", {}), ("hardshrink", {}),
    ("softshrink", {}), ("softmax", {"dim": 1}), ("log_softmax", {"dim": 0}),
    ("softmin", {"dim": 1}), ("glu", {"dim": 1}),
]


@pytest.mark.parametrize("name, kw", ACTIVATIONS, ids=[a for a, _ in ACTIVATIONS])
def test_activation_matches_torch(name, kw):
    x = arr(4, 6, low=-4, high=4)
    a, t = ours(x), theirs(x)
    y = getattr(nn, "nnf_" + name)(a, **kw)
    ty = getattr(torch.nn.functional, name)(t, **kw)
    close(y, ty)
    w = arr(*ty.shape)
    (y * ours(w, False)).sum().backward()
    (ty * theirs(w, False)).sum().backward()
    close(a.grad, t.grad)


def _probs(*shape):
    return RNG.uniform(0.05, 0.95, size=shape)


LOSSES = [
    ("mse_loss", lambda: [arr(4, 3), arr(4, 3)], {}),
    ("l1_loss", lambda: [arr(4, 3), arr(4, 3)], {"reduction": "sum"}),
    ("smooth_l1_loss", lambda: [arr(4, 3), arr(4, 3)], {"beta": 0.5}),
    ("huber_loss", lambda: [arr(4, 3), arr(4, 3)], {"delta": 0.7, "reduction": "none"}),
    ("binary_cross_entropy", lambda: [_probs(4, 3), _probs(4, 3)], {}),
    ("binary_cross_entropy_with_logits", lambda: [arr(4, 3), _probs(4, 3)], {}),
    ("kl_div", lambda: [np.log(_probs(4, 3)), _probs(4, 3)], {"reduction": "batchmean"}),
    ("soft_margin_loss", lambda: [arr(4, 3), np.sign(arr(4, 3))], {}),
    ("poisson_nll_loss", lambda: [arr(4, 3), _probs(4, 3) * 3], {}),
]


@pytest.mark.parametrize("name, make, kw", LOSSES, ids=[n for n, _, _ in LOSSES])
def test_loss_matches_torch(name, make, kw):
    x, target = make()
    a, t = ours(x), theirs(x)
    fn = {"binary_cross_entropy": "nnf_binary_cross_entropy"}.get(name, "nnf_" + name)
    y = getattr(nn, fn)(a, ours(target, False), **kw)
    ty = getattr(torch.nn.functional, name)(t, theirs(target, False), **kw)
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(a.grad, t.grad)


def test_loss_module_takes_its_inputs_by_name():
    x, target = arr(4, 3), _probs(4, 3)
    loss = nn.nn_mse_loss()
    by_position = loss(ours(x, False), ours(target, False))
    close(loss(target=ours(target, False), input=ours(x, False)), by_position.data)
    close(loss(ours(x, False), target=ours(target, False)), by_position.data)
    with pytest.raises(TypeError, match="unexpected argument 'y'"):
        loss(ours(x, False), y=ours(target, False))


@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"reduction": "none"},
                                {"ignore_index": 1}, {"label_smoothing": 0.1},
                                {"weight": "w"}, {"weight": "w", "label_smoothing": 0.2},
                                {"weight": "w", "label_smoothing": 0.2, "ignore_index": 2,
                                 "reduction": "none"}])
def test_cross_entropy_and_nll_match_torch(kw):
    x = arr(6, 4, 3)
    target = RNG.integers(0, 4, size=(6, 3))
    kw_o, kw_t = dict(kw), dict(kw)
    if "weight" in kw:
        w = _probs(4)
        kw_o["weight"], kw_t["weight"] = ours(w, False), theirs(w, False)
    a, t = ours(x), theirs(x)
    y = nn.nnf_cross_entropy(a, rt.torch_tensor(target), **kw_o)
    ty = torch.nn.functional.cross_entropy(t, torch.tensor(target), **kw_t)
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(a.grad, t.grad)
    if "label_smoothing" not in kw:
        a2, t2 = ours(x), theirs(x)
        close(nn.nnf_nll_loss(a2.log_softmax(1), rt.torch_tensor(target), **kw_o),
              torch.nn.functional.nll_loss(t2.log_softmax(1), torch.tensor(target), **kw_t))


def test_margin_and_embedding_losses_match_torch():
    x1, x2, y = arr(5, 4), arr(5, 4), np.sign(arr(5))
    F, TF = nn, torch.nn.functional
    close(F.nnf_margin_ranking_loss(ours(x1[:, 0]), ours(x2[:, 0]), ours(y), margin=0.3),
          TF.margin_ranking_loss(theirs(x1[:, 0]), theirs(x2[:, 0]), theirs(y), margin=0.3))
    close(F.nnf_cosine_embedding_loss(ours(x1), ours(x2), ours(y), margin=0.2),
          TF.cosine_embedding_loss(theirs(x1), theirs(x2), theirs(y), margin=0.2))
    close(F.nnf_hinge_embedding_loss(ours(x1), ours(np.sign(x2))),
          TF.hinge_embedding_loss(theirs(x1), theirs(np.sign(x2))))
    x3 = arr(5, 4)
    close(F.nnf_triplet_margin_loss(ours(x1), ours(x2), ours(x3), margin=0.5),
          TF.triplet_margin_loss(theirs(x1), theirs(x2), theirs(x3), margin=0.5))
    tgt = RNG.integers(0, 4, size=5)
    close(F.nnf_multi_margin_loss(ours(x1), rt.torch_tensor(tgt)),
          TF.multi_margin_loss(theirs(x1), torch.tensor(tgt)))
    close(F.nnf_multilabel_soft_margin_loss(ours(x1), ours((x2 > 0) * 1.0)),
          TF.multilabel_soft_margin_loss(theirs(x1), theirs((x2 > 0) * 1.0)))


def test_embedding_and_one_hot():
    mine, ref = nn.nn_embedding(6, 3, padding_idx=2), torch.nn.Embedding(6, 3, padding_idx=2)
    copy_weights(mine, ref)
    idx = RNG.integers(0, 6, size=(4, 5))
    y, ty = mine(rt.torch_tensor(idx)), ref(torch.tensor(idx))
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(mine.weight.grad, ref.weight.grad)
    bag = nn.nnf_embedding_bag(rt.torch_tensor(idx), mine.weight, mode="sum")
    close(bag, torch.nn.functional.embedding_bag(torch.tensor(idx), ref.weight, mode="sum"))
    close(nn.nnf_one_hot(rt.torch_tensor([0, 2, 1])),
          torch.nn.functional.one_hot(torch.tensor([0, 2, 1])))
    with pytest.raises(IndexError, match="index out of range"):
        nn.nnf_embedding(rt.torch_tensor([6]), mine.weight)


def test_embedding_records_embedding_backward_as_pytorch():
    # R torch's nn_embedding page prints grad_fn = <EmbeddingBackward0>
    idx = RNG.integers(0, 6, size=(4, 5))

    def embedding(T, w):
        if T is torch:
            return torch.nn.functional.embedding(torch.tensor(idx), w, padding_idx=2)
        return nn.nnf_embedding(rt.torch_tensor(idx), w, padding_idx=2)
    check_vs_torch(embedding, rand(6, 3), second_order=True)
    check_vs_torch(lambda T, w: embedding(T, w) * embedding(T, w), rand(6, 2))


def test_dropout_respects_train_and_eval():
    d = nn.nn_dropout(0.5)
    x = rt.torch_ones(1000)
    y = d(x).data
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.3 < (y == 0).mean() < 0.7
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.nn_dropout(1.5)


@pytest.mark.parametrize("fn", ["dropout", "alpha_dropout", "feature_alpha_dropout"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_dropout_of_everything_keeps_the_dtype(fn, dtype):
    """p = 1 multiplies by a zero of the input's dtype, as libtorch does: no
    draw, and an integer input stays integer (p < 1 refuses integers: E31)."""
    values = np.array([[-2, 3], [5, -7]], dtype=dtype)
    ours = getattr(nn, "nnf_" + fn)(rt.torch_tensor(values), p=1.0, training=True)
    theirs = getattr(torch.nn.functional, fn)(torch.from_numpy(values), p=1.0, training=True)
    assert ours.data.dtype == theirs.numpy().dtype
    np.testing.assert_array_equal(np.signbit(ours.data), np.signbit(theirs.numpy()))
    np.testing.assert_array_equal(ours.data, theirs.numpy())


def test_init_functions():
    w = rt.torch_empty(300, 200)
    nn.nn_init_xavier_uniform_(w)
    a = np.sqrt(6 / 500)
    assert np.abs(w.data).max() <= a and np.abs(w.data).max() > 0.9 * a
    nn.nn_init_kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.data.std() - np.sqrt(2 / 300)) < 0.01 * np.sqrt(2 / 300) * 10
    nn.nn_init_orthogonal_(w)
    close(w.data.T @ w.data, np.eye(200), tol=1e-4)
    nn.nn_init_eye_(w)
    close(w, np.eye(300, 200))
    nn.nn_init_constant_(w, 0.5)
    assert np.all(w.data == 0.5)
    assert nn.nn_init_calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain(
        "leaky_relu", 0.2)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.nn_init_xavier_uniform_(rt.torch_empty(3))


def test_linear_default_init_bounds():
    lin = nn.nn_linear(50, 20)
    b = 1 / np.sqrt(50)
    assert np.abs(lin.weight.data).max() <= b and np.abs(lin.bias.data).max() <= b


def test_clip_grad_matches_torch():
    g1, g2 = arr(10, 10) * 10, arr(10)
    for norm_type in (2.0, 1.0, float("inf")):
        ps = [ours(arr(10, 10)), ours(arr(10))]
        ts = [theirs(p.data) for p in ps]
        for p, t, g in zip(ps, ts, (g1, g2)):
            p.grad, t.grad = ours(g, False), theirs(g, False)
        n = nn.nn_utils_clip_grad_norm_(ps, 2.0, norm_type)
        tn = torch.nn.utils.clip_grad_norm_(ts, 2.0, norm_type)
        close(n, tn, 1e-6)
        for p, t in zip(ps, ts):
            close(p.grad, t.grad, 1e-6)
    p = ours(arr(4))
    p.grad = ours(arr(4) * 5, False)
    t = theirs(p.data)
    t.grad = theirs(p.grad.data)
    nn.nn_utils_clip_grad_value_([p], 1.0)
    torch.nn.utils.clip_grad_value_([t], 1.0)
    close(p.grad, t.grad)


def test_clip_grad_of_a_tensor_without_gradient_matches_torch():
    # (a bare tensor, not in a list, whose grad is None: left alone, a norm of 0)
    p, t = ours(arr(3)), theirs(arr(3))
    close(nn.nn_utils_clip_grad_norm_(p, 1.0), torch.nn.utils.clip_grad_norm_(t, 1.0))
    nn.nn_utils_clip_grad_value_(p, 1.0)
    assert p.grad is None


def test_gradcheck_of_primitives():
    x = rt.torch_tensor(arr(1, 2, 5, 4), requires_grad=True)
    assert rt.autograd_gradcheck(lambda x: nn.nnf_max_pool2d(x, 2), [x])
    assert rt.autograd_gradcheck(lambda x: nn.nnf_avg_pool2d(x, 3, 1, 1), [x])
    assert rt.autograd_gradcheck(lambda x: nn.nnf_pad(x, [1, 2, 0, 1], mode="reflect"), [x])
    assert rt.autograd_gradcheck(lambda x: nn.nnf_gelu(x), [x])
    from rtorch_py.ops import nn_primitives as _prims
    lstm_in = [rt.torch_tensor(arr(*s), requires_grad=True)
               for s in [(4, 2, 3), (2, 5), (2, 5), (20, 3), (20, 5), (20,), (20,)]]
    assert rt.autograd_gradcheck(lambda *a: _prims.lstm_layer(*a)[0], lstm_in)
    assert rt.autograd_gradcheck(lambda *a: _prims.lstm_layer(*a)[2], lstm_in)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_node_and_second_derivatives_match_torch(reduction):
    x, target = arr(6, 4), np.array([0, 3, 1, 1, 2, 0])
    a, t = ours(x), theirs(x)
    y = nn.nnf_cross_entropy(a, rt.torch_tensor(target), reduction=reduction)
    ty = torch.nn.functional.cross_entropy(t, torch.tensor(target), reduction=reduction)
    assert y.grad_fn.name == ty.grad_fn.name()        # NllLossBackward0
    w = arr(*ty.shape)
    g, = rt.autograd_grad((y * ours(w, False)).sum(), [a], create_graph=True)
    tg, = torch.autograd.grad((ty * theirs(w, False)).sum(), [t], create_graph=True)
    close(g, tg)
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    close(a.grad, t.grad)


@pytest.mark.parametrize("k, s, p, d, ceil", [(2, 2, 0, 1, False), (3, 2, 1, 1, True),
                                              (3, 1, 1, 2, False)])
def test_max_pool_indices_and_nan_match_torch(k, s, p, d, ceil):
    # the maxima's positions as torch reports them, a NaN taking its window as in torch
    x = arr(2, 3, 9, 8)
    x[0, 0, 1, 1] = x[1, 2, 4, 5] = np.nan
    y, i = nn.nnf_max_pool2d(ours(x, False), k, s, p, d, ceil, return_indices=True)
    ty, ti = torch.nn.functional.max_pool2d(theirs(x, False), k, s, p, d, ceil,
                                            return_indices=True)
    np.testing.assert_array_equal(i.data, ti.numpy())
    np.testing.assert_array_equal(y.data, ty.numpy())


def test_lstm_second_derivatives_match_torch():
    # create_graph through the fused LSTM layer (its derivative re-runs the
    # forward unrolled), against PyTorch's LSTM, in float64
    mine = nn.nn_lstm(3, 4).to(dtype=rt.torch_float64())
    ref = torch.nn.LSTM(3, 4).double()
    copy_weights(mine, ref)
    x = arr(5, 2, 3)
    xs, tx = ours(x), theirs(x)
    y = mine(xs)[0]
    ty = ref(tx)[0]
    w = arr(*ty.shape)
    wh = mine.weight_hh_l0
    g, = rt.autograd_grad((y * ours(w, False)).sum(), [wh], create_graph=True)
    tg, = torch.autograd.grad((ty * theirs(w, False)).sum(), [ref.weight_hh_l0], create_graph=True)
    close(g, tg)
    (g * g).sum().backward()
    (tg * tg).sum().backward()
    close(xs.grad, tx.grad)
    close(mine.weight_ih_l0.grad, ref.weight_ih_l0.grad)
    close(wh.grad, ref.weight_hh_l0.grad)


# --------------------------------------------------------------------------
# The module system


def test_registration_and_names():
    Net = nn.nn_module(
        "Net",
        initialize=lambda self, n: (setattr(self, "fc", nn.nn_linear(n, 2)),
                                    setattr(self, "scale", nn.nn_parameter(rt.torch_ones(1))),
                                    setattr(self, "count", nn.nn_buffer(rt.torch_zeros(1))),
                                    setattr(self, "note", "plain")),
        forward=lambda self, x: self.fc(x) * self.scale)
    m = Net(3)
    assert type(m).__name__ == "Net" and isinstance(m, nn.Module)
    assert m.parameters.names() == ["scale", "fc.weight", "fc.bias"]
    assert m.buffers.names() == ["count"]
    assert list(m.state_dict()) == ["scale", "count", "fc.weight", "fc.bias"]
    assert m.children.names() == ["fc"] and len(m.modules) == 2
    assert m.note == "plain" and len(m.parameters()) == 3
    assert m(rt.torch_randn(4, 3)).shape == (4, 2)


def test_subclassing_like_pytorch():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.nn_sequential(nn.nn_linear(3, 4), nn.nn_relu())
            self.head = nn.nn_linear(4, 1)

        def forward(self, x):
            return self.head(self.body(x))

    m = Net()
    assert m.parameters.names() == ["body.0.weight", "body.0.bias", "head.weight", "head.bias"]
    m.eval()
    assert not m.body[1].training
    m.train()
    assert m.body[1].training
    assert "An `nn_module` containing 21 parameters." in repr(m)


def test_state_dict_round_trip_and_errors():
    a, b = nn.nn_linear(3, 2), nn.nn_linear(3, 2)
    b.load_state_dict(a.state_dict())
    close(a.weight, b.weight.data)
    with pytest.raises(ValueError, match="Could not find bias"):
        b.load_state_dict({"weight": a.weight})
    with pytest.raises(ValueError, match="size mismatch for weight"):
        b.load_state_dict({"weight": rt.torch_zeros(5, 5), "bias": rt.torch_zeros(2)})
    sd = a.state_dict()
    assert sd["weight"].requires_grad and sd["weight"] is not a.weight


def test_to_double_keeps_objects_and_zero_grad():
    m = nn.nn_sequential(nn.nn_linear(3, 2), nn.nn_batch_norm1d(2))
    w = m[0].weight
    m(rt.torch_randn(4, 3)).sum().backward()
    m.to(dtype="float64")
    assert m[0].weight is w and w.dtype.name == "float64"
    assert m[1].running_mean.dtype.name == "float64"
    assert m[1].num_batches_tracked.dtype.name == "int64"
    m(rt.torch_randn(4, 3, dtype="float64")).sum().backward()
    m.zero_grad()
    assert np.all(w.grad.data == 0)


def test_printing_like_r_torch():
    m = nn.nn_module("M", initialize=lambda self: (
        setattr(self, "linear", nn.nn_linear(10, 10)),
        setattr(self, "x", nn.nn_parameter(rt.torch_randn(10, 10))),
        setattr(self, "k", nn.nn_buffer(rt.torch_randn(5, 5)))))()
    expected = "\n".join([
        "An `nn_module` containing 210 parameters.", "",
        "── Modules " + "─" * 39, "• linear: <nn_linear> #110 parameters", "",
        "── Parameters " + "─" * 36, "• x: Float [1:10, 1:10]", "",
        "── Buffers " + "─" * 39, "• k: Float [1:5, 1:5]"])
    assert nn.module.format_module(m, width=50) == expected


def test_bad_assignments_give_clear_errors():
    m = nn.nn_sequential()
    with pytest.raises(TypeError, match="module class; call it"):
        m.register_module("a", nn.nn_linear)
    with pytest.raises(TypeError, match="must be a tensor"):
        nn.nn_parameter(3)
    with pytest.raises(TypeError, match="floating point"):
        nn.nn_linear(2, 2).to(dtype="int64")


def test_custom_autograd_function_inside_a_module():
    def forward(ctx, x, w):
        ctx.save_for_backward(x=x, w=w)
        return x.mm(w.t())

    def backward(ctx, g):
        s = ctx.saved_variables
        return {"x": g.mm(s["w"]), "w": g.t().mm(s["x"])}

    mylinear = rt.autograd_function(forward=forward, backward=backward)
    Net = nn.nn_module("Net", initialize=lambda self: setattr(
        self, "w", nn.nn_parameter(rt.torch_randn(2, 3))),
        forward=lambda self, x: mylinear(x, self.w).relu().sum())
    m = Net()
    x = rt.torch_randn(4, 3)
    m(x).backward()
    tw = theirs(m.w.data.astype(np.float64))
    torch.relu(theirs(x.data, False) @ tw.T).sum().backward()
    close(m.w.grad, tw.grad, 1e-5)


def test_one_training_step_matches_torch():
    """An MLP through nn_sequential + cross_entropy, one SGD step by hand."""
    mine = nn.nn_sequential(nn.nn_linear(6, 5), nn.nn_relu(), nn.nn_linear(5, 3))
    ref = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))
    copy_weights(mine, ref)
    x, y = arr(8, 6), RNG.integers(0, 3, size=8)
    nn.nnf_cross_entropy(mine(ours(x, False)), rt.torch_tensor(y)).backward()
    torch.nn.functional.cross_entropy(ref(theirs(x, False)), torch.tensor(y)).backward()
    with rt.with_no_grad():
        for p in mine.parameters.values():
            nn.module.write_(p, p.data - 0.1 * p.grad.data)
    with torch.no_grad():
        for p in ref.parameters():
            p -= 0.1 * p.grad
    close(mine(ours(x, False)), ref(theirs(x, False)))


def test_multilabel_margin_loss_matches_torch():
    x = arr(3, 5)
    target = np.array([[3, 0, -1, 1, 2], [1, -1, 0, 0, 0], [4, 3, 2, 1, 0]])
    a, t = ours(x), theirs(x)
    y = nn.nnf_multilabel_margin_loss(a, rt.torch_tensor(target))
    ty = torch.nn.functional.multilabel_margin_loss(t, torch.tensor(target))
    close(y, ty)
    y.backward()
    ty.backward()
    close(a.grad, t.grad)
    with pytest.raises(RuntimeError, match="^argument #2 'target' is out of range$"):
        nn.nnf_multilabel_margin_loss(a, rt.torch_tensor(np.full((3, 5), 7)))


def test_sparsemax_projects_onto_the_simplex():
    x = rt.torch_tensor([[1.0, 0.5, -1.0], [0.0, 0.0, 0.0]], dtype="float64")
    close(nn.nnf_contrib_sparsemax(x, dim=1), [[0.75, 0.25, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    z = rt.torch_tensor(arr(4, 6), requires_grad=True)
    assert rt.autograd_gradcheck(lambda z: nn.nnf_contrib_sparsemax(z, 1) * 1.0, [z])


@pytest.mark.parametrize("name", ["silu", "gelu", "softplus", "elu", "mish"])
def test_activation_second_derivatives_match_torch(name):
    x = arr(3, 4, low=-3, high=3)
    a, t = ours(x), theirs(x)
    (ga,) = rt.autograd_grad(getattr(nn, "nnf_" + name)(a).sum(), [a], create_graph=True)
    (gt,) = torch.autograd.grad(getattr(torch.nn.functional, name)(t).sum(), [t],
                                create_graph=True)
    close(ga, gt)
    (gga,) = rt.autograd_grad((ga * ga).sum(), [a])
    (ggt,) = torch.autograd.grad((gt * gt).sum(), [t])
    close(gga, ggt)


def test_first_order_primitives_refuse_double_backward():
    x = rt.torch_tensor(arr(2, 4), requires_grad=True)
    with pytest.raises(RuntimeError, match="second derivatives"):
        rt.autograd_grad(nn.nnf_contrib_sparsemax(x).square().sum(), [x], create_graph=True)
    (g,) = rt.autograd_grad(nn.nnf_contrib_sparsemax(x).square().sum(), [x])  # first order
    assert g.shape == x.shape


@pytest.mark.parametrize("fn, kw", [
    ("max_pool2d", {"kernel_size": 2}), ("avg_pool2d", {"kernel_size": 3, "stride": 2,
                                                         "padding": 1}),
    ("pad", {"pad": (1, 2, 2, 0), "mode": "reflect"}), ("pad", {"pad": (1, 2), "value": 0.3})])
def test_pooling_and_padding_second_derivatives_match_torch(fn, kw):
    x = arr(2, 3, 5, 6)
    a, t = ours(x), theirs(x)
    (ga,) = rt.autograd_grad(getattr(nn, "nnf_" + fn)(a, **kw).square().sum(), [a],
                             create_graph=True)
    (gt,) = torch.autograd.grad(getattr(torch.nn.functional, fn)(t, **kw).square().sum(), [t],
                                create_graph=True)
    close(ga, gt)
    close(rt.autograd_grad((ga * ga).sum(), [a])[0], torch.autograd.grad((gt * gt).sum(), [t])[0])


def test_convolution_second_derivatives_match_torch():
    x, w = arr(2, 4, 6, 5), arr(4, 2, 3, 2)
    a, aw, t, tw = ours(x), ours(w), theirs(x), theirs(w)
    ga = rt.autograd_grad(nn.nnf_conv2d(a, aw, stride=2, padding=1, groups=2).square().sum(),
                          [a, aw], create_graph=True)
    gt = torch.autograd.grad(torch.nn.functional.conv2d(t, tw, stride=2, padding=1, groups=2)
                             .square().sum(), [t, tw], create_graph=True)
    for p, q in zip(ga, gt):
        close(p, q)
    close(rt.autograd_grad((ga[0] * ga[1].sum()).sum(), [aw])[0],
          torch.autograd.grad((gt[0] * gt[1].sum()).sum(), [tw])[0])


def test_aum_loss_by_hand():
    # scores 2, 1, 0, -1 with positives at 2 and 0: min(FPR, FNR) is 0, 1/2, 0 on
    # the three unit ranges between thresholds, so the area is 1/2; moving the
    # negative scored 1 up widens the middle range (d/dx = 1/2), the positive
    # scored 0 up narrows it (d/dx = -1/2).
    x = rt.torch_tensor([2.0, 1.0, 0.0, -1.0], requires_grad=True)
    loss = nn.nnf_area_under_min_fpr_fnr(x, rt.torch_tensor([2, 1, 2, 1]))
    close(loss, 0.5)
    loss.backward()
    close(x.grad, [0.0, 0.5, -0.5, 0.0])
    assert nn.nn_aum_loss()(x, rt.torch_tensor([1, 1, 1, 1])).item() == 0


def test_nn_module_inherits_classes_and_initialize():
    MyLinear = nn.nn_module("my_linear", inherit=nn.nn_linear,
                            forward=lambda self, x: nn.nn_linear.forward(self, x) * 2)
    m = MyLinear(3, 2)
    assert isinstance(m, nn.nn_linear) and m.weight.shape == (2, 3)
    x = rt.torch_randn(4, 3)
    close(m(x), nn.nnf_linear(x, m.weight, m.bias).data * 2)
    Base = nn.nn_module("base", initialize=lambda self, n: setattr(self, "fc", nn.nn_linear(n, 1)),
                        forward=lambda self, x: self.fc(x))
    Child = nn.nn_module("child", inherit=Base, forward=lambda self, x: Base.forward(self, x) + 1)
    c = Child(5)
    assert type(c).__name__ == "child" and c.parameters.names() == ["fc.weight", "fc.bias"]
    with pytest.raises(TypeError, match="inherit"):
        nn.nn_module("bad", inherit=int)


@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                {"kernel_size": 2, "dilation": 2, "ceil_mode": True}])
def test_max_pool_indices_match_torch(kw):
    x = arr(2, 3, 7, 6)
    out, idx = nn.nnf_max_pool2d(ours(x, False), return_indices=True, **kw)
    tout, tidx = torch.nn.functional.max_pool2d(theirs(x, False), return_indices=True, **kw)
    close(out, tout)
    np.testing.assert_array_equal(idx.data, tidx.numpy())


def test_cross_entropy_refuses_float_class_indices():
    x = rt.torch_randn(3, 3)
    with pytest.raises(TypeError, match="integer tensor"):
        nn.nnf_cross_entropy(x, rt.torch_tensor([0.0, 1.0, 2.0]))
    probs = rt.torch_tensor(np.full((3, 3), 1 / 3))
    close(nn.nnf_cross_entropy(x, probs),
          torch.nn.functional.cross_entropy(torch.tensor(x.data), torch.tensor(probs.data)))


def test_embedding_bag_offsets_and_weights_match_torch():
    w = arr(6, 3)
    a, t = ours(w), theirs(w)
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 0])
    off = np.array([0, 3, 3, 5])
    psw = arr(8)
    y = nn.nnf_embedding_bag(rt.torch_tensor(idx), a, rt.torch_tensor(off), mode="sum",
                             per_sample_weights=ours(psw, False))
    ty = torch.nn.functional.embedding_bag(torch.tensor(idx), t, torch.tensor(off), mode="sum",
                                           per_sample_weights=theirs(psw, False))
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(a.grad, t.grad)
    for mode in ("mean", "max"):
        close(nn.nnf_embedding_bag(rt.torch_tensor(idx), a, rt.torch_tensor(off[:3]), mode=mode),
              torch.nn.functional.embedding_bag(torch.tensor(idx), t, torch.tensor(off[:3]),
                                                mode=mode))


def test_cross_entropy_probabilities_with_smoothing_and_weight():
    x, p, w = arr(5, 4), _probs(5, 4), _probs(4)
    p = p / p.sum(axis=1, keepdims=True)
    a, t = ours(x), theirs(x)
    y = nn.nnf_cross_entropy(a, ours(p, False), weight=ours(w, False), label_smoothing=0.3)
    ty = torch.nn.functional.cross_entropy(t, theirs(p, False), weight=theirs(w, False),
                                           label_smoothing=0.3)
    close(y, ty)
    y.backward()
    ty.backward()
    close(a.grad, t.grad)


@pytest.mark.parametrize("name, args, kw", [
    ("lp_pool1d", (2.0, 3), {"stride": 2}), ("lp_pool2d", (3.0, 2), {}),
    ("threshold", (0.3, -1.0), {}), ("normalize", (), {"p": 3.0, "dim": 1}),
    ("instance_norm", (), {}), ("glu", (), {"dim": 2}),
], ids=lambda v: v if isinstance(v, str) else "")
def test_more_functional_forms_match_torch(name, args, kw):
    x = arr(2, 4, 6, 4, low=0.1, high=2.0) if name.startswith("lp") else arr(2, 4, 6, 4)
    if name == "lp_pool1d":
        x = x[:, :, :, 0]
    a, t = ours(x), theirs(x)
    y = getattr(nn, "nnf_" + name)(a, *args, **kw)
    ty = getattr(torch.nn.functional, name)(t, *args, **kw)
    close(y, ty)
    w = arr(*ty.shape)
    (y * ours(w, False)).sum().backward()
    (ty * theirs(w, False)).sum().backward()
    close(a.grad, t.grad)


def test_distances_and_other_losses_match_torch():
    x1, x2 = arr(5, 4), arr(5, 4)
    TF = torch.nn.functional
    close(nn.nnf_cosine_similarity(ours(x1), ours(x2), dim=1),
          TF.cosine_similarity(theirs(x1), theirs(x2), dim=1))
    close(nn.nnf_pairwise_distance(ours(x1), ours(x2), p=1.5),
          TF.pairwise_distance(theirs(x1), theirs(x2), p=1.5))
    rate = _probs(5, 4) * 4
    close(nn.nnf_poisson_nll_loss(ours(x1), ours(rate), full=True),
          TF.poisson_nll_loss(theirs(x1), theirs(rate), full=True))
    q = _probs(5, 4)
    close(nn.nnf_poisson_nll_loss(ours(q), ours(rate), log_input=False),
          TF.poisson_nll_loss(theirs(q), theirs(rate), log_input=False))
    lt = np.log(_probs(5, 4))
    close(nn.nnf_kl_div(ours(np.log(_probs(5, 4) * 0 + 0.25)), ours(lt), reduction="sum",
                        log_target=True),
          TF.kl_div(theirs(np.log(_probs(5, 4) * 0 + 0.25)), theirs(lt), reduction="sum",
                    log_target=True))
    for red in ("sum", "none"):
        close(nn.nnf_smooth_l1_loss(ours(x1), ours(x2), reduction=red, beta=0.3),
              TF.smooth_l1_loss(theirs(x1), theirs(x2), reduction=red, beta=0.3))


@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5), (2, 2, 3, 5), "strided"])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear_records_what_libtorchs_linear_records(shape, with_bias):
    # a bias fused into addmm (AddmmBackward0, or ViewBackward0 after flattening a
    # contiguous input), else matmul's nodes: grad_fn names, values and grads as PyTorch's
    x = rand(3, 2, 5) if shape == "strided" else rand(*shape)
    w, b = rand(4, 5), rand(4)

    def linear(T, x, w, b):
        if shape == "strided":
            x = x.transpose(0, 1)
        f = nn.nnf_linear if T is not torch else torch.nn.functional.linear
        return f(x, w, b if with_bias else None)

    check_vs_torch(linear, x, w, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_is_pytorchs_one_node(dtype):
    # the fused kernel (ops/nn_functional.py): PyTorch's node, and each of
    # weight / bias alone, against PyTorch (the generated op tests cover the rest)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((3, 4, 5)) * 4 + 2).astype(dtype)
    g = rng.standard_normal((3, 4, 5)).astype(dtype)
    p = rng.standard_normal((2, 4, 5)).astype(dtype)
    for use in ((True, False), (False, True)):
        ours = [rt.torch_tensor(x, requires_grad=True)] + \
            [rt.torch_tensor(v, requires_grad=True) if u else None for v, u in zip(p, use)]
        theirs = [torch.tensor(x, requires_grad=True)] + \
            [torch.tensor(v, requires_grad=True) if u else None for v, u in zip(p, use)]
        y = nn.functional.nnf_layer_norm(ours[0], (4, 5), *ours[1:])
        t = torch.nn.functional.layer_norm(theirs[0], (4, 5), *theirs[1:])
        assert y.grad_fn.name == type(t.grad_fn).__name__ == "NativeLayerNormBackward0"
        (y * rt.torch_tensor(g)).sum().backward()
        (t * torch.tensor(g)).sum().backward()
        tol = 1e-5 if dtype is np.float32 else 1e-12
        close(y, t, tol)
        for a, b in zip(ours, theirs):
            if a is not None:
                close(a.grad, b.grad, tol)
