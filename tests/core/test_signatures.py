"""Every function and Tensor method ember shares with torch 2.13 takes torch's arguments (generated from
signature_db): parameter names, positional/keyword-only markers, defaults, NumPy's names where torch's argument
parser takes them, the *size/varargs forms; and the torch facts signature_db relies on."""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import signature_db as S
from oracle import assert_close, ember, torch

PAIRS = {p.key: p for p in S.pairs()}

# Deliberate differences, each with its reason; an entry names the problems it allows (substrings of what
# ``signature_db.problems`` reports), so any other difference of the same name still fails.
ALLOWED = {
    # named tensors are not implemented: no ``names`` parameter anywhere
    "torch.full": ("got an unexpected keyword argument 'names'",),
    # names of torch's number-operand overloads, which exist for the C++ dispatcher (isin(element=3, ...)):
    # ember's one function takes a number in the tensor's place
    "torch.isin": ("missing a required argument: 'elements'", "missing a required argument: 'test_elements'"),
    "torch.result_type": ("(scalar, tensor)", "(scalar1, scalar2)"),
    # overload-resolving parsers written by hand (Tensor.to / type / the legacy Tensor.new constructor): their
    # positional forms and errors are compared with torch in test_tensor.py / test_api_surface.py
    "Tensor.to": ("ember takes **kwargs", "ember takes *args"),
    "Tensor.type": ("ember takes **kwargs",),
    "Tensor.new": ("ember takes **kwargs", "'other' as 'x2'"),
    # the size-only overloads (an empty sparse tensor of a size) are not implemented; sparse is helper surf's area
    "torch.sparse_coo_tensor": ("(size, *", "(*size, *"),
    # torch names the first bound ``from`` (a Python keyword): only **kwargs can take it
    "Tensor.random_": ("ember takes **kwargs", "ember takes *args"),
    "Tensor.uniform_": ("ember takes **kwargs",),
    # ember's documented extensions: the debugger at an anomaly (docs/debugging.md), hub repositories in local
    # directories for list/help as for load
    "torch.autograd.detect_anomaly": ("ember has 'pdb'", "ember takes ['pdb'] positionally"),
    "torch.hub.list": ("ember has 'source'",),
    "torch.hub.help": ("ember has 'source'",),
}
# Tensor attributes torch has no signature source for (no parser list, stub or Python signature)
UNDESCRIBED = {"Tensor.const_data_ptr", "Tensor.cfloat", "Tensor.cdouble", "Tensor.ipu", "Tensor.mtia"}


def _problems(key: str) -> list:
    pair = PAIRS[key]
    theirs, mine = S.torch_sig(pair), S.ember_params(pair)
    assert theirs is not None and mine is not None, key
    return S.problems(mine, theirs)


def _unexplained(key: str) -> list:
    allowed = ALLOWED.get(key, ())
    return [p for p in _problems(key) if not any(a in p for a in allowed)]


COMPARED = sorted(k for k in PAIRS if k not in UNDESCRIBED)


@pytest.mark.parametrize("key", COMPARED)
def test_signature_matches_torch(key: str) -> None:
    assert _unexplained(key) == []


def test_every_allowance_is_still_needed_and_the_list_is_small() -> None:
    for key, allowed in ALLOWED.items():
        found = _problems(key)
        for a in allowed:
            assert any(a in p for p in found), f"{key}: {a!r} no longer differs; remove it from ALLOWED"
    assert len(ALLOWED) <= 12


def test_what_is_compared() -> None:
    """The enumeration covers the namespaces (a regression guard: names are compared, none silently dropped)."""
    counts = {}
    for key in COMPARED:
        counts[key.rsplit(".", 1)[0]] = counts.get(key.rsplit(".", 1)[0], 0) + 1
    assert counts["torch"] >= 550 and counts["Tensor"] >= 490
    assert counts["torch.nn.functional"] >= 100 and counts["torch.linalg"] >= 15 and counts["torch.special"] >= 50
    assert counts["torch.nn"] >= 140 and counts["torch.optim"] >= 10 and counts["torch.autograd"] >= 8
    assert counts["torch.distributions"] >= 60 and counts["torch.utils.data"] >= 12
    for key in UNDESCRIBED:
        pair = PAIRS[key]
        assert S.torch_sig(pair) is None, f"{key} is described now: compare it"


# ----------------------------------------------------------------------------- the facts signature_db relies on
def test_numpy_names_are_torch_parser_aliases() -> None:
    """The four NumPy names torch's parser takes, and that it takes no others."""
    t = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(torch.sum(t, axis=1, keepdims=True), torch.sum(t, dim=1, keepdim=True))
    for alias in S.NUMPY_ALIASES["input"]:
        assert torch.equal(torch.exp(**{alias: t}), torch.exp(t))
    assert torch.equal(torch.add(t, x2=t), t + t)
    with pytest.raises(TypeError):
        torch.sum(t, dims=0)
    with pytest.raises(TypeError):
        torch.nn.functional.softmax(t, axis=0)  # a Python function: no aliases


def test_lone_int_list_takes_separate_values_only_alone() -> None:
    """python_arg_parser.cpp: a lone positional int list (view, permute, Tensor.flip) also takes its values as
    separate arguments; next to other positional parameters (torch.flip(input, dims)) it does not."""
    t = torch.zeros(2, 3)
    assert t.permute(1, 0).shape == (3, 2) and t.flip(0, 1).shape == (2, 3)
    with pytest.raises(TypeError):
        torch.flip(t, 0, 1)
    with pytest.raises(TypeError):
        t.sum(0, 1)


def test_stub_fixes_are_what_torch_does() -> None:
    t = torch.zeros(2)
    t.requires_grad_(requires_grad=True)
    with pytest.raises(TypeError):
        torch.zeros(2).requires_grad_(mode=True)


def test_methods_take_no_out_like_torch() -> None:
    for lib in (ember, torch):
        t = lib.ones(2)
        with pytest.raises(TypeError):
            t.add(t, out=t)
        with pytest.raises(TypeError):
            t.max(0, out=t)


# ----------------------------------------------------------------------------- behaviour of what is declared
ALIAS_CALLS = [
    ("sum", lambda lib, t: lib.sum(t, axis=1, keepdims=True)),
    ("argmax", lambda lib, t: lib.argmax(t, axis=1)),
    ("max dim", lambda lib, t: lib.max(t, axis=1).values),
    ("Tensor.max", lambda lib, t: t.max(axis=0, keepdims=True).indices),
    ("Tensor.sum", lambda lib, t: t.sum(axis=(0, 1))),
    ("mean", lambda lib, t: lib.mean(x=t, axis=0)),
    ("add", lambda lib, t: lib.add(x=t, x2=t * 2, alpha=3)),
    ("exp a", lambda lib, t: lib.exp(a=t)),
    ("cat", lambda lib, t: lib.cat([t, t], axis=1)),
    ("Tensor.size", lambda lib, t: lib.tensor(t.size(axis=1))),
    ("Tensor.equal", lambda lib, t: lib.tensor(t.equal(x2=t))),
    ("softmax", lambda lib, t: lib.softmax(t, axis=1)),
    ("linalg.vector_norm", lambda lib, t: lib.linalg.vector_norm(x=t, axis=1)),
    ("special.erf", lambda lib, t: lib.special.erf(x=t)),
    ("nn.functional.gelu", lambda lib, t: lib.nn.functional.gelu(x=t, approximate="tanh")),
    ("abs_", lambda lib, t: lib.abs_(x=t.clone())),
    ("squeeze method", lambda lib, t: t[None].squeeze(axis=0)),
    ("new_zeros size=", lambda lib, t: t.new_zeros(size=(2, 3))),
    ("split split_size=", lambda lib, t: t.split(split_size=1)[1]),
    ("zeros size=", lambda lib, t: lib.zeros(size=(2, 2), dtype=lib.float64)),
    ("view size=", lambda lib, t: t.view(size=(3, 2))),
    ("flip dims=", lambda lib, t: lib.flip(t, dims=(0,))),
    ("Tensor.flip values", lambda lib, t: t.flip(0, 1)),
    ("matmul out=", lambda lib, t: lib.matmul(t, t.T, out=lib.empty(0))),
    ("eye out=", lambda lib, t: lib.eye(3, out=lib.empty(0, dtype=lib.int64))),
]


@pytest.mark.parametrize("name,fn", ALIAS_CALLS, ids=[n for n, _ in ALIAS_CALLS])
def test_keywords_behave_as_torch(name, fn) -> None:
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 7
    assert_close(fn(ember, ember.tensor(a)), fn(torch, torch.tensor(a)))


def test_numpy_name_given_twice_is_an_error() -> None:
    t = ember.ones(2, 3)
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        ember.sum(t, dim=0, axis=1)


def test_methods_carry_their_functions_signatures() -> None:
    sig = inspect.signature(ember.Tensor.sum)
    assert list(sig.parameters)[:3] == ["self", "dim", "keepdim"] and "axis" in sig.parameters
    assert "out" not in inspect.signature(ember.Tensor.add_).parameters
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.ones(2).add_(ember.ones(2), alpha=2)
