"""Backward formulas with a raw-array path for create_graph=False give the same gradients (bits, dtype,
shape) as their differentiable formula (create_graph=True), on random shapes with broadcasting and
with only some inputs requiring grad; and torch's values."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from oracle import check, ember

# name -> (fn(lib, *tensors), shapes of the inputs)
CASES = {
    "mm": (lambda lib, a, b: a @ b, [(4, 3), (3, 5)]),
    "matmul_batched": (lambda lib, a, b: a @ b, [(2, 4, 3), (3, 5)]),
    "matmul_broadcast": (lambda lib, a, b: a @ b, [(2, 1, 4, 3), (3, 3, 5)]),
    "matmul_vec": (lambda lib, a, b: a @ b, [(4, 3), (3,)]),
    "matmul_4d_by_matrix": (lambda lib, a, b: a @ b, [(2, 3, 4, 3), (3, 5)]),
    "matmul_3d_by_transposed": (lambda lib, a, b: a.transpose(0, 1) @ b.t(), [(4, 2, 3), (5, 3)]),
    "linear_3d": (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [(2, 4, 3), (5, 3), (5,)]),
    "linear_3d_no_bias": (lambda lib, x, w: lib.nn.functional.linear(x, w), [(2, 4, 3), (5, 3)]),
    "linear_3d_noncontiguous": (lambda lib, x, w, b: lib.nn.functional.linear(x.transpose(0, 1), w, b),
                                [(4, 2, 3), (5, 3), (5,)]),
    "linear": (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [(4, 3), (5, 3), (5,)]),
    "addmm": (lambda lib, s, a, b: lib.addmm(s, a, b), [(4, 5), (4, 3), (3, 5)]),
    "addmm_bias": (lambda lib, s, a, b: lib.addmm(s, a, b), [(5,), (4, 3), (3, 5)]),
    "addmm_beta_alpha": (lambda lib, s, a, b: lib.addmm(s, a, b, beta=0.5, alpha=2.0), [(1, 5), (4, 3), (3, 5)]),
    "addmm_transposed": (lambda lib, s, a, b: lib.addmm(s, a, b.t()), [(5,), (4, 3), (5, 3)]),
    "addmv": (lambda lib, s, a, v: lib.addmv(s, a, v), [(4,), (4, 3), (3,)]),
    "addr": (lambda lib, s, u, v: lib.addr(s, u, v), [(4, 3), (4,), (3,)]),
    "baddbmm": (lambda lib, s, a, b: lib.baddbmm(s, a, b), [(4, 5), (2, 4, 3), (2, 3, 5)]),
    "addbmm": (lambda lib, s, a, b: lib.addbmm(s, a, b), [(4, 5), (2, 4, 3), (2, 3, 5)]),
    # ("int", shape, classes): a class-index target; ("const", shape): a float input that never requires grad
    "log_softmax": (lambda lib, x: lib.nn.functional.log_softmax(x, 1), [(4, 5)]),
    "softmax": (lambda lib, x: lib.nn.functional.softmax(x, 1), [(4, 5)]),
    "softmax_rows_of_16": (lambda lib, x: lib.nn.functional.softmax(x, -1) * 2, [(3, 5, 16)]),
    "gelu_tanh": (lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh") * 2, [(3, 5, 4)]),
    "softmax_dim0_3d": (lambda lib, x: lib.nn.functional.softmax(x, 0), [(3, 2, 4)]),
    "log_softmax_dim0_3d": (lambda lib, x: lib.nn.functional.log_softmax(x, 0) * 2, [(3, 2, 4)]),
    "cross_entropy": (lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), [(6, 5), ("int", (6,), 5)]),
    "cross_entropy_sum_weight": (lambda lib, x, t, w: lib.nn.functional.cross_entropy(x, t, w, reduction="sum"),
                                 [(6, 5), ("int", (6,), 5), ("const", (5,))]),
    "cross_entropy_ignore": (lambda lib, x, t: lib.nn.functional.cross_entropy(x, t, ignore_index=2),
                             [(6, 5), ("int", (6,), 5)]),
    "cross_entropy_smoothing_none": (lambda lib, x, t: lib.nn.functional.cross_entropy(
        x, t, reduction="none", label_smoothing=0.2, ignore_index=1), [(6, 5), ("int", (6,), 5)]),
    "cross_entropy_smoothing_weight": (lambda lib, x, t, w: lib.nn.functional.cross_entropy(
        x, t, w, label_smoothing=0.2), [(6, 5), ("int", (6,), 5), ("const", (5,))]),
    "cross_entropy_probabilities": (lambda lib, x, p: lib.nn.functional.cross_entropy(x, p),
                                    [(6, 5), ("const", (6, 5))]),
    "cross_entropy_probabilities_weight_sum": (lambda lib, x, p, w: lib.nn.functional.cross_entropy(
        x, p, w, reduction="sum", label_smoothing=0.1), [(4, 5, 3), ("const", (4, 5, 3)), ("const", (5,))]),
    "cross_entropy_4d_none": (lambda lib, x, t: lib.nn.functional.cross_entropy(x, t, reduction="none"),
                              [(2, 3, 4, 2), ("int", (2, 4, 2), 3)]),
    "cross_entropy_1d": (lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), [(5,), ("int", (), 5)]),
    "nll_none_1d": (lambda lib, x, t: lib.nn.functional.nll_loss(x, t, reduction="none"), [(5,), ("int", (), 5)]),
    "nll_2d_image": (lambda lib, x, t: lib.nn.functional.nll_loss(x, t), [(2, 3, 4, 2), ("int", (2, 4, 2), 3)]),
    # elementwise ops with a ``raw`` formula: broadcasting, 0-d operands, Python scalars, mixed dtypes
    "mul": (lambda lib, a, b: a * b, [(3, 4), (3, 4)]),
    "mul_broadcast": (lambda lib, a, b: a * b, [(2, 1, 4), (3, 1)]),
    "mul_0d": (lambda lib, a, b: a * b, [(), (5,)]),
    "mul_scalar": (lambda lib, a: 2.5 * a * 3, [(4,)]),
    "mul_mixed_dtype": (lambda lib, a, b: a * b.double(), [(3,), (3,)]),
    "mul_square": (lambda lib, a: a * a, [(2, 3)]),
    "div": (lambda lib, a, b: a / (b * b + 0.5), [(3, 4), (3, 4)]),
    "div_broadcast": (lambda lib, a, b: a / (b * b + 0.5), [(4, 1), (1, 3)]),
    "div_0d": (lambda lib, a, b: a / (b * b + 0.5), [(), ()]),
    "div_scalar": (lambda lib, a: a / 3.0, [(5,)]),
    "rdiv_scalar": (lambda lib, a: 2.0 / (a * a + 0.5), [(5,)]),
    "div_mixed_dtype": (lambda lib, a, b: a.double() / (b * b + 0.5), [(3,), (3,)]),
    "sub": (lambda lib, a, b: a - b, [(2, 3), (3,)]),
    "sub_alpha": (lambda lib, a, b: lib.sub(a, b, alpha=2.5), [(2, 3), (2, 3)]),
    "rsub": (lambda lib, a: 1.5 - a, [(4,)]),
    "rsub_alpha": (lambda lib, a, b: lib.rsub(a, b, alpha=0.5), [(3,), (2, 3)]),
    "neg": (lambda lib, a: -a, [(2, 2)]),
    "neg_0d": (lambda lib, a: -a, [()]),
    "exp": (lambda lib, a: lib.exp(a), [(3, 2)]),
    "log": (lambda lib, a: lib.log(a * a + 0.5), [(4,)]),
    "tanh": (lambda lib, a: lib.tanh(a), [(2, 3)]),
    "tanh_0d": (lambda lib, a: lib.tanh(a), [()]),
    "sigmoid": (lambda lib, a: lib.sigmoid(a), [(5,)]),
    "sqrt": (lambda lib, a: lib.sqrt(a * a + 0.5), [(3,)]),
    "reciprocal": (lambda lib, a: lib.reciprocal(a * a + 0.5), [(2, 2)]),
    "chain": (lambda lib, a, b: lib.exp(lib.tanh(a * b + b) - b) / 3.0, [(4,), (4,)]),
}


def _array(rng, spec, dtype):
    if spec and spec[0] == "int":
        return rng.integers(0, spec[2], spec[1]).astype(np.int64)
    if spec and spec[0] == "const":
        return _Const(rng.uniform(0.5, 2, spec[1]).astype(dtype))
    return np.asarray(rng.uniform(-1, 1, spec)).astype(dtype)


class _Const(np.ndarray):
    """A float input that never requires grad (a class weight)."""

    def __new__(cls, a):
        return np.asarray(a).view(cls)


def _free(a) -> bool:
    return a.dtype.kind == "f" and not isinstance(a, _Const)


def _grads(fn, arrays, need, create_graph):
    ts = [ember.tensor(np.asarray(a), requires_grad=r and _free(a)) for a, r in zip(arrays, need)]
    out = fn(ember, *ts)
    g = ember.tensor(np.asarray(np.random.default_rng(1).uniform(-1, 1, out.shape)).astype(out.detach().numpy().dtype))
    wanted = [t for t in ts if t.requires_grad]
    return ember.autograd.grad(out, wanted, g, create_graph=create_graph)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_raw_backward_equals_differentiable_formula(name, dtype) -> None:
    fn, shapes = CASES[name]
    rng = np.random.default_rng(0)
    arrays = [_array(rng, s, dtype) for s in shapes]
    for need in itertools.product((False, True), repeat=len(shapes)):
        if not any(n and _free(a) for n, a in zip(need, arrays)):
            continue
        raw = _grads(fn, arrays, need, create_graph=False)
        diff = _grads(fn, arrays, need, create_graph=True)
        for r, d in zip(raw, diff):
            assert r.dtype == d.dtype and r.shape == d.shape and not r.requires_grad
            assert r.numpy().tobytes() == d.detach().numpy().tobytes(), (name, need)


@pytest.mark.parametrize("name", sorted(CASES))
def test_cases_match_torch(name) -> None:
    fn, shapes = CASES[name]
    rng = np.random.default_rng(2)
    arrays = [_array(rng, s, np.float32) for s in shapes]
    for gradgrad in (False, True):  # the raw path (create_graph=False) and the differentiable one
        check(fn, *[np.asarray(a) for a in arrays], gradgrad=gradgrad, requires_grad=[_free(a) for a in arrays])


def test_raw_backward_checks_versions_and_hooks() -> None:
    """The raw path unpacks saved values as ``saved_tensors`` does: in-place changes are refused, pack/unpack
    hooks run, and a second backward through a freed graph raises."""
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = ember.tensor([3.0, 4.0], requires_grad=True)
    y = a * 1
    out = (y * b).sum()
    with ember.no_grad():
        y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
    seen = []
    with ember.autograd.graph.saved_tensors_hooks(lambda t: t.detach() * 2, lambda t: seen.append(1) or t):
        out = (a * b).sum()
    out.backward(retain_graph=True)
    assert len(seen) == 2
    np.testing.assert_array_equal(a.grad.numpy(), [6.0, 8.0])  # the packed (doubled) b
    e = ember.exp(a).sum()
    e.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        e.backward()


def test_levels_see_every_op_of_a_backward() -> None:
    """Under a forward-AD / vmap level (NOTE [interposition]) no raw-array path runs: the level sees the
    backward formulas' ops (products, exp of log_softmax's backward, the put of nll_loss's, in-place SGD)."""
    from ember.autograd import _interpose

    seen = []

    class Spy(_interpose.Level):
        __slots__ = ()

        def process(self, cls, args):
            seen.append(cls.__name__)
            return _interpose.call_below(self, cls, args)

    rng = np.random.default_rng(3)
    x = ember.tensor(rng.uniform(-1, 1, (4, 3)).astype(np.float32))
    w = ember.tensor(rng.uniform(-1, 1, (5, 3)).astype(np.float32), requires_grad=True)
    b = ember.tensor(rng.uniform(-1, 1, (5,)).astype(np.float32), requires_grad=True)
    t = ember.tensor(np.array([0, 1, 4, 2]))
    level = _interpose.push(Spy())
    try:
        loss = ember.nn.functional.cross_entropy(ember.addmm(b, x, w.t()), t)
        seen.clear()
        loss.backward()
        backward_ops = set(seen)
        seen.clear()
        with ember.no_grad():
            w -= 0.1 * w.grad
        sgd_ops = set(seen)
    finally:
        _interpose.pop(level)
    assert {"MmBackward0", "ExpBackward0", "PutAlongDimBackward0"} <= backward_ops
    assert "SumBackward1" in backward_ops  # the bias gradient's reduction
    assert "SubBackward0" in sgd_ops
