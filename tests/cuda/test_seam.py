"""The namespace helpers of ember/_backend.py (NOTE [cupy's missing numpy]) and the stand-in's CuPy-like refusals:
what NumPy code does that CuPy does not (``flags.writeable``, ``__array_interface__``, ``ufunc.at``,
``maximum.accumulate``, array ``repeats``, ``np.asarray`` of a device array). The stand-in refuses each as CuPy
does, so tests/cuda/test_stand_in_ops.py fails on a kernel that uses one; the helpers do each on every device,
and their stand-in results must equal NumPy's."""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import ember
from ember import _backend as B

CUDA = ember.device("cuda", 0)
S = B.StandInArray


def _dev(a: np.ndarray):
    return np.array(a).view(S)


def _same(d, h) -> None:
    assert type(d) is S, type(d)
    np.testing.assert_array_equal(d.view(np.ndarray), h)


# ---------------------------------------------------------------- the stand-in refuses what CuPy lacks
def test_stand_in_refuses_what_cupy_lacks(stand_in) -> None:
    x = _dev(np.arange(6.0).reshape(2, 3))
    assert x.flags.c_contiguous and not x.flags.f_contiguous
    with pytest.raises(AttributeError, match="writeable"):
        x.flags.writeable  # noqa: B018
    with pytest.raises(AttributeError, match="__array_interface__"):
        x.__array_interface__  # noqa: B018
    with pytest.raises(TypeError, match="'at'"):
        np.add.at(x, (np.array([0, 0]),), 1.0)
    with pytest.raises(NotImplementedError, match="cupy_maximum.accumulate"):
        np.maximum.accumulate(x, axis=1)
    _same(np.add.accumulate(x, axis=1), np.add.accumulate(np.arange(6.0).reshape(2, 3), axis=1))
    with pytest.raises(ValueError, match="repeats"):
        np.repeat(_dev(np.arange(3)), _dev(np.array([1, 0, 2])))
    with pytest.raises(TypeError, match="mixed with a host array"):  # strict: as CuPy's "Unsupported type"
        np.add(x, np.ones(3))
    with pytest.raises(TypeError, match="Wrong arguments"):  # CuPy's ufuncs take out, dtype, casting: no where=
        np.negative(x, out=x, where=x > 2)
    _same(np.negative(x, out=x, where=True), -np.arange(6.0).reshape(2, 3))
    assert B.is_host_only(TypeError("Argument 'b' has incorrect type (expected cupy._core.core._ndarray_base, got "
                                    "numpy.ndarray)"))


# ---------------------------------------------------------------- the helpers: NumPy's answers, on the device
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.complex128, np.bool_])
def test_ufunc_at_adds_on_the_device(stand_in, dtype) -> None:
    rng = np.random.default_rng(0)
    keys = [(np.array([0, 2, 0, 0]),), (rng.integers(0, 4, (5, 1)), rng.integers(0, 3, (1, 2))),
            (slice(None), np.array([1, 1, 2])), (np.array([[True, False, True], [False, False, True],
                                                            [True, True, True], [False, False, False]]),)]
    for key in keys:
        h = (rng.standard_normal((4, 3)) * 5).astype(dtype)
        region = np.empty((4, 3))[key].shape
        v = (rng.standard_normal(region) * 5).astype(dtype)
        d = _dev(h)
        np.add.at(h, key, v)
        B.ufunc_at(np.add, d, tuple(_dev(k) if isinstance(k, np.ndarray) else k for k in key), _dev(v))
        assert type(d) is S
        np.testing.assert_allclose(d.view(np.ndarray), h, rtol=1e-6)
    d, h = _dev(np.zeros(4, dtype)), np.zeros(4, dtype)
    B.ufunc_at(np.add, d, _dev(np.array([3, 3, 1])), 1)  # a scalar value
    np.add.at(h, np.array([3, 3, 1]), 1)
    _same(d, h)


@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum, np.multiply])
def test_ufunc_at_other_ufuncs(stand_in, ufunc) -> None:
    h = np.arange(1.0, 7.0)
    d = _dev(h)
    key, v = np.array([0, 5, 0, 2]), np.array([9.0, -1.0, 0.5, 3.0])
    ufunc.at(h, key, v)
    B.ufunc_at(ufunc, d, (_dev(key),), _dev(v))
    _same(d, h)


def test_accumulate_strides_and_copies(stand_in) -> None:
    h = np.random.default_rng(1).standard_normal((3, 4))
    d = _dev(h)
    for uf in (np.maximum, np.minimum, np.add, np.multiply):
        _same(B.accumulate(uf, d, 1), uf.accumulate(h, axis=1))
    _same(B.as_strided(d, (3, 2), (32, 8)), np.lib.stride_tricks.as_strided(h, (3, 2), (32, 8)))
    view = B.strided_view(d, (2, 2), (16, 8), 8)
    _same(view, h.reshape(-1)[1:5].reshape(2, 2))
    view[0, 0] = 42.0  # a view: writes reach the store
    assert d[0, 1] == 42.0
    h[0, 1] = 42.0
    c = _dev(np.array([1 + 2j, 3 - 4j]))
    _same(B.strided_view(c, (2, 2), (16, 8), 0, np.float64), np.array([[1.0, 2.0], [3.0, -4.0]]))
    t = d.T
    _same(B.ascontiguousarray(t), np.ascontiguousarray(h.T))
    assert B.ascontiguousarray(t).flags.c_contiguous
    assert B.asarray(t) is t and type(B.asarray(np.float32(2))) is np.ndarray
    _same(B.repeat(_dev(np.arange(3)), _dev(np.array([2, 0, 1]))), np.array([0, 0, 2]))
    assert B.address(d[1]) - B.address(d) == 32
    assert B.writeable(d) and not B.writeable(np.broadcast_to(h, (2, 3, 4)))
    assert B.is_array(d) and B.is_array(h) and not B.is_array(3.0)
    key = B.key_on(d, (np.array([0, 2]), slice(None)))
    assert type(key[0]) is S and key[1] == slice(None)
    assert B.key_on(h, key) is key


# ---------------------------------------------------------------- ops that met these classes on a GPU
def test_results_and_indices_on_the_device(stand_in) -> None:
    x = ember.randn(3, 4)
    xc = x.to("cuda")
    for f in (lambda t: t[ember.tensor([2, 0, 2])],  # a CPU index tensor into a CUDA tensor (torch allows it)
              lambda t: t[t > 0],
              lambda t: t[:, [True, False, True, True]],
              lambda t: t.new_zeros(0, 4).mean(0),  # an empty reduction: made from no array
              lambda t: t.cummax(1).indices,
              lambda t: t.unfold(1, 2, 1),
              lambda t: ember.view_as_real(t.to(ember.complex64)),
              lambda t: t.clamp(ember.zeros(4, device=t.device), ember.ones(4, device=t.device))):
        c, d = f(x), f(xc)
        assert d.device == CUDA
        np.testing.assert_array_equal(d.cpu().numpy(), c.numpy())
    y = xc.clone()
    y[ember.tensor([0, 0])] = 5.0
    y.fill_diagonal_(1.0)
    z = x.clone()
    z[ember.tensor([0, 0])] = 5.0
    z.fill_diagonal_(1.0)
    np.testing.assert_array_equal(y.cpu().numpy(), z.numpy())


@pytest.mark.parametrize("make", [lambda lib, **k: lib.hann_window(5, **k), lambda lib, **k: lib.kaiser_window(4, **k),
                                  lambda lib, **k: lib.tril_indices(3, 3, **k),
                                  lambda lib, **k: lib.triu_indices(2, 4, 1, **k)])
def test_factories_outside_factories_take_the_device(stand_in, make) -> None:
    cpu = make(ember)
    assert make(ember, device="cuda").device == CUDA
    ember.set_default_device("cuda")
    try:
        d = make(ember)
    finally:
        ember.set_default_device("cpu")
    assert d.device == CUDA
    np.testing.assert_array_equal(d.cpu().numpy(), cpu.numpy())


def test_cross_entropy_and_nll_on_the_device(stand_in) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    t = np.array([0, 4, -100, 2, 2, 1])
    w = rng.uniform(0.5, 2, 5).astype(np.float32)
    for kw in ({}, {"ignore_index": -100, "weight": w}, {"label_smoothing": 0.2, "ignore_index": -100},
               {"reduction": "sum", "ignore_index": -100}):
        grads = []
        for dev in ("cpu", "cuda"):
            xi = ember.tensor(x, device=dev, requires_grad=True)
            k = {n: ember.tensor(v, device=dev) if isinstance(v, np.ndarray) else v for n, v in kw.items()}
            loss = ember.nn.functional.cross_entropy(xi, ember.tensor(t, device=dev), **k)
            loss.backward()
            assert xi.grad.device == xi.device
            grads.append((loss.item(), xi.grad.cpu().numpy()))
        assert grads[0][0] == pytest.approx(grads[1][0], rel=1e-6)
        np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- what the stand-in cannot see: read the kernels
# A CuPy array is no np.ndarray, and np.asarray / np.ascontiguousarray of a stand-in array silently make a host
# array (NumPy gives ndarray subclasses no hook there), so these spellings are kept out of the op kernels.
_FORBIDDEN = {
    r"isinstance\([^,()]+, (\([^()]*\b)?(np\.ndarray|_nd)\b": "_B.is_array(x) (a CuPy array is no np.ndarray)",
    r"np\.asarray\(": "_B.asarray (NumPy's converts a device array to the host)",
    r"np\.ascontiguousarray\(": "_B.ascontiguousarray",
    r"np\.lib\.stride_tricks|__array_interface__\[": "_B.as_strided / _B.strided_view / _B.address",
    r"(?<!_B)\.at\(|(?<!_B)\.accumulate\(": "_B.ufunc_at / _B.accumulate",
    r"\.flags\.writeable": "_B.writeable",
}
_ALLOWED = {  # (file, the line's text) pairs that only ever see host arrays
    ("complex_numbers.py", "while isinstance(arr.base, np.ndarray):"),  # the base chain of a host view
    # keys as the user wrote them (NumPy arrays are host data, made into index arrays on the tensor's device)
    ("indexing.py", "if isinstance(k, (Tensor, slice, np.ndarray, str, *_SEQ)) or k is None or k is Ellipsis:"),
    ("indexing.py", "elif isinstance(k, (np.ndarray, str, *_SEQ)):"),
    ("random.py", "return _B.like(like, np.asarray(arr).astype(like.dtype, copy=False))"),  # host draws
    ("_inplace.py", "if type(arr) is not np.ndarray or arr.dtype.kind != \"f\" or not arr.flags.writeable:"),
    ("reduction.py", "return cls._ufunc.accumulate(a, axis=d, dtype=_int_result(a, dtype)).reshape(self.shape)"),
    ("conv.py", "from numpy.lib.stride_tricks import as_strided"),
    # host arrays only: after the device branch of _reinterpret, and the flat scatter-add of _kernels
    ("complex_numbers.py", "view = _B.asarray(_Memory({\"data\": (arr.__array_interface__[\"data\"][0], False), "
                           "\"shape\": shape,"),
    ("complex_numbers.py", "if not arr.flags.writeable:"),
    ("complex_numbers.py", "view.flags.writeable = False"),
    ("_kernels.py", "\"\"\"``np.add.at(out, key, values)`` into a fresh C-contiguous ``out`` (NOTE [flat scatter-add]).\"\"\""),
    ("_kernels.py", "np.add.at(out.reshape(-1), pos, np.broadcast_to(values, region).reshape(-1))"),
    # host bookkeeping in nn: interpolation matrices, listed classes, lengths and block tables from Python values,
    # state-dict values given as NumPy arrays
    ("_functional_conv.py", "np.add.at(m, (np.arange(out), i0), 1.0 - lam)"),
    ("_functional_conv.py", "np.add.at(m, (np.arange(out), i1), lam)"),
    ("_functional_conv.py", "np.add.at(m, (np.arange(out), np.clip(i0 - 1 + j, 0, n - 1)), w)"),
    ("_functional_loss.py", "np.add.at(counts, (np.nonzero(listed)[0], t[listed]), 1)  # a class listed twice counts "
                            "twice"),
    ("_functional_ctc.py", "x = _wrap(np.asarray(x, np.int64).reshape(-1), _D.int64)"),
    ("flex_attention.py", "return _wrap(np.ascontiguousarray(a, dtype=np.int32), D.int32)"),
    ("module.py", "if isinstance(v, np.ndarray):"),
    ("rnn.py", "return np.asarray([int(n) for n in lengths], dtype=np.int64)"),
    ("rnn.py", "return _wrap(np.ascontiguousarray(a, dtype=np.int64), _D.int64)"),
}


def _spellings(paths, forbidden: dict, allowed: set) -> list:
    """``file:line: text  -> what to use`` for each line of ``paths`` with a forbidden spelling."""
    bad = []
    for path in paths:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            text = line.strip()
            if text.startswith("#") or (path.name, text) in allowed:
                continue
            bad += [f"{path.name}:{n}: {text}  -> {use}" for pattern, use in forbidden.items() if re.search(pattern, text)]
    return bad


def test_op_kernels_use_the_namespace_helpers() -> None:
    root = pathlib.Path(ember.__file__).parent
    kernels = [root / "ops", root / "func", root / "nn"]  # op kernels, vmap's rules, nn's functions and layers
    bad = _spellings(sorted(p for d in kernels for p in d.rglob("*.py")) + [root / "_kernels.py"], _FORBIDDEN, _ALLOWED)
    assert not bad, "\n".join(bad)


# ember.compile's programs call kernels on the inputs' arrays (NOTE [compiled on devices] in ember/_compile/__init__.py):
# the compiler's own code keeps to the same spellings, and makes no array without ``like=`` (it would land on the
# host) and asks no ``type(x) is np.ndarray`` (a device array would look like a batched tensor or a constant).
_COMPILE_FORBIDDEN = dict(_FORBIDDEN, **{
    r"type\([^()]+\) is (not )?(np\.ndarray|_nd)\b": "type(x) in _B.ARRAYS / _B.is_cpu_array",
    r"np\.(zeros|empty|ones|full|arange)\((?![^#]*like=)": "like= an input (np.zeros/np.empty), _B.full/_B.ones",
})
_COMPILE_ALLOWED = {
    ("build.py", "return x if type(x) in _ARRAYS else np.asarray(x)"),  # a kernel's NumPy scalar: a host 0-d array
    ("build.py", "return tuple(x if type(x) in _ARRAYS else np.asarray(x) for x in xs)"),
    ("trace.py", "return o if type(o) is np.ndarray else None"),  # the hidden host array of a stand-in array
}


def test_compiler_uses_the_namespace_helpers() -> None:
    root = pathlib.Path(ember.__file__).parent / "_compile"
    bad = _spellings(sorted(root.glob("*.py")), _COMPILE_FORBIDDEN, _COMPILE_ALLOWED)
    assert not bad, "\n".join(bad)
