"""torch's device semantics on the stand-in cuda device (NOTE [cuda stand-in] in ember/_backend.py): moves,
factories, mixing errors, modules, optimizers, serialization, data loading and torch.cuda's answers. Values on
the stand-in are NumPy's, so every result must equal the CPU run's; torch (CPU) is the oracle for messages and
for reading checkpoints ember saves from cuda."""
from __future__ import annotations

import io

import numpy as np
import pytest
import torch

import ember
from ember import _backend as B

CUDA = ember.device("cuda", 0)
MIXED = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def _host(t) -> np.ndarray:
    return t.detach().cpu().numpy()


# ---------------------------------------------------------------- without a cuda device: as a CPU-only torch
def test_no_cuda_without_stand_in_or_cupy() -> None:
    assert ember.cuda.is_available() is torch.cuda.is_available() is False
    assert ember.cuda.device_count() == 0
    for lib in (ember, torch):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            lib.ones(2).cuda()
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            lib.zeros(2, device="cuda")


# ---------------------------------------------------------------- tensors
def test_moves_and_device_attributes(stand_in) -> None:
    x = ember.arange(6.0).reshape(2, 3)
    for y in (x.cuda(), x.to("cuda"), x.to(CUDA), x.to("cuda:0"), x.cuda(0), x.to(device="cuda")):
        assert y.device == CUDA and y.is_cuda and not y.is_cpu and y.get_device() == 0
        assert str(y.device) == "cuda:0"
        np.testing.assert_array_equal(_host(y), _host(x))
    assert x.device == ember.device("cpu") and x.get_device() == -1
    y = x.cuda()
    assert y.cuda() is y and y.to("cuda") is y and x.cpu() is x
    back = y.cpu()
    assert back.device == ember.device("cpu") and not back.is_cuda
    z = x.to("cuda", ember.float64)
    assert z.device == CUDA and z.dtype == ember.float64
    assert y.to(ember.float16).device == CUDA
    assert y.double().device == CUDA and y.long().device == CUDA
    assert x.pin_memory() is x and not x.is_pinned()


def test_values_leave_the_device_as_torch_allows(stand_in) -> None:
    y = ember.tensor([[1.5, 2.0]], device="cuda")
    assert y[0, 1].item() == 2.0 and y.tolist() == [[1.5, 2.0]] and float(y[0, 0]) == 1.5
    with pytest.raises(TypeError) as err:
        y.numpy()
    assert str(err.value) == ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
                              "to host memory first.")
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        np.asarray(y)
    np.testing.assert_array_equal(y.numpy(force=True), [[1.5, 2.0]])
    assert repr(y) == "tensor([[1.5000, 2.0000]], device='cuda:0')"
    w = ember.ones(2, device="cuda", requires_grad=True)
    assert repr(w * 2) == "tensor([2., 2.], device='cuda:0', grad_fn=<MulBackward0>)"
    assert repr(ember.zeros(0, device="cuda")) == "tensor([], device='cuda:0')"


def test_mixing_devices_raises_torchs_error(stand_in) -> None:
    a = ember.ones(2, 3, device="cuda")
    b = ember.ones(2, 3)
    for fn in (lambda: a + b, lambda: b + a, lambda: a @ b.T, lambda: ember.cat([a, b]), lambda: ember.where(a > 0, a, b),
               lambda: a.requires_grad_() * b):
        with pytest.raises(RuntimeError) as err:
            fn()
        assert str(err.value) == MIXED
    # Python numbers and 0-d CPU tensors enter a cuda op as scalars, as torch's
    s = ember.tensor(2.0, requires_grad=True)
    out = a * s + 1
    assert out.device == CUDA
    out.sum().backward()
    assert s.grad.device == ember.device("cpu") and s.grad.item() == 6.0


def test_autograd_through_moves(stand_in) -> None:
    x = ember.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.cuda()
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.device == ember.device("cpu")
    np.testing.assert_array_equal(_host(x.grad), [2.0, -4.0, 6.0])
    w = ember.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    (w.cpu() ** 2).sum().backward()
    assert w.grad.device == CUDA
    np.testing.assert_array_equal(_host(w.grad), [2.0, 4.0])


# ---------------------------------------------------------------- factories
@pytest.mark.parametrize("make", [
    lambda d: ember.zeros(2, 3, device=d), lambda d: ember.ones(4, dtype=ember.int32, device=d),
    lambda d: ember.full((2,), 7.5, device=d), lambda d: ember.eye(3, device=d), lambda d: ember.arange(5, device=d),
    lambda d: ember.linspace(0, 1, 5, device=d), lambda d: ember.tensor([1, 2], device=d),
    lambda d: ember.empty(3, device=d).fill_(1), lambda d: ember.randn(3, 2, device=d),
    lambda d: ember.rand(4, device=d), lambda d: ember.randint(0, 9, (5,), device=d), lambda d: ember.randperm(6, device=d),
    lambda d: ember.as_tensor(np.ones(2), device=d), lambda d: ember.scalar_tensor(3.0, device=d),
], ids=["zeros", "ones", "full", "eye", "arange", "linspace", "tensor", "empty", "randn", "rand", "randint", "randperm",
        "as_tensor", "scalar_tensor"])
def test_factories_on_cuda(stand_in, make) -> None:
    ember.manual_seed(3)
    on_cpu = make("cpu")
    ember.manual_seed(3)
    on_cuda = make("cuda")
    assert on_cuda.device == CUDA and on_cuda.dtype == on_cpu.dtype
    np.testing.assert_array_equal(_host(on_cuda), _host(on_cpu))


def test_like_and_new_factories_follow_the_device(stand_in) -> None:
    y = ember.ones(2, 2, device="cuda")
    for t in (ember.zeros_like(y), ember.ones_like(y), ember.empty_like(y), ember.full_like(y, 2), ember.rand_like(y),
              ember.randn_like(y), ember.randint_like(y, 5), y.new_zeros(3), y.new_ones(3), y.new_empty(3),
              y.new_full((3,), 1.0), y.new_tensor([1.0])):
        assert t.device == CUDA
    assert ember.zeros_like(y, device="cpu").device == ember.device("cpu")
    assert ember.zeros_like(ember.ones(2), device="cuda").device == CUDA


# ---------------------------------------------------------------- modules and optimizers
def _model(device=None):
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(4, 8, device=device), ember.nn.ReLU(), ember.nn.Linear(8, 3, device=device))


@pytest.mark.parametrize("opt", [
    lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9), lambda p: ember.optim.Adam(p, lr=1e-2),
    lambda p: ember.optim.AdamW(p, lr=1e-2, weight_decay=0.1), lambda p: ember.optim.RMSprop(p, lr=1e-2),
], ids=["SGD", "Adam", "AdamW", "RMSprop"])
def test_training_on_cuda_equals_cpu(stand_in, opt) -> None:
    def train(device, move):
        model = _model(None if move else device)
        if move:
            model.to(device)
        o = opt(model.parameters())
        sched = ember.optim.lr_scheduler.StepLR(o, 1, gamma=0.5)
        rng = np.random.default_rng(0)
        x = ember.tensor(rng.standard_normal((6, 4)).astype(np.float32)).to(device, non_blocking=True)
        t = ember.tensor([0, 1, 2, 0, 1, 2]).to(device)
        for _ in range(3):
            o.zero_grad()
            loss = ember.nn.functional.cross_entropy(model(x), t)
            loss.backward()
            o.step()
            sched.step()
        return model, loss

    m_cpu, l_cpu = train("cpu", False)
    for move in (False, True):
        m_dev, l_dev = train("cuda", move)
        assert l_dev.device == CUDA
        for p, q in zip(m_dev.parameters(), m_cpu.parameters()):
            assert p.device == CUDA and p.grad.device == CUDA
            np.testing.assert_allclose(_host(p), _host(q), rtol=1e-6, atol=1e-7)
    m_dev.cpu()
    assert all(p.device == ember.device("cpu") for p in m_dev.parameters())
    m_dev.cuda()
    assert all(p.device == CUDA for p in m_dev.parameters())


def test_module_buffers_move(stand_in) -> None:
    bn = ember.nn.BatchNorm1d(3).cuda()
    assert bn.running_mean.device == CUDA and bn.weight.device == CUDA
    out = bn(ember.randn(4, 3, device="cuda"))
    assert out.device == CUDA and bn.running_var.device == CUDA
    assert ember.nn.LayerNorm(3, device="cuda").weight.device == CUDA
    assert ember.nn.Embedding(5, 2, device="cuda").weight.device == CUDA
    assert ember.nn.Conv2d(1, 2, 3, device="cuda").weight.device == CUDA


# ---------------------------------------------------------------- save / load
def test_save_load_map_location(stand_in) -> None:
    sd = {"w": ember.arange(6.0, device="cuda").reshape(2, 3), "b": ember.ones(2)}
    buf = io.BytesIO()
    ember.save(sd, buf)
    raw = buf.getvalue()
    back = ember.load(io.BytesIO(raw))
    assert back["w"].device == CUDA and back["b"].device == ember.device("cpu")
    on_cpu = ember.load(io.BytesIO(raw), map_location="cpu")
    assert on_cpu["w"].device == ember.device("cpu")
    np.testing.assert_array_equal(on_cpu["w"].numpy(), np.arange(6.0).reshape(2, 3))
    moved = ember.load(io.BytesIO(raw), map_location={"cpu": "cuda:0"})
    assert moved["b"].device == CUDA
    assert ember.load(io.BytesIO(raw), map_location=ember.device("cuda"))["b"].device == CUDA
    # torch reads the checkpoint as one saved on cuda:0 (a CPU-only torch needs map_location)
    t = torch.load(io.BytesIO(raw), map_location="cpu")
    np.testing.assert_array_equal(t["w"].numpy(), np.arange(6.0).reshape(2, 3))
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        torch.load(io.BytesIO(raw))
    B.enable_stand_in(False)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
        ember.load(io.BytesIO(raw))


def test_optimizer_state_loads_onto_the_parameters_device(stand_in) -> None:
    model = _model()
    o = ember.optim.Adam(model.parameters())
    model(ember.randn(2, 4)).sum().backward()
    o.step()
    state = o.state_dict()
    model.cuda()
    o2 = ember.optim.Adam(model.parameters())
    o2.load_state_dict(state)
    for s in o2.state.values():
        assert s["exp_avg"].device == CUDA and s["exp_avg_sq"].device == CUDA


# ---------------------------------------------------------------- data loading
def test_dataloader_batches_to_cuda(stand_in) -> None:
    ds = ember.utils.data.TensorDataset(ember.arange(10.0).reshape(5, 2), ember.arange(5))
    for pin in (False, True):
        loader = ember.utils.data.DataLoader(ds, batch_size=2, pin_memory=pin)
        for x, y in loader:
            x, y = x.to("cuda", non_blocking=True), y.cuda(non_blocking=True)
            assert x.device == CUDA and y.device == CUDA


# ---------------------------------------------------------------- torch.cuda
def test_torch_cuda_answers(stand_in) -> None:
    c = ember.cuda
    assert c.is_available() and c.device_count() == 1 and c.current_device() == 0
    assert isinstance(c.get_device_name(), str) and c.get_device_capability(0) == (9, 0)
    c.set_device(0)
    c.synchronize()
    c.empty_cache()
    assert c.memory_allocated() == 0 and c.max_memory_allocated() == 0
    c.reset_peak_memory_stats()
    c.manual_seed(5)
    assert c.initial_seed() == 5
    c.manual_seed_all(6)
    assert c.initial_seed() == 6
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ember.zeros(1, device="cuda:1")
    device = "cuda" if ember.cuda.is_available() else "cpu"
    assert ember.ones(1, device=device).is_cuda
    assert ember.accelerator.is_available() and ember.accelerator.device_count() == 1
    assert ember.accelerator.current_accelerator() == ember.device("cuda")


def test_stand_in_switches_back_off() -> None:
    B.enable_stand_in(True, strict=True)
    assert ember.cuda.is_available()
    B.enable_stand_in(False)
    assert not ember.cuda.is_available() and not ember.cuda.is_initialized()


# ---------------------------------------------------------------- the host fallback (NOTE [host fallback])
def test_kernels_that_refuse_device_arrays_run_on_the_host(stand_in) -> None:
    from ember.ops._op import Op

    class _HostOnly(Op):
        """d (x + ones) = grad"""

        _alias = True  # a test op: not in the registry

        @staticmethod
        def forward(ctx, self):
            return self + np.ones(self.shape, self.dtype)  # a NumPy buffer: the strict stand-in refuses it

        def backward(ctx, grad):
            return grad * 2

    B.host_fallbacks.discard("_HostOnlyBackward0")
    x = ember.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    y = _HostOnly.apply(x)
    assert y.device == CUDA and "_HostOnlyBackward0" in B.host_fallbacks
    np.testing.assert_array_equal(_host(y), [2.0, 3.0])
    y.sum().backward()
    assert x.grad.device == CUDA
    np.testing.assert_array_equal(_host(x.grad), [2.0, 2.0])
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x + ember.ones(2)  # user code still gets torch's error


def test_streams_and_events(stand_in) -> None:
    c = ember.cuda
    s = c.Stream()
    assert s.device == CUDA and s != c.default_stream()
    assert c.current_stream() == c.default_stream() == c.default_stream(0)
    with c.stream(s):
        assert c.current_stream() == s
        y = ember.ones(3, device="cuda") * 2
    assert c.current_stream() == c.default_stream()
    start, end = c.Event(enable_timing=True), c.Event(enable_timing=True)
    start.record()
    (y @ y).item()
    end.record()
    end.synchronize()
    assert start.query() and start.elapsed_time(end) >= 0
    s.wait_stream(c.current_stream())
    s.synchronize()
    assert s.query()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        c.Event().elapsed_time(end)
