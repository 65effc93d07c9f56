"""torch.amp.GradScaler against torch 2.13 on the CPU, step by step: scale, unscale_, inf/nan-skipped steps, the
scale's growth and backoff, state_dict, the error states, and the disabled CUDA scalers."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from oracle import ember, same_error, torch


def _setup(lib, growth_interval=3, init_scale=2.0 ** 4):
    w = lib.nn.Parameter(lib.tensor([[0.5, -1.0], [2.0, 0.25]]))
    b = lib.nn.Parameter(lib.tensor([0.1, -0.2]))
    opt = lib.optim.SGD([w, b], lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=init_scale, growth_factor=2.0, backoff_factor=0.25,
                                growth_interval=growth_interval)
    return w, b, opt, scaler


# inputs per step; a huge value makes the scaled loss overflow to inf (a skipped step, the scale backs off)
STEPS = [1.0, 2.0, 1e38, 0.5, 1.0, 3.0, float("nan"), 1.0, 2.0, 1.0, 1.0]


def _run(lib, unscale_first: bool):
    w, b, opt, scaler = _setup(lib)
    trace = []
    for v in STEPS:
        opt.zero_grad()
        x = lib.tensor([[v, 1.0]])
        with lib.autocast("cpu"):
            loss = ((x @ w + b) ** 2).sum()
        scaler.scale(loss).backward()
        if unscale_first:
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_([w, b], 10.0)
        scaler.step(opt)
        scaler.update()
        trace.append((scaler.get_scale(), scaler._get_growth_tracker(), w.detach().numpy().copy(),
                      w.grad.numpy().copy()))
    return trace, scaler


@pytest.mark.parametrize("unscale_first", [False, True])
def test_training_steps_match_torch(unscale_first) -> None:
    te, se = _run(ember, unscale_first)
    tt, st = _run(torch, unscale_first)
    for i, (e, t) in enumerate(zip(te, tt)):
        assert e[0] == t[0] and e[1] == t[1], (i, e[:2], t[:2])
        np.testing.assert_allclose(e[2], t[2], rtol=1e-2, atol=1e-3, err_msg=f"weights after step {i}")
        np.testing.assert_allclose(e[3], t[3], rtol=1e-2, atol=1e-3, err_msg=f"grads after step {i}")
    assert se.state_dict() == st.state_dict()


def test_scale_of_tensors_and_iterables() -> None:
    for lib in (ember, torch):
        s = lib.amp.GradScaler("cpu", init_scale=8.0)
        assert s.get_scale() == 8.0 and s.is_enabled()
        out = s.scale([lib.tensor(1.0), (lib.tensor([2.0]), lib.tensor(3.0))])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert [out[0].item(), out[1][0].item(), out[1][1].item()] == [8.0, 16.0, 24.0]
        assert out[0].dtype is lib.float32
        assert s.scale(lib.tensor(1.0).bfloat16()).dtype is lib.float32  # promoted by the float32 scale
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
            s.scale(3)


def test_error_states_match_torch() -> None:
    def fresh(lib):
        w, b, opt, scaler = _setup(lib)
        scaler.scale(((w @ lib.ones(2)) ** 2).sum()).backward()
        return opt, scaler

    same_error(lambda lib: _setup(lib)[3].step(_setup(lib)[2]))  # no scale() yet
    same_error(lambda lib: _setup(lib)[3].update())
    for lib in (ember, torch):
        opt, s = fresh(lib)
        s.unscale_(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this optimizer"):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update"):
            s.step(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
            s.unscale_(opt)
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            s.step(opt, closure=lambda: 0)
        with pytest.raises(AssertionError, match="A GradScaler instance may only be pickled"):
            pickle.dumps(s)
        s.update()
        s2 = pickle.loads(pickle.dumps(s))
        assert s2.get_scale() == s.get_scale()
        with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
            lib.amp.GradScaler("cpu", growth_factor=1.0)
        with pytest.raises(AssertionError, match="The backoff factor must be < 1.0."):
            lib.amp.GradScaler("cpu", backoff_factor=1.0)
        w = lib.nn.Parameter(lib.ones(2).half())
        opt = lib.optim.SGD([w], lr=0.1)
        s = lib.amp.GradScaler("cpu")
        s.scale((w * 2).sum()).backward()
        with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
            s.unscale_(opt)


def test_update_with_new_scale_and_state_dict() -> None:
    for lib in (ember, torch):
        w, b, opt, s = _setup(lib)
        s.scale((w.sum() + b.sum())).backward()
        s.step(opt)
        s.update(new_scale=4.0)
        assert s.get_scale() == 4.0
        s.scale(w.sum()).backward()
        s.step(opt)
        s.update(lib.tensor(2.0))
        assert s.get_scale() == 2.0
        sd = s.state_dict()
        assert sd == {"scale": 2.0, "growth_factor": 2.0, "backoff_factor": 0.25, "growth_interval": 3,
                      "_growth_tracker": 0}
        t = lib.amp.GradScaler("cpu")
        t.load_state_dict(sd)
        assert t.state_dict() == sd and t.get_scale() == 2.0
        with pytest.raises(RuntimeError, match="The source state dict is empty"):
            t.load_state_dict({})
        for setter, getter, v in (("set_growth_factor", "get_growth_factor", 3.0),
                                  ("set_backoff_factor", "get_backoff_factor", 0.1),
                                  ("set_growth_interval", "get_growth_interval", 7)):
            getattr(t, setter)(v)
            assert getattr(t, getter)() == v


def test_cuda_scalers_warn_and_disable_as_torch() -> None:
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                                             "Disabling."):
            s = lib.amp.GradScaler()
        assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
        with pytest.warns(FutureWarning, match=r"`torch.cuda.amp.GradScaler\(args...\)` is deprecated. Please use "
                                               r"`torch.amp.GradScaler\('cuda', args...\)` instead."):
            with pytest.warns(UserWarning, match="CUDA is not available"):
                s = lib.cuda.amp.GradScaler()
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([w], lr=0.5)
        loss = (w * 3).sum()
        assert s.scale(loss) is loss  # disabled: a pass-through
        loss.backward()
        s.unscale_(opt)
        s.step(opt)
        s.update()
        assert w.tolist() == [-0.5, -0.5]
        with pytest.warns(FutureWarning, match=r"`torch.cpu.amp.GradScaler\(args...\)` is deprecated"):
            assert lib.cpu.amp.GradScaler().is_enabled()
        assert not lib.amp.GradScaler("cpu", enabled=False).is_enabled()
