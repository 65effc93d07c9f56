from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear"]
from .activation import *  # noqa: F401,F403
from .activation import __all__ as _activation_all
from .normalization import BatchNorm1d, BatchNorm2d, InstanceNorm2d, LayerNorm, GroupNorm, RMSNorm
from .dropout import Dropout, Dropout2d, AlphaDropout
from .sparse import Embedding
from .flatten import Flatten, Unflatten
from .loss import *  # noqa: F401,F403
from .loss import __all__ as _loss_all

__all__ += [*_activation_all, "BatchNorm1d", "BatchNorm2d", "InstanceNorm2d", "LayerNorm", "GroupNorm", "RMSNorm",
            "Dropout", "Dropout2d", "AlphaDropout", "Embedding", "Flatten", "Unflatten", *_loss_all]
