"""Flatten parameters into one vector and back (torch.nn.utils.convert_parameters)."""
from __future__ import annotations

from typing import Iterable

from ..._tensor import Tensor
from ...ops import shape as _shape

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _typename(o) -> str:
    mod = type(o).__module__
    return type(o).__qualname__ if mod == "builtins" else f"{mod}.{type(o).__qualname__}"


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-d tensor: the parameters flattened and concatenated in order (differentiable)."""
    return _shape.cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Set each parameter's data to its consecutive slice of ``vec`` (the inverse of parameters_to_vector)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
