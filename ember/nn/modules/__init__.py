"""ember.nn.modules: the layers. Module, the containers and Linear load with ember.nn; every other family
(convolution, pooling, activations, losses, recurrent, transformer ...) loads on first use of one of its names."""
from ..._lazy import attach
from .module import Module
from .container import Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import Identity, Linear, Bilinear, LazyLinear

# submodule -> the layers it defines (its __all__; tests/core/test_lazy_imports.py keeps the two equal)
LAZY_FAMILIES = {
    "conv": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
             "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"),
    "pooling": ("MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
                "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
                "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
                "FractionalMaxPool3d"),
    "padding": ("ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
                "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
                "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"),
    "upsampling": ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"),
    "pixelshuffle": ("PixelShuffle", "PixelUnshuffle"),
    "fold": ("Fold", "Unfold"),
    "activation": ("ReLU", "ReLU6", "LeakyReLU", "PReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Softplus",
                   "Softsign", "Hardtanh", "Hardsigmoid", "Hardswish", "Sigmoid", "Tanh", "Tanhshrink", "Softmax",
                   "LogSoftmax", "Softmin", "GLU", "Threshold", "CosineSimilarity", "PairwiseDistance",
                   "LogSigmoid", "Hardshrink", "Softshrink", "RReLU", "Softmax2d"),
    "normalization": ("BatchNorm1d", "BatchNorm2d", "InstanceNorm2d", "LayerNorm", "GroupNorm", "RMSNorm",
                      "BatchNorm3d", "InstanceNorm1d", "InstanceNorm3d", "LocalResponseNorm", "LazyBatchNorm1d",
                      "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
                      "LazyInstanceNorm3d", "CrossMapLRN2d"),
    "dropout": ("Dropout", "Dropout2d", "AlphaDropout", "Dropout1d", "Dropout3d", "FeatureAlphaDropout"),
    "sparse": ("Embedding", "EmbeddingBag"),
    "flatten": ("Flatten", "Unflatten"),
    "loss": ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
             "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "TripletMarginLoss",
             "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
             "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss", "MultiMarginLoss", "TripletMarginWithDistanceLoss",
             "NLLLoss2d", "LinearCrossEntropyLoss"),
    "linear_cross_entropy_options": ("LinearCrossEntropyOptions",),
    "syncbatchnorm": ("SyncBatchNorm",),
    "rnn": ("RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"),
    "transformer": ("MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
                    "TransformerDecoder", "Transformer"),
    "channelshuffle": ("ChannelShuffle",),
    "adaptive": ("AdaptiveLogSoftmaxWithLoss",),
}
LAZY_NAMES = tuple(n for names in LAZY_FAMILIES.values() for n in names)

__all__ = ["Module", "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear",
           "Bilinear", "LazyLinear", *LAZY_NAMES]

# torch's submodule paths whose names ember defines elsewhere (torch.nn.modules.batchnorm._BatchNorm ...), and
# torch's argument helpers (torch.nn.modules.utils._pair)
_ALIAS_MODULES = ("batchnorm", "instancenorm", "distance", "utils")

__getattr__, __dir__ = attach(__name__, {**{sub: f".{sub}" for sub in (*LAZY_FAMILIES, *_ALIAS_MODULES)},
                                         **{n: f".{sub}:{n}" for sub, names in LAZY_FAMILIES.items() for n in names}})
