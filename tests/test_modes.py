"""The dispatch stack (rtorch_py/modes.py): active modes in one fixed order, each
op call walking the modes that act on it, then its kernel."""
from __future__ import annotations

import numpy as np
import pytest

import rtorch_py as rt
from rtorch_py import modes


class Seen(modes.Mode):
    """A mode that notes each call it sees, with its operands' dtypes."""

    def __init__(self, order: int) -> None:
        self.order, self.calls = order, []

    def call(self, name, fn, args, kwargs):
        self.calls.append((name, [a.dtype.name for a in args if isinstance(a, rt.Tensor)]))
        return fn(*args, **kwargs)


def test_modes_take_their_place_whatever_the_push_order():
    before = modes.STACK[0]
    inner, outer = Seen(modes.NAMES + 1), Seen(modes.COMPLEX32 - 1)
    modes.push_mode(inner)
    modes.push_mode(outer)
    try:
        stack = modes.STACK[0]
        assert stack.index(outer) == 0 and stack.index(inner) == len(stack) - 1
        assert [getattr(m, "order", modes.TRACE) for m in stack] == \
            sorted(getattr(m, "order", modes.TRACE) for m in stack)
    finally:
        modes.pop_mode(outer)
        modes.pop_mode(inner)
    assert modes.STACK[0] == before


def test_of_two_modes_of_one_place_the_later_is_outer():
    first, second = Seen(modes.TRACE), Seen(modes.TRACE)
    modes.push_mode(first)
    modes.push_mode(second)
    try:
        stack = modes.STACK[0]
        assert stack.index(second) < stack.index(first)
    finally:
        modes.pop_mode(first)
        modes.pop_mode(second)


def test_a_mode_outside_autocast_sees_the_operands_before_the_cast():
    x = rt.torch_ones(2, 2)
    outer, inner = Seen(modes.TRACE), Seen(modes.AUTOCAST + 1)
    modes.push_mode(outer)
    modes.push_mode(inner)
    try:
        with rt.with_autocast("cpu"):
            assert modes.active(modes.AUTOCAST)
            out = rt.torch_mm(x, x)
    finally:
        modes.pop_mode(outer)
        modes.pop_mode(inner)
    assert out.dtype.name == "bfloat16"
    assert ("mm", ["float32", "float32"]) in outer.calls
    assert ("mm", ["bfloat16", "bfloat16"]) in inner.calls


def test_autocast_is_a_mode_only_while_on():
    assert not modes.active(modes.AUTOCAST)
    with rt.with_autocast("cpu"):
        assert modes.active(modes.AUTOCAST)
        with rt.with_autocast("cpu", enabled=False):
            assert not modes.active(modes.AUTOCAST)
        assert modes.active(modes.AUTOCAST)
    assert not modes.active(modes.AUTOCAST)


def test_an_op_acts_only_through_the_modes_that_apply_to_it():
    """Autocast's mode applies to ops with a policy: an op without one never reaches it."""
    x = rt.torch_ones(2, 2)
    inner = Seen(modes.AUTOCAST + 1)
    modes.push_mode(inner)
    try:
        with rt.with_autocast("cpu"):
            assert rt.torch_exp(x).dtype.name == "float32"  # (no policy: not cast)
    finally:
        modes.pop_mode(inner)
    assert ("exp", ["float32"]) in inner.calls


def test_the_walk_follows_the_stack_as_it_changes():
    x = rt.torch_ones(2)
    seen = Seen(modes.TRACE)
    rt.torch_exp(x)
    modes.push_mode(seen)
    try:
        rt.torch_exp(x)
    finally:
        modes.pop_mode(seen)
    rt.torch_exp(x)
    assert [c for c, _ in seen.calls] == ["exp"]


def _one(self, dim=None, keepdim=False):
    return self


def _two(self, dim0, dim1):
    return self


def _more(self, *dims):
    return self


@pytest.mark.parametrize("kernel, dims, args, kwargs", [
    (_one, ("dim",), (), {"dim": "zz"}), (_one, ("dim",), ("zz",), {}),
    (_one, ("dim",), (), {"dim": [0, "zz"]}), (_two, ("dim0", "dim1"), (0, "zz"), {}),
    (_more, ("dims",), (0, "zz"), {})])
def test_a_dim_by_name_is_seen_before_the_kernel_runs(kernel, dims, args, kwargs, monkeypatch):
    """On the plain path an op with dims looks at them before calling its kernel: the
    kernel is never handed a name (and never run twice)."""
    from rtorch_py.ops import dispatch
    handed = []

    def counted(*a, **k):
        handed.append((a, k))
        return kernel(*a, **k)
    counted.__signature__ = __import__("inspect").signature(kernel)
    d = dispatch._Dispatcher("test_dims_op", counted, {"dims": dims}, {})
    monkeypatch.setitem(dispatch._DISPATCHERS, "test_dims_op", d)
    public = dispatch.public_function(d)
    x = rt.torch_tensor(np.ones((2, 3)))
    assert public(x, *[0 for _ in args], **{k: 0 for k in kwargs}) is x and len(handed) == 1
    with pytest.raises(RuntimeError, match="'zz': this tensor has no dim names"):
        public(x, *args, **kwargs)
    assert len(handed) == 1
