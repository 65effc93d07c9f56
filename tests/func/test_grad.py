"""ember.func.grad / grad_and_value / vjp against torch.func on the same functions and inputs."""
import numpy as np
import pytest

from oracle import ember, same_error, torch, compare
from func_util import rand

X, Y, W = rand(4), rand(4, seed=1), rand(4, 3, seed=2)


def test_grad_values_and_argnums():
    compare(lambda lib, x, y: lib.func.grad(lambda a, b: (a.sin() * b).sum())(x, y), X, Y)
    compare(lambda lib, x, y: lib.func.grad(lambda a, b: (a.sin() * b ** 2).sum(), argnums=1)(x, y), X, Y)
    compare(lambda lib, x, y: lib.func.grad(lambda a, b: (a.exp() * b).sum(), argnums=(0, 1))(x, y), X, Y)
    compare(lambda lib, x, y: lib.func.grad(lambda a, b: (a * b).sum(), argnums=-1)(x, y), X, Y)


def test_grad_pytree_inputs_and_unused():
    compare(lambda lib, x, w: lib.func.grad(lambda p: (p["w"].tanh().sum(0) * p["x"][:3]).sum())(
        {"w": w, "x": x}), X, W)
    compare(lambda lib, x, y: lib.func.grad(lambda a, b: (b * 2).sum())(x, y), X, Y)  # zeros


def test_grad_and_value_has_aux():
    def f(lib, x):
        return lib.func.grad_and_value(lambda a: ((a ** 3).sum(), {"sq": a * a}), has_aux=True)(x)
    compare(f, X)
    compare(lambda lib, x: lib.func.grad(lambda a: ((a ** 3).sum(), a.cos()), has_aux=True)(x), X)


def test_higher_order_grad():
    compare(lambda lib, x: lib.func.grad(lambda a: lib.func.grad(lambda b: (b.sin() * b).sum())(a).sum())(x), X)
    compare(lambda lib, x: lib.func.grad(lib.func.grad(lambda b: (b ** 4).sum()))(x[0]), X)


def test_grad_composes_with_outer_autograd():
    # an input that requires grad keeps the result differentiable by ordinary autograd
    out = []
    for lib in (ember, torch):
        x = lib.tensor(X, requires_grad=True)
        g = lib.func.grad(lambda a: (a ** 3).sum())(x)
        assert g.requires_grad
        (h,) = lib.autograd.grad(g.sum(), x)
        out.append(h.detach().numpy())
    np.testing.assert_allclose(out[0], out[1])


def test_grad_closure_requires_grad_like_torch():
    for lib in (ember, torch):
        w = lib.tensor(Y, requires_grad=True)
        assert lib.func.grad(lambda a: (a * a * w).sum())(lib.tensor(X)).requires_grad
        assert not lib.func.grad(lambda a: (a * a).sum())(lib.tensor(X)).requires_grad


@pytest.mark.parametrize("fn", [
    lambda lib: lib.func.grad(lambda a: a)(lib.ones(3)),
    lambda lib: lib.func.grad(lambda a: 1.0)(lib.ones(3)),
    lambda lib: lib.func.grad(lambda a: a.sum(), argnums=2)(lib.ones(3)),
    lambda lib: lib.func.grad(lambda a: a.sum(), argnums=())(lib.ones(3)),
    lambda lib: lib.func.grad(lambda a, b: a.sum(), argnums=(0, 0))(lib.ones(3), lib.ones(3)),
    lambda lib: lib.func.grad(lambda a: a.sum(), argnums=0.0)(lib.ones(3)),
    lambda lib: lib.func.grad(lambda a: a.sum(), has_aux=True)(lib.ones(3)),
    lambda lib: lib.func.grad(lambda a: a.sum())(lib.arange(3)),
    lambda lib: lib.func.grad(lambda a: a)(3.0),
    lambda lib: lib.func.vjp(lambda a: 3.0, lib.ones(3)),
    lambda lib: lib.func.vjp(lambda a: a * 2, lib.ones(3))[1](lib.ones(4)),
    lambda lib: lib.func.vjp(lambda a: a * 2, lib.ones(3))[1]((lib.ones(3),)),
])
def test_errors_match_torch(fn):
    same_error(fn)


def test_vjp_values_structure_and_reuse():
    def f(lib, x, w):
        out, fn = lib.func.vjp(lambda a, m: (a @ m, (a.sin() * 2).sum()), x, w)
        ct = (lib.ones_like(out[0]) * 0.5, lib.ones_like(out[1]))
        return out, fn(ct), fn(ct)  # vjp_fn can be called again
    compare(f, X, W)


def test_vjp_has_aux():
    compare(lambda lib, x: lib.func.vjp(lambda a: (a.exp(), a.sum()), x, has_aux=True)[::2], X)
    e, t = [lib.func.vjp(lambda a: (a.exp(), a.sum()), lib.tensor(X), has_aux=True)[1](lib.tensor(Y))
            for lib in (ember, torch)]
    np.testing.assert_allclose(e[0].numpy(), t[0].numpy())
