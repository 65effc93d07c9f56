"""torch.stft / torch.istft against torch: values, gradients and second derivatives over their arguments (center,
pad_mode, normalized, onesided, return_complex, windows shorter than n_fft, align_to_window, length), round trips,
and torch's errors and warnings."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import check, ember, same_error

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 40))
X1 = RNG.standard_normal(37).astype(np.float32)
Z = RNG.standard_normal((2, 40)) + 1j * RNG.standard_normal((2, 40))
S = RNG.standard_normal((2, 9, 11)) + 1j * RNG.standard_normal((2, 9, 11))


def hann(lib, n, like):
    return lib.hann_window(n, dtype=like.dtype if not like.is_complex() else lib.float64)


STFT = {
    "hann": (lambda l, a: l.stft(a, 16, window=hann(l, 16, a), return_complex=True), X),
    "1-d float32 hop 3": (lambda l, a: l.stft(a, 8, hop_length=3, window=l.hann_window(8), return_complex=True), X1),
    "rectangular": (lambda l, a: l.stft(a, 16, return_complex=True), X),
    "win_length < n_fft": (lambda l, a: l.stft(a, 16, win_length=10, window=l.hamming_window(10, dtype=a.dtype),
                                               return_complex=True), X),
    "center=False": (lambda l, a: l.stft(a, 16, hop_length=5, center=False, return_complex=True), X),
    "align_to_window": (lambda l, a: l.stft(a, 16, hop_length=5, win_length=9, window=hann(l, 9, a), center=False,
                                            align_to_window=True, return_complex=True), X),
    "constant pad, normalized, two-sided": (lambda l, a: l.stft(a, 12, pad_mode="constant", normalized=True,
                                                                onesided=False, return_complex=True), X),
    "replicate pad": (lambda l, a: l.stft(a, 12, pad_mode="replicate", return_complex=True), X),
    "circular pad": (lambda l, a: l.stft(a, 12, pad_mode="circular", return_complex=True), X),
    "return_complex=False": (lambda l, a: l.stft(a, 16, window=hann(l, 16, a), return_complex=False), X),
    "complex signal": (lambda l, a: l.stft(a, 16, window=hann(l, 16, a)), Z),
    "complex signal return_complex=False": (lambda l, a: l.stft(a, 16, window=hann(l, 16, a), return_complex=False),
                                            Z),
    "complex window return_complex=False": (lambda l, a: l.stft(a, 16, window=hann(l, 16, a).to(l.complex128),
                                                                return_complex=False), X),
    "Tensor.stft": (lambda l, a: a.stft(16, 4, return_complex=True), X),
    "log-mel style": (lambda l, a: (l.stft(a, 16, 4, window=hann(l, 16, a), return_complex=True).abs() ** 2
                                    + 1e-6).log(), X),
}

ISTFT = {
    "round trip": (lambda l, a: l.istft(l.stft(a, 16, window=hann(l, 16, a), return_complex=True), 16,
                                        window=hann(l, 16, a)), X),
    "length shorter": (lambda l, a: l.istft(l.stft(a, 16, window=hann(l, 16, a), return_complex=True), 16,
                                            window=hann(l, 16, a), length=30), X),
    "length longer": (lambda l, a: l.istft(l.stft(a, 16, window=hann(l, 16, a), return_complex=True), 16,
                                           window=hann(l, 16, a), length=50), X),
    "two-sided normalized complex": (lambda l, a: l.istft(
        l.stft(a, 16, window=hann(l, 16, a), return_complex=True, onesided=False, normalized=True), 16,
        window=hann(l, 16, a), onesided=False, normalized=True, return_complex=True), X),
    "two-sided to real": (lambda l, a: l.istft(l.stft(a, 16, return_complex=True, onesided=False), 16,
                                               onesided=False), X),
    "1-d": (lambda l, a: l.istft(l.stft(a, 8, hop_length=2, window=l.hann_window(8), return_complex=True), 8,
                                 hop_length=2, window=l.hann_window(8)), X1),
    "win_length < n_fft": (lambda l, a: l.istft(
        l.stft(a, 16, win_length=12, hop_length=3, window=hann(l, 12, a), return_complex=True), 16, win_length=12,
        hop_length=3, window=hann(l, 12, a)), X),
    "any spectrum": (lambda l, s: l.istft(s, 16, window=l.hann_window(16, dtype=l.float64)), S),
    "Tensor.istft": (lambda l, s: s.istft(16, window=l.hann_window(16, dtype=l.float64)), S),
}


def _names_match(eo, to) -> None:
    for e, t in zip(eo, to):
        assert (e.grad_fn is None) == (t.grad_fn is None)
        if t.grad_fn is not None:
            assert e.grad_fn.name().rsplit("::", 1)[-1] == type(t.grad_fn).__name__


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", list(STFT) + list(ISTFT))
def test_values_and_gradients_match_torch(name):
    fn, arr = {**STFT, **ISTFT}[name]
    eo, to = check(fn, arr, gradgrad=True, rtol=1e-4, atol=1e-5)
    _names_match(eo, to)


def test_round_trip_recovers_the_signal():
    x = ember.tensor(X)
    w = ember.hann_window(16, dtype=ember.float64)
    y = ember.istft(ember.stft(x, 16, window=w, return_complex=True), 16, window=w)
    assert np.allclose(y.numpy(), X)


WARNING_CALLS = [
    "lib.stft(lib.ones(2, 40), 16, window=lib.hann_window(16), return_complex=False)",
    "lib.stft(lib.ones(2, 40), 16, return_complex=True)",
    "lib.istft(lib.ones(2, 9, 11, dtype=lib.complex64), 16)",
    "lib.istft(lib.stft(lib.ones(40), 16, window=lib.hann_window(16), return_complex=True), 16, "
    "window=lib.hann_window(16), length=60)",
]


@pytest.fixture(scope="module")
def torch_warnings():
    """torch's warnings for WARNING_CALLS, from a fresh interpreter (torch warns once per process)."""
    import json
    import subprocess
    import sys

    script = ("import json, warnings, torch as lib\nout = []\n"
              f"for call in {WARNING_CALLS!r}:\n"
              "    with warnings.catch_warnings(record=True) as got:\n"
              "        warnings.simplefilter('always')\n"
              "        eval(call)\n"
              "    out.append([str(w.message).split(' (Triggered internally')[0] for w in got])\n"
              "print(json.dumps(out))\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("index", range(len(WARNING_CALLS)))
def test_warnings_match_torch(index, torch_warnings):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        eval(WARNING_CALLS[index], {"lib": ember})
    assert [str(w.message) for w in got] == torch_warnings[index]


W16 = lambda l: l.hann_window(16)  # noqa: E731
SPEC = lambda l: l.stft(l.ones(2, 40), 16, window=W16(l), return_complex=True)  # noqa: E731


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("call", [
    lambda l: l.stft(l.ones(2, 40), 16),
    lambda l: l.stft(l.ones(2, 40), 0, return_complex=True),
    lambda l: l.stft(l.ones(2, 40), 50, return_complex=True, center=False),
    lambda l: l.stft(l.ones(2, 40), 16, hop_length=0, return_complex=True),
    lambda l: l.stft(l.ones(2, 40), 16, win_length=20, return_complex=True),
    lambda l: l.stft(l.ones(2, 40), 16, window=l.ones(5), return_complex=True),
    lambda l: l.stft(l.ones(2, 4, 10), 4, return_complex=True),
    lambda l: l.stft(l.ones(40, dtype=l.int64), 16, return_complex=True),
    lambda l: l.stft(l.ones(40, dtype=l.complex64), 16, onesided=True, return_complex=True),
    lambda l: l.stft(l.ones(40, dtype=l.complex64), 50, center=False, window=l.ones(50)),  # the types as torch prints
    lambda l: l.stft(l.ones(0), 8, return_complex=True),  # the reflection pad of an empty signal
    lambda l: l.stft(l.ones(2, 40), 16, return_complex=True, pad_mode="bogus"),
    lambda l: l.stft(l.ones(2, 40), 16, return_complex=True, align_to_window=True),
    lambda l: l.istft(l.view_as_real(SPEC(l)), 16, window=W16(l)),
    lambda l: l.istft(SPEC(l), 16, window=l.ones(5)),
    lambda l: l.istft(SPEC(l), 18, window=l.hann_window(18)),
    lambda l: l.istft(SPEC(l), 16, window=W16(l), return_complex=True),
    lambda l: l.istft(SPEC(l), 16, window=W16(l), hop_length=20),
    lambda l: l.istft(SPEC(l), 16, window=l.zeros(16)),
    lambda l: l.istft(SPEC(l)[..., :0], 16, window=W16(l)),
    lambda l: l.istft(SPEC(l), 16, win_length=20),
    lambda l: l.istft(SPEC(l).reshape(1, 2, 9, 11), 16, window=W16(l)),
    lambda l: l.istft(SPEC(l), 16, window=W16(l), onesided=False),
    lambda l: l.istft(SPEC(l), 16, window=W16(l), center=False),
], ids=lambda f: "")
def test_errors_match_torch(call):
    same_error(call)
