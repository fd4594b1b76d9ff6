"""Probability distributions with R torch's names (`distr_normal()`,
`distr_bernoulli()`, ...), modelled as R torch models them (after PyTorch's
torch.distributions): `sample()`, `rsample()` (reparameterised: gradients
flow into the parameters), `log_prob()`, `cdf()`, `entropy()` where R torch
has them, `mean`, `variance`, `batch_shape`, `event_shape`.

As in R torch, a number given as a parameter is a one-element tensor (its
batch shape is (1,)); sample shapes may be a number or a sequence.
Categorical values are 0-based here (R's are 1-based: rtorch_py/r/distr_api.py).
Sampling uses the random creation functions and ops (torch_normal,
torch_bernoulli, torch_poisson, torch_multinomial, `_standard_gamma`).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from . import constructors as _cr
from . import ops as _ops
from .autograd import autograd_grad, no_grad
from .nn.functional import nnf_binary_cross_entropy_with_logits, nnf_softmax
from .ops.creation import _standard_gamma, arange, eye, full
from .tensor import Tensor, get_default_dtype

Shape = tuple


# --------------------------------------------------------------------------
# Helpers


def _shape(sample_shape: Any) -> Shape:
    """A sample shape given as None, a number or a sequence of numbers."""
    if sample_shape is None:
        return ()
    if isinstance(sample_shape, (int, float, np.integer, np.floating)):
        return (int(sample_shape),)
    return tuple(int(s) for s in np.asarray(sample_shape).reshape(-1))


def as_param_tensor(v: Any, like: Tensor | None = None) -> Tensor:
    """A parameter or value as a tensor: numbers become one-element tensors (of
    `like`'s dtype when given, as R torch's broadcast_all makes them)."""
    if isinstance(v, Tensor):
        return v
    dtype = like.dtype if like is not None else get_default_dtype()
    return _cr.torch_tensor(np.asarray(v, dtype=np.float64).reshape(-1), dtype=dtype)


def broadcast_all(*values: Any) -> list:
    """The values as tensors broadcast to one shape (numbers take the first
    tensor's dtype)."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    return _ops.broadcast_tensors([as_param_tensor(v, like) for v in values])


def _value_error(message: str) -> ValueError:
    return ValueError(message)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    return logits.sigmoid() if is_binary else nnf_softmax(logits, -1)


def clamp_probs(probs: Tensor) -> Tensor:
    eps = float(np.finfo(probs.data.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


# --------------------------------------------------------------------------
# Constraints: where a distribution's values lie (checked with validate_args)


def _r_character(x: Any) -> str:
    """A number as R's as.character() writes it (glue's text in R torch's prints):
    up to 15 significant digits, fixed or scientific, whichever is narrower."""
    if not isinstance(x, (int, float)):
        return str(x)
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return {0: "0", math.inf: "Inf", -math.inf: "-Inf"}.get(x, "NaN")
    digits = next(d for d in range(1, 16) if float(f"{x:.{d - 1}e}") == float(f"{x:.14e}"))
    mantissa, exp = f"{x:.{digits - 1}e}".split("e")
    sci = f"{mantissa}e{int(exp):+03d}"
    fixed = f"{x:.{max(0, digits - 1 - int(exp))}f}"
    return fixed if len(fixed) <= len(sci) else sci


class Constraint:
    """A region of values: `check(value)` says, element by element (event by
    event where `event_dim` > 0), whether each lies in it. R torch's classes
    (`r_class`, and R sees `print()` as R torch prints them)."""

    r_class = "torch_Constraint"
    event_dim = 0
    _bounds: tuple[str, ...] = ()

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError("check() is not implemented for this constraint")

    def r_print(self) -> str:
        """R torch's print: its classes, each followed by the bounds."""
        classes = [c.r_class for c in type(self).__mro__ if "r_class" in vars(c)] + ["R6"]
        if not self._bounds:
            return " ".join(classes)
        shown = "(" + ", ".join(f"{b}={_r_character(getattr(self, b))}" for b in self._bounds) + ")"
        return " ".join(f"{c}: {shown}" for c in classes)

    def __repr__(self) -> str:
        return type(self).__name__


class _Dependent(Constraint):
    r_class = "torch_Dependent"

    def check(self, value: Tensor) -> Tensor:
        raise _value_error("Cannot determine validity of dependent constraint")


class _Independent(Constraint):
    """`base_constraint` over the last `reinterpreted_batch_ndims` dims, one event."""
    r_class = "torch_IndependentConstraint"

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        ok, n = self.base_constraint.check(value), self.reinterpreted_batch_ndims
        if ok.ndim < n:
            raise _value_error(f"Expected value$dim() >= {self.event_dim} but got {value.ndim}")
        return ok.reshape(tuple(ok.shape[:ok.ndim - n]) + (-1,)).all(dim=-1)


class _Boolean(Constraint):
    r_class = "torch_Boolean"

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _Real(Constraint):
    r_class = "torch_Real"

    def check(self, value: Tensor) -> Tensor:
        return value == value  # (not NaN)


class _Bounded(Constraint):
    """A region between bounds; `_bounds` names them, in the order given."""

    def __init__(self, *bounds: float) -> None:
        for name, b in zip(self._bounds, bounds, strict=True):
            setattr(self, name, b)


class _IntegerGreaterThan(_Bounded):
    r_class, _bounds = "torch_IntegerGreaterThan", ("lower_bound",)

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)


class _GreaterThan(_Bounded):
    r_class, _bounds = "torch_GreaterThan", ("lower_bound",)

    def check(self, value: Tensor) -> Tensor:
        return value > self.lower_bound


class _GreaterThanEq(_Bounded):
    r_class, _bounds = "torch_GreaterThanEq", ("lower_bound",)

    def check(self, value: Tensor) -> Tensor:
        return value >= self.lower_bound


class _LessThan(_Bounded):
    r_class, _bounds = "torch_LessThan", ("upper_bound",)

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound


class _Interval(_Bounded):
    """[lower_bound, upper_bound]; R torch prints only the bounds."""
    r_class, _bounds = "torch_Interval", ("lower_bound", "upper_bound")

    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value <= self.upper_bound)

    def r_print(self) -> str:
        return (f"(lower_bound={_r_character(self.lower_bound)}, "
                f"upper_bound={_r_character(self.upper_bound)})")


class _HalfOpenInterval(_Bounded):
    """[lower_bound, upper_bound) (in R torch no Interval, printed as one)"""
    r_class, _bounds = "torch_HalfOpenInterval", ("lower_bound", "upper_bound")
    r_print = _Interval.r_print

    def check(self, value: Tensor) -> Tensor:
        return (value >= self.lower_bound) & (value < self.upper_bound)


class _PositiveDefinite(Constraint):
    """Matrices (the last two dims) with a Cholesky factor. R torch's result has
    a leading dim of 1 (PyTorch's has not)."""
    r_class = "torch_PositiveDefinite"
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return (_ops.linalg_cholesky_ex(value)[1] == 0).unsqueeze(0)


class _LowerCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal."""
    r_class = "torch_LowerCholesky"
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        lower = (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(dim=-1)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(dim=-1)


class _Simplex(Constraint):
    r_class = "torch_Simplex"
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(dim=-1) & ((value.sum(dim=-1) - 1).abs() < 1e-6)


constraint_dependent = _Dependent()
constraint_boolean = _Boolean()
constraint_nonnegative_integer = _IntegerGreaterThan(0)
constraint_positive_integer = _IntegerGreaterThan(1)
constraint_real = _Real()
constraint_real_vector = _Independent(constraint_real, 1)
constraint_positive = _GreaterThan(0.0)
constraint_unit_interval = _Interval(0.0, 1.0)
constraint_positive_definite = _PositiveDefinite()
constraint_lower_cholesky = _LowerCholesky()
constraint_simplex = _Simplex()
# the classes R makes its own with $new(...)
constraint_greater_than, constraint_greater_than_eq = _GreaterThan, _GreaterThanEq
constraint_less_than, constraint_interval = _LessThan, _Interval
constraint_half_open_interval = _HalfOpenInterval
CONSTRAINT_CLASSES: Sequence[type] = (  # (the base last: R's class is the first match's)
    _Dependent, _Independent, _Boolean, _Real, _IntegerGreaterThan, _GreaterThan,
    _GreaterThanEq, _LessThan, _Interval, _HalfOpenInterval, _PositiveDefinite,
    _LowerCholesky, _Simplex, Constraint)


# --------------------------------------------------------------------------
# The base classes


class Distribution:
    """What every distribution has (see the module doc). Parameters are batched
    over `batch_shape`; one draw has `event_shape`."""

    r_class = "torch_Distribution"
    has_rsample = False
    has_enumerate_support = False
    support: Constraint | None = None

    def __init__(self, batch_shape: Any = (), event_shape: Any = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape, self._event_shape = _shape(batch_shape), _shape(event_shape)
        self.validate_args = bool(validate_args) if validate_args is not None else False

    @property
    def batch_shape(self) -> Shape:
        return self._batch_shape

    @property
    def event_shape(self) -> Shape:
        return self._event_shape

    def _extended_shape(self, sample_shape: Any = None) -> Shape:
        return _shape(sample_shape) + self._batch_shape + self._event_shape

    def _missing(self, what: str) -> NotImplementedError:
        return NotImplementedError(f"{self.r_name} has no {what}")

    @property
    def r_name(self) -> str:
        return type(self).r_class

    def _constructor_args(self) -> dict[str, Tensor]:
        """The tensors the constructor takes, by name: what expand() expands."""
        return {name: getattr(self, name) for name in getattr(self, "arg_constraints", {})}

    def expand(self, batch_shape: Any) -> "Distribution":
        """The same distribution over a larger batch: each parameter's batch dims
        expanded (no copy), its own trailing dims kept."""
        args = self._constructor_args()
        if not args:
            raise self._missing("expand()")
        batch, n = _shape(batch_shape), len(self._batch_shape)
        new = type(self)(**{name: t.expand(batch + tuple(t.shape[n:]))
                            for name, t in args.items()})
        new.validate_args = self.validate_args
        return new

    def sample(self, sample_shape: Any = None) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = None) -> Tensor:
        raise self._missing("rsample() (no reparameterised sampling)")

    def log_prob(self, value: Any) -> Tensor:
        raise self._missing("log_prob()")

    def cdf(self, value: Any) -> Tensor:
        raise self._missing("cdf()")

    def icdf(self, value: Any) -> Tensor:
        raise self._missing("icdf()")

    def entropy(self) -> Tensor:
        raise self._missing("entropy()")

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise self._missing("enumerate_support()")

    @property
    def mean(self) -> Tensor:
        raise self._missing("mean")

    @property
    def variance(self) -> Tensor:
        raise self._missing("variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _validate_sample(self, value: Any) -> Tensor:
        """The value as a tensor, checked (when validate_args) against the event
        and batch shapes and the support."""
        value = as_param_tensor(value)
        if not self.validate_args:
            return value
        shape, expected = tuple(value.shape), self._batch_shape + self._event_shape
        n = len(self._event_shape)
        if n and shape[len(shape) - n:] != self._event_shape:
            raise _value_error(f"The right-most size of value must match event_shape: "
                               f"{list(shape)} vs {list(self._event_shape)}.")
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise _value_error(f"Value is not broadcastable with batch_shape+event_shape: "
                                   f"{list(shape)} vs {list(expected)}.")
        if self.support is not None and not bool(self.support.check(value).all()):
            raise _value_error("The value argument must be within the support")
        return value

    def __repr__(self) -> str:
        return f"{self.r_name} ()"


class ExponentialFamily(Distribution):
    """Distributions p(x) = exp(<t(x), theta> - F(theta) + k(x)): their entropy
    from the log normaliser F by automatic differentiation (Bregman divergence)."""

    r_class = "torch_ExponentialFamily"
    _mean_carrier_measure: float | None = None

    @property
    def _natural_params(self) -> tuple:
        raise self._missing("natural parameters")

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise self._missing("log normalizer")

    def entropy(self) -> Tensor:
        if self._mean_carrier_measure is None:
            raise self._missing("entropy() (no mean carrier measure)")
        params = [p.detach().requires_grad_() for p in self._natural_params]
        lg = self._log_normalizer(*params)
        grads = autograd_grad(lg.sum(), params, create_graph=True)
        result = lg - self._mean_carrier_measure
        for p, g in zip(params, grads):
            result = result - p * g
        return result


# --------------------------------------------------------------------------
# The distributions


class Normal(ExponentialFamily):
    r_class = "torch_Normal"
    arg_constraints = {"loc": constraint_real, "scale": constraint_positive}
    support = constraint_real
    has_rsample = True
    _mean_carrier_measure = 0.0

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    def sample(self, sample_shape: Any = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _cr.torch_normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape: Any = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _cr.torch_empty(*shape, dtype=self.loc.dtype).normal_()
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        value = self._validate_sample(value)
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - \
            math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Any) -> Tensor:
        value = self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() /
                           math.sqrt(2)).erf())

    def icdf(self, value: Any) -> Tensor:
        value = as_param_tensor(value)
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev ** 2

    @property
    def _natural_params(self) -> tuple:
        return (self.loc / self.scale ** 2, -0.5 * (self.scale ** 2).reciprocal())

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return -0.25 * x ** 2 / y + 0.5 * (-math.pi / y).log()


class Bernoulli(ExponentialFamily):
    r_class = "torch_Bernoulli"
    arg_constraints = {"probs": constraint_unit_interval, "logits": constraint_real}
    support = constraint_boolean
    has_rsample = True  # (as R torch declares it; sampling is discrete)
    has_enumerate_support = True
    _mean_carrier_measure = 0.0

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise _value_error("Either `probs` or `logits` must be specified, but not both.")
        self._probs = self._logits = None
        if probs is not None:
            self._probs = broadcast_all(probs)[0]
        else:
            self._logits = broadcast_all(logits)[0]
        self._param = self._probs if probs is not None else self._logits
        super().__init__(self._param.shape, (), validate_args)

    def _constructor_args(self) -> dict[str, Tensor]:
        return {"probs": self._probs} if self._probs is not None else {"logits": self._logits}

    @property
    def probs(self) -> Tensor:
        if self._probs is None:
            self._probs = logits_to_probs(self._logits, is_binary=True)
        return self._probs

    @property
    def logits(self) -> Tensor:
        if self._logits is None:
            self._logits = probs_to_logits(self._probs, is_binary=True)
        return self._logits

    @property
    def param_shape(self) -> Shape:
        return tuple(self._param.shape)

    def sample(self, sample_shape: Any = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _cr.torch_bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Any) -> Tensor:
        value = self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -nnf_binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return nnf_binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _cr.torch_tensor([0.0, 1.0], dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + self.batch_shape) if expand else values

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    @property
    def _natural_params(self) -> tuple:
        return ((self.probs / (1 - self.probs)).log(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return (1 + x.exp()).log()


class Categorical(Distribution):
    """Categories 0, ..., K - 1 (1 to K in R) with the probabilities (or
    log-odds) along the last dim."""

    r_class = "torch_Categorical"
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise _value_error("Either `probs` or `logits` must be specified, but not both.")
        self._probs = self._logits = None
        if probs is not None:
            probs = as_param_tensor(probs)
            if probs.ndim < 1:
                raise _value_error("`probs` must be at least one-dimensional.")
            self._probs = probs / probs.sum(-1, keepdim=True)
        else:
            logits = as_param_tensor(logits)
            if logits.ndim < 1:
                raise _value_error("`logits` must be at least one-dimensional.")
            self._logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self._probs if self._probs is not None else self._logits
        self._num_events = self._param.shape[-1]
        super().__init__(self._param.shape[:-1], (), validate_args)

    def _constructor_args(self) -> dict[str, Tensor]:
        return {"probs": self._probs} if self._probs is not None else {"logits": self._logits}

    @property
    def probs(self) -> Tensor:
        return self._probs if self._probs is not None else logits_to_probs(self._logits)

    @property
    def logits(self) -> Tensor:
        return self._logits if self._logits is not None else probs_to_logits(self._probs)

    @property
    def param_shape(self) -> Shape:
        return tuple(self._param.shape)

    def sample(self, sample_shape: Any = None) -> Tensor:
        shape = _shape(sample_shape)
        probs2d = self.probs.reshape(-1, self._num_events)
        with no_grad():
            draws = _cr.torch_multinomial(probs2d, int(np.prod(shape)), True).t()
        return draws.reshape(self._extended_shape(shape))

    def log_prob(self, value: Any) -> Tensor:
        value = self._validate_sample(value)
        value = value.to(dtype="int64").unsqueeze(-1)
        value, log_pmf = _ops.broadcast_tensors([value, self.logits])
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = arange(self._num_events, dtype="int64")
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((-1,) + self.batch_shape) if expand else values

    @property
    def mean(self) -> Tensor:
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return full(self._extended_shape(), float("nan"), dtype=self.probs.dtype)


class Gamma(ExponentialFamily):
    r_class = "torch_Gamma"
    arg_constraints = {"concentration": constraint_positive, "rate": constraint_positive}
    support = constraint_positive
    has_rsample = True
    _mean_carrier_measure = 0.0

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, (), validate_args)

    def rsample(self, sample_shape: Any = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=float(np.finfo(value.data.dtype).tiny))
        return value

    def log_prob(self, value: Any) -> Tensor:
        value = self._validate_sample(as_param_tensor(value, self.rate))
        return (self.concentration * self.rate.log() + (self.concentration - 1) * value.log() -
                self.rate * value - self.concentration.lgamma())

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate ** 2

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()


class Chi2(Gamma):
    """Gamma(df / 2, 1 / 2)."""

    r_class = "torch_Chi2"
    arg_constraints = {"df": constraint_positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        df = as_param_tensor(df)
        super().__init__(0.5 * df, _cr.torch_tensor(0.5, dtype=df.dtype), validate_args)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class Poisson(ExponentialFamily):
    r_class = "torch_Poisson"
    arg_constraints = {"rate": constraint_positive}
    support = constraint_nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        self.rate = broadcast_all(rate)[0]
        super().__init__(self.rate.shape, (), validate_args)

    def sample(self, sample_shape: Any = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _cr.torch_poisson(self.rate.expand(shape))

    def log_prob(self, value: Any) -> Tensor:
        value = self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return rate.log() * value - rate - (value + 1).lgamma()

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def variance(self) -> Tensor:
        return self.rate

    @property
    def _natural_params(self) -> tuple:
        return (self.rate.log(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.exp()


def _batch_mv(bmat: Tensor, bvec: Tensor) -> Tensor:
    return bmat.matmul(bvec.unsqueeze(-1)).squeeze(-1)


class MultivariateNormal(Distribution):
    """A normal distribution over vectors (the last dim), given one of its
    covariance, precision, or covariance's lower Cholesky factor (scale_tril)."""

    r_class = "torch_MultivariateNormal"
    arg_constraints = {"loc": constraint_real_vector}
    support = constraint_real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        loc = as_param_tensor(loc)
        if loc.ndim < 1:
            raise _value_error("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise _value_error("Exactly one of covariance_matrix or precision_matrix or "
                               "scale_tril may be specified.")
        matrix = given[0]
        if matrix.ndim < 2:
            what = ("scale_tril" if scale_tril is not None else "covariance_matrix"
                    if covariance_matrix is not None else "precision_matrix")
            raise _value_error(f"{what} matrix must be at least two-dimensional with optional "
                               "leading batch dimensions")
        batch = tuple(np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        self._scale_tril = self._covariance_matrix = self._precision_matrix = None
        expanded = matrix.expand(batch + (-1, -1))
        if scale_tril is not None:
            self._scale_tril = expanded
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._covariance_matrix = expanded
            self._unbroadcasted_scale_tril = _ops.linalg_cholesky(covariance_matrix)
        else:
            self._precision_matrix = expanded
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self.loc = loc.expand(batch + (-1,))
        super().__init__(batch, self.loc.shape[-1:], validate_args)

    def _constructor_args(self) -> dict[str, Tensor]:
        return {"loc": self.loc, "scale_tril": self.scale_tril}

    @property
    def scale_tril(self) -> Tensor:
        if self._scale_tril is not None:
            return self._scale_tril
        n = self.event_shape
        return self._unbroadcasted_scale_tril.expand(self.batch_shape + n + n)

    @property
    def covariance_matrix(self) -> Tensor:
        if self._covariance_matrix is not None:
            return self._covariance_matrix
        L = self._unbroadcasted_scale_tril
        n = self.event_shape
        return L.matmul(L.transpose(-1, -2)).expand(self.batch_shape + n + n)

    @property
    def precision_matrix(self) -> Tensor:
        if self._precision_matrix is not None:
            return self._precision_matrix
        identity = eye(self.event_shape[0], dtype=self.loc.dtype)
        n = self.event_shape
        return _ops.cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(
            self.batch_shape + n + n)

    def rsample(self, sample_shape: Any = None) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _cr.torch_empty(*shape, dtype=self.loc.dtype).normal_()
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Any) -> Tensor:
        value = self._validate_sample(value)
        diff = value - self.loc
        # the squared Mahalanobis distance: |L^-1 diff|^2
        L = self._unbroadcasted_scale_tril
        batch = tuple(np.broadcast_shapes(tuple(L.shape[:-2]), tuple(diff.shape[:-1])))
        n = self.event_shape[0]
        solved = _ops.linalg_solve_triangular(L.expand(batch + (n, n)),
                                              diff.expand(batch + (n,)).unsqueeze(-1),
                                              upper=False)
        maha = (solved.squeeze(-1) ** 2).sum(-1)
        return -0.5 * (n * math.log(2 * math.pi) + maha) - self._half_log_det()

    def entropy(self) -> Tensor:
        h = 0.5 * self.event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        # (without batch dims R torch gives one value of shape (1): its R number plus
        # a 0-d tensor)
        return h.reshape(1) if not self.batch_shape else h.expand(self.batch_shape)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return (self._unbroadcasted_scale_tril ** 2).sum(-1).expand(
            self.batch_shape + self.event_shape)


def _precision_to_scale_tril(P: Tensor) -> Tensor:
    """The lower Cholesky factor of P's inverse, without inverting P."""
    Lf = _ops.linalg_cholesky(P.flip((-2, -1)))
    L_inv = Lf.flip((-2, -1)).transpose(-2, -1)
    identity = eye(P.shape[-1], dtype=P.dtype)
    return _ops.linalg_solve_triangular(L_inv, identity, upper=False)


class MixtureSameFamily(Distribution):
    """A mixture: a Categorical choosing among the components (the last batch
    dim of `component_distribution`)."""

    r_class = "torch_MixtureSameFamily"

    def __init__(self, mixture_distribution: Categorical,
                 component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise _value_error("Mixture distribution must be distr_categorical.")
        if not isinstance(component_distribution, Distribution):
            raise _value_error("Component distribution must be an instance of "
                               "torch_Distribution.")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1] if component_distribution.batch_shape \
            else None
        if kc is not None and km != kc:
            raise _value_error(f"Mixture distribution component ({km}) does not equal "
                               f"component_distribution$batch_shape[-1] ({kc}).")
        self.mixture_distribution = mixture_distribution
        self.component_distribution = component_distribution
        self._num_components = km
        event = component_distribution.event_shape
        self._event_ndims = len(event)
        super().__init__(component_distribution.batch_shape[:-1], event, validate_args)

    def expand(self, batch_shape: Any) -> "MixtureSameFamily":
        shape = _shape(batch_shape)
        return MixtureSameFamily(self.mixture_distribution.expand(shape),
                                 self.component_distribution.expand(
                                     shape + (self._num_components,)))

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def cdf(self, value: Any) -> Tensor:
        x = self._pad(as_param_tensor(value))
        return (self.component_distribution.cdf(x) * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, value: Any) -> Tensor:
        x = self._pad(self._validate_sample(value))
        log_prob_x = self.component_distribution.log_prob(x)
        log_mix = self.mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix).logsumexp(dim=-1)

    def sample(self, sample_shape: Any = None) -> Tensor:
        shape = _shape(sample_shape)
        with no_grad():
            gather_dim = len(shape) + len(self.batch_shape)
            event = self.event_shape
            mix = self.mixture_distribution.sample(shape)
            comp = self.component_distribution.sample(shape)
            index = mix.reshape(tuple(mix.shape) + (1,) * (len(event) + 1))
            index = index.repeat(*((1,) * mix.ndim + (1,) + event))
            return comp.gather(gather_dim, index).squeeze(gather_dim)


# --------------------------------------------------------------------------
# R torch's constructors


def distr_normal(loc: Any, scale: Any, validate_args: bool | None = None) -> Normal:
    return Normal(loc, scale, validate_args)


def distr_bernoulli(probs: Any = None, logits: Any = None,
                    validate_args: bool | None = None) -> Bernoulli:
    return Bernoulli(probs, logits, validate_args)


def distr_categorical(probs: Any = None, logits: Any = None,
                      validate_args: bool | None = None) -> Categorical:
    return Categorical(probs, logits, validate_args)


def distr_gamma(concentration: Any, rate: Any, validate_args: bool | None = None) -> Gamma:
    return Gamma(concentration, rate, validate_args)


def distr_chi2(df: Any, validate_args: bool | None = None) -> Chi2:
    return Chi2(df, validate_args)


def distr_poisson(rate: Any, validate_args: bool | None = None) -> Poisson:
    return Poisson(rate, validate_args)


def distr_multivariate_normal(loc: Tensor, covariance_matrix: Tensor | None = None,
                              precision_matrix: Tensor | None = None,
                              scale_tril: Tensor | None = None,
                              validate_args: bool | None = None) -> MultivariateNormal:
    return MultivariateNormal(loc, covariance_matrix, precision_matrix, scale_tril,
                              validate_args)


def distr_mixture_same_family(mixture_distribution: Categorical,
                              component_distribution: Distribution,
                              validate_args: bool | None = None) -> MixtureSameFamily:
    return MixtureSameFamily(mixture_distribution, component_distribution, validate_args)


CLASSES: Sequence[type] = (Distribution, ExponentialFamily, Normal, Bernoulli, Categorical,
                           Gamma, Chi2, Poisson, MultivariateNormal, MixtureSameFamily)

__all__ = [n for n in list(globals()) if n.startswith("distr_")] + ["Distribution"]
