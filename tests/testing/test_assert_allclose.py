"""ember.testing.assert_allclose, the deprecated form torch still ships: its FutureWarning, conversions, looser default
tolerances and dtype-blind comparison, against torch's outcome (exception type and text) on each case."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from oracle import ember, torch


def _outcome(fn, lib):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            fn(lib)
            err = None
        except Exception as e:  # noqa: BLE001 - compared with torch's
            err = type(e).__name__, str(e)
    return err, [(m.category.__name__, str(m.message)) for m in w]


CASES = {
    "equal": lambda lib: lib.testing.assert_allclose(lib.ones(3), lib.ones(3)),
    "within-float32-default": lambda lib: lib.testing.assert_allclose(lib.tensor([1.0]), lib.tensor([1.00005])),
    "outside-float32-default": lambda lib: lib.testing.assert_allclose(lib.tensor([1.0]), lib.tensor([1.001])),
    "float64-default": lambda lib: lib.testing.assert_allclose(lib.tensor([1.0], dtype=lib.float64),
                                                              lib.tensor([1.000001], dtype=lib.float64)),
    "dtypes-may-differ": lambda lib: lib.testing.assert_allclose(lib.tensor([1, 2]), lib.tensor([1.0, 2.0])),
    "nan-equal-by-default": lambda lib: lib.testing.assert_allclose(lib.tensor([math.nan]), lib.tensor([math.nan])),
    "nan-unequal": lambda lib: lib.testing.assert_allclose(lib.tensor([math.nan]), lib.tensor([math.nan]),
                                                          equal_nan=False),
    "number-expected": lambda lib: lib.testing.assert_allclose(lib.tensor(2.0), 2),
    "list-actual": lambda lib: lib.testing.assert_allclose([1.0, 2.0], lib.tensor([1.0, 2.0])),
    "numpy-expected": lambda lib: lib.testing.assert_allclose(lib.tensor([1.0, 2.0]), np.array([1.0, 2.5])),
    "explicit-tolerances": lambda lib: lib.testing.assert_allclose(lib.tensor([1.0]), lib.tensor([1.5]), rtol=0,
                                                                  atol=0.6),
    "one-tolerance": lambda lib: lib.testing.assert_allclose(lib.tensor([1.0]), lib.tensor([1.5]), rtol=0.1),
    "shape-mismatch": lambda lib: lib.testing.assert_allclose(lib.ones(2), lib.ones(3)),
    "message": lambda lib: lib.testing.assert_allclose(lib.ones(2), lib.zeros(2), msg="custom"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_assert_allclose_matches_torch(name):
    assert _outcome(CASES[name], ember) == _outcome(CASES[name], torch)
