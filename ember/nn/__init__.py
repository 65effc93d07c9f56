"""ember.nn: Module, Parameter, layers, functional API and init, as torch.nn."""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from .modules import (Module, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict, Identity, Linear,
                      Bilinear, LazyLinear)
from .modules import LAZY_NAMES as _LAZY_LAYERS
from . import functional, init
from .modules import module
from .._lazy import attach

# loaded on first use: the layer families other than Linear (see modules/__init__.py), nn.utils and nn.parallel
# (DataParallel, DistributedDataParallel needs ember.distributed)
__getattr__, __dir__ = attach(__name__, {"utils": ".utils", "parallel": ".parallel", "attention": ".attention",
                                         "DataParallel": ".parallel:DataParallel",
                                         **{n: f".modules:{n}" for n in _LAZY_LAYERS}})

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "functional", "init", "utils", "parallel",
           "attention", "DataParallel",
           "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear",
           "Bilinear", "LazyLinear", *_LAZY_LAYERS]
