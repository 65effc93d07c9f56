"""Short-time Fourier transforms: torch.stft and torch.istft, composed from ember ops (unfold, the FFT ops of
ops/fft.py, index_add for the overlap-add), so every gradient order comes from the engine.

stft: pad (center), cut the signal into frames ``hop_length`` apart (a view), multiply by the window (zero-padded
to n_fft around its centre), transform each frame (R2C, or C2C for complex signals or windows), and put
frequencies before frames. istft undoes it: inverse transforms of the frames, windowed again, overlap-added,
divided by the overlap-added squared window (which must not vanish: torch's NOLA condition), trimmed.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _backend as _B
from .. import _args
from .. import _dtype as D
from .._tensor import Tensor, _type_string, _wrap
from .fft import FftC2C, FftC2R, FftR2C, _BY_N, _BY_ROOT_N, _NONE
from .shape import Squeeze, Transpose

__all__ = ["stft", "istft"]


class TransposeInplace(Transpose):
    """torch's stft transposes its result in place (``out.transpose_(1, 2)``): that node's name"""

    __slots__ = ()
    _name = "TransposeBackward1"


class SqueezeInplace(Squeeze):
    """``out.squeeze_(0)`` of a 1-d signal's stft"""

    __slots__ = ()
    _name = "SqueezeBackward4"


def _type_str(t: Tensor) -> str:
    return _type_string(t._dtype)


def _fmt(v) -> str:
    return "None" if v is None else str(int(v))


def _stft_error(input: Tensor, n_fft, hop, win, window, normalized, onesided, return_complex, align, msg: str):
    w = "None" if window is None else f"{_type_str(window)}{{{list(window.shape)}}}"
    return RuntimeError(f"stft({_type_str(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
                        f"win_length={win}, window={w}, normalized={_fmt(normalized)}, onesided={_fmt(onesided)}, "
                        f"return_complex={_fmt(return_complex)}, align_to_window={_fmt(align)}) : {msg}")


def _padded_window(window: Tensor | None, win_length: int, n_fft: int, like: Tensor) -> Tensor | None:
    """The window zero-padded on both sides to n_fft (ones of ``win_length`` when None and shorter)."""
    from .resample import constant_pad_nd

    if win_length >= n_fft:
        return window
    left = (n_fft - win_length) // 2
    if window is None:
        window = _wrap(_B.ones(win_length, like._data.dtype, like=_B.ref(like._data)), like._dtype)
    return constant_pad_nd(window, (left, n_fft - win_length - left), 0)


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform: (..., frequencies, frames) of the frames of a 1-d signal or a batch of them."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if center:
        from ..nn._functional_conv import pad

        nd = input.dim()
        p = int(n_fft // 2)
        padded = pad(input.reshape((1,) * (3 - nd) + tuple(input.shape)), [p, p], pad_mode)
        input = padded.reshape(tuple(padded.shape[len(padded.shape) - nd:]))
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    err = lambda msg: _stft_error(input, n_fft, hop, win, window, normalized, onesided, return_complex,  # noqa: E731
                                  align_to_window, msg)
    complex_input = input._dtype.is_complex or (window is not None and window._dtype.is_complex)
    as_complex = complex_input if return_complex is None else return_complex
    if not as_complex:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                      "explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    if input._dtype._kind < 2:
        raise err("expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise err("expected a 1D or 2D tensor")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise err(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise err(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise err(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise err(f"expected a 1D window tensor of size equal to win_length={win}, but got window with size "
                  f"{list(window.shape)}")
    if align_to_window and win < n_fft:  # frames start where their window starts
        from .resample import constant_pad_nd

        left = (n_fft - win) // 2
        frames = 1 + (length - win) // hop
        x = constant_pad_nd(x, (left, max(0, (frames - 1) * hop + n_fft - left - length)), 0)
    w = _padded_window(window, win, n_fft, x)
    frames = x.unfold(1, n_fft, hop)  # (batch, frames, n_fft), a view
    if w is not None:
        frames = frames * w
    one = frames._dtype.is_complex
    side = (not one) if onesided is None else onesided
    code = _BY_ROOT_N if normalized else _NONE
    if one:
        out = _complex_frames(frames, side, code, True)
    else:
        out = FftR2C.apply(frames, (2,), code, side)
    out = TransposeInplace.apply(out, 1, 2)
    if input.dim() == 1:
        out = SqueezeInplace.apply(out, (0,))
    if not as_complex:
        from .complex_numbers import view_as_real

        return view_as_real(out)
    return out


def _complex_frames(frames: Tensor, onesided: bool, code, forward: bool) -> Tensor:
    """The complex-to-complex FFT of each frame (dim 2) of stft (``forward``) or istft; complex data has no
    one-sided spectrum."""
    if onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    return FftC2C.apply(frames, (2,), code, forward)


def _istft_error(input: Tensor, n_fft, hop, win, window, center, normalized, onesided, length, return_complex,
                 msg: str, sep: str = " : "):
    w = "None" if window is None else f"{_type_str(window)}{{{list(window.shape)}}}"
    return RuntimeError(f"istft(CPU{input._dtype._scalar_name}Type{list(input.shape)}, n_fft={n_fft}, "
                        f"hop_length={hop}, win_length={win}, window={w}, center={_fmt(center)}, "
                        f"normalized={_fmt(normalized)}, onesided={_fmt(onesided)}, length={_fmt(length)}, "
                        f"return_complex={_fmt(return_complex)}){sep}{msg}")


def _overlap_add(frames: Tensor, hop: int, total: int) -> Tensor:
    """sum of ``frames`` (batch, n_frames, n) placed ``hop`` apart in a signal of ``total`` samples (torch's
    unfold_backward): one index_add, differentiable in the frames."""
    b, f, n = frames.shape
    ref = _B.ref(frames._data)
    pos = (np.arange(f, like=ref)[:, None] * hop + np.arange(n, like=ref)[None, :]).reshape(-1)
    zeros = _wrap(np.zeros((b, total), frames._data.dtype, like=ref), frames._dtype)
    return zeros.index_add(1, _wrap(pos, D.int64), frames.reshape(b, f * n))


def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False, onesided: bool | None = None,
          length: int | None = None, return_complex: bool = False) -> Tensor:
    """The inverse short-time Fourier transform: the signal whose stft (same arguments) is ``input``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    err = lambda msg, sep=" : ": _istft_error(input, n_fft, hop, win, window, center, normalized,  # noqa: E731
                                              onesided, length, return_complex, msg, sep)
    if not input._dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please provide the same "
                      "window used by stft to make the inversion lossless.To suppress this warning and use a "
                      "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=2)
    if input.dim() not in (2, 3):
        raise err(f"expected a tensor with 3 or 4 dimensions, but got {input.dim() + 1}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise err("Invalid window shape. window has to be 1D and length of `win_length`")
    if hop <= 0 or hop > win:
        raise err("expected 0 < hop_length <= win_length")
    if win <= 0 or win > n_fft:
        raise err("expected 0 < win_length <= n_fft")
    if input.numel() == 0:
        raise err("input tensor cannot be empty.")
    x = input if input.dim() == 3 else input.unsqueeze(0)
    fft_size, n_frames = x.shape[1], x.shape[2]
    side = (fft_size != n_fft) if onesided is None else onesided
    if side and fft_size != n_fft // 2 + 1:
        raise err(f"expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 "
                  f"when onesided=True, but got {fft_size}")
    if not side and fft_size != n_fft:
        raise err(f"expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
                  f"onesided=False, but got {fft_size}")
    w = _padded_window(window, win, n_fft, _wrap(np.empty(0, x._dtype.to_real().np, like=_B.ref(x._data)),
                                                    x._dtype.to_real()))
    if w is None:
        w = _wrap(_B.ones(n_fft, x._dtype.to_real().np, like=_B.ref(x._data)), x._dtype.to_real())
    frames = x.transpose(1, 2)  # (batch, frames, fft_size)
    code = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        frames = _complex_frames(frames, side, code, False)
    else:
        if w._dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not side:
            frames = frames.narrow(-1, 0, n_fft // 2 + 1)
        frames = FftC2R.apply(frames, (2,), code, n_fft)
    total = n_fft + hop * (n_frames - 1)
    y = _overlap_add(frames * w, hop, total)
    envelope = _overlap_add((w * w).expand(1, n_frames, n_fft), hop, total)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if envelope._data.size and np.abs(envelope._data).min() < 1e-11:
        raise err("1\n[ CPUBoolType{} ]", sep=" window overlap add min: ")
    y = y / envelope
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > total:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=2)
        from .resample import constant_pad_nd

        y = constant_pad_nd(y, (0, end - total), 0)
    return y


_args.install(globals(), ("istft",))  # (torch.stft is written in Python, istft is a builtin)
