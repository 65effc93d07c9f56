"""nn.utils fusion / skip_init / memory-format conversion, nn.parallel's multi-GPU helpers on a CPU machine, the
global module registration hooks and torch.nn.functional's small helpers, against torch."""
from __future__ import annotations

import collections
import copy
import warnings

import numpy as np
import pytest

from tests.oracle import assert_close, ember, same_error, torch


# ---------------------------------------------------------------------------------------------- fusion
def _trained_bn(lib, bn, rng_seed):
    rng = np.random.default_rng(rng_seed)
    with lib.no_grad():
        bn.running_mean.copy_(lib.tensor(rng.standard_normal(bn.num_features).astype(np.float32)))
        bn.running_var.copy_(lib.tensor(rng.random(bn.num_features).astype(np.float32) + 0.5))
        if bn.weight is not None:
            bn.weight.copy_(lib.tensor(rng.standard_normal(bn.num_features).astype(np.float32)))
            bn.bias.copy_(lib.tensor(rng.standard_normal(bn.num_features).astype(np.float32)))
    return bn.eval()


def _same_params(lib, m, src):
    with lib.no_grad():
        for p, q in zip(m.parameters(), src):
            p.copy_(lib.tensor(q))
    return m


CONV_BN = [("Conv2d", (3, 4, 3), {"bias": True}, "BatchNorm2d", (1, 3, 6, 6), False),
           ("Conv2d", (3, 4, 3), {"bias": False, "groups": 1}, "BatchNorm2d", (2, 3, 5, 5), False),
           ("Conv1d", (2, 5, 2), {}, "BatchNorm1d", (2, 2, 7), False),
           ("Conv3d", (2, 3, 2), {}, "BatchNorm3d", (1, 2, 4, 4, 4), False),
           ("ConvTranspose2d", (3, 4, 3), {"stride": 2}, "BatchNorm2d", (1, 3, 4, 4), True)]


@pytest.mark.parametrize("case", range(len(CONV_BN)))
@pytest.mark.parametrize("affine", [True, False])
def test_fuse_conv_bn_eval(case, affine):
    conv_name, args, kw, bn_name, xshape, transpose = CONV_BN[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal(xshape).astype(np.float32)
    torch.manual_seed(case)
    params = [p.detach().numpy().copy() for p in getattr(torch.nn, conv_name)(*args, **kw).parameters()]
    out = []
    for lib in (ember, torch):
        conv = _same_params(lib, getattr(lib.nn, conv_name)(*args, **kw), params).eval()
        bn = _trained_bn(lib, getattr(lib.nn, bn_name)(args[1], affine=affine), case)
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        assert fused is not conv and type(fused) is type(conv)
        out.append((fused(lib.tensor(x)), bn(conv(lib.tensor(x))), fused.weight, fused.bias,
                    type(fused.weight).__name__, fused.weight.requires_grad))
    for a, b in zip(out[0][:4], out[1][:4]):
        assert_close(a, b, rtol=1e-4, atol=1e-5)
    assert_close(out[0][0], out[0][1], rtol=1e-4, atol=1e-5)  # the fusion is exact
    assert out[0][4:] == out[1][4:] == ("Parameter", True)


@pytest.mark.parametrize("num_features", [3, 1])
def test_fuse_linear_bn_eval(num_features):
    rng = np.random.default_rng(num_features)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    torch.manual_seed(1)
    params = [p.detach().numpy().copy() for p in torch.nn.Linear(5, 3).parameters()]
    out = []
    for lib in (ember, torch):
        lin = _same_params(lib, lib.nn.Linear(5, 3), params).eval()
        bn = _trained_bn(lib, lib.nn.BatchNorm1d(num_features), 4)
        fused = lib.nn.utils.fuse_linear_bn_eval(lin, bn)
        out.append((fused(lib.tensor(x)), fused.weight, fused.bias))
    for a, b in zip(out[0], out[1]):
        assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_fuse_weights_functions_dtypes_and_grads():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(4, 3, 2, 2), (4,), (4,), (4,), (4,), (4,)]]
    arrays[3] = np.abs(arrays[3]) + 0.1
    got = []
    for lib in (ember, torch):
        w, b, rm, rv, g, beta = (lib.tensor(a, requires_grad=i == 0) for i, a in enumerate(arrays))
        fw, fb = lib.nn.utils.fuse_conv_bn_weights(w.half(), None, rm, rv, 1e-3, g, beta)
        lw, lb = lib.nn.utils.fuse_linear_bn_weights(w[:, :, 0, 0], b, rm, rv, 1e-5, g, beta)
        tw, tb = lib.nn.utils.fuse_conv_bn_weights(w.transpose(0, 1), b, rm, rv, 1e-5, None, None, transpose=True)
        got.append([fw, fb, lw, lb, tw, tb, [x.requires_grad for x in (fw, fb, lw, lb)]])
    for a, b in zip(got[0][:6], got[1][:6]):
        assert_close(a, b, rtol=2e-3, atol=2e-3)
    assert got[0][6] == got[1][6]


FUSION_ERRORS = {
    "training conv": lambda lib: lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(2, 2, 1), lib.nn.BatchNorm2d(2).eval()),
    "training bn": lambda lib: lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(2, 2, 1).eval(), lib.nn.BatchNorm2d(2)),
    "no running stats": lambda lib: lib.nn.utils.fuse_conv_bn_eval(
        lib.nn.Conv2d(2, 2, 1).eval(), lib.nn.BatchNorm2d(2, track_running_stats=False).eval()),
    "linear features": lambda lib: lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 3).eval(),
                                                                     lib.nn.BatchNorm1d(2).eval()),
    "linear training": lambda lib: lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2)),
}


@pytest.mark.parametrize("fn", list(FUSION_ERRORS.values()), ids=list(FUSION_ERRORS))
def test_fusion_errors(fn):
    same_error(fn)


# ---------------------------------------------------------------------------------------------- skip_init
@pytest.mark.parametrize("cls,args,kw", [("Linear", (5, 3), {}), ("Conv2d", (2, 4, 3), {"bias": False}),
                                         ("BatchNorm1d", (3,), {}), ("Linear", (), {"in_features": 2,
                                                                                     "out_features": 1,
                                                                                     "dtype": "float64"})])
def test_skip_init_builds_the_module(cls, args, kw):
    shapes = []
    for lib in (ember, torch):
        kw2 = {k: getattr(lib, v) if k == "dtype" else v for k, v in kw.items()}
        m = lib.nn.utils.skip_init(getattr(lib.nn, cls), *args, **kw2)
        shapes.append(([(n, tuple(p.shape), str(p.dtype), p.requires_grad, type(p).__name__, str(p.device))
                        for n, p in m.named_parameters()],
                       [(n, tuple(b.shape), str(b.dtype)) for n, b in m.named_buffers()], repr(m)))
    assert shapes[0] == shapes[1]


def test_skip_init_errors():
    same_error(lambda lib: lib.nn.utils.skip_init(int))
    same_error(lambda lib: lib.nn.utils.skip_init(type("NoDevice", (lib.nn.Module,), {})))


# ---------------------------------------------------------------------------------------------- memory format
@pytest.mark.parametrize("which", ["2d", "3d"])
def test_convert_conv_weight_memory_format(which):
    got = []
    for lib in (ember, torch):
        lib.manual_seed(0)
        if which == "2d":
            net = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 2), lib.nn.Sequential(lib.nn.ConvTranspose2d(3, 2, 2)),
                                    lib.nn.Conv1d(2, 2, 1))
            fmt = lib.channels_last
            out = lib.nn.utils.convert_conv2d_weight_memory_format(net, fmt)
        else:
            net = lib.nn.Sequential(lib.nn.Conv3d(2, 3, 2), lib.nn.Linear(2, 2))
            fmt = lib.channels_last_3d
            out = lib.nn.utils.convert_conv3d_weight_memory_format(net, fmt)
        assert out is net
        first = net[0].weight
        got.append((type(first).__name__, first.requires_grad, first.is_contiguous(memory_format=fmt),
                    [p.detach().numpy().copy() for p in net.parameters()]))
    assert got[0][:3] == got[1][:3]
    assert len(got[0][3]) == len(got[1][3])


# ---------------------------------------------------------------------------------------------- nn.parallel
class _NT(collections.namedtuple("_NT", "a b")):
    pass


PARALLEL = {
    "scatter tuple": lambda lib, P: P.scatter((1, "a"), [0, 1]),
    "scatter dict": lambda lib, P: P.scatter({"a": 1}, [0, 1]),
    "scatter empty": lambda lib, P: P.scatter([], [0, 1]),
    "scatter namedtuple": lambda lib, P: P.scatter(_NT(1, 2), [0, 1]),
    "scatter nested": lambda lib, P: P.scatter([1, [2]], [0, 1]),
    "scatter_kwargs": lambda lib, P: P.scatter_gather.scatter_kwargs((1,), {"k": 2}, [0, 1]),
    "scatter_kwargs only kwargs": lambda lib, P: P.scatter_gather.scatter_kwargs((), {"k": 2}, [0, 1]),
    "gather dict of None": lambda lib, P: P.gather([{"a": None}, {"a": None}], 0),
    "gather tuples": lambda lib, P: P.gather([(None, None), (None, None)], 0),
    "replicate relu": lambda lib, P: [repr(m) for m in P.replicate(lib.nn.ReLU(), [0, 1])],
    "replicate nested": lambda lib, P: [repr(m) for m in P.replicate(
        lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Sequential(lib.nn.Tanh())), ["cuda:0", 1, "cuda"])],
    "replicate none": lambda lib, P: P.replicate(lib.nn.ReLU(), []),
}

PARALLEL_ERRORS = {
    "gather ints": lambda lib, P: P.gather([(1, 2), (3, 4)], 0),
    "replicate buffers": lambda lib, P: P.replicate(lib.nn.BatchNorm1d(3, affine=False), [0]),
    "replicate parameters": lambda lib, P: P.replicate(lib.nn.Linear(2, 2), [0]),
    "replicate detached": lambda lib, P: P.replicate(lib.nn.Linear(2, 2), [0], True),
    "replicate to cpu": lambda lib, P: P.replicate(lib.nn.ReLU(), ["cpu"]),
    "parallel_apply lengths": lambda lib, P: P.parallel_apply([lib.nn.ReLU()], [1, 2]),
    "parallel_apply kwargs": lambda lib, P: P.parallel_apply([lib.nn.ReLU()], [1], [{}, {}]),
    "parallel_apply devices": lambda lib, P: P.parallel_apply([lib.nn.ReLU()], [1], None, [0, 1]),
    "parallel_apply gpu": lambda lib, P: P.parallel_apply([lib.nn.ReLU()], [1], None, [0]),
    "parallel_apply cpu": lambda lib, P: P.parallel_apply([lib.nn.ReLU()], [1], None, ["cpu"]),
    "parallel_apply default": lambda lib, P: P.parallel_apply([lib.nn.ReLU(), lib.nn.ReLU()], [1, 2]),
    "gather dict keys": lambda lib, P: P.gather([{"a": 1}, {}], 0),
    "gather tensors": lambda lib, P: P.gather([lib.ones(2), lib.ones(2)], 0),
    "gather to cpu": lambda lib, P: P.gather([lib.ones(2)], "cpu"),
    "scatter tensor": lambda lib, P: P.scatter(lib.ones(2), [0, 1]),
    "scatter to cuda:0": lambda lib, P: P.scatter(lib.ones(2), ["cuda:0"]),
    "scatter to cpu": lambda lib, P: P.scatter(lib.ones(2), ["cpu"]),
    "scatter nested tensor": lambda lib, P: P.scatter([1, lib.ones(2)], [0]),
    "comm.broadcast": lambda lib, P: P.comm.broadcast(lib.ones(2), [0]),
    "comm.broadcast neither": lambda lib, P: P.comm.broadcast(lib.ones(2)),
    "comm.broadcast both": lambda lib, P: P.comm.broadcast(lib.ones(2), [0], out=[lib.ones(2)]),
    "comm.broadcast out": lambda lib, P: P.comm.broadcast(lib.ones(2), out=[lib.ones(2)]),
    "comm.broadcast cpu": lambda lib, P: P.comm.broadcast(lib.ones(2), ["cpu"]),
    "comm.broadcast unindexed": lambda lib, P: P.comm.broadcast(lib.ones(2), ["cuda"]),
    "comm.broadcast_coalesced": lambda lib, P: P.comm.broadcast_coalesced([lib.ones(2)], [0]),
    "comm.reduce_add": lambda lib, P: P.comm.reduce_add([lib.ones(2), lib.ones(2)]),
    "comm.reduce_add to cpu": lambda lib, P: P.comm.reduce_add([lib.ones(2)], "cpu"),
    "comm.reduce_add_coalesced": lambda lib, P: P.comm.reduce_add_coalesced([[lib.ones(2)], [lib.ones(2)]]),
    "comm.scatter": lambda lib, P: P.comm.scatter(lib.ones(2), [0]),
    "comm.scatter out+devices": lambda lib, P: P.comm.scatter(lib.ones(2), [0], out=[lib.ones(2)]),
    "comm.scatter out+chunks": lambda lib, P: P.comm.scatter(lib.ones(2), None, [1], out=[lib.ones(2)]),
    "comm.scatter out": lambda lib, P: P.comm.scatter(lib.ones(2), out=[lib.ones(2)]),
    "comm.gather": lambda lib, P: P.comm.gather([lib.ones(2)]),
    "comm.gather cpu": lambda lib, P: P.comm.gather([lib.ones(2)], destination="cpu"),
    "comm.gather out+destination": lambda lib, P: P.comm.gather([lib.ones(2)], out=lib.ones(2), destination=0),
    "comm.gather out": lambda lib, P: P.comm.gather([lib.ones(2)], out=lib.ones(2)),
}


@pytest.mark.parametrize("fn", list(PARALLEL.values()), ids=list(PARALLEL))
def test_parallel_helpers_without_tensors(fn):
    import torch.nn.parallel.scatter_gather  # noqa: F401 - the submodule as an attribute, on both sides
    import ember.nn.parallel.scatter_gather  # noqa: F401

    assert fn(ember, ember.nn.parallel) == fn(torch, torch.nn.parallel)


@pytest.mark.parametrize("fn", list(PARALLEL_ERRORS.values()), ids=list(PARALLEL_ERRORS))
def test_parallel_helpers_need_a_gpu(fn):
    import torch.nn.parallel.comm  # noqa: F401
    import ember.nn.parallel.comm  # noqa: F401

    same_error(lambda lib: fn(lib, lib.nn.parallel))


def test_comm_gather_minus_one_warns_and_empty_coalesced():
    for lib in (ember, torch):
        comm = __import__(lib.__name__ + ".nn.parallel.comm", fromlist=["x"])
        with pytest.warns(FutureWarning, match="Using -1 to represent CPU tensor is deprecated"):
            with pytest.raises(AttributeError):
                comm.gather([lib.ones(2)], destination=-1)
        assert comm.reduce_add_coalesced([[], []]) == ()


def test_get_a_var_and_is_namedtuple():
    for lib in (ember, torch):
        P = __import__(lib.__name__ + ".nn.parallel.parallel_apply", fromlist=["x"])
        t = lib.ones(1)
        assert P.get_a_var([1, {"k": (2, t)}]) is t and P.get_a_var([1, "x"]) is None
        SG = __import__(lib.__name__ + ".nn.parallel.scatter_gather", fromlist=["x"])
        with pytest.warns(FutureWarning, match="is_namedtuple"):
            assert SG.is_namedtuple(_NT(1, 2)) and not SG.is_namedtuple((1, 2))


# ---------------------------------------------------------------------------------------------- registration hooks
def test_global_registration_hooks():
    logs = []
    for lib in (ember, torch):
        M = lib.nn.modules.module
        log, made = [], []

        def on_param(module, name, p):
            log.append(("param", type(module).__name__, name, tuple(p.shape)))
            if name == "bias":  # a replacement is what gets registered
                made.append(lib.nn.Parameter(p.detach().clone()))
                return made[-1]
            return None

        def on_buffer(module, name, b):
            log.append(("buffer", type(module).__name__, name, None if b is None else tuple(b.shape)))

        def on_module(module, name, sub):
            log.append(("module", type(module).__name__, name, type(sub).__name__))

        handles = [M.register_module_parameter_registration_hook(on_param),
                   M.register_module_buffer_registration_hook(on_buffer),
                   M.register_module_module_registration_hook(on_module)]
        try:
            net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
            net.extra = lib.nn.ReLU()
            net.add_module("more", lib.nn.Tanh())
            net.extra = None
            net[0].register_buffer("buf", lib.zeros(1))
            replaced = net[0].bias is made[0] and net[1].bias is made[1]
        finally:
            for h in handles:
                h.remove()
        lib.nn.Linear(1, 1)  # removed: no more entries
        logs.append((log, replaced))
    assert logs[0] == logs[1]
    assert logs[0][1] is True


def test_deprecated_global_backward_hook_runs():
    seen = []
    for lib in (ember, torch):
        h = lib.nn.modules.module.register_module_backward_hook(lambda m, gi, go: seen.append(type(m).__name__))
        try:
            lin = lib.nn.Linear(2, 2)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lin(lib.ones(1, 2, requires_grad=True)).sum().backward()
        finally:
            h.remove()
    assert seen == ["Linear", "Linear"]


# ---------------------------------------------------------------------------------------------- functional helpers
def test_functional_small_helpers():
    for lib in (ember, torch):
        F = lib.nn.functional
        assert F.TYPE_CHECKING is False
        assert F.BroadcastingList2[int] is None and F.BroadcastingList1[float] is None
        F.assert_int_or_pair(3, "k", "{} bad")
        F.assert_int_or_pair((1, 2), "k", "{} bad")
        with pytest.raises(AssertionError, match="k bad"):
            F.assert_int_or_pair((1, 2, 3), "k", "{} bad")

        def yes(x, flag=False):
            """doc"""
            return "yes"

        def no(x, flag=False):
            return "no"
        f = F.boolean_dispatch("flag", 1, False, yes, no, "mod", "picked")
        assert (f(1), f(1, True), f(1, flag=True), f.__name__, f.__module__, f.__doc__, no.__doc__) == \
            ("no", "yes", "yes", "picked", "mod", "doc", "doc")
        with pytest.raises(RuntimeError, match="only one function can have a docstring"):
            F.boolean_dispatch("flag", 1, False, yes, no, None, None)


@pytest.mark.parametrize("name,kw", [("celu_", {"alpha": 0.5}), ("selu_", {})])
def test_functional_inplace_celu_selu(name, kw):
    x = np.linspace(-3, 2, 7).astype(np.float32)
    out = []
    for lib in (ember, torch):
        t = lib.tensor(x)
        r = getattr(lib.nn.functional, name)(t, **kw)
        assert r is t
        out.append(r)
    assert_close(*out)
    assert ember.nn.functional.celu_ is ember.celu_


def test_deepcopy_of_replicable_module():
    m = ember.nn.ReLU()
    r = m._replicate_for_data_parallel()
    assert r._is_replica and r is not m and copy.copy(r)._parameters == {}
