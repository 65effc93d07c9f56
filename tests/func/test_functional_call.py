"""functional_call and stack_module_state against torch.func."""
import numpy as np
import pytest

from oracle import ember, same_error, torch
from func_util import rand

X = rand(5, 3).astype(np.float32)


def _linear(lib, seed=0):
    lib.manual_seed(seed)
    m = lib.nn.Linear(3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(rand(2, 3, seed=seed).astype(np.float32)))
        m.bias.copy_(lib.tensor(rand(2, seed=seed).astype(np.float32)))
    return m


def test_substitutes_and_restores():
    for lib in (ember, torch):
        m = _linear(lib)
        w = m.weight
        out = lib.func.functional_call(m, {"weight": lib.zeros(2, 3)}, (lib.tensor(X),))
        np.testing.assert_allclose(out.detach().numpy(), np.broadcast_to(m.bias.detach().numpy(), (5, 2)))
        assert m.weight is w
        out2 = lib.func.functional_call(m, ({"weight": lib.ones(2, 3)}, {"bias": lib.zeros(2)}), lib.tensor(X),
                                        strict=True)
        np.testing.assert_allclose(out2.numpy(), np.repeat(X.sum(1, keepdims=True), 2, 1), rtol=1e-6)


def test_restores_on_error():
    m = _linear(ember)
    w = m.weight

    def boom(mod, args):
        raise ValueError("boom")
    m.register_forward_pre_hook(boom)
    with pytest.raises(ValueError):
        ember.func.functional_call(m, {"weight": ember.zeros(2, 3)}, (ember.tensor(X),))
    assert m.weight is w


def test_gradients_flow_to_substituted_tensors():
    grads = []
    for lib in (ember, torch):
        m = _linear(lib)
        p = {k: v.detach().clone().requires_grad_() for k, v in m.named_parameters()}
        lib.func.functional_call(m, p, (lib.tensor(X),)).pow(2).sum().backward()
        grads.append([p[k].grad.numpy() for k in ("weight", "bias")])
        assert m.weight.grad is None
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_tied_weights():
    for lib in (ember, torch):
        s = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 2, bias=False))
        s[1].weight = s[0].weight
        out = lib.func.functional_call(s, {"0.weight": lib.eye(2), "0.bias": lib.zeros(2)}, (lib.ones(1, 2),))
        np.testing.assert_allclose(out.detach().numpy(), [[1.0, 1.0]])
        untied = lib.func.functional_call(s, {"0.weight": lib.eye(2), "0.bias": lib.zeros(2)}, (lib.ones(1, 2),),
                                          tie_weights=False)
        assert not np.allclose(untied.detach().numpy(), [[1.0, 1.0]])
    same_error(lambda lib: _tied_call(lib))


def _tied_call(lib):
    s = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 2))
    s[1].weight = s[0].weight
    lib.func.functional_call(s, {"0.weight": lib.eye(2), "1.weight": lib.eye(2) * 2}, (lib.ones(1, 2),))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.func.functional_call(lib.nn.Linear(3, 2), {"weight": lib.zeros(2, 3)}, (lib.ones(1, 3),),
                                         strict=True),
    lambda lib: lib.func.functional_call(lib.nn.Linear(3, 2), {"weight": lib.zeros(2, 3), "bias": lib.zeros(2),
                                                               "foo": lib.zeros(1)}, (lib.ones(1, 3),), strict=True),
    lambda lib: lib.func.functional_call(lib.nn.Linear(3, 2), ({"bias": lib.zeros(2)}, {"bias": lib.zeros(2)}),
                                         (lib.ones(1, 3),)),
    lambda lib: lib.func.functional_call(lib.nn.Linear(3, 2), 3, (lib.ones(1, 3),)),
    lambda lib: lib.func.stack_module_state([]),
    lambda lib: lib.func.stack_module_state([lib.nn.Linear(3, 2), lib.nn.Linear(3, 2).eval()]),
    lambda lib: lib.func.stack_module_state([lib.nn.Linear(3, 2), lib.nn.Linear(3, 2).requires_grad_(False)]),
])
def test_errors_match_torch(fn):
    same_error(fn)


def test_stack_module_state_like_torch():
    for lib in (ember, torch):
        models = [_linear(lib, s) for s in range(3)]
        for m in models:
            m.bias.requires_grad_(False)
        params, buffers = lib.func.stack_module_state(models)
        assert set(params) == {"weight", "bias"} and buffers == {}
        assert params["weight"].shape == (3, 2, 3) and params["weight"].is_leaf
        assert params["weight"].requires_grad and not params["bias"].requires_grad
        np.testing.assert_allclose(params["weight"][1].detach().numpy(), models[1].weight.detach().numpy())
        bn_params, bn_buffers = lib.func.stack_module_state([lib.nn.BatchNorm1d(3) for _ in range(2)])
        assert bn_buffers["running_var"].shape == (2, 3) and not bn_buffers["running_var"].requires_grad


def test_ensemble_with_vmap_matches_torch():
    res = []
    for lib in (ember, torch):
        models = [_linear(lib, s) for s in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        base = models[0]
        out = lib.func.vmap(lambda p, b, x: lib.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(
            params, buffers, lib.tensor(X))
        res.append(out.detach().numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-5, atol=1e-6)


def test_stateless_alias():
    assert ember.nn.utils.stateless.functional_call is not None
