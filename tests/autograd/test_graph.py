"""Graph structure (grad_fn names, next_functions, metadata, node hooks) and higher-order grads."""
import numpy as np
import pytest

from oracle import assert_close, check, ember, torch

LIBS = (ember, torch)
rng = np.random.default_rng(3)
A = rng.standard_normal((3, 3)).astype(np.float64)
X = rng.standard_normal(3).astype(np.float64)


def shape_of(fn, depth=3):
    """(name, ((child shape, input_nr), ...)) down to ``depth``; AccumulateGrad names its leaf's shape."""
    if fn is None:
        return None
    if depth == 0:
        return fn.name()
    kids = tuple((shape_of(n, depth - 1), nr) for n, nr in fn.next_functions)
    extra = tuple(fn.variable.shape) if "AccumulateGrad" in fn.name() else None
    return fn.name(), extra, kids


EXPRS = {
    "add_scalar": lambda lib, x, w: x + 1,
    "mul": lambda lib, x, w: x * w,
    "mul_const": lambda lib, x, w: x * lib.tensor(X),
    "pow_scalar": lambda lib, x, w: x ** 2,
    "pow_tensor": lambda lib, x, w: w.exp() ** x,
    "mm": lambda lib, x, w: lib.tensor(A) @ w,
    "mv": lambda lib, x, w: (w @ x.unsqueeze(1)).sum(),
    "mean": lambda lib, x, w: (x.exp() - 1).mean(),
    "sum_dim": lambda lib, x, w: w.tanh().sum(0),
    "chain": lambda lib, x, w: (x * 2).exp().sqrt().sum(),
    "same_input": lambda lib, x, w: x * x,
    "sub_neg_div": lambda lib, x, w: (-x - x / 3).sum(),
    "view_t": lambda lib, x, w: w.t().unsqueeze(0).expand(2, 3, 3).squeeze(),
    "cat_stack": lambda lib, x, w: lib.stack([lib.cat([x, x]), lib.cat([x, x])]),
}


@pytest.mark.parametrize("name", sorted(EXPRS))
def test_grad_fn_names_and_next_functions_match_torch(name):
    outs = []
    for lib in LIBS:
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor(A, requires_grad=True)
        outs.append(shape_of(EXPRS[name](lib, x, w).grad_fn))
    assert outs[0] == outs[1]


def test_leaf_and_constant_have_no_grad_fn():
    for lib in LIBS:
        x = lib.tensor(X, requires_grad=True)
        assert x.grad_fn is None and x.is_leaf
        c = lib.tensor(X) * 2
        assert c.grad_fn is None and c.is_leaf and not c.requires_grad
        acc = (x * 1).grad_fn.next_functions[0][0]
        assert acc.name() == "torch::autograd::AccumulateGrad"
        assert acc.next_functions == ()
        assert acc.variable is x


def test_metadata_is_a_persistent_dict():
    for lib in LIBS:
        y = lib.tensor(X, requires_grad=True).exp()
        md = y.grad_fn.metadata
        assert md == {} and isinstance(md, dict)
        md["tag"] = 1
        assert y.grad_fn.metadata == {"tag": 1}


def test_calling_a_node_runs_its_backward_formula():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor(X[::-1].copy(), requires_grad=True)
        y = x * w
        gx, gw = y.grad_fn(lib.ones(3, dtype=lib.float64))
        return gx, gw

    for a, b in zip(*[run(lib) for lib in LIBS]):
        assert_close(a, b)


def test_node_hook_handles_and_removal():
    counts = []
    for lib in LIBS:
        n = []
        x = lib.tensor(X, requires_grad=True)
        y = x.exp()
        h1 = y.grad_fn.register_hook(lambda gi, go: n.append("post"))
        h2 = y.grad_fn.register_prehook(lambda go: n.append("pre"))
        y.sum().backward(retain_graph=True)
        h1.remove()
        h2.remove()
        y.sum().backward()
        counts.append(n)
    assert counts[0] == counts[1] == ["pre", "post"]


# ----------------------------------------------------------------- create_graph, higher order
FUNS = {
    "tanh_exp": lambda lib, x: (x.tanh() * x.exp()).sum(),
    "pow_mix": lambda lib, x: (x.pow(3) - 2 * x ** 2 + x.exp().pow(0.5)).sum(),
    "matmul": lambda lib, x: (lib.tensor(A) @ x).tanh().dot(x) if hasattr(x, "dot") else
    ((lib.tensor(A) @ x.unsqueeze(1)).squeeze(1).tanh() * x).sum(),
    "quadratic": lambda lib, x: (x.unsqueeze(0) @ lib.tensor(A) @ x.unsqueeze(1)).sum(),
}


def _hessian(lib, f):
    x = lib.tensor(X, requires_grad=True)
    g, = lib.autograd.grad(f(lib, x), x, create_graph=True)
    rows = [lib.autograd.grad(g[i], x, retain_graph=True)[0] for i in range(3)]
    return lib.stack(rows)


@pytest.mark.parametrize("name", sorted(FUNS))
def test_full_hessian_matches_torch(name):
    assert_close(_hessian(ember, FUNS[name]), _hessian(torch, FUNS[name]))


@pytest.mark.parametrize("name", sorted(FUNS))
def test_hessian_vector_product_and_grad_of_grad(name):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        v = lib.tensor(X[::-1].copy())
        g, = lib.autograd.grad(FUNS[name](lib, x), x, create_graph=True)
        assert g.requires_grad
        hv, = lib.autograd.grad((g * v).sum(), x, create_graph=True)
        if not hv.requires_grad:  # a constant Hessian: no graph left, as in torch
            return g, hv, hv.requires_grad
        third, = lib.autograd.grad(hv.sum(), x, allow_unused=True, materialize_grads=True)
        return g, hv, third

    e, t = run(ember), run(torch)
    assert_close(e[0], t[0])
    assert_close(e[1], t[1])
    if isinstance(t[2], bool):
        assert e[2] == t[2]
    else:
        assert_close(e[2], t[2])


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_backward_create_graph_keeps_graph_of_grad():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        (x.pow(3).sum()).backward(create_graph=True)
        g = x.grad
        assert g.requires_grad and g.grad_fn is not None
        gg, = lib.autograd.grad(g.sum(), x)
        return g.detach(), gg

    for a, b in zip(run(ember), run(torch)):
        assert_close(a, b)


def test_gradgrad_via_oracle():
    check(lambda lib, x, w: ((x.unsqueeze(0) @ w).tanh() * x.exp()).sum(), X, A, gradgrad=True)


def test_backward_create_graph_warns_once_per_process():
    import warnings

    msgs = []
    for lib in LIBS:
        mod = lib.autograd if lib is ember else None
        if mod is not None:
            mod._create_graph_warned = False  # the flag is per process, as torch's TORCH_WARN_ONCE
        x = lib.tensor(X, requires_grad=True)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            (x * x).sum().backward(create_graph=True)
            (x * x).sum().backward(create_graph=True)
        msgs.append([str(w.message)[:60] for w in rec if "create_graph=True" in str(w.message)])
    # torch may already have warned earlier in this process; ember warns at most once
    assert len(msgs[0]) == 1 and len(msgs[1]) <= 1
    assert msgs[0][0].startswith("Using backward() with create_graph=True will create a refere")


def test_jvp_by_double_vjp_through_grad_outputs():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        y = (lib.tensor(A) @ x.unsqueeze(1)).squeeze(1).tanh() * x
        u = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(y, x, u, create_graph=True)  # u^T J, linear in u
        jv, = lib.autograd.grad(g, u, lib.tensor(X[::-1].copy()))  # J v
        return (jv,)

    for a, b in zip(run(ember), run(torch)):
        assert_close(a, b)


def test_create_graph_with_hooks_and_retain_grad():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        h = x.exp()
        h.register_hook(lambda g: g * x)  # the hook's own ops join the double-backward graph
        h.retain_grad()
        g, = lib.autograd.grad((h * h).sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        return g.detach(), gg, h.grad is None

    e, t = run(ember), run(torch)
    assert_close(e[0], t[0])
    assert_close(e[1], t[1])
    assert e[2] == t[2]
