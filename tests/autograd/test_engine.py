"""The backward engine against torch: backward/grad APIs, accumulation, pruning, order, errors."""
import numpy as np
import pytest

from oracle import assert_close, compare, ember, run_both, same_error, torch

LIBS = (ember, torch)
rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4)).astype(np.float32)
B = rng.standard_normal((4, 2)).astype(np.float32)
V = rng.standard_normal(4).astype(np.float32)


def leaves(lib, *arrays):
    return [lib.tensor(a.copy(), requires_grad=True) for a in arrays]


# ----------------------------------------------------------------- backward / grad basics
def test_backward_scalar_and_gradient_argument():
    def run(lib):
        x, w = leaves(lib, A, B)
        y = (x @ w).tanh()
        y.backward(lib.tensor(np.ones((3, 2), np.float32) * 0.5))
        (x * x).sum().backward()
        return x.grad, w.grad

    compare(run)


def test_tensor_used_several_times_and_diamond():
    def run(lib):
        x, = leaves(lib, V)
        a = x * x
        b = a.exp()
        c = a.tanh()
        d = (b * c + a * x).sum()  # diamond through a, x used three times
        d.backward()
        return (x.grad,)

    compare(run)


def test_grads_accumulate_across_calls_and_retain_graph():
    def run(lib):
        x, = leaves(lib, V)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        g1 = x.grad.clone()
        y.backward()
        return g1, x.grad

    compare(run)


def test_autograd_grad_multiple_outputs_and_inputs():
    def run(lib):
        x, w = leaves(lib, A, B)
        h = x @ w
        o1 = h.tanh().sum()
        o2 = (h * h).mean()
        gs = lib.autograd.grad([o1, o2], [w, x, h], retain_graph=True)
        gs2 = lib.autograd.grad([h], [x], grad_outputs=[lib.ones(3, 2)])
        assert x.grad is None and w.grad is None
        return gs + gs2

    compare(run)


def test_autograd_grad_nonleaf_input():
    def run(lib):
        x, = leaves(lib, A)
        h = x.exp()
        z = (h * 3).sum() + h.mean()
        return lib.autograd.grad(z, h)

    compare(run)


def test_autograd_backward_multiple_roots():
    def run(lib):
        x, w = leaves(lib, A, B)
        y1 = x @ w
        y2 = (x * 2).sum(1)
        lib.autograd.backward([y1, y2], [lib.ones(3, 2), lib.tensor([1.0, 2.0, 3.0])])
        return x.grad, w.grad

    compare(run)


def test_multiple_roots_one_depending_on_the_other():
    def run(lib):
        x, = leaves(lib, V)
        y1 = x.exp()
        y2 = (y1 * y1).sum()
        lib.autograd.backward([y2, y1], [None, lib.ones(4) * 0.25])
        g1 = x.grad.clone()
        x.grad = None
        z1 = x.tanh()
        z2 = z1.sum() * 3
        gs = lib.autograd.grad([z1, z2], [x], [lib.ones(4), None])
        return g1, gs[0]

    compare(run)


def test_same_root_twice():
    def run(lib):
        x, = leaves(lib, V)
        y = (x * x).sum()
        lib.autograd.backward([y, y])
        return (x.grad,)

    compare(run)


# ----------------------------------------------------------------- inputs= of backward
def test_backward_inputs_accumulates_only_into_those():
    def run(lib):
        x, w = leaves(lib, A, B)
        h = x @ w
        h.retain_grad()  # retained grads of nodes that run are filled too, as in torch
        y = h.tanh().sum()
        y.backward(inputs=[w], retain_graph=True)
        assert x.grad is None
        hg = h.grad.clone()
        y.backward(inputs=w, retain_graph=True)
        y.backward(inputs=[h])  # h is both retained and an input: counted once
        assert x.grad is None
        return w.grad, hg, h.grad

    compare(run)


def test_backward_inputs_nonleaf_without_retain_grad():
    def run(lib):
        x, = leaves(lib, V)
        h = x.exp()
        (h * h).sum().backward(inputs=[h, x])
        return x.grad, h.grad

    compare(run)


def test_backward_inputs_empty_raises():
    def run(lib):
        x, = leaves(lib, V)
        x.sum().backward(inputs=[])

    same_error(run)


# ----------------------------------------------------------------- pruning and order
class _Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, *args):
        self.n += 1


def test_branches_that_cannot_reach_inputs_are_pruned():
    counts = []
    for lib in LIBS:
        x, w = leaves(lib, A, B)
        c_w, c_x = _Counter(), _Counter()
        hw = w.exp()
        hx = x.tanh()
        hw.grad_fn.register_hook(c_w)
        hx.grad_fn.register_hook(c_x)
        y = (hx @ hw).sum()
        lib.autograd.grad(y, [hw], retain_graph=True)
        counts.append((c_w.n, c_x.n))
        y.backward(inputs=[x])
        counts.append((c_w.n, c_x.n))
        assert w.grad is None
    assert counts[:2] == counts[2:]
    assert counts[0] == (0, 0)


def test_pruned_custom_function_does_not_run():
    def run(lib):
        calls = []

        class Tracked(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2

            @staticmethod
            def backward(ctx, g):
                calls.append(1)
                return g * 2

        x, w = leaves(lib, V, V)
        y = (Tracked.apply(x) * w).sum()
        g, = lib.autograd.grad(y, [w], retain_graph=True)
        n_pruned = len(calls)
        y.backward()
        return n_pruned, len(calls), g

    (ne, ce, ge), (nt, ct, gt) = run_both(run)
    assert (ne, ce) == (nt, ct) == (0, 1)
    assert_close(ge, gt)


def _order(lib):
    names = []
    x, w = leaves(lib, A, B)
    a = x.exp()
    b = x.tanh()
    c = (a * b) @ w
    d = c.sum() + a.mean()
    for t in (a, b, c, d):
        fn = t.grad_fn
        fn.register_prehook(lambda g, fn=fn: names.append(fn.name()))
    for fn, _ in c.grad_fn.next_functions:
        if fn is not None:
            fn.register_hook(lambda gi, go, fn=fn: names.append("post " + fn.name()))
    d.backward()
    return names


def test_execution_order_matches_torch():
    e, t = run_both(_order)
    assert e == t


def test_accumulate_grad_nodes_are_cached_and_shared():
    for lib in LIBS:
        x, = leaves(lib, V)
        a, b = x * 2, x.exp()
        assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]
        assert a.grad_fn.next_functions[0][0].variable is x


# ----------------------------------------------------------------- errors and warnings
def test_implicit_grad_only_for_scalar_outputs():
    same_error(lambda lib: (leaves(lib, V)[0] * 2).backward())


def test_element_does_not_require_grad():
    same_error(lambda lib: lib.tensor(V).sum().backward())
    same_error(lambda lib: lib.autograd.grad(lib.tensor(V).sum(), leaves(lib, V)))
    same_error(lambda lib: lib.autograd.backward([leaves(lib, V)[0].sum(), lib.tensor(1.0)]),
               match_words=["element 1 of tensors does not require grad"])


def test_backward_twice_through_freed_graph():
    def run(lib):
        x, = leaves(lib, V)
        y = (x.exp() * x).sum()
        y.backward()
        y.backward()

    same_error(run)

    def run_grad(lib):
        x, = leaves(lib, V)
        y = x.pow(3).sum()
        lib.autograd.grad(y, x)
        lib.autograd.grad(y, x)

    same_error(run_grad)


def test_retain_graph_then_free():
    def run(lib):
        x, = leaves(lib, V)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        g = x.grad.clone()
        try:
            y.backward()
        except RuntimeError as e:
            return g, str(e)[:40]
        raise AssertionError("third backward did not raise")

    (ge, me), (gt, mt) = run_both(run)
    assert_close(ge, gt)
    assert me == mt


def test_unused_input_without_allow_unused():
    def run(lib):
        x, u = leaves(lib, V, V)
        lib.autograd.grad((x * 2).sum(), [x, u])

    same_error(run, match_words=["at index 1 appears to not have been used in the graph",
                                 "allow_unused=True"])


def test_allow_unused_and_materialize_grads():
    def run(lib):
        x, u = leaves(lib, V, A)
        y = (x * 2).sum()
        g = lib.autograd.grad(y, [x, u], allow_unused=True, retain_graph=True)
        assert g[1] is None
        m = lib.autograd.grad(y, [x, u], materialize_grads=True)
        return g[0], m[0], m[1]

    compare(run)
    same_error(lambda lib: lib.autograd.grad(leaves(lib, V)[0].sum(), leaves(lib, V), allow_unused=False,
                                             materialize_grads=True))


def test_input_that_does_not_require_grad():
    def run(lib):
        x, = leaves(lib, V)
        lib.autograd.grad((x * 2).sum(), [x, lib.tensor(V)])

    same_error(run)


def test_gradient_shape_mismatch():
    def run(lib):
        x, = leaves(lib, A)
        (x * 2).backward(lib.ones(4, 3))

    same_error(run)

    def run_grad(lib):
        x, = leaves(lib, A)
        lib.autograd.grad([x * 2], [x], [lib.ones(3)])

    same_error(run_grad)


def test_number_of_grad_tensors_mismatch():
    def run(lib):
        x, = leaves(lib, A)
        lib.autograd.backward([x.sum(), x.mean()], [lib.tensor(1.0)])

    same_error(run)

    def run_grad(lib):
        x, = leaves(lib, A)
        lib.autograd.grad([x.sum(), x.mean()], x, [lib.tensor(1.0)])

    same_error(run_grad)

    def extra(lib):  # extra gradients are ignored by both
        x, = leaves(lib, A)
        lib.autograd.backward([x.sum()], [lib.tensor(2.0), lib.tensor(3.0)])
        g, = lib.autograd.grad([(x * x).sum()], x, [lib.tensor(0.5), lib.tensor(3.0)])
        return x.grad, g

    compare(extra)


def test_empty_inputs_of_grad_and_backward_inputs_not_requiring_grad():
    same_error(lambda lib: lib.autograd.grad(leaves(lib, V)[0].sum(), []))

    def run(lib):
        x, = leaves(lib, V)
        (x * 3).sum().backward(inputs=[x, lib.tensor(V)])

    same_error(run)


def test_grad_wrt_output_itself_and_repeated_inputs():
    def run(lib):
        x, = leaves(lib, V)
        y = x * 2
        g1, = lib.autograd.grad(y, y, lib.ones(4) * 3)
        g2 = lib.autograd.grad((y * y).sum(), [x, x, y])
        return (g1,) + g2

    compare(run)


def test_grad_output_dtype_and_python_number_root():
    def run(lib):
        x, = leaves(lib, V)
        g, = lib.autograd.grad((x * 2).sum(), x, grad_outputs=lib.tensor(2.0, dtype=lib.float64))
        (x * 2).backward(lib.ones(4, dtype=lib.float64))
        s = lib.tensor(3.0, requires_grad=True)
        s.backward()
        return g, x.grad, s.grad

    compare(run)


def test_nonleaf_grad_access_warns_and_retain_grad_fills():
    for lib in LIBS:
        x, = leaves(lib, V)
        h = x * 3
        with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
            assert h.grad is None
        h2 = x.exp()
        h2.retain_grad()
        assert h2.retains_grad
        (h2 * h2).sum().backward()
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            g = h2.grad
        assert_close(g, torch.tensor(2 * np.exp(V) ** 1) if lib is torch else g)
    hs = []
    for lib in LIBS:
        x, = leaves(lib, V)
        h = x.exp()
        h.retain_grad()
        h.retain_grad()  # idempotent
        (h * h).sum().backward(retain_graph=True)
        (h * h).sum().backward()
        hs.append(h.grad)
    assert_close(*hs)


def test_retain_grad_on_leaf_and_on_no_grad_tensor():
    for lib in LIBS:
        x, = leaves(lib, V)
        x.retain_grad()  # no-op on leaves
        assert not x.retains_grad
    same_error(lambda lib: lib.tensor(V).retain_grad())


def test_grad_of_leaf_in_no_grad_not_recorded():
    for lib in LIBS:
        x, = leaves(lib, V)
        with lib.no_grad():
            y = x * 2
        assert not y.requires_grad and y.grad_fn is None


def _interleaved_order(lib):
    """Two branches built in interleaved order, joined late; node pre-hooks log the run order."""
    names = []
    x, w = leaves(lib, V, V)
    a1 = x.exp()
    b1 = w.tanh()
    a2 = a1 * 2
    b2 = b1 + 1
    a3 = a2.sqrt()
    j = a3 * b2 + a1.sum()
    roots = [j.sum(), (b2 * 3).sum()]
    for i, t in enumerate((a1, b1, a2, b2, a3, j)):
        t.grad_fn.register_prehook(lambda g, i=i: names.append(i))
    lib.autograd.backward(roots)
    return names


def test_execution_order_interleaved_branches_and_roots():
    e, t = run_both(_interleaved_order)
    assert e == t


@pytest.mark.parametrize("bad", ["size", "float64", "int32", "float16", "list"])
def test_grad_setter_checks(bad):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        x.grad = {"size": lambda: lib.ones(2), "list": lambda: [1.0, 2.0, 3.0]}.get(
            bad, lambda: lib.ones(3, dtype=getattr(lib, bad)))()

    same_error(run)


def test_grad_setter_accepts_and_deletes():
    for lib in LIBS:
        x = lib.ones(3, requires_grad=True)
        x.grad = lib.full((3,), 2.0)
        (x * x).sum().backward()
        assert x.grad.tolist() == [4.0, 4.0, 4.0]
        del x.grad
        assert x.grad is None


# ----------------------------------------------------------------- random graphs
from hypothesis import given, settings, strategies as st  # noqa: E402

_UNARY = [lambda t: t.tanh(), lambda t: (t * 0.3).exp(), lambda t: t * 2.5, lambda t: t.pow(2), lambda t: -t,
          lambda t: t.sum() * t]
_BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, lambda a, b: a * b.sum()]


@st.composite
def _graphs(draw):
    n_leaves = draw(st.integers(1, 3))
    steps = []
    for k in range(draw(st.integers(1, 12))):
        avail = n_leaves + k
        if draw(st.booleans()):
            steps.append(("u", draw(st.integers(0, len(_UNARY) - 1)), draw(st.integers(0, avail - 1))))
        else:
            steps.append(("b", draw(st.integers(0, len(_BINARY) - 1)), draw(st.integers(0, avail - 1)),
                          draw(st.integers(0, avail - 1))))
    total = n_leaves + len(steps)
    roots = draw(st.lists(st.integers(n_leaves, total - 1), min_size=1, max_size=2, unique=True))
    wrt = draw(st.lists(st.integers(0, total - 1), min_size=1, max_size=3, unique=True))
    mode = draw(st.sampled_from(["backward", "grad", "backward_inputs"]))
    seed = draw(st.integers(0, 2**16))
    return n_leaves, steps, roots, wrt, mode, seed


def _run_graph(lib, n_leaves, steps, roots, wrt, mode, seed):
    rng = np.random.default_rng(seed)
    vals = [lib.tensor(rng.standard_normal(3), requires_grad=True) for _ in range(n_leaves)]
    order = []
    for k, step in enumerate(steps):
        t = _UNARY[step[1]](vals[step[2]]) if step[0] == "u" else _BINARY[step[1]](vals[step[2]], vals[step[3]])
        t.grad_fn.register_prehook(lambda g, i=n_leaves + k: order.append(i))
        vals.append(t)
    outs = [vals[r] for r in roots]
    ups = [lib.tensor(rng.standard_normal(3)) for _ in roots]
    inputs = [vals[i] for i in wrt]
    if mode == "grad":
        return order, list(lib.autograd.grad(outs, inputs, ups, allow_unused=True))
    for t in inputs:
        if t.grad_fn is not None:
            t.retain_grad()
    if mode == "backward":
        lib.autograd.backward(outs, ups)
        return order, [t.grad for t in vals[:n_leaves]] + [t.grad for t in inputs]
    lib.autograd.backward(outs, ups, inputs=inputs)
    return order, [t.grad for t in vals[:n_leaves]] + [t.grad for t in inputs]


@settings(max_examples=60, deadline=None)
@given(_graphs())
def test_random_graphs_match_torch_in_grads_and_order(graph):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .grad of non-leaves that were not retained
        (oe, ge), (ot, gt) = _run_graph(ember, *graph), _run_graph(torch, *graph)
    assert oe == ot
    assert len(ge) == len(gt)
    for i, (a, b) in enumerate(zip(ge, gt)):
        assert_close(a, b, what=f"grad {i}")


def test_backward_inputs_nonleaf_retains_grad_and_runs_its_node():
    def run(lib):
        x, = leaves(lib, V)
        h = x * 2
        ran = []
        h.grad_fn.register_hook(lambda gi, go: ran.append(1))
        (h * h).sum().backward(inputs=[h])
        return h.retains_grad, len(ran), x.grad is None, h.grad

    (*fe, ge), (*ft, gt) = run_both(run)
    assert fe == ft == [True, 1, True]
    assert_close(ge, gt)


def test_concurrent_backward_into_shared_leaf_loses_no_update():
    import threading

    def run(lib, n_threads=4, n_iter=25):
        w = lib.tensor(V.copy(), requires_grad=True)
        errors = []

        def work(k):
            try:
                for _ in range(n_iter):
                    ((w * (k + 1)).tanh() * w).sum().backward()
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        return w.grad

    assert_close(run(ember), run(torch), rtol=1e-4)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_leaf_grads_never_alias_each_other_or_the_incoming_gradient():
    def run(lib):
        x1, x2, w = leaves(lib, V, V, V * 3)
        ((x1 + x2) * w).sum().backward(create_graph=True)
        assert x1.grad is not x2.grad and x1.grad.requires_grad
        with lib.no_grad():
            x1.grad.zero_()
        g2 = x2.grad
        (x2 * 5).sum().backward()  # accumulates in place into the same tensor, as torch
        assert x2.grad is g2
        y1, y2 = leaves(lib, V, V)
        (y1 + y2).sum().backward()
        with lib.no_grad():
            y1.grad.mul_(7)
        return x1.grad, x2.grad, y1.grad, y2.grad

    compare(run)


def test_edge_shapes_and_gradient_layouts():
    def run(lib):
        e = lib.zeros(0, 3, requires_grad=True)
        (e * 2).sum().backward()
        ge, = lib.autograd.grad(e.exp(), e, lib.zeros(0, 3))
        s = lib.tensor(2.0, requires_grad=True)
        gs, = lib.autograd.grad(s * s, s)
        one = lib.ones(1, 1, requires_grad=True)
        (one * 3).backward()  # one element, not 0-d: implicit gradient allowed
        nc = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        (nc.t() * 2).backward(lib.ones(3, 2).t().contiguous().t())  # non-contiguous float32 gradient
        return e.grad, ge, gs, one.grad, nc.grad

    compare(run)
    same_error(lambda lib: (lib.zeros(0, 3, requires_grad=True) * 2).backward())


def test_reentrant_backward_in_function_and_in_hook():
    def run(lib):
        class Recompute(lib.autograd.Function):  # checkpoint-style: backward re-runs forward with grad
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return (x.tanh() * x).exp()

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                with lib.enable_grad():
                    xd = x.detach().requires_grad_()
                    y = (xd.tanh() * xd).exp()
                return lib.autograd.grad(y, xd, g)[0]

        x, w, aux = leaves(lib, V * 0.5, V, V[::-1].copy())
        (Recompute.apply(x * 2) * 3).sum().backward()
        h = w * 2

        def hook(g):
            assert not lib.is_grad_enabled()  # hooks run in the backward's grad mode (create_graph)
            with lib.enable_grad():
                (aux * aux).sum().backward()
            return g

        h.register_hook(hook)
        (h * h).sum().backward()
        return x.grad, w.grad, aux.grad

    compare(run)


def _run_graph_second_order(lib, n_leaves, steps, roots, wrt, mode, seed):
    rng = np.random.default_rng(seed)
    vals = [lib.tensor(rng.standard_normal(3), requires_grad=True) for _ in range(n_leaves)]
    for step in steps:
        vals.append(_UNARY[step[1]](vals[step[2]]) if step[0] == "u" else
                    _BINARY[step[1]](vals[step[2]], vals[step[3]]))
    outs = [vals[r] for r in roots]
    ups = [lib.tensor(rng.standard_normal(3)) for _ in roots]
    leaves_ = vals[:n_leaves]
    gs = lib.autograd.grad(outs, leaves_, ups, create_graph=True, allow_unused=True)
    v = [lib.tensor(rng.standard_normal(3)) for _ in gs]
    terms = [(g * u).sum() for g, u in zip(gs, v) if g is not None and g.requires_grad]
    if not terms:
        return list(gs), []
    ggs = lib.autograd.grad(terms, leaves_, allow_unused=True, materialize_grads=True)
    return list(gs), list(ggs)


@settings(max_examples=40, deadline=None)
@given(_graphs())
def test_random_graphs_second_order_match_torch(graph):
    (ge, gge), (gt, ggt) = _run_graph_second_order(ember, *graph), _run_graph_second_order(torch, *graph)
    for i, (a, b) in enumerate(zip(ge, gt)):
        assert_close(a, b, what=f"grad {i}")
    assert len(gge) == len(ggt)
    for i, (a, b) in enumerate(zip(gge, ggt)):
        assert_close(a, b, what=f"gradgrad {i}")
