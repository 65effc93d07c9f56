"""Gradients the engine reuses: a leaf's first gradient becomes ``.grad`` without a copy, and a second
gradient of one input is added into the first one's array, only when nothing else can see it (NOTE
[stolen gradients]). Each scenario runs in ember and torch, then writes in place into every tensor
the program can still reach (leaf grads, gradients kept by hooks, the caller's gradient, retained
and captured grads) and compares everything: an alias that torch does not have shows up as a difference."""
from __future__ import annotations

import numpy as np
import pytest

import ember.autograd.graph as G
from oracle import assert_close, ember, torch

R = np.random.default_rng(0)
A = R.uniform(-1, 1, (4, 3)).astype(np.float32)
B = R.uniform(-1, 1, (4, 3)).astype(np.float32)
W = R.uniform(-1, 1, (3, 5)).astype(np.float32)


def _leaf(lib, arr):
    return lib.tensor(arr.copy(), requires_grad=True)


def _sum_of_leaves(lib):
    a, b = _leaf(lib, A), _leaf(lib, B)
    g = lib.tensor(np.ones((4, 3), np.float32))
    (a + b).backward(g)  # one gradient tensor reaches two leaves and is the caller's own
    return [a.grad, b.grad, g]


def _leaf_root(lib):
    a = _leaf(lib, A)
    g = lib.tensor(B.copy())
    a.backward(g)
    return [a.grad, g]


def _hook_keeps_gradient(lib):
    a = _leaf(lib, A)
    kept = []
    a.register_hook(kept.append)
    (a * 3.0).sum().backward()
    return [a.grad, kept[0]]


def _intermediate_hook_keeps_gradient(lib):
    a = _leaf(lib, A)
    h = a + 0.0  # Add passes its incoming gradient on unchanged
    kept = []
    h.register_hook(kept.append)
    (h * 2.0).sum().backward()
    return [a.grad, kept[0]]


def _retained_intermediate(lib):
    a = _leaf(lib, A)
    h = a + 0.0
    h.retain_grad()
    (h * 2.0).sum().backward()
    return [a.grad, h.grad]


def _matmul_weight(lib):
    x = lib.tensor(A)
    w = _leaf(lib, W)
    (x @ w).tanh().sum().backward()
    first = w.grad
    (x @ w).sum().backward()  # the second gradient is added in place into the first
    return [first, w.grad]


def _transposed_weight(lib):
    x = lib.tensor(A)
    w = _leaf(lib, W.T)
    (x @ w.t()).sum().backward()  # the gradient arrives as a transposed view
    return [w.grad]


def _broadcast_gradient(lib):
    a = _leaf(lib, A)
    a.sum().backward()  # sum's gradient is a broadcast view of a scalar
    return [a.grad]


# In the next three, z = y + 0 is made after y * 3, so its node runs first: z's gradient, passed on
# unchanged by Add, is the first one in y's buffer, and y * 3's gradient is added to it.
def _kept_gradient_summed_later(lib):
    a = _leaf(lib, A)
    y = a.exp()
    t = (y * 3.0).sum()
    z = y + 0.0
    kept = []
    z.register_hook(kept.append)
    (t + (z * z).sum()).backward()
    return [a.grad, kept[0]]


def _node_hook_keeps_gradients(lib):
    a = _leaf(lib, A)
    y = a.exp()
    t = (y * 3.0).sum() + (y * y).sum()
    z = y + 0.0
    kept = []
    z.grad_fn.register_hook(lambda grad_inputs, grad_outputs: kept.extend(grad_inputs + grad_outputs) or None)
    (t + (z * z).sum()).backward()
    return [a.grad] + [g for g in kept if g is not None]


def _captured_gradient_summed_later(lib):
    a = _leaf(lib, A)
    y = a.exp()
    t = (y * 3.0).sum()
    z = y + 0.0
    gz, gy, ga = lib.autograd.grad(t + (z * z).sum(), (z, y, a))
    return [gz, gy, ga]


def _many_uses_of_a_weight(lib):
    w = _leaf(lib, W)
    h = lib.tensor(A)
    kept = []
    for _ in range(5):  # five gradients of w summed in its buffer
        h = (h @ w)[:, :3].tanh()
        h.register_hook(kept.append)
    (h * h).sum().backward()
    return [w.grad] + kept


SCENARIOS = [_kept_gradient_summed_later, _node_hook_keeps_gradients, _captured_gradient_summed_later,
             _many_uses_of_a_weight, _sum_of_leaves, _leaf_root, _hook_keeps_gradient,
             _intermediate_hook_keeps_gradient,
             _retained_intermediate, _matmul_weight, _transposed_weight, _broadcast_gradient]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__[1:])
def test_leaf_grads_alias_nothing_torch_does_not(scenario) -> None:
    outs = {}
    for lib in (ember, torch):
        ts = scenario(lib)
        with lib.no_grad():
            for k, t in enumerate(ts):
                t.mul_(k + 2.0)  # each reachable tensor scaled by its own factor: aliases compound
        outs[lib] = ts
    for k, (e, t) in enumerate(zip(outs[ember], outs[torch])):
        assert_close(e, t, what=f"tensor {k}")
        assert e.is_contiguous() and e.numpy().flags.writeable


def test_gradient_only_the_engine_holds_is_not_copied(monkeypatch) -> None:
    copies = []
    fresh = G._fresh_grad
    monkeypatch.setattr(G, "_fresh_grad", lambda new: copies.append(new.shape) or fresh(new))
    x = ember.tensor(A)
    w = _leaf(ember, W)
    (x @ w).tanh().sum().backward()
    assert copies == []
    w.grad = None
    kept = []
    w.register_hook(kept.append)
    (x @ w).sum().backward()
    assert copies == [(3, 5)]  # a hook kept the gradient: copied
    assert not np.shares_memory(w.grad.numpy(), kept[0].numpy())


@pytest.mark.filterwarnings(r"ignore:Using backward\(\) with create_graph=True")
def test_create_graph_gradient_keeps_its_graph() -> None:
    got = {}
    for lib in (ember, torch):
        w = _leaf(lib, W)
        (w * w).sum().backward(create_graph=True)
        assert w.grad.requires_grad and w.grad.grad_fn is not None
        got[lib] = lib.autograd.grad((w.grad * w.grad).sum(), w)[0]
    assert_close(got[ember], got[torch])


def _linear_weight(lib, leaf):
    return lib.tensor(A) @ leaf.t()  # the weight's gradient arrives as a transposed view, as in nn.Linear


C = R.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
SCALE = {(4, 2, 3): R.uniform(-1, 1, (4, 2, 3)).astype(np.float32),
         (4, 3): R.uniform(-1, 1, (4, 3)).astype(np.float32)}


def _permuted_leaf(lib, leaf):
    return leaf * lib.tensor(SCALE[tuple(leaf.shape)])


LAYOUT_LEAVES = {
    "contiguous": (lambda lib: _leaf(lib, W.T), _linear_weight),
    "transposed": (lambda lib: _leaf(lib, W).t(), _linear_weight),
    "permuted 3-d": (lambda lib: lib.tensor(C).permute(2, 0, 1)
                     .requires_grad_(), _permuted_leaf),
    "strided slice": (lambda lib: lib.tensor(np.arange(24, dtype=np.float32).reshape(4, 6))[:, ::2]
                      .requires_grad_(), _permuted_leaf),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", LAYOUT_LEAVES)
def test_first_grad_has_the_leafs_layout(case, create_graph) -> None:
    # torch's gradient layout contract (NOTE [gradient layout]): a leaf's first gradient has the leaf's strides
    # (contiguous when the leaf is not dense), whatever the incoming gradient's; under create_graph it keeps its graph
    make, use = LAYOUT_LEAVES[case]
    out = {}
    for lib in (ember, torch):
        leaf = make(lib).detach().requires_grad_()
        (use(lib, leaf) ** 2).sum().backward(create_graph=create_graph)
        assert leaf.grad.requires_grad == create_graph
        out[lib] = (leaf.grad.stride(), leaf.grad.is_contiguous(), leaf.grad.detach().clone())
        if create_graph:
            leaf.grad.sum().backward()  # d(sum of grad)/d(leaf) is added to the gradient
        out[lib] += (leaf.grad,)
    (es, ec, eg, eg2), (ts, tc, tg, tg2) = out[ember], out[torch]
    assert (es, ec) == (ts, tc)
    assert_close(eg, tg)
    assert_close(eg2, tg2)
