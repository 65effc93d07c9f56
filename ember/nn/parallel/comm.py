"""torch.nn.parallel.comm (= torch.cuda.comm): copying tensors between GPUs. With no GPU each function checks its
arguments as torch's does, then raises what torch's CPU build raises where it reaches its CUDA kernel."""
from __future__ import annotations

import warnings

from ..._device import device as _device_cls
from ._devices import device_index, no_collective

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "reduce_add_coalesced", "scatter", "gather"]


def _indices(devices) -> None:
    """Each device's index, for torch's errors on a CPU or unindexed device."""
    for d in devices:
        device_index(d)


def broadcast(tensor, devices=None, *, out=None):
    """``tensor`` copied to each of ``devices`` (or into ``out``)."""
    if not ((devices is None) ^ (out is None)):
        raise RuntimeError(f"Exactly one of 'devices' and 'out' must be specified, but got devices={devices} and "
                           f"out={out}")
    if devices is not None:
        _indices(devices)
        raise no_collective("broadcast")
    raise no_collective("broadcast_out")


def broadcast_coalesced(tensors, devices, buffer_size: int = 10485760):
    """``tensors`` copied to each of ``devices``, small ones in shared buffers."""
    _indices(devices)
    raise no_collective("broadcast_coalesced")


def reduce_add(inputs, destination=None):
    """The sum of ``inputs`` (one per GPU) on ``destination``."""
    device_index(destination, optional=True)
    for i, inp in enumerate(inputs):
        if inp.device.type == "cpu":
            raise AssertionError(f"reduce_add expects all inputs to be on GPUs, but input {i} is on CPU")
    raise AssertionError("reduce_add expects destination to be on the same GPU with one of the tensors")


def reduce_add_coalesced(inputs, destination=None, buffer_size: int = 10485760):
    """reduce_add of each position of the per-GPU sequences in ``inputs``."""
    for tensor_at_gpus in zip(*inputs, strict=True):
        reduce_add(tensor_at_gpus, destination)
    return ()


def scatter(tensor, devices=None, chunk_sizes=None, dim: int = 0, streams=None, *, out=None):
    """``tensor`` split along ``dim`` across ``devices`` (or into ``out``)."""
    if out is None:
        _indices(devices)
        raise no_collective("scatter")
    if devices is not None:
        raise RuntimeError(f"'devices' must not be specified when 'out' is specified, but got devices={devices}")
    if chunk_sizes is not None:
        raise RuntimeError("'chunk_sizes' must not be specified when 'out' is specified, but got "
                           f"chunk_sizes={chunk_sizes}")
    raise no_collective("scatter_out")


def gather(tensors, dim: int = 0, destination=None, *, out=None):
    """``tensors`` concatenated along ``dim`` on ``destination`` (or into ``out``)."""
    if out is None:
        if destination == -1:
            warnings.warn('Using -1 to represent CPU tensor is deprecated. Please use a device object or string '
                          'instead, e.g., "cpu".', FutureWarning, stacklevel=2)
        if not (isinstance(destination, (str, _device_cls)) and _device_cls(destination).type == "cpu"):
            device_index(destination, optional=True)
        raise no_collective("gather")
    if destination is not None:
        raise RuntimeError(f"'destination' must not be specified when 'out' is specified, but got "
                           f"destination={destination}")
    raise no_collective("gather_out")
