"""parallel_apply: each module on its inputs on its own device, as torch.nn.parallel.parallel_apply. Without an
accelerator it raises where torch's CPU build does, after the same argument checks."""
from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from ...cuda import _device_index
from ._devices import _NO_ACCELERATOR

__all__ = ["get_a_var", "parallel_apply"]


def get_a_var(obj) -> Tensor | None:
    """The first tensor found in ``obj`` (a tensor, or nested lists, tuples and dicts), or None."""
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        for result in map(get_a_var, obj):
            if isinstance(result, Tensor):
                return result
    if isinstance(obj, dict):
        for result in map(get_a_var, obj.items()):
            if isinstance(result, Tensor):
                return result
    return None


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None) -> list[Any]:
    """``[module(*input, **kwargs) ...]``, each replica on its CUDA device: needs one."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of inputs "
                             f"{len(inputs)}")
    if kwargs_tup is not None and len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of kwargs_tup "
                             f"{len(kwargs_tup)}")
    if devices is not None and len(modules) != len(devices):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number of devices "
                             f"{len(devices)}")
    devices = devices if devices is not None else [None] * len(modules)
    for d in devices:
        _device_index(d, True)  # torch.cuda's reading: a CPU device is refused
    if devices:
        raise RuntimeError(_NO_ACCELERATOR)  # each replica's stream is looked up on the current accelerator
    raise AssertionError("No available accelerator found.")
