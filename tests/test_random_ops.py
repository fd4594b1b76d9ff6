"""Every random function of the API draws PyTorch's (libtorch's) bits for the
same seed and calls, from Python and from R (generated from
tests/random_op_cases.py: each case for its dtypes, seeds and sizes, the
generator's state bytes compared after each call), and the generator API
around them (seeds, states, scoped seeds, generator objects)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import rtorch_py as rt
from helpers import ROOT, needs_r, run_r
from rtorch_py.nn.init import pnorm
from random_op_cases import as_list, compare, params, torch_arrays

PARAMS = params()
IDS = [p[-1] for p in PARAMS]


def same_state() -> bool:
    return np.array_equal(rt.torch_get_rng_state().data, torch.get_rng_state().numpy())


@pytest.mark.parametrize("case,dtype,seed,shape,name", PARAMS, ids=IDS)
def test_python_draws_pytorch_bits(case, dtype, seed, shape, name) -> None:
    torch.manual_seed(seed)
    theirs = torch_arrays(case.theirs(shape, dtype))
    rt.torch_manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = [t.detach().data for t in as_list(case.ours(shape, dtype))]
    problem = compare(ours, theirs, case.exact)
    assert not problem, problem
    assert same_state(), "the generators' states differ after the same calls"


@pytest.fixture(scope="module")
def r_results() -> dict:
    """Every case called from R, in one subprocess with the shim in its embedded R."""
    res = subprocess.run([sys.executable, str(ROOT / "tests" / "r_random_calls.py")],
                         capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert res.returncode == 0, res.stderr[-4000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


R_PARAMS = [p for p in PARAMS if p[0].r is not None]


@needs_r
@pytest.mark.parametrize("case,dtype,seed,shape,name", R_PARAMS, ids=[p[-1] for p in R_PARAMS])
def test_r_draws_pytorch_bits(case, dtype, seed, shape, name, r_results) -> None:
    problem = r_results[name]
    assert not problem, problem


# ----------------------------------------------------------------------------
# the generator API


def test_seeds_and_states_as_pytorch() -> None:
    rt.torch_manual_seed(42)
    torch.manual_seed(42)
    assert rt.torch_initial_seed() == torch.initial_seed() == 42
    rt.torch_randn(7)
    torch.randn(7)
    saved, saved_torch = rt.torch_get_rng_state(), torch.get_rng_state()
    assert saved.dtype == rt.torch_uint8() and np.array_equal(saved.data, saved_torch.numpy())
    first = rt.torch_rand(20).data
    rt.torch_set_rng_state(saved)
    assert np.array_equal(rt.torch_rand(20).data, first)
    torch.set_rng_state(saved_torch)
    assert np.array_equal(torch.rand(20).numpy(), first)
    # a state PyTorch saved restores here
    torch.manual_seed(3)
    torch.randn(3)
    rt.torch_set_rng_state(rt.torch_tensor(torch.get_rng_state().numpy()))
    assert np.array_equal(rt.torch_randn(5).data, torch.randn(5).numpy())
    with pytest.raises(TypeError, match="uint8"):
        rt.torch_set_rng_state(rt.torch_zeros(5056))


def test_torch_seed_reseeds_from_the_os() -> None:
    seed = rt.torch_seed()
    assert rt.torch_initial_seed() == seed
    torch.manual_seed(seed)
    assert np.array_equal(rt.torch_rand(4).data, torch.rand(4).numpy())
    assert rt.torch_seed() != seed


def test_an_unseeded_process_starts_from_a_fresh_seed() -> None:
    code = "import rtorch_py as rt; print(rt.torch_initial_seed(), rt.torch_rand(1).item())"
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=ROOT, timeout=120).stdout.split() for _ in range(2)]
    assert runs[0] != runs[1]
    torch.manual_seed(int(runs[0][0]))   # the seed it reports is the one it drew from
    assert float(runs[0][1]) == torch.rand(1).item()


def test_generator_objects_draw_their_own_streams() -> None:
    g = rt.torch_generator()
    assert g.initial_seed() == g.current_seed() == torch.Generator().initial_seed()
    g.set_current_seed(11)
    assert g.current_seed() == 11
    tg = torch.Generator().manual_seed(11)
    rt.torch_manual_seed(1)
    torch.manual_seed(1)
    assert np.array_equal(rt.torch_randn(20, generator=g).data,
                          torch.randn(20, generator=tg).numpy())
    x, tx = rt.torch_empty(6), torch.empty(6)
    assert np.array_equal(x.uniform_(generator=g).data, tx.uniform_(generator=tg).numpy())
    assert np.array_equal(rt.torch_randperm(9, generator=g).data,
                          torch.randperm(9, generator=tg).numpy())
    assert same_state(), "a generator object's draws moved the default stream"
    with pytest.raises(TypeError, match="torch_generator"):
        rt.torch_randn(2, generator=3)


def test_scoped_seeds_restore_the_state() -> None:
    rt.torch_manual_seed(1)
    before = rt.torch_get_rng_state().data
    inside = rt.with_torch_manual_seed(lambda: rt.torch_randn(3).data, seed=5)
    torch.manual_seed(5)
    assert np.array_equal(inside, torch.randn(3).numpy())
    assert np.array_equal(rt.torch_get_rng_state().data, before)
    with rt.with_torch_manual_seed(seed=5):
        again = rt.torch_randn(3).data
    assert np.array_equal(again, inside)
    scope = rt.local_torch_manual_seed(5)
    assert np.array_equal(rt.torch_randn(3).data, inside)
    scope.restore()
    assert np.array_equal(rt.torch_get_rng_state().data, before)


def test_meta_tensors_draw_nothing() -> None:
    rt.torch_manual_seed(2)
    torch.manual_seed(2)
    rt.torch_randn(30, device="meta")
    rt.torch_empty(4, device="meta").uniform_()
    assert same_state()


def test_random_functions_refuse_what_libtorch_refuses() -> None:
    with pytest.raises(RuntimeError, match="floating point"):
        rt.torch_rand(3, dtype=rt.torch_int64())
    with pytest.raises(RuntimeError, match="floating point"):
        rt.torch_empty(3, dtype=rt.torch_long()).normal_()
    with pytest.raises(RuntimeError, match=r"p to be in \[0, 1\]"):
        rt.torch_empty(3).bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        rt.torch_empty(3).random_(5, 5)


def test_trunc_normal_finishes_for_any_bounds() -> None:
    # the bounds are 10 and 12 standard deviations out: redrawing would never end
    w = rt.nn_init_trunc_normal_(rt.torch_empty(50), a=10, b=12)
    assert np.all((w.data >= 10) & (w.data <= 12))


def test_pnorm_is_rs(tmp_path) -> None:
    """trunc_normal_'s bounds: R's pnorm(), bit for bit."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        pytest.skip("Rscript is not available to compute pnorm()")
    xs = np.concatenate([np.linspace(-40, 40, 2001), np.linspace(-1, 1, 1999),
                         np.random.default_rng(0).standard_normal(2000) * 3,
                         [0.0, 2.0 ** -60, -0.67448975, 0.67448975, 5.65685424949238,
                          -37.5193, 8.2924, np.inf, -np.inf]])
    (tmp_path / "x").write_text("\n".join(float(x).hex() for x in xs))
    code = (f"x <- as.numeric(sub('inf', 'Inf', readLines('{tmp_path / 'x'}'))); "
            "cat(sprintf('%a', pnorm(x)), sep = '\\n')")
    res = subprocess.run([rscript, "-e", code], capture_output=True, text=True, timeout=120)
    theirs = np.array([float.fromhex(v) for v in res.stdout.split()])
    ours = np.array([pnorm(float(x)) for x in xs])
    assert theirs.size == xs.size, res.stderr
    assert np.array_equal(ours, theirs), xs[ours != theirs][:5]


# ----------------------------------------------------------------------------
# a model trained from one seed, and a seeded script's printout

# Two steps of SGD on nn_sequential(nn_dropout(0.5), nn_linear(10, 2)) with a
# shuffled dataloader: what the seed decides (the linear layer's weights, the
# order of the rows, the dropout masks) must be PyTorch's. The data are chosen
# so that the arithmetic around the draws is exact in both libraries (one-hot
# rows: each output is one weight times 0 or 2 plus the bias; batches of 4
# rows of 2 outputs: a mean's scale of 2/8; a learning rate of 1/2), so the
# order of a BLAS kernel's sums or a fused multiply-add cannot hide a
# difference in the draws.
TRAIN_X = np.eye(10, dtype=np.float32)
TRAIN_Y = ((np.arange(20) % 7 - 3.0) / 3).reshape(10, 2).astype(np.float32)


def _torch_trained(seed: int) -> list:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Dropout(0.5), torch.nn.Linear(10, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    order = torch.randperm(10)     # R torch's RandomSampler: torch_randperm(n) (+ 1)
    for rows in order.split(4)[:2]:
        x, y = torch.from_numpy(TRAIN_X)[rows], torch.from_numpy(TRAIN_Y)[rows]
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return [p.detach().numpy() for p in model.parameters()]


@pytest.mark.parametrize("seed", [0, 1, 42])
def test_two_training_steps_give_pytorch_weights(seed) -> None:
    rt.torch_manual_seed(seed)
    model = rt.nn_sequential(rt.nn_dropout(0.5), rt.nn_linear(10, 2))
    opt = rt.optim_sgd(model.parameters, lr=0.5)
    loader = rt.dataloader(rt.tensor_dataset(rt.torch_tensor(TRAIN_X), rt.torch_tensor(TRAIN_Y)),
                           batch_size=4, shuffle=True)
    for step, (x, y) in enumerate(loader):
        if step == 2:
            break
        opt.zero_grad()
        rt.nnf_mse_loss(model(x), y).backward()
        opt.step()
    ours = [p.data for p in model.parameters.values()]
    theirs = _torch_trained(seed)
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs))
    assert not np.array_equal(theirs[0], _torch_trained(seed + 1)[0])


R_TRAINING = """
library(torch)
torch_manual_seed({seed})
y <- torch_tensor(matrix(((0:19 %% 7) - 3) / 3, ncol = 2, byrow = TRUE))
model <- nn_sequential(nn_dropout(0.5), nn_linear(10, 2))
opt <- optim_sgd(model$parameters, lr = 0.5)
dl <- dataloader(tensor_dataset(torch_eye(10), y), batch_size = 4, shuffle = TRUE)
it <- dataloader_make_iter(dl)
for (step in 1:2) {{
  batch <- dataloader_next(it)
  opt$zero_grad()
  nnf_mse_loss(model(batch[[1]]), batch[[2]])$backward()
  opt$step()
}}
for (p in model$parameters) cat(sprintf("%a", as.numeric(as_array(p$detach()))), "\\n")
"""


@needs_r
@pytest.mark.parametrize("seed", [0, 42])
def test_two_training_steps_in_r_give_pytorch_weights(seed) -> None:
    res = run_r("-e", R_TRAINING.format(seed=seed))
    assert res.returncode == 0, res.stderr
    got = [np.array([float.fromhex(v) for v in line.split()]) for line in
           res.stdout.strip().splitlines()]
    expected = [p.reshape(-1, order="F").astype(np.float64) for p in _torch_trained(seed)]
    assert len(got) == len(expected)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected))


SEEDED_SCRIPT = """
library(torch)
torch_manual_seed(42)
nn_linear(3, 2)$weight
torch_randn(5)
torch_randint(0, 10, 20)
torch_randperm(7)
torch_multinomial(torch_tensor(c(0.2, 0.5, 0.3)), 6, replacement = TRUE)
torch_multinomial(torch_tensor(c(0.1, 0.4, 0.2, 0.3)), 3)
"""


@needs_r
def test_seeded_r_script_prints_what_pytorch_computes() -> None:
    """R prints, in R torch's format, the values PyTorch draws after the same
    seed: the expected text is our printer's rendering of PyTorch's arrays
    (randint in R torch's default dtype, multinomial's categories 1-based)."""
    res = run_r("-e", SEEDED_SCRIPT)
    assert res.returncode == 0, res.stderr
    torch.manual_seed(42)
    values = [
        rt.torch_tensor(torch.nn.Linear(3, 2).weight.detach().numpy(), requires_grad=True),
        rt.torch_tensor(torch.randn(5).numpy()),
        rt.torch_tensor(torch.randint(0, 10, (20,), dtype=torch.float32).numpy()),
        rt.torch_tensor(torch.randperm(7).numpy()),
        rt.torch_tensor(torch.multinomial(torch.tensor([0.2, 0.5, 0.3]), 6, True).numpy() + 1),
        rt.torch_tensor(torch.multinomial(torch.tensor([0.1, 0.4, 0.2, 0.3]), 3).numpy() + 1),
    ]
    assert res.stdout == "".join(f"{v}\n" for v in values)
