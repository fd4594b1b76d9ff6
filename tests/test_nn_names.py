"""R torch 0.17's nn names beyond the generated op tests (issue 18): layers and
functions against PyTorch (packed sequences through the recurrent layers,
transformers, weight normalisation, unpooling what max pooling picked, the
CTC loss module...), and the behaviours R torch gives them."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from torch.nn.utils import rnn as trnn

import rtorch_py as rt

RNG = np.random.default_rng(3)


def arr(*shape) -> np.ndarray:
    return RNG.standard_normal(shape)


def close(mine, theirs, atol=1e-6) -> None:
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else theirs
    np.testing.assert_allclose(np.asarray(mine.data, np.float64), np.asarray(theirs, np.float64),
                               atol=atol, rtol=1e-5)


def copy_params(mine, ref) -> None:
    """PyTorch's module takes our parameters (same names)."""
    ours = dict(mine.named_parameters().items())
    with torch.no_grad():
        for n, p in ref.named_parameters():
            p.copy_(torch.from_numpy(np.asarray(ours[n].data, np.float32)))


# --------------------------------------------------------------------------
# Packed sequences


@pytest.mark.parametrize("mode, bidirectional, layers", [
    ("lstm", False, 1), ("lstm", True, 2), ("gru", True, 1), ("rnn", False, 2)])
def test_recurrent_layers_on_packed_sequences_match_pytorch(mode, bidirectional, layers):
    x = arr(5, 3, 4)
    lengths = [5, 2, 4]
    mine = getattr(rt, "nn_" + mode)(4, 3, num_layers=layers, bidirectional=bidirectional)
    ref = getattr(torch.nn, mode.upper())(4, 3, num_layers=layers, bidirectional=bidirectional)
    copy_params(mine, ref)
    a = rt.torch_tensor(x.astype(np.float32), requires_grad=True)
    t = torch.tensor(x.astype(np.float32), requires_grad=True)
    out, h = mine(rt.nn_utils_rnn_pack_padded_sequence(a, lengths, enforce_sorted=False))
    tout, th = ref(trnn.pack_padded_sequence(t, lengths, enforce_sorted=False))
    assert isinstance(out, rt.PackedSequence)
    close(out.data, tout.data)
    close(h[0] if mode == "lstm" else h, th[0] if mode == "lstm" else th)
    padded, lens = rt.nn_utils_rnn_pad_packed_sequence(out, batch_first=True)
    tpadded, tlens = trnn.pad_packed_sequence(tout, batch_first=True)
    close(padded, tpadded)
    np.testing.assert_array_equal(lens.data, tlens.numpy())
    padded.sum().backward()
    tpadded.sum().backward()
    close(a.grad, t.grad, atol=1e-5)


def test_packing_utilities_match_pytorch():
    seqs = [arr(4, 2), arr(2, 2), arr(3, 2)]
    mine = [rt.torch_tensor(s) for s in seqs]
    ref = [torch.tensor(s) for s in seqs]
    close(rt.nn_utils_rnn_pad_sequence(mine), trnn.pad_sequence(ref))
    close(rt.nn_utils_rnn_pad_sequence(mine, batch_first=True, padding_value=-1.0),
          trnn.pad_sequence(ref, batch_first=True, padding_value=-1.0))
    p = rt.nn_utils_rnn_pack_sequence(mine, enforce_sorted=False)
    tp = trnn.pack_sequence(ref, enforce_sorted=False)
    close(p.data, tp.data)
    for field in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        np.testing.assert_array_equal(getattr(p, field).data, getattr(tp, field).numpy())
    x = rt.torch_tensor(arr(4, 3), requires_grad=True)
    packed = rt.nn_utils_rnn_pack_padded_sequence(x, [4, 3, 1])
    assert packed.sorted_indices is None and packed.data.grad_fn.name == \
        "PackPaddedSequenceBackward0"
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        rt.nn_utils_rnn_pack_padded_sequence(x, [1, 3, 4])


# --------------------------------------------------------------------------
# Transformers


@pytest.mark.parametrize("norm_first, batch_first", [(False, False), (True, True)])
def test_transformer_encoder_matches_pytorch(norm_first, batch_first):
    mine = rt.nn_transformer_encoder(
        rt.nn_transformer_encoder_layer(8, 2, 16, norm_first=norm_first,
                                        batch_first=batch_first), 2, rt.nn_layer_norm(8))
    ref = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16, norm_first=norm_first,
                                         batch_first=batch_first), 2, torch.nn.LayerNorm(8),
        enable_nested_tensor=False)
    copy_params(mine, ref)
    mine.eval()
    ref.eval()
    x = arr(5, 3, 8).astype(np.float32)
    close(mine(rt.torch_tensor(x), is_causal=True),
          ref(torch.tensor(x), mask=torch.nn.Transformer.generate_square_subsequent_mask(
              3 if batch_first else 5), is_causal=True), atol=1e-5)


def test_transformer_matches_pytorch_with_gradients():
    mine = rt.nn_transformer(8, 2, 1, 2, 16)
    ref = torch.nn.Transformer(8, 2, 1, 2, 16)
    copy_params(mine, ref)
    mine.eval()
    ref.eval()
    s, t = arr(6, 2, 8).astype(np.float32), arr(4, 2, 8).astype(np.float32)
    out = mine(rt.torch_tensor(s), rt.torch_tensor(t),
               tgt_mask=mine.generate_square_subsequent_mask(4))
    tout = ref(torch.tensor(s), torch.tensor(t), tgt_mask=ref.generate_square_subsequent_mask(4))
    close(out, tout, atol=1e-5)
    out.sum().backward()
    tout.sum().backward()
    grads = mine.named_parameters()
    for name, p in ref.named_parameters():
        close(grads[name].grad, p.grad, atol=1e-4)


def test_encoder_layer_children_in_r_torch_order():
    layer = rt.nn_transformer_encoder_layer(4, 2, 8, activation="gelu")
    assert list(layer.children.names()) == ["self_attn", "linear1", "linear2", "dropout",
                                            "dropout1", "dropout2", "norm1", "norm2"]
    assert layer.activation_relu_or_gelu == 2
    with pytest.raises(ValueError, match="Unsupported activation string"):
        rt.nn_transformer_encoder_layer(4, 2, activation="tanh")


# --------------------------------------------------------------------------
# Weight normalisation, unpooling, fractional pooling


def test_weight_norm_matches_pytorch():
    mine = rt.nn_linear(5, 4)
    ref = torch.nn.Linear(5, 4)
    copy_params(mine, ref)
    rt.nn_utils_weight_norm(name="weight", dim=0).apply(mine)
    ref = torch.nn.utils.weight_norm(ref, name="weight", dim=0)
    assert sorted(mine.parameters.names()) == ["bias", "weight_g", "weight_v"]
    close(mine.weight_g, ref.weight_g)
    x = arr(3, 5).astype(np.float32)
    out, tout = mine(rt.torch_tensor(x)), ref(torch.tensor(x))
    close(out, tout)
    out.sum().backward()
    tout.sum().backward()
    close(mine.weight_g.grad, ref.weight_g.grad, atol=1e-5)
    close(mine.weight_v.grad, ref.weight_v.grad, atol=1e-5)


@pytest.mark.parametrize("nd", [2, 3])
def test_unpooling_what_max_pooling_picked_matches_pytorch(nd):
    x = arr(2, 3, *([4] * nd)).astype(np.float32)
    pool = getattr(rt, f"nnf_max_pool{nd}d")
    out, idx = pool(rt.torch_tensor(x), 2, return_indices=True)
    tout, tidx = getattr(TF, f"max_pool{nd}d")(torch.tensor(x), 2, return_indices=True)
    a = out.detach().requires_grad_()
    t = tout.detach().requires_grad_()
    y = getattr(rt, f"nnf_max_unpool{nd}d")(a, idx, 2)
    ty = getattr(TF, f"max_unpool{nd}d")(t, tidx, 2)
    close(y, ty)
    assert y.grad_fn.name == type(ty.grad_fn).__name__
    w = arr(*ty.shape).astype(np.float32)
    (y * rt.torch_tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    close(a.grad, t.grad)


def test_max_unpool1d_gives_r_torchs_4d_result():
    """R torch unpools 1-d as height-1 planes and leaves the width: (N, C, L, 1)."""
    pool = rt.nn_max_pool1d(2, stride=2, return_indices=True)
    out, idx = pool(rt.torch_tensor(np.arange(1, 9, dtype=np.float32).reshape(1, 1, 8)))
    y = rt.nn_max_unpool1d(2, stride=2)(out, idx)
    assert y.shape == (1, 1, 8, 1)
    np.testing.assert_array_equal(y.data.reshape(-1), [0, 2, 0, 4, 0, 6, 0, 8])


def test_fractional_max_pool_layers():
    x = rt.torch_randn(2, 3, 10, 8)
    out, idx = rt.nn_fractional_max_pool2d(3, output_ratio=(0.5, 0.5), return_indices=True)(x)
    assert out.shape == (2, 3, 5, 4) and idx.dtype == rt.torch_long()
    flat = x.data.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.data.reshape(2, 3, -1), 2),
                                  out.data.reshape(2, 3, -1))
    assert rt.nn_fractional_max_pool3d(2, output_size=2)(rt.torch_randn(1, 2, 5, 5, 5)).shape \
        == (1, 2, 2, 2, 2)
    with pytest.raises(ValueError, match="both output_size and output_ratio are NULL"):
        rt.nn_fractional_max_pool2d(2)


# --------------------------------------------------------------------------
# Activations, distances, losses


def test_rrelu_training_draws_slopes_within_bounds():
    x = rt.torch_tensor(-np.abs(arr(1000)) - 0.1, requires_grad=True)
    y = rt.nnf_rrelu(x, 0.1, 0.3, training=True)
    slopes = y.data / x.data
    assert slopes.min() >= 0.1 and slopes.max() < 0.3 and slopes.std() > 0.03
    y.sum().backward()
    np.testing.assert_allclose(x.grad.data, slopes)
    z = rt.nn_rrelu(0.1, 0.3)
    z.eval()
    close(z(rt.torch_tensor([-1.0, 2.0])), np.array([-0.2, 2.0]))
    # R torch's nnf_rrelu_: the training form, not in place
    x = rt.torch_tensor([-1.0])
    rt.nnf_rrelu_(x)
    assert x.item() == -1.0


def test_softmax2d_is_over_the_first_dim_as_in_r_torch():
    x = rt.torch_randn(2, 3, 2, 2)
    np.testing.assert_allclose(rt.nn_softmax2d()(x).data.sum(0), np.ones((3, 2, 2)), rtol=1e-6)


def test_distance_layers_and_losses_match_pytorch():
    a, p, n = (arr(4, 5).astype(np.float32) for _ in range(3))
    A, P, N = (rt.torch_tensor(v) for v in (a, p, n))
    close(rt.nn_pairwise_distance(p=1.5)(A, P), TF.pairwise_distance(
        torch.tensor(a), torch.tensor(p), p=1.5))
    loss = rt.nn_triplet_margin_with_distance_loss(margin=0.5, swap=True)
    close(loss(A, P, N), TF.triplet_margin_with_distance_loss(
        torch.tensor(a), torch.tensor(p), torch.tensor(n), margin=0.5, swap=True))
    cos = rt.nnf_triplet_margin_with_distance_loss(
        A, P, N, distance_function=lambda x, y: 1 - rt.nnf_cosine_similarity(x, y),
        reduction="none")
    close(cos, TF.triplet_margin_with_distance_loss(
        torch.tensor(a), torch.tensor(p), torch.tensor(n),
        distance_function=lambda x, y: 1 - TF.cosine_similarity(x, y), reduction="none"))
    close(rt.nnf_pdist(A, 3), TF.pdist(torch.tensor(a), 3))


def test_ctc_loss_module_matches_pytorch():
    lp = torch.randn(12, 3, 6).log_softmax(2)
    targets = torch.randint(1, 6, (3, 4))
    il, tl = torch.tensor([12, 10, 8]), torch.tensor([4, 2, 3])
    for reduction in ("mean", "sum", "none"):
        mine = rt.torch_tensor(lp.numpy(), requires_grad=True)
        out = rt.nn_ctc_loss(reduction=reduction)(mine, rt.torch_tensor(targets.numpy()),
                                                  rt.torch_tensor(il.numpy()),
                                                  rt.torch_tensor(tl.numpy()))
        ref = lp.clone().requires_grad_()
        tout = TF.ctc_loss(ref, targets, il, tl, reduction=reduction)
        close(out, tout, atol=1e-5)
        out.sum().backward()
        tout.sum().backward()
        close(mine.grad, ref.grad, atol=1e-5)


def test_local_response_norm_fold_unfold_gumbel_match_pytorch():
    for shape in ((2, 5, 4), (2, 6, 3, 3), (1, 4, 2, 2, 2)):
        x = arr(*shape).astype(np.float32)
        close(rt.nnf_local_response_norm(rt.torch_tensor(x), 3),
              TF.local_response_norm(torch.tensor(x), 3))
    x = arr(2, 3, 5, 6).astype(np.float32)
    cols = rt.nnf_unfold(rt.torch_tensor(x), (2, 3), padding=1, stride=2)
    close(cols, TF.unfold(torch.tensor(x), (2, 3), padding=1, stride=2))
    close(rt.nnf_fold(cols, (5, 6), (2, 3), padding=1, stride=2),
          TF.fold(TF.unfold(torch.tensor(x), (2, 3), padding=1, stride=2), (5, 6), (2, 3),
                  padding=1, stride=2))
    g = rt.nnf_gumbel_softmax(rt.torch_randn(4, 5), tau=0.5, hard=True)
    np.testing.assert_array_equal(g.data.sum(-1), np.ones(4))
    assert set(np.unique(g.data)) == {0.0, 1.0}


def test_embedding_from_pretrained():
    w = rt.torch_randn(5, 3)
    e = rt.nn_embedding.from_pretrained(w)
    assert e.weight is w and not e.weight.requires_grad
    bag = rt.nn_embedding_bag.from_pretrained(w, freeze=False, mode="sum")
    assert bag.weight.requires_grad
    close(bag(rt.torch_tensor(np.array([[0, 1], [2, 4]]))),
          TF.embedding_bag(torch.tensor([[0, 1], [2, 4]]), torch.tensor(w.data), mode="sum"))


# --------------------------------------------------------------------------
# Tensor functions and methods


def test_can_cast_and_promote_types_match_pytorch():
    names = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8",
             "bool", "complex64", "complex128"]
    for a in names:
        for b in names:
            ta, tb = getattr(torch, a), getattr(torch, b)
            assert rt.torch_can_cast(a, b) == torch.can_cast(ta, tb), (a, b)
            assert rt.torch_promote_types(a, b).name == str(torch.promote_types(ta, tb))[6:], \
                (a, b)


def test_fill_diagonal_and_resize_match_pytorch():
    for shape, wrap in (((5, 2), True), ((5, 2), False), ((2, 4), False), ((3, 3, 3), False)):
        mine = rt.torch_zeros(*shape)
        ref = torch.zeros(*shape)
        mine.fill_diagonal_(2.5, wrap=wrap)
        ref.fill_diagonal_(2.5, wrap=wrap)
        close(mine, ref)
    x = rt.torch_randn(3, 3, requires_grad=True) * 1
    x.fill_diagonal_(0.0)
    assert x.grad_fn.name == "CopySlices"
    y = rt.torch_tensor([[1.0, 2.0], [3.0, 4.0]])
    assert y.resize_((3,)) is y
    np.testing.assert_array_equal(y.data, [1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        rt.torch_ones(2, requires_grad=True).resize_((3,))


def test_quantize_per_channel_matches_pytorch():
    x = np.array([[-1.0, 0.0, 0.5], [1.0, 2.0, 3.0]], dtype=np.float32)
    mine = rt.torch_quantize_per_channel(rt.torch_tensor(x), rt.torch_tensor([0.1, 0.05]),
                                         rt.torch_tensor(np.array([10, 0])), 0, "quint8")
    ref = torch.quantize_per_channel(torch.tensor(x), torch.tensor([0.1, 0.05]),
                                     torch.tensor([10, 0]), 0, torch.quint8)
    np.testing.assert_array_equal(mine.int_repr().data, ref.int_repr().numpy())
    close(mine.dequantize(), ref.dequantize())
    assert mine.q_per_channel_axis() == 0
    assert "qscheme: per_channel_affine" in repr(mine)


def test_sparse_sampled_addmm_matches_pytorch():
    s = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    m1, m2 = arr(2, 4), arr(4, 3)
    x1, x2 = rt.torch_tensor(m1, requires_grad=True), rt.torch_tensor(m2, requires_grad=True)
    out = rt.torch_sparse_sampled_addmm(rt.torch_tensor(s).to_sparse_csr(), x1, x2, 0.5, 2.0)
    t1, t2 = torch.tensor(m1, requires_grad=True), torch.tensor(m2, requires_grad=True)
    tout = torch.sparse.sampled_addmm(torch.tensor(s).to_sparse_csr(), t1, t2, beta=0.5,
                                      alpha=2.0)
    assert out.is_sparse_csr() and out.grad_fn.name == type(tout.grad_fn).__name__
    close(out.to_dense(), tout.to_dense())
    out.to_dense().sum().backward()
    tout.to_dense().sum().backward()
    close(x1.grad, t1.grad)
    close(x2.grad, t2.grad)


def test_call_torch_function_and_threads():
    y = rt.torch_tanh(rt.torch_randn(4))
    with pytest.warns(UserWarning, match="quiet = True"):
        g = rt.call_torch_function("torch_tanh_backward", rt.torch_ones(4), y)
    close(g, 1 - y.data ** 2)
    with pytest.raises(ValueError, match="prefixed with 'torch_'"):
        rt.call_torch_function("nnf_relu", y, quiet=True)
    with pytest.raises(ValueError, match="No function named torch_nope"):
        rt.call_torch_function("torch_nope", quiet=True)
    rt.torch_set_num_threads(3)
    assert rt.torch_get_num_threads() == 3
    with pytest.raises(RuntimeError, match="positive number of threads"):
        rt.torch_set_num_interop_threads(0)
