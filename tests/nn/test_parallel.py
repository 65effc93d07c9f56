"""nn.DataParallel against torch's on a CPU-only machine: a transparent wrapper."""
import numpy as np
import pytest

from oracle import assert_close, ember, same_error, torch


def _wrapped(lib, **kw):
    lib.manual_seed(0)
    inner = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.nn.ReLU())
    return inner, lib.nn.DataParallel(inner, **kw)


@pytest.mark.parametrize("kw", [{}, {"device_ids": [0, 1], "output_device": 1, "dim": 1}, {"device_ids": None}])
def test_wraps_module_like_torch(kw):
    (ei, e), (ti, t) = _wrapped(ember, **kw), _wrapped(torch, **kw)
    assert e.module is ei and t.module is ti
    assert e.device_ids == t.device_ids == []
    assert hasattr(e, "dim") == hasattr(t, "dim")
    assert repr(e) == repr(t)
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert isinstance(e, ember.nn.Module) and type(e) is ember.nn.parallel.DataParallel


def test_forward_backward_and_state_dict_through_wrapper():
    (_, e), (ti, t) = _wrapped(ember), _wrapped(torch)
    e.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})  # 'module.' keys load into the wrapper
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    ye, yt = e(ember.tensor(x)), t(torch.tensor(x))
    assert_close(ye, yt)
    ye.sum().backward()
    yt.sum().backward()
    for (n, p), (_, q) in zip(e.named_parameters(), t.named_parameters()):
        assert_close(p.grad, q.grad, what=n)
    for (n, b), (_, c) in zip(e.named_buffers(), t.named_buffers()):
        assert_close(b, c, what=n)
    # the inner module's own state dict (no prefix) loads into the bare model, as usual after training with DP
    bare = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.BatchNorm1d(3), ember.nn.ReLU())
    bare.load_state_dict(e.module.state_dict())
    assert_close(bare.eval()(ember.tensor(x)), ti.eval()(torch.tensor(x)))
    same_error(lambda lib: lib.nn.Linear(4, 3).load_state_dict(_wrapped(lib)[1].state_dict()))


def test_kwargs_and_train_mode_pass_through():
    class Two(ember.nn.Module):
        def forward(self, a, *, scale=1.0):
            return a * scale, self.training

    dp = ember.nn.DataParallel(Two())
    out, training = dp(ember.ones(2), scale=3.0)
    assert out.tolist() == [3.0, 3.0] and training
    dp.eval()
    assert dp(ember.ones(1))[1] is False


def test_functional_data_parallel_needs_a_device():
    same_error(lambda lib: lib.nn.parallel.data_parallel(lib.nn.Linear(2, 2), lib.ones(1, 2)))
