"""The engine's fast paths (gradients summed on arrays, heap-free chains, GC paused) give the
same gradients as the differentiable path and as torch."""
from __future__ import annotations

import gc

import numpy as np
import pytest

from oracle import assert_close, check, ember, torch


def _fan_out(lib, x, y):
    # x reaches the sum through several paths (its buffer is summed), y fans out to every op
    h = x * y
    a = h.tanh() + h.exp() * y
    b = (h - y) / 3.0 + h * h
    return (a * b + x).sum() + (x * 2).sum()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (1,), (4, 3), (0, 2)])
def test_summed_gradients_match_torch(dtype, shape) -> None:
    rng = np.random.default_rng(0)
    x, y = (rng.uniform(-1, 1, shape).astype(dtype) for _ in range(2))
    check(_fan_out, x, y, gradgrad=True)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (5,), (2, 3)])
def test_array_sum_equals_differentiable_sum(dtype, shape) -> None:
    """create_graph=False (NumPy sums) and create_graph=True (Add ops) give bit-identical grads."""
    rng = np.random.default_rng(1)
    arrs = [rng.uniform(-1, 1, shape).astype(dtype) for _ in range(2)]
    grads = []
    for create_graph in (False, True):
        x, y = (ember.tensor(a, requires_grad=True) for a in arrs)
        gx, gy = ember.autograd.grad(_fan_out(ember, x, y), (x, y), create_graph=create_graph)
        assert gx.dtype == x.dtype and gx.shape == x.shape and type(gx._data) is np.ndarray
        grads.append((gx.detach().numpy(), gy.detach().numpy()))
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_long_chain_then_branches_matches_torch() -> None:
    """A straight chain (run without the heap) that splits and joins again, in torch's order."""
    def fn(lib, x, y):
        h = x
        for _ in range(50):
            h = (h * y).tanh()
        u, v = h.exp(), h.sigmoid()
        return ((u * v).sum() + u.sum(), h)

    rng = np.random.default_rng(2)
    check(fn, rng.uniform(-1, 1, (3,)).astype(np.float32), rng.uniform(-1, 1, (3,)).astype(np.float32),
          gradgrad=True)


def test_gradient_hooks_still_run_on_summed_buffers() -> None:
    seen = {}
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        h.register_hook(lambda g, lib=lib: seen.setdefault(lib.__name__, g.clone()))
        (h * h + h).sum().backward()
        seen[lib.__name__ + ".grad"] = x.grad
    assert_close(seen["ember"], seen["torch"])
    assert_close(seen["ember.grad"], seen["torch.grad"])


def test_gc_state_is_restored() -> None:
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    assert gc.isenabled()
    (x * x).sum().backward()
    assert gc.isenabled()
    gc.disable()
    try:
        (x * x).sum().backward()
        assert not gc.isenabled()  # the engine never turns on a collector the user turned off
    finally:
        gc.enable()
    y = x * x
    y.sum().backward()
    with pytest.raises(RuntimeError):
        y.sum().backward()  # freed graph: raises inside the walk
    assert gc.isenabled()


def test_backward_frees_intermediates() -> None:
    import weakref

    x = ember.tensor(np.ones(4, np.float32), requires_grad=True)
    h = x
    for _ in range(30):
        h = (h * 1.5).tanh()
    ref = weakref.ref(h.grad_fn)
    loss = h.sum()
    del h
    loss.backward()
    del loss
    assert ref() is None  # no reference cycles: freed without the collector


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((5, 3), (3,)), ((2, 5, 3), (5, 1)), ((4, 1, 3), (2, 1)), ((3,), ()),
                                    ((2, 3), (1, 3)), ((0, 3), (3,)), ((2, 0), (1, 1))])
def test_broadcast_reduction_on_arrays_equals_sum_to_size(dtype, shapes) -> None:
    """create_graph=False sums broadcast gradients on arrays; create_graph=True with the ``sum_to_size``
    op: the same bits, dtype and shape, and torch's values."""
    rng = np.random.default_rng(5)
    a, b = (rng.uniform(-1, 1, s).astype(dtype) for s in shapes)
    fn = lambda lib, x, y: (x * y).tanh() * 3.0 + y  # noqa: E731 - y broadcasts in two ops
    grads = []
    for create_graph in (False, True):
        x, y = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
        out = fn(ember, x, y)
        gx, gy = ember.autograd.grad(out, (x, y), ember.ones_like(out), create_graph=create_graph)
        assert gy.shape == y.shape and gy.dtype == y.dtype and type(gy._data) is np.ndarray
        grads.append((gx.detach().numpy(), gy.detach().numpy()))
    for p, q in zip(*grads):
        assert p.tobytes() == q.tobytes()
    check(fn, a, b, gradgrad=False)


def test_second_gradient_of_an_input_is_added_in_place() -> None:
    """Five gradients of one weight: the buffer the engine alone holds is summed into (no new arrays)."""
    w = ember.tensor(np.ones((3, 3), np.float32), requires_grad=True)
    h = ember.tensor(np.ones((2, 3), np.float32))
    seen = []
    for _ in range(5):
        h = (h @ w).tanh()
    from ember.autograd import _fast

    orig = _fast._np_add
    _fast._np_add = lambda a, b, out=None: seen.append(out is a) or orig(a, b, out=out)
    try:
        (h * h).sum().backward()
    finally:
        _fast._np_add = orig
    assert seen == [True] * 4


def _returning(lib, grads_of):
    """A custom Function of (a, b, c) whose backward returns ``grads_of(lib, g)`` (possibly the same tensor twice)."""
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, c):
            return a * b * c

        @staticmethod
        def backward(ctx, g):
            return grads_of(lib, g)
    return F


@pytest.mark.parametrize("case", ["same_tensor_broadcast_twice", "dtype_and_shape", "one_fixed_one_kept"])
def test_gradients_fixed_per_input_as_torch(case) -> None:
    """The engine sums/casts each returned gradient to its own input's shape and dtype, even when one
    tensor is returned for several inputs that need different fixes (checked while accumulating)."""
    grads_of = {
        "same_tensor_broadcast_twice": lambda lib, g: (g, g, g),
        "dtype_and_shape": lambda lib, g: (g.double(), g, g.double()),
        "one_fixed_one_kept": lambda lib, g: (g, g * 2, None),
    }[case]

    def run(lib):
        a = lib.tensor(np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3), requires_grad=True)
        b = lib.tensor(np.array([[0.5], [2.0]], np.float32), requires_grad=True)
        c = lib.tensor(np.array([1.5, -1.0, 0.25], np.float32), requires_grad=True)
        (_returning(lib, grads_of).apply(a, b, c) * 3).sum().backward()
        return [t.grad for t in (a, b, c)]

    for e, t in zip(run(ember), run(torch)):
        if t is None:
            assert e is None
        else:
            assert e.dtype == ember.float32 and tuple(e.shape) == tuple(t.shape)
            assert_close(e, t)


def test_invalid_gradient_names_its_index_as_torch() -> None:
    def run(lib):
        a, b, c = (lib.ones(*s, requires_grad=True) for s in ((2, 3), (2, 1), (3,)))
        _returning(lib, lambda lib, g: (g, g, lib.ones(2, 2))).apply(a, b, c).sum().backward()

    with pytest.raises(RuntimeError) as e:
        run(ember)
    with pytest.raises(RuntimeError) as t:
        run(torch)
    assert str(e.value).split(" - ")[1] == str(t.value).split(" - ")[1]
    assert "invalid gradient at index 2" in str(e.value)
