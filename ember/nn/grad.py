"""Gradients of the convolutions with respect to their input and weight, as torch.nn.grad
(``conv2d_input(input_size, weight, grad_output, ...)``, ``conv2d_weight(input, weight_size, grad_output, ...)``)."""
from __future__ import annotations

from .. import _factories as _F
from .._tensor import Tensor
from ..autograd import grad as _grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


# NOTE [convolution gradients through autograd]: torch computes these with aten's convolution_backward; here the
# convolution runs forward on a stand-in for the missing operand and the engine takes the vector-Jacobian product
# with grad_output. The convolution is linear in each operand, so the stand-in's values never matter (zeros), and
# the result is differentiable in the given operands exactly when grad mode is on (create_graph), as torch's is.
def _vjp(conv, input: Tensor, weight: Tensor, grad_output: Tensor, wrt: int, **geometry) -> Tensor:
    create = is_grad_enabled()
    with enable_grad():
        operands = [input, weight]
        operands[wrt] = operands[wrt].detach().requires_grad_()
        out = conv(*operands, **geometry)
        return _grad(out, operands[wrt], grad_output, create_graph=create)[0]


def _input_fn(conv, nd: int):
    def grad_input(input_size, weight: Tensor, grad_output: Tensor, stride=1, padding=0, dilation=1, groups=1):
        stand_in = _F.zeros(tuple(input_size), dtype=grad_output.dtype)
        return _vjp(conv, stand_in, weight, grad_output, 0, stride=stride, padding=padding, dilation=dilation,
                    groups=groups)

    grad_input.__name__ = grad_input.__qualname__ = f"conv{nd}d_input"
    grad_input.__doc__ = (f"The gradient of conv{nd}d with respect to its input (of shape ``input_size``), given "
                          "``weight`` and the gradient of the output.")
    return grad_input


def _weight_fn(conv, nd: int):
    def grad_weight(input: Tensor, weight_size, grad_output: Tensor, stride=1, padding=0, dilation=1, groups=1):
        stand_in = _F.zeros(tuple(weight_size), dtype=grad_output.dtype)
        return _vjp(conv, input, stand_in, grad_output, 1, stride=stride, padding=padding, dilation=dilation,
                    groups=groups)

    grad_weight.__name__ = grad_weight.__qualname__ = f"conv{nd}d_weight"
    grad_weight.__doc__ = (f"The gradient of conv{nd}d with respect to its weight (of shape ``weight_size``), given "
                           "``input`` and the gradient of the output.")
    return grad_weight


conv1d_input, conv1d_weight = _input_fn(F.conv1d, 1), _weight_fn(F.conv1d, 1)
conv2d_input, conv2d_weight = _input_fn(F.conv2d, 2), _weight_fn(F.conv2d, 2)
conv3d_input, conv3d_weight = _input_fn(F.conv3d, 3), _weight_fn(F.conv3d, 3)
