"""Layer, batch and group norm as one node each (NOTE [fused norms] in ember/ops/norms.py): torch's grad_fn names,
values, gradients and second gradients against torch; the fused node equals the composition it replaces (values,
gradients, create_graph formulas); running statistics as torch's."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import check, ember, torch

from ember.nn import functional as EF

F64, F32, F16 = np.float64, np.float32, np.float16


def _ln(shape, ns, affine=True):
    def fn(lib, x, w, b):
        return lib.nn.functional.layer_norm(x, ns, w if affine else None, b if affine else None, 1e-5)
    return fn, (shape, ns, ns)


def _bn(training, affine=True):
    def fn(lib, x, w, b):
        c = x.shape[1]
        rm = None if training == "none" else lib.linspace(-0.5, 0.5, c, dtype=x.dtype)
        rv = None if training == "none" else lib.linspace(0.5, 2.0, c, dtype=x.dtype)
        return lib.nn.functional.batch_norm(x, rm, rv, w if affine else None, b if affine else None,
                                            training=training != "eval", momentum=0.2, eps=1e-5)
    return fn


def _gn(groups, affine=True):
    def fn(lib, x, w, b):
        return lib.nn.functional.group_norm(x, groups, w if affine else None, b if affine else None, 1e-5)
    return fn


# name -> (fn(lib, x, w, b), input shape, parameter shape)
CASES = {
    "layer_norm 2-d": (_ln((6, 5), (5,))[0], (6, 5), (5,)),
    "layer_norm 3-d (GPT)": (_ln((3, 4, 8), (8,))[0], (3, 4, 8), (8,)),
    "layer_norm two trailing dims": (_ln((2, 3, 4, 5), (4, 5))[0], (2, 3, 4, 5), (4, 5)),
    "layer_norm no affine": (_ln((4, 6), (6,), affine=False)[0], (4, 6), (6,)),
    "layer_norm 1-d": (_ln((7,), (7,))[0], (7,), (7,)),
    "batch_norm training 4-d": (_bn("train"), (4, 3, 5, 2), (3,)),
    "batch_norm training 2-d": (_bn("train"), (6, 4), (4,)),
    "batch_norm training 3-d": (_bn("train"), (3, 4, 5), (4,)),
    "batch_norm no running stats": (_bn("none"), (4, 3, 2, 2), (3,)),
    "batch_norm eval": (_bn("eval"), (4, 3, 5, 2), (3,)),
    "batch_norm training no affine": (_bn("train", affine=False), (4, 3, 5), (3,)),
    "group_norm 3 groups": (_gn(3), (2, 6, 5), (6,)),
    "group_norm 4-d": (_gn(2), (3, 4, 3, 2), (4,)),
    "group_norm one group": (_gn(1), (2, 4, 3), (4,)),
    "group_norm channels as groups": (_gn(4), (2, 4, 6), (4,)),
    "group_norm no affine": (_gn(2, affine=False), (2, 4, 5), (4,)),
    "group_norm 2-d": (_gn(2), (3, 4), (4,)),
}
NODE = {"layer": "NativeLayerNormBackward0", "batch": "NativeBatchNormBackward0", "group": "NativeGroupNormBackward0"}


def _arrays(name, dtype, seed=0):
    _, xs, ps = CASES[name]
    r = np.random.default_rng(seed)
    return (r.standard_normal(xs).astype(dtype) * 2 + 0.5, (1 + 0.3 * r.standard_normal(ps)).astype(dtype),
            (0.3 * r.standard_normal(ps)).astype(dtype))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [F64, F32])
def test_values_grads_and_second_grads_match_torch(name, dtype):
    fn = CASES[name][0]
    tol = {} if dtype == F64 else {"rtol": 1e-4, "atol": 1e-4}
    check(fn, *_arrays(name, dtype), gradgrad=True, **tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_float16_matches_torch(name):
    check(CASES[name][0], *_arrays(name, F16), gradgrad=False, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_node_with_torchs_name(name):
    fn = CASES[name][0]
    x, w, b = _arrays(name, F32)
    kind = name.split("_")[0]
    for lib in (ember, torch):
        out = fn(lib, *(lib.tensor(a, requires_grad=True) for a in (x, w, b)))
        assert type(out.grad_fn).__name__ == NODE[kind]
        assert [type(f).__name__ if f is not None else None for f, _ in out.grad_fn.next_functions] == \
            ["AccumulateGrad"] + (["AccumulateGrad"] * 2 if "affine" not in name else [None, None])


def _composite(monkeypatch):
    monkeypatch.setattr(EF, "_fused_norm", lambda *a: False)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("create_graph", [False, True])
def test_fused_node_equals_the_composition(name, create_graph, monkeypatch):
    """The fused forward, its raw backward (create_graph=False) and its graph backward (create_graph=True, and
    the second derivative through it) against the composition of ember ops the norms were before."""
    fn = CASES[name][0]
    arrays = _arrays(name, F64, seed=3)
    r = np.random.default_rng(4)

    def run():
        ts = [ember.tensor(a, requires_grad=True) for a in arrays]
        out = fn(ember, *ts)
        up = ember.tensor(r.standard_normal(out.shape))
        grads = ember.autograd.grad(out, ts, up, create_graph=create_graph, allow_unused=True)
        res = [out.detach().numpy()] + [g.detach().numpy() for g in grads if g is not None]
        if create_graph:
            gsum = sum((g * g).sum() for g in grads if g is not None and g.requires_grad)
            res += [g.numpy() for g in ember.autograd.grad(gsum, ts, allow_unused=True) if g is not None]
        return res

    r = np.random.default_rng(4)
    fused = run()
    _composite(monkeypatch)
    r = np.random.default_rng(4)
    composite = run()
    assert len(fused) == len(composite)
    for a, b in zip(fused, composite):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_running_statistics_as_torch(momentum):
    r = np.random.default_rng(5)
    xs = [r.standard_normal((4, 3, 5, 2)).astype(F32) * 3 + 1 for _ in range(3)]
    state = {}
    for lib in (ember, torch):
        bn = lib.nn.BatchNorm2d(3, momentum=momentum)
        for x in xs:
            bn(lib.tensor(x, requires_grad=True)).sum().backward()
        bn.eval()
        state[lib.__name__] = (bn.running_mean.numpy().copy(), bn.running_var.numpy().copy(),
                               int(bn.num_batches_tracked), bn(lib.tensor(xs[0])).detach().numpy())
    for a, b in zip(state["ember"], state["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_composition_remains_under_levels_and_for_odd_inputs():
    """Forward AD / vmap levels, parameters of another dtype and empty inputs keep the composition (and its
    answers): the fused node is a fast path only."""
    x = ember.randn(3, 4, 5)
    w64 = ember.ones(5, dtype=ember.float64)
    assert not EF._fused_norm(x, w64)
    assert not EF._fused_norm(ember.zeros(0, 5))
    assert not EF._fused_norm(ember.zeros(3, 5, dtype=ember.int64))
    with ember.autograd.forward_ad.dual_level():
        xd = ember.autograd.forward_ad.make_dual(x, ember.ones_like(x))
        out = ember.nn.functional.layer_norm(xd, (5,))
        t = ember.autograd.forward_ad.unpack_dual(out).tangent
    np.testing.assert_allclose(t.numpy(), 0, atol=1e-6)  # a constant shift of each row normalises away
    per_example = ember.func.vmap(lambda r: ember.nn.functional.layer_norm(r, (5,)))(x)
    np.testing.assert_allclose(per_example.numpy(), ember.nn.functional.layer_norm(x, (5,)).numpy(), atol=1e-6)


def _in(use_stats):
    def fn(lib, x, w, b):
        c = x.shape[1]
        rm = lib.linspace(-0.5, 0.5, c, dtype=x.dtype)
        rv = lib.linspace(0.5, 2.0, c, dtype=x.dtype)
        return lib.nn.functional.instance_norm(x, rm, rv, w, b, use_input_stats=use_stats, momentum=0.2, eps=1e-5)
    return fn


@pytest.mark.parametrize("use_stats", [True, False])
@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (3, 2, 5)])
def test_instance_norm_is_torchs_batch_norm_of_a_view(use_stats, shape, monkeypatch):
    """instance_norm as torch records it: the fused batch norm of the (1, N*C, ...) view, the parameters repeated;
    torch's values, gradients and second gradients, and the composition's."""
    r = np.random.default_rng(6)
    arrays = (r.standard_normal(shape) * 2 + 1, 1 + 0.3 * r.standard_normal(shape[1]), 0.3 * r.standard_normal(shape[1]))
    check(_in(use_stats), *arrays, gradgrad=True)
    ts = [ember.tensor(a, requires_grad=True) for a in arrays]
    out = _in(use_stats)(ember, *ts)
    g = out.grad_fn
    assert type(g).__name__ == "ViewBackward0"
    assert type(g.next_functions[0][0]).__name__ == "NativeBatchNormBackward0"
    fused = [out.detach().numpy()] + [t.numpy() for t in ember.autograd.grad(out.sum() * 3, ts)]
    _composite(monkeypatch)
    ts = [ember.tensor(a, requires_grad=True) for a in arrays]
    out = _in(use_stats)(ember, *ts)
    composite = [out.detach().numpy()] + [t.numpy() for t in ember.autograd.grad(out.sum() * 3, ts)]
    for a, b in zip(fused, composite):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
