"""Arguments ember used to accept and ignore: each now does what torch does, or raises torch's error, or is a no-op
where torch's is one on the CPU (tests/core/test_out.py covers ``out=``)."""
from __future__ import annotations

import contextlib
import itertools
import io
import pickle
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
                                {"device_id": "cuda:0"}], ids=str)
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
