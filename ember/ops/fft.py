"""Discrete Fourier transforms: torch.fft's functions over three ops on NumPy's pocketfft.

# NOTE [fft ops]
As torch, every transform is one of three ops, each linear, whose gradient is again one of them:
  - ``FftC2C``: complex to complex over ``dims``, forward (e^-i) or inverse (e^+i) sign; its adjoint is the
    transform of the other sign with the same scale;
  - ``FftR2C``: real to complex (``onesided``: the last dim halved, as rfft); its adjoint pads the gradient back
    to the full last dim and takes the real part of the inverse C2C;
  - ``FftC2R``: a Hermitian half-spectrum to a real signal (irfft); its adjoint is R2C with the bins that stand
    for two (every bin but the first, and the last for even sizes) doubled.
The scale is a code (``_NONE``, ``_BY_ROOT_N``, ``_BY_N``: 1, 1/sqrt(n), 1/n with n the signal size), fixed
when the user's ``norm`` string meets the direction of the transform the function means. hfft/ihfft are the
same ops on conjugates. Padding and cropping to ``n``/``s`` are ordinary pad/slice ops before the transform, as
torch's. Output dtypes follow the input's precision (float32 -> complex64, float64 -> complex128); integer
inputs compute in the default dtype; float16 is refused, as torch's CPU kernels do.
"""
from __future__ import annotations

import numpy as np

from .. import _args
from .. import _dtype as D
from .._tensor import Tensor, _wrap, _wrap_dim
from ._op import Op, linear

_QUIET_OPS = True  # transforms of inf/nan compute silently, as torch's (see Op.__init_subclass__)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _norm_code(norm: str | None, forward: bool) -> int:
    """The scale of a transform: ``norm`` as the user gives it, for a function in the ``forward`` direction."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _np_norm(code: int, forward: bool) -> str:
    """NumPy's ``norm`` giving the scale ``code`` to a transform of sign ``forward``."""
    if code == _BY_ROOT_N:
        return "ortho"
    return ("backward" if code == _NONE else "forward") if forward else ("forward" if code == _NONE else "backward")


def _result(arr: np.ndarray, like: np.ndarray) -> np.ndarray:
    """pocketfft's output in the input's precision (complex64 or float32 for float32/complex64 input)."""
    single = like.dtype in (np.float32, np.complex64)
    if arr.dtype.kind == "c":
        want = np.complex64 if single else np.complex128
    else:
        want = np.float32 if single else np.float64
    return arr if arr.dtype == want else arr.astype(want)


class FftC2C(Op):
    """d c2c(x) = c2c(grad) with the other sign and the same scale (NOTE [fft ops])"""

    __slots__ = ("dims", "norm", "forward_sign")
    nattrs = 3
    jvp = linear

    @staticmethod
    def forward(ctx, self, dims, norm, forward):
        if ctx is not None:
            ctx.dims, ctx.norm, ctx.forward_sign = dims, norm, forward
        fn = np.fft.fftn if forward else np.fft.ifftn
        return _result(fn(self, axes=dims, norm=_np_norm(norm, forward)), self)

    def backward(ctx, grad):
        return FftC2C.apply(grad, ctx.dims, ctx.norm, not ctx.forward_sign)


class FftR2C(Op):
    """d r2c(x) = real(c2c(grad padded with zeros to the full last dim, inverse sign, same scale))"""

    __slots__ = ("dims", "norm", "onesided", "n")
    nattrs = 3
    jvp = linear

    @staticmethod
    def forward(ctx, self, dims, norm, onesided):
        if ctx is not None:
            ctx.dims, ctx.norm, ctx.onesided, ctx.n = dims, norm, onesided, self.shape[dims[-1]]
        fn = np.fft.rfftn if onesided else np.fft.fftn
        return _result(fn(self, axes=dims, norm=_np_norm(norm, True)), self)

    def backward(ctx, grad):
        from .complex_numbers import real
        from .resample import constant_pad_nd

        d = ctx.dims[-1]
        missing = ctx.n - grad.shape[d]
        if ctx.onesided and missing > 0:
            pad = [0, 0] * (grad.dim() - 1 - d) + [0, missing]
            grad = constant_pad_nd(grad, pad, 0)
        return real(FftC2C.apply(grad, ctx.dims, ctx.norm, False))


class FftC2R(Op):
    """d c2r(x) = r2c(grad) (same scale), the bins that stand for two doubled (NOTE [fft ops])"""

    __slots__ = ("dims", "norm")
    nattrs = 3
    jvp = linear

    @staticmethod
    def forward(ctx, self, dims, norm, n):
        if ctx is not None:
            ctx.dims, ctx.norm = dims, norm
        s = [self.shape[d] for d in dims[:-1]] + [n]
        return _result(np.fft.irfftn(self, s=s, axes=dims, norm=_np_norm(norm, False)), self)

    def backward(ctx, grad):
        d = ctx.dims[-1]
        g = FftR2C.apply(grad, ctx.dims, ctx.norm, True)
        double = grad.shape[d] - g.shape[d]
        if double > 0:
            w = np.ones(g.shape[d], g._dtype.to_real().np)
            w[1:1 + double] = 2
            g = g * _wrap(w.reshape((-1,) + (1,) * (g.dim() - 1 - d)), D.from_numpy_dtype(w.dtype))
        return g


# ------------------------------------------------------------------ arguments as torch checks them
def _tensor_arg(x, fname: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{fname}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")


def _float_input(x: Tensor, fname: str, real: bool = False) -> Tensor:
    """The input in a dtype the kernels take (torch's dtype errors). The 1-d functions check it first, the n-d ones
    after their dims and sizes (rfftn's real-input check comes first there too)."""
    _tensor_arg(x, fname)
    d = x._dtype
    if real and d.is_complex:
        if fname == "ihfftn":
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {d._scalar_name}")
        raise RuntimeError(f"{fname} expects a real{'-valued' if fname.endswith('n') else ''} input tensor, but got "
                           f"{d._scalar_name}")
    if d is D.float16 or d is D.complex32:
        raise RuntimeError(f"Unsupported dtype {d._scalar_name}")
    if d._kind < 2:  # integers and bool compute in the default dtype
        x = x.to(D.get_default_dtype())
    return x


def _check_n(n: int) -> int:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return int(n)


def _dims_shape(x: Tensor, s, dim, fname: str, default_all: bool = True):
    """torch's canonical (dims, shape) of an n-d transform: dims default to the last len(s) (or all) dims."""
    nd = x.dim()
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap_dim(d, nd) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} dimensions.")
        dims = list(range(nd - len(s), nd))
    else:
        dims = list(range(nd)) if default_all else []
    if s is not None:
        shape = [_check_n(x.shape[d] if n == -1 else n) for d, n in zip(dims, s)]
    else:
        shape = [_check_n(x.shape[d]) for d in dims]
    return tuple(dims), shape


def _resize(x: Tensor, dims, shape) -> Tensor:
    """``x`` cropped (a slice) or zero-padded along each of ``dims`` to ``shape``, as torch's resize_fft_input."""
    from .resample import constant_pad_nd

    pad = [0] * (2 * x.dim())
    crop = False
    for d, n in zip(dims, shape):
        cur = x.shape[d]
        if n < cur:
            crop = True
        elif n > cur:
            pad[2 * (x.dim() - 1 - d) + 1] = n - cur
    if crop:
        key = tuple(slice(0, shape[dims.index(d)]) if d in dims and shape[dims.index(d)] < x.shape[d] else slice(None)
                    for d in range(x.dim()))
        x = x[key]
    if any(pad):
        while pad and pad[-1] == 0 and pad[-2] == 0:
            pad = pad[:-2]
        x = constant_pad_nd(x, pad, 0)
    return x


def _one_dim(x: Tensor, n, dim: int, check: bool = True) -> tuple:
    """((dim,), [signal size]): ``n`` or the input's size (``check``: at least 1; irfft/hfft derive theirs)."""
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, x.dim())
    return (d,), [(_check_n(x.shape[d]) if check else x.shape[d]) if n is None else _check_n(n)]


def _out(result: Tensor, out: Tensor | None) -> Tensor:
    if out is None:
        return result
    from ._inplace import copy_out

    return copy_out(out, result)


def _two_dims(dim, fname: str) -> None:
    if dim is None:
        raise TypeError(f"fft_{fname}(): argument 'dim' must be tuple of ints, not NoneType")


# ------------------------------------------------------------------ the transforms
def _c2c(x: Tensor, dims, shape, norm, forward: bool, fname: str) -> Tensor:
    """A complex transform of ``x``. A real input of the 1-d functions takes R2C over every bin (for the inverse,
    the conjugate of the forward transform); the n-d ones make it complex first (as torch)."""
    x = _resize(_float_input(x, fname), dims, shape)
    code = _norm_code(norm, forward)
    if not x._dtype.is_complex and (not dims or fname not in ("fft", "ifft")):
        x = x.to(x._dtype.to_complex())
    if not dims:
        return x.clone()
    if x._dtype.is_complex:
        return FftC2C.apply(x, dims, code, forward)
    from .complex_numbers import conj

    out = FftR2C.apply(x, dims, code, False)
    return out if forward else conj(out)


def _r2c(x: Tensor, dims, shape, norm, forward: bool, fname: str) -> Tensor:
    """rfft-style: the half spectrum of a real signal (``forward=False``: ihfft's conjugate)."""
    x = _resize(_float_input(x, fname, real=True), dims, shape)
    out = FftR2C.apply(x, dims, _norm_code(norm, forward), True)
    if forward:
        return out
    from .complex_numbers import conj

    return conj(out)


def _c2r(x: Tensor, dims, shape, norm, forward: bool, fname: str) -> Tensor:
    """irfft-style: a real signal from its half spectrum (``forward=True``: hfft, of the conjugate); ``shape``
    holds the output sizes."""
    x = _float_input(x, fname)
    if not x._dtype.is_complex:
        x = x.to(x._dtype.to_complex())
    n = shape[-1]
    half = n // 2 + 1
    x = _resize(x, dims, shape[:-1] + [half])
    if forward:
        from .complex_numbers import conj

        x = conj(x)
    return FftC2R.apply(x, dims, _norm_code(norm, forward), n)


def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """The 1-d discrete Fourier transform along ``dim`` (zero-padded or cropped to ``n``)."""
    x = _float_input(input, "fft")
    dims, shape = _one_dim(x, n, dim)
    return _out(_c2c(x, dims, shape, norm, True, "fft"), out)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """The 1-d inverse discrete Fourier transform along ``dim``."""
    x = _float_input(input, "ifft")
    dims, shape = _one_dim(x, n, dim)
    return _out(_c2c(x, dims, shape, norm, False, "ifft"), out)


def fftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """The n-d discrete Fourier transform over ``dim`` (all dims, or the last len(s))."""
    _tensor_arg(input, "fftn")
    dims, shape = _dims_shape(input, s, dim, "fftn")
    x = _float_input(input, "fftn")
    return _out(_c2c(x, dims, shape, norm, True, "fftn"), out)


def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """The n-d inverse discrete Fourier transform."""
    _tensor_arg(input, "ifftn")
    dims, shape = _dims_shape(input, s, dim, "ifftn")
    x = _float_input(input, "ifftn")
    return _out(_c2c(x, dims, shape, norm, False, "ifftn"), out)


def fft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """The 2-d discrete Fourier transform over ``dim`` (the last two by default)."""
    _two_dims(dim, "fft2")
    return fftn(input, s, dim, norm, out=out)


def ifft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """The 2-d inverse discrete Fourier transform."""
    _two_dims(dim, "ifft2")
    return ifftn(input, s, dim, norm, out=out)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """The Fourier transform of a real signal: its n // 2 + 1 non-negative frequencies."""
    x = _float_input(input, "rfft", real=True)
    dims, shape = _one_dim(x, n, dim)
    return _out(_r2c(x, dims, shape, norm, True, "rfft"), out)


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """The real signal of length ``n`` (default 2 * (m - 1)) whose rfft is ``input``."""
    x = _float_input(input, "irfft")
    dims, (m,) = _one_dim(x, None, dim, False)
    return _out(_c2r(x, dims, [_check_n(2 * (m - 1) if n is None else n)], norm, False, "irfft"), out)


def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """The n-d Fourier transform of a real signal, the last transformed dim halved."""
    _tensor_arg(input, "rfftn")
    if input._dtype.is_complex:
        _float_input(input, "rfftn", real=True)
    dims, shape = _dims_shape(input, s, dim, "rfftn")
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _float_input(input, "rfftn", real=True)
    return _out(_r2c(x, dims, shape, norm, True, "rfftn"), out)


def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """The real n-d signal whose rfftn is ``input`` (the last output size defaults to 2 * (m - 1))."""
    _tensor_arg(input, "irfftn")
    dims, shape = _dims_shape(input, s, dim, "irfftn")
    if not dims:
        raise RuntimeError("irfftn must transform at least one axis")
    x = _float_input(input, "irfftn")
    if s is None or s[-1] == -1:
        shape[-1] = _check_n(2 * (x.shape[dims[-1]] - 1))
    return _out(_c2r(x, dims, shape, norm, False, "irfftn"), out)


def rfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """rfftn over two dims (the last two by default)."""
    _two_dims(dim, "rfft2")
    return rfftn(input, s, dim, norm, out=out)


def irfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """irfftn over two dims (the last two by default)."""
    _two_dims(dim, "irfft2")
    return irfftn(input, s, dim, norm, out=out)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """The Fourier transform of a Hermitian-symmetric signal given by its first half: a real spectrum."""
    x = _float_input(input, "hfft")
    dims, (m,) = _one_dim(x, None, dim, False)
    return _out(_c2r(x, dims, [_check_n(2 * (m - 1) if n is None else n)], norm, True, "hfft"), out)


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *, out=None) -> Tensor:
    """The inverse of hfft: the first half of the inverse transform of a real signal."""
    x = _float_input(input, "ihfft", real=True)
    dims, shape = _one_dim(x, n, dim)
    return _out(_r2c(x, dims, shape, norm, False, "ihfft"), out)


def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """The n-d hfft: C2C over all transformed dims but the last, then a Hermitian C2R over the last."""
    _tensor_arg(input, "hfftn")
    dims, shape = _dims_shape(input, s, dim, "hfftn")
    if not dims:
        raise RuntimeError("hfftn must transform at least one axis")
    x = _float_input(input, "hfftn")
    if s is None or s[-1] == -1:
        shape[-1] = _check_n(2 * (x.shape[dims[-1]] - 1))
    if not x._dtype.is_complex:
        x = x.to(x._dtype.to_complex())
    if len(dims) > 1:
        x = FftC2C.apply(_resize(x, dims[:-1], shape[:-1]), dims[:-1], _norm_code(norm, True), True)
    return _out(_c2r(x, dims[-1:], shape[-1:], norm, True, "hfftn"), out)


def ihfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *, out=None) -> Tensor:
    """The inverse of hfftn: a real signal's half spectrum (inverse sign) over ``dim``."""
    _tensor_arg(input, "ihfftn")
    dims, shape = _dims_shape(input, s, dim, "ihfftn")
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _float_input(input, "ihfftn", real=True)
    if len(dims) == 1:
        return _out(_r2c(x, dims, shape, norm, False, "ihfftn"), out)
    from .complex_numbers import conj_physical

    x = _resize(x, dims, shape)
    code = _norm_code(norm, False)
    half = conj_physical(FftR2C.apply(x, dims[-1:], code, True))
    return _out(FftC2C.apply(half, dims[:-1], code, False), out)


def hfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """hfftn over two dims (the last two by default)."""
    _two_dims(dim, "hfft2")
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input: Tensor, s=None, dim=(-2, -1), norm: str | None = None, *, out=None) -> Tensor:
    """ihfftn over two dims (the last two by default)."""
    _two_dims(dim, "ihfft2")
    return ihfftn(input, s, dim, norm, out=out)


# ------------------------------------------------------------------ frequencies and shifts
def _freqs(k: np.ndarray, n: int, d: float, dtype, requires_grad: bool, device, out) -> Tensor:
    from .._factories import _finish, _range_out_warning

    _range_out_warning(out, len(k), stacklevel=5)

    dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
    if not dt._differentiable:
        raise RuntimeError(f"fftfreq: expected a floating point dtype, got {dt._scalar_name}")
    scale = 1.0 / (n * d) if n * d else float("inf")  # torch multiplies by the reciprocal (inf * 0: nan)
    with np.errstate(invalid="ignore", over="ignore"):
        arr = k.astype(dt.np) * dt.np.type(scale)
    return _finish(arr, dt, requires_grad, device, out)


def fftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point fft: [0, 1, ..., -(n // 2), ..., -1] / (d * n)."""
    k = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]) if n > 0 else np.arange(0)
    return _freqs(k, n, d, dtype, requires_grad, device, out)


def rfftfreq(n: int, d: float = 1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory: bool | None = None,
             requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d * n)."""
    return _freqs(np.arange(n // 2 + 1), n, d, dtype, requires_grad, device, out)


def _shift_dims(input: Tensor, dim) -> tuple:
    if dim is None:
        return tuple(range(input.dim()))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def fftshift(input: Tensor, dim=None) -> Tensor:
    """Rolled so that the zero frequency is in the middle (over ``dim``, all dims by default)."""
    dims = _shift_dims(input, dim)
    if not dims:
        return input.clone()
    return input.roll([input.shape[d] // 2 for d in dims], dims)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of fftshift."""
    dims = _shift_dims(input, dim)
    if not dims:
        return input.clone()
    return input.roll([(input.shape[d] + 1) // 2 for d in dims], dims)


_args.install(globals(), ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
                          "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq",
                          "fftshift", "ifftshift"), own_out=("fftfreq", "rfftfreq"))
