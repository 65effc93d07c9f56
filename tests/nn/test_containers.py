"""Container editing (Sequential/ModuleList), ParameterList/Dict printing and Module extras against torch."""
import copy
import pickle
from collections import OrderedDict

import pytest

from oracle import ember, same_error, torch


def _seq(lib):
    nn = lib.nn
    return nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())


def _outcome(fn, lib):
    """repr of the result, or the exception type and message (library names normalised)."""
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - comparing what is raised
        r = f"{type(e).__name__}: {e}"
    return repr(r).replace("torch.nn.", "nn.").replace("ember.nn.", "nn.")


def _compile(lib):
    out = lib.nn.Linear(2, 2).compile()
    if lib is torch:  # torch.compile's first use turns distribution validation off process-wide (dynamo's
        torch.distributions.Distribution.set_default_validate_args(True)  # TorchPatcher): later tests need it on
    return out


EDITS = {
    "insert0": lambda lib: _seq(lib).insert(0, lib.nn.ELU()),
    "insert-1": lambda lib: _seq(lib).insert(-1, lib.nn.ELU()),
    "insert-3": lambda lib: _seq(lib).insert(-3, lib.nn.ELU()),
    "insert_end": lambda lib: _seq(lib).insert(3, lib.nn.ELU()),
    "insert_out": lambda lib: _seq(lib).insert(4, lib.nn.ELU()),
    "insert_out_neg": lambda lib: _seq(lib).insert(-4, lib.nn.ELU()),
    "insert_not_module": lambda lib: _seq(lib).insert(0, 3),
    "extend": lambda lib: _seq(lib).extend([lib.nn.ELU(), lib.nn.ReLU()]),
    "extend_seq": lambda lib: _seq(lib).extend(_seq(lib)),
    "pop": lambda lib: (lambda s: (s.pop(1), s))(_seq(lib)),
    "pop-1": lambda lib: (lambda s: (s.pop(-1), s))(_seq(lib)),
    "pop_out": lambda lib: _seq(lib).pop(5),
    "append": lambda lib: _seq(lib).append(lib.nn.ELU()),
    "add": lambda lib: _seq(lib) + _seq(lib),
    "add_bad": lambda lib: _seq(lib) + [lib.nn.ReLU()],
    "iadd": lambda lib: (lambda s: s.__iadd__(_seq(lib)))(_seq(lib)),
    "mul": lambda lib: _seq(lib) * 2,
    "rmul": lambda lib: 2 * _seq(lib),
    "imul": lambda lib: (lambda s: s.__imul__(3))(_seq(lib)),
    "mul_zero": lambda lib: _seq(lib) * 0,
    "mul_float": lambda lib: _seq(lib) * 2.0,
    "slice": lambda lib: _seq(lib)[1:],
    "del": lambda lib: (lambda s: (s.__delitem__(0), s))(_seq(lib)),
    "ml_insert": lambda lib: (lambda m: (m.insert(1, lib.nn.ELU()), m))(lib.nn.ModuleList([lib.nn.ReLU()] * 2)),
    "ml_pop": lambda lib: (lambda m: (m.pop(0), m))(lib.nn.ModuleList([lib.nn.ReLU(), lib.nn.Tanh()])),
    "ml_repeat": lambda lib: lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)] + [lib.nn.ReLU()]),
    "register_module": lambda lib: (lambda m: (m.register_module("act", lib.nn.ReLU()), m))(lib.nn.Linear(2, 2)),
    "compile": lambda lib: _compile(lib),
    "to_cpu": lambda lib: lib.nn.Linear(2, 2).to("cpu"),
    "to_device_dtype": lambda lib: lib.nn.Linear(2, 2).to(lib.device("cpu"), lib.float64).weight.dtype,
    "to_int": lambda lib: lib.nn.Linear(2, 2).to(lib.int32),
    "to_empty": lambda lib: lib.nn.Linear(2, 3).to_empty(device="cpu").weight.shape,
    "plist": lambda lib: lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(3, dtype=lib.float64),
                                               lib.zeros(())]),
    "plist_empty": lambda lib: lib.nn.ParameterList(),
    "pdict": lambda lib: lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.ones(2)), "b": lib.zeros(1, 4)}),
    "pdict_empty": lambda lib: lib.nn.ParameterDict(),
    "plist_in_model": lambda lib: lib.nn.Sequential(lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2))])),
    # ParameterDict's dict methods and torch's update order: a plain dict in sorted key order, an OrderedDict or a
    # ParameterDict in its own, pairs in theirs
    "pdict_sorted": lambda lib: _pd(lib, {"b": 1, "a": 2}),
    "pdict_ordered": lambda lib: _pd(lib, OrderedDict([("b", 1), ("a", 2)])),
    "pdict_pairs": lambda lib: _pd(lib, [("b", 1), ("a", 3)]),
    "pdict_or": lambda lib: list((_pd(lib, {"b": 1}) | _pd(lib, {"a": 2})).keys()),
    "pdict_ior": lambda lib: (lambda d: (d.__ior__(_pd(lib, {"c": 1})) is d, list(d.keys())))(_pd(lib, {"d": 2})),
    "pdict_setdefault": lambda lib: (lambda d: (d.setdefault("x", lib.ones(4)).shape, d.setdefault("x", None).shape,
                                                list(d.keys())))(_pd(lib, {})),
    "pdict_popitem": lambda lib: (lambda d: (d.popitem()[0], list(d.keys())))(_pd(lib, [("b", 1), ("a", 2)])),
    "pdict_clear": lambda lib: (lambda d: (d.clear(), len(d), list(d.parameters())))(_pd(lib, {"b": 1, "a": 2})),
    "pdict_fromkeys": lambda lib: _pd(lib, {}).fromkeys(["q", "r"], None),
    "pdict_reversed": lambda lib: list(reversed(_pd(lib, [("b", 1), ("a", 2)]))),
    "pdict_copy": lambda lib: (lambda d: (d.copy() is d, d.copy()))(_pd(lib, [("b", 1), ("a", 2)])),
    "pdict_not_iterable": lambda lib: lib.nn.ParameterDict(3),
    "pdict_bad_element": lambda lib: lib.nn.ParameterDict([3]),
    "pdict_bad_pair": lambda lib: lib.nn.ParameterDict([(1, 2, 3)]),
    "pdict_int_key": lambda lib: lib.nn.ParameterDict({1: lib.ones(1)}),
    "pdict_call": lambda lib: lib.nn.ParameterDict()(1),
    "pdict_partial_update": lambda lib: (lambda d: (_try(lambda: d.update([("x", lib.ones(1)), (1,)])),
                                                    list(d.keys())))(_pd(lib, {})),
    "mdict_update_mdict": lambda lib: (lambda m: (m.update(lib.nn.ModuleDict({"c": lib.nn.ReLU()})), m))(
        lib.nn.ModuleDict({"b": lib.nn.ReLU(), "a": lib.nn.Tanh()})),
    "mdict_not_iterable": lambda lib: lib.nn.ModuleDict(3),
    "mdict_bad_element": lambda lib: lib.nn.ModuleDict([3]),
}


def _pd(lib, entries):
    """A ParameterDict of ones of the given sizes."""
    if isinstance(entries, dict):
        return lib.nn.ParameterDict(type(entries)((k, lib.ones(n)) for k, n in entries.items()))
    return lib.nn.ParameterDict([(k, lib.ones(n)) for k, n in entries])


def _try(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - comparing what is raised
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("name", EDITS)
def test_container_edits_match_torch(name):
    assert _outcome(EDITS[name], ember) == _outcome(EDITS[name], torch)


def test_named_modules_memo_prefix_and_duplicates():
    def names(lib, **kw):
        a = lib.nn.ReLU()
        s = lib.nn.Sequential(a, lib.nn.Sequential(a, lib.nn.Tanh()))
        return [n for n, _ in s.named_modules(**kw)]

    for kw in ({}, {"remove_duplicate": False}, {"prefix": "p"}, {"memo": set()}):
        assert names(ember, **kw) == names(torch, **kw)


def test_set_submodule_matches_torch():
    def run(lib, target, strict=False, module=None):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.ReLU()))
        m.set_submodule(target, lib.nn.Tanh() if module is None else module, strict=strict)
        return repr(m)

    for target in ("0", "1.0", "1.new"):
        assert run(ember, target) == run(torch, target)
    for args in (("",), ("1.new", True), ("0.weight",), ("2.0",), ("0", False, 3)):
        same_error(lambda lib: run(lib, *args))


def test_pickle_and_deepcopy_keep_state_and_printed_form():
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        for m2 in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
            assert repr(m2) == repr(m) and list(m2.state_dict()) == list(m.state_dict())
            assert m2[1].num_batches_tracked.dtype == lib.int64


def test_setstate_restores_missing_registries_like_torch():
    for lib in (ember, torch):
        m = lib.nn.Linear(2, 2)
        state = m.__getstate__()
        for k in ("_forward_pre_hooks", "_state_dict_hooks", "_non_persistent_buffers_set", "_backward_pre_hooks"):
            state.pop(k)
        m2 = lib.nn.Linear.__new__(lib.nn.Linear)
        m2.__setstate__(state)
        calls = []
        m2.register_forward_pre_hook(lambda *a: calls.append(1))
        m2(lib.ones(1, 2))
        assert calls == [1] and list(m2.state_dict()) == ["weight", "bias"]


def test_state_dict_pre_hook_and_load_post_hook_match_torch():
    def run(lib):
        log = []
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        h = m[1].register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("pre", prefix, keep)))
        m.state_dict(keep_vars=True)
        h.remove()
        m.state_dict()

        def drop_missing(mod, keys):
            log.append(("post", type(mod).__name__, sorted(keys.missing_keys), sorted(keys.unexpected_keys)))
            keys.missing_keys.clear()

        m.register_load_state_dict_post_hook(drop_missing)
        m[0].register_load_state_dict_post_hook(lambda mod, keys: log.append(("child", sorted(keys.missing_keys))))
        sd = {k: v for k, v in m.state_dict().items() if not k.startswith("1.")}
        log.append(repr(m.load_state_dict(sd)))  # the hook forgave the missing keys, so strict loading passes
        return log

    assert run(ember) == run(torch)
    same_error(lambda lib: (lambda m: (m.register_load_state_dict_post_hook(lambda mod, keys: 1),
                                       m.load_state_dict(m.state_dict())))(lib.nn.Linear(2, 2)))


@pytest.mark.parametrize("versioned", [True, False])
def test_batchnorm_checkpoint_without_num_batches_tracked(versioned):
    def run(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        m[1].num_batches_tracked.fill_(3)
        sd = m.state_dict()
        del sd["1.num_batches_tracked"]
        if not versioned:
            sd = dict(sd)  # no _metadata: treated as an old checkpoint, the buffer keeps its value
        keys = m.load_state_dict(sd, strict=False)
        return repr(keys), m[1].num_batches_tracked.item()

    assert run(ember) == run(torch)
