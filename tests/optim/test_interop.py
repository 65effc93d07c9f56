"""Optimizer state against real torch: load_state_dict group keys, add_param_group mid-run, and checkpoints
(model + optimizer state) moving through ember.save/torch.load and torch.save/ember.load mid-training."""
import numpy as np
import pytest

from oracle import torch, ember, to_np

rng = np.random.default_rng(1)
X = rng.standard_normal((12, 4)).astype(np.float32)
Y = rng.standard_normal((12, 3)).astype(np.float32)
W0 = (rng.standard_normal((3, 4)) * 0.3).astype(np.float32)
B0 = (rng.standard_normal(3) * 0.1).astype(np.float32)


def _model(lib):
    m = lib.nn.Sequential(lib.nn.Linear(4, 3))
    with lib.no_grad():
        m[0].weight.copy_(lib.tensor(W0))
        m[0].bias.copy_(lib.tensor(B0))
    return m


def _train(lib, model, opt, steps):
    x, y = lib.tensor(X), lib.tensor(Y)
    for _ in range(steps):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()


def _params(model):
    return {k: to_np(v) for k, v in model.state_dict().items()}


def _assert_params_equal(a, b, rtol=1e-5, atol=1e-6):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=atol, err_msg=k)


def _group_options(opt):
    return [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]


def test_load_state_dict_keeps_extra_group_keys_and_fills_missing_ones():
    out = []
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.ones(2))
        src = lib.optim.Adam([p], lr=0.1)
        sd = src.state_dict()
        sd["param_groups"][0]["initial_lr"] = 0.1  # what an lr scheduler adds
        sd["param_groups"][0]["my_tag"] = "x"
        for key in ("maximize", "foreach", "capturable", "differentiable", "fused", "amsgrad"):
            del sd["param_groups"][0][key]  # an older checkpoint without these options
        dst = lib.optim.Adam([lib.nn.Parameter(lib.ones(2))], lr=0.5, maximize=True)
        dst.load_state_dict(sd)
        out.append((_group_options(dst), sorted(dst.state_dict()["param_groups"][0])))
    assert out[0] == out[1]


def test_load_state_dict_size_errors_match_torch():
    msgs = []
    for lib in (ember, torch):
        a, b = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(1))
        sd = lib.optim.SGD([a, b], lr=0.1).state_dict()
        errs = []
        for params in ([{"params": [a]}, {"params": [b]}], [a]):
            with pytest.raises(ValueError) as ei:
                lib.optim.SGD(params, lr=0.1).load_state_dict(sd)
            errs.append(str(ei.value))
        msgs.append(errs)
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("name,kwargs", [("Adam", dict(lr=0.05)), ("SGD", dict(lr=0.05, momentum=0.9)),
                                         ("RMSprop", dict(lr=0.01))])
def test_add_param_group_after_steps(name, kwargs):
    res = []
    for lib in (ember, torch):
        m = _model(lib)
        opt = getattr(lib.optim, name)([m[0].weight], **kwargs)
        _train(lib, m, opt, 4)
        opt.add_param_group({"params": [m[0].bias], "lr": kwargs["lr"] * 0.5})
        _train(lib, m, opt, 4)
        sd = opt.state_dict()
        res.append((_params(m), _group_options(opt), [g["params"] for g in sd["param_groups"]],
                    {k: sorted(v) for k, v in sd["state"].items()}))
    _assert_params_equal(res[0][0], res[1][0])
    assert res[0][1:] == res[1][1:]


def test_add_param_group_errors_match_torch():
    msgs = []
    for lib in (ember, torch):
        w = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.Adam([w])
        errs = []
        for group in ({"params": [w]}, {"params": {lib.nn.Parameter(lib.ones(1))}}):
            with pytest.raises((ValueError, TypeError)) as ei:
                opt.add_param_group(group)
            errs.append((ei.type, str(ei.value)))
        msgs.append(errs)
    assert msgs[0] == msgs[1]


def _checkpoint(lib, model, opt, path):
    lib.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, path)


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_checkpoint_from_ember_continues_in_torch(tmp_path, amsgrad):
    # 5 ember steps -> ember.save -> torch.load(weights_only=True) -> 5 torch steps == 10 torch-only steps
    me = _model(ember)
    oe = ember.optim.Adam(me.parameters(), lr=0.02, amsgrad=amsgrad)
    _train(ember, me, oe, 5)
    _checkpoint(ember, me, oe, tmp_path / "ck.pt")
    ck = torch.load(tmp_path / "ck.pt", weights_only=True)
    assert ck["epoch"] == 3
    mt = torch.nn.Sequential(torch.nn.Linear(4, 3))
    mt.load_state_dict(ck["model"])
    ot = torch.optim.Adam(mt.parameters(), lr=0.02, amsgrad=amsgrad)
    ot.load_state_dict(ck["optim"])
    assert ot.state[mt[0].weight]["step"].dtype == torch.float32
    _train(torch, mt, ot, 5)

    ref = _model(torch)
    oref = torch.optim.Adam(ref.parameters(), lr=0.02, amsgrad=amsgrad)
    _train(torch, ref, oref, 10)
    _assert_params_equal(_params(mt), _params(ref))
    for k, v in oref.state_dict()["state"].items():
        for kk, vv in v.items():
            np.testing.assert_allclose(to_np(ot.state_dict()["state"][k][kk]), to_np(vv), rtol=1e-5, atol=1e-7)


def _torch_ember_torch(name: str, kwargs: dict, leg, tmp_path):
    """``leg(lib, model, opt)`` in torch, then in ember from torch's checkpoint, then in torch again from ember's;
    returns the ember model, the last torch model and optimizer, and a torch reference that ran two legs."""
    mt = _model(torch)
    ot = getattr(torch.optim, name)(mt.parameters(), **kwargs)
    leg(torch, mt, ot)
    _checkpoint(torch, mt, ot, tmp_path / "a.pt")
    ck = ember.load(tmp_path / "a.pt")
    me = ember.nn.Sequential(ember.nn.Linear(4, 3))
    me.load_state_dict(ck["model"])
    oe = getattr(ember.optim, name)(me.parameters(), **kwargs)
    oe.load_state_dict(ck["optim"])
    leg(ember, me, oe)
    _checkpoint(ember, me, oe, tmp_path / "b.pt")
    ck2 = torch.load(tmp_path / "b.pt", weights_only=True)
    mt2 = torch.nn.Sequential(torch.nn.Linear(4, 3))
    mt2.load_state_dict(ck2["model"])
    ot2 = getattr(torch.optim, name)(mt2.parameters(), **kwargs)
    ot2.load_state_dict(ck2["optim"])
    leg(torch, mt2, ot2)
    ref = _model(torch)
    oref = getattr(torch.optim, name)(ref.parameters(), **kwargs)
    leg(torch, ref, oref)
    leg(torch, ref, oref)
    return me, mt2, ot2, ref, oref


def test_adam_checkpoint_from_torch_continues_in_ember_and_back(tmp_path):
    # 4 torch steps -> torch.save -> ember.load -> 4 ember steps -> ember.save -> torch.load -> 4 torch steps
    kwargs = dict(lr=0.02, weight_decay=0.01)
    me, mt2, ot2, ref, oref = _torch_ember_torch("Adam", kwargs, lambda lib, m, o: _train(lib, m, o, 4), tmp_path)
    _assert_params_equal(_params(me), _params(ref))
    _train(torch, ref, oref, 4)
    _assert_params_equal(_params(mt2), _params(ref))
    assert float(ot2.state[mt2[0].weight]["step"]) == 12.0


def test_lbfgs_state_with_tensor_lists_crosses_both_ways(tmp_path):
    def run(lib, model, opt, steps):
        x, y = lib.tensor(X), lib.tensor(Y)

        def closure():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss
        for _ in range(steps):
            opt.step(closure)

    kwargs = dict(max_iter=3, history_size=4)
    me, mt2, ot2, ref, oref = _torch_ember_torch("LBFGS", kwargs, lambda lib, m, o: run(lib, m, o, 1), tmp_path)
    _assert_params_equal(_params(me), _params(ref), rtol=1e-4, atol=1e-5)
    run(torch, ref, oref, 1)
    _assert_params_equal(_params(mt2), _params(ref), rtol=1e-4, atol=1e-5)
    assert ot2.state[mt2[0].weight]["n_iter"] == oref.state[ref[0].weight]["n_iter"]


def test_named_parameters_give_param_names_like_torch(tmp_path):
    out = []
    for lib in (ember, torch):
        m = _model(lib)
        opt = lib.optim.SGD(m.named_parameters(), lr=0.1, momentum=0.9)
        _train(lib, m, opt, 3)
        sd = opt.state_dict()
        with pytest.raises(ValueError) as ei:
            opt.add_param_group({"params": [lib.nn.Parameter(lib.ones(1))]})
        with pytest.raises(ValueError) as ei2:
            lib.optim.SGD([("a", lib.nn.Parameter(lib.ones(1))), lib.nn.Parameter(lib.ones(1))], lr=0.1)
        out.append((_params(m), sd["param_groups"], str(ei.value), str(ei2.value)))
    _assert_params_equal(out[0][0], out[1][0])
    assert out[0][1:] == out[1][1:]
    # names survive the checkpoint into torch, and a loaded state without names keeps the optimizer's own
    m = _model(ember)
    opt = ember.optim.SGD(m.named_parameters(), lr=0.1)
    ember.save(opt.state_dict(), tmp_path / "o.pt")
    assert torch.load(tmp_path / "o.pt", weights_only=True)["param_groups"][0]["param_names"] == ["0.weight", "0.bias"]
    plain = ember.optim.SGD(_model(ember).parameters(), lr=0.1).state_dict()
    opt.load_state_dict(plain)
    assert opt.param_groups[0]["param_names"] == ["0.weight", "0.bias"]
