"""Sample inputs of the activation ops (see the package docstring). The
in-place forms' samples (`name_`) don't require grad: a leaf that does can't
be changed in place."""
from __future__ import annotations

from . import T, sample


def float_unary() -> list:
    return [sample(T((2, 3), low=-3.0, high=3.0)), sample(T(())), sample(T((0, 3)))]


def elu() -> list:
    return float_unary() + [sample(T((2, 3), low=-3.0, high=3.0), 0.5, 2.0, 1.5,
                                   note="alpha, scale, input_scale")]


def celu() -> list:
    return float_unary() + [sample(T((2, 3), low=-3.0, high=3.0), alpha=2.0)]


def threshold() -> list:
    return [sample(T((2, 3)), 0.5, -1.0), sample(T(()), 0.0, 2.0),
            sample(T((3,), dtype="int64", low=-3, high=3), 1, 7, note="integers")]


def hardtanh() -> list:
    return float_unary() + [sample(T((2, 3), low=-3.0, high=3.0), -0.5, 2.0)]


def rrelu() -> list:
    """Evaluation mode (a fixed slope): training draws random slopes."""
    return float_unary() + [sample(T((2, 3)), 0.2, 0.4), sample(T((2, 3)), training=False)]


def backward_kernel() -> list:
    """(grad_output, output): broadcast, 0-d."""
    return [sample(T((2, 3)), T((2, 3), low=-1.0, high=1.0)),
            sample(T((2, 3)), T((3,), low=0.0, high=1.0)), sample(T(()), T(()))]


def _not_leaves(samples: list) -> list:
    return [sample(*(T(a.shape, a.dtype, a.low, a.high, requires_grad=False)
                     if isinstance(a, T) else a for a in s.args), note=s.note, **s.kwargs)
            for s in samples]


def float_unary_() -> list:
    return _not_leaves(float_unary())


def elu_() -> list:
    return _not_leaves(elu())


def celu_() -> list:
    return _not_leaves(celu())


def threshold_() -> list:
    return _not_leaves(threshold())


def hardtanh_() -> list:
    return _not_leaves(hardtanh())


def rrelu_() -> list:
    return _not_leaves(rrelu())


def hardshrink() -> list:
    return [sample(T((2, 3), low=-2.0, high=2.0)), sample(T((4,), low=-2.0, high=2.0), 1.0),
            sample(T((), low=-2.0, high=2.0))]


def hardshrink_backward() -> list:
    """(by name: PyTorch's kernel takes grad_out first, R torch's method self)"""
    return [sample(self=T((2, 3), low=-2.0, high=2.0), grad_out=T((2, 3)), lambd=0.5),
            sample(self=T((4,), low=-2.0, high=2.0), grad_out=T((3, 4)), lambd=1.0),
            sample(self=T(()), grad_out=T(()), lambd=0.0)]


def prelu() -> list:
    return [sample(T((2, 3, 4), low=-2.0, high=2.0), T((3,), low=0.1, high=0.5)),
            sample(T((2, 3), low=-2.0, high=2.0), T((1,), low=0.1, high=0.5)),
            sample(T((5,), low=-2.0, high=2.0), T((1,), low=0.1, high=0.5)),
            sample(T((2, 3, 2, 2), low=-2.0, high=2.0), T((3,), low=0.1, high=0.5))]
