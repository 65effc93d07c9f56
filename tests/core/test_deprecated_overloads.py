"""The deprecated overloads torch still accepts (add(t, 2, u), addcmul_(2, u, v), addmm(b, t, a, m1, m2) ...):
same results as torch and torch's deprecation warning, for every form ember/_args.py declares, and the declared
set matches torch's."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import signature_db as S
from ember import _args
from oracle import assert_close, ember, torch

_RNG = np.random.default_rng(0)
# the tensors of each family: name -> shape
_SHAPES = {
    "add": {"input": (3, 3), "other": (3, 3)}, "sub": {"input": (3, 3), "other": (3, 3)},
    "addcmul": {"input": (3, 3), "tensor1": (3, 3), "tensor2": (3, 3)},
    "addcdiv": {"input": (3, 3), "tensor1": (3, 3), "tensor2": (3, 3)},
    "addmm": {"input": (3, 3), "mat1": (3, 2), "mat2": (2, 3)},
    "addmv": {"input": (3,), "mat": (3, 2), "vec": (2,)},
    "addr": {"input": (3, 2), "vec1": (3,), "vec2": (2,)},
    "addbmm": {"input": (3, 3), "batch1": (2, 3, 4), "batch2": (2, 4, 3)},
    "baddbmm": {"input": (2, 3, 3), "batch1": (2, 3, 4), "batch2": (2, 4, 3)},
}
_ARRAYS = {(f, p): _RNG.uniform(0.5, 1.5, s).astype(np.float32) for f, ps in _SHAPES.items() for p, s in ps.items()}
_NUMBERS = {"alpha": 2.0, "beta": 0.5, "value": 3.0}

FORMS = [(name, method, i) for (name, method), forms in sorted(_args._DEPRECATED_FORMS.items())
         for i in range(len(forms))]


def _family(name: str) -> str:
    return name.rstrip("_")


def _call(lib, name: str, method: bool, order: tuple):
    fam = _family(name)
    values = {p: lib.tensor(_ARRAYS[(fam, p)]) for p in _SHAPES[fam]}
    args = [(_NUMBERS[p] if p in _NUMBERS else values[p]) for p in order]
    if method:
        return getattr(values["input"], name)(*args)
    return getattr(lib, name)(*args)


@pytest.mark.parametrize("name,method,i", FORMS, ids=[f"{'Tensor.' if m else ''}{n}-{i}" for n, m, i in FORMS])
def test_deprecated_overload_as_torch(name: str, method: bool, i: int) -> None:
    order = _args._DEPRECATED_FORMS[(name, method)][i][0]
    caught = {}
    for lib in (ember, torch):
        was = lib.is_warn_always_enabled()
        lib.set_warn_always(True)  # torch warns once per process otherwise (TORCH_WARN_ONCE)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                result = _call(lib, name, method, order)
        finally:
            lib.set_warn_always(was)
        caught[lib.__name__] = (result, [str(x.message) for x in w if "deprecated" in str(x.message)])
    (e, ew), (t, tw) = caught["ember"], caught["torch"]
    assert_close(e, t)
    assert len(tw) == 1 and ew == [tw[0].split(" (Triggered internally")[0]]


def test_deprecated_warning_is_issued_once_per_process() -> None:
    a = ember.ones(2)
    saved = _args._warned[0]
    _args._warned[0] = False
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ember.add(a, 2, a)
            a.clone().sub_(2, a)
        assert len([x for x in w if "deprecated" in str(x.message)]) == 1
    finally:
        _args._warned[0] = saved


def test_the_declared_forms_are_torchs() -> None:
    """Every deprecated overload torch's stubs declare (the overloads naming ``self`` or a leading ``beta`` beside a
    number: deprecated.yaml's) is declared here, for the functions ember has."""
    stub = S._stub("functions")
    theirs = set()
    for name, ovs in stub.items():
        for ov in ovs:
            names = [p.name for p in ov if p.kind == S.POS]
            if names[:1] == ["beta"] or (names[:1] == ["self"] and len(names) > 1 and names[1] in _NUMBERS):
                theirs.add((name, tuple("input" if n == "self" else n for n in names)))
    theirs = {(n, o) for n, o in theirs if hasattr(ember, n)}
    mine = {(n, order) for (n, m), forms in _args._DEPRECATED_FORMS.items() if not m for order, _, _ in forms}
    assert theirs == mine


def test_a_number_where_torch_needs_a_tensor_is_still_an_error() -> None:
    t = ember.ones(2)
    with pytest.raises(TypeError):
        ember.addcmul(t, t, 2, t)  # not the deprecated order (value first): no match
