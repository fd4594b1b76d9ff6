"""Creation: complex tensors from their parts (`torch_complex`, `torch_polar`),
their parts back (`torch_real`, `torch_imag`, `x$real`), and the in-place
random fills that `nn_init_*` uses (`x$uniform_()`, `x$normal_()`, ...).

The deterministic constructors are declared here too (`torch_zeros`,
`torch_arange`, ...: PyTorch's conventions, 0-based and exclusive ends; R's
sizes and inclusive `arange` are adapted in `rtorch_py/r/tensor_api.py`).
They and the random ones (`torch_randn`, `torch_randperm`, ...; not in the
registry, as the generated tests compare values) are implemented in
`rtorch_py/constructors.py`; random draws are libtorch's (`rtorch_py.random`).
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ..formals import r_formals
from .. import constructors as _cr
from .. import random as _random
from ..constructors import Generator, generator_of
from ..engine import bump_version
from ..meta import MetaArray
from ..tensor import (Tensor, as_dtype, bool_, default_complex, get_default_dtype, int64,
                      promote_types, wrap)
from .conversion import ToCopyBackward0
from .operands import whole
from .pointwise import inplace_form
from . import special
from .recording import OUTPUT, formula, record
from .dispatch import op
from .samples import creation as S
from .views import check_inplace, record_inplace

__all__ = ["torch_complex", "torch_polar", "torch_real", "torch_imag", "angle", "conj"]


def _parts(a: Any, b: Any) -> tuple:
    """Numbers given for a part become tensors (R torch: torch_complex(1, 1))."""
    return tuple(v if isinstance(v, Tensor) else Tensor(v) for v in (a, b))


def _float_parts(a: Tensor, b: Tensor, name: str, what: str) -> tuple:
    da, db = a.data, b.data
    if da.dtype.kind != "f" or db.dtype.kind != "f":
        raise RuntimeError(f"{name}: expected both inputs to be float or double tensors, got "
                           f"{a.dtype!r} and {b.dtype!r}")
    if da.dtype != db.dtype:
        raise RuntimeError(f"{name}: expected {what} to have the same dtype, got {a.dtype!r} "
                           f"and {b.dtype!r}; convert one to the other's dtype first")
    return da, db


def _complex_of(dt: np.dtype) -> np.dtype:
    return np.dtype(np.complex128 if dt == np.float64 else np.complex64)


@formula
def ComplexBackward0(n, g):
    return (torch_real(g) if n.needs(0) else None), (torch_imag(g) if n.needs(1) else None)


@op("complex", samples=S.complex_parts, method=False, complex_half=True)
def torch_complex(real: Tensor, imag: Tensor) -> Tensor:
    real, imag = _parts(real, imag)
    a, b = _float_parts(real, imag, "complex", "real and imag")
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=_complex_of(a.dtype))
    out.real, out.imag = a, b
    return record(out, ComplexBackward0, (real, imag))


@formula
def PolarBackward0(n, g, abs, angle):
    # For a real input x of a complex output z: grad_x = Re(g * conj(dz/dx)).
    gr, gi = torch_real(g), torch_imag(g)
    c, s = angle.cos(), angle.sin()
    ga = gr * c + gi * s if n.needs(0) else None
    gt = abs * (gi * c - gr * s) if n.needs(1) else None
    return ga, gt


@op("polar", samples=S.polar, method=False, autocast="fp32")
def torch_polar(abs: Tensor, angle: Tensor) -> Tensor:
    abs, angle = _parts(abs, angle)
    r, t = _float_parts(abs, angle, "polar", "abs and angle")
    out = (r * np.exp(1j * t)).astype(_complex_of(r.dtype))
    return record(out, PolarBackward0, (abs, angle), (abs, angle))


@formula
def RealBackward0(n, g):
    return (torch_complex(g, g * 0),)


@formula
def ImagBackward0(n, g):
    return (torch_complex(g * 0, g),)


@op("real", samples=S.complex_input, method=False, differentiable=False, complex_half=True)
def torch_real(self: Tensor) -> Tensor:
    """The real part (a copy here; PyTorch's is a view). A real tensor is its own."""
    if self.data.dtype.kind != "c":
        return self
    return record(np.ascontiguousarray(self.data.real), RealBackward0, (self,))


@op("imag", samples=S.complex_input, method=False, differentiable=False, complex_half=True)
def torch_imag(self: Tensor) -> Tensor:
    if self.data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes; "
                           "check x$is_complex() first")
    return record(np.ascontiguousarray(self.data.imag), ImagBackward0, (self,))


@formula
def AngleBackward0(n, g, x):
    if x.data.dtype.kind != "c":  # a real number's angle (0 or pi) is flat
        return (g * 0,)
    # d angle: i z / |z|^2 (0 at 0), PyTorch's convention for complex gradients
    r2 = x.abs() ** 2
    zero = r2 == 0
    return (torch_complex(g * 0, g) * x / r2.masked_fill(zero, 1) * (~zero),)


@op(samples=S.angle, names="keep", complex_half="angle_cpu")
def angle(self: Tensor) -> Tensor:
    """The argument of each element: atan2(imaginary, real) (0 or pi for reals)."""
    d = self.data
    if d.dtype.kind == "c":
        out = np.angle(d)
    else:
        f = d if d.dtype.kind == "f" else d.astype(get_default_dtype().np)
        out = np.where(f < 0, np.pi, 0.0).astype(f.dtype)
        out[np.isnan(f)] = np.nan
    return record(np.asarray(out), AngleBackward0, (self,), (self,))


@formula
def ConjBackward0(n, g):
    return (conj(g),)


@op(samples=S.complex_input, names="keep", complex_half=True)
def conj(self: Tensor) -> Tensor:
    """The complex conjugate (a copy here; PyTorch's is a lazy view). A real tensor
    is its own conjugate: returned as it is, as in PyTorch."""
    if self.data.dtype.kind != "c":
        return self
    return record(np.conj(self.data), ConjBackward0, (self,))


@formula
def ConjPhysicalBackward0(n, g):
    return (conj_physical(g),)


@op(function=False, samples=S.complex_input, names="keep", complex_half=True)
def conj_physical(self: Tensor) -> Tensor:
    """The complex conjugate, computed (conj() is the same here: no lazy views)."""
    if self.data.dtype.kind != "c":
        return self
    return record(np.conj(self.data), ConjPhysicalBackward0, (self,))


op("conj_physical_", function=False)(inplace_form(conj_physical, "conj_physical_"))


# --------------------------------------------------------------------------
# Deterministic constructors (no gradient flows into a new tensor)


def _factory(name: str | None = None, **kw: Any) -> Any:
    return op(name, **{"method": False, "differentiable": False, **kw})


def _dt(dtype: Any) -> Any:
    return as_dtype(dtype if dtype is not None else get_default_dtype()).np


def _filled(make: Any, size: tuple, names: Any, dtype: Any, device: Any,
            requires_grad: bool) -> Tensor:
    """np.zeros or np.ones of the size (nothing made on the meta device)."""
    size, meta = _cr.size_arg(size), _cr.check_device(device)
    return _cr.finish_tensor(_cr.no_values(size) if meta else make(size, dtype=_dt(dtype)),
                             dtype, requires_grad, names=names, meta=meta)


@_factory(samples=S.sizes, r_conventions=("sizes", "creation_options"), complex_half=True)
def zeros(*size: Any, names: Any = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False) -> Tensor:
    _cr.strided_only(layout, "torch_zeros")
    return _filled(np.zeros, size, names, dtype, device, requires_grad)


@_factory(samples=S.sizes, r_conventions=("sizes", "creation_options"), complex_half=True)
def ones(*size: Any, names: Any = None, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    _cr.strided_only(layout, "torch_ones")
    return _filled(np.ones, size, names, dtype, device, requires_grad)


@_factory(samples=S.full, r_conventions=("sizes", "creation_options"), complex_half=True)
def full(size: Any, fill_value: float, names: Any = None, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    """The dtype follows the value (bool, int64, complex, else the default) unless given."""
    _cr.strided_only(layout, "torch_full")
    meta = _cr.check_device(device)
    if dtype is None:
        target = bool_ if isinstance(fill_value, bool) else \
            int64 if isinstance(fill_value, (int, np.integer)) else \
            default_complex() if isinstance(fill_value, complex) else get_default_dtype()
    else:
        target = as_dtype(dtype)
    size = _cr.size_arg((size,))
    arr = _cr.no_values(size) if meta else np.full(size, fill_value, dtype=target.np)
    return _cr.finish_tensor(arr, dtype, requires_grad, target, names=names, meta=meta)


@_factory(samples=S.eye, r_conventions=("creation_options",))
def eye(n: int, m: int | None = None, dtype: Any = None, layout: Any = None,
        device: Any = None, requires_grad: bool = False) -> Tensor:
    _cr.strided_only(layout, "torch_eye")
    meta = _cr.check_device(device)
    return _cr.finish_tensor(np.eye(whole(n, "n"), None if m is None else whole(m, "m")), dtype,
                             requires_grad, meta=meta)


@_factory(samples=S.linspace, r_conventions=("creation_options",))
def linspace(start: float, end: float, steps: int = 100, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    _cr.strided_only(layout, "torch_linspace")
    meta = _cr.check_device(device)
    return _cr.finish_tensor(np.linspace(start, end, whole(steps, "steps")), dtype, requires_grad,
                             meta=meta)


@_factory(samples=S.logspace, r_conventions=("creation_options",))
def logspace(start: float, end: float, steps: int = 100, base: float = 10.0, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """`steps` values from base**start to base**end, evenly spaced in the exponent."""
    _cr.strided_only(layout, "torch_logspace")
    meta = _cr.check_device(device)
    return _cr.finish_tensor(np.logspace(start, end, whole(steps, "steps"), base=base), dtype,
                             requires_grad, meta=meta)


@_factory(samples=S.arange, r_conventions=("inclusive_end", "creation_options"))
def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """Values from start up to (but excluding) end; whole-number bounds give int64."""
    _cr.strided_only(layout, "torch_arange")
    meta = _cr.check_device(device)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("torch_arange: step must be nonzero")
    all_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    return _cr.finish_tensor(np.arange(start, end, step), dtype, requires_grad,
                             int64 if all_int else None, meta=meta)


@_factory("range", samples=S.arange, r_conventions=("creation_options",))
def range_(start: float, end: float, step: float = 1, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """PyTorch's deprecated range: arange with `end` included, always floating."""
    warnings.warn("This function is deprecated in favor of torch_arange.", UserWarning,
                  stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    n = max(int(np.floor((end - start) / step + 1e-7)) + 1, 0)
    return arange(start, start + (n - 0.5) * step, step,
                  dtype=dtype if dtype is not None else get_default_dtype(), layout=layout,
                  device=device, requires_grad=requires_grad)


def _like(x: Tensor, dtype: Any) -> Any:
    return dtype if dtype is not None else x.dtype


def _like_device(x: Tensor, device: Any) -> Any:
    return device if device is not None else x.device


@_factory(samples=S.like, r_conventions=("creation_options",), complex_half=True)
def zeros_like(input: Tensor, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return zeros(input.shape, dtype=_like(input, dtype), layout=layout,
                 device=_like_device(input, device), requires_grad=requires_grad)


@_factory(samples=S.like, r_conventions=("creation_options",), complex_half=True)
def ones_like(input: Tensor, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return ones(input.shape, dtype=_like(input, dtype), layout=layout,
                device=_like_device(input, device), requires_grad=requires_grad)


@_factory(samples=S.full_like, r_conventions=("creation_options",), complex_half=True)
def full_like(input: Tensor, fill_value: float, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    return full(input.shape, fill_value, dtype=_like(input, dtype), layout=layout,
                device=_like_device(input, device), requires_grad=requires_grad)


@_factory(samples=S.new_full, function=False, method=True)
@r_formals("self, size, fill_value, options = list()")
def new_full(self: Tensor, size: Any, fill_value: float, dtype: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A tensor of `size` filled with `fill_value`, of self's dtype unless given."""
    return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)


@_factory(samples=S.new_sized, function=False, method=True)
@r_formals("self, size, options = list()")
def new_zeros(self: Tensor, size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return zeros(size, dtype=dtype or self.dtype, requires_grad=requires_grad)


@_factory(function=False, method=True)
@r_formals("self, size, options = list()")
def new_empty(self: Tensor, size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of `size`, of self's dtype unless given; its values unset (zeros
    here, as torch_empty's)."""
    return zeros(size, dtype=dtype or self.dtype, requires_grad=requires_grad)


@_factory(function=False, method=True)
@r_formals("self, size, stride, options = list()")
def new_empty_strided(self: Tensor, size: Any, stride: Any, dtype: Any = None,
                      requires_grad: bool = False) -> Tensor:
    """torch_empty_strided's tensor (strides in elements), of self's dtype unless given."""
    return _cr.torch_empty_strided(size, stride, dtype=dtype or self.dtype,
                                   device=self.device, requires_grad=requires_grad)


@_factory(samples=S.new_sized, function=False, method=True)
@r_formals("self, size, options = list()")
def new_ones(self: Tensor, size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return ones(size, dtype=dtype or self.dtype, requires_grad=requires_grad)


# Window functions (signal processing). `periodic` windows are the first N of
# the symmetric window of N + 1 points, as PyTorch computes them.

def _window(name: str, device: Any, window_length: Any, periodic: bool, dtype: Any,
            requires_grad: bool, shape: Any) -> Tensor:
    meta = _cr.check_device(device)
    if window_length is None:
        raise ValueError(f"{name}: window_length must be a non-negative integer, got NULL")
    n = whole(window_length, "window_length")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={n}")
    if dtype is not None and not _cr.as_dtype(dtype).is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got {dtype!r}")
    if n <= 1:
        values = np.ones(n)
    else:
        m = n + 1 if periodic else n
        values = shape(np.arange(m, dtype=np.float64), m)[:n]
    return _cr.finish_tensor(values, dtype, requires_grad, meta=meta)


def _cosines(*coefs: float):
    def shape(k: np.ndarray, m: int) -> np.ndarray:
        return sum(c * np.cos(2 * np.pi * i * k / (m - 1)) * (-1) ** i
                   for i, c in enumerate(coefs))
    return shape


@_factory(samples=S.window)
def hann_window(window_length: int, periodic: bool = True, dtype: Any = None,
                layout: Any = None,
                device: Any = None, requires_grad: bool = False) -> Tensor:
    return _window("hann_window", device, window_length, periodic, dtype, requires_grad,
                   _cosines(0.5, 0.5))


@_factory(samples=S.hamming)
def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False) -> Tensor:
    return _window("hamming_window", device, window_length, periodic, dtype, requires_grad,
                   _cosines(alpha, beta))


@_factory(samples=S.window)
def blackman_window(window_length: int, periodic: bool = True, dtype: Any = None,
                    layout: Any = None,
                device: Any = None, requires_grad: bool = False) -> Tensor:
    return _window("blackman_window", device, window_length, periodic, dtype, requires_grad,
                   _cosines(0.42, 0.5, 0.08))


@_factory(samples=S.window)
def bartlett_window(window_length: int, periodic: bool = True, dtype: Any = None,
                    layout: Any = None,
                device: Any = None, requires_grad: bool = False) -> Tensor:
    return _window("bartlett_window", device, window_length, periodic, dtype, requires_grad,
                   lambda k, m: 1 - np.abs(2 * k / (m - 1) - 1))


@_factory(samples=S.kaiser)
@r_formals("window_length, periodic, beta, dtype = NULL, layout = NULL, device = NULL, requires_grad = NULL")
def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Tensor:
    return _window("kaiser_window", device, window_length, periodic, dtype, requires_grad,
                   lambda k, m: np.kaiser(m, beta))


# libtorch's deprecated casts (`torch__cast_Float(x)`): x$to(dtype = ...) by name.

def _cast(name: str, target: Any):
    def cast(self: Tensor, non_blocking: bool = False) -> Tensor:
        d = self.data
        out = d if d.dtype == target.np else d.astype(target.np)
        if target.is_floating_point and d.dtype.kind == "f":
            return record(out, ToCopyBackward0, (self,))
        return wrap(out)
    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"self as {target!r} (libtorch's deprecated {name})."
    return op(name, method=False, samples=S.cast, differentiable=False)(cast)


for _name, _target in (("_cast_Byte", _cr.uint8), ("_cast_Char", _cr.int8),
                       ("_cast_Double", _cr.float64), ("_cast_Float", _cr.float32),
                       ("_cast_Half", _cr.float16), ("_cast_Int", _cr.int32),
                       ("_cast_Long", _cr.int64), ("_cast_Short", _cr.int16)):
    _cast(_name, _target)


# (PyTorch 2.13's own vander fails in backward, an in-place write on a tensor its
# cumprod saved, so the generated tests compare values only; our gradient is
# checked against finite differences in tests/test_creation.py.)
@op(samples=S.vander, method=False, differentiable=False)
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of x: columns x^(N-1), ..., x, 1 (or x^0 first when
    `increasing`), made as PyTorch makes it (running products written into a
    matrix of ones, so the gradient flows through the same nodes)."""
    if x.ndim != 1:
        raise RuntimeError(f"x must be a one-dimensional tensor, got {x.ndim} dimensions")
    n = x.numel() if N is None else whole(N, "N")
    if n < 0:
        raise RuntimeError(f"N must be non-negative, got {n}")
    dt = promote_types(x.dtype, _cr.int64)
    result = ones(x.numel(), n, dtype=dt)
    if n > 1:
        powers = x.unsqueeze(1).expand((x.numel(), n - 1)).cumprod(1)
        result.narrow(1, 1, n - 1).copy_(powers)
    return result if increasing else result.flip(1)


# x$half(), x$byte(), x$char(), x$short(): conversions R torch has as methods

def _method_cast(name: str, target: Any):
    def cast(self: Tensor, memory_format: Any = None) -> Tensor:
        d = self.data
        if d.dtype == target.np:
            return self
        if target.is_floating_point and d.dtype.kind == "f":
            return record(d.astype(target.np), ToCopyBackward0, (self,))
        return wrap(d.astype(target.np))
    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"self as {target!r}."
    return op(name, function=False, samples=S.cast, differentiable=False, names="keep")(cast)


for _name, _target in (("half", _cr.float16), ("byte", _cr.uint8), ("char", _cr.int8),
                       ("short", _cr.int16)):
    _method_cast(_name, _target)


# --------------------------------------------------------------------------
# In-place random fills (what nn_init_* calls), drawn as libtorch draws them
# (rtorch_py.random: the same seed gives the same bits): no gradient flows
# through a fill, so the result's node only stops the gradient (as PyTorch's
# does).


@formula
def RandomBackward(n, g):
    return (g * 0,)


def _fill(self: Tensor, draw: Callable[[np.ndarray], Any]) -> Tensor:
    """Fill self's array in place, in libtorch's element order (nothing drawn
    for a meta tensor, which has no values)."""
    check_inplace(self)
    if not isinstance(self.data, MetaArray):
        draw(self.data)
    bump_version(self)
    return record_inplace(self, RandomBackward, (self,), ())


def _from(from_: Any, kw: dict, name: str) -> Any:
    """R torch's argument is `from`, a Python keyword: accept it by that name."""
    if "from" in kw:
        from_ = kw.pop("from")
    if kw:
        raise TypeError(f"{name}() got unexpected argument(s): {', '.join(kw)}")
    return from_


def _floating(self: Tensor, name: str, complex_too: bool = False) -> None:
    if not (self.is_floating_point() or (complex_too and self.is_complex())):
        raise RuntimeError(f"{name} expects a floating point tensor, got {self.dtype!r}; "
                           "convert first, e.g. x$to(dtype = torch_float())")


@op(function=False)
def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0,
             generator: Generator | None = None, **kw: Any) -> Tensor:
    from_ = _from(from_, kw, "uniform_")
    _floating(self, "uniform_", complex_too=True)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_} > to={to}")
    gen = generator_of(generator)
    return _fill(self, lambda a: _random.uniform_(gen, a, float(from_), float(to)))


@op(function=False)
def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    _floating(self, "normal_", complex_too=True)
    if std < 0:
        raise RuntimeError(f"normal_ expects std >= 0.0, but found std {std}")
    gen = generator_of(generator)
    return _fill(self, lambda a: _random.normal_(gen, a, float(mean), float(std)))


@op(function=False)
def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0,
                generator: Generator | None = None) -> Tensor:
    _floating(self, "log_normal_")
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    gen = generator_of(generator)
    return _fill(self, lambda a: _random.log_normal_(gen, a, float(mean), float(std)))


@op(function=False)
def exponential_(self: Tensor, lambd: float = 1.0,
                 generator: Generator | None = None) -> Tensor:
    _floating(self, "exponential_")
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    gen = generator_of(generator)
    return _fill(self, lambda a: _random.exponential_(gen, a, float(lambd)))


@op(function=False)
def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0,
            generator: Generator | None = None) -> Tensor:
    _floating(self, "cauchy_")
    if sigma <= 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    gen = generator_of(generator)
    return _fill(self, lambda a: _random.cauchy_(gen, a, float(median), float(sigma)))


@op(function=False)
def geometric_(self: Tensor, p: float, generator: Generator | None = None) -> Tensor:
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    if self.data.dtype.kind == "b":
        raise RuntimeError("geometric_ is not implemented for bool tensors")
    gen = generator_of(generator)
    return _fill(self, lambda a: _random.geometric_(gen, a, float(p)))


@op(function=False)
def bernoulli_(self: Tensor, p: Any = 0.5, generator: Generator | None = None) -> Tensor:
    """Each element 1 with probability p (a number, or a tensor broadcast to
    self), else 0."""
    if isinstance(p, Tensor):
        if not p.is_floating_point():
            raise RuntimeError(f"bernoulli_ expects a floating point tensor p, got {p.dtype!r}")
        probs = p.data
        if np.any((probs < 0) | (probs > 1)):
            raise RuntimeError("bernoulli_ expects p to be in [0, 1]")
        np.broadcast_shapes(probs.shape, self.shape)   # (p must broadcast to self)
    else:
        probs = float(p)
        if not 0 <= probs <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={probs}")
    gen = generator_of(generator)
    return _fill(self, lambda a: _random.bernoulli_(gen, a, probs))


@op(function=False)
def random_(self: Tensor, from_: int | None = None, to: int | None = None,
             generator: Generator | None = None, **kw: Any) -> Tensor:
    """Whole numbers in [from, to); `to` alone (`x$random_(to = 10)`) from 0; with
    neither, libtorch's range for the dtype (floats: 0 to 2^mantissa bits)."""
    from_ = _from(from_, kw, "random_")
    if from_ is not None and to is not None and int(from_) >= int(to):
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={from_} >= to={to}")
    if self.is_complex():
        raise RuntimeError("random_ is not implemented for complex tensors")
    low = None if from_ is None and to is None else int(from_ or 0)
    high = None if to is None else int(to)
    gen = generator_of(generator)
    return _fill(self, lambda a: _random.random_(gen, a, low, high))


# --------------------------------------------------------------------------
# Gamma draws (what distr_gamma and distr_chi2 sample with): Marsaglia and
# Tsang's acceptance-rejection method, boosted below alpha = 1, as libtorch
# samples them (rtorch_py.random follows its stream); differentiable in alpha
# through the reparameterised gradient (libtorch's `_standard_gamma_grad`).


@formula
def StandardGammaBackward0(n, g, x, result):
    return (g * _standard_gamma_grad(x, result),)


@op(function=False, method=False)
def _standard_gamma(self: Tensor, generator: Generator | None = None) -> Tensor:
    """One Gamma(alpha, 1) draw per element alpha (at least the dtype's smallest
    normal number)."""
    if self.data.dtype.kind != "f":
        raise RuntimeError(f"\"_standard_gamma\" not implemented for '{self.dtype.r_name}'")
    out = _random.standard_gamma(generator_of(generator), self.data)
    return record(out, StandardGammaBackward0, (self,), (self, OUTPUT))


# The reparameterised gradient d x / d alpha of a Gamma(alpha, 1) draw x (the
# pathwise derivative, Jankowiak and Obermeyer 2018, as libtorch computes it):
# a series of the incomplete gamma function for small x, Rice's saddle-point
# expansion for large alpha, a fitted rational function in between.
_GAMMA_GRAD_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07]])


def _gamma_grad_small_x(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    numer = np.ones_like(x)
    denom = a.copy()
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x ** a
    pdf = x ** (a - 1) * np.exp(-x)
    cdf = pow_x_alpha * series1
    cdf_alpha = (np.log(x) - special.digamma(a)) * cdf - pow_x_alpha * series2
    out = -cdf_alpha / pdf
    return np.where(np.isnan(out), 0.0, out)


def _gamma_grad_large_alpha(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    near = (0.9 * a <= x) & (x <= 1.1 * a)
    numer_1 = 1 + 24 * a * (1 + 12 * a)
    numer_2 = 1440 * (a * a) + 6 * x * (53 - 120 * x) - 65 * x * x / a + a * (107 + 3600 * x)
    close = numer_1 * numer_2 / (1244160 * (a * a) * (a * a))
    denom = np.sqrt(8 * a)
    term2 = denom / (a - x)
    term3 = (x - a - a * np.log(x / a)) ** -1.5
    term23 = np.where(x < a, term2 - term3, term2 + term3)
    term1 = np.log(x / a) * term23 - np.sqrt(2 / a) * (a + x) / ((a - x) * (a - x))
    stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
    return np.where(near, close, -stirling * x * term1 / denom)


def _gamma_grad_rational(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    u, v = np.log(x / a), np.log(a)
    uu = u[..., None]
    c = _GAMMA_GRAD_UV[0] + uu * (_GAMMA_GRAD_UV[1] + uu * _GAMMA_GRAD_UV[2])
    p = c[..., 0] + v * (c[..., 1] + v * (c[..., 2] + v * c[..., 3]))
    q = c[..., 4] + v * (c[..., 5] + v * (c[..., 6] + v * c[..., 7]))
    return np.exp(p / q)


@op(samples=S.standard_gamma_grad, differentiable=False)
def _standard_gamma_grad(self: Tensor, output: Tensor) -> Tensor:
    """d output / d self for Gamma(self, 1) draws `output` (see above)."""
    a, x = np.broadcast_arrays(self.data.astype(np.float64), output.data.astype(np.float64))
    out = np.empty(a.shape)
    small = x < 0.8
    large = ~small & (a > 8)
    rest = ~small & ~large
    with np.errstate(all="ignore"):
        out[small] = _gamma_grad_small_x(a[small], x[small])
        out[large] = _gamma_grad_large_alpha(a[large], x[large])
        out[rest] = _gamma_grad_rational(a[rest], x[rest])
    return wrap(out.astype(np.result_type(self.data, output.data)))
