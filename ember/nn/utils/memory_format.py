"""Converting convolution weights to a memory format, as torch.nn.utils.memory_format."""
from __future__ import annotations

from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes: tuple):
    if isinstance(module, classes):
        weight = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = weight.resize_(weight.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """``module`` with the weight of every Conv2d / ConvTranspose2d in it (itself included) in ``memory_format``."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """``module`` with the weight of every Conv3d / ConvTranspose3d in it (itself included) in ``memory_format``."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
