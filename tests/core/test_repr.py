"""Printing: repr/str of tensors must be byte-identical to torch's (layout, notation, summarisation, suffixes)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import ember, torch

LIBS = (ember, torch)
A = np.array

CASES = {
    "0d": lambda L: L.tensor(1.5),
    "0di": lambda L: L.tensor(3),
    "0db": lambda L: L.tensor(True),
    "0dint_f": lambda L: L.tensor(2.0),
    "1d": lambda L: L.tensor([1.5, -2.25, 3]),
    "intf": lambda L: L.tensor([1.0, 2.0]),
    "2d": lambda L: L.arange(6.0).reshape(2, 3) / 7,
    "3d": lambda L: L.arange(24.0).reshape(2, 3, 4) - 5,
    "4d": lambda L: L.arange(16).reshape(2, 2, 2, 2),
    "big1d": lambda L: L.arange(2000.0),
    "big1d_i": lambda L: L.arange(1001),
    "big2d": lambda L: L.arange(1200.0).reshape(40, 30) / 3,
    "big3d": lambda L: L.arange(3000).reshape(10, 10, 30),
    "sci": lambda L: L.tensor([1e-5, 1.0, 1000.0]),
    "sci2": lambda L: L.tensor([1e10, 1.0]),
    "tiny": lambda L: L.tensor([1e-8, 2e-8]),
    "huge": lambda L: L.tensor([1e20]),
    "ratio": lambda L: L.tensor([0.001, 1.5]),
    "ratio_int": lambda L: L.tensor([1.0, 5000.0]),
    "bigint_f": lambda L: L.tensor([1e9, 2.0]),
    "nan": lambda L: L.tensor([float('nan'), 1.0, float('inf'), -float('inf')]),
    "nanonly": lambda L: L.tensor([float('nan')]),
    "inf_int": lambda L: L.tensor([float('inf'), 2.0]),
    "nan_frac": lambda L: L.tensor([float('nan'), 1.5]),
    "neg": lambda L: L.tensor([-1.5, -0.25]),
    "zeros": lambda L: L.zeros(2, 3),
    "negzero": lambda L: L.tensor([-0.0, 1.0]),
    "f64": lambda L: L.tensor([1.5, 2.0], dtype=L.float64),
    "f16": lambda L: L.tensor([1.5, 2.1], dtype=L.float16),
    "f64_0d": lambda L: L.tensor(1.5, dtype=L.float64),
    "i32": lambda L: L.tensor([1, 2], dtype=L.int32),
    "u8": lambda L: L.tensor([1, 200], dtype=L.uint8),
    "i64neg": lambda L: L.tensor([-1, 2000]),
    "i8_0d": lambda L: L.tensor(3, dtype=L.int8),
    "bool": lambda L: L.tensor([True, False]),
    "bool2d": lambda L: L.ones(2, 2, dtype=L.bool),
    "empty": lambda L: L.ones(0),
    "empty2": lambda L: L.ones(0, 3),
    "empty3": lambda L: L.ones(2, 0, 1),
    "empty_i": lambda L: L.ones(0, dtype=L.int64),
    "empty_i32": lambda L: L.ones(3, 0, dtype=L.int32),
    "empty_f64": lambda L: L.ones(0, dtype=L.float64),
    "empty_b": lambda L: L.ones(0, 2, dtype=L.bool),
    "empty_rg": lambda L: L.ones(0, requires_grad=True),
    "rg": lambda L: L.tensor([1.0, 2.0], requires_grad=True),
    "rg0": lambda L: L.tensor(1.0, requires_grad=True),
    "gf": lambda L: L.tensor([1.0, 2.0], requires_grad=True) * 2,
    "gf_f64": lambda L: L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True) * 2,
    "wrap": lambda L: L.arange(10.0).reshape(2, 5) * 1.37 * L.tensor(1.0, requires_grad=True),
    "wrap2": lambda L: L.arange(8.0) * 1234.567 * L.tensor(1.0, dtype=L.float64, requires_grad=True),
    "wrap3": lambda L: L.arange(7.0) * 12.5 * L.tensor(1.0, dtype=L.float16, requires_grad=True),
    "long_line": lambda L: L.arange(30.0) / 3,
    "long_line_i": lambda L: L.arange(50),
    "long2d": lambda L: L.arange(40.0).reshape(2, 20) / 3,
    "mixed_sign_sci": lambda L: L.tensor([-1e-5, 1e3]),
    "prec": lambda L: L.tensor([1 / 3, 2 / 3]),
    "1e8": lambda L: L.tensor([1e8, 1.0]),
    "1e8b": lambda L: L.tensor([99999999.0, 1.0]),
    "round": lambda L: L.tensor([0.99999, 1.00001]),
    "small_int_sci": lambda L: L.tensor([1.0, 1001.0]),
    "exact1000": lambda L: L.tensor([1.0, 1000.0]),
    "f16big": lambda L: L.tensor([60000.0, 1.0], dtype=L.float16),
    "i_2d_neg": lambda L: L.tensor([[-10, 2], [3, 400]]),
    "1x1": lambda L: L.ones(1, 1),
    "col": lambda L: L.arange(5.0).reshape(5, 1),
    "f64big": lambda L: L.arange(1500.0, dtype=L.float64) / 7,
    "nonc": lambda L: L.arange(6.0).reshape(2, 3).t(),
    "bool_big": lambda L: L.ones(1200, dtype=L.bool),
    "denorm": lambda L: L.tensor([1e-40, 1.0]),
    "f64prec": lambda L: L.tensor([1.123456789], dtype=L.float64),
    "neg_only_int": lambda L: L.tensor([-1.0, -20.0]),
}


@pytest.fixture
def restore_printoptions():
    yield
    for lib in LIBS:
        lib.set_printoptions(profile="default", sci_mode=None)
        lib.set_default_dtype(lib.float32)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(CASES))
def test_repr_matches_torch(name):
    e, t = CASES[name](ember), CASES[name](torch)
    assert repr(e) == repr(t)
    assert str(e) == str(t)


OPTIONS = [
    dict(precision=2),
    dict(precision=8),
    dict(precision=0),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(precision=1, sci_mode=True),
    dict(threshold=5),
    dict(edgeitems=1, threshold=10),
    dict(linewidth=40),
    dict(profile="short"),
    dict(edgeitems=0, threshold=3),
    dict(linewidth=120, precision=3),
]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("opts", OPTIONS, ids=str)
def test_set_printoptions(opts, restore_printoptions):
    for lib in LIBS:
        lib.set_printoptions(**opts)
    bad = [k for k, f in CASES.items() if repr(f(ember)) != repr(f(torch))]
    assert not bad, bad


def test_full_profile_and_restore(restore_printoptions):
    for lib in LIBS:
        lib.set_printoptions(profile="full")
    assert repr(ember.arange(1500)) == repr(torch.arange(1500))
    for lib in LIBS:
        lib.set_printoptions(profile="default")
    assert repr(ember.arange(1500)) == repr(torch.arange(1500))
    assert ember.get_printoptions()["threshold"] == 1000


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ["0d", "1d", "f64", "f16", "i32", "rg", "gf", "empty", "empty_f64", "intf"])
def test_default_float64_changes_dtype_suffixes(name, restore_printoptions):
    for lib in LIBS:
        lib.set_default_dtype(lib.float64)
    assert repr(CASES[name](ember)) == repr(CASES[name](torch))
    assert repr(ember.ones(2, dtype=ember.float32)) == repr(torch.ones(2, dtype=torch.float32))


# ----------------------------------------------------------------------------- hypothesis
_DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8", "bool"]
_SPECIAL = [0.0, -0.0, math.nan, math.inf, -math.inf, 1e-9, 1e9, 123456.0, -7.0, 0.5, 1e-5]


@st.composite
def tensors(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=0, max_size=4)))
    if draw(st.booleans()) and len(shape) <= 2:  # now and then something large enough to summarise
        shape = tuple(draw(st.integers(30, 45)) for _ in range(max(len(shape), 1)))
    n = int(np.prod(shape))
    dtype = draw(st.sampled_from(_DTYPES))
    scale = draw(st.sampled_from([1.0, 1e-3, 1e3, 1e6, 1e10, 1e-6]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["normal", "ints", "special"]))
    if kind == "normal":
        vals = rng.standard_normal(n) * scale
    elif kind == "ints":
        vals = rng.integers(-300, 300, n).astype(np.float64)
    else:
        vals = rng.choice(np.array(_SPECIAL), n)
    if dtype == "bool":
        arr = vals > 0
    elif dtype.startswith("float"):
        arr = vals.astype(dtype)
    else:
        info = np.iinfo(dtype)
        arr = np.clip(np.nan_to_num(vals, posinf=info.max, neginf=info.min), info.min, info.max).astype(dtype)
    grad = dtype.startswith("float") and draw(st.sampled_from(["none", "leaf", "fn"]))
    return arr.reshape(shape), grad


def _make(lib, arr, grad):
    t = lib.tensor(arr)
    if grad == "leaf":
        t.requires_grad_()
    elif grad == "fn":
        t = t.requires_grad_() * 1
    return t


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=150, deadline=None)
@given(tensors())
def test_repr_hypothesis(case):
    arr, grad = case
    e, t = _make(ember, arr, grad), _make(torch, arr, grad)
    assert repr(e) == repr(t)


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=40, deadline=None)
@given(tensors(), st.sampled_from(OPTIONS))
def test_repr_hypothesis_with_options(case, opts):
    arr, grad = case
    try:
        for lib in LIBS:
            lib.set_printoptions(**opts)
        assert repr(_make(ember, arr, grad)) == repr(_make(torch, arr, grad))
    finally:
        for lib in LIBS:
            lib.set_printoptions(profile="default", sci_mode=None)
