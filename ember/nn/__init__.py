"""ember.nn: Module, Parameter, layers, functional API and init, as torch.nn."""
from .parameter import Parameter, Buffer, UninitializedParameter
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import functional, init
from .modules import module
from . import utils
from .._lazy import attach

# nn.parallel (DataParallel, DistributedDataParallel) needs ember.distributed: loaded on first use
__getattr__, __dir__ = attach(__name__, {"parallel": ".parallel", "DataParallel": ".parallel:DataParallel"})

_LAZY_ALL = ["parallel", "DataParallel"]  # resolved by __getattr__
__all__ = ["Parameter", "Buffer", "UninitializedParameter", "functional", "init", "utils", *_LAZY_ALL, *_modules_all]
