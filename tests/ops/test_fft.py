"""torch.fft beyond the op table (values and gradients of every transform are op_db entries): dtypes, the
conjugate bit of ifft/ihfft results, frequencies, argument errors."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import assert_close, check, ember, same_error, torch

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 6)).astype(np.float32)
Z = (RNG.standard_normal((3, 6)) + 1j * RNG.standard_normal((3, 6))).astype(np.complex64)

TRANSFORMS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
              "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn"]


@pytest.mark.parametrize("name", TRANSFORMS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128, np.int64])
def test_result_dtype_shape_and_conjugate_bit(name, dtype):
    """float32 in -> complex64 out (float64 -> complex128), integers in the default dtype; ifft/ihfft of real
    input give conjugate views, as torch's."""
    arr = (Z if np.dtype(dtype).kind == "c" else X * 3).astype(dtype)
    out = []
    for lib in (ember, torch):
        try:
            r = getattr(lib.fft, name)(lib.tensor(arr))
            out.append((str(r.dtype), tuple(r.shape), r.is_conj(), r.resolve_conj()))
        except Exception as e:  # noqa: BLE001 - both libraries must refuse alike
            out.append((type(e).__name__, str(e).split(".")[0]))
    (e, t) = out
    if len(t) == 2:
        assert e == t
        return
    assert e[:3] == t[:3]
    assert_close(e[3], t[3], 1e-4, 1e-4)


@pytest.mark.parametrize("fn", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n,d", [(1, 1.0), (5, 1.0), (8, 0.5), (7, 3.0), (0, 1.0)])
def test_frequencies(fn, n, d):
    for dtype in (None, "float64"):
        kw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
        t = getattr(torch.fft, fn)(n, d, **kw)
        kw = {} if dtype is None else {"dtype": getattr(ember, dtype)}
        e = getattr(ember.fft, fn)(n, d, **kw)
        assert_close(e, t, 0, 0)


def test_frequencies_require_grad_and_default_dtype():
    e = ember.fft.fftfreq(4, requires_grad=True)
    t = torch.fft.fftfreq(4, requires_grad=True)
    assert e.requires_grad and t.requires_grad
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.fft.rfftfreq(4).dtype is ember.float64
    finally:
        ember.set_default_dtype(ember.float32)


def test_shifts_undo_each_other():
    for shape, dim in (((4, 5), None), ((3, 6), 1), ((7,), (0,))):
        a = ember.tensor(RNG.standard_normal(shape))
        assert ember.equal(ember.fft.ifftshift(ember.fft.fftshift(a, dim), dim), a)


def test_out_argument():
    check(lambda lib, x: lib.fft.fft(x, out=lib.empty(0, dtype=lib.complex64)), X, grad=False)


@pytest.mark.parametrize("call", [
    lambda lib: lib.fft.fft(lib.ones(3), norm="bad"),
    lambda lib: lib.fft.fft(lib.ones(3), n=0),
    lambda lib: lib.fft.ifft(lib.ones(3), n=-2),
    lambda lib: lib.fft.fft(lib.ones(2, 3), dim=2),
    lambda lib: lib.fft.fft(lib.tensor(1.0)),
    lambda lib: lib.fft.fft2(lib.ones(3)),
    lambda lib: lib.fft.fftn(lib.ones(2, 3), s=(2,), dim=(0, 1)),
    lambda lib: lib.fft.fftn(lib.ones(2, 3), dim=(0, 0)),
    lambda lib: lib.fft.fftn(lib.ones(2, 3), s=(2, 3, 4)),
    lambda lib: lib.fft.rfft(lib.ones(3, dtype=lib.complex64)),
    lambda lib: lib.fft.rfftn(lib.ones(3, dtype=lib.complex64)),
    lambda lib: lib.fft.ihfft(lib.ones(3, dtype=lib.complex64)),
    lambda lib: lib.fft.irfft(lib.ones(1, dtype=lib.complex64)),
    lambda lib: lib.fft.hfft(lib.ones(3, dtype=lib.complex64), n=0),
    lambda lib: lib.fft.fft(lib.ones(3, dtype=lib.float16)),
    lambda lib: lib.fft.rfft(lib.ones(3, dtype=lib.float16)),
    lambda lib: lib.fft.fft([1.0, 2.0]),
    # an empty transformed dim, before the norm's check
    lambda lib: lib.fft.fft(lib.ones(0), norm="bad"),
    lambda lib: lib.fft.rfft(lib.ones(2, 0)),
    lambda lib: lib.fft.fftn(lib.ones(0, 3, dtype=lib.complex64)),
    lambda lib: lib.fft.irfft2(lib.ones(0, 3), dim=(0,)),
    lambda lib: lib.fft.irfft(lib.ones(0)),
    # the n-d functions check dims and sizes before dtypes
    lambda lib: lib.fft.fft2(lib.ones(3, 4, dtype=lib.float16), dim=(0, 0)),
    lambda lib: lib.fft.fftn(lib.ones(4, dtype=lib.float16), s=(2, 3)),
    lambda lib: lib.fft.rfft2(lib.ones(3, 4, dtype=lib.float16), dim=()),
    lambda lib: lib.fft.ihfft2(lib.ones(3, 4, dtype=lib.complex128), s=(0, 3)),
    lambda lib: lib.fft.ihfftn(lib.ones(3, 4, dtype=lib.complex128), dim=(0, 0)),
    lambda lib: lib.fft.rfftn(lib.ones(3, 4, dtype=lib.complex128), dim=(0, 0)),
    lambda lib: lib.fft.fft(lib.ones(3, 4, dtype=lib.float16), dim=5),
    # the 2-d functions' dims are a tuple
    lambda lib: lib.fft.fft2(lib.ones(3, 4), s=(3, 3), dim=None),
    lambda lib: lib.fft.ihfft2(lib.ones(3, 4), dim=None),
], ids=lambda f: "")
def test_errors_match_torch(call):
    same_error(call)


def test_gradient_of_a_spectral_loss():
    """A spectral loss: the gradient of |rfft(x)|^2 summed over a window (Parseval's weights), through torch."""
    check(lambda lib, x: (lib.fft.rfft(x * lib.hann_window(6, dtype=x.dtype)).abs() ** 2).sum(-1), X, gradgrad=True)
