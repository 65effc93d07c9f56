"""replicate: copies of a module for each device, as torch.nn.parallel.replicate. Copying parameters or buffers
needs a GPU (torch's CPU build raises); a module without either replicates as in torch."""
from __future__ import annotations

from ..modules.module import Module
from ._devices import cpu_tensors, device_index, no_collective

__all__ = ["replicate"]


def replicate(network: Module, devices, detach: bool = False) -> list:
    """``len(devices)`` replicas of ``network`` sharing its (parameter-free) structure."""
    if not devices:
        return []
    devices = [device_index(d, True) for d in devices]
    if any(True for _ in network.parameters()):
        if detach:
            raise no_collective("broadcast_coalesced")
        raise cpu_tensors("Broadcast")
    if any(True for _ in network.buffers()):
        buffers_rg = any(b.requires_grad for b in network.buffers())
        if buffers_rg and not detach:
            raise cpu_tensors("Broadcast")
        raise no_collective("broadcast_coalesced")
    modules = list(network.modules())
    index = {id(m): i for i, m in enumerate(modules)}
    copies = [[m._replicate_for_data_parallel() for m in modules] for _ in devices]
    for replicas in copies:
        for i, module in enumerate(modules):
            for key, child in module._modules.items():
                if child is None:
                    replicas[i]._modules[key] = None
                else:
                    setattr(replicas[i], key, replicas[index[id(child)]])
    return [replicas[0] for replicas in copies]
