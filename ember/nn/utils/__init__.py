"""ember.nn.utils: gradient clipping and parameter/vector conversion, as torch.nn.utils."""
from importlib.util import find_spec as _find_spec

from . import clip_grad, convert_parameters
from .clip_grad import clip_grad_norm_, clip_grad_norm, clip_grad_value_, get_total_norm, clip_grads_with_norm_
from .convert_parameters import parameters_to_vector, vector_to_parameters

if _find_spec(__name__ + ".rnn") is not None:  # packing utilities come with the recurrent layers (rnn.py)
    from . import rnn  # noqa: F401
