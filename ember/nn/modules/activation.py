"""Activation layers and the softmax family; each wraps its functional form (ember.nn.functional)."""
from __future__ import annotations

import inspect
import warnings

from ... import _factories as _F
from ..._tensor import Tensor
from .. import functional as F
from ..parameter import Parameter
from ..._device import _check_device
from .module import Module

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "PReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Softplus",
           "Softsign", "Hardtanh", "Hardsigmoid", "Hardswish", "Sigmoid", "Tanh", "Tanhshrink", "Softmax",
           "LogSoftmax", "Softmin", "GLU", "Threshold", "CosineSimilarity", "PairwiseDistance"]
__all__ += ["LogSigmoid", "Hardshrink", "Softshrink", "RReLU", "Softmax2d"]


_REQUIRED = object()  # a parameter without default


def _layer(name: str, fn, params: tuple, shown: tuple | None = None, doc: str = "", call: tuple | None = None,
           bare: bool = False):
    """A Module class whose ``__init__`` takes ``params`` ((name, default) pairs, in torch's order) and whose
    forward is ``fn(input, *those attributes)`` (``call``: other attribute names to pass, e.g. ``training``);
    ``shown``: the attributes extra_repr prints (default: all but inplace=False, which torch omits); ``bare``:
    values printed without their names."""
    names = tuple(p for p, _ in params)
    args = names if call is None else call

    def __init__(self, *args, **kwargs) -> None:
        Module.__init__(self)
        if len(args) > len(names):
            raise TypeError(f"{name}.__init__() takes from 1 to {len(names) + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        values = dict(params)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            values[k] = v
        missing = [k for k in names if values[k] is _REQUIRED]
        if missing:
            raise TypeError(f"{name}.__init__() missing {len(missing)} required positional argument"
                            f"{'s' if len(missing) > 1 else ''}: " + " and ".join(f"'{k}'" for k in missing))
        for k in names:
            setattr(self, k, values[k])

    def forward(self, input: Tensor) -> Tensor:
        return fn(input, *(getattr(self, k) for k in args))

    def extra_repr(self) -> str:
        keys = shown if shown is not None else names
        parts = []
        for k in keys:
            v = getattr(self, k)
            if k == "inplace":
                if v:
                    parts.append("inplace=True")
                continue
            parts.append(f"{v}" if bare else f"{k}={v!r}")
        return ", ".join(parts)

    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                             default=inspect.Parameter.empty if d is _REQUIRED else d) for k, d in params])
    return type(name, (Module,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr,
                                  "__doc__": doc or f"Applies {fn.__name__} elementwise.", "__module__": __name__,
                                  "__constants__": list(names)})


_INPLACE = (("inplace", False),)
ReLU = _layer("ReLU", F.relu, _INPLACE)
ReLU6 = _layer("ReLU6", F.relu6, _INPLACE)
LeakyReLU = _layer("LeakyReLU", F.leaky_relu, (("negative_slope", 0.01),) + _INPLACE)
ELU = _layer("ELU", F.elu, (("alpha", 1.0),) + _INPLACE)
SELU = _layer("SELU", F.selu, _INPLACE)
CELU = _layer("CELU", F.celu, (("alpha", 1.0),) + _INPLACE)
def _gelu(input: Tensor, approximate: str) -> Tensor:
    return F.gelu(input, approximate=approximate)


_gelu.__name__ = "gelu"
GELU = _layer("GELU", _gelu, (("approximate", "none"),))
SiLU = _layer("SiLU", F.silu, _INPLACE)
Mish = _layer("Mish", F.mish, _INPLACE)
Softplus = _layer("Softplus", F.softplus, (("beta", 1.0), ("threshold", 20.0)))
Softsign = _layer("Softsign", F.softsign, ())
Hardsigmoid = _layer("Hardsigmoid", F.hardsigmoid, _INPLACE, shown=())  # torch prints no inplace
Hardswish = _layer("Hardswish", F.hardswish, _INPLACE, shown=())
Sigmoid = _layer("Sigmoid", F.sigmoid, ())
Tanh = _layer("Tanh", F.tanh, ())
Tanhshrink = _layer("Tanhshrink", F.tanhshrink, ())
Threshold = _layer("Threshold", F.threshold, (("threshold", _REQUIRED), ("value", _REQUIRED)) + _INPLACE)
GLU = _layer("GLU", F.glu, (("dim", -1),))
Softmax = _layer("Softmax", F.softmax, (("dim", None),))
LogSoftmax = _layer("LogSoftmax", F.log_softmax, (("dim", None),))
Softmin = _layer("Softmin", F.softmin, (("dim", None),))
LogSigmoid = _layer("LogSigmoid", F.logsigmoid, ())
Hardshrink = _layer("Hardshrink", F.hardshrink, (("lambd", 0.5),), bare=True)
Softshrink = _layer("Softshrink", F.softshrink, (("lambd", 0.5),), bare=True)
RReLU = _layer("RReLU", F.rrelu, (("lower", 1.0 / 8), ("upper", 1.0 / 3)) + _INPLACE,
               call=("lower", "upper", "training", "inplace"),
               doc="leaky_relu with random negative slopes from U(lower, upper) in training, their mean in eval.")


def _softmax2d(input: Tensor) -> Tensor:
    if input.dim() not in (3, 4):
        raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
    return F.softmax(input, -3)


Softmax2d = _layer("Softmax2d", _softmax2d, (), doc="Softmax over the channels (dim -3) at each spatial location.")


class Hardtanh(Module):
    """Clamps its input into [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        if max_val <= min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """leaky_relu with a learned slope (one, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        _check_device(device)
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_F.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        from .. import init as _init
        _init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """p-norm distance between two inputs along the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
