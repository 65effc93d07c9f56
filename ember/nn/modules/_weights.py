"""The weight and bias of the affine layers (Linear, Bilinear, the convolutions): made with the layer's shapes,
then initialised by its ``reset_parameters`` (torch's default for Linear and the convolutions is here too)."""
from __future__ import annotations

import math

from ... import _factories as _F
from .. import init
from ..parameter import Parameter


def _weight_and_bias(layer, weight_shape: tuple, bias_size: int, bias: bool, device, dtype) -> None:
    """Give ``layer`` a ``weight`` of ``weight_shape`` and a ``bias`` of ``bias_size`` (a None parameter when not
    ``bias``), then call its ``reset_parameters``."""
    layer.weight = Parameter(_F.empty(weight_shape, device=device, dtype=dtype))
    if bias:
        layer.bias = Parameter(_F.empty(bias_size, device=device, dtype=dtype))
    else:
        layer.register_parameter("bias", None)
    layer.reset_parameters()


def _kaiming_reset(weight: Parameter, bias: Parameter | None, empty_fan_bias: bool) -> None:
    """torch's default initialisation of Linear and the convolutions: kaiming_uniform_(a=sqrt(5)) for the weight,
    which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same distribution for the bias. With fan_in 0 the bias is
    drawn from U(0, 0) when ``empty_fan_bias`` (Linear) and left as it is otherwise (the convolutions), as torch's."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        if fan_in != 0 or empty_fan_bias:
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(bias, -bound, bound)
