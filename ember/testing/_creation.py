"""make_tensor: random test tensors of a shape and dtype, in torch.testing's value ranges."""
from __future__ import annotations

import math
import warnings

from .. import _dtype as D
from .._tensor import Tensor


def _interval(dtype, low, high, lowest: float, highest: float, default_low: float, default_high: float,
              floating: bool) -> tuple:
    """Check and clamp [low, high) to what ``dtype`` holds: [lowest, highest)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and floating:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                      "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return (low, high) if floating else (math.ceil(low), math.ceil(high))


def make_tensor(*shape, dtype: D.dtype, device, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format=None) -> Tensor:
    """A tensor of ``shape`` filled with uniform random values in [low, high): by default [-9, 9) for floating
    dtypes, [-9, 10) for signed integers, [0, 10) for unsigned ones and {False, True} for bool. ``noncontiguous``
    returns a strided view, ``exclude_zero`` replaces zeros by 1 (integers) or the smallest normal number."""
    from .. import empty, finfo, iinfo, randint
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    floating = dtype.is_floating_point or dtype.is_complex
    if requires_grad and not floating:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice as wide, then every other column: distinct values in a strided view
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is D.bool:
        lo, hi = _interval(dtype, low, high, 0, 2, 0, 2, False)
        result = randint(lo, hi, shape, dtype=dtype, device=device)
    elif not floating:
        info = iinfo(dtype)
        lo, hi = _interval(dtype, low, high, info.min, info.max + (dtype is not D.int64), -9, 10, False)
        result = randint(lo, hi, shape, dtype=dtype, device=device)
    else:
        info = finfo(dtype)
        lo, hi = _interval(dtype, low, high, info.min, info.max, -9, 9, True)
        result = empty(shape, dtype=dtype, device=device)
        if hi - lo >= info.max:  # the width itself would overflow: draw half-width and double
            result.uniform_(lo / 2, hi / 2).mul_(2)
        else:
            result.uniform_(lo, hi)
    if noncontiguous:
        result = result[..., ::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = finfo(dtype).tiny if floating else 1
    if floating:
        result.requires_grad_(requires_grad)
    return result
