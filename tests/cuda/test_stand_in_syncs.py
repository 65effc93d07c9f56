"""Host syncs and kernels per training step on the stand-in ``cuda`` (NOTE [stand-in counters] in ember/_backend.py).

A training step on a GPU must not make the host wait for the device: no ``item``/``bool``/``float`` of a device
array, no move to the host, no host fallback. One step of each GPU workload of bench/ (tiny sizes, eager and through
ember.compile) is counted on the strict stand-in: zero syncs, and the same loss as the CPU run (the loss is read
after the counted block). Value checks that would sync become device-side asserts (NOTE [device-side asserts]),
raised at the next read of a device value, as torch's CUDA kernels report theirs."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as F
from bench.workloads import WORKLOADS
from ember import _backend as B


def _step(name: str, compiled: bool, device: str):
    w = WORKLOADS[name]
    ember.set_default_device(device)
    try:
        step, grads = w.build(ember, w.data(w.tiny), w.tiny, compile=compiled)
    finally:
        ember.set_default_device("cpu")

    def run():
        ember.set_default_device(device)
        try:
            return step()
        finally:
            ember.set_default_device("cpu")

    return run, grads


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name", ["W2", "W3", "W5", "W6"])
def test_training_step_makes_no_host_sync(stand_in, name, compiled):
    cpu, cpu_grads = _step(name, compiled, "cpu")
    dev, dev_grads = _step(name, compiled, "cuda")
    for _ in range(2):  # (compiled: the first two calls trace)
        cpu(), dev()
    want = cpu()
    with B.counting() as c:
        got = dev()
    assert c.syncs == 0, c.by_sync
    assert c.kernels > 0
    assert got.device.type == "cuda"
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5, atol=1e-6)
    g_cpu, g_dev = cpu_grads(), dev_grads()
    for k in g_cpu:
        np.testing.assert_allclose(g_dev[k], g_cpu[k], rtol=1e-4, atol=1e-6)


def test_w5_launches_what_torch_does(stand_in):
    """W5 ((a @ b @ c).sum().backward()): torch launches six GEMMs, the sum and the fill of its ones; ember
    the same eight (the leaves keep the incoming gradients: no copies, NOTE [stolen gradients])."""
    run, _ = _step("W5", False, "cuda")
    run()
    with B.counting() as c:
        run()
    assert c.by_kernel.get("matmul") == 6
    assert c.kernels == 8, c.by_kernel
    assert c.syncs == 0


def test_counting_sees_kernels_and_syncs_of_stand_in_arrays_only(stand_in):
    a = ember.arange(3.0, device="cuda")._data
    assert type(a) is B.StandInArray
    h = np.arange(3.0)
    with B.counting() as c:
        b = np.exp(a) + 1.0
        b.sum()
        b.astype(np.float64)
        b.astype(np.float32, copy=False)  # (same dtype, no copy: no kernel)
        _ = b.reshape(3, 1).T  # (views)
        np.exp(h)  # a host array: not counted
        float(b.sum()), bool(b[1] > 0), b.tolist(), B.to_host(b), b[2]  # (b[2]: a 0-d array, no read)
        with B.counting() as inner:
            np.sqrt(a)
    assert c.by_kernel == {"exp": 1, "add": 1, "add.reduce": 2, "astype": 1, "greater": 1}
    assert c.by_sync == {"__float__": 1, "__bool__": 1, "tolist": 1, "to_host": 1}
    assert (inner.kernels, inner.syncs) == (1, 0)
    with B.counting() as after:
        pass
    np.sqrt(a)
    assert (after.kernels, after.syncs) == (0, 0)


def test_optimizer_step_counter_stays_on_the_cpu(stand_in):
    """torch keeps a (non-capturable, non-fused) optimizer's ``step`` on the CPU whatever the default device, so
    reading it each step reads no device value."""
    for lib, dev in ((torch, "cpu"), (ember, "cuda")):
        lib.set_default_device(dev)
        try:
            p = lib.nn.Parameter(lib.ones(3))
            opt = lib.optim.AdamW([p], lr=0.1)
            p.sum().backward()
            opt.step()
        finally:
            lib.set_default_device(None)  # (torch's "cpu" would stay a device mode: no nested fast path after it)
        assert str(opt.state[p]["step"].device) == "cpu"
        assert float(opt.state[p]["step"]) == 1.0


def _bad_target(lib, dev):
    x = lib.zeros(2, 3, device=dev, requires_grad=True)
    return F.cross_entropy(x, ember.tensor([0, 5], device=dev)) if lib is ember else \
        torch.nn.functional.cross_entropy(x, torch.tensor([0, 5]))


def test_cross_entropy_target_check_is_a_device_side_assert(stand_in):
    with pytest.raises(IndexError) as want:
        _bad_target(torch, "cpu")
    with pytest.raises(IndexError) as cpu:
        _bad_target(ember, "cpu")  # the CPU raises at once, as torch's CPU kernel
    assert str(cpu.value) == str(want.value)
    with B.counting() as c:
        loss = _bad_target(ember, "cuda")  # a device queues the check: no sync
    assert c.syncs == 0
    with pytest.raises(IndexError) as dev:
        loss.item()  # ... raised at the next read of a device value
    assert str(dev.value) == str(want.value)
    assert not B._pending
    loss = _bad_target(ember, "cuda")
    with pytest.raises(IndexError):
        ember.cuda.synchronize()
    ok = F.cross_entropy(ember.zeros(2, 3, device="cuda"), ember.tensor([0, 2], device="cuda"))
    assert ok.item() == pytest.approx(np.log(3))


def test_embedding_index_check_is_a_device_side_assert(stand_in):
    w = ember.zeros(4, 2, device="cuda")
    with B.counting() as c:
        out = F.embedding(ember.tensor([1, 4], device="cuda"), w)
    assert c.syncs == 0
    with pytest.raises(IndexError, match="index out of range in self"):
        out.tolist()
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ember.tensor([1, 4]), ember.zeros(4, 2))
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.nn.functional.embedding(torch.tensor([1, 4]), torch.zeros(4, 2))


def test_max_pool_on_a_device_equals_the_cpu_with_nans_and_ties(stand_in):
    """The device's stacked max pooling picks torch's indices: the first of tied maxima, the last NaN."""
    r = np.random.default_rng(0)
    x = r.integers(0, 3, (2, 3, 6, 6)).astype(np.float32)  # many ties
    x[0, 0, 0, 1] = x[1, 2, 3, 3] = x[1, 2, 2, 2] = np.nan
    for pad in (0, 1):
        want_v, want_i = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, pad, return_indices=True)
        xd = ember.tensor(x, device="cuda")
        with B.counting() as c:
            got_v, got_i = F.max_pool2d(xd, 3, 2, pad, return_indices=True)
        assert c.syncs == 0, c.by_sync  # (no host fallback either)
        assert got_v.device.type == "cuda"
        np.testing.assert_array_equal(got_v.cpu().numpy(), want_v.numpy())
        np.testing.assert_array_equal(got_i.cpu().numpy(), want_i.numpy())


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [-100, 1])
def test_nll_loss_reads_no_device_value(stand_in, weighted, ignore):
    """log_softmax + nll_loss (torch's classic classifier head) on a device: no host sync, the CPU's values."""
    r = np.random.default_rng(1)
    x, t = r.standard_normal((6, 4)).astype(np.float32), r.integers(0, 4, 6)
    w = r.random(4).astype(np.float32) if weighted else None
    res = {}
    for dev in ("cpu", "cuda"):
        xe = ember.tensor(x, device=dev, requires_grad=True)
        we = None if w is None else ember.tensor(w, device=dev)
        with B.counting() as c:
            loss = F.nll_loss(F.log_softmax(xe, 1), ember.tensor(t, device=dev), we, ignore_index=ignore)
            loss.backward()
        assert c.syncs == 0, c.by_sync
        res[dev] = (loss.item(), xe.grad.cpu().numpy())
    xt = torch.tensor(x, requires_grad=True)
    want = torch.nn.functional.nll_loss(torch.log_softmax(xt, 1), torch.tensor(t),
                                        None if w is None else torch.tensor(w), ignore_index=ignore)
    want.backward()
    for loss, grad in res.values():
        np.testing.assert_allclose(loss, want.item(), rtol=1e-5)
        np.testing.assert_allclose(grad, xt.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_nll_loss_of_only_ignored_targets_is_nan_on_a_device(stand_in):
    want = torch.nn.functional.nll_loss(torch.zeros(2, 3), torch.tensor([1, 1]), ignore_index=1)
    with B.counting() as c:
        got = F.nll_loss(ember.zeros(2, 3, device="cuda"), ember.tensor([1, 1], device="cuda"), ignore_index=1)
    assert c.syncs == 0
    assert np.isnan(want.item()) and np.isnan(got.item())


def _ownership_scenarios():
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "autograd",
                        "test_gradient_ownership.py")
    spec = importlib.util.spec_from_file_location("_gradient_ownership", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.SCENARIOS


@pytest.mark.parametrize("scenario", _ownership_scenarios(), ids=lambda f: f.__name__[1:])
def test_device_leaf_grads_alias_nothing_torch_does_not(stand_in, scenario):
    """The engine keeps a device gradient only it holds without a copy (B.sole_array), as on the CPU: each
    reachable tensor scaled in place by its own factor shows any alias torch does not have (the scenarios of
    tests/autograd/test_gradient_ownership.py, ember's tensors made on the stand-in)."""
    outs = {}
    for lib, dev in ((ember, "cuda"), (torch, "cpu")):
        lib.set_default_device(dev)
        try:
            ts = scenario(lib)
        finally:
            lib.set_default_device(None)
        with lib.no_grad():
            for k, t in enumerate(ts):
                t.mul_(k + 2.0)
        outs[lib] = ts
    for k, (e, t) in enumerate(zip(outs[ember], outs[torch])):
        assert e.device.type == "cuda"
        np.testing.assert_allclose(e.cpu().numpy(), t.numpy(), rtol=1e-5, atol=1e-6, err_msg=f"tensor {k}")
