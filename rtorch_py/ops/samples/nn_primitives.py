"""Sample inputs of the nn primitives (see the package docstring)."""
from __future__ import annotations

from . import T, sample


def float_unary() -> list:
    """A matrix, 0-d and empty (these ops take floating tensors only)."""
    return [sample(T((2, 3), low=-3.0, high=3.0)), sample(T(())), sample(T((0, 3)))]


def convolution() -> list:
    """Plain and transposed, 1-d to 3-d, strides, padding, dilation, groups
    (sizes as tuples, as torch.convolution takes them; a bias each time, as R
    has no positional NULL here)."""
    w2 = T((4, 2, 3, 2))
    return [
        sample(T((2, 2, 5, 4)), w2, T((4,)), (1, 1), (0, 0), (1, 1), False, (0, 0), 1),
        sample(T((2, 4, 7, 6)), w2, T((4,)), (2, 1), (1, 0), (1, 2), False, (0, 0), 2,
               note="groups"),
        sample(T((2, 3, 6)), T((2, 3, 3)), T((2,)), (2,), (1,), (1,), False, (0,), 1,
               note="1-d"),
        sample(T((1, 2, 3, 4, 3)), T((2, 2, 2, 2, 2)), T((2,)), (1, 1, 1), (0, 0, 0),
               (1, 1, 1), False, (0, 0, 0), 1, note="3-d"),
        sample(T((2, 4, 3, 3)), T((4, 1, 3, 2)), T((2,)), (2, 2), (1, 1), (1, 1), True,
               (1, 1), 2, note="transposed"),
        sample(T((1, 2, 4)), T((2, 3, 3)), T((3,)), (3,), (0,), (2,), True, (1,), 1,
               note="transposed 1-d"),
    ]


def constant_pad() -> list:
    return [sample(T((2, 3, 4)), (1, 2)), sample(T((2, 3, 4)), (1, 0, 2, 1), 0.5),
            sample(T((2, 5)), (-1, 2, 0, -1), note="cropping"),
            sample(T((3, 2), dtype="int64", low=0, high=5), (2, 2), 7, note="integers")]


def conv1d() -> list:
    return [sample(T((2, 3, 7)), T((4, 3, 3)), T((4,))),
            sample(T((2, 4, 8)), T((4, 2, 2)), stride=2, padding=1, dilation=2, groups=2,
                   note="no bias, stride, groups")]


def conv2d() -> list:
    return [sample(T((2, 2, 5, 4)), T((3, 2, 2, 2)), T((3,))),
            sample(T((1, 2, 6, 6)), T((2, 2, 3, 3)), stride=2, padding=1,
                   note="no bias, stride, padding")]


def conv3d() -> list:
    return [sample(T((1, 2, 4, 3, 4)), T((2, 2, 2, 2, 2)), T((2,)))]


def conv_transpose1d() -> list:
    return [sample(T((2, 3, 4)), T((3, 2, 3)), T((2,)), 2, 1, 1)]


def conv_transpose2d() -> list:
    return [sample(T((1, 2, 3, 3)), T((2, 3, 2, 2)), T((3,))),
            sample(T((2, 4, 3, 2)), T((4, 1, 3, 3)), stride=2, padding=1, groups=2,
                   note="no bias, groups")]


def conv_transpose3d() -> list:
    return [sample(T((1, 2, 2, 3, 2)), T((2, 2, 2, 2, 2)))]


def adaptive_avg_pool2d() -> list:
    """Even and uneven windows, batched and not, growing a dim, one cell."""
    return [sample(T((2, 3, 6, 4)), (3, 2)), sample(T((3, 5, 7)), (2, 3), note="uneven"),
            sample(T((1, 2, 3, 4)), (5, 4), note="growing"), sample(T((2, 4, 5)), 1),
            sample(T((2, 3, 4)), (1, 1), note="one cell")]


def adaptive_avg_pool2d_backward() -> list:
    return [sample(T((2, 3, 3, 2)), T((2, 3, 6, 4))),
            sample(T((3, 2, 3)), T((3, 5, 7)), note="uneven")]


def adaptive_avg_pool3d() -> list:
    return [sample(T((1, 2, 4, 3, 4)), (2, 3, 2)), sample(T((2, 5, 4, 3)), (3, 2, 2),
                                                          note="uneven, unbatched"),
            sample(T((2, 3, 2, 2)), (1, 1, 1), note="one cell")]


def adaptive_avg_pool3d_backward() -> list:
    return [sample(T((1, 2, 2, 3, 2)), T((1, 2, 4, 3, 4))),
            sample(T((2, 3, 2, 2)), T((2, 5, 4, 3)), note="uneven")]


def layer_norm() -> list:
    """Affine, weight only, none; one and two normalized dims; a larger eps. (Not
    bias alone: PyTorch's own second derivative fails on it.)"""
    return [sample(T((4, 6)), [6], T((6,)), T((6,))),
            sample(T((2, 3, 4)), [3, 4], T((3, 4)), None, 1e-3, note="weight only"),
            sample(T((3, 5)), [5], note="no affine"),
            sample(T((2, 2, 3)), [3], T((3,)), T((3,)), 0.5, note="3-d, large eps")]


def batch_norm_impl_index() -> list:
    """Training (running statistics updated, or none), evaluation, no affine."""
    def stats(c):
        return (T((c,), requires_grad=False), T((c,), low=0.5, high=2.0, requires_grad=False))
    return [sample(T((4, 3)), T((3,)), T((3,)), *stats(3), True, 0.1, 1e-5, True),
            sample(T((2, 3, 4, 2)), T((3,)), T((3,)), None, None, True, 0.5, 1e-3, True,
                   note="4-D, no running statistics"),
            sample(T((3, 2, 5)), T((2,)), T((2,)), *stats(2), False, 0.1, 1e-5, True,
                   note="evaluation"),
            sample(T((4, 2)), None, None, *stats(2), True, 1.0, 1.0, True, note="no affine")]


def one_hot() -> list:
    return [sample(T((4,), dtype="int64", low=0, high=3)),
            sample(T((2, 3), dtype="int64", low=0, high=4), 5),
            sample(T((0,), dtype="int64"), 2, note="empty")]


def multi_margin_loss() -> list:
    """Each reduction (libtorch's codes), p = 2, a margin, class weights, one
    sample as a vector."""
    def tgt(shape, c):
        return T(shape, dtype="int64", low=0, high=c)
    return [sample(T((3, 4)), tgt((3,), 4), reduction=1),
            sample(T((3, 4)), tgt((3,), 4), 2, 0.5, T((4,), low=0.5, requires_grad=False),
                   0, note="p = 2, weights, none"),
            sample(T((2, 5)), tgt((2,), 5), margin=2.0, reduction=2, note="sum"),
            sample(T((4,)), tgt((1,), 4), reduction=0, note="one sample")]


def scaled_dot_product_attention() -> list:
    """Batched heads, 3-d, 2-d, a float mask broadcast, a boolean mask,
    causal with more keys than queries, a scale (negative too), grouped
    query heads. (Dropout is random: tests/test_gen_namespace_extras.py.)"""
    return [sample(T((2, 3, 4, 5)), T((2, 3, 6, 5)), T((2, 3, 6, 7))),
            sample(T((2, 4, 3)), T((2, 5, 3)), T((2, 5, 2)), note="3-d"),
            sample(T((4, 3)), T((5, 3)), T((5, 2)), note="2-d"),
            sample(T((2, 3, 4, 5)), T((2, 3, 6, 5)), T((2, 3, 6, 7)), T((4, 6)),
                   note="float mask"),
            sample(T((2, 4, 5)), T((2, 6, 5)), T((2, 6, 3)),
                   T((4, 6), dtype="bool"), note="boolean mask"),
            sample(T((1, 2, 4, 3)), T((1, 2, 6, 3)), T((1, 2, 6, 3)), is_causal=True,
                   note="causal"),
            sample(T((2, 4, 3)), T((2, 4, 3)), T((2, 4, 3)), scale=0.3),
            sample(T((2, 4, 3)), T((2, 4, 3)), T((2, 4, 3)), scale=-0.5, note="negative"),
            sample(T((1, 4, 3, 2)), T((1, 2, 5, 2)), T((1, 2, 5, 3)), enable_gqa=True,
                   note="grouped query heads")]


def adaptive_avg_pool1d() -> list:
    return [sample(T((2, 3, 7)), 3), sample(T((3, 5)), (2,), note="unbatched"),
            sample(T((2, 4)), 1, note="one cell")]


def conv_tbc() -> list:
    return [sample(T((5, 2, 3)), T((3, 3, 4)), T((4,))),
            sample(T((4, 1, 2)), T((2, 2, 3)), T((3,)), 1, note="padding")]


def bce_with_logits() -> list:
    x, t = T((3, 4), low=-3.0, high=3.0), T((3, 4), low=0.0, high=1.0)
    w = T((4,), low=0.5, high=1.5, requires_grad=False)   # (weights get no gradient)
    pw = T((4,), low=0.5, high=2.0, requires_grad=False)
    return [sample(x, t), sample(x, t, reduction="sum"), sample(x, t, reduction="none"),
            sample(x, t, weight=w), sample(x, t, pos_weight=pw),
            sample(x, t, weight=T((3, 4), low=0.5, high=1.5, requires_grad=False),
                   pos_weight=pw, reduction="none"),
            sample(T((5,), low=-3.0, high=3.0), T((5,), low=0.0, high=1.0))]
