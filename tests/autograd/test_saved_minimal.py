"""Ops save only what the backward of a grad-requiring input needs, and name it as torch does.

For each op and each pattern of which inputs require grad, every ``grad_fn._saved_<name>`` that torch holds as a
saved tensor (it has ``_raw_saved_<name>``) exists on ember's node and is None exactly when torch's is.
"""
import gc
import itertools
import weakref

import numpy as np
import pytest

from oracle import assert_close, ember, torch

RNG = np.random.default_rng(7)


def _pos(*shape):
    return RNG.uniform(0.5, 2.0, shape).astype(np.float32)


def _std(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# name: (fn(lib, *tensors), input arrays[, how many leading inputs may require grad])
CASES = {
    "mul": (lambda lib, a, b: a * b, (_std(3), _std(3))),
    "mul_broadcast": (lambda lib, a, b: lib.mul(a, b), (_std(2, 3), _std(3))),
    "div": (lambda lib, a, b: a / b, (_std(3), _pos(3))),
    "pow": (lambda lib, a, b: lib.pow(a, b), (_pos(3), _std(3))),
    "mm": (lambda lib, a, b: lib.mm(a, b), (_std(2, 3), _std(3, 4))),
    "matmul_2d": (lambda lib, a, b: a @ b, (_std(2, 3), _std(3, 4))),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), (_std(2, 2, 3), _std(2, 3, 4))),
    "mv": (lambda lib, a, b: lib.mv(a, b), (_std(2, 3), _std(3))),
    "dot": (lambda lib, a, b: lib.dot(a, b), (_std(3), _std(3))),
    "vdot": (lambda lib, a, b: lib.vdot(a, b), (_std(3), _std(3))),
    "outer": (lambda lib, a, b: lib.outer(a, b), (_std(2), _std(3))),
    "cross": (lambda lib, a, b: lib.linalg.cross(a, b), (_std(2, 3), _std(2, 3))),
    "hypot": (lambda lib, a, b: lib.hypot(a, b), (_std(3), _std(3))),
    "copysign": (lambda lib, a, b: lib.copysign(a, b), (_std(3), _std(3))),
    "remainder": (lambda lib, a, b: lib.remainder(a, b), (_std(3), _pos(3))),
    "fmod": (lambda lib, a, b: lib.fmod(a, b), (_std(3), _pos(3))),
    "atan2": (lambda lib, a, b: lib.atan2(a, b), (_std(3), _std(3))),
    "maximum": (lambda lib, a, b: lib.maximum(a, b), (_std(3), _std(3))),
    "addcmul": (lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5), (_std(3), _std(3), _std(3))),
    "addcdiv": (lambda lib, a, b, c: lib.addcdiv(a, b, c, value=0.5), (_std(3), _std(3), _pos(3))),
    "lerp_tensor": (lambda lib, a, b, w: lib.lerp(a, b, w), (_std(3), _std(3), _std(3))),
    "lerp_scalar": (lambda lib, a, b: lib.lerp(a, b, 0.3), (_std(3), _std(3))),
    "addmm": (lambda lib, s, a, b: lib.addmm(s, a, b), (_std(2, 4), _std(2, 3), _std(3, 4))),
    "addmv": (lambda lib, s, a, b: lib.addmv(s, a, b), (_std(2), _std(2, 3), _std(3))),
    "addr": (lambda lib, s, a, b: lib.addr(s, a, b), (_std(2, 3), _std(2), _std(3))),
    "baddbmm": (lambda lib, s, a, b: lib.baddbmm(s, a, b), (_std(2, 2, 4), _std(2, 2, 3), _std(2, 3, 4))),
    "addbmm": (lambda lib, s, a, b: lib.addbmm(s, a, b), (_std(2, 4), _std(2, 2, 3), _std(2, 3, 4))),
    "linear": (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), (_std(2, 3), _std(4, 3), _std(4))),
    "mse_loss": (lambda lib, a, b: lib.nn.functional.mse_loss(a, b), (_std(3), _std(3))),
    "clamp_tensor": (lambda lib, x, lo, hi: lib.clamp(x, lo, hi), (_std(4), _std(4) - 1, _std(4) + 1)),
    "clamp_min_tensor": (lambda lib, x, lo: lib.clamp(x, min=lo), (_std(4), _std(4))),
    "clamp_max_tensor": (lambda lib, x, hi: lib.clamp(x, max=hi), (_std(4), _std(4))),
    "binary_cross_entropy": (lambda lib, x, t: lib.nn.functional.binary_cross_entropy(x.sigmoid(), t),
                             (_std(2, 3), _pos(2, 3) / 2)),
    "binary_cross_entropy weight": (lambda lib, x, t, w: lib.nn.functional.binary_cross_entropy(x, t, w),
                                    (_pos(2, 3) / 2, _pos(2, 3) / 2, _pos(3)), 2),
    "smooth_l1_loss": (lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b, beta=0.5), (_std(3), _std(3))),
    "huber_loss": (lambda lib, a, b: lib.nn.functional.huber_loss(a, b, delta=0.5), (_std(3), _std(3))),
    "binary_cross_entropy_with_logits": (
        lambda lib, x, t, w, p: lib.nn.functional.binary_cross_entropy_with_logits(x, t, w, pos_weight=p),
        (_std(2, 3), _pos(2, 3) / 2, _pos(2, 3), _pos(3)), 2),
}


def _masks(n):
    return [m for m in itertools.product((False, True), repeat=n) if any(m)]


def _saved_tensor_names(fn) -> list[str]:
    return sorted(a[len("_saved_"):] for a in dir(fn) if a.startswith("_saved_") and hasattr(fn, "_raw" + a))


@pytest.mark.parametrize("name", sorted(CASES))
def test_saved_values_match_torch(name):
    f, arrays, *n = CASES[name]
    for mask in _masks(n[0] if n else len(arrays)):
        nodes = {}
        for lib in (ember, torch):
            ts = [lib.tensor(a.copy(), requires_grad=m) for a, m in itertools.zip_longest(arrays, mask, fillvalue=False)]
            nodes[lib] = f(lib, *ts).grad_fn
        e, t = nodes[ember], nodes[torch]
        assert e.name() == t.name(), (mask, e.name(), t.name())
        for key in _saved_tensor_names(t):
            tv, ev = getattr(t, "_saved_" + key), getattr(e, "_saved_" + key)
            assert (ev is None) == (tv is None), f"{name} {mask}: _saved_{key} ember {ev!r}, torch {tv!r}"
            if tv is not None:
                assert_close(ev, tv, what=f"{name} _saved_{key}")


def test_a_constant_factor_does_not_keep_the_other_operand_alive():
    w = ember.randn(3, requires_grad=True)
    x = ember.randn(3)
    h = w * 2  # an activation: only the constant x is needed for its gradient
    y = x * h
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_other is None
    ref = weakref.ref(h)
    del h
    gc.collect()
    assert ref() is None
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * x.numpy())


@pytest.mark.parametrize("pack", [lambda t: t * 4, lambda t: t * t, lambda t: t.exp().log()])
def test_pack_hook_computing_on_the_tensor_does_not_recurse(pack):
    """The official saved-tensor-hooks tutorial's ``pack(t) = t * 4``: the pack hook runs without a graph (torch's
    NoGradGuard), so its own ops save nothing and never call it again."""
    grads, calls = [], []
    for lib in (ember, torch):
        def counting(t):
            calls.append(lib)
            out = pack(t)
            assert out.grad_fn is None
            return out

        x = lib.tensor(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True)
        c = lib.tensor(np.array([0.5, -1.0, 2.0], np.float32))
        with lib.autograd.graph.saved_tensors_hooks(counting, lambda p: p):
            y = (x * c).sum() + (x * x).sum()
        y.backward()
        grads.append(x.grad)
    assert calls.count(ember) == calls.count(torch)
    assert_close(*grads, what="x.grad", rtol=1e-4)


def test_tutorial_scaling_hooks():
    """The tutorial's pair: pack multiplies by 4, unpack divides by 4; the gradient is unchanged."""
    out = []
    for lib in (ember, torch):
        x = lib.tensor(np.array([0.5, 1.5, -2.0], np.float32), requires_grad=True)
        w = lib.tensor(np.array([2.0, -1.0, 3.0], np.float32), requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 4, lambda t: t / 4):
            y = (x * w).pow(2).sum()
        y.backward()
        out.append((x.grad, w.grad))
    assert_close(out[0][0], out[1][0], what="x.grad")
    assert_close(out[0][1], out[1][1], what="w.grad")


def test_saved_wrapped_number_is_a_tensor_freed_by_backward():
    for lib in (ember, torch):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        v = y.grad_fn._saved_other
        assert isinstance(v, lib.Tensor) and v.item() == 2 and y.grad_fn._saved_self is None
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            _ = y.grad_fn._saved_other
