"""jvp, jacrev, jacfwd, hessian and their compositions against torch.func on the same functions and inputs."""
import numpy as np
import pytest

from oracle import ember, same_error, torch
from func_util import compare, rand

X, W, V = rand(3), rand(3, 4, seed=1), rand(3, seed=2)

FUNCS = {
    "matvec_sin": lambda lib, a, w: (a @ w).sin(),
    "softmax": lambda lib, a, w: lib.nn.functional.softmax(a * w.sum(1), 0),
    "scalar": lambda lib, a, w: (a.exp() * a).sum() + (a @ w).pow(2).sum(),
    "matrix_out": lambda lib, a, w: lib.outer(a, a.tanh()) @ w,
    "reductions": lambda lib, a, w: lib.stack([a.norm(), a.logsumexp(0), a.var()]),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians(name, transform):
    f = FUNCS[name]
    compare(lambda lib, a, w: getattr(lib.func, transform)(lambda x: f(lib, x, w))(a), X, W)


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobian_argnums_and_tuple_outputs(transform):
    def f(lib, a, w):
        return getattr(lib.func, transform)(lambda x, m: ((x @ m).cos(), (x * x).sum()), argnums=(0, 1))(a, w)
    compare(f, X, W)
    compare(lambda lib, a, w: getattr(lib.func, transform)(lambda x, m: (x @ m).exp(), argnums=1)(a, w), X, W)


def test_jacobian_has_aux():
    compare(lambda lib, a: lib.func.jacrev(lambda x: (x.sin(), x.sum()), has_aux=True)(a), X)
    compare(lambda lib, a: lib.func.jacfwd(lambda x: (x.sin(), x.sum()), has_aux=True)(a), X)


@pytest.mark.parametrize("name", ["scalar", "matvec_sin"])
def test_hessian_and_compositions(name):
    f = FUNCS[name]
    compare(lambda lib, a, w: lib.func.hessian(lambda x: f(lib, x, w))(a), X, W)
    compare(lambda lib, a, w: lib.func.jacfwd(lib.func.jacrev(lambda x: f(lib, x, w)))(a), X, W)
    compare(lambda lib, a, w: lib.func.jacrev(lib.func.jacrev(lambda x: f(lib, x, w)))(a), X, W)


def test_jvp_values_and_aux():
    compare(lambda lib, a, w, v: lib.func.jvp(lambda x: (x @ w).sin(), (a,), (v,)), X, W, V)
    compare(lambda lib, a, w, v: lib.func.jvp(lambda x, m: ((x @ m).exp(), x.sum()), (a, w), (v, w * 0.5)), X, W, V)
    compare(lambda lib, a, w, v: lib.func.jvp(lambda x: ((x * 3).sin(), x.cos()), (a,), (v,), has_aux=True), X, W, V)


def test_per_example_jacobians_and_hessian_vector_products():
    xs = rand(4, 3, seed=5)
    compare(lambda lib, b, w: lib.func.vmap(lib.func.jacrev(lambda x: (x @ w).tanh()))(b), xs, W)
    compare(lambda lib, b, w: lib.func.vmap(lib.func.jacfwd(lambda x: (x @ w).tanh()))(b), xs, W)
    # forward-over-reverse hvp
    compare(lambda lib, a, v: lib.func.jvp(lib.func.grad(lambda x: (x.sin() * x ** 2).sum()), (a,), (v,)), X, V)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.func.jvp(lambda a: a * 2, lib.ones(3), lib.ones(3)),
    lambda lib: lib.func.jvp(lambda a: a * 2, (lib.ones(3),), (lib.ones(4),)),
    lambda lib: lib.func.jvp(lambda a: a * 2, (lib.ones(3),), (lib.ones(3), lib.ones(3))),
    lambda lib: lib.func.jacrev(lambda a: a.sum(), argnums=1)(lib.ones(3)),
    lambda lib: lib.func.jacrev(lambda a: a.sum())(3.0),
])
def test_errors_match_torch(fn):
    same_error(fn)


def _mlp(lib):
    m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh(), lib.nn.Linear(2, 1))
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.tensor(rand(*p.shape, seed=10 + i).astype(np.float32)))
    return m


def test_module_jacobian_and_parameter_hessian():
    x = rand(4, 3, seed=7).astype(np.float32)

    def hess(lib, inp):
        m = _mlp(lib)
        params = {k: v.detach() for k, v in m.named_parameters()}
        return lib.func.hessian(lambda p: lib.func.functional_call(m, p, (inp,)).sum())(params)
    compare(hess, x, rtol=1e-4, atol=1e-5)
    compare(lambda lib, inp: lib.func.jacrev(_mlp(lib))(inp), x, rtol=1e-4, atol=1e-5)
    compare(lambda lib, inp: lib.func.vmap(lib.func.hessian(lambda r: (r.exp() * r).sum()))(inp), x)


def test_outer_autograd_through_vmap_of_grad():
    res = []
    for lib in (ember, torch):
        x = lib.tensor(rand(4, 3, seed=3), requires_grad=True)
        g = lib.func.vmap(lib.func.grad(lambda r: (r.sin() ** 3).sum()))(x)
        assert g.requires_grad
        res.append(lib.autograd.grad(g.sum(), x)[0].numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10)
