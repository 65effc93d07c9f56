"""ember.testing.assert_close against torch.testing.assert_close: which inputs pass, and the exact exception type
and message text of each failure."""
from __future__ import annotations

import math

import numpy as np
import pytest

from oracle import ember, same_error, torch

NAN, INF = math.nan, math.inf


def _outcome(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__, str(e).replace("ember._tensor.Tensor", "torch.Tensor")
    return None


def _same(fn) -> None:
    want = _outcome(fn, torch)
    assert _outcome(fn, ember) == want


def _t(lib, values, dtype="float32"):
    return lib.tensor(np.asarray(values), dtype=getattr(lib, dtype))


def _close(a, b, **kw):
    return lambda lib: lib.testing.assert_close(a(lib) if callable(a) else a, b(lib) if callable(b) else b, **kw)


def _pair(a, b, dtype_a="float32", dtype_b=None):
    return (lambda lib: _t(lib, a, dtype_a)), (lambda lib: _t(lib, b, dtype_b or dtype_a))


CASES = {
    "equal": (*_pair([1.0, 2.0], [1.0, 2.0]), {}),
    "one of four": (*_pair([1.0, 2, 3, 4], [1.0, 2, 3, 4.1]), {}),
    "2-d index": (*_pair([[1.0, 2], [3, 4]], [[1.0, 2], [3.5, 4.1]]), {}),
    "within default float32": (*_pair([1.0, 1e3], [1.000001, 1e3 + 1e-3]), {}),
    "within default float64": (*_pair([1.0], [1.0 + 5e-8], "float64"), {}),
    "outside default float64": (*_pair([1.0, 2.0], [1.0 + 5e-7, 2.0], "float64"), {}),
    "float16": (*_pair([1.0, 2], [1.0, 2.01], "float16"), {}),
    "int64 equal only": (*_pair([1, 2], [1, 3], "int64"), {}),
    "uint8": (*_pair([1, 2], [3, 0], "uint8"), {}),
    "bool": (*_pair([True], [False], "bool"), {}),
    "0-d float": (*_pair(1.1, 1.0), {}),
    "0-d int": (*_pair(1, 0, "int64"), {}),
    "0-d bool": (*_pair(True, False, "bool"), {}),
    "nan unequal": (*_pair([NAN, 1.0], [NAN, 1.0]), {}),
    "nan equal_nan": (*_pair([NAN, 1.0], [NAN, 1.0]), dict(equal_nan=True)),
    "nan vs number": (*_pair([1.0, 2.0], [NAN, 2.0]), dict(equal_nan=True)),
    "inf equal": (*_pair([INF, -INF], [INF, -INF]), {}),
    "inf opposite": (*_pair([INF], [-INF]), {}),
    "zero expected": (*_pair([0.0, 1], [1e-6, 1]), {}),
    "zero expected rel": (*_pair([1.0, 0.1], [1.0, 0.0]), {}),
    "explicit tolerances": (*_pair([1.0, 2.0], [1.05, 2.0]), dict(rtol=0.1, atol=0.0)),
    "explicit tolerances fail": (*_pair([1.0, 2.0], [1.5, 2.0]), dict(rtol=0.1, atol=0.01)),
    "zero tolerances": (*_pair([1.0, 2], [1.0, 2.1]), dict(rtol=0, atol=0)),
    "shape": (*_pair([1.0, 2], [1.0, 2, 3]), {}),
    "dtype": (*_pair([1.0, 2], [1, 2], "float32", "int64"), {}),
    "dtype unchecked": (*_pair([1.0, 2.5], [1, 2], "float32", "int64"), dict(check_dtype=False)),
    "dtype unchecked f64": (*_pair([1.0, 2], [1.0, 2], "float32", "float64"), dict(check_dtype=False)),
    "empty": (*_pair(np.zeros((0, 3)), np.zeros((0, 3))), {}),
    "custom msg": (*_pair([1.0], [2.0]), dict(msg="custom")),
    "callable msg": (*_pair([1.0], [2.0]), dict(msg=lambda m: "X" + m)),
    "rtol without atol": (*_pair([1.0], [1.0]), dict(rtol=1e-3)),
    "atol without rtol": (*_pair([1.0], [1.0]), dict(atol=1e-3)),
    "requires grad": ((lambda lib: _t(lib, [1.0, 2.0]).requires_grad_()), (lambda lib: _t(lib, [1.0, 2.0])), {}),
    "stride": ((lambda lib: _t(lib, np.zeros((2, 3)))[:, ::2]), (lambda lib: _t(lib, np.zeros((2, 2)))),
               dict(check_stride=True)),
    "stride unchecked": ((lambda lib: _t(lib, np.zeros((2, 3)))[:, ::2]), (lambda lib: _t(lib, np.zeros((2, 2)))),
                         {}),
    "transposed stride": ((lambda lib: _t(lib, [[1.0, 0], [2, 3]])),
                          (lambda lib: _t(lib, [[1.0, 0.1], [2, 3]]).t().contiguous().t()), dict(check_stride=True)),
    "tensor vs float": ((lambda lib: _t(lib, [1.0])), 1.0, {}),
    "tensor vs ndarray": ((lambda lib: _t(lib, [1.0])), np.ones(1), {}),
    "ndarrays": (np.ones(2), np.zeros(2), {}),
    "ndarrays equal": (np.ones((2, 2)), np.ones((2, 2)), {}),
    "python floats": (1.0, 1.1, {}),
    "python floats close": (1.0, 1.0 + 1e-8, {}),
    "python ints": (1, 2, {}),
    "int vs float": (1, 1.0, {}),
    "int vs float unchecked": (1.0, 2, dict(check_dtype=False)),
    "complex": (1 + 1j, 1 + 1j, {}),
    "bools": (True, False, {}),
    "none": (None, None, {}),
    "none vs int": (None, 1, {}),
    "int vs none": (1, None, {}),
    "strings": ("a", "a", {}),
    "sequence item": ((lambda lib: [_t(lib, 1.0)]), (lambda lib: [_t(lib, 2.0)]), {}),
    "sequence length": ([1.0], [1.0, 2.0], {}),
    "tuple types": ((1, 2), (1, 2.5), {}),
    "mapping item": ((lambda lib: {"a": _t(lib, 1.0)}), (lambda lib: {"a": _t(lib, 2.0)}), {}),
    "mapping keys": ((lambda lib: {"a": _t(lib, 1.0)}), (lambda lib: {"b": _t(lib, 2.0)}), {}),
    "nested path": ((lambda lib: [[_t(lib, 1.0)], {"x": 2}]), (lambda lib: [[_t(lib, 1.0)], {"x": 3}]), {}),
    "nested path callable msg": ((lambda lib: [{"x": _t(lib, [1.0, 2.0])}]),
                                 (lambda lib: [{"x": _t(lib, [1.0, 3.0])}]), dict(msg=lambda m: m.upper())),
    "nested ok": ((lambda lib: ({"a": [_t(lib, [1.0, 2.0]), 3]}, 4.0)),
                  (lambda lib: ({"a": [_t(lib, [1.0, 2.0]), 3]}, 4.0)), {}),
}


@pytest.mark.parametrize("name", CASES)
def test_assert_close_matches_torch(name: str) -> None:
    a, b, kw = CASES[name]
    _same(_close(a, b, **kw))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "int64", "uint8"])
@pytest.mark.parametrize("seed", range(4))
def test_random_mismatches_report_like_torch(dtype: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 5, rng.integers(1, 4)))
    a = rng.integers(0, 50, shape) if dtype.startswith(("int", "uint")) else rng.standard_normal(shape)
    b = a.copy()
    flat = b.reshape(-1)
    hit = rng.choice(flat.size, rng.integers(1, flat.size + 1), replace=False)
    flat[hit] += rng.integers(1, 5, hit.size) * (1.0 if b.dtype.kind == "f" else 1)
    if b.dtype.kind == "f" and seed % 2:
        flat[hit[0]] = 0.0  # a zero expected value: infinite relative difference
    _same(_close(lambda lib: _t(lib, a, dtype), lambda lib: _t(lib, b, dtype)))


@pytest.mark.parametrize("pair", ["param-tensor", "tensor-param", "param-param", "list"])
def test_assert_close_allow_subclasses(pair):
    def call(lib):
        p, t = lib.nn.Parameter(lib.ones(1)), lib.ones(1)
        a, b = {"param-tensor": (p, t), "tensor-param": (t, p), "param-param": (p, lib.nn.Parameter(lib.ones(1))),
                "list": ([p], [t])}[pair]
        lib.testing.assert_close(a, b)  # subclasses allowed by default
        lib.testing.assert_close(a, b, allow_subclasses=False)

    if pair == "param-param":
        call(ember)
        call(torch)
    else:
        same_error(call, ["No comparison pair was able to handle inputs of type", "Parameter"])
