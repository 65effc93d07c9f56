"""gradcheck / gradgradcheck: pass on correct functions, fail (or return False) on wrong backward."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import same

RNG = np.random.default_rng(0)
A, B = RNG.standard_normal((3, 4)), RNG.standard_normal((4,))


def _wrong_square(lib):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * g  # should be 2 * x * g
    return F


def _good_cube(lib):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * x * g
    return F


FUNCS = {
    "tanh_mul": lambda lib: (lambda a, b: (a * b).tanh()),
    "broadcast_div": lambda lib: (lambda a, b: a / (b * b + 1) - b.exp()),
    "matmul_sum": lambda lib: (lambda a, b: ((a @ b) ** 2).sum()),
    "two_outputs": lambda lib: (lambda a, b: (a.sigmoid(), (a * b).sum(1))),
    "custom_good": lambda lib: (lambda a, b: _good_cube(lib).apply(a) * b),
    "in_place": lambda lib: (lambda a, b: (a * 1).mul_(b).exp_()),
}


@pytest.mark.parametrize("name", list(FUNCS))
def test_gradcheck_and_gradgradcheck_pass_on_correct_functions(name):
    def fn(lib):
        a = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        f = FUNCS[name](lib)
        return lib.autograd.gradcheck(f, (a, b)), lib.autograd.gradgradcheck(f, (a, b))
    e, _ = same(fn)
    assert e == (True, True)


def test_gradcheck_fails_on_wrong_backward():
    def raising(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        lib.autograd.gradcheck(_wrong_square(lib).apply, (x,))
    e, t = same(raising)
    assert type(e).__name__ == "GradcheckError" and isinstance(e, RuntimeError)

    def quiet(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(_wrong_square(lib).apply, (x,), raise_exception=False)
    e, _ = same(quiet)
    assert e is False


def test_gradcheck_message_shows_jacobians_in_torchs_layout():
    def fn(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return lib.stack([x[0], x[1] * 2, x[0] * 3])

            @staticmethod
            def backward(ctx, g):
                return lib.stack([g[0], g[1] * 2 + g[2]])
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        lib.autograd.gradcheck(F.apply, (x,))
    e, t = same(fn)


def test_gradgradcheck_fails_on_wrong_double_backward():
    def fn(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.exp()

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * x.detach().exp()  # right values, but no second derivative
        x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        return (lib.autograd.gradcheck(F.apply, (x,)),
                lib.autograd.gradgradcheck(F.apply, (x,), raise_exception=False))
    e, _ = same(fn)
    assert e == (True, False)


def test_non_contiguous_input():
    def fn(lib):
        a = lib.tensor(A.T.copy(), requires_grad=True).t()  # a non-contiguous input
        return lib.autograd.gradcheck(lambda x: (x * x).sum(0), (a,), raise_exception=False)
    e, _ = same(fn)
    assert e is True
