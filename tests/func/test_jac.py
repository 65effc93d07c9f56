"""jvp, jacrev, jacfwd, hessian and their compositions against torch.func on the same functions and inputs."""
import numpy as np
import pytest

from oracle import ember, same_error, torch, compare
from func_util import rand

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


def _public_dual_inside(x, t):
    fw = ember.autograd.forward_ad if isinstance(x, ember.Tensor) else torch.autograd.forward_ad
    with fw.dual_level():
        return fw.unpack_dual(fw.make_dual(x, t).sin()).tangent


@pytest.mark.parametrize("fn", [
    lambda lib: lib.func.jvp(lambda a: a * 2, lib.ones(3), lib.ones(3)),
    lambda lib: lib.func.jvp(lambda a: a * 2, (lib.ones(3),), (lib.ones(4),)),
    lambda lib: lib.func.jvp(lambda a: a * 2, (lib.ones(3),), (lib.ones(3), lib.ones(3))),
    lambda lib: lib.func.jacrev(lambda a: a.sum(), argnums=1)(lib.ones(3)),
    lambda lib: lib.func.jacrev(lambda a: a.sum())(3.0),
    lambda lib: lib.func.jvp(lambda a: (a * 2, 3.0), (lib.ones(3),), (lib.ones(3),)),
    lambda lib: lib.func.jacfwd(lambda a: (a * 2, 1.0))(lib.ones(3)),
    lambda lib: lib.func.vmap(_public_dual_inside)(lib.ones(2, 3), lib.ones(2, 3)),
    lambda lib: lib.func.vmap(lambda t: lib.func.jvp(lambda a: [a.sum(), None], (lib.ones(3),), (t,)))(lib.eye(3)),
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


# ---------------------------------------------------------------- forward mode under and over the other transforms
def _fwd_only(lib):
    """A Function with a forward formula and no backward: only real forward-mode AD can push a tangent through."""
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def jvp(ctx, tx):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * tx

    return Cube


def test_jvp_is_forward_mode():
    compare(lambda lib, a, v: lib.func.jvp(lambda x: _fwd_only(lib).apply(x.sin()) * 2, (a,), (v,)), X, V)


COMPOSITIONS = {
    "vmap(jvp)": lambda lib, b, v, w: lib.func.vmap(lambda x, t: lib.func.jvp(lambda y: (y @ w).tanh(), (x,), (t,)))(
        b, v),
    "vmap(jvp) tangents only batched": lambda lib, b, v, w: lib.func.vmap(
        lambda t: lib.func.jvp(lambda y: (y @ w).sin() * y.sum(), (b[0],), (t,))[1])(v),
    "vmap(jvp) in_dims 1": lambda lib, b, v, w: lib.func.vmap(
        lambda x: lib.func.jvp(lambda y: y.exp() * y[0], (x,), (x.cos(),)), in_dims=1)(b),
    "jvp(vmap)": lambda lib, b, v, w: lib.func.jvp(lib.func.vmap(lambda x: (x @ w).tanh() * x.sum()), (b,), (v,)),
    "jvp(vmap(grad))": lambda lib, b, v, w: lib.func.jvp(
        lib.func.vmap(lib.func.grad(lambda x: (x @ w).sin().sum() * x.norm())), (b,), (v,)),
    "vmap(jvp(grad))": lambda lib, b, v, w: lib.func.vmap(
        lambda x, t: lib.func.jvp(lib.func.grad(lambda y: (y.exp() * y).sum()), (x,), (t,)))(b, v),
    "jvp(grad) argnums": lambda lib, b, v, w: lib.func.jvp(
        lambda x: lib.func.grad(lambda m, y: ((y @ m).sin() ** 2).sum(), argnums=(0, 1))(w, x), (b[0],), (v[0],)),
    "jvp(jvp)": lambda lib, b, v, w: lib.func.jvp(
        lambda x: lib.func.jvp(lambda y: (y @ w).sin(), (x,), (v[1],))[1], (b[0],), (v[0],)),
    "jacfwd(jacfwd)": lambda lib, b, v, w: lib.func.jacfwd(lib.func.jacfwd(lambda x: (x @ w).sin().sum()))(b[0]),
    "jacfwd(jacrev) argnums has_aux": lambda lib, b, v, w: lib.func.jacfwd(
        lib.func.jacrev(lambda x, m: (((x @ m).tanh() ** 2).sum(), x.sum()), argnums=1, has_aux=True),
        argnums=1, has_aux=True)(b[0], w),
    "vmap(hessian)": lambda lib, b, v, w: lib.func.vmap(lib.func.hessian(lambda x: (x @ w).sin().sum() * x.norm()))(b),
    "jacfwd through derived formulas": lambda lib, b, v, w: lib.func.jacfwd(
        lambda x: lib.cumprod(x, 0) + lib.linalg.det(lib.outer(x, x) + lib.eye(3, dtype=x.dtype)))(b[0]),
    "jvp has_aux under vmap": lambda lib, b, v, w: lib.func.vmap(
        lambda x: lib.func.jvp(lambda y: (y.sin(), y * 2), (x,), (x,), has_aux=True))(b),
}


@pytest.mark.parametrize("name", sorted(COMPOSITIONS))
def test_forward_mode_compositions(name):
    compare(lambda lib, b, v, w: COMPOSITIONS[name](lib, b, v, w), rand(4, 3, seed=3), rand(4, 3, seed=4), W)


def test_jvp_keeps_outer_reverse_mode():
    res = []
    for lib in (ember, torch):
        w = lib.tensor(W, requires_grad=True)
        x, v = lib.tensor(X), lib.tensor(V)
        out, tan = lib.func.jvp(lambda y: (y @ w).sin() * y.sum(), (x,), (v,))
        assert tan.requires_grad and out.requires_grad
        res.append([g.numpy() for g in lib.autograd.grad((tan ** 2).sum() + out.sum(), w)])
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10)


def test_jvp_of_op_without_forward_formula_raises_torchs_error():
    e, t = [], []
    for lib, out in ((ember, e), (torch, t)):
        try:
            lib.func.jvp(lambda y: lib.cdist(y[None], y[None] * 2), (lib.tensor(X),), (lib.tensor(V),))
        except NotImplementedError as err:
            out.append(str(err).split(" that ")[0])
    assert e == t == ["Trying to use forward AD with _cdist_forward"]
