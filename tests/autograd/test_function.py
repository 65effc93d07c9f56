"""Custom autograd.Function against torch: both styles, ctx features, errors, double backward."""
from __future__ import annotations

import re

import numpy as np
import pytest

from oracle import same, same_error


def _my_relu(lib):
    class MyReLU(lib.autograd.Function):
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
    return MyReLU


def test_seed_my_relu_example():
    def fn(lib):
        w = lib.tensor([[3.0, 1.0]], requires_grad=True)
        b = lib.tensor([[3.0]], requires_grad=True)
        X = lib.tensor([[-1.0, -1.0], [1.0, 1.0]])
        Y = lib.tensor([[2.0, 3.0]])
        y_hat = _my_relu(lib).apply(X @ w.t() + b)
        loss = lib.mean(lib.pow(y_hat - Y, 2))
        loss.backward()
        printed = re.sub(r"0x[0-9a-f]+", "ADDR", repr(y_hat.grad_fn))
        return (w.grad, b.grad, y_hat.grad_fn.name(), repr(y_hat).split("grad_fn=")[1],
                type(y_hat.grad_fn).__name__, printed.replace("ember", "torch"))
    e, _ = same(fn)
    assert e[0].tolist() == [[4.5, 4.5]] and e[1].tolist() == [[4.5]]
    assert e[3] == "<MyReLUBackward>)"


def _mul3(lib):
    class Mul3(lib.autograd.Function):
        @staticmethod
        def forward(x, y, k):
            return x * y * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y, k = inputs
            ctx.save_for_backward(x, y)
            ctx.k = k

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y * ctx.k, g * x * ctx.k, None
    return Mul3


def test_setup_context_style_and_double_backward():
    xa, ya = np.array([1.0, 2.0, -3.0]), np.array([3.0, 4.0, 0.5])

    def fn(lib):
        x = lib.tensor(xa, requires_grad=True)
        y = lib.tensor(ya, requires_grad=True)
        out = _mul3(lib).apply(x, y, 2.0)
        gx, gy = lib.autograd.grad((out * out).sum(), (x, y), create_graph=True)
        (gx * gy).sum().backward()
        return out, gx, gy, x.grad, y.grad, out.grad_fn.name()
    same(fn)


@pytest.mark.parametrize("save", ["output", "input", "both"])
def test_saving_outputs_and_inputs_double_backward(save):
    xa = np.array([0.5, -1.0, 2.0])

    def fn(lib):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                r = x.exp()
                ctx.save_for_backward(*{"output": (r,), "input": (x,), "both": (x, r)}[save])
                return r

            @staticmethod
            def backward(ctx, g):
                saved = ctx.saved_tensors
                return g * (saved[-1] if save != "input" else saved[0].exp())
        x = lib.tensor(xa, requires_grad=True)
        y = Exp.apply(x * 1)
        g, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        g.sum().backward()
        return y, g, x.grad
    same(fn)


def test_needs_input_grad():
    def fn(lib):
        seen = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, n):
                seen.append(ctx.needs_input_grad)
                return a * b * n

            @staticmethod
            def backward(ctx, g):
                seen.append(ctx.needs_input_grad)
                return (g * 3 if ctx.needs_input_grad[0] else None), (g if ctx.needs_input_grad[1] else None), None
        a = lib.ones(2, requires_grad=True)
        F.apply(a, lib.ones(2), 3).sum().backward()
        F.apply(lib.ones(2), a, 3).sum().backward()
        return seen, a.grad
    same(fn)


def _inc(lib):
    class Inc(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Inc


def test_mark_dirty_in_place_function():
    def fn(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        v0 = b._version
        c = _inc(lib).apply(b)
        r = [c is b, b._version - v0, b.grad_fn.name()]
        (c * c).sum().backward()
        return r, c, a.grad
    same(fn)


def test_mark_dirty_on_leaf_raises():
    same(lambda lib: _inc(lib).apply(lib.tensor([1.0, 2.0], requires_grad=True)))


def test_mark_dirty_invalidates_earlier_saves():
    def fn(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        y = b * b
        _inc(lib).apply(b)
        y.sum().backward()
    same(fn)


def test_mark_non_differentiable():
    def fn(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y, z, m = x * 2, x * 3, x > 0
                ctx.mark_non_differentiable(z, m)
                return y, z, m

            @staticmethod
            def backward(ctx, gy, gz, gm):
                return gy * 2 + gz
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y, z, m = F.apply(x)
        r = [y.requires_grad, z.requires_grad, m.requires_grad, m.dtype, z.grad_fn is None]
        y.sum().backward()
        return r, x.grad
    same(fn)


def test_set_materialize_grads():
    def fn(lib):
        seen = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, flag):
                ctx.set_materialize_grads(flag)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1 is None, g2 is None, g2))
                return (g1 * 2 if g1 is not None else None), None
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        F.apply(x, False)[0].sum().backward()
        F.apply(x, True)[0].sum().backward()
        return seen, x.grad
    same(fn)


def _square_once(lib):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    return F


def test_once_differentiable():
    def first(lib):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        _square_once(lib).apply(x).sum().backward()
        g, = lib.autograd.grad(_square_once(lib).apply(x).sum(), x, create_graph=True)
        return x.grad, g, g.requires_grad
    same(first)

    def second(lib):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        v = lib.tensor([0.5, 3.0], requires_grad=True)
        g, = lib.autograd.grad(_square_once(lib).apply(x), x, v, create_graph=True)
        return g, g.requires_grad, g.grad_fn.name()
    same(second)

    def third(lib):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        v = lib.tensor([0.5, 3.0], requires_grad=True)
        g, = lib.autograd.grad(_square_once(lib).apply(x), x, v, create_graph=True)
        g.sum().backward()
    e, t = same(third)
    assert "once_differentiable" in str(t)


def test_non_tensor_args_and_outputs():
    def fn(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale, name, maybe):
                ctx.scale = scale
                return x * scale, name, 7, maybe

            @staticmethod
            def backward(ctx, g, *rest):
                return g * ctx.scale, None, None, None
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y, n, k, m = F.apply(x, 3.0, "hi", None)
        y.sum().backward()
        return n, k, m, x.grad, y.grad_fn.name()
    same(fn)


def test_returning_an_input_unchanged():
    def fn(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x, y * 2

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 5, g2 * 2
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y = lib.tensor([3.0], requires_grad=True)
        a, b = F.apply(x, y)
        r = [a is x, a.grad_fn.name(), a.is_leaf, x.is_leaf, x.grad_fn is None]
        (a.sum() + b.sum()).backward()
        return r, x.grad, y.grad
    same(fn)


@pytest.mark.parametrize("ngrads", [1, 3])
def test_wrong_number_of_gradients(ngrads):
    def fn(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return (g,) * ngrads
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        F.apply(x, x).sum().backward()
    same(fn)


def test_extra_none_gradients_are_accepted_and_wrong_shape_raises():
    def extra(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None, None
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        F.apply(x).sum().backward()
        return x.grad
    same(extra)

    def bad_shape(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g[:1].reshape(1, 1, 1)
        F.apply(lib.ones(2, requires_grad=True)).sum().backward()
    same(bad_shape)


def test_saved_tensors_freed_and_modified():
    def freed(lib):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y = _my_relu(lib).apply(x).sum()
        y.backward()
        y.backward()
    same(freed)

    def modified(lib):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        z = x * 1
        y = _my_relu(lib).apply(z).sum()
        z.mul_(2)
        y.backward()
    e, _ = same(modified)
    assert f"{__file__}:" in str(e)


def test_grad_mode_inside_forward_and_backward_and_under_no_grad():
    def fn(lib):
        seen = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                seen.append(("fwd", lib.is_grad_enabled()))
                return x * 2

            @staticmethod
            def backward(ctx, g):
                seen.append(("bwd", lib.is_grad_enabled()))
                return g * 2
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        F.apply(x).sum().backward()
        g, = lib.autograd.grad(F.apply(x).sum(), x, create_graph=True)
        with lib.no_grad():
            y = F.apply(x)
        z = F.apply(lib.ones(2))
        nxt = [None if n is None else n.name() for n, _ in F.apply(x).grad_fn.next_functions]
        return seen, g.requires_grad, y.requires_grad, y.grad_fn, z.requires_grad, nxt
    same(fn)


def test_double_backward_through_function_using_ember_ops():
    xa = np.array([[0.3, -1.2], [2.0, 0.7]])

    def fn(lib):
        class Tanh(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.tanh()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                y, = ctx.saved_tensors
                return g * (1 - y * y)
        x = lib.tensor(xa, requires_grad=True)
        y = Tanh.apply(x * x)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x, create_graph=True)
        ggg, = lib.autograd.grad(gg.sum(), x)
        return y, g, gg, ggg
    same(fn)


def test_function_instance_and_missing_backward():
    def missing(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
        F.apply(lib.ones(2, requires_grad=True)).sum().backward()
    same(missing)


@pytest.mark.parametrize("extra", [3, "a", [1], 2.5])
def test_save_for_backward_of_a_non_tensor_raises_torchs_type_error(extra):
    def run(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, None, extra)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        return F.apply(lib.ones(2, requires_grad=True))

    e, t = same_error(run)
    assert str(e) == str(t)
