"""What R calls that is not an op: tensor creation with R's conventions, tensor
properties (`x$grad`, `x$shape`), the tensor methods that are not ops
(`x$backward()`, `x$size()`, ...), and autograd's entry points.

Ops (`torch_add`, `x$sum(dim = 1)`, `x * 2`) are not here: their R forms are
generated from the op registry in `tables.py`.
"""
from __future__ import annotations

import functools
import inspect
import operator
import re
import warnings
from typing import Any, Callable

import numpy as np

from .. import TENSOR_METHODS
from ..formals import counted, r_formals
from .. import amp as _amp
from .. import autograd as _ag
from .. import constructors as _cr
from .. import engine as _eng
from .. import forward_ad as _fwd
from .. import named
from .. import quantized as _q
from .. import runtime
from .. import sparse as _sparse
from ..contrib import contrib_sort_vertices
from ..engine import Node, RemovableHandle, bump_version
from ..function import NamedList
from ..gradcheck import autograd_gradcheck
from ..ops import methods as op_methods
from ..ops.views import check_inplace
from ..printing import format_grad_fn
from ..sparse import strided_only
from ..tensor import (BF16, MODES, Storage, Tensor, as_dtype, converted, dtype,
                      strided, wrap)
from . import binding, one_based
from .one_based import integer, sizes
from .convert import (MISSING, UNDEFINED, Scope, _check_r_data, _list, _r_data, _r_value,
                      _tensor_of, _undef)
from .in_r import step_ended


# --------------------------------------------------------------------------
# Creation

def torch_tensor(data: Any = None, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    _check_r_data(data) if data is not None else None
    if data is None:
        return _cr.torch_tensor(np.zeros(0, dtype=np.bool_), dtype=dtype,
                                requires_grad=requires_grad)
    if isinstance(data, Tensor):
        out = wrap(data.data.astype(as_dtype(dtype).np) if dtype is not None else
                   data.data.copy())
        if requires_grad:
            out.requires_grad = True
        return out
    return _cr.torch_tensor(_r_data(data, dtype), dtype=dtype, device=device or "cpu",
                            requires_grad=requires_grad)


def torch_scalar_tensor(value: Any, dtype: Any = None, device: Any = None,
                        requires_grad: bool = False) -> Tensor:
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError("values must be length 1")
        out = value.reshape(())
        if dtype is not None:
            out = out.to(dtype=dtype)
        return out.requires_grad_(requires_grad) if requires_grad else out
    if isinstance(value, np.ndarray) and value.size != 1:
        raise ValueError("value must be a length 1 vector")
    out = torch_tensor(value, dtype=dtype)
    out = wrap(out.data.reshape(()))
    if requires_grad:
        out.requires_grad = True
    return out


def sizes_given(args: list, kw: dict) -> tuple[list, dict]:
    """torch_zeros(2, 3), torch_zeros(c(2, 3)) or torch_zeros(size = c(2, 3)): the
    sizes as given by position (an op's R convention "sizes", tables.py)."""
    if "size" in kw:
        if args:
            raise TypeError("You should specify a single size argument.")
        args = [kw.pop("size")]
    return args, kw


def creation_options(args: list, kw: dict, what: str | None = None,
                     device: bool = True) -> tuple:
    """R torch's creation options the engine has no use for (an R convention,
    tables.py): layout (strided only, refused naming `what`), memory_format,
    pin_memory; the device given is the CPU's or the meta device (passed on where
    the function takes a `device`)."""
    strided_only(kw.pop("layout", None), what)
    for k in ("memory_format", "pin_memory"):
        kw.pop(k, None)
    given = kw.pop("device", None)
    meta = _cr.check_device(given)  # (refuses devices other than these two)
    if given is not None and device:
        kw["device"] = "meta" if meta else "cpu"
    return args, kw


def _bound(name: str, fn: Callable, *conventions: Callable, device: bool = True,
           returns_indices: bool = False) -> Callable:
    """An engine function as R calls it, by the one binder: its arguments cast as
    their annotations and `@r_counted` say (whole numbers, sizes), R torch's creation
    options and `conventions` taken first; its result's positions 1-based with
    `returns_indices`."""
    options = functools.partial(creation_options, what=name, device=device)
    return binding.r_callable(fn, binding.RFacts(
        name, counted(fn), returns_indices, arguments=(*conventions, options)))


def torch_randint(low: Any, high: Any = None, size: Any = None, generator: Any = None,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """R torch's randint: the default (floating) dtype unless `dtype` says otherwise."""
    if size is None and high is not None and not isinstance(high, (int, float)):
        size, high = high, None
    # R torch asks libtorch's randint for the default dtype (a float), where
    # PyTorch's (and the Python API's) default is int64.
    return _cr.torch_randint(integer(low), None if high is None else integer(high),
                             size=sizes([size]), dtype=dtype or _cr.get_default_dtype(),
                             requires_grad=requires_grad, generator=generator)


@r_formals("mean, std, size = NULL, generator = NULL, ...")
def torch_normal(mean: Any = 0, std: Any = 1, size: Any = None, generator: Any = None,
                 dtype: Any = None, layout: Any = None, device: Any = None,
                 requires_grad: bool = False, **kw: Any) -> Tensor:
    return _cr.torch_normal(_tensor_of(mean), _tensor_of(std),
                            None if size is None else sizes([size]), generator=generator,
                            dtype=dtype, requires_grad=requires_grad)


def _read_integer(text: Any, unsigned: bool = False) -> int:
    """The integer C++'s `istringstream >> value` reads from `text`, as R torch
    reads the seeds R hands it as text (`as.character(seed)`): the leading
    digits only (R prints 1e+05 for 100000: R torch reads 1), out-of-range
    values saturated, a minus sign wrapping an unsigned value."""
    found = re.match(r"\s*([+-]?\d+)", str(text))
    if found is None:
        raise ValueError(f"a seed must be an integer, got {text!r}")
    value = int(found.group(1))
    if unsigned:
        magnitude = min(abs(value), (1 << 64) - 1)
        return magnitude if value >= 0 else (1 << 64) - magnitude
    return max(-(1 << 63), min(value, (1 << 63) - 1))


def manual_seed(seed: Any, old_behavior: bool = False) -> None:
    """torch_manual_seed() from R, given the seed as R's text (and R torch's
    option `torch.old_seed_behavior`)."""
    _cr.torch_manual_seed(_read_integer(seed), bool(old_behavior))


_GENERATOR_METHODS = {"current_seed", "set_current_seed", "manual_seed", "seed",
                      "initial_seed"}


def generator_method_of(g: Any, name: str) -> Callable:
    """The Python method behind `g$name` (its signature is the R closure's)."""
    if name not in _GENERATOR_METHODS:
        raise AttributeError(f"a torch_generator has no method `{name}`; it has "
                             f"{', '.join(sorted(_GENERATOR_METHODS))}")
    return getattr(type(g), name)


def generator_method(g: Any, name: str, *args: Any) -> Any:
    """`g$current_seed()`, `g$set_current_seed(seed)` (R torch's; the seed as R's
    text, as R torch passes it), and PyTorch's `g$manual_seed(1)`, `g$seed()`,
    `g$initial_seed()`: what R's `$.torch_generator` calls. Seeds go to R as
    text, which R makes integer64 (R doubles cannot hold 64 bits)."""
    generator_method_of(g, name)
    if name == "set_current_seed":
        (seed,) = args
        g.manual_seed(_read_integer(seed, unsigned=True))
        return None
    if name == "manual_seed":
        (seed,) = args
        return g.manual_seed(integer(seed, "seed"))
    if name == "current_seed":
        return str(g.initial_seed())
    return float(getattr(g, name)())


def stride(self: Tensor, dim: Any = None) -> Any:
    """The step in elements between neighbours along each dim (or along `dim`, 1-based)."""
    st = [s // self.data.itemsize for s in self.data.strides]
    if dim is None:  # (doubles, as R torch returns them)
        return np.asarray(st, dtype=np.float64)
    return float(st[one_based.dim(dim, self.ndim)])


def torch_tensor_from_buffer(buffer: Any, shape: Any, dtype: Any = "float") -> Tensor:
    """A tensor of `dtype` and `shape` over the bytes of `buffer`, sharing them (as
    R torch does): writing to the tensor writes to the buffer. From R the buffer
    is the R vector itself (an RObject exporting R's memory); from Python any
    object with the buffer protocol, e.g. a NumPy array."""
    try:
        arr = np.frombuffer(buffer, dtype=np.uint8) if not isinstance(buffer, np.ndarray) \
            else buffer.reshape(-1).view(np.uint8)  # (a C-contiguous array: a view, else a copy)
    except TypeError:
        raise TypeError("torch_tensor_from_buffer(): the buffer must hold memory to share (an "
                        "R vector, a NumPy array, a bytearray...), got a "
                        f"{type(buffer).__name__}") from None
    target = as_dtype(dtype).np
    size = sizes([shape])
    need = int(np.prod(size)) * target.itemsize
    if arr.size != need:
        raise ValueError(f"torch_tensor_from_buffer(): the buffer has {arr.size} bytes, shape "
                         f"{list(size)} of {as_dtype(dtype)!r} needs {need}")
    if arr.ctypes.data % target.itemsize:  # (R's vectors are aligned: never from R)
        arr = arr.copy()
    return wrap(arr.view(target).reshape(size))


def buffer_from_torch_tensor(tensor: Tensor) -> np.ndarray:
    """The tensor's bytes (in row-major order) as an R raw vector."""
    return np.ascontiguousarray(tensor.data).reshape(-1).view(np.uint8).copy()


def int64_bits(x: Tensor) -> np.ndarray:
    """The tensor as int64, its bits in doubles: what R's bit64 keeps in an
    integer64 vector (R adds the class)."""
    arr = x.data.astype(np.int64)
    arr = arr.reshape(1) if arr.ndim == 0 else np.asfortranarray(arr)
    return arr.view(np.float64)


def data_ptr(self: Tensor) -> str:
    """R torch's `x$data_ptr()`: the first element's address, as C++ prints it."""
    return f"{self.data_ptr():#x}"


def storage_method_of(s: Storage, name: str) -> Callable:
    """The Python method behind `s$name` of `x$storage()`: data_ptr or nbytes."""
    if name not in ("data_ptr", "nbytes"):
        raise AttributeError(f"a torch_storage has no method `{name}`; it has data_ptr and "
                             "nbytes")
    return getattr(Storage, name)


def storage_method(s: Storage, name: str) -> Any:
    """`s$data_ptr()` (a string, as R torch's) and `s$nbytes()`."""
    return f"{s.data_ptr():#x}" if name == "data_ptr" else getattr(s, name)()


def _dtypes() -> dict[str, Callable]:
    """torch_float(), torch_int8(), torch_cfloat(), ... and the layout, memory format,
    qscheme and loss reduction constants: creation's functions of no argument giving one."""
    kinds = ("Dtype", "Layout", "MemoryFormat", "QScheme")
    return {n: f for n, f in vars(_cr).items() if n.startswith("torch_reduction_") or
            n.startswith("torch_") and inspect.isfunction(f) and
            not inspect.signature(f).parameters and inspect.signature(f).return_annotation in kinds}


# What as_array() gives R for dtypes R has no vector type of (R torch: half as
# double; int8/int16 as integer, where R torch errors; uint8 stays, as R raw).
_AS_R = {np.dtype(np.float16): np.float64, np.dtype(np.int8): np.int32,
         np.dtype(np.int16): np.int32}
if BF16 is not None:
    _AS_R[BF16] = np.float64


def as_array(x: Any) -> Any:
    """R torch's as_array: long tensors come back as R integers; matrices and
    arrays with dims; 0-d and 1-d tensors as plain vectors; uint8 as raw,
    complex as complex."""
    if x is UNDEFINED:
        raise RuntimeError("Can't convert an undefined tensor to an R array")
    if not isinstance(x, Tensor):
        raise TypeError(f"as_array() expects a tensor, got {type(x).__name__}")
    if x.layout is not strided:  # (R torch's message)
        raise RuntimeError("Sparse tensors are not supported for as_array conversion.\n"
                           "\u2139 Use `as_array(x$to_dense())` to convert to a dense tensor "
                           "first.")
    if MODES:
        converted(x, "an R value")
    if x.device == "meta":
        raise RuntimeError("as_array() of a meta tensor: it has a shape and a dtype but no "
                           "values (create it on the cpu device to compute values)")
    if x.data.dtype.names:  # quantized: the values it stands for, as R torch gives them
        x = x.dequantize()
    arr = x.data
    if arr.dtype == np.int64:
        if arr.size and (arr.max() > 2**31 - 1 or arr.min() < -2**31 + 1):
            warnings.warn("Converting integers > .Machine$integer.max is undefined and "
                          "returns wrong results.", stacklevel=2)
        arr = arr.astype(np.int32)
    elif arr.dtype in _AS_R:
        arr = arr.astype(_AS_R[arr.dtype])
    if arr.ndim == 0:
        return arr.reshape(1)
    if arr.ndim == 1:
        return np.ascontiguousarray(arr)
    return np.asfortranarray(arr)


def torch_sparse_coo_tensor(indices: Any, values: Any, size: Any = None, dtype: Any = None,
                            device: Any = None, requires_grad: bool = False) -> Tensor:
    """R torch's form: the indices 1-based (a sparse_dim x nnz matrix or tensor)."""
    idx = _tensor_of(indices)
    arr = idx.data if isinstance(idx, Tensor) else np.asarray(indices)
    if arr.size and arr.dtype.kind in "iuf" and arr.min() < 1:
        raise IndexError(f"torch_sparse_coo_tensor(): indices start at 1, found {arr.min():g}")
    return _sparse.torch_sparse_coo_tensor(
        one_based.labels(arr), _tensor_of(values),
        None if size is None else sizes([size]), dtype, None if device is None else str(device),
        bool(requires_grad))


def is_undefined_tensor(x: Any) -> bool:
    return x is UNDEFINED


# --------------------------------------------------------------------------
# Tensor properties ($ without a call) and assignment ($<-)


_GETTERS: dict[str, Callable[[Tensor], Any]] = {
    # (the Tensor's own attributes, as they are)
    **{n: operator.attrgetter(n) for n in ("dtype", "requires_grad", "grad_fn", "is_leaf", "ndim",
                                           "device", "real", "imag", "retains_grad", "layout")},
    "shape": lambda x: np.asarray(x.shape, dtype=np.int32),
    "grad": lambda x: _r_value(x.grad),
    "is_cuda": lambda x: False,
    "names": named.r_names,
}


def tensor_get(x: Any, name: str) -> Any:
    if x is UNDEFINED:
        if name in ("requires_grad", "is_leaf"):
            return False
        raise RuntimeError(f"can't read ${name} of an undefined tensor")
    get = _GETTERS.get(name)
    return MISSING if get is None else get(x)


def tensor_set(x: Tensor, name: str, value: Any) -> Tensor:
    if name == "requires_grad":
        x.requires_grad = bool(value)
    elif name == "grad":
        x.grad = _undef(value)
    elif name in ("real", "imag") and x.is_complex():  # writes that part in place
        _set_part(x, name, value)
    elif name == "names":
        named.set_names(x, value)
    else:
        raise RuntimeError(f"can't set ${name} of a tensor (only requires_grad, grad "
                           "and names)")
    return x


def _set_part(x: Tensor, name: str, value: Any) -> None:
    check_inplace(x)
    part = x.data.real if name == "real" else x.data.imag
    part[...] = value.data if isinstance(value, Tensor) else value
    bump_version(x)


def tensor_repr(x: Any, n: Any = 30) -> str:
    """What print(x, n) shows (without the final newline); n = -1 shows all."""
    if not isinstance(x, Tensor) or n == 30:
        return repr(x)
    if x.layout is not strided:
        return _sparse.format_sparse(x, integer(n, "n")).rstrip("\n")
    return x._format(integer(n, "n"))


def node_get(node: Node, name: str) -> Any:
    if name == "next_functions":
        # Inputs without a graph (R numbers, tensors not requiring grad) have
        # no node to show.
        return [n for n, _ in node.next_functions if n is not None]
    if name == "name":
        return _node_name(node)
    return None


def _node_name(node: Node) -> str:
    # libtorch names its own accumulator node by its C++ type
    return "torch::autograd::AccumulateGrad" if node.name == "AccumulateGrad" else node.name


def node_repr(node: Node) -> str:
    return format_grad_fn(_node_name(node))


dtype_repr = repr


def dtype_eq(a: Any, b: Any) -> bool:
    for v in (a, b):
        if not isinstance(v, dtype):
            raise TypeError(f"can't compare a dtype with {'NULL' if v is None else repr(v)}: "
                            "it is not a dtype")
    return a is b


# --------------------------------------------------------------------------
# Tensor methods that are not ops


def size(self: Tensor, dim: Any = None) -> Any:
    if dim is None:
        return np.asarray(self.shape, dtype=np.int32)
    if isinstance(dim, str):  # a dim's name
        return self.shape[named.position(self, dim)]
    if integer(dim, "dim") == 0:  # (R torch's x$size() says it in words of its own)
        raise RuntimeError("Indexing starts at 1 and got a 0.")
    return self.shape[one_based.dim(dim, self.ndim)]


def cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    return self if self.device == "cpu" else self.to(device="cpu")  # (meta: refused)


def cpu_only(device: Any) -> None:
    """Refuses a device other than the CPU (for modules, whose data has no meta form)."""
    if device is not None and _cr.device_type(device) != "cpu":
        raise _cr.no_device(device)


def cuda(self: Tensor, device: Any = None, non_blocking: bool = False,
         memory_format: Any = None) -> Tensor:
    """R torch's x$cuda(): refused as libtorch without CUDA refuses it."""
    return self.to(device="cuda" if device is None else device)


def backward(self: Tensor, gradient: Any = None, retain_graph: Any = None,
             create_graph: bool = False, inputs: Any = None, **kw: Any) -> None:
    if "keep_graph" in kw:
        retain_graph = kw.pop("keep_graph")
    if kw:
        raise TypeError(f"unused argument(s): {', '.join(kw)}")
    gradient = _undef(gradient)
    if isinstance(gradient, list) and not gradient:
        gradient = None
    self.backward(gradient, retain_graph, bool(create_graph),
                  None if inputs is None else _list(inputs))
    step_ended()


def is_inference(self: Tensor) -> bool:
    """No inference mode here: every tensor is a normal one."""
    return False


def output_nr(self: Tensor) -> int:
    """Which output of its grad_fn the tensor is (0 for a leaf), as libtorch counts."""
    return self._output_nr


def register_hook(self: Tensor, hook: Callable) -> RemovableHandle:
    def call(grad: Tensor) -> Any:
        out = hook(grad)
        return out if isinstance(out, Tensor) else None  # as R torch: non-tensors ignored
    return self.register_hook(call)


def is_contiguous(self: Tensor) -> bool:
    return bool(self.data.flags.c_contiguous)


# --------------------------------------------------------------------------
# Autograd functions


@r_formals("tensors, grad_tensors = NULL, retain_graph = create_graph, create_graph = FALSE")
def autograd_backward(tensors: Any, grad_tensors: Any = None, retain_graph: Any = None,
                      create_graph: bool = False, inputs: Any = None) -> None:
    _ag.autograd_backward(_list(tensors), _grads(grad_tensors), retain_graph,
                          bool(create_graph), None if inputs is None else _list(inputs))
    step_ended()


def _grads(given: Any) -> list | None:
    """R's gradients of the outputs (undefined tensors: none given), None if none is."""
    grads = None if given is None else [_undef(g) for g in _list(given)]
    return grads if grads and any(g is not None for g in grads) else None


def autograd_grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: Any = None,
                  create_graph: bool = False, allow_unused: bool = False) -> list:
    # As libtorch's C++ autograd::grad (so R torch): a grad_output of another
    # shape than its output flows into the graph unchecked.
    got = _ag.autograd_grad(_list(outputs), _list(inputs), _grads(grad_outputs), retain_graph,
                            bool(create_graph), bool(allow_unused), check_shapes=False)
    return [_r_value(g) for g in got]


# grad mode set, the previous one returned (what R restores on exit); and read
set_grad_mode, is_grad_enabled = _eng.set_grad_enabled, _eng.is_grad_enabled


def _entered(context: Any) -> Scope:
    """`context` entered; the scope's restore() exits it (R's on.exit)."""
    context.__enter__()
    return Scope(lambda: context.__exit__(None, None, None))


def anomaly_scope() -> Scope:
    return _entered(_eng.detect_anomaly())


def scope_exit(scope: Scope) -> None:
    scope.restore()


def dual_level_scope() -> Scope:
    """A dual level (forward mode) entered."""
    return _entered(_fwd.dual_level())


# --------------------------------------------------------------------------
# What R gets from here (the ops' tables are generated in tables.py)

def set_grad_(self: Tensor, new_grad: Any) -> Tensor:
    """R torch's `x$set_grad_(g)`: `x$grad <- g`."""
    self.grad = _undef(new_grad)
    return self


# (R torch's categories are 1-based)
_MULTINOMIAL = _bound("torch_multinomial", _cr.torch_multinomial, returns_indices=True)


def _methods() -> dict[str, Callable]:
    """R's tensor methods besides the ops' (tables.py): the Tensor methods declared in
    rtorch_py.TENSOR_METHODS (a property R has no field of is a method in R:
    `x$is_quantized()`), in R's form where it differs, and R torch's others."""
    ops = op_methods()
    declared = {k: m.fget if isinstance(m, property) else m
                for k, m in TENSOR_METHODS.items()
                if k not in ops and not (isinstance(m, property) and k in _GETTERS)}
    as_is = ("item", "retain_grad", "detach", "detach_", "numel", "dim", "is_floating_point",
             "element_size", "is_complex", "storage", "requires_grad_")
    r_forms = (backward, size, set_grad_, cpu, cuda, register_hook,
               is_contiguous, stride, data_ptr, is_inference, output_nr)
    return {**declared, **{k: getattr(Tensor, k) for k in as_is},
            **{f.__name__: f for f in r_forms}, "multinomial": _MULTINOMIAL,
            "data": Tensor.detach,  # (R torch's: the values without history)
            **named.r_methods(),  # has_names, rename, rename_, refine_names, align_to
            "_version": lambda self: self._version[0],  # (the in-place change counter)
            "retains_grad": lambda self: self.retains_grad}


METHODS = _methods()

FUNCTIONS: dict[str, Callable] = {
    "torch_tensor": torch_tensor, "torch_scalar_tensor": torch_scalar_tensor,
    **{n: _bound(n, getattr(_cr, n), sizes_given) for n in ("torch_empty", "torch_randn",
                                                             "torch_rand")},
    **{n: _bound(n, getattr(_cr, n), device=False) for n in (
        "torch_empty_like", "torch_randn_like", "torch_rand_like", "torch_randint_like")},
    **{n: _bound(n, getattr(_cr, n)) for n in ("torch_randperm", "torch_empty_strided")},
    "torch_randint": torch_randint,
    **_dtypes(),
    # creation's own, as they are
    **{name: getattr(_cr, name) for name in (
        "torch_get_rng_state", "torch_set_rng_state", "torch_bernoulli", "torch_poisson",
        "torch_generator", "torch_set_default_dtype", "torch_initial_seed", "torch_seed",
        "torch_result_type", "torch_promote_types", "torch_can_cast", "torch_scalar",
        "is_torch_scalar")},
    "torch_normal": torch_normal, "torch_multinomial": _MULTINOMIAL, "torch_finfo": _cr.torch_finfo,
    "torch_iinfo": _cr.torch_iinfo, "buffer_from_torch_tensor": buffer_from_torch_tensor,
    "is_undefined_tensor": is_undefined_tensor,
    "autograd_backward": autograd_backward, "autograd_grad": autograd_grad,
    "autograd_gradcheck": autograd_gradcheck, "autograd_is_enabled": is_grad_enabled,
    "make_dual": _fwd.make_dual,
    # (R's list(primal, tangent), the tangent NULL where there is none)
    "unpack_dual": binding.r_callable(_fwd.unpack_dual, binding.RFacts(
        "unpack_dual", result_names=("primal", "tangent"))),
    "torch_get_default_dtype": _cr.get_default_dtype,
    "torch_sparse_coo_tensor": torch_sparse_coo_tensor,
    "torch_sparse_sampled_addmm": _sparse.torch_sparse_sampled_addmm,
    "contrib_sort_vertices": contrib_sort_vertices,
    "torch_quantize_per_tensor": _q.torch_quantize_per_tensor,
    "torch_quantize_per_channel": _q.torch_quantize_per_channel,
    **{name: getattr(runtime, name) for name in runtime.__all__},
    "torch_dequantize": _q.torch_dequantize,
    "torch_is_floating_point": Tensor.is_floating_point,
    "set_autocast": _amp.set_autocast, "unset_autocast": _amp.unset_autocast,
    ".set_default_device": _cr.set_default_device,
    # (names with a dot are the R side's helpers, not exported)
    ".int64_bits": int64_bits, ".tensor_from_buffer": torch_tensor_from_buffer,
    ".manual_seed": manual_seed,
    ".dtype_is_floating_point": lambda d: d.is_floating_point,  # (R's `dtype$is_floating_point`)
}


def _returning_none(table: dict[str, Callable]) -> set[str]:
    """What R returns invisibly: the functions declared `-> None` (R torch's setters)."""
    def none(f: Callable) -> bool:
        try:
            return inspect.signature(f).return_annotation in (None, "None")
        except (TypeError, ValueError):  # (no signature to read)
            return False
    return {k for k, f in table.items() if none(f)}


INVISIBLE_METHODS = _returning_none(METHODS) | {"set_grad_"}  # (x$set_grad_(g): x)
INVISIBLE_FUNCTIONS = _returning_none(FUNCTIONS)
