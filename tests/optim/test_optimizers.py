"""Optimizers against torch.optim: same weights, same data → same parameter trajectories."""
import numpy as np
import pytest

from oracle import torch, ember, to_np

rng = np.random.default_rng(0)
W0 = rng.standard_normal((5, 4)).astype(np.float32) * 0.5
B0 = rng.standard_normal(5).astype(np.float32) * 0.1
X = rng.standard_normal((16, 4)).astype(np.float32)
Y = rng.standard_normal((16, 5)).astype(np.float32)

CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, maximize=False)),
    ("SGD", dict(lr=0.01, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, betas=(0.5, 0.9), maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.2)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.01)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.01)),
]


def _trajectory(lib, name, kwargs, steps=50, groups=False):
    w = lib.nn.Parameter(lib.tensor(W0.copy()))
    b = lib.nn.Parameter(lib.tensor(B0.copy()))
    x, y = lib.tensor(X), lib.tensor(Y)
    params = [{"params": [w]}, {"params": [b], "lr": kwargs.get("lr", 0.01) * 0.5}] if groups else [w, b]
    opt = getattr(lib.optim, name)(params, **kwargs)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x @ w.t() + b - y) ** 2).mean() + (w.abs().sum() * 0.01)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return to_np(w), to_np(b), losses, opt


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_trajectory_matches_torch(name, kwargs):
    we, be, le, _ = _trajectory(ember, name, kwargs)
    wt, bt, lt, _ = _trajectory(torch, name, kwargs)
    np.testing.assert_allclose(le, lt, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(we, wt, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(be, bt, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop"])
def test_param_groups_with_own_options(name):
    kw = dict(lr=0.02, momentum=0.5) if name != "Adam" else dict(lr=0.02)
    we, be, _, oe = _trajectory(ember, name, kw, steps=20, groups=True)
    wt, bt, _, ot = _trajectory(torch, name, kw, steps=20, groups=True)
    np.testing.assert_allclose(we, wt, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(be, bt, rtol=1e-4, atol=1e-5)
    assert repr(oe) == repr(ot)


@pytest.mark.parametrize("name,kwargs", [("Adam", dict(lr=0.01, amsgrad=True)), ("SGD", dict(lr=0.1, momentum=0.9)),
                                         ("NAdam", dict(lr=0.01)), ("Adagrad", dict(lr=0.1))])
def test_state_dict_moves_between_torch_and_ember(name, kwargs):
    # 10 steps in torch, continue 10 in ember from torch's state; equals 20 steps in torch
    _, _, _, ot = _trajectory(torch, name, kwargs, steps=10)
    sd = ot.state_dict()
    w = ember.nn.Parameter(ember.tensor(to_np(ot.param_groups[0]["params"][0])))
    b = ember.nn.Parameter(ember.tensor(to_np(ot.param_groups[0]["params"][1])))
    oe = getattr(ember.optim, name)([w, b], **kwargs)
    oe.load_state_dict(sd)
    x, y = ember.tensor(X), ember.tensor(Y)
    for _ in range(10):
        oe.zero_grad()
        (((x @ w.t() + b - y) ** 2).mean() + w.abs().sum() * 0.01).backward()
        oe.step()
    wt, bt, _, ot20 = _trajectory(torch, name, kwargs, steps=20)
    np.testing.assert_allclose(to_np(w), wt, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(b), bt, rtol=1e-4, atol=1e-5)
    # and back: ember's state dict loads into torch with the same keys and values
    se = oe.state_dict()
    assert se["param_groups"][0].keys() == ot20.state_dict()["param_groups"][0].keys()
    assert set(se["state"][0]) == set(ot20.state_dict()["state"][0])
    t2 = getattr(torch.optim, name)([torch.nn.Parameter(torch.tensor(to_np(w))),
                                     torch.nn.Parameter(torch.tensor(to_np(b)))], **kwargs)
    t2.load_state_dict({"state": {k: {kk: torch.tensor(to_np(vv)) for kk, vv in v.items()} for k, v in
                                  se["state"].items()}, "param_groups": se["param_groups"]})
    for k, v in ot20.state_dict()["state"].items():
        for kk, vv in v.items():
            np.testing.assert_allclose(to_np(t2.state_dict()["state"][k][kk]), to_np(vv), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("ctor", [
    lambda lib, p: lib.optim.SGD(p, lr=-1), lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=-0.5),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, nesterov=True), lambda lib, p: lib.optim.Adam(p, betas=(1.0, 0.9)),
    lambda lib, p: lib.optim.Adam(p, eps=-1), lambda lib, p: lib.optim.Adam([]),
    lambda lib, p: lib.optim.SGD([{"params": p}, {"params": p}], lr=0.1),
    lambda lib, p: lib.optim.RMSprop(p, alpha=-1), lambda lib, p: lib.optim.Adadelta(p, rho=2.0),
])
def test_argument_errors_match_torch(ctor):
    msgs = []
    for lib in (ember, torch):
        p = [lib.nn.Parameter(lib.zeros(2))]
        with pytest.raises(ValueError) as ei:
            ctor(lib, p)
        msgs.append(str(ei.value))
    assert msgs[0] == msgs[1]


def test_repr_zero_grad_and_closure():
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.Adam([p], lr=0.1)
        p.grad = lib.ones(3)
        opt.zero_grad(set_to_none=False)
        assert p.grad is not None and float(p.grad.sum()) == 0
        opt.zero_grad()
        assert p.grad is None

        def closure():
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss
        assert float(opt.step(closure)) == 3.0
    assert repr(ember.optim.Adam([ember.nn.Parameter(ember.ones(1))], lr=0.1)) == \
        repr(torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], lr=0.1))


def test_step_hooks_run_in_order():
    calls = []
    p = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    h = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    p.grad = ember.ones(2)
    opt.step()
    h.remove()
    opt.step()
    assert calls == ["pre", "post", "pre"]
