"""Loss reductions by name and by torch's legacy ``size_average``/``reduce`` flags, as torch.nn._reduction."""
from __future__ import annotations

import warnings


def get_enum(reduction: str) -> int:
    """ATen's number for a reduction: none 0, mean 1, sum 2 (``elementwise_mean``, deprecated, is mean)."""
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=2)
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average: bool | None, reduce: bool | None, emit_warning: bool = True) -> str:
    """The reduction the legacy flags name (each defaults to True): ``reduce=False`` none, ``size_average=False``
    sum, else mean; with torch's deprecation warning unless ``emit_warning`` is false."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      stacklevel=2)
    return ret


def legacy_get_enum(size_average: bool | None, reduce: bool | None, emit_warning: bool = True) -> int:
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))
