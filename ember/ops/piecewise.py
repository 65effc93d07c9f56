"""The piecewise-linear elementwise ops: abs, sign, relu and the clamp family.

Their gradients are masks with torch's conventions at the kinks (a tie gives the gradient to x or to the bound, as
torch's clamp_backward_min_max; relu's is a node of its own, ThresholdBackward, so that it stays in the graph as
torch's), and clamp takes numbers or broadcast tensor bounds: each is an Op class written out here. The elementwise
ops that are one formula each (exp ... the rounding functions, maximum/minimum, lerp, the predicates) are rows of the
tables in ops/elementwise.py; this module declares its public names in the same way (NOTE [one row per op] in
ops/_table.py).
"""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from .. import _args
from .. import _dtype as D
from .._tensor import Tensor
from ._op import Op
from ._table import Names, export
from .elementwise import _floating, _zeros
from .complex_numbers import conj_physical, real, sgn


class Abs(Op):
    """d|x| = grad*sign(x) (complex x: grad*x/|x|, NOTE [complex autograd])"""

    __slots__ = ()
    save = ("self",)
    forward = staticmethod(lambda ctx, self: np.abs(self))

    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        if self._dtype.is_complex:
            return grad * sgn(self)
        return grad * self.sign()

    @staticmethod
    def jvp(args, out, tangents):
        x, t = args[0], tangents[0]
        if x._dtype.is_complex:  # d|z| = real(conj(sgn z) dz)
            return real(conj_physical(sgn(x)) * t)
        return t * x.sign()


class Sign(Op):
    """d sign(x) = 0 (zeros, not grad * 0: an inf or nan incoming gradient still gives zero, as torch)"""

    __slots__ = ()
    save = ("self",)
    forward = staticmethod(lambda ctx, self: _sign(self))

    def backward(ctx, grad):
        return _zeros(grad)


def _sign(x):
    if x.dtype.kind == "c":
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead.")
    return np.sign(x) if x.dtype != np.bool_ else x.copy()


class Relu(Op):
    """d relu(x) = grad where result > 0"""

    __slots__ = ()
    save = ("result",)

    @staticmethod
    def forward(ctx, self):
        if self.dtype == np.bool_:
            raise RuntimeError("Boolean inputs not supported for relu")
        if self.dtype.kind == "c":
            raise NotImplementedError("clamp is not supported for complex types")
        return np.maximum(self, self.dtype.type(0))

    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return ThresholdBackward.apply(grad, result)

    @staticmethod
    def jvp(args, out, tangents):
        return ThresholdBackward.apply(tangents[0], out)


# same-size unsigned integer of each float width: the bits of a float masked to all-zero are +0.0
_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _keep_where_positive(grad: np.ndarray, result: np.ndarray) -> np.ndarray:
    """``where(result > 0, grad, 0)``, bit for bit (inf and nan masked to +0.0), as an AND with a mask
    of all-one bits: NumPy's where branches on each element, ~5x slower on an unpredictable mask. (On a device,
    where: two kernels against three.)"""
    u = _BITS.get(grad.dtype.itemsize)
    if u is None or grad.dtype.kind != "f" or grad.shape != result.shape or type(grad) is not np.ndarray:
        return np.where(result > 0, grad, grad.dtype.type(0))
    out = np.empty(grad.shape, grad.dtype, like=_B.ref(grad))
    bits = out.view(u)
    np.subtract(u(0), np.greater(result, 0), out=bits, dtype=u)  # True -> 0 - 1 = all ones
    np.bitwise_and(bits, grad.view(u), out=bits)
    return out


class ThresholdBackward(Op):
    """relu's gradient where(result > 0, grad, 0) as an op of (grad, result), so that it stays in the
    graph of x as torch's does: d/dgrad = the same mask, d/dresult = 0"""

    __slots__ = ()
    save = ("other",)

    @staticmethod
    def forward(ctx, grad, result):
        return _keep_where_positive(grad, result)

    def backward(ctx, gg):
        (result,) = ctx.saved_tensors
        from .._tensor import _wrap

        return ThresholdBackward.apply(gg, result), _wrap(np.zeros(result.shape, result._data.dtype), result.dtype)


class Clamp(Op):
    """d clamp(x, min, max) = grad where min <= x <= max"""

    __slots__ = ("min", "max")
    _name = "ClampBackward1"
    save = ("self",)
    nattrs = 2

    @staticmethod
    def forward(ctx, self, lo, hi):
        if ctx is not None:
            ctx.min, ctx.max = lo, hi
        dt = self.dtype
        if dt.kind == "c":
            raise NotImplementedError("clamp is not supported for complex types")
        if dt.kind in "iub" and (isinstance(lo, float) or isinstance(hi, float)):
            self = _floating(self)
            dt = self.dtype
        out = self
        if lo is not None:
            out = np.maximum(out, lo, dtype=dt) if not _B.is_array(lo) else np.maximum(out, lo)
        if hi is not None:
            out = np.minimum(out, hi, dtype=dt) if not _B.is_array(hi) else np.minimum(out, hi)
        if (lo is not None and hi is not None and not _B.is_array(lo) and not _B.is_array(hi)
                and lo > hi):
            out = np.full_like(out, hi)
        return out.astype(dt, copy=False) if out is not self else out.copy()

    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        mask = None
        if ctx.min is not None:
            mask = self >= ctx.min
        if ctx.max is not None:
            m = self <= ctx.max
            mask = m if mask is None else mask & m
        from .indexing import where

        return where(mask, grad, 0.0)  # not grad * mask: an inf grad where clamped still gives 0


class ClampMin(Clamp):
    __slots__ = ()
    _name = "ClampMinBackward0"


class ClampMax(Clamp):
    __slots__ = ()
    _name = "ClampMaxBackward0"


class ClampTensor(Op):
    """d clamp(x, min, max) with tensor bounds: grad to x where min <= x <= max; to min where x < min (and
    min < max); to max where x > max (or max < min, where the result is max) -- torch's clamp_backward_min_max"""

    __slots__ = ()
    _name = "ClampBackward0"
    inputs = save = ("self", "min", "max")
    _tie_to_self = False

    @staticmethod
    def forward(ctx, self, lo, hi):
        dt = D.result_type(*[v for v in (self, lo, hi) if v is not None]).np
        out = self.astype(dt, copy=False)
        try:
            if lo is not None:
                out = np.maximum(out, lo, dtype=dt)
            if hi is not None:
                out = np.minimum(out, hi, dtype=dt)
        except ValueError:
            from .arithmetic import _broadcast_error

            shapes = [v.shape for v in (self, lo, hi) if v is not None]
            raise _broadcast_error(np.empty(shapes[0]), np.empty(np.broadcast_shapes(*shapes[1:]))
                                   if len(shapes) > 2 and _broadcasts(shapes[1:]) else np.empty(shapes[-1])) from None
        return out.copy() if out is self else out

    def backward(ctx, grad):
        names = type(ctx).save
        saved = dict(zip(names, ctx.saved_tensors))
        need = dict(zip(names, ctx.needs_input_grad))
        x, lo, hi = saved["self"], saved.get("min"), saved.get("max")
        from .indexing import where

        gx = glo = ghi = None
        if need["self"]:
            mask = x >= lo if lo is not None else None
            if hi is not None:
                mask = x <= hi if mask is None else mask & (x <= hi)
            gx = where(mask, grad, 0.0)
        if need.get("min"):
            glo = where((x < lo) & (lo < hi) if hi is not None else x < lo, grad, 0.0)
        if need.get("max"):
            ghi = where((x > hi) | (hi < lo) if lo is not None else x > hi, grad, 0.0)
        grads = {"self": gx, "min": glo, "max": ghi}
        return tuple(grads[n] for n in names)


    @classmethod
    def jvp(cls, args, out, tangents):
        """torch's clamp_jvp: with both bounds the tangent of whichever value was taken (x's at ties); with one
        bound of clamp the bound's at ties; clamp_min/clamp_max (``_tie_to_self``) x's at ties."""
        from .indexing import where

        p = dict(zip(cls.inputs, args))
        t = {n: (v if v is not None else _zeros(out)) for n, v in zip(cls.inputs, tangents)}
        x, lo, hi = p["self"], p.get("min"), p.get("max")
        if lo is not None and hi is not None:
            return where(lo > hi, t["max"], where(x < lo, t["min"], where(x > hi, t["max"], t["self"])))
        if lo is not None:
            return where(x >= lo if cls._tie_to_self else x > lo, t["self"], t["min"])
        return where(x <= hi if cls._tie_to_self else x < hi, t["self"], t["max"])


def _broadcasts(shapes) -> bool:
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


def _one_tensor_bound(bound: str, node: str) -> type:
    """ClampTensor with only the tensor bound ``bound`` ("min" or "max"): clamp_min / clamp_max, a tie going to x."""
    if bound == "min":
        forward = staticmethod(lambda ctx, self, lo: ClampTensor.forward(ctx, self, lo, None))
    else:
        forward = staticmethod(lambda ctx, self, hi: ClampTensor.forward(ctx, self, None, hi))
    return type(node, (ClampTensor,), {"__slots__": (), "_name": node, "inputs": ("self", bound),
                                       "save": ("self", bound), "_tie_to_self": True, "forward": forward})


ClampMinTensor = _one_tensor_bound("min", "ClampMinBackward1")
ClampMaxTensor = _one_tensor_bound("max", "ClampMaxBackward1")


def abs(input):  # noqa: A001 - torch's name
    return Abs.apply(input)


absolute = abs


def sign(input):
    return Sign.apply(input)


def relu(input):
    """Elementwise max(x, 0)."""
    return Relu.apply(input)


def _clamp_args_error(fname: str, input, lo, hi) -> TypeError:
    got = ", ".join([type(input).__name__] + [f"{n}={type(v).__name__}" for n, v in (("max", hi), ("min", lo))
                                              if v is not None])
    return TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     f" * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                     f" * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")


def clamp(input, min=None, max=None):  # noqa: A002 - torch's names
    """Elementwise clamp into [min, max]; either bound may be None, and tensor bounds (both tensors, or one with
    the other None) broadcast and receive gradients."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    lo_t, hi_t = isinstance(min, Tensor), isinstance(max, Tensor)
    if lo_t or hi_t:
        if (min is not None and not lo_t) or (max is not None and not hi_t):
            raise _clamp_args_error("clamp", input, min, max)
        _complex_bounds(input, min, max, input._dtype.is_complex)
        return ClampTensor.apply(input, min, max)
    if isinstance(min, complex) or isinstance(max, complex):
        min, max = _complex_scalar_bounds(input, min, max, True)
    return Clamp.apply(input, min, max)


def _complex_scalar_bounds(input, lo, hi, clamp: bool) -> tuple:
    """A complex number bound of a real input: clamp's floating kernels read it as a double (its imaginary part
    must be 0); integer inputs and clamp_min / clamp_max refuse it as clamp does complex inputs."""
    if not clamp or not input._dtype.is_floating_point:
        raise NotImplementedError("clamp is not supported for complex types")
    return tuple(D.scalar_into(b, D.float64) for b in (lo, hi))


clip = clamp


def _complex_bounds(input, lo, hi, clamp_kernel: bool) -> None:
    """torch's errors for tensor bounds meeting complex numbers: clamp's own check on a complex input, otherwise the
    kernel that runs (clamp_cpu for two bounds, maximum_cpu / minimum_cpu for one)."""
    ts = [t for t in (input, lo, hi) if t is not None]
    if any(t._dtype.is_complex for t in ts):
        if clamp_kernel:
            raise NotImplementedError("clamp is not supported for complex types")
        kernel = "clamp_cpu" if lo is not None and hi is not None else "maximum_cpu" if lo is not None else \
            "minimum_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{D.result_type(*ts)._scalar_name}'")


def _one_bound(input, lo, hi, tensor_op, number_op):
    """clamp_min / clamp_max: the one bound given (``lo`` or ``hi``) a tensor (broadcast, with a gradient) or a
    number."""
    bound = hi if lo is None else lo
    if isinstance(bound, Tensor):
        _complex_bounds(input, lo, hi, False)
        return tensor_op.apply(input, bound)
    if isinstance(bound, complex):
        _complex_scalar_bounds(input, lo, hi, False)
    return number_op.apply(input, lo, hi)


def clamp_min(input, min):  # noqa: A002
    return _one_bound(input, min, None, ClampMinTensor, ClampMin)


def clamp_max(input, max):  # noqa: A002
    return _one_bound(input, None, max, ClampMaxTensor, ClampMax)


# the public names (NOTE [one row per op] in ops/_table.py): every function here is written by hand
_WRITTEN = {"abs": Names(torch_inplace=True, function="written"),
            "absolute": Names(function="written"),  # (abs by another name, with no torch.absolute_)
            "sign": Names(function="written"),
            "relu": Names(torch_inplace=True, function="written"),
            "clamp": Names(aliases=("clip",), torch_inplace=True, function="written"),
            "clamp_min": Names(torch_inplace=True, function="written"),
            "clamp_max": Names(torch_inplace=True, function="written")}
EXPORTS = export(globals(), (_WRITTEN,), {})
__all__ = EXPORTS.public
_args.install(globals(), __all__, out=("abs", "absolute", "clamp", "clip", "clamp_min", "clamp_max", "sign"))
