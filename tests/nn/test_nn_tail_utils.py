"""nn.utils fusion / skip_init / memory-format conversion, nn.parallel's multi-GPU helpers on a CPU machine, the
global module registration hooks and torch.nn.functional's small helpers, against torch."""
from __future__ import annotations

import collections
import copy
import warnings

import numpy as np
import pytest

from oracle import assert_close, ember, same_error, same_outcome, torch


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


def _try(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - comparing what is raised
        return f"{type(e).__name__}: {e}"


def test_deepcopy_of_replicable_module():
    m = ember.nn.ReLU()
    r = m._replicate_for_data_parallel()
    assert r._is_replica and r is not m and copy.copy(r)._parameters == {}


# ---------------------------------------------------------------------------------------------- Module API parity
def test_every_public_attribute_of_torchs_layers_exists():
    missing = {}
    for name in dir(torch.nn):
        cls = getattr(torch.nn, name)
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module):
            ours = getattr(ember.nn, name)
            gone = [a for a in dir(cls) if not a.startswith("_") and not hasattr(ours, a)]
            if gone:
                missing[name] = gone
    assert not missing
    assert ember.nn.Module.dump_patches is torch.nn.Module.dump_patches is False


ACCELERATOR_MOVES = [(kind, make, args) for kind in ("cuda", "xpu", "ipu", "mtia")
                     for make in ("linear", "relu", "tensor", "buffers")
                     for args in ((), (0,), (kind if kind == "ipu" else kind + ":0",))]


@pytest.mark.parametrize("kind,make,args", ACCELERATOR_MOVES)
def test_moving_to_an_accelerator(kind, make, args):
    def run(lib):
        obj = {"linear": lambda: lib.nn.Linear(2, 2), "relu": lambda: lib.nn.ReLU(), "tensor": lambda: lib.ones(2),
               "buffers": lambda: lib.nn.BatchNorm1d(2, affine=False)}[make]()
        out = getattr(obj, kind)(*args)
        return out is obj
    same_outcome(run)


def test_state_dict_post_hook():
    got = []
    for lib in (ember, torch):
        net = lib.nn.Sequential(lib.nn.Linear(2, 2))
        seen = []

        def edit(module, sd, prefix, meta):
            seen.append((type(module).__name__, prefix, sorted(meta)))
            sd[prefix + "extra"] = 1

        h = net[0].register_state_dict_post_hook(edit)
        keys = list(net.state_dict())
        h.remove()
        net.register_state_dict_post_hook(lambda *a: {"replaced": 1})
        err = _try(lambda: net.state_dict())
        net2 = lib.nn.Linear(1, 1)
        net2._register_state_dict_hook(lambda *a: {"replaced": 1})  # the private form may replace it
        got.append((keys, seen, err, dict(net2.state_dict())))
    assert got[0] == got[1]


def _lstm_checks(lib, kind, bf, packed, bad):
    lib.manual_seed(0)
    m = getattr(lib.nn, kind)(3, 4, num_layers=2, bidirectional=True, batch_first=bf,
                              **({"proj_size": 2} if kind == "LSTM" else {}))
    x = lib.ones(5, 6, 3)
    sizes = lib.tensor([6, 4, 2]) if packed else None
    if packed:
        x = lib.ones(12, 3)
    if bad == "input":
        x = x[..., :2]
    if bad == "dtype":
        x = x.double()
    hshape = m.get_expected_hidden_size(x, sizes)
    h = lib.zeros(*hshape) if bad != "hidden" else lib.zeros(1, 1, 1)
    hidden = (h, lib.zeros(*m.get_expected_cell_size(x, sizes))) if kind == "LSTM" else h
    m.check_forward_args(x, hidden, sizes)
    perm = lib.tensor([2, 0, 1, 3, 4])[: hshape[1]] if hshape[1] <= 5 else None
    permuted = m.permute_hidden(hidden, perm if perm is not None and len(perm) == hshape[1] else None)
    flat = permuted if kind != "LSTM" else permuted[0]
    return tuple(hshape), flat.shape == h.shape


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bf,packed", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("bad", [None, "input", "hidden", "dtype"])
def test_recurrent_checking_helpers(kind, bf, packed, bad):
    same_outcome(lambda lib: _lstm_checks(lib, kind, bf, packed, bad))


@pytest.mark.parametrize("attn", [None, "2d", "3d"])
@pytest.mark.parametrize("pad", [False, True])
def test_multihead_attention_merge_masks(attn, pad):
    rng = np.random.default_rng(0)
    am = {"2d": rng.standard_normal((4, 4)), "3d": rng.standard_normal((2 * 2, 4, 4)), None: None}[attn]
    kpm = rng.standard_normal((2, 4)) if pad else None
    out = []
    for lib in (ember, torch):
        m = lib.nn.MultiheadAttention(6, 2, batch_first=True)
        mask, kind = m.merge_masks(None if am is None else lib.tensor(am), None if kpm is None else lib.tensor(kpm),
                                   lib.ones(2, 4, 6))
        out.append((mask, kind))
    assert out[0][1] == out[1][1]
    assert_close(out[0][0], out[1][0])


def test_embedding_fill_padding_idx_and_transformer_reset():
    for lib in (ember, torch):
        e = lib.nn.Embedding(4, 3, padding_idx=2)
        with lib.no_grad():
            e.weight.fill_(1.0)
        e._fill_padding_idx_with_zero()
        assert e.weight.sum().item() == 9.0 and e.weight[2].abs().sum().item() == 0
        b = lib.nn.EmbeddingBag(4, 3, padding_idx=0)
        with lib.no_grad():
            b.weight.fill_(1.0)
        b._fill_padding_idx_with_zero()
        assert b.weight[0].abs().sum().item() == 0
        t = lib.nn.Transformer(8, 2, 1, 1, 16)
        with lib.no_grad():
            for p in t.parameters():
                p.fill_(0.0)
        t._reset_parameters()
        assert all((p.abs().sum().item() > 0) == (p.dim() > 1) for p in t.parameters())


DP_METHODS = {
    "replicate": lambda lib, dp: [repr(r) for r in dp.replicate(lib.nn.ReLU(), [0, 1])],
    "replicate parameters": lambda lib, dp: dp.replicate(dp.module, [0]),
    "scatter": lambda lib, dp: dp.scatter((1,), {}, [0]),
    "gather": lambda lib, dp: dp.gather([1], 0),
    "parallel_apply": lambda lib, dp: dp.parallel_apply([dp.module], [lib.ones(1, 2)], None),
    "parallel_apply none": lambda lib, dp: dp.parallel_apply([], [], None),
}


@pytest.mark.parametrize("fn", list(DP_METHODS.values()), ids=list(DP_METHODS))
def test_data_parallel_step_helpers(fn):
    same_outcome(lambda lib: fn(lib, lib.nn.DataParallel(lib.nn.Linear(2, 2))))
