"""ember.func.vmap against torch.func.vmap: values, in/out dims, nesting, errors, fallbacks, per-sample grads."""

import numpy as np
import pytest

from oracle import ember, same_error, torch, compare
from func_util import rand

A, B, C = rand(4, 3), rand(3, 5, seed=1), rand(4, 5, seed=2)


@pytest.mark.parametrize("body", [
    lambda lib, a: (a * 2 + 1).exp().sum(),
    lambda lib, a: lib.nn.functional.softmax(a, -1) * a.sum(0, keepdim=True),
    lambda lib, a: a.unsqueeze(0).expand(2, 3).reshape(6).flip(0)[1:4],
    lambda lib, a: lib.stack([a, a.cos()], 1).sum((0,)).T,
    lambda lib, a: lib.cat([a, a[:1]]).cumsum(0).max(),
    lambda lib, a: lib.where(a > 0, a, -a).mean(),
    lambda lib, a: a.var(unbiased=False) + a.norm() + a.logsumexp(0),
    lambda lib, a: a.view(3, 1).permute(1, 0).squeeze().transpose(0, -1),
    lambda lib, a: lib.nn.functional.relu(a).max(0).values,
    lambda lib, a: lib.einsum("i,i->", a, a),
    lambda lib, a: a.sum(),  # 0-d results
])
def test_elementwise_reduction_and_shape_rules(body):
    compare(lambda lib, a: lib.func.vmap(lambda r: body(lib, r))(a), A)


@pytest.mark.parametrize("case", [
    lambda lib, a, b: a @ b,        # vector @ matrix
    lambda lib, a, b: b.T @ a,      # matrix @ vector
    lambda lib, a, b: a @ a,        # dot
    lambda lib, a, b: lib.outer(a, a) @ b,
    lambda lib, a, b: lib.nn.functional.linear(a, b.T, b[0]),
    lambda lib, a, b: lib.addmm(b[0], a.unsqueeze(0), b, beta=0.5, alpha=2),
])
def test_products(case):
    compare(lambda lib, a, b: lib.func.vmap(lambda r: case(lib, r, b))(a), A, B)
    compare(lambda lib, a, b: lib.func.vmap(lambda m: case(lib, a[0], m), in_dims=2)(b.unsqueeze(-1).expand(3, 5, 2)
                                                                                     .contiguous()), A, B)


def test_in_dims_out_dims_and_pytrees():
    compare(lambda lib, a, c: lib.func.vmap(lambda x, y: x.sum() * y, in_dims=(0, 1), out_dims=1)(a, c.T), A, C)
    compare(lambda lib, a, c: lib.func.vmap(lambda d: {"s": d["x"].sum(), "t": (d["x"], d["y"] * 2)},
                                            in_dims=({"x": 0, "y": None},))({"x": a, "y": c}), A, C)
    compare(lambda lib, a, c: lib.func.vmap(lambda x, k: x * k, in_dims=(0, None))(a, 3.0), A, C)
    compare(lambda lib, a, c: lib.func.vmap(lambda x: (x, 2 * x), out_dims=(0, -1))(a), A, C)


def test_nested_vmap():
    compare(lambda lib, a, c: lib.func.vmap(lib.func.vmap(lambda x, y: (x * y).sum(), in_dims=(0, None)),
                                            in_dims=(None, 0))(a[:, 0], c), A, C)
    compare(lambda lib, a, b: lib.func.vmap(lib.func.vmap(lambda x, m: x @ m, in_dims=(0, None)),
                                            in_dims=(None, 0))(a, b.reshape(3, 5, 1).expand(3, 5, 3).permute(1, 0, 2)),
            A, B)


def test_unbatched_output_is_expanded_and_empty_batch():
    compare(lambda lib, a: lib.func.vmap(lambda x: lib.ones(2))(a), A)
    compare(lambda lib, a: lib.func.vmap(lambda x: (x * 2).sum())(a[:0]), A)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.func.vmap(lambda t: t.sum().item())(lib.ones(3, 1)),
    lambda lib: lib.func.vmap(lambda t: t if t.sum() > 0 else -t)(lib.ones(3, 1)),
    lambda lib: lib.func.vmap(lambda t: t + lib.rand(1))(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda t: 1)(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda t: t, in_dims=1)(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a, b: a, in_dims=(0,))(lib.ones(3), lib.ones(3)),
    lambda lib: lib.func.vmap(lambda a, b: a + b)(lib.ones(3), lib.ones(4)),
    lambda lib: lib.func.vmap(lambda a: a, in_dims=0.5)(lib.ones(3)),
    lambda lib: lib.func.vmap(lambda: 1)(),
    lambda lib: lib.func.vmap(lambda a: (a, a), out_dims=(0,))(lib.ones(3)),
])
def test_errors_match_torch(fn):
    same_error(fn)


def test_randomness_modes():
    x = ember.ones(4, 3)
    same = ember.func.vmap(lambda t: t * ember.rand(3), randomness="same")(x)
    assert np.allclose(same.numpy(), same.numpy()[:1])
    diff = ember.func.vmap(lambda t: ember.normal(t, 1.0), randomness="different")(ember.ones(64, 3))
    assert not np.allclose(diff.numpy(), diff.numpy()[:1])


def test_fallback_is_counted_and_correct():
    from ember.ops._op import Op

    class Twice(Op):  # an op without a batching rule
        _name = "TwiceTestBackward0"

        @staticmethod
        def forward(ctx, self):
            return self * 2

        def backward(ctx, grad):
            return grad * 2

    ember.func.reset_vmap_fallback_counts()
    with pytest.warns(UserWarning, match="batching rule for TwiceTestBackward0"):
        out = ember.func.vmap(lambda t: Twice.apply(t).sum(0))(ember.tensor(A))
    np.testing.assert_allclose(out.numpy(), 2 * A.sum(1))
    assert ember.func.vmap_fallback_counts() == {"TwiceTestBackward0": 1}
    from ember.ops._op import _registry
    del _registry["TwiceTestBackward0"]


def test_batched_tensor_reports_logical_metadata():
    seen = {}

    def f(t):
        seen.update(shape=tuple(t.shape), dim=t.dim(), numel=t.numel(), len=len(t), size1=t.size(1))
        return t

    ember.func.vmap(f)(ember.ones(5, 2, 3))
    assert seen == {"shape": (2, 3), "dim": 2, "numel": 6, "len": 2, "size1": 3}


def _mlp_per_sample(lib, params, xs, ys):
    F = lib.nn.functional

    def loss(p, x, y):
        h = x.unsqueeze(0)
        for i in range(3):
            h = h @ p[f"W{i}"] + p[f"b{i}"]
            if i < 2:
                h = F.relu(h)
        return F.cross_entropy(h, y.unsqueeze(0))
    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, xs, ys)


def test_per_sample_gradients_of_an_mlp_match_torch():
    r = np.random.default_rng(0)
    dims = (6, 5, 4, 3)
    params = {}
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        params[f"W{i}"], params[f"b{i}"] = r.standard_normal((a, b)), r.standard_normal(b)
    xs, ys = r.standard_normal((7, 6)), r.integers(0, 3, 7)
    ember.func.reset_vmap_fallback_counts()
    compare(lambda lib, p, x, y: _mlp_per_sample(lib, {k: lib.tensor(v) for k, v in p.items()}, x, y),
            params, xs, ys)
    assert ember.func.vmap_fallback_counts() == {}


def test_per_sample_gradients_with_functional_call():
    r = np.random.default_rng(1)
    xs, ys = r.standard_normal((6, 4)).astype(np.float32), r.standard_normal((6, 2)).astype(np.float32)
    shapes = {"0.weight": (3, 4), "0.bias": (3,), "2.weight": (2, 3), "2.bias": (2,)}
    values = {k: r.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    res = []
    for lib in (ember, torch):
        model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Tanh(), lib.nn.Linear(3, 2))
        params = {k: lib.tensor(v) for k, v in values.items()}

        def loss(p, x, y):
            return lib.nn.functional.mse_loss(lib.func.functional_call(model, p, (x.unsqueeze(0),)), y.unsqueeze(0))
        g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, lib.tensor(xs), lib.tensor(ys))
        res.append({k: v.numpy() for k, v in g.items()})
    for k in res[0]:
        np.testing.assert_allclose(res[0][k], res[1][k], rtol=1e-5, atol=1e-6)


def test_grad_of_vmap_and_vmap_of_grad_of_grad():
    compare(lambda lib, a: lib.func.grad(lambda x: lib.func.vmap(lambda r: (r.sin() ** 2).sum())(x).sum())(a), A)
    compare(lambda lib, a: lib.func.vmap(lib.func.grad(lib.func.grad(lambda s: s ** 3 * s.sin())))(a[:, 0]), A)


def test_promotion_follows_logical_ranks():
    # a batched 0-d float32 example and a 0-d float64 tensor promote as two 0-d tensors (to float64)
    x = rand(4).astype(np.float32)
    compare(lambda lib, a: lib.func.vmap(lambda r: r * lib.tensor(2.0, dtype=lib.float64))(a), x)
    compare(lambda lib, a: lib.func.vmap(lambda r: r.unsqueeze(0) * lib.tensor(2.0, dtype=lib.float64))(a), x)
    compare(lambda lib, a: lib.func.vmap(lambda r: r.long() < lib.tensor(0.5, dtype=lib.float64))(a), x)


def test_inplace_and_setitem_on_batched_tensors():
    def f(lib, a):
        def body(r):
            b = r * 2
            b.add_(1)
            b[1:3] = 0.5
            b[0] = r[1]
            b.clamp_(0.6, 2)
            b.zero_() if False else b.mul_(r)
            return b
        return lib.func.vmap(body)(a)
    compare(f, A)


def _cube_function(lib):
    class Cube(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(a):
            return a ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 3 * a * a * g
    return Cube


def test_custom_function_under_vmap_and_per_sample_grad():
    compare(lambda lib, a: lib.func.vmap(lambda r: _cube_function(lib).apply(r).sum())(a), A)
    compare(lambda lib, a: lib.func.vmap(lib.func.grad(lambda r: (_cube_function(lib).apply(r) * r).sum()))(a), A)


def test_batched_indices():
    x = rand(4, 5, 3)
    y = np.random.default_rng(0).integers(0, 5, (4,))
    z = np.random.default_rng(1).integers(0, 5, (4, 2))
    compare(lambda lib, a, i: lib.func.vmap(lambda r, k: r[k])(a, i), x, y)
    compare(lambda lib, a, i: lib.func.vmap(lambda r, k: r[k, 1:])(a, i), x, z)
    compare(lambda lib, a, i: lib.func.vmap(lambda k: a[0][k])(i), x, z)
    compare(lambda lib, a, i: lib.func.vmap(lib.func.grad(lambda r, k: (r[k] ** 2).sum()))(a, i), x, z)
    compare(lambda lib, a, i: lib.func.vmap(lambda r, k: r.gather(0, k[:, None].expand(2, 3)))(a, i), x, z)
    compare(lambda lib, a: lib.func.vmap(lambda r: (r.argmax(), r.argmin(0), r.argsort(-1)))(a), x)


@pytest.mark.parametrize("chunk", [1, 2, 3, 10])
def test_chunk_size(chunk):
    compare(lambda lib, a, c: lib.func.vmap(lambda x, y: (x.sum() * y, x.exp()), in_dims=(0, 1), out_dims=(1, 0),
                                            chunk_size=chunk)(a, c.T), A, C)
    compare(lambda lib, a: lib.func.jacrev(lambda x: (x @ x.T).sin(), chunk_size=chunk)(a), A)
