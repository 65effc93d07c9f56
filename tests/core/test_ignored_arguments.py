"""Arguments ember used to accept and ignore: each now does what torch does, or raises torch's error, or is a no-op
where torch's is one on the CPU (tests/core/test_out.py covers ``out=``)."""
from __future__ import annotations

import ast
import contextlib
import dis
import inspect
import itertools
import linecache
import io
import pickle
import textwrap
import tokenize
import types
import warnings

import numpy as np
import pytest

from oracle import assert_close, check, ember, same_error, torch

_RNG = np.random.default_rng(0)


# ----------------------------------------------------------------------------- pin_memory, layout, device
@pytest.mark.parametrize("make", [
    lambda lib: lib.zeros(2, pin_memory=True),
    lambda lib: lib.empty_like(lib.ones(2), pin_memory=True),
    lambda lib: lib.tensor([1.0], pin_memory=True),
    lambda lib: lib.ones(2).new_zeros(2, pin_memory=True),
    lambda lib: lib.arange(3, pin_memory=True),
    lambda lib: lib.ones(2).pin_memory(),
    lambda lib: lib.hann_window(4, device="cuda"),
    lambda lib: lib.tril_indices(3, 3, device="cuda"),
    lambda lib: lib.ones(2).new_tensor([1.0], device="cuda"),
    lambda lib: lib.nn.Transformer.generate_square_subsequent_mask(3, device="cuda"),
    lambda lib: lib.nn.parameter.UninitializedParameter(device="cuda"),
    lambda lib: lib.nn.parameter.UninitializedBuffer(device="cuda"),
    lambda lib: lib.nn.parameter.UninitializedParameter().materialize((2,), device="cuda"),
], ids=["zeros", "empty_like", "tensor", "new_zeros", "arange", "Tensor.pin_memory", "hann_window device",
        "tril_indices device", "new_tensor device", "square mask device", "UninitializedParameter device",
        "UninitializedBuffer device", "materialize device"])
def test_accelerator_options_are_torch_errors(make) -> None:
    same_error(make)


def test_layout_and_device_options() -> None:
    for lib in (ember, torch):
        assert lib.zeros(2, layout=lib.strided, device="cpu", pin_memory=False).layout == lib.strided
        assert not lib.ones(2).is_pinned()
        t = lib.ones(2)
        assert t.to("cpu", non_blocking=True) is t and t.copy_(lib.zeros(2), non_blocking=True) is t
    same_error(lambda lib: lib.zeros(2, layout="strided"), ["argument 'layout' must be torch.layout"])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ember.ones(2).is_pinned("cpu")
    assert any("'device' of Tensor.is_pinned() is deprecated" in str(x.message) for x in w)


# ----------------------------------------------------------------------------- memory_format
def _strides(lib, make):
    return tuple(make(lib).stride())


@pytest.mark.parametrize("make", [
    lambda lib: lib.empty(2, 3, 4, 5, memory_format=lib.channels_last),
    lambda lib: lib.empty(2, 3, 4, 5, 6, memory_format=lib.channels_last_3d),
    lambda lib: lib.zeros_like(lib.ones(2, 3, 4, 5), memory_format=lib.channels_last),
    lambda lib: lib.empty_like(lib.ones(2, 3, 4, 5).permute(0, 2, 3, 1)),  # preserve_format keeps dense strides
    lambda lib: lib.ones(3, 4).t().clone(),
    lambda lib: lib.ones(3, 4).t().clone(memory_format=lib.contiguous_format),
    lambda lib: lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3, 4, 5).to(memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3, 4, 5).to(lib.float64, memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3, 4, 5).cpu(memory_format=lib.channels_last),
    lambda lib: lib.ones(0).resize_(2, 3, 4, 5, memory_format=lib.channels_last),
    lambda lib: lib.ones(3, 4)[:, ::2].clone(),  # not dense: row-major
    lambda lib: lib.randint_like(lib.ones(2, 3, 4, 5), 5, memory_format=lib.channels_last),
    lambda lib: lib.randint_like(lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last), 2, 5),
], ids=["empty cl", "empty cl3d", "zeros_like cl", "empty_like preserve", "clone preserve", "clone contiguous",
        "contiguous cl", "to cl", "to dtype cl", "cpu cl", "resize_ cl", "clone strided", "randint_like cl",
        "randint_like preserve"])
def test_memory_format_lays_out_as_torch(make) -> None:
    assert _strides(ember, make) == _strides(torch, make)


def test_is_contiguous_in_a_memory_format() -> None:
    for lib in (ember, torch):
        x = lib.ones(2, 3, 4, 5)
        cl = x.contiguous(memory_format=lib.channels_last)
        assert x.is_contiguous() and not x.is_contiguous(memory_format=lib.channels_last)
        assert cl.is_contiguous(memory_format=lib.channels_last) and not cl.is_contiguous()
    same_error(lambda lib: lib.ones(2, 3).contiguous(memory_format=lib.channels_last))
    same_error(lambda lib: lib.empty(2, 3, memory_format=lib.channels_last_3d))


# ----------------------------------------------------------------------------- values torch computes from them
def test_pinv_hermitian_reads_the_lower_triangle() -> None:
    a = _RNG.standard_normal((4, 4))  # not symmetric: hermitian=True uses the lower triangle only, as torch's
    check(lambda lib, t: lib.linalg.pinv(t, hermitian=True), a, gradgrad=False)
    check(lambda lib, t: lib.linalg.pinv(t, 1e-3), a @ a.T, gradgrad=False)  # rcond positionally


def test_l1_loss_weight() -> None:
    x, y, w = _RNG.standard_normal((3, 4)), _RNG.standard_normal((3, 4)), _RNG.uniform(0.1, 1, (3, 4))
    for reduction in ("mean", "sum", "none"):
        check(lambda lib, a, b, c: lib.nn.functional.l1_loss(a, b, reduction=reduction, weight=c), x, y, w,
              gradgrad=False)
    same_error(lambda lib: lib.nn.functional.l1_loss(lib.ones(3), lib.ones(3), weight=lib.ones(2)))


def test_interpolate_antialias() -> None:
    x = _RNG.standard_normal((2, 3, 9, 7))
    for kw in ({"size": (4, 3)}, {"scale_factor": 0.4}, {"size": (4, 3), "align_corners": True},
               {"scale_factor": 1.7}):
        check(lambda lib, t: lib.nn.functional.interpolate(t, mode="bilinear", antialias=True, **kw), x,
              gradgrad=False)
    same_error(lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4), size=2, antialias=True))


def test_svd_driver_is_cuda_only() -> None:
    same_error(lambda lib: lib.linalg.svdvals(lib.ones(3, 3), driver="gesvd"))
    same_error(lambda lib: lib.linalg.svd(lib.ones(3, 3), driver="gesvd"))


def test_set_num_threads_is_reported() -> None:
    before = torch.get_num_threads()
    try:
        for lib in (ember, torch):
            lib.set_num_threads(2)
            assert lib.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    same_error(lambda lib: lib.set_num_threads(0))


def test_generators_are_used() -> None:
    x = ember.ones(5)
    a = ember.randint_like(x, 100, generator=ember.Generator().manual_seed(3))
    b = ember.randint_like(x, 100, generator=ember.Generator().manual_seed(3))
    assert ember.equal(a, b)
    y, z = -ember.ones(50), -ember.ones(50)
    ember.nn.functional.rrelu_(y, training=True, generator=ember.Generator().manual_seed(1))
    ember.nn.functional.rrelu_(z, training=True, generator=ember.Generator().manual_seed(1))
    assert ember.equal(y, z)


def test_from_dlpack_and_to_dlpack_copy() -> None:
    src = np.arange(4.0)
    shared = ember.from_dlpack(src, copy=False)
    copied = ember.from_dlpack(src, copy=True)
    src[0] = 9
    assert shared[0].item() == 9 and copied[0].item() == 0
    t = ember.arange(3.0)
    u = ember.from_dlpack(ember.to_dlpack(t, copy=True))
    t[0] = 7
    assert u[0].item() == 0
    same_error(lambda lib: lib.from_dlpack(np.arange(2.0), device="cuda"))


def test_save_takes_pickle_module_pickle() -> None:
    for lib in (ember, torch):
        buf = io.BytesIO()
        lib.save({"w": lib.ones(2)}, buf, pickle_module=pickle)
        buf.seek(0)
        assert lib.load(buf)["w"].tolist() == [1.0, 1.0]


def test_checkpoint_context_fn_and_checks() -> None:
    entered = []

    @contextlib.contextmanager
    def note(tag):
        entered.append(tag)
        yield

    x = ember.ones(3, requires_grad=True)
    y = ember.utils.checkpoint.checkpoint(lambda t: (t * t).sin(), x, use_reentrant=False,
                                          context_fn=lambda: (note("forward"), note("recompute")))
    y.sum().backward()
    assert entered == ["forward", "recompute"]
    for kw in ({"use_reentrant": True, "context_fn": lambda: (contextlib.nullcontext(),) * 2},
               {"use_reentrant": True, "debug": True}, {"use_reentrant": False, "determinism_check": "x"}):
        same_error(lambda lib: lib.utils.checkpoint.checkpoint(lambda t: t * 2, lib.ones(2, requires_grad=True),
                                                                **kw))


def test_deprecated_range_warns_as_torch() -> None:
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            r = lib.range(0, 3)
        assert r.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_other_keyword_forms() -> None:
    a = np.arange(12.0).reshape(3, 4)
    check(lambda lib, t: lib.einsum(t, [0, 1], t, [2, 1], [0, 2]), a, gradgrad=False)  # sublist format
    assert ember.arange(end=3).tolist() == torch.arange(end=3).tolist()
    assert ember.repeat_interleave(repeats=ember.tensor([1, 2])).tolist() == \
        torch.repeat_interleave(repeats=torch.tensor([1, 2])).tolist()
    assert_close(ember.nan_to_num(ember.tensor([float("nan")]), nan=None),
                 torch.nan_to_num(torch.tensor([float("nan")]), nan=None))
    assert_close(ember.gradient(ember.tensor([1.0, 4.0, 9.0]), spacing=None)[0],
                 torch.gradient(torch.tensor([1.0, 4.0, 9.0]), spacing=None)[0])


# ----------------------------------------------------------------------------- nn
@pytest.mark.parametrize("make", [
    lambda lib, d: lib.nn.Linear(2, 3, device=d), lambda lib, d: lib.nn.Conv2d(1, 2, 3, device=d),
    lambda lib, d: lib.nn.LayerNorm(4, device=d), lambda lib, d: lib.nn.Embedding(5, 2, device=d),
    lambda lib, d: lib.nn.LSTM(3, 4, device=d), lambda lib, d: lib.nn.MultiheadAttention(4, 2, device=d),
    lambda lib, d: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4], device=d),
], ids=["Linear", "Conv2d", "LayerNorm", "Embedding", "LSTM", "MultiheadAttention", "AdaptiveLogSoftmaxWithLoss"])
def test_module_device_argument(make) -> None:
    for lib in (ember, torch):
        assert next(make(lib, "cpu").parameters()).device.type == "cpu"
    same_error(lambda lib: make(lib, "cuda"))


def test_global_forward_hook_options() -> None:
    """register_module_forward_hook(with_kwargs=, always_call=) and a module's always_call hooks, as torch."""
    seen = {}
    for lib in (ember, torch):
        got = seen[lib.__name__] = []

        class Boom(lib.nn.Module):
            def forward(self, x, scale=1):
                if scale == 0:
                    raise ValueError("boom")
                return x * scale

        m = Boom()
        handles = [
            lib.nn.modules.module.register_module_forward_hook(lambda mod, a, kw, out: got.append(("kw", kw)),
                                                               with_kwargs=True),
            m.register_forward_hook(lambda mod, a, out: got.append(("always", out)), always_call=True),
            lib.nn.modules.module.register_module_forward_hook(lambda mod, a, out: got.append(("global", out)),
                                                               always_call=True)]
        try:
            m(lib.ones(1), scale=2)
            with pytest.raises(ValueError):
                m(lib.ones(1), scale=0)
        finally:
            for h in handles:
                h.remove()
    assert [(k, repr(v)) for k, v in seen["ember"]] == [(k, repr(v)) for k, v in seen["torch"]]


# ----------------------------------------------------------------------------- found by the audit below
@pytest.mark.parametrize("device", ["cuda", "cuda:1", "xpu", "mps", "meta", "hpu", "foo"])
def test_generator_device(device) -> None:
    same_error(lambda lib: lib.Generator(device=device))
    for lib in (ember, torch):
        assert lib.Generator(device=lib.device("cpu")).device.type == "cpu"


def _dim_order_cases(lib) -> list:
    cases = []
    for shape in ((2, 3, 4, 5), (2, 1, 3, 3), (1, 2, 3, 4), (2, 3, 3, 3), (3, 1), (3, 3), (4,), (), (2, 2, 2)):
        t = lib.zeros(shape)
        cases += [t] + [t.permute(*p) for p in itertools.islice(itertools.permutations(range(len(shape))), 1, None)]
        if len(shape) == 4:
            cases.append(t.contiguous(memory_format=lib.channels_last))
    return cases + [lib.zeros(3, 1).expand(3, 4), lib.zeros(1, 4).expand(3, 4), lib.zeros(2, 3, 4)[:, ::2],
                    lib.zeros(4, 6)[::2, ::3], lib.zeros(6, 6).t()[::2],
                    lib.zeros(2, 3, 4, 5, 6).contiguous(memory_format=lib.channels_last_3d),
                    lib.zeros(2, 3, 4, 4).as_strided((2, 3, 4, 4), (4, 4, 4, 1)),
                    lib.zeros(16).as_strided((2, 2, 2), (4, 2, 4)), lib.zeros(8).as_strided((2, 4), (0, 0))]


def _dim_orders(lib) -> list:
    checks = [False, True, [lib.contiguous_format, lib.channels_last], [lib.channels_last], [],
              [lib.contiguous_format], [lib.preserve_format], "x", [1]]
    found = []
    for t in _dim_order_cases(lib):
        for mode in checks:
            try:
                found.append(t.dim_order(ambiguity_check=mode))
            except (RuntimeError, TypeError) as e:
                found.append((type(e).__name__, str(e)))
    return found


def test_dim_order_and_its_ambiguity_check() -> None:
    """torch's order (its stride sort, NOTE [dim order]) and its errors when the order is ambiguous."""
    mine, theirs = _dim_orders(ember), _dim_orders(torch)
    assert len(mine) > 1000 and mine == theirs
    assert sum(isinstance(r[0], str) for r in theirs if r) > 100  # the errors are compared too


def test_deprecated_arguments_warn_as_torch() -> None:
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            g, = lib.autograd.grad((x * 2).sum(), x, only_inputs=False)
        assert g.tolist() == [2.0, 2.0]
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            v = lib.autograd.Variable(x, volatile=True)
        assert not v.requires_grad
        assert lib.autograd.Variable(requires_grad=True).shape == (0,)
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect"):
            lib.nn.functional.gumbel_softmax(lib.ones(3), eps=1e-3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lib.autograd.grad((x * 2).sum(), x, only_inputs=True)
            lib.nn.functional.gumbel_softmax(lib.ones(3), eps=1e-10)


@pytest.mark.parametrize("args, kw", [
    (([1, 2], 2), {"output_size": -1}), (([1, 2], 2), {"output_size": 4}), (([1, 2], 2), {"output_size": 5}),
    (([1, 2], "t[1, 2]"), {"output_size": -3}), (([1, 2], "t[1, 2]"), {"output_size": 3}),
    (([1, 2], "t[1, 2]"), {"output_size": 4}), (([1, 2],), {"output_size": -3}), (([1, 2],), {"output_size": 3}),
    (([1, 2],), {"output_size": 2}), (([1, 2], "t2"), {"output_size": 3}), (([1, 2], "t2"), {"output_size": 4}),
    (([1, 2], "t[2]"), {}), (([[1, 2], [3, 4]], "t[2, 1]", 0), {"output_size": 3}),
    (([[1, 2], [3, 4]], "t[2]", 1), {}), (([[1, 2], [3, 4]], "t[[2]]", 1), {}), (([1, 2], "t[1, 2, 3]"), {}),
    (([[1, 2], [3, 4]], 3, 1), {"output_size": 6}), ((5, "t3"), {}), ((5, 3), {"output_size": 3}),
    (([1], "t[3]"), {}),
], ids=str)
def test_repeat_interleave_output_size(args, kw) -> None:
    def call(lib):
        made = [lib.tensor(eval(a[1:]) if isinstance(a, str) else a) if i < 2 and (i == 0 or isinstance(a, str))
                else a for i, a in enumerate(args)]
        return lib.repeat_interleave(*made, **kw)

    try:
        expected = call(torch)
    except RuntimeError:
        same_error(call)
    else:
        assert call(ember).tolist() == expected.tolist()
    x = np.array([1.0, 2.0])
    check(lambda lib, t: lib.repeat_interleave(t, lib.tensor([1, 2]), output_size=3), x)


def test_sampler_takes_no_arguments_and_is_generic() -> None:
    for lib in (ember, torch):
        data = lib.utils.data
        assert data.Sampler[int] is not None and data.DataLoader[int] is not None
        assert isinstance(data.Sampler(), data.Sampler)

        class Old(data.Sampler):
            def __init__(self, source):
                super().__init__(source)

        with pytest.raises(TypeError, match="takes exactly one argument"):
            Old([1, 2])


@pytest.mark.parametrize("make", [
    lambda lib: lib.UntypedStorage(3, device="cuda"), lambda lib: lib.TypedStorage(3, dtype=lib.float, device="cuda"),
], ids=["UntypedStorage", "TypedStorage"])
def test_storage_device(make) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(make)
        for lib in (ember, torch):
            assert lib.UntypedStorage(3, device="cpu").size() == 3


@pytest.mark.parametrize("kw", [{"devices": [0]}, {"devices": []}, {"device_type": "foo"}, {"device_type": "meta"},
                                {"device_type": "cpu"}, {"device_type": "mps"}, {"device_type": "xpu"}, {"foo": 1},
                                {"enabled": False, "devices": [0]}, {"device_type": "xpu", "devices": [0]}], ids=str)
def test_fork_rng_arguments(kw) -> None:
    """fork_rng takes torch's arguments only: which forks the CPU state, which are torch's errors."""
    def forked(lib):
        lib.manual_seed(0)
        first = lib.rand(1).item()
        lib.manual_seed(0)
        with lib.random.fork_rng(**kw):
            lib.rand(1)
        return lib.rand(1).item() == first

    try:
        expected = forked(torch)
    except Exception:  # noqa: BLE001 - compared below
        same_error(forked)
    else:
        assert forked(ember) == expected


@pytest.mark.parametrize("devices", [["cpu:0"], ["cpu"], [0], ["cuda:0"], ["meta:0"], ["meta"], [], None], ids=str)
def test_future_devices(devices) -> None:
    try:
        torch.futures.Future(devices=devices)
    except Exception:  # noqa: BLE001 - compared below
        same_error(lambda lib: lib.futures.Future(devices=[lib.device(d) if d == "cpu:0" else d for d in devices]))
    else:
        assert not ember.futures.Future(devices=devices).done()


@pytest.mark.parametrize("kw", [{"init_method": "env://", "store": object()}, {"store": object()},
                                {"store": object(), "world_size": 2}, {"device_id": 0},
                                {"device_id": "cuda:0"}], ids=["init_method and store", "store", "store world_size",
                                                               "device_id int", "device_id cuda"])
def test_init_process_group_argument_checks(kw) -> None:
    """The checks torch makes before any rendezvous (ember's is MPI's, so these are all its arguments change)."""
    def call(lib):
        args = dict(kw)
        if isinstance(args.get("device_id"), str):
            args["device_id"] = lib.device(args["device_id"])
        lib.distributed.init_process_group("gloo", **args)

    same_error(call)
    assert not ember.distributed.is_initialized() and not torch.distributed.is_initialized()


@pytest.mark.parametrize("device", ["cuda", "meta", "mps", "foo"])
def test_legacy_constructor_device(device) -> None:
    same_error(lambda lib: lib.Tensor(2, device=device))
    for lib in (ember, torch):
        assert lib.Tensor(2, device=lib.device("cpu", 0)).shape == (2,)


# ----------------------------------------------------------------------------- the audit: every parameter read
# An AST scan of every public function and method of every ember module lists the parameters its body never reads.
# Each must be in UNREAD with what it does, one of these (issue 23: do what torch does, raise torch's error, or be a
# documented no-op where torch's is one on the CPU). A parameter read is not proof that it is honoured: the tests
# above, test_out.py, test_signatures.py and each area's tests check behaviour; this keeps new ones from slipping in.
CPU = "a no-op in torch on the CPU too (accelerator-only: CUDA streams, cuDNN, pinned memory, foreach kernels)"
TORCH = "torch's own implementation does not read it either"
ALIAS = "read by __new__ (the object is built there) or forwarded by a wrapper that reads it"
EAGER = ("a compiler or tracer option with no effect on results: ember.jit runs eagerly; ember.compile keeps its own "
         "guards and has no code generator to tune (docs/compile.md)")
ORDER = "an ordering hint: ember's order is one torch allows (sort is stable, topk sorted, unique sorted)"
SCHEDULE = "schedules the same averaging differently in torch (bucketing, copy batching): no result changes"
MPI = "MPI is the rendezvous and transport: the processes mpiexec started form the group"
HOOK = "a hook's protocol argument, which torch's hook ignores too"
INTERNAL = "internal (not torch API)"
SPARSE_GRAD = ("not implemented: the gradient is dense, with torch's values; torch's is a sparse COO tensor "
               "(ember's gradients are dense; docs/compat.md)")
PROFILER = "a profiler option about accelerators, Kineto or trace export: ember's profiler records CPU ops only"
FLOATS = "returns False: NumPy gives no control over the CPU's denormal mode (torch's answer on a CPU without it)"
GRADCHECK = "NOTE [gradcheck's options]: the full Jacobian is checked (stricter); masked concerns sparse inputs"
NO_TRACE = "add_graph records the autograd graph, not a TorchScript trace: tracer strictness does not apply"
DENSE = "dense tensors only: masked gradients concern sparse tensors (SparseTensor.to_dense reads it)"
PYTREE = "only treespec serialization (treespec_dumps/loads) reads them; ember's serializes built-in nodes only"
HINT = "a performance hint: the result is torch's either way"
ACCEL = "used only with accelerator tensors or devices, which raise torch's error here (torch's CPU build too)"
DDP_ARGS = "documented in DistributedDataParallel.__init__: " + SCHEDULE

STAND_IN = "the NumPy stand-in cuda device (NOTE [cuda stand-in]): its work is done when queued, nothing to wait for"
UNREAD = {
    "ember.cuda._runtime.StandInRuntime.synchronize_stream": {"stream": STAND_IN},
    "ember.cuda._runtime.StandInRuntime.query_stream": {"stream": STAND_IN},
    "ember.cuda._runtime.StandInRuntime.new_event": {"blocking": STAND_IN, "external": STAND_IN,
                                                     "interprocess": STAND_IN},
    "ember.cuda._runtime.StandInRuntime.record_event": {"stream": STAND_IN},
    "ember.cuda._runtime.StandInRuntime.wait_event": {"event": STAND_IN, "stream": STAND_IN},
    "ember.cuda._runtime.StandInRuntime.query_event": {"event": STAND_IN},
    "ember.cuda._runtime.StandInRuntime.synchronize_event": {"event": STAND_IN},
    "ember.cuda._runtime.CuPyRuntime.new_event": {"external": "CuPy's events have no external flag (torch's is for "
                                                              "events shared by graphs)"},
    "ember.hub._Faketqdm.__init__": {"unit": TORCH, "args": TORCH, "kwargs": TORCH},
    "ember.hub._Faketqdm.set_description": {"args": TORCH, "kwargs": TORCH},
    "ember._dynamo.mark_static": {"t": EAGER, "index": EAGER},
    "ember._dynamo.mark_static_address": {"t": EAGER, "guard": EAGER},
    "ember._dynamo.maybe_mark_dynamic": {"t": EAGER, "index": EAGER},
    "ember._dynamo.optimize": dict.fromkeys(("guard_export_fn", "guard_fail_fn", "kwargs"), EAGER),
    "ember._dynamo.set_stance.__init__": {"skip_guard_eval_unsafe": EAGER, "force_backend": EAGER},
    "ember._dynamo.substitute_in_graph": {"can_constant_fold_through": EAGER, "skip_signature_check": EAGER},
    "ember.compiler.load_cache_artifacts": {"serialized_artifacts": EAGER},
    "ember._compile.trace.Tracer.read": {"t": INTERNAL + " (the tracer hook's protocol: the break names the caller's line)"},
    "ember.compiler.nested_compile_region": {"options": EAGER, "max_reuse_entries": EAGER, "reuse_hash_fn": EAGER},
    "ember.jit.annotate": {"the_type": EAGER},
    "ember.jit.freeze": {"preserved_attrs": EAGER, "optimize_numerics": EAGER},
    "ember.jit.ignore": {"kwargs": EAGER},
    "ember.jit.optimize_for_inference": {"other_methods": EAGER},
    "ember.jit.optimized_execution": {"should_optimize": EAGER},
    "ember.jit.script": {"optimize": EAGER, "example_inputs": EAGER},
    "ember.jit.trace": {"optimize": EAGER, "check_inputs": EAGER, "check_tolerance": EAGER},
    "ember.jit.trace_module": {"optimize": EAGER, "check_trace": EAGER, "check_inputs": EAGER,
                               "check_tolerance": EAGER},
    "ember._state.set_flush_denormal": {"mode": FLOATS},
    "ember._aten.batch_norm": {"cudnn_enabled": CPU},
    "ember._aten.group_norm": {"cudnn_enabled": CPU},
    "ember._aten.instance_norm": {"cudnn_enabled": CPU},
    "ember._aten.layer_norm": {"cudnn_enable": CPU},
    "ember.is_distributed": {"input": TORCH},
    "ember.ops.fill.Tensor.copy_": {"non_blocking": CPU},
    "ember._layout.Tensor.to_dense": {"masked_grad": DENSE},
    "ember._conversions.Tensor.type": {"non_blocking": CPU},
    "ember.storage.TypedStorage.copy_": {"non_blocking": CPU},
    "ember.storage.TypedStorage.is_pinned": {"device": CPU},
    "ember.storage.TypedStorage.type": {"non_blocking": CPU},
    "ember.storage.UntypedStorage.copy_": {"non_blocking": CPU},
    "ember.storage.UntypedStorage.is_pinned": {"device": CPU},
    "ember.storage.UntypedStorage.type": {"non_blocking": CPU},
    "ember.autograd.graph.save_on_cpu.__init__": {"pin_memory": CPU, "device_type": CPU},
    "ember.nn.utils.clip_grad.clip_grad_value_": {"foreach": CPU},
    "ember.nn.utils.clip_grad.clip_grads_with_norm_": {"foreach": CPU},
    "ember.nn.utils.clip_grad.get_total_norm": {"foreach": CPU},
    "ember.nn.parallel.data_parallel.DataParallel.__init__": {"device_ids": CPU, "output_device": CPU, "dim": CPU},
    "ember.accelerator.current_accelerator": {"check_available": CPU},
    "ember.autograd.engine.run_backward": {"allow_unused": INTERNAL},
    "ember.func._vmap.BatchedTensor.is_contiguous": {"memory_format": INTERNAL},
    "ember.autograd.function.Function.__init__": {"args": TORCH, "kwargs": TORCH},
    "ember.nn.modules.linear.Identity.__init__": {"args": TORCH, "kwargs": TORCH},
    "ember.nn.parameter.Buffer.__init__": {"data": ALIAS, "persistent": ALIAS},
    "ember.nn.parameter.Parameter.__init__": {"data": ALIAS, "requires_grad": ALIAS},
    "ember.nn.parameter.UninitializedBuffer.__init__": dict.fromkeys(("requires_grad", "device", "dtype",
                                                                      "persistent"), ALIAS),
    "ember.nn.parameter.UninitializedParameter.__init__": dict.fromkeys(("requires_grad", "device", "dtype"), ALIAS),
    **{f"ember.nn._functional_conv.{p}_with_indices": {"return_indices": TORCH} for p in (
        "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "fractional_max_pool2d",
        "fractional_max_pool3d", "max_pool1d", "max_pool2d", "max_pool3d")},
    **{f"ember.distributions.transforms.{t}.log_abs_det_jacobian": {"y": TORCH} for t in (
        "AffineTransform", "CumulativeDistributionTransform", "ExpTransform", "ReshapeTransform",
        "SigmoidTransform", "SoftplusTransform", "TanhTransform")},
    "ember.distributions.transforms.CorrCholeskyTransform.log_abs_det_jacobian": {"intermediates": TORCH},
    "ember.nn.utils.spectral_norm.SpectralNorm.__call__": {"inputs": HOOK},
    "ember.nn.utils.spectral_norm.SpectralNormLoadStateDictPreHook.__call__": {"unexpected_keys": HOOK,
                                                                                "error_msgs": HOOK},
    "ember.nn.utils.spectral_norm.SpectralNormStateDictHook.__call__": {"module": HOOK, "state_dict": HOOK,
                                                                         "prefix": HOOK},
    "ember.nn.utils.weight_norm.WeightNorm.__call__": {"inputs": HOOK},
    "ember.nn.utils.prune.BasePruningMethod.__call__": {"inputs": HOOK},
    "ember.nn.utils.prune.CustomFromMask.compute_mask": {"t": TORCH},
    "ember.nn.utils.prune.Identity.compute_mask": {"t": TORCH},
    "ember.ops.sorting.isin": {"assume_unique": HINT},
    "ember.nn.parallel.comm.reduce_add_coalesced": {"buffer_size": HINT},
    **{f"ember._conversions.Tensor.{m}": {"non_blocking": ACCEL, "memory_format": ACCEL} for m in ("cuda", "xpu", "ipu",
                                                                                               "mtia")},
    "ember.nn.parallel.scatter_gather.gather": {"dim": ACCEL, "target_device": ACCEL},
    "ember.nn.parallel.scatter_gather.scatter": {"dim": ACCEL},
    "ember.nn.attention.flex_attention.noop_mask": {"token_q": TORCH, "token_kv": TORCH, "head": TORCH},
    "ember.ops.shape.expand": {"implicit": TORCH},
    "ember.ops.sorting.argsort": {"stable": ORDER},
    "ember.ops.sorting.topk": {"sorted": ORDER},
    "ember.ops.sorting.unique": {"sorted": ORDER},
    "ember.nn.functional.embedding": {"sparse": SPARSE_GRAD},
    "ember.nn.functional.embedding_bag": {"sparse": SPARSE_GRAD},
    "ember.ops.gather_scatter.gather": {"sparse_grad": SPARSE_GRAD},
    "ember.nn.parallel.distributed.DistributedDataParallel.__init__": dict.fromkeys(
        ("delay_all_reduce_named_params", "param_to_hook_all_reduce", "bucket_cap_mb_list", "batched_grad_copy"),
        DDP_ARGS),
    "ember.distributed.process_group.init_process_group": {"group_name": MPI, "pg_options": MPI},
    "ember.distributed.process_group.new_group": dict.fromkeys(("pg_options", "use_local_synchronization",
                                                                "group_desc", "device_id"), MPI),
    "ember.autograd.gradcheck.gradcheck": {"fast_mode": GRADCHECK, "masked": GRADCHECK},
    "ember.utils.checkpoint.checkpoint": {"early_stop": "stops torch's recomputation once every saved tensor is "
                                                       "back: the same gradients"},
    "ember.autograd.profiler.emit_itt.__init__": {"record_shapes": PROFILER},
    "ember.autograd.profiler.emit_nvtx.__init__": {"record_shapes": PROFILER},
    "ember.autograd.profiler.profile.__init__": dict.fromkeys(("use_kineto", "use_cpu", "experimental_config",
                                                               "acc_events", "custom_trace_id_callback"), PROFILER),
    "ember.autograd.profiler_util.EventList.key_averages": {"group_by_overload_name": PROFILER},
    "ember.profiler.profile.__init__": dict.fromkeys(("experimental_config", "execution_trace_observer",
                                                      "acc_events", "custom_trace_id_callback"), PROFILER),
    "ember.profiler.profile.export_chrome_trace": {"use_python_export": PROFILER},
    "ember.profiler.tensorboard_trace_handler": {"use_python_export": PROFILER},
    "ember.utils._pytree.register_pytree_node": {"to_dumpable_context": PYTREE, "from_dumpable_context": PYTREE},
    "ember.utils.tensorboard.writer.SummaryWriter.add_graph": {"use_strict_trace": NO_TRACE},
}


def _modules() -> list:
    import importlib
    import pkgutil

    found = [ember]
    for info in pkgutil.walk_packages(ember.__path__, "ember."):
        if not info.name.startswith("ember.demo"):  # (the demo extra's scripts)
            found.append(importlib.import_module(info.name))
    return found


def _refusal(body: list) -> bool:
    """Always raises: ends in a raise with no return before it, or first calls a refusing helper (``_no_mps(...)``,
    ``_check_device("cuda")``)."""
    body = [st for st in body if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))]
    if not body:
        return True
    if isinstance(body[-1], ast.Raise) and not any(isinstance(n, ast.Return) for st in body for n in ast.walk(st)):
        return True
    first = body[0]
    call = first.value if isinstance(first, ast.Expr) and isinstance(first.value, ast.Call) else None
    name = getattr(getattr(call, "func", None), "id", "")
    return name.startswith("_no_") or name == "_check_device" and bool(call.args) and isinstance(
        call.args[0], ast.Constant)


def _definition(fn) -> ast.FunctionDef | None:
    """The ``def`` of ``fn``, parsed from its lines alone."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    try:
        block = inspect.getblock(lines[code.co_firstlineno - 1:])
        node = ast.parse(textwrap.dedent("".join(block))).body[0]
    except (SyntaxError, IndexError, tokenize.TokenError):
        return None
    return node if isinstance(node, ast.FunctionDef) and node.name == code.co_name else None


_LOAD_FAST = {op for name, op in dis.opmap.items() if name.startswith("LOAD_FAST")}
_LOAD_PAIR = dis.opmap.get("LOAD_FAST_LOAD_FAST", -1)  # (3.13: two slots in one argument)


def _unread_parameters(fn) -> list:
    fn = inspect.unwrap(fn)
    code = fn.__code__
    n = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS) + bool(
        code.co_flags & inspect.CO_VARKEYWORDS)
    params = code.co_varnames[:n]
    raw = code.co_code  # (2-byte instructions; scanned directly: dis would take seconds over the package)
    slots = set()
    for i in range(0, len(raw), 2):
        if raw[i] in _LOAD_FAST:
            slots.update((raw[i + 1] >> 4, raw[i + 1] & 15) if raw[i] == _LOAD_PAIR else (raw[i + 1],))
    # a parameter a nested function reads is a cell variable
    read = set(code.co_cellvars) | {code.co_varnames[k] for k in slots if k < len(code.co_varnames)}
    unread = [p for p in params if p not in read and p not in ("self", "cls") and not p.startswith("_")]
    if not unread:
        return []
    node = _definition(fn)  # the source decides whether it only refuses
    return [] if node is None or _refusal(node.body) else unread


def _public_callables():
    from ember.autograd.graph import Node  # ops are graph nodes: their forward/backward/jvp take fixed arguments

    import ember.hub

    # torch.hub.tqdm is tqdm when installed, else the fallback class: scan the fallback either way (CI has no tqdm)
    yield from ((f"ember.hub._Faketqdm.{m}", f, ()) for m, f in vars(ember.hub._Faketqdm).items()
                if m in ("__init__", "set_description"))
    for mod in _modules():
        for name, obj in list(vars(mod).items()):
            if name.startswith("_") or not (getattr(obj, "__module__", None) or "").startswith("ember"):
                continue
            if isinstance(obj, types.FunctionType):
                if obj.__qualname__ != name and "." in obj.__qualname__:
                    continue  # a Tensor method written as a function of self: scanned as the method (its wrapper)
                yield f"{obj.__module__}.{obj.__qualname__}", obj, ()
            elif isinstance(obj, type) and not issubclass(obj, Node):
                for mname, m in vars(obj).items():
                    f = m.__func__ if isinstance(m, (staticmethod, classmethod)) else m
                    if isinstance(f, types.FunctionType) and (not mname.startswith("_") or mname in (
                            "__init__", "__new__", "__call__")):
                        # a method written as a function of self elsewhere (bound from a table: NOTE [Tensor methods
                        # from functions]) is named where it is written
                        own = f"{f.__module__}.{f.__qualname__}" if f.__qualname__ == f"{obj.__qualname__}.{mname}" \
                            else f"{obj.__module__}.{obj.__qualname__}.{mname}"
                        yield own, f, ()


def _handled_by_wrapper(fn, param: str) -> bool:
    """``out=`` and the tensor options (layout, pin_memory, device) of an _args wrapper (NOTE [torch's argument
    parser]) are written or checked there."""
    return fn is not inspect.unwrap(fn) and param in ("out", "layout", "pin_memory", "device")


def test_every_accepted_argument_is_read_or_listed() -> None:
    """An AST scan: a public function's parameter its body never reads is listed in UNREAD with what it does; an
    entry no longer needed fails too. (A new unread parameter: make it do what torch does, or raise torch's error,
    or add it here with one of the reasons above.)"""
    found, seen = {}, set()
    for key, fn, _ in _public_callables():
        if (key, id(fn)) in seen:
            continue
        seen.add((key, id(fn)))
        unread = [p for p in _unread_parameters(fn) if not _handled_by_wrapper(fn, p)]
        if unread:
            found.setdefault(key, set()).update(unread)
    listed = {k: set(v) for k, v in UNREAD.items()}
    new = {k: sorted(v - listed.get(k, set())) for k, v in found.items() if v - listed.get(k, set())}
    stale = {k: sorted(v - found.get(k, set())) for k, v in listed.items() if v - found.get(k, set())}
    assert not new, f"accepted but never read (honour them, refuse them, or list them in UNREAD): {new}"
    assert not stale, f"listed in UNREAD but read now (remove them): {stale}"
    assert len(found) > 50  # the scan sees the package
