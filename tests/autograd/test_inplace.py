"""In-place ops against torch: version counter, leaf errors, saved-tensor checks, history rebasing
(incl. views of a modified base), dtype rules."""
from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import assert_same, ember, run_both, same

RNG = np.random.default_rng(0)


def _arr(*shape, dtype=np.float32, positive=False):
    a = RNG.standard_normal(shape).astype(dtype)
    return np.abs(a) + 0.5 if positive else a


# --------------------------------------------------------------------------- version counter
def test_version_counter_counts_like_torch():
    def fn(lib):
        x = lib.ones(3, 4)
        r = [x._version]
        x.add_(1)
        x += 1
        x -= 1
        x *= 2
        x /= 2
        r.append(x._version)
        x[0] = 2
        x[0, 1] = 5
        x[x > 4] = 1.0
        x[[0, 1]] = 3.0
        x[...] = 1.0
        r.append(x._version)
        for op in ("zero_", "relu_", "exp_", "neg_", "abs_", "sqrt_", "tanh_", "sigmoid_"):
            getattr(x, op)()
            r.append(x._version)
        x.fill_(2).clamp_(0, 1).clamp_min_(0.5).clamp_max_(0.7).pow_(2).log_()
        x.copy_(lib.zeros(4))
        r.append(x._version)
        return r
    same(fn)


def test_views_share_the_version_counter_but_data_does_not():
    def fn(lib):
        x = lib.ones(3, 4)
        r = []
        for make in (lambda t: t[0], lambda t: t.view(12), lambda t: t.t(), lambda t: t.detach(),
                     lambda t: t[1:, ::2], lambda t: t.unsqueeze(0), lambda t: t.reshape(2, 6)):
            v = make(x)
            v.mul_(2)
            r.append((x._version, v._version))
            x.add_(1)
            r.append((x._version, v._version))
        d = x.data
        d.add_(1)
        r.append((x._version, d._version))
        c = x.clone()
        c.add_(1)
        r.append((x._version, c._version))
        return r
    same(fn)


def test_version_under_grad_and_views_of_non_leaf():
    def fn(lib):
        a = lib.ones(3, requires_grad=True)
        b = a * 2
        b.add_(1)
        c = b[0]
        c.mul_(2)
        return b._version, c._version, b.grad_fn.name(), c.grad_fn.name(), a._version
    same(fn)


# --------------------------------------------------------------------------- leaf errors
LEAF_CASES = {
    "add_": lambda lib, a: a.add_(1),
    "iadd": lambda lib, a: a.__iadd__(1),
    "isub": lambda lib, a: a.__isub__(a.detach()),
    "imul": lambda lib, a: a.__imul__(2),
    "itruediv": lambda lib, a: a.__itruediv__(2),
    "zero_": lambda lib, a: a.zero_(),
    "fill_": lambda lib, a: a.fill_(1),
    "copy_": lambda lib, a: a.copy_(lib.zeros(3)),
    "clamp_": lambda lib, a: a.clamp_(0, 1),
    "relu_": lambda lib, a: a.relu_(),
    "exp_": lambda lib, a: a.exp_(),
    "setitem int": lambda lib, a: a.__setitem__(0, 2.0),
    "setitem slice": lambda lib, a: a.__setitem__(slice(1, None), 2.0),
    "setitem full slice": lambda lib, a: a.__setitem__(slice(None), 2.0),
    "setitem ellipsis": lambda lib, a: a.__setitem__(Ellipsis, 2.0),
    "setitem list": lambda lib, a: a.__setitem__([0, 2], 2.0),
    "setitem mask": lambda lib, a: a.__setitem__(a.detach() > 1, 2.0),
    "view mul_": lambda lib, a: a[0:2].mul_(2),
    "view setitem": lambda lib, a: a.view(3).__setitem__(0, 1.0),
    "t view": lambda lib, a: a.unsqueeze(0).t().zero_(),
}


@pytest.mark.parametrize("case", list(LEAF_CASES))
def test_in_place_on_leaf_that_requires_grad_raises_torchs_error(case):
    def fn(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        LEAF_CASES[case](lib, a)
    e, t = same(fn)
    assert isinstance(t, RuntimeError)


@pytest.mark.parametrize("case", list(LEAF_CASES))
def test_in_place_on_leaf_is_allowed_under_no_grad(case):
    def fn(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.no_grad():
            LEAF_CASES[case](lib, a)
        return a.detach(), a.requires_grad, a.is_leaf, a.grad_fn is None, a._version
    same(fn)


def test_optimizer_step_pattern():
    w0, x0 = _arr(4, 3), _arr(5, 4)

    def fn(lib):
        w = lib.tensor(w0, requires_grad=True)
        x = lib.tensor(x0)
        for _ in range(3):
            loss = ((x @ w).tanh() ** 2).sum()
            loss.backward()
            with lib.no_grad():
                w -= 0.1 * w.grad
                w.grad.zero_()
        return w.detach(), w.grad, w.is_leaf, w.requires_grad, w._version
    same(fn)


# --------------------------------------------------------------------------- in-place ops on non-leaves
# name -> (call, needs positive input)
OPS = {
    "add_": (lambda t, o: t.add_(o), False),
    "add_alpha": (lambda t, o: t.add_(o, alpha=2.5), False),
    "sub_": (lambda t, o: t.sub_(o), False),
    "mul_": (lambda t, o: t.mul_(o), False),
    "div_": (lambda t, o: t.div_(o), True),
    "iadd": (lambda t, o: t.__iadd__(o), False),
    "isub": (lambda t, o: t.__isub__(o), False),
    "imul": (lambda t, o: t.__imul__(o), False),
    "itruediv": (lambda t, o: t.__itruediv__(o), True),
    "pow_": (lambda t, o: t.pow_(o), True),
    "copy_": (lambda t, o: t.copy_(o), False),
    "mul_scalar": (lambda t, o: t.mul_(3.0), False),
    "exp_": (lambda t, o: t.exp_(), False),
    "log_": (lambda t, o: t.log_(), True),
    "tanh_": (lambda t, o: t.tanh_(), False),
    "sigmoid_": (lambda t, o: t.sigmoid_(), False),
    "relu_": (lambda t, o: t.relu_(), False),
    "sqrt_": (lambda t, o: t.sqrt_(), True),
    "abs_": (lambda t, o: t.abs_(), False),
    "neg_": (lambda t, o: t.neg_(), False),
    "clamp_": (lambda t, o: t.clamp_(-0.5, 0.5), False),
    "clamp_min_": (lambda t, o: t.clamp_min_(0.1), False),
    "clamp_max_": (lambda t, o: t.clamp_max_(0.1), False),
    "zero_": (lambda t, o: t.zero_(), False),
    "fill_": (lambda t, o: t.fill_(2.0), False),
    "fill_tensor": (lambda t, o: t.fill_(o.sum()), False),
}


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((), ()), ((2, 3, 2), (3, 1))],
                         ids=["same", "broadcast", "0d", "3d"])
def test_in_place_op_on_non_leaf_matches_torch(name, shapes):
    call, positive = OPS[name]
    xa, oa = _arr(*shapes[0], positive=positive), _arr(*shapes[1], positive=positive)

    def fn(lib):
        x = lib.tensor(xa, requires_grad=True)
        o = lib.tensor(oa, requires_grad=True)
        y = x * 1
        r = call(y, o)
        assert r is y
        out = (y * y).sum() if name not in ("zero_", "fill_") else (y * x).sum()
        g = lib.autograd.grad(out, (x, o), allow_unused=True)
        return y.detach(), y._version, y.grad_fn.name(), g
    same(fn)


@pytest.mark.parametrize("name", ["mul_", "add_", "exp_", "tanh_", "div_", "copy_", "clamp_"])
def test_in_place_op_double_backward_matches_torch(name):
    call, positive = OPS[name]
    xa, oa = _arr(3, 4, dtype=np.float64, positive=True), _arr(3, 4, dtype=np.float64, positive=True)

    def fn(lib):
        x = lib.tensor(xa, requires_grad=True)
        o = lib.tensor(oa, requires_grad=True)
        y = x.tanh() * 2
        call(y, o)
        gx, go = lib.autograd.grad((y * y * x).sum(), (x, o), create_graph=True, allow_unused=True)
        second = (gx * gx).sum() + (0 if go is None else (go * go).sum())
        return gx, go, lib.autograd.grad(second, (x, o), allow_unused=True)
    same(fn)


def test_non_contiguous_and_float64_targets():
    xa, oa = _arr(4, 3, dtype=np.float64), _arr(3, 4, dtype=np.float64)

    def fn(lib):
        x = lib.tensor(xa, requires_grad=True)
        o = lib.tensor(oa, requires_grad=True)
        y = (x * 1).t()
        y.mul_(o).add_(o.exp())
        z = x.t() * 1  # a non-contiguous (column-major) result as the base
        z[1].mul_(o[0])
        z[:, 1:3] = o[:, :2] * 3
        return y, z, z.grad_fn.name(), lib.autograd.grad((y * z).sum(), (x, o))
    same(fn)


def test_chain_of_in_place_ops():
    xa, sa = _arr(5, positive=True), _arr(5, positive=True)

    def fn(lib):
        x = lib.tensor(xa, requires_grad=True)
        s = lib.tensor(sa, requires_grad=True)
        y = x * 1
        y.mul_(s).add_(x).div_(s)
        y.sub_(1).tanh_().mul_(s)
        y.pow_(2)
        y.sum().backward()
        return y, y.grad_fn.name(), x.grad, s.grad
    same(fn)


def test_mul_by_tensor_that_requires_grad_on_plain_tensor():
    def fn(lib):
        w = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = lib.ones(3)
        y.mul_(w)
        r = [y.is_leaf, y.requires_grad, y.grad_fn.name()]
        (y * y).sum().backward()
        return r, w.grad
    same(fn)


# --------------------------------------------------------------------------- views and CopySlices
def test_in_place_on_views_of_a_non_leaf():
    xa, za = _arr(4, 3), _arr(3, 3)

    def fn(lib):
        x = lib.tensor(xa, requires_grad=True)
        z = lib.tensor(za, requires_grad=True)
        y = x.clone()
        y[0].mul_(2)
        r = [y.grad_fn.name()]
        y[1:] = z * x[1:]
        r.append(y.grad_fn.name())
        y[:, 0].add_(z[0])
        y.t()[1].exp_()
        r.append(y.grad_fn.name())
        (y * y).sum().backward()
        return r, y, x.grad, z.grad, y._version
    same(fn)


def test_assigning_into_a_plain_tensor_makes_it_a_non_leaf():
    def fn(lib):
        w = lib.tensor(2.0, requires_grad=True)
        v = lib.tensor([4.0, 5.0], requires_grad=True)
        x = lib.zeros(4)
        x[1] = w
        r = [x.is_leaf, x.requires_grad, x.grad_fn.name()]
        x[2:] = v * w
        (x * lib.tensor([1.0, 3.0, 5.0, 7.0])).sum().backward()
        return r, x, w.grad, v.grad
    same(fn)


def test_views_taken_before_the_base_changed_follow_its_new_history():
    def fn(lib):
        x = lib.ones(4, requires_grad=True)
        z = lib.tensor(7.0, requires_grad=True)
        b = x * 1
        c = b[1:]
        d = b.view(2, 2)
        b[1] = z
        r = [c.grad_fn.name(), d.grad_fn.name(), c._version, b._version]
        b.mul_(z)
        r.append(c.grad_fn.name())
        (c * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return r, x.grad, z.grad, c, d
    same(fn)


def test_view_of_plain_tensor_gets_history_when_base_is_assigned():
    def fn(lib):
        x = lib.zeros(4)
        v = x[1:3]
        w = lib.tensor(2.0, requires_grad=True)
        x[1] = w
        r = [v.requires_grad, v.grad_fn.name(), x.grad_fn.name()]
        (v * lib.tensor([3.0, 5.0])).sum().backward()
        return r, w.grad
    same(fn)


def test_saved_view_modified_through_its_base_raises():
    def fn(lib):
        a = lib.ones(3, requires_grad=True)
        b = a * 1
        c = b.unsqueeze(0)
        d = c * c
        b[0] = 3
        d.sum().backward()
    same(fn)


def test_setitem_broadcast_and_errors():
    xa, va = _arr(3, 4), _arr(4)

    def fn(lib):
        x = lib.tensor(xa, requires_grad=True)
        v = lib.tensor(va, requires_grad=True)
        y = x * 2
        y[:2] = v
        y[2, ::2] = v[:2] * v[1:3]
        y[y.detach() > 1] = 0.5
        return y, lib.autograd.grad((y * y).sum(), (x, v))
    same(fn)
    same(lambda lib: lib.ones(3, 4).__setitem__(slice(0, 2), lib.ones(3)))


# --------------------------------------------------------------------------- saved tensors modified
def _saved_modified(kind):
    def fn(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        if kind == "leaf input":
            y = a * a
            with lib.no_grad():
                a.add_(1)
        elif kind == "non-leaf input":
            x = a * 1
            y = x * x
            x.add_(1)
        elif kind == "view input":
            x = a * 1
            y = x[1:] ** 2
            x[1:].mul_(2)
        elif kind == "detached":
            x = a * 1
            y = x.pow(3)
            x.detach().zero_()
        elif kind == "float64 2d":
            x = lib.ones(2, 3, dtype=lib.float64, requires_grad=True) * 1
            y = x.sigmoid()
            y[0].mul_(2)
        else:  # a saved output
            y = getattr(a * 1, kind)()
            y.add_(1)
        y.sum().backward()
    return fn


@pytest.mark.parametrize("kind", ["leaf input", "non-leaf input", "view input", "detached", "float64 2d",
                                  "exp", "tanh", "sigmoid"])
def test_modified_saved_tensor_raises_torchs_message_and_names_the_line(kind):
    e, t = same(_saved_modified(kind))
    assert "one of the variables needed for gradient computation" in str(t)
    # beyond torch: ember says where the offending in-place op ran (this file, inside _saved_modified)
    assert f"{__file__}:" in str(e), str(e)


def test_in_place_site_is_the_first_change_after_saving():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    x = a * 1
    y = x.exp()
    x.add_(1)  # not saved by anyone: fine
    y.mul_(2); line = __import__("inspect").currentframe().f_lineno  # noqa: E702 - the offending line
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert f"{__file__}:{line}" in str(info.value)


def test_data_changes_are_not_tracked():
    def fn(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = a.pow(2)
        a.data.add_(1)
        y.sum().backward()
        return a.grad, a._version
    same(fn)


# --------------------------------------------------------------------------- dtypes
@pytest.mark.parametrize("call", [
    lambda lib, x: x.add_(1.5),
    lambda lib, x: x.mul_(lib.ones(3)),
    lambda lib, x: x.__imul__(lib.ones(3)),
    lambda lib, x: x.div_(2),
    lambda lib, x: x.__itruediv__(2),
    lambda lib, x: x.sub_(lib.ones(3, dtype=lib.float64)),
    lambda lib, x: x.exp_(),
])
def test_result_type_cannot_be_cast_to_integer_target(call):
    e, t = same(lambda lib: call(lib, lib.zeros(3, dtype=lib.int64)))
    assert isinstance(t, RuntimeError)


def test_allowed_casts_keep_the_target_dtype():
    def fn(lib):
        x = lib.zeros(3)
        x.add_(lib.ones(3, dtype=lib.float64))
        x.mul_(lib.full((3,), 3, dtype=lib.int64))
        i = lib.zeros(3, dtype=lib.int32)
        i.add_(lib.ones(3, dtype=lib.int64))
        i += 2
        b = lib.zeros(3, dtype=lib.float64)
        b.copy_(lib.tensor([1, 2, 3]))
        return x, i, b
    same(fn)


def test_overlapping_write_raises():
    same(lambda lib: lib.zeros(1).expand(3).add_(1))


# --------------------------------------------------------------------------- random in-place programs
_STEPS = ["mul_o", "add_o", "exp", "tanh", "view_mul", "view_set", "setitem", "clamp", "sigmoid"]


def _program(lib, steps, xa, oa):
    x = lib.tensor(xa, requires_grad=True)
    o = lib.tensor(oa, requires_grad=True)
    y = x * 1
    for s in steps:
        if s == "mul_o":
            y.mul_(o)
        elif s == "add_o":
            y.add_(o * x)
        elif s == "exp":
            y.mul_(0.3).exp_()
        elif s == "tanh":
            y.tanh_()
        elif s == "view_mul":
            y[1:].mul_(o[1:])
        elif s == "view_set":
            y[0] = o[0] * 2
        elif s == "setitem":
            y[:, 1] = x[:, 0] * o[:, 1]
        elif s == "clamp":
            y.clamp_(-1.0, 1.0)
        else:
            y.sigmoid_()
    out = (y * y * o).sum()
    return y, lib.autograd.grad(out, (x, o), allow_unused=True)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(_STEPS), min_size=1, max_size=6))
def test_random_in_place_programs_match_torch(steps):
    xa, oa = _arr(3, 3, dtype=np.float64), _arr(3, 3, dtype=np.float64)
    e, t = run_both(lambda lib: _program(lib, steps, xa, oa), catch=True)
    assert_same(e, t, what=f"steps {steps}")
