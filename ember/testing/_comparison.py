"""assert_close: torch.testing's closeness check over tensors, arrays, numbers and nested containers."""
from __future__ import annotations

import collections.abc as abc
import warnings
from typing import Any, Callable

import numpy as np

from .. import _dtype as D
from .._factories import tensor as _tensor
from .._tensor import Tensor

# dtype -> (rtol, atol) used when neither is given; any other dtype compares for equality
_TOLERANCES = {D.float16: (1e-3, 1e-5), D.float32: (1.3e-6, 1e-5), D.float64: (1e-7, 1e-7)}
_TOLERANCES.update({getattr(D, n): tol for n, tol in (("bfloat16", (1.6e-2, 1e-5)), ("complex64", (1.3e-6, 1e-5)),
                                                     ("complex128", (1e-7, 1e-7))) if hasattr(D, n)})


class _Failure(Exception):
    """A mismatch found somewhere in the inputs: the exception type to raise, its message, the item path."""

    def __init__(self, kind: type, msg: str, path: tuple = ()):
        super().__init__(msg)
        self.kind, self.msg, self.path = kind, msg, path


def _tolerances(dtype, rtol, atol) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    return _TOLERANCES.get(dtype, (0.0, 0.0))


def _diff_msg(kind: str, diff, idx, tol, equality: bool) -> str:
    msg = f"{kind.title()} difference: {diff}" if idx is None else f"Greatest {kind} difference: {diff} at index {idx}"
    return msg if equality else msg + f" (up to {tol} allowed)"


def _mismatch_msg(what: str, extra: str, abs_diff, abs_idx, rel_diff, rel_idx, rtol, atol) -> str:
    equality = rtol == 0 and atol == 0
    return (f"{what} are not {'equal' if equality else 'close'}!\n\n{extra}\n"
            f"{_diff_msg('absolute', abs_diff, abs_idx, atol, equality)}\n"
            f"{_diff_msg('relative', rel_diff, rel_idx, rtol, equality)}")


def _scalar_mismatch(actual, expected, rtol, atol) -> str:
    abs_diff = abs(int(actual) - int(expected)) if type(actual) is bool else abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, rel_diff, None, rtol,
                         atol)


# ---------------------------------------------------------------- numbers
_NUMBER = (int, float, complex)


def _compare_numbers(actual, expected, rtol, atol, equal_nan: bool, check_dtype: bool) -> None:
    if check_dtype and type(actual) is not type(expected):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    kinds = {type(actual), type(expected)}
    dtype = D.float64 if kinds & {float, complex} else D.int64
    rtol, atol = _tolerances(dtype, rtol, atol)
    if actual == expected:
        return
    if equal_nan and actual != actual and expected != expected:
        return
    diff = abs(actual - expected)
    if diff == diff and diff != float("inf") and diff <= atol + rtol * abs(expected):
        return
    raise _Failure(AssertionError, _scalar_mismatch(actual, expected, rtol, atol))


# ---------------------------------------------------------------- tensors
def _as_tensor(x) -> Tensor:
    from .. import from_numpy
    return from_numpy(np.ascontiguousarray(x)) if isinstance(x, np.ndarray) else x.detach()


def _compare_tensors(actual, expected, rtol, atol, equal_nan: bool, check_device: bool, check_dtype: bool,
                     check_layout: bool, check_stride: bool) -> None:
    from .. import isclose, promote_types
    a, e = _as_tensor(actual), _as_tensor(expected)

    def attribute(name: str, x, y) -> None:
        raise _Failure(AssertionError, f"The values for attribute '{name}' do not match: {x} != {y}.")

    if a.shape != e.shape:
        attribute("shape", a.shape, e.shape)
    if check_layout and a.layout != e.layout:
        attribute("layout", a.layout, e.layout)
    if check_stride and a.stride() != e.stride():
        attribute("stride()", a.stride(), e.stride())
    if check_device and a.device != e.device:
        attribute("device", a.device, e.device)
    if check_dtype and a.dtype != e.dtype:
        attribute("dtype", a.dtype, e.dtype)
    if a.device != e.device:
        a, e = a.cpu(), e.cpu()
    if a.dtype != e.dtype:
        common = promote_types(a.dtype, e.dtype)
        a, e = a.to(common), e.to(common)
    rtol, atol = _tolerances(a.dtype, rtol, atol)
    if a.numel() == 0:
        return
    exact = not (a.dtype.is_floating_point or a.dtype.is_complex)
    matches = (a == e) if exact and rtol == 0 and atol == 0 else isclose(a, e, rtol=rtol, atol=atol,
                                                                          equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if a.ndim == 0:
        raise _Failure(AssertionError, _scalar_mismatch(a.item(), e.item(), rtol, atol))
    raise _Failure(AssertionError, _tensor_mismatch(a, e, matches, rtol, atol))


def _tensor_mismatch(a: Tensor, e: Tensor, matches: Tensor, rtol, atol) -> str:
    from .. import int64
    shape = tuple(matches.shape)
    total = matches.numel()
    bad = total - int(matches.sum())
    a, e, ok = a.flatten(), e.flatten(), matches.flatten()
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        a, e = a.to(int64), e.to(int64)
    abs_diff = (a - e).abs()
    abs_diff[ok] = 0
    max_abs, abs_at = abs_diff.max(0)
    rel_diff = abs_diff / e.abs()
    rel_diff[ok] = 0
    max_rel, rel_at = rel_diff.max(0)

    def where(i: Tensor) -> tuple:
        return tuple(int(v) for v in np.unravel_index(int(i), shape))

    return _mismatch_msg("Tensor-likes", f"Mismatched elements: {bad} / {total} ({bad / total:.1%})",
                         max_abs.item(), where(abs_at), max_rel.item(), where(rel_at), rtol, atol)


# ---------------------------------------------------------------- pairing
def _compare(actual, expected, path: tuple, opts: dict) -> None:
    try:
        _compare_one(actual, expected, path, opts)
    except _Failure as f:
        if not f.path:
            f.path = path
        raise


def _compare_one(actual, expected, path: tuple, opts: dict) -> None:
    seq = (abc.Sequence,)
    if (isinstance(actual, seq) and isinstance(expected, seq) and not isinstance(actual, str)
            and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for i, (x, y) in enumerate(zip(actual, expected)):
            _compare(x, y, (*path, i), opts)
        return
    if isinstance(actual, abc.Mapping) and isinstance(expected, abc.Mapping):
        keys_a, keys_e = set(actual), set(expected)
        if keys_a != keys_e:
            missing, extra = sorted(keys_e - keys_a, key=repr), sorted(keys_a - keys_e, key=repr)
            raise _Failure(AssertionError, f"The keys of the mappings do not match:\n"
                                           f"Missing keys in the actual mapping: {missing}\n"
                                           f"Additional keys in the actual mapping: {extra}")
        for k in expected:  # expected's order, as torch
            _compare(actual[k], expected[k], (*path, k), opts)
        return
    if actual is None or expected is None:
        if actual is not expected:
            raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}")
        return
    if type(actual) is bool and type(expected) is bool:
        if actual is not expected:
            raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    tensor_like = (Tensor, np.ndarray)
    if isinstance(actual, Tensor) and isinstance(expected, Tensor) and (
            opts["allow_subclasses"] or type(actual) is type(expected)) or (
            type(actual) is np.ndarray and type(expected) is np.ndarray):
        _compare_tensors(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"], opts["check_device"],
                         opts["check_dtype"], opts["check_layout"], opts["check_stride"])
        return
    if (isinstance(actual, _NUMBER) and isinstance(expected, _NUMBER) and not isinstance(actual, tensor_like)
            and type(actual) is not bool and type(expected) is not bool):
        _compare_numbers(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"], opts["check_dtype"])
        return
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                              f"{type(expected)}.")


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:
    """Raise AssertionError unless ``actual`` and ``expected`` are close: |actual - expected| <= atol + rtol *
    |expected| elementwise (default tolerances by dtype), with matching shapes and, unless disabled, dtypes,
    devices, layouts (and strides when asked). Sequences and mappings are compared item by item."""
    if (rtol is None) != (atol is None):
        _tolerances(None, rtol, atol)
    opts = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                check_layout=check_layout, check_stride=check_stride, allow_subclasses=allow_subclasses)
    try:
        _compare(actual, expected, (), opts)
    except _Failure as f:
        if isinstance(msg, str):
            raise f.kind(msg) from None
        text = f.msg
        if f.path:
            text += "\n\nThe failure occurred for item " + "".join(str([k]) for k in f.path)
        raise f.kind(msg(text) if callable(msg) else text) from None


# dtype -> (rtol, atol) of the deprecated assert_allclose when neither is given (looser than assert_close's)
_ALLCLOSE_TOLERANCES = {D.float16: (1e-3, 1e-3), D.float32: (1e-4, 1e-5), D.float64: (1e-5, 1e-8)}
_ALLCLOSE_DEPRECATED = (
    "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. Please use "
    "`torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
    "https://github.com/pytorch/pytorch/issues/61844.")


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated form of ``assert_close`` (torch's FutureWarning): numbers and sequences become tensors (``expected``
    of ``actual``'s dtype), dtypes need not match, NaNs compare equal, and the default tolerances are looser."""
    warnings.warn(_ALLCLOSE_DEPRECATED, FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        tols = [_ALLCLOSE_TOLERANCES.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(r for r, _ in tols), max(a for _, a in tols)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
