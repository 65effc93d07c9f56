from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear, Bilinear, LazyLinear

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear",
           "Bilinear", "LazyLinear"]

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
from .activation import *  # noqa: E402,F401,F403
from .activation import __all__ as _activation_all  # noqa: E402
from .normalization import BatchNorm1d, BatchNorm2d, InstanceNorm2d, LayerNorm, GroupNorm, RMSNorm  # noqa: E402
from .dropout import Dropout, Dropout2d, AlphaDropout  # noqa: E402
from .sparse import Embedding, EmbeddingBag  # noqa: E402
from .flatten import Flatten, Unflatten  # noqa: E402
from .loss import *  # noqa: E402,F401,F403
from .loss import __all__ as _loss_all  # noqa: E402
from .syncbatchnorm import SyncBatchNorm  # noqa: E402

__all__ += [*_activation_all, "BatchNorm1d", "BatchNorm2d", "InstanceNorm2d", "LayerNorm", "GroupNorm", "RMSNorm",
            "Dropout", "Dropout2d", "AlphaDropout", "Embedding", "EmbeddingBag", "Flatten", "Unflatten", *_loss_all,
            "SyncBatchNorm"]

# recurrent layers
from . import rnn as _rnn  # noqa: E402
from .rnn import *  # noqa: E402,F401,F403

__all__ += [*_rnn.__all__]

# attention and transformer layers
from . import transformer as _transformer  # noqa: E402
from .transformer import *  # noqa: E402,F401,F403

__all__ += [*_transformer.__all__]

