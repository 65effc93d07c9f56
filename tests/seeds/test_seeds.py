"""The code examples of the spec's seed notes (/work/shared/seeds/*.txt), run with ``import ember as torch``.

Each example is written once as ``example(torch)`` and run with ember and with real torch: what it
prints must be the same (object addresses aside), and where the seed shows its output, that too.
Random inputs of the seeds (``torch.randn``) are replaced by the same NumPy arrays for both libraries.

Pending examples (they need what later issues bring):
- nn issue: 000 "A Simple Custom Module" (module call = forward); 001 ``v = model(s); v.backward()`` and the
  TD update over ``model.parameters()``, ``class Model(nn.Module)`` with ``saved_tensors_hooks`` inside
  forward; 002 ``nn.Linear(2, 2)(x)`` (AddmmBackward0), ``nn.functional.cosine_similarity`` (DivBackward0),
  ``nn.functional.softmax/linear``; 004 ``class Net(nn.Module)`` with ``nn.Parameter``.
- training-stack issue: 000 weight files (``torch.save`` of models); 001 the ``SelfDeletingTempFile``
  pack/unpack hooks built on ``torch.save``/``torch.load`` and ``nn.DataParallel``; 002 DDP notes;
  004 TensorBoard ``SummaryWriter.add_graph``.
"""
from __future__ import annotations

import contextlib
import io
import re
import threading

import numpy as np
import pytest

import ember
import torch as real_torch

LIBS = {"ember": ember, "torch": real_torch}
_ADDR = re.compile(r" at 0x[0-9a-f]+")


def printed(example, lib, *args) -> str:
    """What ``example(lib, *args)`` prints, with object addresses removed."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        example(lib, *args)
    return _ADDR.sub("", buf.getvalue())


def same_print(example, *args) -> str:
    out_e, out_t = (printed(example, lib, *args) for lib in (ember, real_torch))
    assert out_e == out_t
    return out_e


# ---------------------------------------------------------------- 004: dynamic graph, Y_hat = X@w.t() + b
def forward_runs_at_once(torch, X, Y):
    w = torch.tensor([[3.0, 1.0]], requires_grad=True)
    b = torch.tensor([[3.0]], requires_grad=True)
    X, Y = torch.tensor(X), torch.tensor(Y)
    Y_hat = X @ w.t() + b
    loss = torch.mean(torch.pow(Y_hat - Y, 2))
    print(loss.data)
    print(Y_hat.data)
    print(Y_hat.grad_fn, loss.grad_fn, Y_hat.grad_fn.next_functions[0][0])
    loss.backward()
    print(w.grad, b.grad)
    try:
        loss.backward()  # the graph is freed after the first backward
    except RuntimeError as e:
        print(type(e).__name__, str(e).split(".")[0])


def test_forward_runs_at_once_and_graph_is_freed():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10, 2)).astype(np.float32)
    Y = rng.standard_normal((10, 1)).astype(np.float32)
    out = same_print(forward_runs_at_once, X, Y)
    assert "RuntimeError Trying to backward through the graph a second time" in out
    assert "<AddBackward0 object>" in out and "<MeanBackward0 object>" in out


def retain_graph_allows_second_backward(torch):
    w = torch.tensor([[3.0, 1.0]], requires_grad=True)
    X = torch.tensor([[1.0, 2.0], [0.5, -1.0]])
    loss = torch.mean(torch.pow(X @ w.t(), 2))
    loss.backward(retain_graph=True)
    loss.backward()
    print(w.grad)


def test_retain_graph():
    same_print(retain_graph_allows_second_backward)


# ---------------------------------------------------------------- 004: custom Function MyReLU
def my_relu_example(torch):
    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    w = torch.tensor([[3.0, 1.0]], requires_grad=True)
    b = torch.tensor([[3.0]], requires_grad=True)
    X = torch.tensor([[-1.0, -1.0], [1.0, 1.0]])
    Y = torch.tensor([[2.0, 3.0]])
    relu = MyReLU.apply
    Y_hat = relu(X @ w.t() + b)
    loss = torch.mean(torch.pow(Y_hat - Y, 2))
    loss.backward()
    print(w.grad)
    print(b.grad)
    print(Y_hat.grad_fn)


def test_custom_function_my_relu():
    out = same_print(my_relu_example)
    assert out == ("tensor([[4.5000, 4.5000]])\ntensor([[4.5000]])\n"
                   "<torch.autograd.function.MyReLUBackward object>\n")


# ---------------------------------------------------------------- 004: chain rule, leaves, retain_grad, hooks
def chain_rule(torch):
    x = torch.tensor(3.0, requires_grad=True)
    y1 = x + 1
    y2 = 2 * x
    loss = (y1 - y2) ** 2
    loss.backward()
    print(x.grad)


def test_chain_rule():
    assert same_print(chain_rule) == "tensor(4.)\n"


def leaf_and_non_leaf(torch):
    import warnings

    x = torch.tensor(3.0, requires_grad=True)
    y1 = x + 1
    y2 = 2 * x
    loss = (y1 - y2) ** 2
    loss.backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        print("loss.grad:", loss.grad)
        print("y1.grad:", y1.grad)
        print("y2.grad:", y2.grad)
    print(x.grad)
    print(x.is_leaf)
    print(y1.is_leaf)
    print(y2.is_leaf)
    print(loss.is_leaf)
    print(len(caught), all("not a leaf Tensor" in str(w.message) for w in caught))


def test_leaf_and_non_leaf():
    assert same_print(leaf_and_non_leaf) == ("loss.grad: None\ny1.grad: None\ny2.grad: None\ntensor(4.)\n"
                                             "True\nFalse\nFalse\nFalse\n3 True\n")


def retain_grad_and_hooks(torch):
    x = torch.tensor(3.0, requires_grad=True)
    y1 = x + 1
    y2 = 2 * x
    loss = (y1 - y2) ** 2
    y1.register_hook(lambda grad: print('y1 grad:', grad))
    y2.register_hook(lambda grad: print('y2 grad:', grad))
    loss.retain_grad()
    loss.backward()
    print("loss.grad:", loss.grad)
    print("x.grad:", x.grad)


def test_retain_grad_and_hooks():
    # the seed's output, hooks in the order torch's engine runs them (y2's node was created last)
    assert same_print(retain_grad_and_hooks) == ("y2 grad: tensor(4.)\ny1 grad: tensor(-4.)\n"
                                                 "loss.grad: tensor(1.)\nx.grad: tensor(4.)\n")


# ---------------------------------------------------------------- 001: saved tensors
def saved_self_and_result(torch, arr):
    x = torch.tensor(arr, requires_grad=True)
    y = x.pow(2)
    print(x.equal(y.grad_fn._saved_self))  # True
    print(x is y.grad_fn._saved_self)  # True
    y = x.exp()
    print(y.equal(y.grad_fn._saved_result))  # True
    print(y is y.grad_fn._saved_result)  # False


def test_saved_self_and_result():
    arr = np.random.default_rng(1).standard_normal(5).astype(np.float32)
    assert same_print(saved_self_and_result, arr) == "True\nTrue\nTrue\nFalse\n"


def raw_saved_register_hooks(torch, arr):
    """The seed's ``_raw_saved_self.register_hooks(pack, unpack)``, storing in memory instead of on disk."""
    store = {}

    def pack_hook(tensor):
        key = len(store)
        store[key] = tensor.detach().numpy().copy()
        print("packed", tuple(tensor.shape))
        return key

    def unpack_hook(key):
        print("unpacked", key)
        return torch.tensor(store[key])

    x = torch.tensor(arr, requires_grad=True)
    y = x.pow(2)
    y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
    y.sum().backward()
    print(x.grad)


def test_raw_saved_register_hooks():
    arr = np.arange(5, dtype=np.float32)
    assert same_print(raw_saved_register_hooks, arr) == ("packed (5,)\nunpacked 0\n"
                                                         "tensor([0., 2., 4., 6., 8.])\n")


def saved_tensors_hooks_threshold(torch, small, big):
    """The seed's size-threshold pack hook (keep small tensors as they are), minus the disk."""
    threshold = 1000
    packed = []

    def pack_hook(x):
        if x.numel() < threshold:
            return x
        packed.append(x.numel())
        return ("stored", x.detach().numpy().copy())

    def unpack_hook(t):
        if isinstance(t, torch.Tensor):
            return t
        return torch.tensor(t[1])

    for arr in (small, big):
        x = torch.tensor(arr, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            y = (x * x).sum()
        y.backward()
        print(torch.allclose(x.grad, 2 * x.detach()))
    print(packed)


def test_saved_tensors_hooks_threshold():
    rng = np.random.default_rng(2)
    out = same_print(saved_tensors_hooks_threshold, rng.standard_normal(10).astype(np.float32),
                     rng.standard_normal(2000).astype(np.float32))
    assert out == "True\nTrue\n[2000, 2000]\n"


# ---------------------------------------------------------------- 001: threads
def threads_train_fn(torch):
    results = []

    def train_fn():
        x = torch.ones(5, 5, requires_grad=True)
        # forward
        y = (x + 3) * (x + 4) * 0.5
        # backward
        y.sum().backward()
        results.append(x.grad)

    threads = []
    for _ in range(10):
        p = threading.Thread(target=train_fn, args=())
        p.start()
        threads.append(p)
    for p in threads:
        p.join()
    print(len(results), all(g.equal(results[0]) for g in results))
    print(results[0][0])


def test_threads_train_fn():
    assert same_print(threads_train_fn) == "10 True\ntensor([4.5000, 4.5000, 4.5000, 4.5000, 4.5000])\n"


def threads_shared_leaf(torch):
    w = torch.ones(3, requires_grad=True)

    def train_fn():
        for _ in range(20):
            ((w + 3) * (w + 4) * 0.5).sum().backward()

    threads = [threading.Thread(target=train_fn) for _ in range(8)]
    for p in threads:
        p.start()
    for p in threads:
        p.join()
    print(w.grad)  # 8 * 20 accumulations of 4.5, none lost


def test_threads_shared_leaf_accumulation():
    assert same_print(threads_shared_leaf) == "tensor([720., 720., 720.])\n"


# ---------------------------------------------------------------- 001 / 000: grad_fn, leaves, non-scalar backward
def graph_of_d(torch, arrays):
    a, w1, w2, w3, w4 = (torch.tensor(x, requires_grad=True) for x in arrays)
    b = w1 * a
    c = w2 * a
    d = w3 * b + w4 * c
    L = 10 - d
    print("The grad fn for a is", a.grad_fn)
    print("The grad fn for d is", d.grad_fn)
    print(b.grad_fn, L.grad_fn, [type(n).__name__ for n, _ in d.grad_fn.next_functions])
    print([[(type(m).__name__, i) for m, i in n.next_functions] for n, _ in d.grad_fn.next_functions])
    print(a.is_leaf, b.is_leaf, d.requires_grad)
    try:
        L.backward()
    except RuntimeError as e:
        print(type(e).__name__, e)
    L.backward(torch.ones_like(L))
    print(a.grad)


def test_graph_of_d_and_non_scalar_backward():
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((3, 3)).astype(np.float32) for _ in range(5)]
    out = same_print(graph_of_d, arrays)
    assert "The grad fn for a is None\nThe grad fn for d is <AddBackward0 object>\n" in out
    assert "RuntimeError grad can be implicitly created only for scalar outputs" in out


def requires_grad_is_contagious(torch):
    t1 = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    t2 = torch.FloatTensor(2, 2)  # No way to specify requires_grad while initiating
    t2.requires_grad = True
    t3 = torch.tensor([[0.5, 0.5], [0.5, 0.5]])
    print(t2.shape, t2.requires_grad, t2.is_leaf)
    print((t1 * t3).requires_grad, (t3 * 2).requires_grad, (t3 * 2).grad_fn)
    z = t1 + 1
    print(z.grad_fn)
    print(torch.Tensor(3, 5).shape)


def test_requires_grad_is_contagious():
    out = same_print(requires_grad_is_contagious)
    assert "True False None\n<AddBackward0 object>\n" in out


@pytest.mark.parametrize("name", sorted(LIBS))
def test_seed_examples_run_as_torch(name):
    """The MyReLU example gives the seed's numbers with either library (no cross-talk between runs)."""
    assert printed(my_relu_example, LIBS[name]).startswith("tensor([[4.5000, 4.5000]])")
