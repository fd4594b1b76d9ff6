"""The ignite optimisers (optim_ignite_*): libtorch's C++ optimisers' updates
(against torch.optim, whose rules they share up to rounding), their state
layout and state dicts."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import rtorch_py as rt

SETTINGS = [
    ("sgd", "SGD", dict(lr=0.05)),
    ("sgd", "SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("sgd", "SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("adam", "Adam", dict(lr=0.05)),
    ("adam", "Adam", dict(lr=0.05, betas=(0.8, 0.95), weight_decay=0.1, amsgrad=True)),
    ("adamw", "AdamW", dict(lr=0.05)),
    ("adamw", "AdamW", dict(lr=0.05, weight_decay=0.2, amsgrad=True)),
    ("rmsprop", "RMSprop", dict(lr=0.01)),
    ("rmsprop", "RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1)),
    ("adagrad", "Adagrad", dict(lr=0.1)),
    ("adagrad", "Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1,
                                initial_accumulator_value=0.1)),
]


@pytest.mark.parametrize("name, torch_name, kw", SETTINGS,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(SETTINGS)])
def test_steps_match_torch_optim(name, torch_name, kw):
    w0 = np.random.default_rng(1).standard_normal((3, 2))
    mine = rt.torch_tensor(w0, requires_grad=True)
    ref = torch.tensor(w0, requires_grad=True)
    opt = getattr(rt, f"optim_ignite_{name}")([mine], **kw)
    ropt = getattr(torch.optim, torch_name)([ref], **kw)
    for _ in range(6):
        opt.zero_grad()
        ropt.zero_grad()
        (mine ** 3 - mine).sum().backward()
        (ref ** 3 - ref).sum().backward()
        opt.step()
        ropt.step()
    np.testing.assert_allclose(mine.data, ref.detach().numpy(), rtol=1e-9, atol=1e-12)


STATE_NAMES = {"sgd": ["momentum_buffer"], "adagrad": ["sum", "step"],
               "adam": ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"],
               "adamw": ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"],
               "rmsprop": ["grad_avg", "square_avg", "momentum_buffer", "step"]}


@pytest.mark.parametrize("name", sorted(STATE_NAMES))
def test_state_dict_layout_and_round_trip(name):
    w = rt.torch_randn(2, 2, requires_grad=True)
    b = rt.torch_randn(2, requires_grad=True)
    kw = {"lr": 0.1, "momentum": 0.9} if name == "sgd" else {}
    opt = getattr(rt, f"optim_ignite_{name}")([w, b], **kw)
    for _ in range(2):
        opt.zero_grad()
        (w.sum() + (b * b).sum()).backward()
        opt.step()
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 1]
    assert list(sd["state"][0]) == STATE_NAMES[name]
    assert sd["param_groups"][0]["params"] == [0, 1]
    if "step" in sd["state"][0]:
        step = sd["state"][0]["step"]
        assert step.dtype == rt.torch_long() and step.shape == (1,) and step.item() == 2
    # a second optimiser loaded with it steps exactly as the first
    w2 = rt.torch_tensor(w.data.copy(), requires_grad=True)
    b2 = rt.torch_tensor(b.data.copy(), requires_grad=True)
    opt2 = getattr(rt, f"optim_ignite_{name}")([w2, b2], **kw)
    opt2.load_state_dict(sd)
    for o, x, y in ((opt, w, b), (opt2, w2, b2)):
        o.zero_grad()
        (x.sum() + (y * y).sum()).backward()
        o.step()
    np.testing.assert_array_equal(w.data, w2.data)
    np.testing.assert_array_equal(b.data, b2.data)


def test_undefined_state_and_zero_grad_to_none():
    w = rt.torch_randn(2, requires_grad=True)
    opt = rt.optim_ignite_adam([w], lr=0.1)
    w.sum().backward()
    opt.step()
    assert opt.state_dict()["state"][0]["max_exp_avg_sq"] is None  # (no amsgrad)
    opt.zero_grad()
    assert w.grad is None  # (libtorch's zero_grad drops the gradients)


def test_adagrad_has_state_before_any_step():
    w = rt.torch_randn(2, requires_grad=True)
    opt = rt.optim_ignite_adagrad([w], initial_accumulator_value=0.5)
    st = opt.state_dict()["state"][0]
    np.testing.assert_array_equal(st["sum"].data, [0.5, 0.5])
    assert st["step"].item() == 0


def test_param_groups_and_settings():
    a, b = rt.torch_randn(2, requires_grad=True), rt.torch_randn(2, requires_grad=True)
    opt = rt.optim_ignite_sgd([a], lr=0.1)
    opt.add_param_group({"params": [b], "lr": 19})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 19]
    with pytest.raises(ValueError, match="required optimization parameter lr"):
        rt.optim_ignite_sgd([a])
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        rt.optim_ignite_adam([a], betas=(0.9, 1.5))
