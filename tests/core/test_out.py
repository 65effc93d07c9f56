"""``out=`` is honoured wherever it is accepted (generated from signature_db): for every function of torch's
namespaces whose torch overloads take ``out`` (and ember's takes it too, which test_signatures checks), a call is
built from the overload's parameter types and run on both libraries with ``out=`` of each kind torch handles
differently: empty (written and returned), non-empty of the wrong shape (resized, with torch's warning), another
dtype (cast, or torch's error), an input requiring grad (torch's error)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import signature_db as S
from oracle import assert_close, ember, same_error, torch

_RNG = np.random.default_rng(0)
_VALUES = (_RNG.uniform(0.2, 0.9, (3, 3)), _RNG.uniform(0.2, 0.9, (3,)), _RNG.uniform(0.2, 0.9, (2, 3, 3)))

_INT_BY_NAME = {"dim": 0, "dim0": 0, "dim1": 1, "dim2": 1, "axis": 0, "k": 1, "n": 2, "diagonal": 0, "offset": 0,
                "chunks": 2, "sections": 3, "start": 0, "length": 1, "index": 1, "repeats": 2, "num_classes": 4,
                "steps": 4, "row": 3, "col": 3, "window_length": 4, "high": 5, "p": 1, "bins": 4, "end": 3,
                "dimension": 0, "size": 2, "step": 1, "groups": 1, "num_samples": 2, "upscale_factor": 1,
                "downscale_factor": 1, "output_size": 2, "kernel_size": 1}
_NUMBER_BY_NAME = {"p": 2.0, "exponent": 2.0, "other": 0.5, "value": 0.5, "alpha": 0.5, "beta": 0.5, "min": 0.3,
                   "max": 0.7, "threshold": 0.5, "lambd": 0.5, "maxnorm": 1.0, "q": 0.5, "fill_value": 1.5,
                   "start": 0.0, "end": 1.0, "scalar": 0.5, "element": 0.5, "test_element": 0.5}


def _is(typ: str, *words) -> bool:
    return any(w in typ for w in words)


def _tensor_kind(name: str) -> str:
    if _is(name, "index", "indices", "target", "pivots", "LU_pivots") and name != "indices_or_sections":
        return "index"
    if _is(name, "mask", "condition"):
        return "bool"
    if _is(name, "boundaries", "sorted_sequence", "bins"):
        return "sorted"
    if _is(name, "repeats", "counts"):
        return "count"
    return "float"


_NAMED_SHAPES = {"vec": (3,), "vec1": (3,), "vec2": (3,), "batch1": (2, 3, 3), "batch2": (2, 3, 3)}
_NAMED_VALUES = {n: _RNG.uniform(0.2, 0.9, s) for n, s in _NAMED_SHAPES.items()}
# variants tried in order: every tensor (3, 3), (3,), (2, 3, 3); shapes by name (vec: 1-d, batch1: 3-d); integers
_VARIANTS = 5


def _make_tensor(lib, kind: str, shape_i: int, name: str = ""):
    if shape_i == 3:
        a = _NAMED_VALUES.get(name, _VALUES[0])
    else:
        a = _VALUES[min(shape_i, 2) if shape_i < 3 else 0]
    if shape_i == 4 and kind == "float":
        return lib.tensor(np.round(a * 10).astype(np.int64))
    if kind == "index":
        arr = np.zeros(a.shape, np.int64)
    elif kind == "bool":
        arr = a > 0.5
    elif kind == "sorted":
        arr = np.sort(a.reshape(-1))
    elif kind == "count":
        arr = np.full(a.shape[:1], 2, np.int64)
    else:
        arr = a.astype(np.float32)
    return lib.tensor(arr)


def _value(p: S.Param, lib, shape_i: int):
    """A value of ``p``'s type for ``lib`` (None: this overload cannot be built)."""
    t, name = p.type, p.name
    if _is(t, "tuple of Tensors", "tuple[Tensor", "List[Tensor]", "list[Tensor]") or name == "tensors":
        return [_make_tensor(lib, "float", shape_i), _make_tensor(lib, "float", shape_i)]
    if _is(t, "Tensor"):
        return _make_tensor(lib, _tensor_kind(name), shape_i, name)
    if _is(t, "tuple of ints", "Sequence[", "_size", "List[int]", "int[", "SymInt]"):
        return (3, 3) if name in ("size", "shape") else (0,)
    if _is(t, "Number", "float", "number", "Scalar", "_complex"):
        return _NUMBER_BY_NAME.get(name, 0.5)
    if _is(t, "int", "SymInt"):
        return _INT_BY_NAME.get(name, 1)
    if _is(t, "bool"):
        return False
    return None


def _call_for(pair: S.Pair):
    """(build(lib) -> (args, kwargs)) of the first overload with ``out`` that torch runs, else None."""
    sig = S.torch_sig(pair)
    for ov in sig.overloads:
        if not any(p.name == "out" for p in ov) or any(p.name == "self" for p in ov):
            continue
        required = [p for p in ov if p.default is S.REQUIRED and p.kind != S.VAR]
        if any(p.kind == S.VAR for p in ov):
            continue
        for shape_i in range(_VARIANTS):
            def build(lib, ov=ov, shape_i=shape_i, required=required):
                args, kwargs = [], {}
                for p in required:
                    v = _value(p, lib, shape_i)
                    if v is None:
                        return None
                    if p.kind == S.KW:
                        kwargs[p.name] = v
                    else:
                        args.append(v)
                return args, kwargs
            built = build(torch)
            if built is None:
                break
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = pair.torch(*built[0], **built[1])
            except Exception:  # noqa: BLE001 - this shape does not suit the function: try the next
                continue
            if _tensors(r):
                return build
    return None


def _tensors(r):
    if isinstance(r, (tuple, list)):
        return all(isinstance(x, (torch.Tensor, ember.Tensor)) for x in r) and len(r) > 0
    return isinstance(r, (torch.Tensor, ember.Tensor))


def _candidates() -> list:
    out = []
    for pair in S.pairs():
        if pair.method or pair.key in ("torch.range",):
            continue
        sig = S.torch_sig(pair)
        if sig is None or not any(p.name == "out" for ov in sig.overloads for p in ov):
            continue
        out.append(pair)
    return out


def _t(lib, shape, seed=0):
    return lib.tensor(np.random.default_rng(seed).uniform(0.2, 0.9, shape).astype(np.float32))


def _spd(lib):
    a = np.random.default_rng(1).uniform(0.2, 0.9, (3, 3))
    return lib.tensor((a @ a.T + 3 * np.eye(3)).astype(np.float32))


def _lu(lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.lu(_spd(lib))


# the functions with out= the generator cannot call (a vector beside a matrix, a positive-definite matrix, a
# string mode, an equation ...): call(lib, out) with out=None for the plain call
HAND_WRITTEN = {
    "torch.addmv": lambda lib, out: lib.addmv(_t(lib, (3,)), _t(lib, (3, 3)), _t(lib, (3,), 1), out=out),
    "torch.as_strided_copy": lambda lib, out: lib.as_strided_copy(_t(lib, (3, 3)), (2, 2), (1, 2), out=out),
    "torch.chain_matmul": lambda lib, out: lib.chain_matmul(_t(lib, (3, 3)), _t(lib, (3, 3), 1), out=out),
    "torch.cholesky": lambda lib, out: lib.cholesky(_spd(lib), out=out),
    "torch.linalg.cholesky": lambda lib, out: lib.linalg.cholesky(_spd(lib), out=out),
    "torch.linalg.cholesky_ex": lambda lib, out: lib.linalg.cholesky_ex(_spd(lib), out=out),
    "torch.clamp": lambda lib, out: lib.clamp(_t(lib, (3, 3)), 0.3, 0.6, out=out),
    "torch.clip": lambda lib, out: lib.clip(_t(lib, (3, 3)), max=0.6, out=out),
    "torch.index_reduce": lambda lib, out: lib.index_reduce(_t(lib, (3, 3)), 0, lib.tensor([0, 2]), _t(lib, (2, 3)),
                                                            "prod", out=out),
    "torch.scatter_reduce": lambda lib, out: lib.scatter_reduce(_t(lib, (3, 3)), 0, lib.tensor([[0, 1, 2]]),
                                                                _t(lib, (1, 3)), "sum", out=out),
    "torch.lu": lambda lib, out: lib.lu(_spd(lib), out=out),
    "torch.lu_solve": lambda lib, out: lib.lu_solve(_t(lib, (3, 2)), *_lu(lib), out=out),
    "torch.lu_unpack": lambda lib, out: lib.lu_unpack(*_lu(lib), out=out),
    "torch.nn.functional.normalize": lambda lib, out: lib.nn.functional.normalize(_t(lib, (3, 3)), out=out),
    "torch.norm": lambda lib, out: lib.norm(_t(lib, (3, 3)), dim=1, out=out),
    "torch.split_with_sizes_copy": lambda lib, out: lib.split_with_sizes_copy(_t(lib, (3, 3)), [1, 2], out=out),
    "torch.tensordot": lambda lib, out: lib.tensordot(_t(lib, (3, 3)), _t(lib, (3, 3), 1), 1, out=out),
    "torch.linalg.householder_product": lambda lib, out: lib.linalg.householder_product(*lib.geqrf(_t(lib, (4, 3))),
                                                                                        out=out),
    "torch.orgqr": lambda lib, out: lib.orgqr(*lib.geqrf(_t(lib, (4, 3))), out=out),
    "torch.view_as_real_copy": lambda lib, out: lib.view_as_real_copy(_t(lib, (3,)).to(lib.complex64), out=out),
    "torch.view_as_complex_copy": lambda lib, out: lib.view_as_complex_copy(_t(lib, (3, 2)), out=out),
}


CANDIDATES = _candidates()
CALLS = {p.key: (p, None if p.key in HAND_WRITTEN else _call_for(p)) for p in CANDIDATES}
BUILT = sorted(k for k, (_, b) in CALLS.items() if b is not None)
# Functions with out= whose arguments the generator cannot make (a string mode, a generator, an equation ...):
# test_out_hand_written covers their out= with explicit calls.
NOT_GENERATED = sorted(k for k, (_, b) in CALLS.items() if b is None)


def _run(pair: S.Pair, lib, build, out, requires_grad: bool = False):
    args, kwargs = build(lib)
    if requires_grad:
        args = [a.requires_grad_() if isinstance(a, lib.Tensor) and a.dtype.is_floating_point else a for a in args]
    fn = getattr(_namespace(lib, pair.key), pair.key.rsplit(".", 1)[1])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs, out=out)
    resized = [str(x.message) for x in w if "resized" in str(x.message)]
    return result, resized


def _namespace(lib, key: str):
    mod = lib
    for part in key.split(".")[1:-1]:
        mod = getattr(mod, part)
    return mod


def _plain(pair, lib, build):
    args, kwargs = build(lib)
    fn = getattr(_namespace(lib, pair.key), pair.key.rsplit(".", 1)[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _outs_like(lib, result, shape=None, dtype=None):
    """Empty tensors (or of ``shape``/``dtype``) in the structure of ``result``."""
    def one(r):
        d = getattr(lib, str(r.dtype).split(".")[-1]) if dtype is None else dtype(lib, r)
        return lib.empty(shape if shape is not None else 0, dtype=d)
    if isinstance(result, (tuple, list)):
        return tuple(one(r) for r in result)
    return one(result)


def _pieces(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


# samplers (ember's random streams differ from torch's) and uninitialised results: out= is checked for shape
# and dtype only
_RANDOM = {"bernoulli", "multinomial", "normal", "poisson", "rand", "randn", "randint", "randperm", "empty",
           "empty_like", "empty_strided", "empty_permuted"}
# decompositions whose vectors are defined up to sign: compared in absolute value
_SIGNED = {"eigh", "svd", "qr"}


def _compare(e, t, key: str = "") -> None:
    for a, b in zip(_pieces(e), _pieces(t)):
        name = key.rsplit(".", 1)[-1]
        if name in _RANDOM:
            assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
        elif name in _SIGNED:
            assert_close(a.abs(), b.abs(), rtol=1e-4, atol=1e-5)
        else:
            assert_close(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("key", BUILT)
def test_out_is_written_and_returned(key: str) -> None:
    pair, build = CALLS[key]
    expected = _plain(pair, torch, build)
    returned = {}
    for lib in (ember, torch):
        out = _outs_like(lib, expected)
        try:
            result, resized = _run(pair, lib, build, out)
        except Exception as exc:  # noqa: BLE001 - torch's split_copy copies into out: empty ones fail
            returned[lib.__name__] = exc
            continue
        assert not resized
        returned[lib.__name__] = result
        if result is None:  # torch's out= forms of pieces (split_copy ...) return None
            assert returned.get("ember", 0) is None
        else:
            for r, o in zip(_pieces(result), _pieces(out)):
                assert r is o, f"{lib.__name__}: the result is not the out tensor"
        if lib is ember:
            _compare(out, expected, key)
    e, t = returned["ember"], returned["torch"]
    assert isinstance(e, Exception) == isinstance(t, Exception), (e, t)
    if isinstance(t, Exception):
        assert type(e) is type(t) and str(t)[:30] in str(e), (e, t)


@pytest.mark.parametrize("key", BUILT)
def test_out_of_another_shape_is_resized_with_torch_warning(key: str) -> None:
    pair, build = CALLS[key]
    expected = _plain(pair, torch, build)
    seen = {}
    for lib in (ember, torch):
        out = _outs_like(lib, expected, shape=(7,))
        try:
            seen[lib.__name__] = _run(pair, lib, build, out)[1]
        except Exception as exc:  # noqa: BLE001 - torch copies pieces without resizing (split_copy): its error
            seen[lib.__name__] = exc
            continue
        if lib is ember:
            _compare(out, expected, key)
    if isinstance(seen["torch"], Exception):
        assert type(seen["ember"]) is type(seen["torch"]) and str(seen["torch"])[:30] in str(seen["ember"]), seen
        return
    assert bool(seen["ember"]) == bool(seen["torch"]), seen
    if seen["torch"]:  # torch's first sentence, up to the shapes (which torch reaches in steps for some kernels)
        assert seen["ember"][0][:40] == seen["torch"][0][:40], seen


def _other_dtype(lib, r):
    name = str(r.dtype).split(".")[-1]
    return lib.float64 if name == "float32" else lib.float32 if name in ("float64", "int64", "bool") else lib.int64


@pytest.mark.parametrize("key", BUILT)
def test_out_of_another_dtype_as_torch(key: str) -> None:
    pair, build = CALLS[key]
    results = {}
    for lib in (ember, torch):
        expected = _plain(pair, lib, build)
        out = _outs_like(lib, expected, dtype=_other_dtype)
        try:
            _run(pair, lib, build, out)
        except Exception as exc:  # noqa: BLE001 - comparing what is raised
            results[lib.__name__] = exc
        else:
            results[lib.__name__] = out
    e, t = results["ember"], results["torch"]
    if isinstance(t, Exception):
        assert isinstance(e, Exception), f"torch raised {type(t).__name__}: {t}; ember wrote {e}"
        assert type(e).__name__ == type(t).__name__, (e, t)
        gist = str(t).split("\n")[0][:40]
        assert gist in str(e), f"{gist!r} not in {str(e)!r}"
    else:
        assert not isinstance(e, Exception), f"ember raised {type(e).__name__}: {e}; torch wrote the result"
        for a, b in zip(_pieces(e), _pieces(t)):
            assert str(a.dtype) == str(b.dtype)
            if key.rsplit(".", 1)[-1] in _RANDOM:
                continue
            av, bv = a.numpy().astype(np.float64), b.numpy().astype(np.float64)
            if key.rsplit(".", 1)[-1] in _SIGNED:
                av, bv = np.abs(av), np.abs(bv)
            np.testing.assert_allclose(av, bv, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("key", BUILT)
def test_out_with_an_input_requiring_grad_as_torch(key: str) -> None:
    pair, build = CALLS[key]
    results = {}
    for lib in (ember, torch):
        expected = _plain(pair, lib, build)
        out = _outs_like(lib, expected)
        try:
            _run(pair, lib, build, out, requires_grad=True)
        except Exception as exc:  # noqa: BLE001 - comparing what is raised
            results[lib.__name__] = exc
        else:
            results[lib.__name__] = None
    e, t = results["ember"], results["torch"]
    assert (e is None) == (t is None), f"ember: {e!r}; torch: {t!r}"
    if t is not None:
        assert type(e).__name__ == type(t).__name__ and "don't support automatic differentiation" in str(e)


def test_generated_calls_cover_out() -> None:
    assert len(BUILT) >= 150, len(BUILT)
    assert set(NOT_GENERATED) <= set(HAND_WRITTEN), sorted(set(NOT_GENERATED) - set(HAND_WRITTEN))


@pytest.mark.parametrize("key", sorted(HAND_WRITTEN))
def test_out_hand_written(key: str) -> None:
    call = HAND_WRITTEN[key]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = call(torch, None)
        for lib in (ember, torch):
            out = _outs_like(lib, expected)
            result = call(lib, out)
            if result is not None:
                for r, o in zip(_pieces(result), _pieces(out)):
                    assert r is o
            if lib is ember:
                _compare(out, expected, key)


@pytest.mark.parametrize("name", ["max", "min", "maximum", "add", "mul"])
def test_out_may_be_an_input(name: str) -> None:
    """torch.max(a, b, out=a) writes a (an optimizer's update does this): the caller's tensor holds the result."""
    a0, b0 = np.array([1.0, 5.0, -2.0], np.float32), np.array([3.0, 0.0, -1.0], np.float32)
    results = []
    for lib in (ember, torch):
        a, b = lib.tensor(a0), lib.tensor(b0)
        r = getattr(lib, name)(a, b, out=a)
        assert r is a
        results.append(a)
    assert_close(*results)


@pytest.mark.parametrize("dtypes", [("float64", "float32"), ("float16", "float16"), ("int64", "float32"),
                                    ("float32", "int32"), ("int64",)], ids=str)
def test_linalg_outs_cast_where_torch_can(dtypes) -> None:
    """geqrf and householder_product cast into an out of another dtype where torch's canCast allows it, else
    their own error naming the output."""
    for name in (("geqrf",) if len(dtypes) == 2 else ("orgqr", "linalg.householder_product")):
        def call(lib):
            fn = lib.linalg.householder_product if name.startswith("linalg") else getattr(lib, name)
            args = (_t(lib, (4, 3)),) if name == "geqrf" else tuple(lib.geqrf(_t(lib, (4, 3))))
            out = tuple(lib.empty(0, dtype=getattr(lib, d)) for d in dtypes)
            fn(*args, out=out if name == "geqrf" else out[0])
            return out

        try:
            expected = call(torch)
        except RuntimeError:
            same_error(call)
        else:
            for e, t in zip(call(ember), expected):
                assert str(e.dtype) == str(t.dtype)
                np.testing.assert_allclose(e.numpy().astype(np.float64), t.numpy().astype(np.float64), rtol=2e-3,
                                           atol=2e-3)
