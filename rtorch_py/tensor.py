"""The tensor: a NumPy array plus a few autograd slots, and its dim names.

This module holds the class, dtypes, dim names (a tensor's own data: reading,
setting and checking them needs nothing else) and the conversion of user
data. It imports only the ground floor (engine, meta, printing): the ops and
the user API above give the class its other methods, in the package's one
assembly step (`rtorch_py/__init__.py`).
"""
from __future__ import annotations

import numbers
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from . import engine
from .engine import NEW_VERSION, version_box
from .meta import MetaArray, watch_operands
from .modes import COMPLEX32, MODES, NAMES, converted, switch_on, through
from .printing import format_quantized, format_tensor

# --------------------------------------------------------------------------
# dtypes


class dtype:
    """A tensor element type, printed as R torch prints it (`torch_Float`)."""

    __slots__ = ("name", "np", "r_name", "type_name", "is_floating_point", "is_complex",
                 "is_signed")

    def __init__(self, name: str, np_dtype: Any, r_name: str, type_name: str) -> None:
        self.name = name
        self.np = np.dtype(np_dtype) if np_dtype is not None else None
        self.r_name = r_name
        self.type_name = type_name
        # (bfloat16 and float8 are floats, though NumPy files ml_dtypes' types under kind "V")
        kind = "f" if name == "bfloat16" or name.startswith("float8") else self.np.kind
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = kind != "u" and kind != "b"

    def __repr__(self) -> str:
        return f"torch_{self.r_name}"

    __str__ = __repr__

    @property
    def itemsize(self) -> int:
        """Bytes per element (`x$element_size()`)."""
        if self.name == "complex32":
            return 4  # (two float16s; held as complex64 here)
        return self.np.itemsize if self.np is not None else 2


float32 = dtype("float32", np.float32, "Float", "CPUFloatType")
float64 = dtype("float64", np.float64, "Double", "CPUDoubleType")
float16 = dtype("float16", np.float16, "Half", "CPUHalfType")
complex64 = dtype("complex64", np.complex64, "ComplexFloat", "CPUComplexFloatType")
complex128 = dtype("complex128", np.complex128, "ComplexDouble", "CPUComplexDoubleType")
uint8 = dtype("uint8", np.uint8, "Byte", "CPUByteType")
int8 = dtype("int8", np.int8, "Char", "CPUCharType")
int16 = dtype("int16", np.int16, "Short", "CPUShortType")
int32 = dtype("int32", np.int32, "Int", "CPUIntType")
int64 = dtype("int64", np.int64, "Long", "CPULongType")
bool_ = dtype("bool", np.bool_, "Bool", "CPUBoolType")
# NumPy has no bfloat16 of its own: ml_dtypes gives it one (ops compute in float32
# and round, as libtorch does). Without ml_dtypes the dtype exists (R torch code
# names and compares it), but no tensor can hold it.
try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
    _F8 = (np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2))
except ImportError:  # pragma: no cover (ml_dtypes is a dependency)
    BF16, _F8 = None, (None, None)
bfloat16 = dtype("bfloat16", BF16, "BFloat16", "CPUBFloat16Type")
# The float8 storage types (torch_float8_e4m3fn(), torch_float8_e5m2()): tensors of
# them are made and converted (`$to()`), as libtorch's CPU ops on them go no further.
float8_e4m3fn = dtype("float8_e4m3fn", _F8[0], "Float8_e4m3fn", "CPUFloat8_e4m3fnType")
float8_e5m2 = dtype("float8_e5m2", _F8[1], "Float8_e5m2", "CPUFloat8_e5m2Type")
ALL_DTYPES = (float32, float64, float16, complex64, complex128, uint8, int8, int16, int32,
              int64, bool_)
DTYPES_BY_NP = {d.np: d for d in ALL_DTYPES}
# complex32 (torch_chalf(), libtorch's ComplexHalf): NumPy has none. Its tensors hold
# complex64 arrays of the class below, whose parts are rounded to float16 after each
# op; libtorch's CPU kernels take it for a few ops only: once the dtype is named
# (modes.COMPLEX32), ops look at their operands (rtorch_py.ops.complex_half) and
# refuse the others as libtorch does.
complex32 = dtype("complex32", np.complex64, "ComplexHalf", "CPUComplexHalfType")


class ComplexHalfArray(np.ndarray):
    """The values of a complex32 tensor: complex64 whose parts are float16 values.
    Views (slicing, reshape, transpose) stay of this class; ufuncs compute on plain
    arrays (what they give is rounded, or refused, by the op that called them)."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        plain = [i.view(np.ndarray) if isinstance(i, ComplexHalfArray) else i for i in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, ComplexHalfArray) else o
                                  for o in kwargs["out"])
        return getattr(ufunc, method)(*plain, **kwargs)

    # the parts are float16 numbers (libtorch's x$real of ComplexHalf is Half)
    @property
    def real(self) -> np.ndarray:
        return self.view(np.ndarray).real.astype(np.float16)

    @property
    def imag(self) -> np.ndarray:
        return self.view(np.ndarray).imag.astype(np.float16)


def complex_half(arr: Any) -> ComplexHalfArray:
    """arr as complex32 values: its parts rounded to float16 (a new array)."""
    arr = np.asarray(arr, dtype=np.complex64)
    out = np.empty(arr.shape, np.complex64)
    out.real = arr.real.astype(np.float16)
    out.imag = arr.imag.astype(np.float16)
    return out.view(ComplexHalfArray)

if BF16 is not None:
    DTYPES_BY_NP[BF16] = bfloat16
    DTYPES_BY_NP.update({float8_e4m3fn.np: float8_e4m3fn, float8_e5m2.np: float8_e5m2})
# Quantized dtypes (torch_quint8(), torch_qint8(), torch_qint32()): the integers
# in a one-field NumPy record (rtorch_py.quantized refuses arithmetic on them); the scale and
# zero point live on the tensor (rtorch_py.quantized).
quint8 = dtype("quint8", [("quint8", np.uint8)], "QUInt8", "QuantizedCPUQUInt8Type")
qint8 = dtype("qint8", [("qint8", np.int8)], "QInt8", "QuantizedCPUQInt8Type")
qint32 = dtype("qint32", [("qint32", np.int32)], "QInt32", "QuantizedCPUQInt32Type")
quint8.is_signed = False
QUANTIZED = (quint8, qint8, qint32)
DTYPES_BY_NP.update({d.np: d for d in QUANTIZED})
QPARAMS = "_qparams"  # a quantized tensor's (scale, zero_point), in its __dict__; per
                      # channel (scales, zero_points, axis): arrays along dim `axis`


def dequantized(x: "Tensor") -> np.ndarray:
    """A quantized tensor's values: (integers - zero_point) * scale, in float32."""
    scale, zero_point, *axis = x.__dict__[QPARAMS]
    ints = x.data.view(np.ndarray)[x.dtype.name].astype(np.float32)
    if axis:  # one scale and zero point per slice along the axis
        along = [-1 if i == axis[0] else 1 for i in range(ints.ndim)]
        return ((ints - zero_point.reshape(along).astype(np.float32)) *
                scale.reshape(along).astype(np.float32))
    return (ints - np.float32(zero_point)) * np.float32(scale)

_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "long": int64,
                 "int": int32, "short": int16, "cfloat": complex64, "cdouble": complex128,
                 "bfloat16": bfloat16, "float8_e4m3fn": float8_e4m3fn,
                 "float8_e5m2": float8_e5m2, "complex32": complex32, "chalf": complex32})
_BY_NAME.update({d.name: d for d in QUANTIZED})

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

# The default floating dtype (torch_set_default_dtype): what R doubles, Python
# floats and the float constructors give.
_default = [float32]


def bf16_as_f32(arr: np.ndarray) -> np.ndarray:
    """bfloat16 values in float32, to compute on (ops.recording rounds the result
    back, as libtorch computes bfloat16); other arrays unchanged."""
    return arr.astype(F32) if arr.dtype == BF16 else arr


def get_default_dtype() -> dtype:
    return _default[0]


def set_default_dtype(d: Any) -> None:
    """Set the dtype floats become (float32 or float64, as PyTorch allows)."""
    d = as_dtype(d)
    if d not in (float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got "
                        f"{d!r}; use torch_float32() or torch_float64()")
    _default[0] = d


def default_complex() -> dtype:
    """The complex dtype that goes with the default float one (PyTorch's rule)."""
    return complex128 if _default[0] is float64 else complex64


def as_dtype(d: Any) -> dtype:
    """Accept a dtype object, a NumPy dtype or a name such as "float64"."""
    if isinstance(d, dtype):
        found = d
    elif isinstance(d, str) and d in _BY_NAME:
        found = _BY_NAME[d]
    else:
        try:
            return DTYPES_BY_NP[np.dtype(d)]
        except (TypeError, KeyError):
            raise TypeError(
                f"unsupported dtype {d!r}; use one of torch_float32(), torch_float64(), "
                "torch_float16(), torch_int8(), torch_uint8(), torch_int16(), torch_int32(), "
                "torch_int64(), torch_bool(), torch_cfloat() or torch_cdouble()") from None
    if found is bfloat16 and found.np is not None:
        watch_operands()  # (ops.recording rounds float32 results of bfloat16 operands)
    if found is complex32:
        switch_on(COMPLEX32)  # (ops refuse or round ComplexHalf from now on: ops.complex_half)
    if found.np is None:
        raise TypeError(f"{found!r} tensors need the Python package ml_dtypes (NumPy has no "
                        "bfloat16): pip install ml_dtypes, or use torch_float16() or "
                        "torch_float32() instead")
    return found


def _category(d: dtype) -> int:
    return 3 if d.is_complex else 2 if d.is_floating_point else 0 if d is bool_ else 1


def _complex_for(d: dtype) -> dtype:
    return complex128 if d is float64 or d is complex128 else complex64


def promote_types(a: dtype, b: dtype) -> dtype:
    """PyTorch's promotion of two dtypes: the higher category wins (bool < ints <
    floats < complex), keeping its own width, except that complex64 with float64
    gives complex128; within a category the wider (uint8 with int8: int16)."""
    if a is b:
        return a
    ca, cb = _category(a), _category(b)
    if {a, b} == {float16, bfloat16}:  # (NumPy has no common type for these)
        return float32
    if ca == cb:
        return DTYPES_BY_NP[np.promote_types(a.np, b.np)]
    hi, lo = (a, b) if ca > cb else (b, a)
    if hi is complex64 and lo is float64:
        return complex128
    if hi is complex32 and lo in (float32, float64):  # (complex parts as wide as the float's)
        return complex64 if lo is float32 else complex128
    return hi


def result_type(*operands: Any) -> dtype:
    """The dtype of an arithmetic op's result on these operands (tensors or
    numbers), as PyTorch decides it: tensors with dims first, then 0-d tensors,
    then numbers, each lower group counting only when its category is higher."""
    groups: list = [None, None, None]  # dims, 0-d, numbers
    for v in operands:
        if isinstance(v, Tensor):
            d, g = _dtype_of(v.data), 0 if v.data.ndim else 1
        elif isinstance(v, (bool, np.bool_)):
            d, g = bool_, 2
        elif isinstance(v, numbers.Integral):
            d, g = int64, 2
        elif isinstance(v, numbers.Real):
            d, g = _default[0], 2
        elif isinstance(v, numbers.Complex):
            d, g = default_complex(), 2
        else:
            raise TypeError(f"expected tensors or numbers, got {type(v).__name__}")
        groups[g] = d if groups[g] is None else promote_types(groups[g], d)

    def combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
        if higher is None or lower is None:
            return lower if higher is None else higher
        if higher.is_complex:
            return higher
        if higher.is_floating_point:
            return _complex_for(higher) if lower.is_complex else higher
        if higher is bool_ or _category(lower) >= 2:  # bool or ints meet a higher category
            return promote_types(higher, lower)
        return higher

    return combine(groups[0], combine(groups[1], groups[2]))


def _dtype_of(arr: np.ndarray) -> dtype:
    try:
        d = DTYPES_BY_NP[arr.dtype]
    except KeyError:
        raise TypeError(f"unsupported element type {arr.dtype}") from None
    return complex32 if d is complex64 and type(arr) is ComplexHalfArray else d


# --------------------------------------------------------------------------
# Layouts (R torch's torch_strided(), torch_sparse_coo()): every tensor here is
# strided except the sparse ones of `rtorch_py.sparse`.


class Layout:
    __slots__ = ("name", "shown")

    def __init__(self, name: str, shown: str | None = None) -> None:
        self.name = name
        self.shown = f"torch_{name}" if shown is None else shown

    def __repr__(self) -> str:
        return self.shown

    __str__ = __repr__


strided = Layout("strided")
sparse_coo = Layout("sparse_coo")
sparse_csr = Layout("sparse_csr")
sparse_csc = Layout("sparse_csc")
sparse_bsr = Layout("sparse_bsr")
sparse_bsc = Layout("sparse_bsc")
# (R torch prints it `torch_`: lantern names no layout it doesn't list)
mkldnn = Layout("_mkldnn", shown="torch_")


# --------------------------------------------------------------------------
# The tensor


if TYPE_CHECKING:  # the methods __init__.py attaches from the op registry, declared
    from .tensor_methods import TensorMethods  # for type checkers (generated stub)
else:
    TensorMethods = object


class Tensor(TensorMethods):
    # Hot fields are slots; rare ones default at class level and land in the
    # instance __dict__ only when set, so making a tensor costs four assignments.
    __slots__ = ("data", "_rg", "grad_fn", "_version", "__dict__", "__weakref__")
    _grad: "Tensor | None" = None
    _output_nr = 0        # which output of grad_fn this tensor is
    _accum = None         # a leaf's AccumulateGrad node
    _base: "Tensor | None" = None  # the tensor a view looks into
    _names: "tuple | None" = None  # dim names, when given (below: "Dim names")
    layout = strided      # (a class constant: sparse tensors are a subclass)

    __array_priority__ = 1000  # numpy scalars defer to our operators

    def __init__(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> None:
        arr = to_array(data, dtype)
        _init(self, arr)
        if requires_grad:
            self.requires_grad = True

    # -- core properties ---------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = bool(value)
        if self.grad_fn is not None and not value:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if value and not (self.is_floating_point() or self.is_complex()):
            raise RuntimeError(
                "only Tensors of floating point dtype can require gradients "
                f"(got {self.dtype!r}); convert first with to(dtype = torch_float()), or create "
                "the tensor with dtype = torch_float()")
        self._rg = value

    @property
    def grad(self) -> "Tensor | None":
        g = self._grad
        if g is None and self.grad_fn is not None and not self.retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor.", UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"{type(value).__name__}")
            if value.data.shape != self.data.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: the tensor has shape "
                    f"[{', '.join(map(str, self.shape))}] but the gradient has shape "
                    f"[{', '.join(map(str, value.shape))}]")
            if value.data.dtype != self.data.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: the tensor is "
                                   f"{self.dtype!r} but the gradient is {value.dtype!r}")
        self._grad = value

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        self.requires_grad = requires_grad
        return self

    @property
    def shape(self) -> tuple:
        return self.data.shape

    def size(self, dim: int | str | None = None) -> Any:
        if type(dim) is str:  # a dim's name
            dim = position(self, dim)
        return self.data.shape if dim is None else self.data.shape[wrap_dim(dim, self.data.ndim)]

    @property
    def T(self) -> "Tensor":
        """Dims reversed (PyTorch's `.T`); the same spelling works on NumPy arrays."""
        return self.permute(*range(self.data.ndim - 1, -1, -1))

    @property
    def dtype(self) -> dtype:
        return _dtype_of(self.data)

    @property
    def ndim(self) -> int:
        return self.data.ndim

    def dim(self) -> int:
        return self.data.ndim

    def numel(self) -> int:
        return self.data.size

    @property
    def device(self) -> str:
        return "meta" if type(self.data) is MetaArray else "cpu"

    def memory_order(self) -> str:
        """The memory order of its array ("C", "F" or "K"), which a new gradient takes."""
        flags = self.data.flags
        return "C" if flags.c_contiguous else "F" if flags.f_contiguous else "K"

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def is_floating_point(self) -> bool:
        return self.data.dtype.kind == "f" or self.data.dtype == BF16

    def is_complex(self) -> bool:
        return self.data.dtype.kind == "c"

    def element_size(self) -> int:
        return 4 if type(self.data) is ComplexHalfArray else self.data.itemsize

    def data_ptr(self) -> int:
        """The address of the first element (PyTorch's `x.data_ptr()`)."""
        return self.data.__array_interface__["data"][0]

    def storage(self) -> "Storage":
        """The memory this tensor looks into (shared by its views)."""
        return Storage(self.data)

    def item(self) -> Any:
        if MODES:
            converted(self, "a Python number")
        if self.data.size != 1:
            raise RuntimeError(f"a Tensor with {self.data.size} elements cannot be converted "
                               "to Scalar; item() needs exactly one element")
        return self.data.reshape(()).item()

    def numpy(self) -> np.ndarray:
        if MODES:
            converted(self, "a NumPy array")
        if self._rg:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        return self.data

    def as_array(self) -> np.ndarray:
        """The values as a NumPy array (a copy never shares the graph)."""
        return self.data

    def tolist(self) -> Any:
        if MODES:
            converted(self, "a Python list")
        return self.data.tolist()

    def __len__(self) -> int:
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def __iter__(self):
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if MODES:
            converted(self, "a Python boolean")
        if self.data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.data.size} values is "
                               "ambiguous")
        return bool(self.data.reshape(()))

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if MODES:
            converted(self, "a Python index")
        if self.data.dtype.kind not in "iu" or self.data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return self._format()

    def _format(self, n: int = 30) -> str:
        """What R torch's print(x, n) shows, without the final newline."""
        name = self.grad_fn.name if self.grad_fn is not None else None
        if type(self.data) is MetaArray:  # (R torch: no values, a META type line)
            return ("torch_tensor\n...\n[ META" + self.dtype.type_name[3:] + "{" +
                    ",".join(map(str, self.shape)) + "} ]" +
                    (f"[ grad_fn = <{name}> ]" if name else
                     "[ requires_grad = TRUE ]" if self._rg else ""))
        if self.data.dtype.names:  # quantized
            scale, zero_point, *axis = self.__dict__.get(QPARAMS, (float("nan"), 0))
            return format_quantized(dequantized(self), self.dtype.type_name, scale,
                                    zero_point, n, axis=axis[0] if axis else None)
        return format_tensor(self.data, self.dtype.name, self._rg and name is None,
                             name, n=n).rstrip("\n")

    __str__ = __repr__

    def _type_string(self) -> str:
        """libtorch's name of the tensor's type, as its C++ messages (R torch's) give
        it: CPUFloatType."""
        return self.dtype.type_name

    # -- dim names -------------------------------------------------------
    @property
    def names(self) -> tuple:
        """The dims' names: a tuple, None for an unnamed dim."""
        return get_names(self)

    @names.setter
    def names(self, value: Any) -> None:
        set_names(self, value)

    def has_names(self) -> bool:
        return names_of(self) is not None

    # -- autograd ----------------------------------------------------------
    def detach(self) -> "Tensor":
        """Same data and version counter (and dim names), no history."""
        t = self._alias()
        if self._names is not None:
            t._names = self._names
        return t

    def detach_(self) -> "Tensor":
        self.grad_fn = None
        self._rg = False
        return self

    def _alias(self) -> "Tensor":
        t = wrap(self.data)
        t._version = version_box(self)
        return t

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in `.grad` after backward."""
        if not self._rg:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        node = self.grad_fn
        if node is None:
            return  # leaves keep their grad anyway
        node.retain(self._output_nr, weakref.ref(self))

    @property
    def retains_grad(self) -> bool:
        n = self.grad_fn
        return bool(n is not None and n.retain_refs and
                    n.retain_refs.get(self._output_nr, lambda: None)() is self)

    def register_hook(self, hook: Callable) -> engine.RemovableHandle:
        """Run `hook(grad)` when this tensor's gradient is computed; it may return a
        replacement gradient."""
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        # a leaf's hooks live on its accumulator node, as PyTorch keeps them
        node = self.grad_fn if self.grad_fn is not None else engine.grad_accumulator(self)
        return node.register_prehook(hook, self._output_nr)


class Storage:
    """A tensor's memory: the array that owns the bytes its views share."""

    __slots__ = ("_root",)

    def __init__(self, arr: np.ndarray) -> None:
        while isinstance(arr.base, np.ndarray):  # views lead back to the owner
            arr = arr.base
        self._root = arr

    def data_ptr(self) -> int:
        return self._root.__array_interface__["data"][0]

    def nbytes(self) -> int:
        return self._root.nbytes

    def __repr__(self) -> str:
        return f"<torch_storage of {self._root.nbytes} bytes at {self.data_ptr():#x}>"


_new = object.__new__

def _init(t: Tensor, arr: np.ndarray) -> None:
    t.data = arr
    t._rg = False
    t.grad_fn = None
    t._version = NEW_VERSION


def wrap(arr: np.ndarray) -> Tensor:
    """Make a tensor around an array with no copy (fast path for ops)."""
    t = _new(Tensor)
    # (0-d ufunc results are scalars; meta arrays stay meta)
    t.data = arr if type(arr) is np.ndarray else np.asanyarray(arr)
    t._rg = False
    t.grad_fn = None
    t._version = NEW_VERSION
    return t


def wrap_dim(d: int, ndim: int) -> int:
    """Normalise a 0-based (possibly negative) dim, with PyTorch's error."""
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d + n if d < 0 else d


# --------------------------------------------------------------------------
# Dim names: optional names for a tensor's dims, with PyTorch's semantics (name
# inference for ops: rtorch_py/ops/names.py; rename() and friends:
# rtorch_py/named.py).
#
# They live in one rare attribute, `Tensor._names`: None for an unnamed tensor,
# else a tuple with one entry per dim (a str, or None for an unnamed dim).
# Making a tensor costs nothing more: the attribute is a class default until
# names are given.

ELLIPSIS = "..."

# Modes (rtorch_py.modes): the ones that see every call are named here too, for
# the code that is no op and asks for them (`if MODES:`, `converted(x, "...")`).
# Functions that are not ops but compute on tensors (nn functional forms, random
# creation) pass their calls to those modes with `traceable`.


TRACEABLE: dict[str, Callable] = {}  # name -> the function `traceable` made


def traceable(name: str) -> Callable:
    """Decorate a function that is not an op (an nn functional form, a random
    constructor) so that active modes see its calls as one call named `name`
    (`TRACEABLE[name]` is then the decorated function)."""
    def wrap_function(fn: Callable) -> Callable:
        def call(*args: Any, **kwargs: Any) -> Any:
            if MODES:
                return through(name, fn, args, kwargs)
            return fn(*args, **kwargs)
        call.__wrapped__ = fn  # (inspect.signature reads fn's)
        call.__name__, call.__qualname__, call.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
        call.__module__ = fn.__module__
        TRACEABLE[name] = call
        return call
    return wrap_function


def describe_names(names: Sequence | None, ndim: int) -> str:
    """`Tensor[a, b]` or, for an unnamed tensor, `Tensor[None, None]`."""
    names = names if names is not None else (None,) * ndim
    return "Tensor[" + ", ".join("None" if n is None else n for n in names) + "]"


def show_names(names: Sequence) -> str:
    return "(" + ", ".join("None" if n is None else repr(n) for n in names) + ")"


def names_of(x: "Tensor") -> tuple | None:
    """x's names, or None; names a later in-place reshape made stale count as none."""
    n = x._names
    if n is not None and len(n) != x.data.ndim:
        x._names = None
        return None
    return n


def check_names(names: Any, ndim: int) -> tuple | None:
    """Names given by a user as a tuple for a tensor of `ndim` dims (None: unnamed)."""
    if names is None:
        return None
    if isinstance(names, str):
        names = (names,)
    names = tuple(names)
    for n in names:
        if n is not None and (not isinstance(n, str) or not n or n == ELLIPSIS):
            raise RuntimeError(f"names must be non-empty strings (or None for an unnamed "
                               f"dim), got {n!r} in {names!r}")
    if len(names) != ndim:
        raise RuntimeError(f"{len(names)} names {show_names(names)} given for a tensor with "
                           f"{ndim} dims: give one name per dim")
    seen = [n for n in names if n is not None]
    if len(set(seen)) != len(seen):
        dup = next(n for n in seen if seen.count(n) > 1)
        raise RuntimeError(f"the name '{dup}' is given to two dims in {show_names(names)}: "
                           "each dim's name must be unique")
    return names if seen else None


def set_names(x: "Tensor", names: Any) -> "Tensor":
    """Give x these names in place (None, or all None, makes it unnamed)."""
    x._names = checked = check_names(names, x.data.ndim)
    if checked is not None:
        switch_on(NAMES)  # (ops look at their operands' names from now on)
    return x


def get_names(x: "Tensor") -> tuple:
    """PyTorch's `x.names`: one entry per dim, None for an unnamed dim."""
    n = names_of(x)
    return n if n is not None else (None,) * x.data.ndim


def position(x: Any, name: str, arg: str = "dim") -> int:
    """The 0-based position of the dim called `name` in x (E46 if there is none)."""
    t = x[0] if isinstance(x, (list, tuple)) and x and isinstance(x[0], Tensor) else x
    if not isinstance(t, Tensor):
        raise TypeError(f"{arg} = '{name}': a dim given by name needs a tensor to look it up "
                        f"in, got {type(t).__name__}")
    names = names_of(t)
    if names is not None and name in names:
        return names.index(name)
    if names is None:
        raise RuntimeError(f"{arg} = '{name}': this tensor has no dim names "
                           f"({describe_names(None, t.data.ndim)}); name its dims first "
                           "(names = in a creation function, or rename()) or give the dim's "
                           "number")
    raise RuntimeError(f"{arg} = '{name}': no dim of this tensor is called '{name}'; its "
                       f"names are {describe_names(names, t.data.ndim)}")


# --------------------------------------------------------------------------
# Converting user data


def to_array(data: Any, dt: Any = None) -> np.ndarray:
    """Python numbers, nested lists, NumPy arrays or tensors -> a supported array.

    A bare number gives a 1-element 1-d array (R has no scalars); Python floats
    become float32, ints int64, bools bool; NumPy arrays keep their memory when
    their dtype is already right.
    """
    if dt is not None and as_dtype(dt) is complex32:
        arr = _to_array(data, complex64)
        return arr if type(arr) is ComplexHalfArray else complex_half(arr)
    arr = _to_array(data, dt)
    if dt is not None and type(arr) is ComplexHalfArray:  # (complex64 asked of complex32)
        return arr.view(np.ndarray).copy()
    return arr


def _to_array(data: Any, dt: Any) -> np.ndarray:
    target = as_dtype(dt).np if dt is not None else None
    if isinstance(data, Tensor):
        arr = data.data
        return arr if target is None or arr.dtype == target else arr.astype(target)
    if isinstance(data, np.ndarray):
        arr = data
        if target is None:
            target = _default_for_array(arr)
        if arr.dtype != target:
            arr = arr.astype(target)
        return arr
    if isinstance(data, (bool, np.bool_)):
        arr = np.array([data], dtype=target or np.bool_)
    elif isinstance(data, numbers.Integral):
        arr = np.array([data], dtype=target or np.int64)
    elif isinstance(data, numbers.Real):
        arr = np.array([data], dtype=target or _default[0].np)
    elif isinstance(data, numbers.Complex):
        arr = np.array([data], dtype=target or default_complex().np)
    elif isinstance(data, (list, tuple)):
        arr = _nested_to_array(data, target)
    else:
        raise TypeError(f"torch_tensor() can't make a tensor from a {type(data).__name__}; "
                        "pass numbers, (nested) lists of numbers or a NumPy array")
    return arr if target is None or arr.dtype == target else arr.astype(target)


def _default_for_array(arr: np.ndarray) -> np.dtype:
    k = arr.dtype.kind
    if arr.dtype in DTYPES_BY_NP:
        if arr.dtype == BF16:
            watch_operands()
        return arr.dtype
    if k == "f":
        return F32 if arr.dtype.itemsize <= 4 else F64
    if k == "c":
        return np.dtype(np.complex64 if arr.dtype.itemsize <= 8 else np.complex128)
    if k in "iu":
        return np.dtype(np.int64)
    if k == "b":
        return np.dtype(np.bool_)
    raise TypeError(f"can't make a tensor from a NumPy array of {arr.dtype} elements; "
                    "only numbers and booleans are supported")


def _ragged_message(data: list) -> str:
    """Say where a nested list stops being rectangular."""
    shape, d = [], data
    while isinstance(d, list):
        shape.append(len(d))
        d = d[0] if d else None

    def find(x: Any, depth: int, path: str) -> str | None:
        want = shape[depth] if depth < len(shape) else None
        if not isinstance(x, list):
            return None if want is None else f"expected a sub-list of length {want} at " \
                f"data{path} (dim {depth}), got a number"
        if want is None:
            return f"expected a number at data{path} (dim {depth}), got a list"
        if len(x) != want:
            return f"expected a sub-list of length {want} at data{path} (dim {depth}), " \
                f"got length {len(x)}"
        for i, v in enumerate(x):
            found = find(v, depth + 1, f"{path}[{i}]")
            if found:
                return found
        return None

    where = find(data, 0, "") or "sub-lists differ in length"
    return (f"torch_tensor() got a ragged nested list: {where}; sub-lists at the same depth "
            "must all have the same length")


def _nested_to_array(data: Sequence, target: np.dtype | None = None) -> np.ndarray:
    kinds: set = set()

    def check(x: Any, path: str) -> Any:
        if isinstance(x, Tensor):
            kinds.add(x.data.dtype.kind)
            return x.data.tolist()
        if isinstance(x, (list, tuple)):
            return [check(v, f"{path}[{i}]") for i, v in enumerate(x)]
        if isinstance(x, (bool, np.bool_)):
            kinds.add("b")
        elif isinstance(x, numbers.Integral):
            kinds.add("i")
        elif isinstance(x, numbers.Real):
            kinds.add("f")
        elif isinstance(x, numbers.Complex):
            kinds.add("c")
        else:
            raise TypeError(f"torch_tensor() got a {type(x).__name__} at data{path}; "
                            "every element must be a number or a boolean")
        return x

    clean = check(data, "")
    try:
        arr = np.array(clean)
    except ValueError:
        arr = None
    if arr is None or arr.dtype == object:
        raise ValueError(_ragged_message(clean))
    if target is not None:
        return arr.astype(target)  # straight from Python's numbers: no float32 detour
    if "c" in kinds:
        return arr.astype(default_complex().np)
    if "f" in kinds:
        return arr.astype(_default[0].np)
    if "i" in kinds:
        return arr.astype(np.int64)
    if "b" in kinds:
        return arr.astype(np.bool_)
    return arr.astype(_default[0].np)  # empty list
