"""ember.nn: Module, Parameter, layers, functional API and init, as torch.nn."""
from .parameter import Parameter, Buffer, UninitializedParameter
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import functional, init
from .modules import module
from . import utils, parallel
from .parallel import DataParallel

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "functional", "init", "utils", "parallel", "DataParallel",
           *_modules_all]
