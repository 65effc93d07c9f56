"""Python data (numbers, nested lists, NumPy arrays/scalars, tensors) to an ndarray, with torch's
dtype inference: Python floats take the default dtype, ints int64, bools bool, and NumPy values
and tensors keep their own dtype; the leaves' dtypes are combined with ``promote_types``."""
from __future__ import annotations

import builtins
from collections.abc import Sequence

import numpy as np

from . import _dtype as D
from ._tensor import Tensor

__all__ = ["to_array", "check_numpy", "astype"]

_SEQ = (list, tuple)
_I64_MIN, _I64_MAX = -2 ** 63, 2 ** 63 - 1


def _promote(a: D.dtype | None, b: D.dtype) -> D.dtype:
    return b if a is None else D.promote_types(a, b)


def _leaf_dtype(x, default_float: D.dtype) -> D.dtype:
    t = type(x)
    if t is builtins.float:
        return default_float
    if t is builtins.bool:
        return D.bool
    if t is builtins.int:
        if not _I64_MIN <= x <= _I64_MAX:
            raise ValueError("Overflow when unpacking long long")
        return D.int64
    if isinstance(x, Tensor):
        return x._dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return D.from_numpy_dtype(x.dtype)
    if isinstance(x, builtins.float):
        return default_float
    if isinstance(x, builtins.int):
        return D.int64
    if isinstance(x, complex):
        return D.default_complex_dtype()
    raise RuntimeError(f"Could not infer dtype of {t.__name__}")


def _infer(data, default_float: D.dtype) -> D.dtype | None:
    """The dtype torch infers for ``data`` (None for an empty sequence)."""
    if not isinstance(data, _SEQ):
        return _leaf_dtype(data, default_float)
    out = None
    for k in set(map(type, data)):  # one pass in C over a flat list of plain numbers
        if k is builtins.float:
            out = _promote(out, default_float)
        elif k is builtins.int:
            out = _promote(out, D.int64)  # out-of-range ints are caught after np.array
        elif k is builtins.bool:
            out = _promote(out, D.bool)
        elif k is builtins.complex:
            out = _promote(out, D.default_complex_dtype())
        else:
            for x in data:
                if type(x) is k:
                    d = _infer(x, default_float)
                    if d is not None:
                        out = _promote(out, d)
    return out


def _has_tensor(data) -> bool:
    for x in data:
        if isinstance(x, Tensor) or (isinstance(x, _SEQ) and _has_tensor(x)):
            return True
    return False


def _unwrap_tensors(data):
    if isinstance(data, Tensor):
        if data._data.size != 1:
            if data._dtype.is_floating_point:
                raise ValueError("only one element tensors can be converted to Python scalars")
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return data._data.reshape(())
    if isinstance(data, _SEQ):
        return [_unwrap_tensors(x) for x in data]
    return data


def _ragged_error(data) -> Exception:
    """torch's error for nested sequences whose lengths disagree."""
    shape, x = [], data
    while isinstance(x, (_SEQ, np.ndarray)) and len(x):
        shape.append(len(x))
        x = x[0]

    def walk(x, dim):
        if dim == len(shape):
            return None
        if not isinstance(x, (_SEQ, np.ndarray)):
            return TypeError("not a sequence")
        if len(x) != shape[dim]:
            return ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(x)})")
        for y in x:
            err = walk(y, dim + 1)
            if err is not None:
                return err
        return None

    return walk(data, 0) or ValueError("expected a regular nested sequence")


def to_array(data, default_float: D.dtype, dtype: D.dtype | None = None) -> np.ndarray:
    """An ndarray (possibly sharing memory with ``data``) of ``dtype`` or the inferred dtype."""
    if isinstance(data, Tensor):
        arr = data._data
        return _astype(arr, dtype.np) if dtype is not None and arr.dtype != dtype.np else arr
    if isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
        check_numpy(arr)
        return arr if dtype is None or arr.dtype == dtype.np else _astype(arr, dtype.np)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if not isinstance(data, _SEQ) and isinstance(data, Sequence):
        data = list(data)  # range, array.array, ... (any sequence torch accepts)
    inferred = _infer(data, default_float)
    target = dtype or inferred or default_float
    if isinstance(data, _SEQ) and _has_tensor(data):
        data = _unwrap_tensors(data)
    try:
        arr = np.array(data)
    except ValueError:
        raise _ragged_error(data) from None
    if arr.dtype == object or arr.dtype == np.uint64:
        if inferred is D.int64:
            raise ValueError("Overflow when unpacking long long")
        raise _ragged_error(data)
    if arr.dtype != target.np:
        if arr.dtype.kind == "c" and target._kind in (1, 2) and _has_py_complex(data):  # (Python's own conversion)
            raise TypeError("'complex' object cannot be interpreted as an integer" if target._kind == 1 else
                            "must be real number, not complex")
        if target._kind == 1 and arr.size:
            _check_int_range(arr, target)
        arr = _astype(arr, target.np)
    return arr


def _has_py_complex(data) -> bool:
    if isinstance(data, _SEQ):
        return any(_has_py_complex(x) for x in data)
    return type(data) is complex


_F32 = np.dtype(np.float32)


def _astype(arr: np.ndarray, dt: np.dtype) -> np.ndarray:
    """``arr`` cast to ``dt`` as torch converts: to or from a 16-bit float through float32 (c10::Half and
    c10::BFloat16 convert from and to float, so a double is rounded twice); a float too large for a narrower float
    type becomes inf silently."""
    src = arr.dtype
    if src != _F32 and src != dt and (dt in D._REDUCED_NP or src in D._REDUCED_NP):
        with np.errstate(over="ignore", invalid="ignore"):
            arr = arr.astype(_F32)
        if dt == _F32:
            return arr
    if dt.kind in "fV" and arr.dtype.kind in "fV":
        with np.errstate(over="ignore"):
            return arr.astype(dt)
    return arr.astype(dt)


def _check_int_range(arr: np.ndarray, target: D.dtype) -> None:
    """torch's overflow check for Python numbers stored into an integer dtype (unsigned types also take
    negatives down to -max, which wrap)."""
    info = np.iinfo(target.np)
    lo = -int(info.max) if info.min == 0 else info.min
    with np.errstate(invalid="ignore"):
        bad = not (np.all(np.isfinite(arr)) and arr.min() >= lo and arr.max() <= info.max)
    if bad:
        raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")


_NEG_STRIDES = ("At least one stride in the given numpy array is negative, and tensors with negative strides are "
                "not currently supported. (You can probably work around this by making a copy of your array  with "
                "array.copy().) ")


def check_numpy(arr: np.ndarray) -> None:
    """Raise torch's errors for arrays a tensor cannot wrap: unsupported dtype, negative strides, byte order."""
    D.from_numpy_dtype(arr.dtype)
    if not arr.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                         "between byte orders is currently not supported.")
    if any(st < 0 for st in arr.strides):
        raise ValueError(_NEG_STRIDES)


astype = _astype
