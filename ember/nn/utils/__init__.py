"""ember.nn.utils: gradient clipping, parameter/vector conversion and sequence packing, as torch.nn.utils."""
from ..._lazy import attach
from . import clip_grad, convert_parameters, rnn
from .clip_grad import clip_grad_norm_, clip_grad_norm, clip_grad_value_, get_total_norm, clip_grads_with_norm_
from .convert_parameters import parameters_to_vector, vector_to_parameters

# stateless (functional_call) needs ember.func: loaded on first use
__getattr__, __dir__ = attach(__name__, {"stateless": ".stateless"})
