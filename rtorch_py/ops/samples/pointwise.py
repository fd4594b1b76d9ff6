"""Sample inputs of the pointwise ops (see the package docstring)."""
from __future__ import annotations

from . import T, sample, unary  # noqa: F401


def positive() -> list:
    return [sample(T((2, 3), low=0.5, high=3.0)), sample(T((), low=0.5, high=3.0))]


def binary_float() -> list:
    """Two float tensors, broadcast every way: trailing dims, both sides, 0-d."""
    return [sample(T((2, 3)), T((2, 3))), sample(T((2, 3)), T((3,))), sample(T(()), T((2, 1))),
            sample(T((3, 1)), T((1, 4))), sample(T((2, 1, 3)), T((4, 1))),
            sample(T((2, 3)), T(())), sample(T(()), T(()))]


def binary_arith() -> list:
    return binary_float() + [
        sample(T((2, 3)), 2.5, note="number"), sample(T((2, 3)), T((), dtype="int64")),
        sample(T((2, 3), dtype="int64"), T((3,), dtype="int64")), sample(T((0, 3)), T((3,)))]


def binary_div() -> list:
    return [sample(T((2, 3), low=-4.0, high=4.0), T((2, 3), away_from_zero=True)),
            sample(T((2, 3), low=-4.0, high=4.0), T((3,), away_from_zero=True)),
            sample(T((3,), low=-7.0, high=7.0), 3.0, note="negative dividend"),
            sample(T((3,), low=-7.0, high=7.0), -3.0, note="negative divisor")]


def binary_pow() -> list:
    return [sample(T((2, 3), low=0.5, high=2.0), T((2, 3))), sample(T((2, 3)), 2),
            sample(T((3, 1), low=0.5, high=2.0), T((1, 4))), sample(T((), low=0.5, high=2.0), T((3,))),
            sample(T((2, 3), low=0.5, high=2.0), 0.5)]


def tensor_number() -> list:
    return [sample(T((2, 3)), 2.0), sample(T((3,)), 1.5, alpha=2.0)]


def compare() -> list:
    return [sample(T((2, 3)), T((2, 3))), sample(T((2, 3)), T((3,))), sample(T((2, 3)), 0.5)]


def logical() -> list:
    return [sample(T((2, 3), dtype="bool"), T((2, 3), dtype="bool")),
            sample(T((2, 3), dtype="bool"), T((3,), dtype="bool"))]


def logical_unary() -> list:
    return [sample(T((2, 3), dtype="bool")), sample(T((4,)))]


def clamp() -> list:
    return [sample(T((2, 3)), -0.5, 0.5), sample(T((2, 3)), min=0.0), sample(T((2, 3)), max=0.0),
            sample(T((3, 4)), -1, 1, note="whole-number bounds"),
            sample(T((2, 3)), T((3,), low=-1, high=0), T((2, 1), low=0, high=1),
                   note="tensor bounds, broadcast"),
            sample(T((2, 3)), min=T((2, 3)), note="a tensor min only"),
            sample(T((2, 3)), max=T(()), note="a 0-d tensor max only")]


def unit() -> list:
    """Inside (-1, 1): asin, acos, atanh, erfinv."""
    return [sample(T((2, 3), low=-0.9, high=0.9)), sample(T((), low=-0.9, high=0.9)),
            sample(T((0, 3))), sample(T((4,), dtype="int64", low=0, high=1))]


def above_one() -> list:
    return [sample(T((2, 3), low=1.2, high=4.0)), sample(T((), low=1.2, high=4.0)),
            sample(T((4,), dtype="int64", low=1, high=5))]


def nonzero() -> list:
    return [sample(T((2, 3), away_from_zero=True)), sample(T((), away_from_zero=True)),
            sample(T((0, 3))), sample(T((4,), dtype="int64", low=1, high=5))]


def floats() -> list:
    """Floating tensors only (frac, logaddexp: PyTorch refuses integers)."""
    return [sample(T((2, 3), low=-4.0, high=4.0)), sample(T(())), sample(T((0, 3)))]


def gamma() -> list:
    """Positive and negative non-integer arguments of lgamma and digamma."""
    return [sample(T((2, 3), low=0.2, high=6.0)), sample(T((3,), low=-2.9, high=-2.1)),
            sample(T((), low=15.0, high=20.0)), sample(T((0, 2))),
            sample(T((4,), dtype="int64", low=1, high=6))]


def polygamma() -> list:
    return [sample(1, T((2, 3), low=0.2, high=4.0)), sample(2, T((3,), low=-1.9, high=-1.1)),
            sample(0, T((2,), low=0.5, high=3.0)), sample(3, T((), low=0.5, high=20.0))]


def mvlgamma() -> list:
    return [sample(T((2, 3), low=1.6, high=4.0), 3), sample(T((3,), low=0.2, high=3.0), p=1)]


def logit() -> list:
    return [sample(T((2, 3), low=0.05, high=0.95)), sample(T((), low=0.05, high=0.95)),
            sample(T((2, 3), low=0.05, high=0.95), eps=0.2, note="clamped")]


def xlogy() -> list:
    return [
        sample(T((2, 3)), T((2, 3), low=0.5, high=3.0)), sample(T(()), T((2, 1), low=0.2, high=2.0)),
        sample(T((2, 3)), T((3,), low=0.5, high=3.0)), sample(T((3,)), 2.5, note="number"),
        sample(T((2, 3), dtype="int64", low=0, high=3), T((3,), low=0.5, high=2.0))]


def copysign() -> list:
    return [sample(T((2, 3), away_from_zero=True), T((2, 3))),
            sample(T((2, 3), away_from_zero=True), T((3,))),
            sample(T((3,), away_from_zero=True), -1.5, note="number"),
            sample(T((3,), dtype="int64"), T((3,)))]


def lerp() -> list:
    return [sample(T((2, 3)), T((2, 3)), 0.3), sample(T((2, 3)), T((3,)), 0.75),
            sample(T((2, 3)), T((2, 3)), T((2, 3), low=0.0, high=1.0)),
            sample(T(()), T((2,)), T((2, 1), low=0.0, high=1.0))]


def addcmul() -> list:
    return [sample(T((2, 3)), T((2, 3)), T((2, 3))), sample(T((2, 3)), T((3,)), T((2, 1)), value=0.5),
            sample(T(()), T((2,)), T(()), value=-2),
            sample(T((3,), dtype="int64"), T((3,), dtype="int64"), T((3,), dtype="int64"))]


def addcdiv() -> list:
    return [sample(T((2, 3)), T((2, 3)), T((2, 3), away_from_zero=True)),
            sample(T((2, 3)), T((3,)), T((2, 1), away_from_zero=True), value=0.5),
            sample(T(()), T((2,)), T((), away_from_zero=True), value=-2)]


def clamp_min() -> list:
    return [sample(T((2, 3)), 0.2), sample(T((2, 3)), T((3,))),
            sample(T((4,), dtype="int64", low=-3, high=3), 0)]


def clamp_max() -> list:
    return [sample(T((2, 3)), -0.2), sample(T((2, 3)), T((2, 1))),
            sample(T((4,), dtype="int64", low=-3, high=3), 1)]


def nan_to_num() -> list:
    return [sample(T((2, 3))), sample(T((2, 3)), nan=1.5, posinf=10.0, neginf=-10.0),
            sample(T((3,), dtype="int64"))]


def ldexp() -> list:
    return [sample(T((2, 3)), T((2, 3), dtype="int64", low=-3, high=4)),
            sample(T((3,)), T((2, 3), dtype="int64", low=0, high=3))]


def heaviside() -> list:
    return [sample(T((2, 3)), T((2, 3))), sample(T((2, 3)), T((3,))),
            sample(T((4,), dtype="int64", low=-1, high=2), T((4,), dtype="int64"))]


def shifts() -> list:
    return [sample(T((2, 3), dtype="int64", low=-8, high=8), T((2, 3), dtype="int64", low=0, high=4)),
            sample(T((3,), dtype="int32", low=0, high=100), T((3,), dtype="int32", low=0, high=3)),
            sample(T((3,), dtype="int64", low=-8, high=8), 2)]


def bits_unary() -> list:
    return [sample(T((2, 3), dtype="int64", low=-8, high=8)), sample(T((2, 3), dtype="bool")),
            sample(T((), dtype="int32", low=0, high=5))]


def special_values() -> list:
    """Finite samples (infinities and NaN are in the hand-written tests)."""
    return [sample(T((2, 3))), sample(T(())), sample(T((4,), dtype="int64"))]


def isclose() -> list:
    return [sample(T((2, 3)), T((2, 3))), sample(T((2, 3)), T((3,)), rtol=0.5, atol=0.5),
            sample(T((3,), dtype="int64", low=0, high=3), T((3,), dtype="int64", low=0, high=3))]


def bits() -> list:
    """bitwise and/or/xor: bools (the logical ops) and integers."""
    return logical() + [
        sample(T((2, 3), dtype="int64", low=-8, high=8), T((3,), dtype="int64", low=0, high=8)),
        sample(T((3,), dtype="int32", low=0, high=8), 5)]


def integers() -> list:
    return [sample(T((2, 3), dtype="int64", low=-12, high=12), T((2, 3), dtype="int64", low=-12, high=12)),
            sample(T((2, 3), dtype="int64", low=0, high=30), T((3,), dtype="int64", low=1, high=10))]


def add_sub() -> list:
    return binary_arith() + [sample(T((2, 3)), T((3,)), alpha=2.5),
                             sample(T((3, 1)), T((1, 4)), alpha=-3)]


def igamma() -> list:
    """(a, x) of the incomplete gamma functions: a positive, not differentiated."""
    a = dict(low=0.5, high=5.0, requires_grad=False)
    return [sample(T((2, 3), **a), T((2, 3), low=0.1, high=8.0)),
            sample(T((3,), **a), T((2, 3), low=0.1, high=8.0)),
            sample(T((), **a), T((), low=2.0, high=12.0))]


def in_place() -> list:
    """An in-place op's samples: tensors that don't require grad (a leaf that
    does can't be changed in place)."""
    return [sample(T((2, 3), requires_grad=False)), sample(T((), requires_grad=False)),
            sample(T((4,), dtype="int64"))]


def any_dtype() -> list:
    return [sample(T((2, 3))), sample(T((3,), dtype="complex64")),
            sample(T((2,), dtype="int64")), sample(T((2,), dtype="bool"))]


def one_value() -> list:
    return [sample(T((), low=0.5, high=1.0)), sample(T((1, 1), low=-2.0, high=-1.0)),
            sample(T((1,), dtype="int64", low=0, high=1), note="0"),
            sample(T((1,), dtype="bool"))]


def type_as() -> list:
    return [sample(T((2, 3)), T((1,), dtype="float64")), sample(T((2,)), T((2,))),
            sample(T((3,)), T((2,), dtype="int64"))]


def same_size() -> list:
    return [sample(T((2, 3)), T((2, 3))), sample(T((2, 3)), T((3, 2))),
            sample(T(()), T((1,)))]
