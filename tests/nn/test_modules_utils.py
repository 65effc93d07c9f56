"""torch.nn.modules.utils against torch: the tuple helpers third-party layers import, and the state-dict prefix
stripper DDP checkpoints need."""
from collections import OrderedDict

import pytest

from oracle import ember, same_outcome, torch

import ember.nn.modules.utils as E
import torch.nn.modules.utils as T

ARGS = [3, 2.5, (1, 2), [4, 5, 6], range(3), "ab", (), None]


@pytest.mark.parametrize("name", ["_single", "_pair", "_triple", "_quadruple"])
@pytest.mark.parametrize("x", ARGS, ids=repr)
def test_ntuple_helpers(name, x):
    assert getattr(E, name)(x) == getattr(T, name)(x)
    assert getattr(E, name).__name__ == getattr(T, name).__name__ == name


@pytest.mark.parametrize("n", [0, 1, 5])
def test_ntuple_factory(n):
    assert E._ntuple(n)(7) == T._ntuple(n)(7) and E._ntuple(n, "f").__name__ == T._ntuple(n, "f").__name__


@pytest.mark.parametrize("t,n", [((1, 2), 2), ((1, 2, 3), 1), ((), 3), ((4,), 0)])
def test_reverse_repeat_tuple(t, n):
    assert E._reverse_repeat_tuple(t, n) == T._reverse_repeat_tuple(t, n)


@pytest.mark.parametrize("out_size,defaults", [([None, 4], [1, 2, 3]), ([5, None], [7, 8, 9]), (6, [1, 2]),
                                               ([None, None], [1, 2]), ([1, 2, 3], [1, 2])])
def test_list_with_default(out_size, defaults):
    same_outcome(lambda lib: lib.nn.modules.utils._list_with_default(out_size, defaults))


def _ddp_state(lib):
    sd = OrderedDict((k, lib.ones(2)) for k in ("module.a.weight", "module.b", "other.c", "modulex"))
    sd._metadata = OrderedDict((k, {"version": 1}) for k in ("", "module", "module.a", "other", "modulex"))
    return sd


@pytest.mark.parametrize("prefix", ["module.", "other.", "module", "absent."])
def test_consume_prefix_in_state_dict_if_present(prefix):
    got, want = _ddp_state(ember), _ddp_state(torch)
    E.consume_prefix_in_state_dict_if_present(got, prefix)
    T.consume_prefix_in_state_dict_if_present(want, prefix)
    assert list(got) == list(want)
    assert list(got._metadata) == list(want._metadata)


def test_consume_prefix_without_metadata():
    got, want = {"module.x": 1, "y": 2}, {"module.x": 1, "y": 2}
    E.consume_prefix_in_state_dict_if_present(got, "module.")
    T.consume_prefix_in_state_dict_if_present(want, "module.")
    assert got == want


def test_public_names_match():
    assert E.__all__ == T.__all__
