"""ember.autograd.functional against torch.autograd.functional: same values on the same functions."""
import numpy as np
import pytest

from oracle import assert_close, compare, ember, torch

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4)).astype(np.float64)
X = rng.standard_normal(4).astype(np.float64)
Y = rng.standard_normal((2, 3)).astype(np.float64)


def f_vec(lib):
    a = lib.tensor(A)
    return lambda x: (a @ x).tanh() * x[:3].exp()


def f_pair(lib):
    return lambda x, y: ((x[:3] * y).sum(0).sin() * 2, (y ** 2).sum() + x.sum())


def f_scalar(lib):
    a = lib.tensor(A)
    return lambda x: ((a @ x).tanh() ** 2).sum() + (x ** 3).sum()


def f_scalar2(lib):
    return lambda x, y: (x[:3] * y).sum() * x.sum() + (y ** 3).sum()


def _functional(fn, build, *args, **kw):
    """``lib.autograd.functional.<fn>(build(lib), inputs, **kw)`` as a function of ``lib`` (arrays made tensors)."""
    def run(lib):
        inputs = tuple(lib.tensor(a) for a in args)
        if kw.get("v") is not None:
            kw2 = dict(kw, v=tuple(lib.tensor(v) for v in kw["v"]) if isinstance(kw["v"], tuple) else lib.tensor(kw["v"]))
        else:
            kw2 = kw
        return getattr(lib.autograd.functional, fn)(build(lib), inputs[0] if len(inputs) == 1 else inputs, **kw2)
    return run


def test_vjp_jvp_match_torch():
    compare(_functional("vjp", f_vec, X, v=rng.standard_normal(3)))
    compare(_functional("jvp", f_vec, X, v=rng.standard_normal(4)))
    compare(_functional("vjp", f_pair, X, Y, v=(rng.standard_normal(3), np.array(1.5))))
    compare(_functional("jvp", f_pair, X, Y, v=(rng.standard_normal(4), rng.standard_normal((2, 3)))))


def test_jacobian_matches_torch_for_every_structure():
    compare(_functional("jacobian", f_vec, X))
    compare(_functional("jacobian", f_pair, X, Y))
    compare(_functional("jacobian", f_scalar, X))


def test_hessian_hvp_vhp_match_torch():
    compare(_functional("hessian", f_scalar, X))
    compare(_functional("hessian", f_scalar2, X, Y))
    v = rng.standard_normal(4)
    compare(_functional("hvp", f_scalar, X, v=v))
    compare(_functional("vhp", f_scalar, X, v=v))
    compare(_functional("hvp", f_scalar2, X, Y, v=(rng.standard_normal(4), rng.standard_normal((2, 3)))))


def test_create_graph_keeps_graph_and_strict_errors():
    x = ember.tensor(X, requires_grad=True)
    _, g = ember.autograd.functional.vjp(f_scalar(ember), x, create_graph=True)
    assert g.requires_grad
    (gg,) = ember.autograd.grad(g.sum(), x)
    xt = torch.tensor(X, requires_grad=True)
    _, gt = torch.autograd.functional.vjp(f_scalar(torch), xt, create_graph=True)
    (ggt,) = torch.autograd.grad(gt.sum(), xt)
    assert_close(gg, ggt)
    for lib in (ember, torch):
        with pytest.raises(RuntimeError):
            lib.autograd.functional.jacobian(lambda x, y: x * 2, (lib.tensor(X), lib.tensor(X)), strict=True)
        with pytest.raises(RuntimeError, match="v can only be None"):
            lib.autograd.functional.vjp(f_vec(lib), lib.tensor(X))


def f_tuple_out(lib):
    return lambda x: (x.exp() * x.sum(), x[:2].sin(), lib.cumprod(x, 0))


def f_indep(lib):
    return lambda x, y: (x * 2, y.detach() * 3)


@pytest.mark.parametrize("build,args", [(f_vec, (X,)), (f_pair, (X, Y)), (f_scalar, (X,)), (f_tuple_out, (X,)),
                                        (f_indep, (X, Y))], ids=["vec", "pair", "scalar", "tuple_out", "indep"])
def test_forward_mode_jacobian_matches_torch(build, args):
    compare(_functional("jacobian", build, *args, vectorize=True, strategy="forward-mode"))


@pytest.mark.parametrize("build,args", [(f_scalar, (X,)), (f_scalar2, (X, Y))], ids=["one", "two"])
def test_forward_over_reverse_hessian_matches_torch(build, args):
    # values compared (torch's result also keeps a grad_fn from the inputs it sets requires_grad on internally)
    compare(_functional("hessian", build, *args, vectorize=True, outer_jacobian_strategy="forward-mode"),
            requires_grad=False)


@pytest.mark.parametrize("kw", [dict(strategy="forward-mode"), dict(strategy="forward-mode", vectorize=True,
                                                                    create_graph=True),
                                dict(strategy="forward-mode", vectorize=True, strict=True), dict(strategy="sideways"),
                                dict(vectorize=True, strict=True)], ids=str)
def test_jacobian_strategy_errors_as_torch(kw):
    got = []
    for lib in (ember, torch):
        with pytest.raises(Exception) as info:
            lib.autograd.functional.jacobian(lambda x: x * 2, lib.tensor(X), **kw)
        got.append((type(info.value), str(info.value)))
    assert got[0] == got[1]
    got = []
    for lib in (ember, torch):
        with pytest.raises(Exception) as info:
            lib.autograd.functional.hessian(lambda x: x.sum(), lib.tensor(X), outer_jacobian_strategy="up")
        got.append((type(info.value), str(info.value)))
    assert got[0] == got[1]
