"""ember.nn: Module, Parameter, layers, functional API and init, as torch.nn."""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from .modules import (Module, Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict, Identity, Linear,
                      Bilinear, LazyLinear)
from .modules import LAZY_NAMES as _LAZY_LAYERS
from . import functional, init
from .modules import module
from . import modules, parameter  # noqa: F401 - torch.nn.modules / torch.nn.parameter
from .._lazy import attach

# loaded on first use: the layer families other than Linear (see modules/__init__.py), nn.utils and nn.parallel
# (DataParallel, DistributedDataParallel needs ember.distributed)
__getattr__, __dir__ = attach(__name__, {"utils": ".utils", "parallel": ".parallel", "attention": ".attention",
                                         "DataParallel": ".parallel:DataParallel", "grad": ".grad",
                                         "common_types": ".common_types", "_reduction": "._reduction",
                                         **{n: f".modules:{n}" for n in _LAZY_LAYERS}})

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "functional", "init", "utils", "parallel",
           "attention", "DataParallel",
           "Module", "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear",
           "Bilinear", "LazyLinear", *_LAZY_LAYERS]


def factory_kwargs(kwargs) -> dict:
    """``kwargs`` checked and reduced to the factory arguments (device, dtype, memory_format), merged with an
    explicit ``factory_kwargs`` entry, for passing on to ember.empty and friends."""
    if kwargs is None:
        return {}
    simple = ("device", "dtype", "memory_format")
    expected = {*simple, "factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for k in simple:
        if k in kwargs:
            if k in out:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            out[k] = kwargs[k]
    return out
