"""Ops that are a linear map along each trailing axis: reflection/replication/circular padding,
nearest, (bi/tri)linear, bicubic and antialiased interpolation, adaptive average pooling.

Each is a tuple of per-axis maps for the last ``len(maps)`` axes: a ``_Take`` (out[i] = x[idx[i]]) or a
``_Mat`` (out = M @ x along the axis). The gradient is the same op with every map transposed (a take's
transpose is a one-hot matrix), so all orders of derivative stay in ember ops. One ``Op`` subclass per torch
node name comes from a table.
"""
from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _wrap
from .. import _args
from ._op import Op

__all__ = ["Take", "Mat", "axis_map"]
_QUIET_OPS = True  # forwards run without NumPy floating-point warnings (see Op.__init_subclass__)


class Take:
    """out[..., i] = x[..., idx[i]] along one axis."""

    __slots__ = ("idx", "n_in")

    def __init__(self, idx: np.ndarray, n_in: int) -> None:
        self.idx, self.n_in = idx, n_in

    def __call__(self, x: np.ndarray, axis: int) -> np.ndarray:
        return np.take(x, self.idx, axis=axis)

    @property
    def T(self) -> "Mat":
        m = np.zeros((self.n_in, len(self.idx)))
        m[self.idx, np.arange(len(self.idx))] = 1.0
        return Mat(m)


class Mat:
    """out = M @ x along one axis."""

    __slots__ = ("m",)

    def __init__(self, m: np.ndarray) -> None:
        self.m = m

    def __call__(self, x: np.ndarray, axis: int) -> np.ndarray:
        m = self.m.astype(x.dtype, copy=False) if x.dtype.kind == "f" else self.m
        if axis == x.ndim - 1:
            return x @ m.T
        return np.moveaxis(np.moveaxis(x, axis, -1) @ m.T, -1, axis)

    @property
    def T(self) -> "Mat":
        return Mat(self.m.T)


class _AxisMap(Op):
    """d f(x) = f^T(grad), f a linear map along each of the trailing axes"""
    _abstract = True

    __slots__ = ()
    attrs = ("maps",)
    inputs = ("self", "input")
    _pair: type = None  # the adjoint's class (and back)
    _is_adjoint = False

    @staticmethod
    def forward(ctx, self, input, maps):
        nd = self.ndim
        out = self
        for k, m in enumerate(maps):
            if m is not None:
                out = m(out, nd - len(maps) + k)
        return np.ascontiguousarray(out) if out is not self else out.copy()

    def backward(ctx, grad):
        cls = type(ctx)
        maps_t = tuple(None if m is None else m.T for m in ctx.maps)
        saved = ctx.saved_tensors[0] if cls.save else None
        if cls._is_adjoint:  # torch's adjoint takes the original input too; its gradient there is zero
            zero = _wrap(np.zeros(saved.shape, saved._data.dtype), saved._dtype) if ctx.needs_input_grad[1] else None
            return cls._pair.apply(grad, None, maps_t), zero
        return cls._pair.apply(grad, saved, maps_t), None


# torch node name -> whether its adjoint takes the original input (torch's *_backward(grad, self, ...))
_TABLE = {"ReflectionPad1D": True, "ReflectionPad2D": True, "ReflectionPad3D": True, "ReplicationPad1D": True,
          "ReplicationPad2D": True, "ReplicationPad3D": True, "CircularPad": False, "UpsampleNearest1D": False,
          "UpsampleNearest2D": False, "UpsampleNearest3D": False, "UpsampleNearestExact1D": False,
          "UpsampleNearestExact2D": False, "UpsampleNearestExact3D": False, "UpsampleLinear1D": False,
          "UpsampleBilinear2D": False, "UpsampleTrilinear3D": False, "UpsampleBicubic2D": False,
          "UpsampleBilinear2DAa": False, "UpsampleBicubic2DAa": False, "AdaptiveAvgPool2D": True,
          "AdaptiveAvgPool3D": True}
_OPS = {}
for _n, _self in _TABLE.items():
    _f = type(_n, (_AxisMap,), {"__slots__": (), "_name": _n + "Backward0", "save": ("self",) if _self else ()})
    _b = type(_n + "Backward", (_AxisMap,), {"__slots__": (), "_name": _n + "BackwardBackward0", "_is_adjoint": True,
                                             "save": ("input",) if _self else ()})
    _f._pair, _b._pair = _b, _f
    _OPS[_n] = _f
del _n, _self, _f, _b


# maps torch computes on real dtypes only: the kernel its complex error names (padding takes complex tensors)
_REAL_ONLY = {"UpsampleNearest1D": "compute_indices_weights_nearest",
              "UpsampleNearest2D": "upsample_nearest2d_channels_last",
              "UpsampleNearest3D": "compute_indices_weights_nearest",
              "UpsampleNearestExact1D": "compute_indices_weights_nearest",
              "UpsampleNearestExact2D": "upsample_nearest2d_channels_last",
              "UpsampleNearestExact3D": "compute_indices_weights_nearest",
              "UpsampleLinear1D": "compute_indices_weights_linear",
              "UpsampleBilinear2D": "upsample_bilinear2d_channels_last",
              "UpsampleTrilinear3D": "compute_indices_weights_linear",
              "UpsampleBicubic2D": "compute_indices_weights_cubic",
              "UpsampleBilinear2DAa": "compute_index_ranges_weights", "UpsampleBicubic2DAa": "compute_index_ranges_weights",
              "AdaptiveAvgPool2D": "adaptive_avg_pool2d", "AdaptiveAvgPool3D": "adaptive_avg_pool3d_cpu"}
assert set(_REAL_ONLY) <= set(_TABLE)


def axis_map(name: str, input: Tensor, maps: tuple) -> Tensor:
    """Apply the per-axis ``maps`` to the trailing axes of ``input`` as the node ``name``."""
    if input._dtype.is_complex and name in _REAL_ONLY:
        from .reduction import complex_refused

        raise complex_refused(_REAL_ONLY[name], input._data.dtype)
    return _OPS[name].apply(input, None, tuple(maps))


class ConstantPadNd(Op):
    """d pad(x, p, value) = pad(grad, -p) (negative padding crops)"""

    __slots__ = ()
    attrs = ("pad", "value")

    @staticmethod
    def forward(ctx, self, pad, value):
        nd = self.ndim
        shape = list(self.shape)
        src, dst = [slice(None)] * nd, [slice(None)] * nd
        for k in range(len(pad) // 2):
            ax = nd - 1 - k
            lo, hi, n = pad[2 * k], pad[2 * k + 1], self.shape[ax]
            shape[ax] = n + lo + hi
            if shape[ax] < 0:
                raise RuntimeError("narrow(): length must be non-negative.")  # torch 2.13's wording
            src[ax] = slice(max(-lo, 0), n - max(-hi, 0))
            dst[ax] = slice(max(lo, 0), shape[ax] - max(hi, 0))
        out = np.full(shape, value, self.dtype)
        out[tuple(dst)] = self[tuple(src)]
        return out

    def backward(ctx, grad):
        return ConstantPadNd.apply(grad, tuple(-p for p in ctx.pad), 0)


def constant_pad_nd(input: Tensor, pad: tuple, value=0) -> Tensor:
    return ConstantPadNd.apply(input, tuple(pad), value)


_args.install(globals(), ("constant_pad_nd",))
