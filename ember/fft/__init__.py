"""ember.fft: the ``torch.fft`` namespace (discrete Fourier transforms over NumPy's pocketfft, NOTE [fft ops])."""
from __future__ import annotations

from .._tensor import Tensor  # torch.fft re-exports torch.Tensor
from ..ops.fft import (fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2, rfftn, irfftn, hfft, ihfft,
                       hfft2, ihfft2, hfftn, ihfftn, fftfreq, rfftfreq, fftshift, ifftshift)

__all__ = ["Tensor", "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
