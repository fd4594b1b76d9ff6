"""Tensor constructors that are not ops of the registry: `torch_tensor`, the random
ones, dtypes, generators (`torch_zeros` and the other deterministic constructors
are declared in `ops/creation.py`)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import tensor as _tensor
from .formals import r_counted, r_formals
from .meta import meta_array
from .random import Generator, default_generator
from . import random as _random
from .tensor import (Layout, Tensor, as_dtype, bfloat16, bool_, complex32, complex64, complex128,
                     complex_half, float16, float32, float64, get_default_dtype, int8, int16,
                     int32, int64, result_type, set_default_dtype, set_names, strided, to_array,
                     uint8, wrap)
from .tensor import dtype as Dtype


# R torch's option `torch.old_seed_behavior` (luz's tests set it): torch_manual_seed
# then also seeds a second generator with a draw from the default one, and every
# draw R torch hands a NULL generator to libtorch for (the in-place fills, so layers'
# initialisation; torch_normal, torch_bernoulli, torch_poisson, torch_multinomial)
# comes from it. None when the option was off at the last torch_manual_seed.
_null_generator: Generator | None = None


def generator_of(generator: Generator | None, passed: bool = True) -> Generator:
    """The generator a random function draws from: the one given, else the
    process's (`torch_manual_seed`'s) -- or, under R torch's old seed behaviour,
    its second generator for the functions R torch passes a NULL generator on
    from (`passed`; torch_randn/rand/randint/randperm and the `_like` ones pass
    none, so they keep the process's)."""
    if generator is None:
        if passed and _null_generator is not None:
            return _null_generator
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch_generator(), got {type(generator).__name__}")
    return generator


def torch_generator() -> Generator:
    """A new generator, seeded as libtorch seeds one (67280421310721)."""
    return Generator()


def torch_manual_seed(seed: int, old_behavior: bool = False) -> None:
    """Seed the default generator behind torch_randn/rand/randint/... (libtorch's
    mt19937: the same seed gives R torch's and PyTorch's numbers). `old_behavior`
    is R torch's option `torch.old_seed_behavior`: a draw from the seeded generator
    seeds the one NULL generators stand for (see `generator_of`)."""
    global _null_generator
    default_generator.manual_seed(seed)
    _null_generator = None
    if old_behavior:
        draw = torch_randint(1, 1_000_000, size=1)
        _null_generator = Generator(int(draw.item()))


def torch_initial_seed() -> int:
    return default_generator.initial_seed()


def torch_seed() -> int:
    """Seed the default generator from the OS; returns the seed."""
    return default_generator.seed()


def torch_get_rng_state() -> Tensor:
    """The default generator's state: libtorch's 5056 bytes, as a uint8 tensor."""
    return wrap(default_generator.get_state())


def torch_set_rng_state(state: Any) -> None:
    """Restore a state from torch_get_rng_state() (or PyTorch's get_rng_state())."""
    arr = state.data if isinstance(state, Tensor) else np.asarray(state)
    if arr.dtype != np.uint8:
        raise TypeError(f"torch_set_rng_state() expects the uint8 tensor torch_get_rng_state() "
                        f"returns, got {wrap(np.asarray(arr)).dtype!r} values")
    default_generator.set_state(arr)


class SeedScope:
    """The default generator seeded until the scope closes, then its state as it
    was before (R torch's `local_torch_manual_seed()`): `restore()` or the end
    of a `with` block closes it."""

    def __init__(self, seed: int) -> None:
        self._saved = default_generator.get_state()
        default_generator.manual_seed(seed)

    def restore(self) -> None:
        default_generator.set_state(self._saved)

    def __enter__(self) -> "SeedScope":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.restore()


def local_torch_manual_seed(seed: int) -> SeedScope:
    """Seed the default generator now; the returned scope's `restore()` puts its
    state back."""
    return SeedScope(seed)


def with_torch_manual_seed(code: Callable[[], Any] | None = None, *, seed: int) -> Any:
    """`code()` run with the default generator seeded, its state restored
    afterwards; without `code`, a `with` block does the same."""
    scope = SeedScope(seed)
    if code is None:
        return scope
    with scope:
        return code()


def finish_tensor(arr: np.ndarray, dtype: Any, requires_grad: bool, default: Dtype | None = None,
                  names: Any = None, meta: bool = False) -> Tensor:
    """The new tensor: `arr` in the dtype asked for (else `default`, else the
    default dtype), on the meta device if `meta` (only arr's shape is kept)."""
    target = as_dtype(dtype).np if dtype is not None else (default or get_default_dtype()).np
    if meta:
        arr = meta_array(arr.shape, target)
    elif arr.dtype != target:
        arr = arr.astype(target)
    if dtype is not None and as_dtype(dtype) is complex32 and not meta:
        arr = complex_half(arr)
    t = wrap(arr)
    if names is not None:  # dim names
        set_names(t, names)
    if requires_grad:
        t.requires_grad = True
    return t


def size_arg(size: tuple) -> tuple:
    if len(size) == 1 and isinstance(size[0], (list, tuple, np.ndarray)):
        size = tuple(np.asarray(size[0]).reshape(-1).tolist())
    out = []
    for i, s in enumerate(size):
        if not isinstance(s, (int, float, np.integer, np.floating, np.bool_)):
            what = f"the string '{s}'" if isinstance(s, str) else f"a {type(s).__name__}"
            raise TypeError(f"size must be whole numbers, got {what} at position {i + 1}")
        s = int(s)
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
        out.append(s)
    return tuple(out)


# The device types libtorch knows (c10's parser): a device of any of them can be
# named (R's torch_device("cuda:1")); tensors live on the CPU, or on the meta
# device (a shape and a dtype, no data).
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")


def device_type(device: Any) -> str:
    """The type of a device ("cuda" for "cuda:1"); an unknown one refused as libtorch
    refuses it."""
    kind = str(device).split(":", 1)[0]
    if kind not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start "
                           f"of device string: {device}")
    return kind


def no_device(device: Any) -> RuntimeError:
    """The error for data asked to live on a device the engine has not: libtorch's
    words on a machine without it (R torch's on a CPU-only one), then what to do."""
    kind = device_type(device)
    where = ("PyTorch is not linked with support for meta devices here (a meta tensor has "
             "no data to hold)" if kind == "meta" else
             f"PyTorch is not linked with support for {kind} devices")
    return RuntimeError(f"{where}\n(rtorch-py computes on the CPU: use device = 'cpu', or "
                        "'meta' for tensors with a shape and no data)")


def strided_only(layout: Any, what: str | None = None) -> None:
    """Creation functions make strided tensors only: refuse another layout, rather
    than give a dense tensor for it."""
    if layout is not None and layout is not strided:
        by = f" by {what}()" if what else ""
        raise NotImplementedError(f"layout = {layout!r} is not supported{by}; make the dense "
                                  "tensor and convert it with to_sparse()")


# The device new tensors are made on when none is given (R torch's with_device()
# and local_device(); cpu or meta here)
_default_device = ["cpu"]


def set_default_device(device: Any) -> str:
    """Make tensors on `device` when none is given; returns the device it replaces."""
    kind = device_type(device)
    if kind not in ("cpu", "meta"):
        raise no_device(device)
    previous, _default_device[0] = _default_device[0], kind
    return previous


def check_device(device: Any) -> bool:
    """Whether the tensor is made on the meta device (a shape and a dtype, no
    data): the given device, else the default one; devices other than cpu and meta
    are refused."""
    if device is None:
        return _default_device[0] == "meta"
    kind = device_type(device)
    if kind in ("cpu", "meta"):
        return kind == "meta"
    raise no_device(device)


def no_values(size: tuple) -> np.ndarray:
    """What a creator on the meta device hands `_finish`: the size, no memory."""
    return np.broadcast_to(np.zeros((), np.float64), size)


def torch_tensor(data: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
    """A tensor from numbers, nested lists, a NumPy array (zero-copy where the
    dtype allows) or another tensor."""
    meta = check_device(device)
    t = wrap(to_array(data, dtype))
    if meta:
        t = t.to(device="meta")
    if requires_grad:
        t.requires_grad = True
    return t


@r_formals("..., names = NULL, dtype = NULL, layout = NULL, device = NULL, requires_grad = FALSE")
@r_counted(size="sizes")
def torch_empty(*size: Any, names: Any = None, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    size, meta = size_arg(size), check_device(device)
    # Values unspecified; zeros (what R torch's pages show, fresh memory) rather
    # than whatever NumPy's allocator held
    return finish_tensor(no_values(size) if meta else
                         np.zeros(size, dtype=as_dtype(dtype or get_default_dtype()).np), dtype,
                         requires_grad, names=names, meta=meta)


def _real_or_complex(dtype: Any, what: str, default: Dtype | None = None) -> Dtype:
    """The dtype a random function fills (the default dtype unless given), which
    must be floating or complex, as libtorch's uniform and normal kernels ask."""
    d = as_dtype(dtype) if dtype is not None else (default or get_default_dtype())
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{what} fills floating point or complex tensors, got dtype {d!r}; "
                           "use torch_randint() for integers")
    return d


def _drawn(size: Any, target: Dtype, device: Any, requires_grad: bool, names: Any,
           fill: Callable[[np.ndarray], Any]) -> Tensor:
    """A new tensor of `size` and dtype `target`, filled in place by `fill` (on
    the meta device: no values, nothing drawn)."""
    size, meta = size_arg(size), check_device(device)
    arr = no_values(size) if meta else np.empty(size, target.np)
    if not meta:
        fill(arr)
    return finish_tensor(arr, target, requires_grad, names=names, meta=meta)


@r_formals("..., names = NULL, dtype = NULL, layout = NULL, device = NULL, requires_grad = FALSE")
@r_counted(size="sizes")
def torch_randn(*size: Any, names: Any = None, dtype: Any = None, device: Any = None,
                requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    """Standard normal draws (libtorch's normal_: complex dtypes get half the
    variance in each part)."""
    gen = generator_of(generator, passed=False)
    return _drawn(size, _real_or_complex(dtype, "torch_randn"), device, requires_grad, names,
                  lambda a: _random.normal_(gen, a))


@r_formals("..., names = NULL, dtype = NULL, layout = NULL, device = NULL, requires_grad = FALSE")
@r_counted(size="sizes")
def torch_rand(*size: Any, names: Any = None, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    """Uniform draws on [0, 1)."""
    gen = generator_of(generator, passed=False)
    return _drawn(size, _real_or_complex(dtype, "torch_rand"), device, requires_grad, names,
                  lambda a: _random.uniform_(gen, a))


def _randint_range(low: Any, high: Any) -> tuple[int, int]:
    """randint's [low, high) (one bound: [0, low)), checked as libtorch's random_."""
    if high is None:
        low, high = 0, low
    low, high = int(low), int(high)
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    return low, high


def torch_randint(low: int, high: int | None = None, size: Any = None, dtype: Any = None,
                  device: Any = None, requires_grad: bool = False,
                  generator: Generator | None = None) -> Tensor:
    """Integers in [low, high), int64 unless `dtype` says otherwise;
    `torch_randint(high, size=)` also works."""
    if size is None:
        raise TypeError("torch_randint() needs a size, e.g. torch_randint(0, 10, size = c(2, 2))")
    low, high = _randint_range(low, high)
    gen = generator_of(generator, passed=False)
    target = as_dtype(dtype) if dtype is not None else int64
    return _drawn(size if isinstance(size, (list, tuple)) else (size,), target, device,
                  requires_grad, None, lambda a: _random.random_(gen, a, low, high))


@r_formals("size, stride, dtype = NULL, layout = NULL, device = NULL, requires_grad = FALSE, "
           "pin_memory = FALSE")
@r_counted(size="sizes", stride="sizes")
def torch_empty_strided(size: Any, stride: Any, dtype: Any = None, device: Any = None,
                        requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor whose memory has the given strides (in elements)."""
    meta = check_device(device)
    size, stride = size_arg((size,)), size_arg((stride,))
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: size has {len(size)} "
                           f"values, stride {len(stride)}")
    target = as_dtype(dtype or get_default_dtype()).np
    n = 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    if meta:
        return finish_tensor(no_values(size), dtype, requires_grad, meta=True)
    buf = np.zeros(n, dtype=target)
    arr = np.lib.stride_tricks.as_strided(buf, size, tuple(st * buf.itemsize for st in stride))
    return finish_tensor(arr, dtype, requires_grad)


@r_formals("n, dtype = torch_int64(), layout = NULL, device = NULL, requires_grad = FALSE")
@r_counted(n="integer")
def torch_randperm(n: int, dtype: Any = None, device: Any = None, requires_grad: bool = False,
                   generator: Generator | None = None) -> Tensor:
    """A random permutation of 0, ..., n - 1 (libtorch's shuffle)."""
    meta, n = check_device(device), int(n)
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got {n}")
    target = as_dtype(dtype) if dtype is not None else int64
    gen = generator_of(generator, passed=False)
    arr = no_values((n,)) if meta else _random.randperm(gen, n, target.np)
    return finish_tensor(arr, target, requires_grad, meta=meta)


def _float_operand(x: Any) -> Any:
    """A tensor operand of torch_normal as a floating array (integers become
    the default dtype); numbers stay numbers."""
    if not isinstance(x, Tensor):
        return float(x)
    return x.data if x.is_floating_point() else x.data.astype(get_default_dtype().np)


def torch_normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None,
                 generator: Generator | None = None, dtype: Any = None,
                 requires_grad: bool = False) -> Tensor:
    """Normal draws: `mean` and `std` numbers (then `size` is needed) or tensors
    (broadcast together; the result has their shape and float dtype), as
    libtorch's four overloads draw them."""
    gen = generator_of(generator)
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None or dtype is not None:
            raise ValueError("torch_normal(): size and dtype come from mean and std when either "
                             "is a tensor; leave them out, or give numbers for mean and std")
        m, s = _float_operand(mean), _float_operand(std)
        if np.any(np.asarray(s) < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        out = wrap(_random.normal(gen, m, s))
        if requires_grad:
            out.requires_grad = True
        return out
    if size is None:
        raise TypeError("torch_normal() with numbers for mean and std needs a size, e.g. "
                        "torch_normal(0, 1, size = c(2, 3))")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _drawn((size,), _real_or_complex(dtype, "torch_normal"), "cpu", requires_grad, None,
                  lambda a: _random.normal_(gen, a, float(mean), float(std)))


def _probabilities(self: Tensor, what: str) -> np.ndarray:
    if not (isinstance(self, Tensor) and self.is_floating_point()):
        got = self.dtype if isinstance(self, Tensor) else wrap(np.asarray(self)).dtype
        raise RuntimeError(f"{what} expects a floating-point tensor of probabilities, got "
                           f"{got!r}")
    return self.data


def torch_bernoulli(self: Tensor, p: Any = None, generator: Generator | None = None) -> Tensor:
    """0/1 draws in self's dtype, each 1 with probability `self` (or `p`, a
    number, for every element)."""
    gen = generator_of(generator)
    if p is None:
        probs = _probabilities(self, "bernoulli")
        if np.any((probs < 0) | (probs > 1)):
            raise RuntimeError("bernoulli expects all probabilities in [0, 1]")
        return wrap(_random.bernoulli(gen, probs))
    p = float(p.item() if isinstance(p, Tensor) else p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli expects p to be in [0, 1], but got p={p}")
    return wrap(_random.bernoulli_(gen, np.empty(self.shape, self.data.dtype), p))


def torch_poisson(self: Tensor, generator: Generator | None = None) -> Tensor:
    """Poisson draws with rates `self`, in self's dtype."""
    rates = _probabilities(self, "poisson")
    if np.any(rates < 0):
        raise RuntimeError("poisson expects all rates to be non-negative")
    return wrap(_random.poisson(generator_of(generator), rates))


@r_counted(num_samples="integer")
def torch_multinomial(self: Tensor, num_samples: int, replacement: bool = False,
                      generator: Generator | None = None) -> Tensor:
    """Category indices (0-based) drawn from each row's weights `self`."""
    w = _probabilities(self, "multinomial")
    if w.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {w.ndim}")
    n = int(num_samples)
    rows = w.reshape(-1, w.shape[-1]).astype(np.float64)
    if np.any(rows < 0) or np.any(~np.isfinite(rows)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.sum(-1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and n > rows.shape[-1]:
        raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without "
                           f"replacement ({n} > {rows.shape[-1]}); set replacement = TRUE")
    if not replacement and np.any((rows > 0).sum(-1) < n):
        # (libtorch 2.8 orders the zero-weight categories by its sort's ties)
        raise RuntimeError("invalid multinomial distribution (with replacement=False, not "
                           "enough non-negative category to sample)")
    return wrap(_random.multinomial(generator_of(generator), w, n, bool(replacement)))


def _like(x: Tensor, dtype: Any) -> Any:
    return dtype if dtype is not None else x.dtype


def _empty_like(x: Tensor, dtype: Dtype) -> np.ndarray:
    """libtorch's empty_like with its preserved memory format: a dense array
    keeps x's strides (a transposed one stays transposed), others are new
    C-contiguous arrays."""
    arr = x.data
    order = np.argsort([-s for s in arr.strides], kind="stable")
    expected = arr.itemsize
    dense = True
    for axis in order[::-1]:        # innermost first
        if arr.shape[axis] != 1 and arr.strides[axis] != expected:
            dense = False
        expected *= arr.shape[axis]
    if dense and arr.size:
        return np.empty_like(arr, dtype=dtype.np, order="K")
    return np.empty(arr.shape, dtype.np)


def _drawn_like(x: Tensor, dtype: Dtype, requires_grad: bool,
                fill: Callable[[np.ndarray], Any]) -> Tensor:
    arr = _empty_like(x, dtype)
    fill(arr)
    return finish_tensor(arr, dtype, requires_grad)


@r_formals("input, dtype = NULL, layout = NULL, device = NULL, requires_grad = FALSE, "
           "memory_format = NULL", python_names={"input": "x"})
def torch_empty_like(x: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return torch_empty(x.shape, dtype=_like(x, dtype), requires_grad=requires_grad)


@r_formals("input, dtype = NULL, layout = NULL, device = NULL, requires_grad = FALSE, "
           "memory_format = NULL", python_names={"input": "x"})
def torch_randn_like(x: Tensor, dtype: Any = None, requires_grad: bool = False,
                     generator: Generator | None = None) -> Tensor:
    gen = generator_of(generator, passed=False)
    return _drawn_like(x, _real_or_complex(_like(x, dtype), "torch_randn_like"), requires_grad,
                       lambda a: _random.normal_(gen, a))


@r_formals("input, dtype = NULL, layout = NULL, device = NULL, requires_grad = FALSE, "
           "memory_format = NULL", python_names={"input": "x"})
def torch_rand_like(x: Tensor, dtype: Any = None, requires_grad: bool = False,
                    generator: Generator | None = None) -> Tensor:
    gen = generator_of(generator, passed=False)
    return _drawn_like(x, _real_or_complex(_like(x, dtype), "torch_rand_like"), requires_grad,
                       lambda a: _random.uniform_(gen, a))


@r_formals("input, low, high, dtype = NULL, layout = NULL, device = NULL, requires_grad = FALSE",
           python_names={"input": "x"})
@r_counted(low="integer", high="integer")
def torch_randint_like(x: Tensor, low: int, high: int | None = None, dtype: Any = None,
                       requires_grad: bool = False,
                       generator: Generator | None = None) -> Tensor:
    low, high = _randint_range(low, high)
    gen = generator_of(generator, passed=False)
    return _drawn_like(x, as_dtype(_like(x, dtype)), requires_grad,
                       lambda a: _random.random_(gen, a, low, high))


# dtype constructors, as R torch spells them

def torch_float() -> Dtype: return float32
def torch_float32() -> Dtype: return float32
def torch_double() -> Dtype: return float64
def torch_float64() -> Dtype: return float64
def torch_long() -> Dtype: return int64
def torch_int64() -> Dtype: return int64
def torch_int() -> Dtype: return int32
def torch_int32() -> Dtype: return int32
def torch_bool() -> Dtype: return bool_
def torch_float16() -> Dtype: return float16
def torch_half() -> Dtype: return float16
def torch_bfloat16() -> Dtype: return bfloat16
def torch_float8_e4m3fn() -> Dtype: return _tensor.float8_e4m3fn
def torch_float8_e5m2() -> Dtype: return _tensor.float8_e5m2
def torch_quint8() -> Dtype: return _tensor.quint8
def torch_qint8() -> Dtype: return _tensor.qint8
def torch_qint32() -> Dtype: return _tensor.qint32
def torch_uint8() -> Dtype: return uint8
def torch_int8() -> Dtype: return int8
def torch_int16() -> Dtype: return int16
def torch_short() -> Dtype: return int16
def torch_cfloat() -> Dtype: return complex64
def torch_cfloat32() -> Dtype: return complex32  # (R torch's: ComplexHalf, as torch_chalf())
def torch_chalf() -> Dtype: return complex32
def torch_complex64() -> Dtype: return complex64
def torch_cdouble() -> Dtype: return complex128
def torch_cfloat64() -> Dtype: return complex64  # (R torch counts both parts: ComplexFloat)
def torch_complex128() -> Dtype: return complex128


def torch_get_default_dtype() -> Dtype:
    return get_default_dtype()


def torch_set_default_dtype(d: Any) -> None:
    """Make `d` (torch_float32() or torch_float64()) the dtype floats become."""
    set_default_dtype(d)


class finfo(dict):
    """Machine limits of a floating dtype (`torch_finfo()`): bits, eps, max, min,
    tiny, smallest_normal, resolution; readable as fields or by name."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def torch_finfo(dtype: Any = None) -> finfo:
    d = as_dtype(dtype) if dtype is not None else get_default_dtype()
    if not (d.is_floating_point or d.is_complex):
        raise TypeError(f"torch_finfo() needs a floating point dtype, got {d!r}; "
                        "use torch_iinfo() for integer dtypes")
    if d is bfloat16:  # (NumPy's finfo knows only its own floats)
        import ml_dtypes
        i = ml_dtypes.finfo(d.np)
    else:
        i = np.finfo(d.np)
    return finfo(bits=int(i.bits), eps=float(i.eps), max=float(i.max), min=float(i.min),
                 tiny=float(i.tiny), smallest_normal=float(i.smallest_normal),
                 resolution=float(10.0 ** -int(i.precision)), dtype=d.name)


def torch_iinfo(dtype: Any) -> finfo:
    d = as_dtype(dtype)
    if d.np.kind not in "iub":
        raise TypeError(f"torch_iinfo() needs an integer dtype, got {d!r}; "
                        "use torch_finfo() for floating point dtypes")
    i = np.iinfo(np.uint8 if d.np.kind == "b" else d.np)
    return finfo(bits=int(i.bits), max=int(i.max), min=int(i.min), dtype=d.name)


def torch_result_type(tensor1: Any, tensor2: Any) -> Dtype:
    """The dtype an arithmetic op on these two operands gives (PyTorch's promotion:
    tensors with dims beat 0-d tensors, which beat numbers, within a category)."""
    return result_type(tensor1, tensor2)


def torch_promote_types(type1: Any, type2: Any) -> Dtype:
    """The dtype two dtypes promote to (PyTorch's promotion table)."""
    return _tensor.promote_types(as_dtype(type1), as_dtype(type2))


def torch_can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch's casting rules allow `from_` to become `to` in an op's
    result: never complex to real, floating to integral, or anything but bool
    to bool."""
    a, b = as_dtype(from_), as_dtype(to)
    if a.is_complex and not b.is_complex:
        return False
    if a.is_floating_point and not (b.is_floating_point or b.is_complex):
        return False
    return not (b is bool_ and a is not bool_)


class Scalar:
    """R torch's `torch_scalar()`: a number as libtorch's Scalar."""

    def __init__(self, value: Any) -> None:
        if not isinstance(value, (bool, int, float, complex)):
            raise TypeError(f"torch_scalar() takes a single number or logical, got "
                            f"{type(value).__name__}")
        self.value = value

    def to_r(self) -> Any:
        return self.value

    def __repr__(self) -> str:
        return f"torch_scalar({self.value!r})"


def torch_scalar(value: Any) -> Scalar:
    return Scalar(value)


def is_torch_scalar(x: Any) -> bool:
    return isinstance(x, Scalar)


class _Constant:
    """R torch's layout and memory-format objects (`torch_strided()`, ...): only
    their names matter here, every tensor being a strided CPU array."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Constant) and other.name == self.name

    __hash__ = object.__hash__


# libtorch's loss reduction codes (R torch's torch_reduction_*()), as doubles
def torch_reduction_none() -> float: return 0.0
def torch_reduction_mean() -> float: return 1.0
def torch_reduction_sum() -> float: return 2.0


class MemoryFormat(_Constant):
    """R torch's memory formats (`torch_contiguous_format()`, ...)."""


class QScheme(_Constant):
    """R torch's quantization schemes (`torch_per_tensor_affine()`, ...)."""


def torch_strided() -> Layout: return _tensor.strided
def torch_sparse_coo() -> Layout: return _tensor.sparse_coo
def torch_contiguous_format() -> MemoryFormat: return MemoryFormat("torch_contiguous_format")
def torch_preserve_format() -> MemoryFormat: return MemoryFormat("torch_preserve_format")
def torch_channels_last_format() -> MemoryFormat:
    return MemoryFormat("torch_channels_last_format")
def torch_per_tensor_affine() -> QScheme: return QScheme("torch_per_tensor_affine")
def torch_per_channel_affine() -> QScheme: return QScheme("torch_per_channel_affine")
def torch_per_tensor_symmetric() -> QScheme: return QScheme("torch_per_tensor_symmetric")
def torch_per_channel_symmetric() -> QScheme: return QScheme("torch_per_channel_symmetric")
def torch_cfloat128() -> Dtype: return complex128


def is_torch_dtype(x: Any) -> bool:
    return isinstance(x, Dtype)


def is_torch_layout(x: Any) -> bool:
    return isinstance(x, Layout)


def is_torch_memory_format(x: Any) -> bool:
    return isinstance(x, MemoryFormat)


def is_torch_qscheme(x: Any) -> bool:
    return isinstance(x, QScheme)


def as_array(x: Tensor) -> np.ndarray:
    """The tensor's values as a NumPy array."""
    if not isinstance(x, Tensor):
        raise TypeError(f"as_array() expects a tensor, got {type(x).__name__}")
    return x.data


def is_torch_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)
