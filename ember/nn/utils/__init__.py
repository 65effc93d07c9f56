"""ember.nn.utils: gradient clipping, parameter/vector conversion, sequence packing, parametrizations, pruning and
the weight and spectral norm hooks, as torch.nn.utils."""
from ..._lazy import attach
from . import clip_grad, convert_parameters, rnn
from .clip_grad import clip_grad_norm_, clip_grad_norm, clip_grad_value_, get_total_norm, clip_grads_with_norm_
from .convert_parameters import parameters_to_vector, vector_to_parameters

# loaded on first use: stateless (functional_call needs ember.func), parametrizations, pruning, the old weight and
# spectral norms
__getattr__, __dir__ = attach(__name__, {
    "stateless": ".stateless", "parametrize": ".parametrize", "parametrizations": ".parametrizations",
    "prune": ".prune", "weight_norm": "._weight_norm:weight_norm", "remove_weight_norm": "._weight_norm:remove_weight_norm",
    "spectral_norm": "._spectral_norm:spectral_norm", "remove_spectral_norm": "._spectral_norm:remove_spectral_norm"})
