"""gradcheck / gradgradcheck: pass on correct functions, fail (or return False) on wrong backward."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import run_both, same

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


# ---------------------------------------------------------------- gradcheck's options (NOTE [gradcheck's options])
def _custom(lib, *, wrong_jvp=False, noisy=False):
    """x ** 2 with a forward formula (wrong when asked) and a backward (with tiny noise when asked)."""
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.x = x
            return x ** 2

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            noise = lib.tensor(np.random.default_rng().uniform(-1e-9, 1e-9, tuple(x.shape))) if noisy else 0
            return (2 * x + noise) * g  # (noise scaled by g: zero output gradients still give zero)

        @staticmethod
        def jvp(ctx, t):
            return (3 if wrong_jvp else 2) * ctx.x * t
    return F.apply


@pytest.mark.parametrize("name", list(FUNCS))
@pytest.mark.parametrize("options", [{"check_forward_ad": True}, {"check_batched_grad": True},
                                     {"check_forward_ad": True, "check_batched_forward_grad": True},
                                     {"check_forward_ad": True, "check_backward_ad": False},
                                     {"fast_mode": True, "check_grad_dtypes": True, "nondet_tol": 1e-12}], ids=str)
def test_options_pass_on_correct_functions(name, options):
    def fn(lib):
        a = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        return lib.autograd.gradcheck(FUNCS[name](lib), (a, b), **options)

    if name == "custom_good" and options.get("check_forward_ad"):  # a Function without jvp: refused by both
        e, t = run_both(fn, catch=True)
        assert isinstance(t, Exception) and type(e).__name__ == type(t).__name__
        return
    if name == "in_place" and options.get("check_batched_forward_grad"):
        # NOTE [gradcheck's options]: batched forward gradients go through func.jvp under vmap here, which refuses
        # this in-place write into a tensor not batched (as torch.func.vmap does); torch's check uses its legacy vmap
        e, t = run_both(fn, catch=True)
        assert t is True and type(e).__name__ == "GradcheckError" and "inplace arithmetic" in str(e)
        return
    def fn(lib):
        a = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        return lib.autograd.gradcheck(FUNCS[name](lib), (a, b), **options)
    e, _ = same(fn)
    assert e is True


def test_forward_mode_is_checked():
    def run(lib, **kw):
        x = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(_custom(lib, **kw), (x,), check_forward_ad=True)
    assert same(lambda lib: run(lib))[0] is True
    e, t = run_both(lambda lib: run(lib, wrong_jvp=True), catch=True)
    assert type(e).__name__ == type(t).__name__ == "GradcheckError"
    assert str(e).startswith("Jacobian computed with forward mode mismatch for output 0 with respect to input 0")
    e, t = run_both(lambda lib: lib.autograd.gradcheck(_good_cube(lib).apply, (lib.tensor(
        [1.0], dtype=lib.float64, requires_grad=True),), check_forward_ad=True), catch=True)
    assert type(e).__name__ == type(t).__name__ and isinstance(t, Exception)  # no jvp: refused by both
    # only forward mode: a wrong backward goes unnoticed, as in torch
    x = (lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True))
    e, _ = same(lambda lib: lib.autograd.gradcheck(_wrong_square(lib).apply, (x(lib),), check_forward_ad=False,
                                                   raise_exception=False))
    assert e is False


def test_nondeterministic_backward_within_nondet_tol():
    def run(lib, tol):
        x = lib.tensor([0.5, -1.5], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(_custom(lib, noisy=True), (x,), nondet_tol=tol)
    e, t = run_both(lambda lib: run(lib, 0.0), catch=True)
    assert type(e).__name__ == type(t).__name__ == "GradcheckError"
    assert str(e).startswith("Backward is not reentrant") and str(t).startswith("Backward is not reentrant")
    assert same(lambda lib: run(lib, 1e-6))[0] is True


@pytest.mark.parametrize("case", ["no mode", "batched without backward", "batched forward without forward",
                                  "nothing requires grad", "stride 0", "no differentiable output",
                                  "gradgrad no mode", "gradgrad undefined without rev", "gradgrad batched without rev"])
def test_option_errors_as_torch(case):
    def fn(lib):
        x = lib.tensor([0.5, -1.5], dtype=lib.float64, requires_grad=True)
        gc, ggc = lib.autograd.gradcheck, lib.autograd.gradgradcheck
        f = lambda t: t * 2  # noqa: E731
        return {
            "no mode": lambda: gc(f, (x,), check_backward_ad=False),
            "batched without backward": lambda: gc(f, (x,), check_forward_ad=True, check_backward_ad=False,
                                                   check_batched_grad=True),
            "batched forward without forward": lambda: gc(f, (x,), check_batched_forward_grad=True),
            "nothing requires grad": lambda: gc(f, (x.detach(),)),
            "stride 0": lambda: gc(f, (lib.tensor([1.0], dtype=lib.float64).expand(3).requires_grad_(),)),
            "no differentiable output": lambda: gc(lambda t: (t * 2).detach(), (x,)),
            "gradgrad no mode": lambda: ggc(f, (x,), check_rev_over_rev=False),
            "gradgrad undefined without rev": lambda: ggc(f, (x,), check_rev_over_rev=False, check_fwd_over_rev=True),
            "gradgrad batched without rev": lambda: ggc(f, (x,), check_rev_over_rev=False, check_fwd_over_rev=True,
                                                        check_undefined_grad=False, check_batched_grad=True),
        }[case]()
    e, t = run_both(fn, catch=True)
    assert isinstance(t, Exception), t
    assert type(e).__name__ == type(t).__name__ and str(e).split(".")[0] == str(t).split(".")[0], (e, t)


@pytest.mark.parametrize("options", [{"check_fwd_over_rev": True}, {"gen_non_contig_grad_outputs": True},
                                     {"check_batched_grad": True}, {"check_fwd_over_rev": True,
                                                                    "check_rev_over_rev": False,
                                                                    "check_undefined_grad": False}], ids=str)
def test_gradgradcheck_options(options):
    def fn(lib):
        a = lib.tensor(A, requires_grad=True)
        b = lib.tensor(B, requires_grad=True)
        return lib.autograd.gradgradcheck(FUNCS["tanh_mul"](lib), (a, b), **options)
    assert same(fn)[0] is True
