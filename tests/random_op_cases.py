"""The table behind tests/test_random_ops.py and tests/r_random_calls.py: every
random function of the API (creation, in-place fills, torch_normal's overloads,
bernoulli, poisson, gamma, multinomial, the dropout family, rrelu, nn_init_*, the
layers' default initialisation, the dataloader's shuffle), each written three
ways: as PyTorch calls it (the oracle, after torch.manual_seed), in Python
(rtorch_py, after torch_manual_seed) and in R (R code, through the bridge).

Each form returns the values drawn (a tensor, or a list of tensors compared in
turn); R's 1-based results are made 0-based by `r_shift`. A row added here is
tested for each of its dtypes, seeds and sizes, from Python and from R.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

import rtorch_py as rt
from random_cases import (BFLOAT16, C64, C128, F16, F32, F64, TORCH_DTYPE, from_numpy, last,
                          probabilities, to_numpy)

I64, I32, I16, I8, U8, BOOL = (np.dtype(t) for t in (np.int64, np.int32, np.int16, np.int8,
                                                     np.uint8, np.bool_))
R_DTYPE = {F32: "torch_float32()", F64: "torch_float64()", F16: "torch_float16()",
           BFLOAT16: "torch_bfloat16()", C64: "torch_cfloat()", C128: "torch_cdouble()",
           I64: "torch_int64()", I32: "torch_int32()", I16: "torch_int16()",
           I8: "torch_int8()", U8: "torch_uint8()", BOOL: "torch_bool()"}

SEEDS = (0, 7)
SIZES = (0, 1, 15, 16, 17, 1001, (4, 17), (2, 3, 8))


def dims(shape: Any) -> tuple:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def r_size(shape: Any) -> str:
    return f"c({', '.join(str(d) for d in dims(shape))})"


def r_values(arr: np.ndarray) -> str:
    """An R tensor with arr's values, dtype and shape (R code)."""
    values = ", ".join(repr(float(v)) for v in np.asarray(arr, np.float64).reshape(-1))
    return (f"torch_tensor(c({values}), dtype = {R_DTYPE[arr.dtype]})"
            f"$reshape({r_size(arr.shape)})")


def rt_values(arr: np.ndarray) -> rt.Tensor:
    return rt.torch_tensor(arr.copy())


def inputs(shape: tuple) -> np.ndarray:
    """Fixed float32 inputs with negative and positive values (for the layers
    that take one: dropout, rrelu, gumbel_softmax)."""
    n = int(np.prod(shape))
    return (np.arange(n) % 13 - 6.0).reshape(shape).astype(np.float32) / 4


@dataclass(frozen=True)
class Case:
    name: str
    dtypes: tuple
    theirs: Callable    # (shape, dtype) -> torch tensor(s), after torch.manual_seed
    ours: Callable      # (shape, dtype) -> rtorch_py tensor(s), after rt.torch_manual_seed
    r: Callable | None  # (shape, dtype) -> R code, after torch_manual_seed in R
    shapes: str = "any"     # "any", "1d" (lengths), "2d", "rows" (1-d or 2-d) or "once"
    exact: bool = True      # bitwise; False: close (a deterministic step is not libtorch's)
    r_shift: int = 0        # what R's result has added (1-based categories, positions)


def _dt(d: np.dtype) -> torch.dtype:
    return TORCH_DTYPE[d]


def _inplace(name: str, dtypes: tuple, method: str, args: tuple, r_args: str) -> Case:
    """x$method(args) on a new tensor of the shape and dtype."""
    return Case(
        name, dtypes,
        lambda s, d: getattr(torch.empty(dims(s), dtype=_dt(d)), method)(*args),
        lambda s, d: getattr(rt.torch_empty(*dims(s), dtype=d), method)(*args),
        lambda s, d: f"torch_empty({r_size(s)}, dtype = {R_DTYPE[d]})${method}({r_args})")


def _strided(name: str, method: str, args: tuple, r_args: str) -> Case:
    """x$t()$method(args) on a new 2-d tensor: the fill walks the transposed
    view in memory order (TensorIterator's); the whole base is compared."""
    def theirs(s, d):
        base = torch.zeros(dims(s), dtype=_dt(d))
        getattr(base.t(), method)(*args)
        return base

    def ours(s, d):
        base = rt.torch_zeros(*dims(s), dtype=d)
        getattr(base.t(), method)(*args)
        return base
    return Case(name, (F32, F64), theirs, ours,
                lambda s, d: f"{{b <- torch_zeros({r_size(s)}, dtype = {R_DTYPE[d]}); "
                             f"b$t()${method}({r_args}); b}}", shapes="2d")


def _like(name: str, torch_fn: Callable, rt_fn: Callable, r_fn: str, args: tuple,
          r_args: str, dtypes: tuple) -> Case:
    """torch_*_like(x) of a transposed x: the new tensor keeps x's memory
    layout (libtorch's preserve format), so the draws fill it in memory order."""
    return Case(
        name, dtypes,
        lambda s, d: torch_fn(torch.zeros(dims(s)[::-1], dtype=_dt(d)).t(), *args),
        lambda s, d: rt_fn(rt.torch_zeros(*dims(s)[::-1], dtype=d).t(), *args),
        lambda s, d: f"{r_fn}(torch_zeros({r_size(dims(s)[::-1])}, dtype = {R_DTYPE[d]})$t()"
                     f"{r_args})", shapes="2d")


def _probs(s: Any, d: np.dtype) -> np.ndarray:
    return probabilities(dims(s), d)


def _concat_parameters(module: Any) -> Any:
    """A module's parameters, flattened and concatenated in their order (a
    tensor: those already)."""
    if isinstance(module, torch.Tensor):
        return module
    if isinstance(module, torch.nn.Module):
        return torch.cat([p.detach().reshape(-1) for p in module.parameters()])
    return rt.torch_cat([p.detach().reshape(-1) for p in module.parameters.values()])


def _layer(name: str, theirs: Callable, ours: Callable, r_new: str,
           r_names: tuple = ()) -> Case:
    """A layer's parameters as its constructor initialises them. R lists a
    child's parameters before the module's own: `r_names` gives PyTorch's order
    then."""
    r_list = "m$parameters" if not r_names else \
        f"m$parameters[c({', '.join(repr(n) for n in r_names)})]"
    return Case(name, (F32,), lambda s, d: _concat_parameters(theirs()),
                lambda s, d: _concat_parameters(ours()),
                lambda s, d: f"{{m <- {r_new}; torch_cat(unname(lapply({r_list}, "
                             "function(p) p$detach()$reshape(-1))))}", shapes="once")


def _torch_bilinear() -> torch.Tensor:
    """R torch's nn_bilinear(3, 4, 2): weight and bias U(-1/sqrt(in2), 1/sqrt(in2))
    (PyTorch's bound is 1/sqrt(in1))."""
    bound = 1 / math.sqrt(4)
    weight = torch.empty(2, 3, 4).uniform_(-bound, bound)
    return torch.cat([weight.reshape(-1), torch.empty(2).uniform_(-bound, bound)])


def _init(name: str, torch_init: Callable, rt_init: Callable, r_call: str,
          shape: tuple = (5, 3), exact: bool = True) -> Case:
    """nn_init_*(w) on a new float32 tensor (the shape's fans decide bounds)."""
    return Case(name, (F32,), lambda s, d: torch_init(torch.empty(shape)),
                lambda s, d: rt_init(rt.torch_empty(*shape)),
                lambda s, d: f"{{w <- torch_empty({r_size(shape)}); {r_call}; w}}",
                shapes="once", exact=exact)


def _torch_trunc_normal(w: torch.Tensor, mean: float, std: float, a: float,
                        b: float) -> torch.Tensor:
    """R torch's trunc_normal_ steps in PyTorch (the bounds from the normal
    distribution function, as R's pnorm computes them to double precision)."""
    def cdf(x: float) -> float:
        return 0.5 * math.erfc(-x / math.sqrt(2))
    low, high = cdf((a - mean) / std), cdf((b - mean) / std)
    w.uniform_(2 * low - 1, 2 * high - 1)
    return w.erfinv_().mul_(std * math.sqrt(2)).add_(mean).clamp_(min=a, max=b)


def _r_loader(r_sampler: str) -> str:
    """R code: the concatenated batches of a dataloader over 0..9."""
    return ("{dl <- dataloader(tensor_dataset(torch_arange(0, 9, dtype = torch_long())), batch_size = 4, "
            f"{r_sampler}); it <- dataloader_make_iter(dl); out <- list(); "
            "while (!is.null(b <- dataloader_next(it))) out[[length(out) + 1]] <- b[[1]]; "
            "torch_cat(out)}")


def _rt_loader(**kw: Any) -> rt.Tensor:
    loader = rt.dataloader(rt.tensor_dataset(rt.torch_arange(0, 10)), batch_size=4, **kw)
    return rt.torch_cat([batch[0] for batch in loader])


CASES = [
    # -- creation ---------------------------------------------------------------
    Case("torch_rand", (F32, F64, C64, C128),
         lambda s, d: torch.rand(dims(s), dtype=_dt(d)),
         lambda s, d: rt.torch_rand(*dims(s), dtype=d),
         lambda s, d: f"torch_rand({r_size(s)}, dtype = {R_DTYPE[d]})"),
    Case("torch_randn", (F32, F64, C64, C128),
         lambda s, d: torch.randn(dims(s), dtype=_dt(d)),
         lambda s, d: rt.torch_randn(*dims(s), dtype=d),
         lambda s, d: f"torch_randn({r_size(s)}, dtype = {R_DTYPE[d]})"),
    Case("torch_randint(-3,17)", (I64, I32, I16, I8, F32, F64),
         lambda s, d: torch.randint(-3, 17, dims(s), dtype=_dt(d)),
         lambda s, d: rt.torch_randint(-3, 17, size=dims(s), dtype=d),
         lambda s, d: f"torch_randint(-3, 17, {r_size(s)}, dtype = {R_DTYPE[d]})"),
    Case("torch_randint(0,2^40)", (I64, F64),
         lambda s, d: torch.randint(0, 2**40, dims(s), dtype=_dt(d)),
         lambda s, d: rt.torch_randint(0, 2**40, size=dims(s), dtype=d),
         lambda s, d: f"torch_randint(0, 2^40, {r_size(s)}, dtype = {R_DTYPE[d]})"),
    Case("torch_randperm", (I64, I32, F32, F64),
         lambda n, d: torch.randperm(n, dtype=_dt(d)),
         lambda n, d: rt.torch_randperm(n, dtype=d),
         lambda n, d: f"torch_randperm({n}, dtype = {R_DTYPE[d]})", shapes="1d"),
    _like("torch_rand_like", torch.rand_like, rt.torch_rand_like, "torch_rand_like", (), "",
          (F32, F64)),
    _like("torch_randn_like", torch.randn_like, rt.torch_randn_like, "torch_randn_like", (),
          "", (F32, F64)),
    _like("torch_randint_like", torch.randint_like, rt.torch_randint_like,
          "torch_randint_like", (-3, 17), ", -3, 17", (F32, I64)),
    Case("torch_normal(1.5,0.5,size)", (F32, F64),
         lambda s, d: torch.normal(1.5, 0.5, dims(s), dtype=_dt(d)),
         lambda s, d: rt.torch_normal(1.5, 0.5, size=dims(s), dtype=d),
         lambda s, d: f"torch_normal(1.5, 0.5, size = {r_size(s)}, dtype = {R_DTYPE[d]})"),
    Case("torch_normal(tensor,0.5)", (F32, F64),
         lambda s, d: torch.normal(from_numpy(_probs(s, d)), 0.5),
         lambda s, d: rt.torch_normal(rt_values(_probs(s, d)), 0.5),
         lambda s, d: f"torch_normal({r_values(_probs(s, d))}, 0.5)"),
    Case("torch_normal(1.5,tensor)", (F32, F64),
         lambda s, d: torch.normal(1.5, from_numpy(_probs(s, d))),
         lambda s, d: rt.torch_normal(1.5, rt_values(_probs(s, d))),
         lambda s, d: f"torch_normal(1.5, {r_values(_probs(s, d))})"),
    Case("torch_normal(tensor,tensor)", (F32, F64),
         lambda s, d: torch.normal(from_numpy(-_probs(s, d)), from_numpy(_probs(s, d))),
         lambda s, d: rt.torch_normal(rt_values(-_probs(s, d)), rt_values(_probs(s, d))),
         lambda s, d: f"torch_normal({r_values(-_probs(s, d))}, {r_values(_probs(s, d))})"),
    Case("torch_bernoulli(p)", (F32, F64, F16),
         lambda s, d: torch.bernoulli(from_numpy(_probs(s, d))),
         lambda s, d: rt.torch_bernoulli(rt_values(_probs(s, d))),
         lambda s, d: f"torch_bernoulli({r_values(_probs(s, d))})"),
    Case("torch_bernoulli(x,0.3)", (F32, F64),
         lambda s, d: torch.bernoulli(from_numpy(_probs(s, d)), 0.3),
         lambda s, d: rt.torch_bernoulli(rt_values(_probs(s, d)), 0.3),
         lambda s, d: f"torch_bernoulli({r_values(_probs(s, d))}, 0.3)"),
    Case("x$bernoulli()", (F32, F64),
         lambda s, d: from_numpy(_probs(s, d)).bernoulli(),
         lambda s, d: rt_values(_probs(s, d)).bernoulli(),
         lambda s, d: f"{r_values(_probs(s, d))}$bernoulli()"),
    Case("torch_poisson", (F32, F64),
         lambda s, d: torch.poisson(from_numpy(30 * _probs(s, d))),
         lambda s, d: rt.torch_poisson(rt_values(30 * _probs(s, d))),
         lambda s, d: f"torch_poisson({r_values(30 * _probs(s, d))})"),
    Case("_standard_gamma", (F32, F64),   # (concentrations below 1 take the boost)
         lambda s, d: torch._standard_gamma(from_numpy(3 * _probs(s, d))),
         lambda s, d: rt.distributions._standard_gamma(rt_values(3 * _probs(s, d))),
         None),
    Case("distr_gamma$sample", (F32, F64),
         lambda s, d: torch.distributions.Gamma(from_numpy(0.1 + 3 * _probs((3, 5), d)),
                                                from_numpy(1 + _probs((3, 5), d))).sample(),
         lambda s, d: rt.distr_gamma(rt_values(0.1 + 3 * _probs((3, 5), d)),
                                     rt_values(1 + _probs((3, 5), d))).sample(),
         lambda s, d: f"distr_gamma({r_values(0.1 + 3 * _probs((3, 5), d))}, "
                      f"{r_values(1 + _probs((3, 5), d))})$sample()", shapes="once"),
    Case("torch_multinomial(replacement)", (F32, F64),
         lambda s, d: torch.multinomial(from_numpy(1 + _probs((2, 9), d)), last(s), True),
         lambda s, d: rt.torch_multinomial(rt_values(1 + _probs((2, 9), d)), last(s), True),
         lambda s, d: f"torch_multinomial({r_values(1 + _probs((2, 9), d))}, {last(s)}, "
                      "replacement = TRUE)", shapes="rows", r_shift=1),
    Case("torch_multinomial", (F32, F64),
         lambda s, d: torch.multinomial(from_numpy(1 + _probs((3, 40), d)), min(last(s), 40)),
         lambda s, d: rt.torch_multinomial(rt_values(1 + _probs((3, 40), d)),
                                           min(last(s), 40)),
         lambda s, d: f"torch_multinomial({r_values(1 + _probs((3, 40), d))}, "
                      f"{min(last(s), 40)})", shapes="rows", r_shift=1),
    Case("x$multinomial(replacement)", (F32,),
         lambda s, d: from_numpy(1 + _probs((3, 5), d)).multinomial(last(s), True),
         lambda s, d: rt_values(1 + _probs((3, 5), d)).multinomial(last(s), True),
         lambda s, d: f"{r_values(1 + _probs((3, 5), d))}$multinomial({last(s)}, "
                      "replacement = TRUE)", shapes="rows", r_shift=1),
    # -- in-place fills -------------------------------------------------------------
    _inplace("uniform_(-3,5.5)", (F32, F64, C64), "uniform_", (-3, 5.5), "-3, 5.5"),
    _inplace("normal_(2.5,0.3)", (F32, F64, C64), "normal_", (2.5, 0.3), "2.5, 0.3"),
    _inplace("log_normal_(0.3,0.8)", (F32, F64), "log_normal_", (0.3, 0.8), "0.3, 0.8"),
    _inplace("exponential_(1.5)", (F32, F64, F16, BFLOAT16), "exponential_", (1.5,), "1.5"),
    _inplace("geometric_(0.3)", (F32, F64, I64, I32), "geometric_", (0.3,), "0.3"),
    _inplace("cauchy_(0.7,2.5)", (F32, F64), "cauchy_", (0.7, 2.5), "0.7, 2.5"),
    _inplace("bernoulli_(0.3)", (F32, F64, I64, BOOL), "bernoulli_", (0.3,), "0.3"),
    Case("bernoulli_(p)", (F32, I64),
         lambda s, d: torch.empty(dims(s), dtype=_dt(d)).bernoulli_(
             from_numpy(_probs(s, F64))),
         lambda s, d: rt.torch_empty(*dims(s), dtype=d).bernoulli_(rt_values(_probs(s, F64))),
         lambda s, d: f"torch_empty({r_size(s)}, dtype = {R_DTYPE[d]})$bernoulli_("
                      f"{r_values(_probs(s, F64))})"),
    _inplace("random_()", (F32, F64, F16, BFLOAT16, I64, I32, I16, I8, U8, BOOL), "random_", (),
             ""),
    _inplace("random_(3,100)", (F32, F64, I64, I32, I16, I8, U8), "random_", (3, 100),
             "3, 100"),
    Case("random_(to=10)", (F32, I64),
         lambda s, d: torch.empty(dims(s), dtype=_dt(d)).random_(10),
         lambda s, d: rt.torch_empty(*dims(s), dtype=d).random_(to=10),
         lambda s, d: f"torch_empty({r_size(s)}, dtype = {R_DTYPE[d]})$random_(to = 10)"),
    _strided("uniform_(-2,3) transposed", "uniform_", (-2, 3), "-2, 3"),
    _strided("normal_(1,2) transposed", "normal_", (1, 2), "1, 2"),
    _strided("bernoulli_(0.4) transposed", "bernoulli_", (0.4,), "0.4"),
    _strided("random_(0,10) transposed", "random_", (0, 10), "0, 10"),
    _strided("exponential_() transposed", "exponential_", (), ""),
    # -- the dropout family, rrelu ------------------------------------------------------
    Case("nnf_dropout(0.3)", (F32,),
         lambda s, d: F.dropout(torch.from_numpy(inputs(dims(s))), 0.3),
         lambda s, d: rt.nnf_dropout(rt_values(inputs(dims(s))), 0.3),
         lambda s, d: f"nnf_dropout({r_values(inputs(dims(s)))}, 0.3)"),
    Case("nnf_dropout2d(0.5)", (F32,),
         lambda s, d: F.dropout2d(torch.from_numpy(inputs((2, 3, 4, 5))), 0.5),
         lambda s, d: rt.nnf_dropout2d(rt_values(inputs((2, 3, 4, 5))), 0.5),
         lambda s, d: f"nnf_dropout2d({r_values(inputs((2, 3, 4, 5)))}, 0.5)", shapes="once"),
    Case("nnf_dropout3d(0.5)", (F32,),
         lambda s, d: F.dropout3d(torch.from_numpy(inputs((2, 3, 2, 2, 2))), 0.5),
         lambda s, d: rt.nnf_dropout3d(rt_values(inputs((2, 3, 2, 2, 2))), 0.5),
         lambda s, d: f"nnf_dropout3d({r_values(inputs((2, 3, 2, 2, 2)))}, 0.5)",
         shapes="once"),
    Case("nnf_alpha_dropout(0.2)", (F32,),
         lambda s, d: F.alpha_dropout(torch.from_numpy(inputs(dims(s))), 0.2, True),
         lambda s, d: rt.nnf_alpha_dropout(rt_values(inputs(dims(s))), 0.2, True),
         lambda s, d: f"nnf_alpha_dropout({r_values(inputs(dims(s)))}, 0.2, training = TRUE)"),
    Case("nnf_feature_alpha_dropout(0.2)", (F32,),
         lambda s, d: F.feature_alpha_dropout(torch.from_numpy(inputs((3, 4, 5))), 0.2, True),
         lambda s, d: rt.nnf_feature_alpha_dropout(rt_values(inputs((3, 4, 5))), 0.2, True),
         None, shapes="once"),
    Case("nn_dropout(0.4)", (F32,),
         lambda s, d: torch.nn.Dropout(0.4)(torch.from_numpy(inputs((6, 7)))),
         lambda s, d: rt.nn_dropout(0.4)(rt_values(inputs((6, 7)))),
         lambda s, d: f"nn_dropout(0.4)({r_values(inputs((6, 7)))})", shapes="once"),
    Case("nnf_rrelu(training)", (F32,),
         lambda s, d: F.rrelu(torch.from_numpy(inputs(dims(s))), 0.1, 0.3, True),
         lambda s, d: rt.nnf_rrelu(rt_values(inputs(dims(s))), 0.1, 0.3, True),
         lambda s, d: f"nnf_rrelu({r_values(inputs(dims(s)))}, 0.1, 0.3, training = TRUE)"),
    Case("nn_rrelu", (F32,),
         lambda s, d: torch.nn.RReLU()(torch.from_numpy(inputs((5, 6)))),
         lambda s, d: rt.nn_rrelu()(rt_values(inputs((5, 6)))),
         lambda s, d: f"nn_rrelu()({r_values(inputs((5, 6)))})", shapes="once"),
    Case("nnf_gumbel_softmax", (F32,),   # (log and softmax are not libtorch's kernels)
         lambda s, d: (torch.from_numpy(inputs((4, 6))) +
                       torch.empty(4, 6).exponential_().log()).softmax(-1),
         lambda s, d: rt.nnf_gumbel_softmax(rt_values(inputs((4, 6)))),
         lambda s, d: f"nnf_gumbel_softmax({r_values(inputs((4, 6)))})", shapes="once",
         exact=False),
    # -- nn_init_* ----------------------------------------------------------------------
    _init("nn_init_uniform_", lambda w: torch.nn.init.uniform_(w, -1, 2),
          lambda w: rt.nn_init_uniform_(w, -1, 2), "nn_init_uniform_(w, -1, 2)"),
    _init("nn_init_normal_", lambda w: torch.nn.init.normal_(w, 1, 0.5),
          lambda w: rt.nn_init_normal_(w, 1, 0.5), "nn_init_normal_(w, 1, 0.5)"),
    _init("nn_init_xavier_uniform_", lambda w: torch.nn.init.xavier_uniform_(w, 2.0),
          lambda w: rt.nn_init_xavier_uniform_(w, 2.0), "nn_init_xavier_uniform_(w, 2)",
          (4, 3, 2)),
    _init("nn_init_xavier_normal_", lambda w: torch.nn.init.xavier_normal_(w),
          lambda w: rt.nn_init_xavier_normal_(w), "nn_init_xavier_normal_(w)"),
    _init("nn_init_kaiming_uniform_", lambda w: torch.nn.init.kaiming_uniform_(
              w, a=0.2, mode="fan_out", nonlinearity="leaky_relu"),
          lambda w: rt.nn_init_kaiming_uniform_(w, a=0.2, mode="fan_out"),
          "nn_init_kaiming_uniform_(w, a = 0.2, mode = 'fan_out')", (6, 2, 3)),
    _init("nn_init_kaiming_normal_", lambda w: torch.nn.init.kaiming_normal_(
              w, nonlinearity="relu"),
          lambda w: rt.nn_init_kaiming_normal_(w, nonlinearity="relu"),
          "nn_init_kaiming_normal_(w, nonlinearity = 'relu')"),
    _init("nn_init_trunc_normal_", lambda w: _torch_trunc_normal(w, 0.5, 2.0, -1.0, 3.0),
          lambda w: rt.nn_init_trunc_normal_(w, 0.5, 2.0, -1.0, 3.0),
          "nn_init_trunc_normal_(w, 0.5, 2, -1, 3)", (20, 30), exact=False),
    _init("nn_init_orthogonal_", lambda w: torch.nn.init.orthogonal_(w, 1.5),
          lambda w: rt.nn_init_orthogonal_(w, 1.5), "nn_init_orthogonal_(w, 1.5)", (3, 7),
          exact=False),
    _init("nn_init_sparse_", lambda w: torch.nn.init.sparse_(w, 0.4),
          lambda w: rt.nn_init_sparse_(w, 0.4), "nn_init_sparse_(w, 0.4)", (10, 4)),
    # -- layers' default initialisation, in R torch's order -------------------------------
    _layer("nn_linear", lambda: torch.nn.Linear(10, 3), lambda: rt.nn_linear(10, 3),
           "nn_linear(10, 3)"),
    _layer("nn_linear(bias=FALSE)", lambda: torch.nn.Linear(3, 2, bias=False),
           lambda: rt.nn_linear(3, 2, bias=False), "nn_linear(3, 2, bias = FALSE)"),
    _layer("nn_bilinear", _torch_bilinear,
           lambda: rt.nn_bilinear(3, 4, 2), "nn_bilinear(3, 4, 2)"),
    _layer("nn_conv1d", lambda: torch.nn.Conv1d(3, 4, 3), lambda: rt.nn_conv1d(3, 4, 3),
           "nn_conv1d(3, 4, 3)"),
    _layer("nn_conv2d(groups)", lambda: torch.nn.Conv2d(4, 6, (3, 2), groups=2),
           lambda: rt.nn_conv2d(4, 6, (3, 2), groups=2),
           "nn_conv2d(4, 6, c(3, 2), groups = 2)"),
    _layer("nn_conv3d", lambda: torch.nn.Conv3d(2, 2, 2), lambda: rt.nn_conv3d(2, 2, 2),
           "nn_conv3d(2, 2, 2)"),
    _layer("nn_conv_transpose2d", lambda: torch.nn.ConvTranspose2d(3, 2, 3),
           lambda: rt.nn_conv_transpose2d(3, 2, 3), "nn_conv_transpose2d(3, 2, 3)"),
    _layer("nn_embedding(padding_idx)", lambda: torch.nn.Embedding(10, 3, padding_idx=2),
           lambda: rt.nn_embedding(10, 3, padding_idx=2),
           "nn_embedding(10, 3, padding_idx = 3)"),
    _layer("nn_embedding_bag", lambda: torch.nn.EmbeddingBag(10, 1),
           lambda: rt.nn_embedding_bag(10, 1), "nn_embedding_bag(10, 1)"),
    _layer("nn_rnn(2 layers)", lambda: torch.nn.RNN(3, 4, 2), lambda: rt.nn_rnn(3, 4, 2),
           "nn_rnn(3, 4, 2)"),
    _layer("nn_gru(bidirectional)", lambda: torch.nn.GRU(3, 4, bidirectional=True),
           lambda: rt.nn_gru(3, 4, bidirectional=True), "nn_gru(3, 4, bidirectional = TRUE)"),
    _layer("nn_lstm", lambda: torch.nn.LSTM(3, 2, 2), lambda: rt.nn_lstm(3, 2, 2),
           "nn_lstm(3, 2, 2)"),
    _layer("nn_multihead_attention", lambda: torch.nn.MultiheadAttention(4, 2),
           lambda: rt.nn_multihead_attention(4, 2), "nn_multihead_attention(4, 2)",
           ("in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias")),
    # -- the dataloader's shuffle (R torch's RandomSampler: torch_randperm(n) + 1) ----------
    Case("dataloader(shuffle)", (F32,), lambda s, d: torch.randperm(10),
         lambda s, d: _rt_loader(shuffle=True), lambda s, d: _r_loader("shuffle = TRUE"),
         shapes="once"),
    Case("sampler(replacement)", (F32,), lambda s, d: torch.randint(0, 10, (10,)),
         lambda s, d: _rt_loader(sampler=rt.RandomSampler(range(10), replacement=True)),
         lambda s, d: _r_loader("sampler = RandomSampler(1:10, replacement = TRUE)"),
         shapes="once"),
]


def sizes(kind: str) -> list:
    if kind == "once":
        return [None]
    if kind == "1d":
        return [s for s in SIZES if isinstance(s, int)]
    if kind == "2d":
        return [s for s in SIZES if isinstance(s, tuple) and len(s) == 2] + [(1, 16), (17, 3)]
    if kind == "rows":
        return [s for s in SIZES if (isinstance(s, int) and s > 0) or
                (isinstance(s, tuple) and len(s) == 2)]
    return list(SIZES)


def params() -> list:
    """(case, dtype, seed, shape, id) for every combination to test."""
    return [(case, dtype, seed, shape,
             f"{case.name}-{dtype.name}-{seed}" + ("" if shape is None else f"-{shape}"))
            for case in CASES for dtype in case.dtypes for seed in SEEDS
            for shape in sizes(case.shapes)]


def as_list(values: Any) -> list:
    return list(values) if isinstance(values, (list, tuple)) else [values]


def torch_arrays(values: Any) -> list:
    return [to_numpy(v.detach()) for v in as_list(values)]


def compare(ours: list, theirs: list, exact: bool) -> str:
    """'' when the arrays agree (bitwise, or closely when not exact), else why not."""
    if len(ours) != len(theirs):
        return f"{len(ours)} results here, {len(theirs)} in PyTorch"
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"result {i}: {a.dtype}{a.shape} here, {b.dtype}{b.shape} in PyTorch"
        if exact:
            same = np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                                  np.ascontiguousarray(b).view(np.uint8))
        else:
            same = np.allclose(a, b, rtol=1e-5, atol=1e-6)
        if not same:
            bad = np.flatnonzero(a.reshape(-1) != b.reshape(-1))
            return (f"result {i}: {bad.size} of {a.size} values differ, first at {bad[0]}: "
                    f"{a.reshape(-1)[bad[0]]!r} here, {b.reshape(-1)[bad[0]]!r} in PyTorch")
    return ""
