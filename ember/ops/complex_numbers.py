"""Complex numbers: their parts as views (real, imag, view_as_real, view_as_complex), conjugation, building them
from parts (complex, polar) and the complex sign.

# NOTE [complex autograd]
As torch, the gradient of a real loss L with respect to a complex z is the conjugate Wirtinger derivative,
dL/dz* (times 2): for a holomorphic f, the backward of f maps grad to ``grad * conj(f'(z))``. So a formula
written for real inputs serves complex ones once each derivative factor is conjugated (``conj_if_complex``,
the identity on real tensors and numbers). A real input that receives a complex gradient (a real tensor
multiplied by a complex one) keeps its real part; the engine does that (``_conform``), as torch's
handle_r_to_c. Only real scalar outputs can seed ``backward()`` implicitly.

# NOTE [lazy conjugation]
torch's ``conj()`` is a view with the conjugate bit set: no copy, ``is_conj()`` True, shared storage. ember's
kernels read arrays directly, so a view that reads conjugated values cannot exist; ``conj()`` therefore
computes the conjugate eagerly and sets the bit (``_ext["conj"]``). What is observable of torch's bit holds:
``is_conj``, ``resolve_conj`` (a copy without the bit), ``conj_physical`` (never the bit), views of a
conjugate keep the bit, ``.numpy()`` and ``view_as_real`` refuse an unresolved conjugate, conj of conj
clears it, and values and gradients are the same. What differs: a write into ``x`` after ``y = x.conj()`` is
not seen by ``y`` (nor the other way round), since ``y`` has memory of its own.
"""
from __future__ import annotations

import numpy as np

from .. import _backend as _B
from .. import _args
from .._args import tensor_arg as _tensor_arg
from .. import _dtype as D
from .._tensor import Tensor
from ._op import Op, linear, silent

__all__ = ["view_as_real", "view_as_complex", "real", "imag", "conj", "conj_physical", "conj_physical_",
           "resolve_conj", "resolve_neg", "is_conj", "is_neg", "is_complex", "complex", "polar", "sgn"]

_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX_OF = {v: k for k, v in _REAL_OF.items()}


# ------------------------------------------------------------------ reinterpreting memory
def _owner(arr: np.ndarray) -> np.ndarray:
    """The ndarray at the bottom of ``arr``'s chain of views (the one whose memory the others share)."""
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


class _Memory:
    """Memory described by an array interface, kept alive with the array it belongs to."""

    def __init__(self, interface: dict, base: np.ndarray) -> None:
        self.__array_interface__ = interface
        self.base = base


def _reinterpret(arr: np.ndarray, dtype: np.dtype, shape: tuple, strides: tuple) -> np.ndarray:
    """A view of ``arr``'s memory as ``dtype`` with ``shape``/``strides`` (bytes), starting at ``arr``'s first element:
    writes go to the same memory, as torch's view_as_real / view_as_complex."""
    owner = _owner(arr)
    start = _B.address(arr) - _B.address(owner)
    if type(arr) is not np.ndarray:  # a device array (NOTE [device seam]): through the namespace
        view = _B.strided_view(owner, shape, strides, start, dtype)
        return view if type(view) is type(arr) else view.view(type(arr))  # (a stand-in's owner may be a host array)
    if owner.flags.c_contiguous or owner.flags.f_contiguous:  # one block NumPy can offset into (keeps the base chain)
        view = np.ndarray(shape, dtype, buffer=owner, offset=start, strides=strides)
    else:  # memory NumPy laid out otherwise (e.g. a transform's output): through its array interface
        view = _B.asarray(_Memory({"data": (arr.__array_interface__["data"][0], False), "shape": shape,
                                   "strides": strides, "typestr": np.dtype(dtype).str, "version": 3}, arr))
    if not arr.flags.writeable:
        view.flags.writeable = False
    return view


def _as_real(arr: np.ndarray) -> np.ndarray:
    """A complex array's memory as (..., 2) real (real, imaginary) pairs."""
    f = _REAL_OF[arr.dtype]
    if arr.size == 0:
        return np.empty(arr.shape + (2,), f)
    return _reinterpret(arr, f, arr.shape + (2,), arr.strides + (f.itemsize,))


def _as_complex(arr: np.ndarray) -> np.ndarray:
    """(..., 2) real pairs as a complex array over the same memory; pairs not laid out as complex numbers (which
    view_as_complex refuses; under vmap a batch may still lay them out so) are copied first."""
    c = _COMPLEX_OF[arr.dtype]
    if arr.size == 0:
        return np.empty(arr.shape[:-1], c)
    item = arr.itemsize
    if arr.strides[-1] != item or any(s % (2 * item) for s in arr.strides[:-1]) or \
            (_B.address(arr) - _B.address(_owner(arr))) % (2 * item):
        arr = _B.ascontiguousarray(arr)
    return _reinterpret(arr, c, arr.shape[:-1], arr.strides[:-1])


# ------------------------------------------------------------------ views of the parts
class ViewAsReal(Op):
    """d view_as_real(z) = view_as_complex(grad)"""

    __slots__ = ()
    is_view = True
    jvp = linear
    forward = staticmethod(lambda ctx, self: _as_real(self))

    def backward(ctx, grad):
        return ViewAsComplex.apply(grad.contiguous())


class ViewAsComplex(Op):
    """d view_as_complex(x) = view_as_real(grad)"""

    __slots__ = ()
    is_view = True
    jvp = linear
    forward = staticmethod(lambda ctx, self: _as_complex(self))

    def backward(ctx, grad):
        return ViewAsReal.apply(grad.contiguous())


def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor's memory as a real tensor with a last dimension of 2 (real, imaginary); shares memory."""
    _tensor_arg("view_as_real", input)
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                           "resulting tensor will NOT alias the original.")
    return ViewAsReal.apply(input)


def view_as_complex(input: Tensor) -> Tensor:
    """A real tensor whose last dimension is 2 (real, imaginary) as a complex tensor; shares memory."""
    _tensor_arg("view_as_complex", input)
    d = input._dtype
    if d not in (D.float32, D.float64):
        if d is D.float16:
            raise D._no_complex32()
        raise RuntimeError(f"view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {d._scalar_name}")
    arr = input._data
    if type(arr) is np.ndarray:  # (a batched tensor under vmap has only a placeholder: its level checks)
        if arr.ndim == 0 or arr.shape[-1] != 2:
            raise RuntimeError("Tensor must have a last dimension of size 2")
        if arr.size == 0:  # (no element: any strides will do)
            return ViewAsComplex.apply(input)
        item = arr.itemsize
        if arr.strides[-1] != item:
            raise RuntimeError("Tensor must have a last dimension with stride 1")
        if any(s % (2 * item) for s in arr.strides[:-1]):
            raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
        if input.storage_offset() % 2:
            raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return ViewAsComplex.apply(input)


def real(input: Tensor) -> Tensor:
    """The real part: a view sharing memory for complex tensors, the tensor itself for real ones."""
    _tensor_arg("real", input)
    if not input._dtype.is_complex:
        return input
    return ViewAsReal.apply(input).select(-1, 0)


def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor (a view sharing memory)."""
    _tensor_arg("imag", input)
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return ViewAsReal.apply(input).select(-1, 1)


# ------------------------------------------------------------------ conjugation (NOTE [lazy conjugation])
_conjugate = silent(np.conjugate)


def _conj_kernel(x):
    out = _conjugate(x)
    return out if type(out) is np.ndarray else _B.asarray(out)  # (0-d inputs give NumPy scalars)


class Conj(Op):
    """d conj(z) = conj(grad)"""

    __slots__ = ()
    jvp = linear
    forward = staticmethod(lambda ctx, self: _conj_kernel(self))

    def backward(ctx, grad):
        return Conj.apply(grad)


class ConjPhysical(Conj):
    """d conj_physical(z) = conj_physical(grad)"""

    __slots__ = ()

    def backward(ctx, grad):
        return ConjPhysical.apply(grad)


def conj_if_complex(x):
    """The conjugate of a complex tensor or number (differentiable); real tensors and numbers as they are."""
    if isinstance(x, Tensor):
        return Conj.apply(x) if x._dtype.is_complex else x
    return x.conjugate() if type(x) is complex else x


def conj_array(a):
    """``conj_if_complex`` on arrays and numbers (for raw backward paths)."""
    if _B.is_array(a) or isinstance(a, np.generic):
        return _conj_kernel(a) if a.dtype.kind == "c" else a
    return a.conjugate() if type(a) is complex else a


def _set_conj_bit(t: Tensor, on: bool) -> Tensor:
    ext = t._ext
    if on:
        if ext is None:
            t._ext = {"conj": True}
        else:
            ext["conj"] = True
    elif ext is not None:
        ext.pop("conj", None)
    return t


def conj(input: Tensor) -> Tensor:
    """The complex conjugate with the conjugate bit set (real tensors: the tensor itself)."""
    _tensor_arg("conj", input)
    if not input._dtype.is_complex:
        return input
    return _set_conj_bit(Conj.apply(input), not is_conj(input))


def conj_physical(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The complex conjugate as a new tensor without the conjugate bit (real tensors: a copy)."""
    _tensor_arg("conj_physical", input)
    res = ConjPhysical.apply(input) if input._dtype.is_complex else input.clone()
    return res if out is None else out.copy_(res)


def conj_physical_(input: Tensor) -> Tensor:
    """Conjugate in place."""
    if not input._dtype.is_complex:
        return input
    from . import _inplace

    return _inplace.inplace(input, lambda t: ConjPhysical.apply(t))


def resolve_conj(input: Tensor) -> Tensor:
    """A tensor without the conjugate bit holding the same values (a copy when the bit was set)."""
    _tensor_arg("resolve_conj", input)
    return input.clone() if is_conj(input) else input


def resolve_neg(input: Tensor) -> Tensor:
    """The tensor itself: ember never sets torch's negative bit (its negations are computed)."""
    _tensor_arg("resolve_neg", input)
    return input


def is_conj(input: Tensor) -> bool:
    """Whether the conjugate bit is set (NOTE [lazy conjugation])."""
    _tensor_arg("is_conj", input)
    ext = input._ext
    return bool(ext is not None and ext.get("conj"))


def is_neg(input: Tensor) -> bool:
    """False: ember never sets torch's negative bit."""
    _tensor_arg("is_neg", input)
    return False


def is_complex(input: Tensor) -> bool:
    _tensor_arg("is_complex", input)
    return input._dtype.is_complex


# ------------------------------------------------------------------ building from parts
def refuse_complex_grad(name: str, *tensors) -> None:
    """torch's error for functions it does not differentiate for complex outputs, when a graph would be recorded."""
    from ..autograd.grad_mode import _mode

    if _mode.grad_enabled and any(isinstance(t, Tensor) and t._requires_grad for t in tensors) and \
            any(isinstance(t, Tensor) and t._dtype.is_complex for t in tensors):
        raise RuntimeError(f"{name} does not support automatic differentiation for outputs with complex dtype.")


def _complex_kernel(re, im):
    return re + np.multiply(im, 1j, dtype=_COMPLEX_OF[np.result_type(re, im)])


def _check_parts(fn: str, a: Tensor, b: Tensor, second: str) -> None:
    _tensor_arg(fn, a, "real" if fn == "complex" else "abs", 1)
    _tensor_arg(fn, b, second, 2)
    if a._dtype.is_complex or b._dtype.is_complex:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{a._dtype._scalar_name} and {b._dtype._scalar_name}")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"Expected object of scalar type {a._dtype._scalar_name} but got scalar type "
                           f"{b._dtype._scalar_name} for second argument")
    if a._dtype not in (D.float32, D.float64):
        if a._dtype is D.float16:
            raise D._no_complex32()
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{a._dtype._scalar_name} and {b._dtype._scalar_name}")


class Complex(Op):
    """d complex(re, im) = real(grad), imag(grad)"""

    __slots__ = ()
    jvp = linear

    @staticmethod
    def forward(ctx, self, other):
        from .arithmetic import _broadcast_error

        try:
            return _complex_kernel(self, other)
        except ValueError:
            raise _broadcast_error(self, other) from None

    def backward(ctx, grad):
        return real(grad), imag(grad)


class Polar(Op):
    """d (r e^{i theta}) = real(grad e^{-i theta}), imag(grad conj(result))"""

    __slots__ = ()
    save = ("self", "other", "result")

    @staticmethod
    def forward(ctx, self, other):
        from .arithmetic import _broadcast_error

        try:
            return _complex_kernel(self * np.cos(other), self * np.sin(other))
        except ValueError:
            raise _broadcast_error(self, other) from None

    def backward(ctx, grad):
        r, theta, out = ctx.saved_tensors
        n0, n1 = ctx._next
        from .elementwise import cos, sin

        ga = real(grad * Complex.apply(cos(theta), -sin(theta))) if n0[0] is not None else None
        gb = imag(grad * Conj.apply(out)) if n1[0] is not None else None
        return ga, gb


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A001 - torch's name
    """The complex tensor real + i imag (same floating dtype, broadcast)."""
    _check_parts("complex", real, imag, "imag")
    res = Complex.apply(real, imag)
    return res if out is None else out.copy_(res)


def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002 - torch's names
    """The complex tensor abs * (cos(angle) + i sin(angle))."""
    _check_parts("polar", abs, angle, "angle")
    res = Polar.apply(abs, angle)
    return res if out is None else out.copy_(res)


# ------------------------------------------------------------------ the complex sign
def _sgn_kernel(x):
    if x.dtype.kind != "c":
        return np.sign(x) if x.dtype != np.bool_ else x.copy()
    a = np.abs(x)
    return np.where(a == 0, x.dtype.type(0), x / np.where(a == 0, 1, a)).astype(x.dtype, copy=False)


_sgn = silent(_sgn_kernel)


class Sgn(Op):
    """d sgn(z) = (grad - sgn^2 conj(grad)) / (2|z|), 0 at 0 (real inputs: 0)"""

    __slots__ = ()
    save = ("self", "result")
    forward = staticmethod(lambda ctx, self: _sgn(self))

    def backward(ctx, grad):
        x, s = ctx.saved_tensors
        from .elementwise import _zeros
        from .indexing import where

        if not x._dtype.is_complex:
            return _zeros(grad)
        a = x.abs()
        return where(a == 0, 0.0, (grad - s * s * Conj.apply(grad)) / (2 * a))

    @staticmethod
    def jvp(args, out, tangents):
        x = args[0]
        if not x._dtype.is_complex:
            return None
        from .indexing import where

        a = x.abs()  # d sgn = (t - sgn * real(conj(sgn) t)) / |z|
        return where(a == 0, 0.0, (tangents[0] - out * real(Conj.apply(out) * tangents[0])) / a)


def sgn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """z / |z| (0 at 0) for complex tensors; the sign for real ones."""
    _tensor_arg("sgn", input)
    res = Sgn.apply(input)
    return res if out is None else out.copy_(res)


_args.install(globals(), __all__)


# ---------------------------------------------------------------- conjugate transpose
__all__ += ["adjoint"]


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (a transpose for real dtypes)."""
    _tensor_arg("adjoint", input)
    if input.dim() < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                           f"{input.dim()}-D tensor.")
    return conj(input.transpose(-2, -1))


_args.install(globals(), ("adjoint",))
