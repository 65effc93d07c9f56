"""scatter / scatter_kwargs / gather over nested inputs, as torch.nn.parallel.scatter_gather: containers are
walked as torch walks them and non-tensor leaves are copied by reference; a tensor leaf needs a GPU, so it raises
what torch's CPU build raises."""
from __future__ import annotations

import warnings
from typing import Any

from ..._tensor import Tensor
from ._devices import cpu_tensors, device_index, no_collective

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def is_namedtuple(obj: Any) -> bool:
    warnings.warn("`is_namedtuple` is deprecated, please use the python checks instead", FutureWarning,
                  stacklevel=2)
    return _is_namedtuple(obj)


def _scatter_tensor(target_gpus) -> None:
    for d in target_gpus:
        device_index(d, True)
    raise no_collective("scatter")


def scatter(inputs, target_gpus, dim: int = 0):
    """One copy of ``inputs`` per target device, tensors split into chunks along ``dim`` (needs a GPU)."""

    def scatter_map(obj):
        if isinstance(obj, Tensor):
            _scatter_tensor(target_gpus)
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs: tuple, kwargs: dict | None, target_gpus, dim: int = 0) -> tuple:
    """scatter for positional and keyword arguments, padded to the same number of replicas."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs: Any, target_device, dim: int = 0) -> Any:
    """The replicas' outputs joined along ``dim`` on ``target_device`` (tensors need a GPU)."""

    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, Tensor):
            raise cpu_tensors("Gather")
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs, strict=True)))
        return type(out)(map(gather_map, zip(*outputs, strict=True)))

    return gather_map(outputs)
