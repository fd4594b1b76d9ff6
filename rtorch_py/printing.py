"""Format tensors exactly as R torch prints them.

R torch's ``print(x)`` is three layers, reproduced here byte for byte:

1. ``R/tensor.R`` (``Tensor$print(n = 30)``) writes ``torch_tensor\\n``, then
   the libtorch text, then appends ``[ grad_fn = <Name> ]`` (or, for a leaf
   that requires grad, ``[ requires_grad = TRUE ]``) on the *same* line as
   the ``[ CPUFloatType{...} ]`` footer, then a newline.
2. the package's C++ ``cpp_torch_tensor_print`` splits libtorch's text into
   lines and, when there are more than ``n`` lines, keeps the first ``n`` and
   the footer, with ``... [the output was truncated (use n=-1 to disable)]``
   between them.
3. libtorch's ``at::print(stream, tensor, 80)`` (``aten/src/ATen/core/
   Formatting.cpp``), reached through lantern's ``ss << tensor``.

Layer 3 follows the {fmt}-based Formatting.cpp of libtorch >= 2.8, which is
what R torch 0.17 ships.  ``legacy_libtorch=True`` gives the iostream-based
Formatting.cpp of libtorch <= 2.7 (R torch <= 0.16) instead, whose output
still fills much of the published R torch documentation.  The two differ in
three ways only:

* 0-d values and the ``<scale> *`` line: shortest round-trip digits
  (``0.10000000149011612``, ``1000000``) vs. printf ``%g`` (``0.1``, ``1e+06``);
* the largest exponent: the old code only updated it from *positive* values
  (a bug: ``c(-9, -6699)`` got the width of ``-9``);
* the old code wrote ``indent`` spaces before each matrix, so the first line
  of every ``(i,.,.) =`` slice was indented.

This module is a pure function on NumPy and imports nothing from the project.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["format_tensor", "format_grad_fn", "format_libtorch", "format_sparse"]

# libtorch's operator<< passes a fixed line width of 80 characters.
LINE_SIZE = 80
# R torch's default `n` for print(): the maximum number of libtorch lines.
DEFAULT_MAX_LINES = 30
TRUNCATION_NOTE = "... [the output was truncated (use n=-1 to disable)]"

# dtype name -> (NumPy dtype the values live in, libtorch type string)
_DTYPES = {
    "float32": (np.float32, "CPUFloatType"),
    "float64": (np.float64, "CPUDoubleType"),
    "float16": (np.float16, "CPUHalfType"),
    "uint8": (np.uint8, "CPUByteType"),
    "int8": (np.int8, "CPUCharType"),
    "int16": (np.int16, "CPUShortType"),
    "int32": (np.int32, "CPUIntType"),
    "int64": (np.int64, "CPULongType"),
    "bool": (np.bool_, "CPUBoolType"),
    "complex64": (np.complex64, "CPUComplexFloatType"),
    "complex128": (np.complex128, "CPUComplexDoubleType"),
    "complex32": (np.complex64, "CPUComplexHalfType"),
}

try:  # bfloat16 comes from ml_dtypes (the engine's dependency)
    import ml_dtypes
    _DTYPES["bfloat16"] = (ml_dtypes.bfloat16, "CPUBFloat16Type")
    _DTYPES["float8_e4m3fn"] = (ml_dtypes.float8_e4m3fn, "CPUFloat8_e4m3fnType")
    _DTYPES["float8_e5m2"] = (ml_dtypes.float8_e5m2, "CPUFloat8_e5m2Type")
except ImportError:  # pragma: no cover
    pass

# R torch prints no values for a complex tensor, only this note (cli's info bullet).
COMPLEX_NOTE = "\u2139 Use `$real` or `$imag` to print the contents of this tensor.\n"


def format_tensor(
    data: np.ndarray,
    dtype_name: str,
    requires_grad: bool = False,
    grad_fn_name: str | None = None,
    n: int = DEFAULT_MAX_LINES,
    *,
    legacy_libtorch: bool = False,
) -> str:
    """Return what ``print(x)`` shows in R torch, ending with a newline.

    ``n`` is R torch's ``print(x, n = 30)`` argument: at most ``n`` lines of
    libtorch output before the footer; ``n <= 1`` (e.g. ``-1``) disables
    truncation, as in R torch.  ``legacy_libtorch`` selects the libtorch <= 2.7
    number layout (see the module docstring).
    """
    pieces, footer = _libtorch_parts(data, dtype_name, legacy_libtorch)
    out = "torch_tensor\n" + _truncate(pieces, footer, n)
    # R checks grad_fn first; requires_grad is only shown for leaves.
    if grad_fn_name is not None:
        out += f"[ grad_fn = <{grad_fn_name}> ]"
    elif requires_grad:
        out += "[ requires_grad = TRUE ]"
    return out + "\n"


def format_sparse(
    indices: np.ndarray,
    values: np.ndarray,
    dtype_name: str,
    size: tuple,
    requires_grad: bool = False,
    grad_fn_name: str | None = None,
    n: int = DEFAULT_MAX_LINES,
) -> str:
    """Return what ``print(x)`` shows in R torch for a sparse COO tensor.

    libtorch's sparse branch of ``print``: the type line, then its (0-based)
    indices and values printed as tensors, then the sizes as ``[3, 3]``; R
    torch cuts and tags it as any other tensor text (the last line, ``]``,
    taking the footer's place).
    """
    type_name = "Sparse" + _DTYPES[dtype_name][1]
    body = (f"[ {type_name}{{}}\nindices:\n{format_libtorch(indices, 'int64')}\n"
            f"values:\n{format_libtorch(values, dtype_name)}\n"
            f"size:\n[{', '.join(str(s) for s in size)}]\n")
    out = "torch_tensor\n" + _truncate(iter([body]), "]", n)
    if grad_fn_name is not None:
        out += f"[ grad_fn = <{grad_fn_name}> ]"
    elif requires_grad:
        out += "[ requires_grad = TRUE ]"
    return out + "\n"


def format_quantized(values: np.ndarray, type_name: str, scale: Any, zero_point: Any,
                     n: int = DEFAULT_MAX_LINES, axis: int | None = None) -> str:
    """Return what ``print(x)`` shows for a quantized tensor: libtorch prints its
    dequantized ``values`` (float32), then its quantized type and the
    quantization parameters in the footer (per channel: the scales and zero
    points along `axis`)."""
    text = format_tensor(values, "float32", n=n).rstrip("\n")
    shape = ",".join(map(str, values.shape))
    plain = f"[ CPUFloatType{{{shape}}} ]"
    if axis is None:
        params = f"qscheme: per_tensor_affine, scale: {scale:g}, zero_point: {zero_point}"
    else:
        params = (f"qscheme: per_channel_affine, scales: {' '.join(f'{s:g}' for s in scale)}, "
                  f"zero_points: {' '.join(str(int(z)) for z in zero_point)}, axis: {axis}")
    return text[:text.rindex(plain)] + f"[ {type_name}{{{shape}}}, {params} ]"


def format_grad_fn(name: str) -> str:
    """Return what ``print(y$grad_fn)`` shows: the node name and a newline.

    (R torch >= 0.13 appends the newline; the tensor footer uses the name
    without it.)
    """
    return name + "\n"


def format_libtorch(data: np.ndarray, dtype_name: str, *, legacy_libtorch: bool = False) -> str:
    """libtorch's ``print(tensor, 80)`` text: body plus footer, no final newline."""
    pieces, footer = _libtorch_parts(data, dtype_name, legacy_libtorch)
    return "".join(pieces) + footer


def _libtorch_parts(data: np.ndarray, dtype_name: str, legacy: bool) -> tuple[Iterator[str], str]:
    """The body as a lazy stream of text pieces, and the footer.

    Laziness lets truncation stop formatting a large tensor after n lines.
    """
    try:
        np_dtype, type_name = _DTYPES[dtype_name]
    except KeyError:
        raise ValueError(
            f"unsupported dtype_name {dtype_name!r}; expected one of {sorted(_DTYPES)}"
        ) from None
    shape = np.shape(data)
    footer = f"[ {type_name}{{{','.join(str(s) for s in shape)}}} ]"
    if np.dtype(np_dtype).kind == "c":
        return iter([COMPLEX_NOTE]), footer
    # Hold the values in the tensor's own dtype first (so float32 rounding is
    # visible), then widen to double exactly as libtorch does before printing.
    values = np.asarray(data).astype(np_dtype, copy=False).astype(np.float64)

    if values.ndim == 0:
        # Written without a width, as the scale factor: shortest round-trip
        # digits in libtorch >= 2.8 (R torch 0.17's linalg_norm page prints
        # sqrt(60) in float32 as `7.745966911315918`), printf %g before.
        return iter([_plain(float(values), legacy) + "\n"]), footer
    if values.size == 0:
        return iter([]), footer
    if values.ndim == 1:
        return _format_vector(values, legacy), footer
    if values.ndim == 2:
        return _format_matrix(values, 0, legacy), footer
    return _format_nd(values, legacy), footer


# --- libtorch Formatting.cpp ---------------------------------------------


def _print_format(values: np.ndarray, legacy: bool) -> tuple[float, int, str]:
    """Choose (scale, field width, style) for a block, as __printFormat does.

    Style is "g" (printf %g, integers), "e" (%.4e) or "f" (%.4f).  The
    exponents are "number of digits before the point", floor(log10|x|) + 1,
    taken over finite values only.
    """
    flat = values.ravel()
    finite = flat[np.isfinite(flat)]
    int_mode = bool(np.all(finite == np.ceil(finite)))

    if finite.size == 0:
        exp_min = exp_max = 1
    else:
        magnitudes = np.abs(finite)
        if legacy:
            # libtorch <= 2.7 compared the signed value against the running
            # maximum, so negative values never raised it.
            positive = finite[finite > 0]
            largest = max(magnitudes[0], positive.max()) if positive.size else magnitudes[0]
        else:
            largest = magnitudes.max()
        exp_min = _digits_before_point(float(magnitudes.min()))
        exp_max = _digits_before_point(float(largest))

    if int_mode:
        if exp_max > 9:
            return 1.0, 11, "e"
        return 1.0, exp_max + 1, "g"
    if exp_max - exp_min > 4:
        width = 12 if abs(exp_max) > 99 or abs(exp_min) > 99 else 11
        return 1.0, width, "e"
    if exp_max > 5 or exp_max < 0:
        # Common factor printed as "<scale> *" above the values.
        return math.pow(10.0, exp_max - 1), 7, "f"
    return 1.0, (7 if exp_max == 0 else exp_max + 6), "f"


def _digits_before_point(x: float) -> int:
    return math.floor(math.log10(x)) + 1 if x != 0 else 1


def _format_value(v: float, width: int, style: str) -> str:
    if math.isnan(v):
        # libtorch ({fmt} or printf) shows a NaN's sign bit ("-nan"), Python does not.
        text = "-nan" if math.copysign(1.0, v) < 0 else "nan"
    elif style == "g":
        text = format(v, "g")
    elif style == "e":
        text = format(v, ".4e")
    else:
        text = format(v, ".4f")
    return text.rjust(width)


def _plain(v: float, legacy: bool) -> str:
    """A double printed without a width: 0-d values and the scale factor.

    {fmt}'s "{}" gives the shortest round-trip digits; Python's repr uses the
    same digits and the same switch to exponent form (exponent < -4 or >= 16),
    so only the spelling of nan/inf/".0" differs.  libtorch <= 2.7 used the
    stream default, printf "%g" (6 significant digits).
    """
    if math.isnan(v):
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    if legacy:
        return format(v, "g")
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = repr(v)
    if text.endswith(".0"):
        text = text[:-2]
    return text


def _format_vector(values: np.ndarray, legacy: bool) -> Iterator[str]:
    scale, width, style = _print_format(values, legacy)
    if scale != 1:
        yield _plain(scale, legacy) + " *\n"
    for v in values / scale:
        yield _format_value(float(v), width, style) + "\n"


def _format_matrix(matrix: np.ndarray, indent: int, legacy: bool) -> Iterator[str]:
    """__printMatrix: rows of fixed-width cells, split into column blocks.

    Quirks kept on purpose: "Columns a to b" is followed by `indent` spaces and
    then the first row on the same line; with a scale factor every row but the
    first of a block gets one extra leading space; blocks are separated by an
    empty line.
    """
    scale, width, style = _print_format(matrix, legacy)
    n_rows, n_cols = matrix.shape
    per_line = (LINE_SIZE - indent) // (width + 1)
    pad = " " * indent
    scaled = matrix / scale
    if legacy:
        yield pad
    first = 0
    while first < n_cols:
        last = min(first + per_line, n_cols) - 1
        if per_line < n_cols:
            if first != 0:
                yield "\n"
            yield f"Columns {first + 1} to {last + 1}{pad}"
        if scale != 1:
            yield f"{_plain(scale, legacy)} *\n{pad}"
        for r in range(n_rows):
            cells = [_format_value(float(v), width, style) for v in scaled[r, first : last + 1]]
            yield " ".join(cells) + "\n"
            if r != n_rows - 1:
                yield pad + (" " if scale != 1 else "")
        first = last + 1


def _format_nd(values: np.ndarray, legacy: bool) -> Iterator[str]:
    """__printTensor: one "(i,j,.,.) = " matrix per leading index.

    The leading indices advance like an odometer with the *first* one fastest
    (R's column-major order); each slice picks its own scale and width.
    """
    lead = values.shape[:-2]
    for k, rev_index in enumerate(itertools.product(*(range(s) for s in reversed(lead)))):
        index = rev_index[::-1]
        if k:
            yield "\n"
        yield "(" + "".join(f"{i + 1}," for i in index) + ".,.) = \n"
        yield from _format_matrix(values[index], 1, legacy)


# --- R torch's cpp_torch_tensor_print ------------------------------------


def _truncate(pieces: Iterator[str], footer: str, n: int) -> str:
    """The body and footer, cut to the first n lines when there are more than n.

    The C++ counts the footer as a line: when ``n > 1`` and there are more
    than n lines in all (i.e. at least n body lines, each ending in a newline),
    it keeps n of them, then the note, then the footer.  So with exactly n
    body lines nothing is dropped but the note is still printed.
    """
    if n <= 1:
        return "".join(pieces) + footer
    head: list[str] = []
    lines = 0
    for piece in pieces:
        head.append(piece)
        lines += piece.count("\n")
        if lines >= n:
            text = "".join(head)
            cut = -1
            for _ in range(n):
                cut = text.index("\n", cut + 1)
            return text[: cut + 1] + TRUNCATION_NOTE + "\n" + footer
    return "".join(head) + footer
