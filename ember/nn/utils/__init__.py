"""ember.nn.utils: gradient clipping, parameter/vector conversion, sequence packing, parametrizations, pruning,
the weight and spectral norm hooks, conv/linear + batch norm fusion, skip_init, as torch.nn.utils."""
from ..._lazy import attach
from . import clip_grad, convert_parameters, rnn
from .clip_grad import clip_grad_norm_, clip_grad_norm, clip_grad_value_, get_total_norm, clip_grads_with_norm_
from .convert_parameters import parameters_to_vector, vector_to_parameters
# NOTE [a function named like its module]: torch.nn.utils.weight_norm is the function, and
# torch.nn.utils.weight_norm.WeightNorm a class of the module of the same name. Importing a submodule binds its
# name in the package to the module once, on first import; importing both here first, then binding the functions,
# keeps the function under that name whichever path user code imports later (as torch's __init__ does).
from . import weight_norm as _weight_norm_module, spectral_norm as _spectral_norm_module  # noqa: F401
from .weight_norm import weight_norm, remove_weight_norm
from .spectral_norm import spectral_norm, remove_spectral_norm

# loaded on first use: stateless (functional_call needs ember.func), parametrizations, pruning, fusion, skip_init,
# the memory-format conversions
__getattr__, __dir__ = attach(__name__, {
    "stateless": ".stateless", "parametrize": ".parametrize", "parametrizations": ".parametrizations",
    "prune": ".prune", "fusion": ".fusion", "init": ".init", "memory_format": ".memory_format",
    **{n: f".fusion:{n}" for n in ("fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
                                   "fuse_linear_bn_weights")},
    "skip_init": ".init:skip_init",
    "convert_conv2d_weight_memory_format": ".memory_format:convert_conv2d_weight_memory_format",
    "convert_conv3d_weight_memory_format": ".memory_format:convert_conv3d_weight_memory_format"})

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grads_with_norm_", "clip_grad_value_",
           "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "get_total_norm",
           "parameters_to_vector", "parametrizations", "parametrize", "remove_spectral_norm", "remove_weight_norm",
           "rnn", "skip_init", "spectral_norm", "stateless", "vector_to_parameters", "weight_norm"]
