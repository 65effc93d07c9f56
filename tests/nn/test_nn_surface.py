"""torch.nn's API surface in ember: curated lists of layer and functional names that must exist (a regression guard:
none may disappear), each also a torch name, each resolving through ember.nn's lazy tables and listed by dir()."""
from __future__ import annotations

import pytest

from oracle import ember, torch

NN_MODULES = """
AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveMaxPool1d AdaptiveMaxPool2d AlphaDropout AvgPool1d AvgPool2d BCELoss
BCEWithLogitsLoss BatchNorm1d BatchNorm2d BatchNorm3d Bilinear CELU CTCLoss ChannelShuffle CircularPad1d CircularPad2d
CircularPad3d ConstantPad1d ConstantPad2d ConstantPad3d Conv1d Conv2d ConvTranspose1d ConvTranspose2d
CosineEmbeddingLoss CosineSimilarity CrossEntropyLoss Dropout Dropout1d Dropout2d Dropout3d ELU Embedding EmbeddingBag
FeatureAlphaDropout Flatten Fold GELU GLU GRU GRUCell GaussianNLLLoss GroupNorm Hardsigmoid Hardswish Hardtanh
HuberLoss Identity InstanceNorm1d InstanceNorm2d InstanceNorm3d KLDivLoss L1Loss LPPool1d LPPool2d LSTM LSTMCell
LayerNorm LazyLinear LeakyReLU Linear LocalResponseNorm LogSoftmax MSELoss MarginRankingLoss MaxPool1d MaxPool2d
MaxUnpool1d MaxUnpool2d Mish Module ModuleDict ModuleList MultiheadAttention NLLLoss PReLU PairwiseDistance
ParameterDict ParameterList PixelShuffle PixelUnshuffle PoissonNLLLoss RMSNorm RNN RNNBase RNNCell RNNCellBase ReLU
ReLU6 ReflectionPad1d ReflectionPad2d ReflectionPad3d ReplicationPad1d ReplicationPad2d ReplicationPad3d SELU
Sequential SiLU Sigmoid SmoothL1Loss Softmax Softmin Softplus Softsign SyncBatchNorm Tanh Tanhshrink Threshold
Transformer TransformerDecoder TransformerDecoderLayer TransformerEncoder TransformerEncoderLayer TripletMarginLoss
Unflatten Unfold Upsample UpsamplingBilinear2d UpsamplingNearest2d ZeroPad1d ZeroPad2d ZeroPad3d
Conv3d ConvTranspose3d MaxPool3d AvgPool3d AdaptiveAvgPool3d AdaptiveMaxPool3d LPPool3d MaxUnpool3d FractionalMaxPool2d
FractionalMaxPool3d LazyConv1d LazyConv2d LazyConv3d LazyConvTranspose1d LazyConvTranspose2d LazyConvTranspose3d
LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d LazyInstanceNorm1d LazyInstanceNorm2d LazyInstanceNorm3d
AdaptiveLogSoftmaxWithLoss Container CrossMapLRN2d LinearCrossEntropyLoss
""".split()

NN_FUNCTIONAL = """
adaptive_avg_pool1d adaptive_avg_pool2d adaptive_max_pool1d adaptive_max_pool1d_with_indices adaptive_max_pool2d
adaptive_max_pool2d_with_indices alpha_dropout avg_pool1d avg_pool2d batch_norm bilinear binary_cross_entropy
binary_cross_entropy_with_logits celu channel_shuffle conv1d conv2d conv_transpose1d conv_transpose2d
cosine_embedding_loss cosine_similarity cross_entropy ctc_loss dropout dropout1d dropout2d dropout3d elu elu_
embedding embedding_bag feature_alpha_dropout fold gaussian_nll_loss gelu glu group_norm gumbel_softmax hardsigmoid
hardswish hardtanh hardtanh_ huber_loss instance_norm interpolate kl_div l1_loss layer_norm leaky_relu leaky_relu_
linear local_response_norm log_softmax lp_pool1d lp_pool2d margin_ranking_loss max_pool1d max_pool1d_with_indices
max_pool2d max_pool2d_with_indices max_unpool1d max_unpool2d mish mse_loss multi_head_attention_forward
native_channel_shuffle nll_loss normalize one_hot pad pairwise_distance pdist pixel_shuffle pixel_unshuffle
poisson_nll_loss prelu relu relu6 relu_ rms_norm scaled_dot_product_attention selu sigmoid silu smooth_l1_loss softmax
softmin softplus softsign tanh tanhshrink threshold threshold_ triplet_margin_loss unfold upsample upsample_bilinear
upsample_nearest conv3d conv_transpose3d max_pool3d max_pool3d_with_indices avg_pool3d adaptive_avg_pool3d
adaptive_max_pool3d adaptive_max_pool3d_with_indices lp_pool3d max_unpool3d fractional_max_pool2d fractional_max_pool3d
fractional_max_pool2d_with_indices fractional_max_pool3d_with_indices grid_sample affine_grid
celu_ selu_ conv_tbc linear_cross_entropy assert_int_or_pair boolean_dispatch
""".split()


@pytest.mark.parametrize("space,names", [("nn", NN_MODULES), ("nn.functional", NN_FUNCTIONAL)])
def test_curated_nn_names_exist(space, names):
    t, e = torch, ember
    for part in space.split("."):
        t, e = getattr(t, part), getattr(e, part)
    assert not [n for n in names if not hasattr(t, n)], "the list holds only torch names"
    missing = [n for n in names if not callable(getattr(e, n, None))]
    assert not missing, f"ember.{space} lacks {missing}"
    assert not set(names) - set(dir(e)), "dir() lists every lazily loaded name"


def test_layers_are_modules():
    for n in NN_MODULES:
        assert isinstance(getattr(ember.nn, n), type) and issubclass(getattr(ember.nn, n), ember.nn.Module), n


NN_NAMESPACES = {  # submodule -> names torch has there that ember provides
    "nn.utils.parametrize": "cached ParametrizationList register_parametrization is_parametrized remove_parametrizations "
                            "type_before_parametrizations transfer_parametrizations_and_params",
    "nn.utils.parametrizations": "orthogonal spectral_norm weight_norm",
    "nn.utils.prune": "BasePruningMethod PruningContainer Identity RandomUnstructured L1Unstructured RandomStructured "
                      "LnStructured CustomFromMask identity random_unstructured l1_unstructured random_structured "
                      "ln_structured global_unstructured custom_from_mask remove is_pruned",
    "nn.utils": "weight_norm remove_weight_norm spectral_norm remove_spectral_norm",
    "nn.attention": "SDPBackend sdpa_kernel WARN_FOR_UNFUSED_KERNELS",
    "nn.attention.bias": "causal_upper_left causal_lower_right CausalVariant CausalBias",
    "nn.init": "uniform normal constant eye dirac xavier_uniform xavier_normal kaiming_uniform kaiming_normal orthogonal "
               "sparse sparse_",
    "nn.parameter": "UninitializedParameter UninitializedBuffer is_lazy",
    "nn.modules.lazy": "LazyModuleMixin",
}


@pytest.mark.parametrize("space", sorted(NN_NAMESPACES))
def test_nn_long_tail_namespaces(space):
    import importlib

    t = importlib.import_module("torch." + space)
    e = importlib.import_module("ember." + space)
    names = NN_NAMESPACES[space].split()
    assert not [n for n in names if not hasattr(t, n)], "the list holds only torch names"
    assert not [n for n in names if not hasattr(e, n)], f"ember.{space} lacks some"
