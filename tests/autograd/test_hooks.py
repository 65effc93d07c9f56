"""Tensor hooks, node hooks, retain_grad interplay and post-accumulate hooks, against torch."""
import numpy as np
import pytest

from oracle import compare, ember, same_error, torch

LIBS = (ember, torch)
rng = np.random.default_rng(1)
V = rng.standard_normal(5).astype(np.float32)
M = rng.standard_normal((3, 5)).astype(np.float32)


def leaf(lib, a=V):
    return lib.tensor(a.copy(), requires_grad=True)


# ----------------------------------------------------------------- tensor hooks
def test_leaf_hook_sees_and_replaces_gradient():
    def run(lib):
        x = leaf(lib)
        seen = []
        x.register_hook(lambda g: seen.append(g.clone()))
        x.register_hook(lambda g: g * 10)
        x.register_hook(lambda g: seen.append(g.clone()))  # sees the replaced gradient
        (x.exp() * x).sum().backward()
        return seen, x.grad

    compare(run)


def test_nonleaf_hook_replaces_gradient_flowing_on():
    def run(lib):
        x = leaf(lib)
        h = x.tanh()
        h.register_hook(lambda g: g * 2)
        h.register_hook(lambda g: g + 1)
        (h * h).sum().backward()
        return (x.grad,)

    compare(run)


def test_hook_remove_and_order():
    def run(lib):
        x = leaf(lib)
        h = x * 3
        calls = []
        h1 = h.register_hook(lambda g: calls.append("a"))
        h.register_hook(lambda g: calls.append("b"))
        h3 = x.register_hook(lambda g: g * 0)
        h1.remove()
        h1.remove()  # removing twice is harmless
        h3.remove()
        h.sum().backward()
        return calls, x.grad

    compare(run)


def test_hook_on_tensor_without_grad_raises():
    same_error(lambda lib: lib.tensor(V).register_hook(lambda g: g))


def test_retain_grad_reflects_hooks_registered_before_and_after():
    def run(lib):
        x = leaf(lib)
        h = x.exp()
        h.register_hook(lambda g: g * 2)
        h.retain_grad()
        h.register_hook(lambda g: g + 100)  # registered after retain_grad
        (h * x).sum().backward()
        return h.grad, x.grad

    compare(run)


def test_hook_on_output_used_by_several_consumers_sees_sum():
    def run(lib):
        x = leaf(lib)
        h = x * 2
        seen = []
        h.register_hook(lambda g: seen.append(g.clone()))
        (h.exp() + h * h).sum().backward()
        return seen, x.grad

    compare(run)


def test_hooks_on_multi_output_node():
    def run(lib):
        x = leaf(lib, M)
        a, b, c = x.unbind(0)
        b.register_hook(lambda g: g * -1)
        (a * b + c).sum().backward()
        return (x.grad,)

    compare(run)


def test_post_accumulate_grad_hook():
    def run(lib):
        x = leaf(lib)
        seen = []

        def hook(t):
            seen.append(t.grad.clone())
            assert t is x

        hd = x.register_post_accumulate_grad_hook(hook)
        (x * x).sum().backward()
        (x * 3).sum().backward()
        hd.remove()
        x.sum().backward()
        return seen, x.grad

    compare(run)
    same_error(lambda lib: (leaf(lib) * 2).register_post_accumulate_grad_hook(lambda t: None))


def test_hooks_run_with_autograd_grad_but_no_accumulation():
    def run(lib):
        x = leaf(lib)
        seen = []
        x.register_hook(lambda g: seen.append(g.clone()) or g * 3)
        acc = []
        x.register_post_accumulate_grad_hook(lambda t: acc.append(1))
        g, = lib.autograd.grad((x * x).sum(), x)
        return seen, g, len(acc), x.grad is None

    compare(run)


# ----------------------------------------------------------------- node hooks
def test_node_post_hook_gets_grad_inputs_and_outputs_and_may_replace():
    def run(lib):
        x, w = leaf(lib), leaf(lib, V[::-1].copy())
        y = x * w
        got = []

        def post(grad_inputs, grad_outputs):
            got.append([g.clone() for g in grad_inputs] + [g.clone() for g in grad_outputs])
            return grad_inputs[0] * 0, grad_inputs[1]

        y.grad_fn.register_hook(post)
        (y * 2).sum().backward()
        return got, x.grad, w.grad

    compare(run)


def test_node_prehook_may_replace_grad_outputs_and_remove():
    def run(lib):
        x = leaf(lib)
        y = x.exp()
        seen = []
        hd = y.grad_fn.register_prehook(lambda go: (go[0] * 5,))
        y.grad_fn.register_prehook(lambda go: seen.append(go[0].clone()))
        y.sum().backward(retain_graph=True)
        g1 = x.grad.clone()
        hd.remove()
        y.sum().backward()
        return seen, g1, x.grad

    compare(run)


def test_accumulate_grad_node_hooks():
    def run(lib):
        x = leaf(lib)
        y = x * 2
        acc = y.grad_fn.next_functions[0][0]
        got = []
        acc.register_prehook(lambda go: got.append(("pre", go[0].clone())))
        acc.register_hook(lambda gi, go: got.append(("post", len(gi), go[0].clone())))
        y.sum().backward()
        return got, x.grad

    compare(run)


def test_tensor_hooks_run_before_node_prehooks():
    def run(lib):
        x = leaf(lib)
        h = x.exp()
        order = []
        h.grad_fn.register_prehook(lambda go: order.append("node_pre"))
        h.register_hook(lambda g: order.append("tensor"))
        h.retain_grad()
        (h * 2).sum().backward()
        return (order,)

    compare(run)


@pytest.mark.parametrize("where", ["tensor", "leaf", "prehook", "posthook"])
def test_hook_changing_size_or_count_raises(where):
    def run(lib):
        x = leaf(lib)
        h = x * 2
        if where == "tensor":
            h.register_hook(lambda g: g[:2])
        elif where == "leaf":
            x.register_hook(lambda g: g[:2])
        elif where == "prehook":
            h.grad_fn.register_prehook(lambda go: (go[0], go[0]))
        else:
            h.grad_fn.register_hook(lambda gi, go: (gi[0][:2], None))
        h.sum().backward()

    same_error(run)


def test_hook_changing_dtype_or_returning_non_tensor_raises():
    def run_dtype(lib):
        x = leaf(lib)
        h = x * 2
        h.register_hook(lambda g: g.double())
        h.sum().backward()

    same_error(run_dtype)

    def run_int(lib):
        h = leaf(lib) * 2
        h.register_hook(lambda g: 3)
        h.sum().backward()

    same_error(run_int)
