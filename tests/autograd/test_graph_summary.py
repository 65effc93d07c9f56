"""graph.summary: node counts, depth and leaves as torch's graph has them; saved bytes = the saved arrays."""
import numpy as np

from oracle import ember, torch

rng = np.random.default_rng(5)
X = rng.standard_normal((4, 3)).astype(np.float32)


def _mlp(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(rng_params[i]))
    x = lib.tensor(X)
    out = (model(x) * model(x).sigmoid()).sum()
    return model, out


rng_params = [rng.standard_normal(s).astype(np.float32) for s in [(5, 3), (5,), (2, 5), (2,)]]


def _torch_walk(fn):
    seen, out, stack = set(), [], [fn]
    while stack:
        f = stack.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        out.append(f)
        stack.extend(n for n, _ in f.next_functions)
    return out


def _torch_depth(fn, memo=None):
    memo = {} if memo is None else memo
    if fn not in memo:
        memo[fn] = 1 + max((_torch_depth(n, memo) for n, _ in fn.next_functions if n is not None), default=0)
    return memo[fn]


def test_counts_depth_and_leaves_match_torchs_graph():
    model, out = _mlp(ember)
    s = ember.autograd.graph.summary(out, params=model.named_parameters())
    _, tout = _mlp(torch)
    tnodes = _torch_walk(tout.grad_fn)
    expect = {}
    for f in tnodes:
        expect[type(f).__name__] = expect.get(type(f).__name__, 0) + 1
    assert s["by_type"] == expect
    assert s["nodes"] == len(tnodes)
    assert s["depth"] == _torch_depth(tout.grad_fn)
    assert sorted(leaf["name"] for leaf in s["leaves"]) == sorted(n for n, _ in model.named_parameters())
    assert s["leaf_bytes"] == sum(p.nbytes for p in model.parameters())
    d = s.to_dict()
    assert d["saved_tensors"] == s["saved_tensors"] and isinstance(d["by_type"], dict)
    text = str(s)
    assert "AddmmBackward0" in text and "0.weight" in text and f"depth {s['depth']}" in text


def test_saved_bytes_are_the_saved_arrays_nbytes():
    model, out = _mlp(ember)
    s = ember.autograd.graph.summary(out)
    arrays = {}
    count = 0
    for fn in ember.autograd.graph._walk([out.grad_fn]):
        for name in getattr(type(fn), "save", ()):
            v = getattr(fn, "_saved_" + name)
            if isinstance(v, ember.Tensor):
                count += 1
                arrays[id(v._data)] = v._data.nbytes
    assert s["saved_tensors"] == count > 0
    assert s["saved_bytes"] == sum(arrays.values()) > 0
    assert sum(s["saved_bytes_by_type"].values()) == s["saved_bytes"]


def test_backward_frees_what_the_summary_counts():
    x = ember.tensor(X, requires_grad=True)
    y = (x.exp() * x).tanh().sum()
    before = ember.autograd.graph.summary(y)
    assert before["saved_bytes"] >= 3 * X.nbytes and before["freed_nodes"] == 0
    y.backward()
    after = ember.autograd.graph.summary(y)
    assert after["saved_bytes"] == 0 and after["saved_tensors"] == 0
    assert after["freed_nodes"] == 3 and after["nodes"] == before["nodes"]


def test_summary_of_a_leaf_custom_function_and_many_roots():
    x = ember.tensor(X, requires_grad=True)
    s = ember.autograd.graph.summary(x)
    assert s["nodes"] == 1 and s["depth"] == 1 and s["leaves"][0]["shape"] == (4, 3)

    class Square(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g
    y = Square.apply(x)
    s = ember.autograd.graph.summary([y, x.sum()])
    assert s["by_type"] == {"AccumulateGrad": 1, "SquareBackward": 1, "SumBackward0": 1}
    assert s["saved_bytes"] == X.nbytes
    y.sum().backward()
    assert ember.autograd.graph.summary(y)["saved_bytes"] == 0
