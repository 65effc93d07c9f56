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
def _vjp(conv, input, weight, grad_output: Tensor, wrt: int, stride, padding, dilation, groups) -> Tensor:
    """The gradient of ``conv`` with respect to operand ``wrt`` (0: input, 1: weight), given as its size."""
    create = is_grad_enabled()
    operands = [input, weight]
    operands[wrt] = _F.zeros(tuple(operands[wrt]), dtype=grad_output.dtype, device=grad_output.device,
                              requires_grad=True)  # the stand-in
    with enable_grad():
        out = conv(*operands, stride=stride, padding=padding, dilation=dilation, groups=groups)
        return _grad(out, operands[wrt], grad_output, create_graph=create)[0]


def _named(fn, nd: int, wrt: str, given: str):
    fn.__name__ = fn.__qualname__ = f"conv{nd}d_{wrt}"
    fn.__doc__ = (f"The gradient of conv{nd}d with respect to its {wrt} (of shape ``{wrt}_size``), given "
                  f"``{given}`` and the gradient of the output.")
    return fn


def _grad_fns(conv, nd: int) -> tuple:
    """conv{nd}d_input and conv{nd}d_weight, with torch's signatures."""
    def grad_input(input_size, weight: Tensor, grad_output: Tensor, stride=1, padding=0, dilation=1, groups=1):
        return _vjp(conv, input_size, weight, grad_output, 0, stride, padding, dilation, groups)

    def grad_weight(input: Tensor, weight_size, grad_output: Tensor, stride=1, padding=0, dilation=1, groups=1):
        return _vjp(conv, input, weight_size, grad_output, 1, stride, padding, dilation, groups)

    return _named(grad_input, nd, "input", "weight"), _named(grad_weight, nd, "weight", "input")


conv1d_input, conv1d_weight = _grad_fns(F.conv1d, 1)
conv2d_input, conv2d_weight = _grad_fns(F.conv2d, 2)
conv3d_input, conv3d_weight = _grad_fns(F.conv3d, 3)
