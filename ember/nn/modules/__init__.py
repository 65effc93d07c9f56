from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear"]

# convolution, pooling, padding, upsampling, pixel shuffle, fold
from . import conv as _conv, pooling as _pooling, padding as _padding, upsampling as _upsampling  # noqa: E402
from . import pixelshuffle as _pixelshuffle, fold as _fold  # noqa: E402
from .conv import *  # noqa: E402,F401,F403
from .pooling import *  # noqa: E402,F401,F403
from .padding import *  # noqa: E402,F401,F403
from .upsampling import *  # noqa: E402,F401,F403
from .pixelshuffle import *  # noqa: E402,F401,F403
from .fold import *  # noqa: E402,F401,F403

__all__ += [*_conv.__all__, *_pooling.__all__, *_padding.__all__, *_upsampling.__all__, *_pixelshuffle.__all__,
            *_fold.__all__]
