"""Losses vs torch: values, input grads and second grads for every reduction and option; torch's errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from nn._parity import reseeding
from oracle import check, same_error, ember, torch

rng = np.random.default_rng(1)
_reseed = reseeding(rng, 1)
REDUCTIONS = ["mean", "sum", "none"]


def r(*shape, lo=None, hi=None, dtype=np.float64):
    if lo is not None:
        return rng.uniform(lo, hi, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kwargs", [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}),
                                         ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.0}),
                                         ("huber_loss", {}), ("huber_loss", {"delta": 0.3})])
def test_pointwise(name, kwargs, reduction):
    x, t = r(4, 3), r(4, 3)
    check(lambda lib, a, b: getattr(F(lib), name)(a, b, reduction=reduction, **kwargs), x, t, gradgrad=True)


def test_mse_broadcast_warns_like_torch():
    with pytest.warns(UserWarning, match="target size"):
        check(lambda lib, a, b: F(lib).mse_loss(a, b), r(3, 1), r(3))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 4, 3), (2, 4, 3, 2)])
def test_nll_and_cross_entropy(shape, weighted, reduction):
    x = r(*shape)
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t = rng.integers(0, 4, tshape)
    if t.ndim:
        t.flat[0] = -100  # ignored
    w = r(4, lo=0.5, hi=2.0) if weighted else None

    def run(lib, fname, a, ignore=-100, **kw):
        wt = lib.tensor(w) if weighted else None
        tt = t if ignore == -100 else np.where(t == -100, ignore, t)
        return getattr(F(lib), fname)(a, lib.tensor(tt), wt, ignore_index=ignore, reduction=reduction, **kw)

    check(lambda lib, a: run(lib, "nll_loss", a), x, gradgrad=True)
    check(lambda lib, a: run(lib, "cross_entropy", a), x, gradgrad=True)
    check(lambda lib, a: run(lib, "cross_entropy", a, label_smoothing=0.2), x, gradgrad=True)
    check(lambda lib, a: run(lib, "cross_entropy", a, ignore=1), x, gradgrad=True)


def test_logsoftmax_nll_equals_cross_entropy():
    x, t = r(6, 5), rng.integers(0, 5, 6)
    for lib in (ember, torch):
        xt, tt = lib.tensor(x), lib.tensor(t)
        a = lib.nn.NLLLoss()(lib.nn.LogSoftmax(dim=1)(xt), tt)
        b = lib.nn.CrossEntropyLoss()(xt, tt)
        np.testing.assert_allclose(a.item(), b.item(), rtol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probabilities(reduction, smoothing, weighted):
    x = r(4, 3, 2)
    p = rng.dirichlet(np.ones(3), (4, 2)).transpose(0, 2, 1).copy()
    w = r(3, lo=0.5, hi=2.0)
    check(lambda lib, a, b: F(lib).cross_entropy(a, b, lib.tensor(w) if weighted else None, reduction=reduction,
                                                 label_smoothing=smoothing), x, p, gradgrad=True)


def test_cross_entropy_all_ignored_is_nan_like_torch():
    check(lambda lib, a: F(lib).cross_entropy(a, lib.tensor([-100, -100])), r(2, 3), grad=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(reduction, weighted):
    x, t, w = r(3, 4, lo=0.05, hi=0.95), r(3, 4, lo=0, hi=1), r(4, lo=0.5, hi=2)
    check(lambda lib, a, b: F(lib).binary_cross_entropy(a, b, lib.tensor(w) if weighted else None,
                                                        reduction=reduction), x, t, gradgrad=True)


def test_binary_cross_entropy_clamps_logs():
    same_error(lambda lib: F(lib).binary_cross_entropy(lib.tensor([0.5], dtype=lib.float64), lib.tensor([1.0])))
    check(lambda lib, a: F(lib).binary_cross_entropy(a, lib.tensor([1.0, 0.0, 1.0], dtype=lib.float64)),
          np.array([0.0, 1.0, 0.5]), grad=False)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("pos_weight", [None, "vec"])
def test_bce_with_logits(reduction, pos_weight):
    x, t = r(3, 4) * 5, r(3, 4, lo=0, hi=1)
    x[0, 0] = 80.0  # large logits stay finite
    pw, w = r(4, lo=0.5, hi=3), r(3, 1, lo=0.5, hi=2)
    check(lambda lib, a, b, c: F(lib).binary_cross_entropy_with_logits(
        a, b, c, reduction=reduction, pos_weight=lib.tensor(pw) if pos_weight else None), x, t, w, gradgrad=True,
        requires_grad=[True, True, False])


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x = np.log(rng.dirichlet(np.ones(4), 3))
    t = rng.dirichlet(np.ones(4), 3)
    t = np.log(t) if log_target else t
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda lib, a, b: F(lib).kl_div(a, b, reduction=reduction, log_target=log_target), x, t, gradgrad=True)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_losses(reduction):
    a, b = r(5, 3), r(5, 3)
    y = np.array([1.0, -1.0, 1.0, -1.0, -1.0])
    check(lambda lib, p, q: F(lib).cosine_embedding_loss(p, q, lib.tensor(y), margin=0.1, reduction=reduction),
          a, b, gradgrad=True)
    check(lambda lib, p, q: F(lib).margin_ranking_loss(p, q, lib.tensor(y), margin=0.2, reduction=reduction),
          r(5), r(5), gradgrad=True)
    for swap in (False, True):
        for p in (2.0, 1.0):
            check(lambda lib, u, v, w: F(lib).triplet_margin_loss(u, v, w, margin=2.0, p=p, swap=swap,
                                                                  reduction=reduction), a, b, r(5, 3), gradgrad=True)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input,full", [(True, False), (False, False), (True, True), (False, True)])
def test_poisson_nll(reduction, log_input, full):
    x = r(4, 3) if log_input else r(4, 3, lo=0.2, hi=3)
    t = rng.poisson(2.0, (4, 3)).astype(np.float64)
    check(lambda lib, a, b: F(lib).poisson_nll_loss(a, b, log_input=log_input, full=full, reduction=reduction),
          x, t, gradgrad=True)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("var_shape", [(4, 3), (4,), (4, 1)])
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll(reduction, var_shape, full):
    v = r(*var_shape, lo=0.1, hi=2)
    v.flat[0] = 1e-9  # clamped to eps, gradient passes through as torch's
    check(lambda lib, a, b, c: F(lib).gaussian_nll_loss(a, b, c, full=full, reduction=reduction),
          r(4, 3), r(4, 3), v, gradgrad=True)


@pytest.mark.parametrize("ctor,nin", [
    (lambda nn, w: nn.MSELoss(reduction="sum"), 2), (lambda nn, w: nn.L1Loss(), 2),
    (lambda nn, w: nn.SmoothL1Loss(beta=0.5), 2), (lambda nn, w: nn.HuberLoss(delta=0.5), 2),
    (lambda nn, w: nn.KLDivLoss(reduction="batchmean", log_target=True), 2),
    (lambda nn, w: nn.BCEWithLogitsLoss(pos_weight=w), 2), (lambda nn, w: nn.PoissonNLLLoss(full=True), 2),
    (lambda nn, w: nn.MarginRankingLoss(0.5), 3), (lambda nn, w: nn.TripletMarginLoss(swap=True), 3),
])
def test_loss_modules(ctor, nin):
    arrays = [r(3, 4) for _ in range(nin)]
    if nin == 3 and isinstance(ctor(torch.nn, None), torch.nn.MarginRankingLoss):
        arrays[2] = np.sign(arrays[2])
    w = r(4, lo=0.5, hi=2)
    if isinstance(ctor(torch.nn, None), (torch.nn.BCEWithLogitsLoss,)):
        arrays[1] = r(3, 4, lo=0, hi=1)
    check(lambda lib, *xs: ctor(lib.nn, lib.tensor(w))(*xs), *arrays, gradgrad=True)
    assert repr(ctor(ember.nn, None)) == repr(ctor(torch.nn, None))


def test_class_loss_modules():
    x, t = r(5, 4), rng.integers(0, 4, 5)
    w = r(4, lo=0.5, hi=2)
    for ctor in (lambda nn, w: nn.CrossEntropyLoss(weight=w, label_smoothing=0.1, ignore_index=2),
                 lambda nn, w: nn.NLLLoss(weight=w, reduction="sum")):
        check(lambda lib, a: ctor(lib.nn, lib.tensor(w))(a, lib.tensor(t)), x, gradgrad=True)
        em, tm = ctor(ember.nn, ember.tensor(w)), ctor(torch.nn, torch.tensor(w))
        assert list(em.state_dict()) == list(tm.state_dict())
    check(lambda lib, a, b: lib.nn.BCELoss(weight=lib.tensor(w))(a, b), r(5, 4, lo=0.1, hi=0.9), r(5, 4, lo=0, hi=1))
    check(lambda lib, a, b, v: lib.nn.GaussianNLLLoss(full=True)(a, b, v), r(5, 4), r(5, 4), r(5, 4, lo=0.1, hi=1))
    check(lambda lib, a, b: lib.nn.CosineEmbeddingLoss(0.2)(a, b, lib.tensor([1.0, -1, 1, 1, -1])), r(5, 4), r(5, 4))


ERRORS = [
    # target shapes, per input rank (torch's nll_loss_nd): the (2, 3, 4) input with a 1-d target
    lambda lib: F(lib).nll_loss(lib.randn(2, 3, 4), lib.tensor([0, 1])),
    lambda lib: F(lib).cross_entropy(lib.randn(2, 3, 4), lib.tensor([0, 1])),
    lambda lib: F(lib).nll_loss(lib.randn(2, 3, 4), lib.zeros(3, 4, dtype=lib.int64)),
    lambda lib: F(lib).nll_loss(lib.randn(2, 3, 4), lib.zeros(2, 4, 1, dtype=lib.int64)),
    lambda lib: F(lib).nll_loss(lib.randn(2, 3, 4, 5), lib.zeros(2, 4, dtype=lib.int64)),
    lambda lib: F(lib).nll_loss(lib.randn(2, 3, 4, 5), lib.zeros(2, 4, 6, dtype=lib.int64)),
    lambda lib: F(lib).nll_loss(lib.randn(2, 3), lib.zeros(2, 1, dtype=lib.int64)),
    lambda lib: F(lib).nll_loss(lib.randn(2, 3), lib.tensor(0)),
    lambda lib: F(lib).cross_entropy(lib.randn(3, 4), lib.tensor([0, 1, 5])),
    lambda lib: F(lib).nll_loss(lib.randn(3, 4), lib.tensor([0, 1, -2])),
    lambda lib: F(lib).cross_entropy(lib.randn(3, 4), lib.tensor([0, 1])),
    lambda lib: F(lib).cross_entropy(lib.randn(3, 4, 5), lib.randint(0, 4, (3, 4))),
    lambda lib: F(lib).cross_entropy(lib.randn(3, 4), lib.randn(3, 5)),
    lambda lib: F(lib).cross_entropy(lib.randn(3, 4), lib.randn(3)),
    lambda lib: F(lib).binary_cross_entropy(lib.tensor([0.5, 1.5]), lib.tensor([0.0, 1.0])),
    lambda lib: F(lib).binary_cross_entropy(lib.tensor([0.5, 0.5]), lib.tensor([0.0, 1.0, 1.0])),
    lambda lib: F(lib).binary_cross_entropy_with_logits(lib.randn(3), lib.randn(4)),
    lambda lib: F(lib).nll_loss(lib.randn(3, 4), lib.tensor([0, 1, 2]), reduction="foo"),
    lambda lib: F(lib).mse_loss(lib.randn(3), lib.randn(3), reduction="foo"),
    lambda lib: F(lib).gaussian_nll_loss(lib.randn(3, 2), lib.randn(3, 2), lib.ones(2, 2)),
    lambda lib: F(lib).gaussian_nll_loss(lib.randn(3, 2), lib.randn(3, 2), -lib.ones(3, 2)),
    lambda lib: F(lib).cross_entropy(lib.randn(3, 4), lib.tensor([0, 1, 2]), label_smoothing=1.5),
    # a target of the input's shape holds probabilities: a float type is required before any kernel runs
    lambda lib: F(lib).cross_entropy(lib.randn(3, 4), lib.zeros(3, 4, dtype=lib.int64)),
    lambda lib: F(lib).cross_entropy(lib.randn(5), lib.ones(5, dtype=lib.int64)),
    lambda lib: F(lib).cross_entropy(lib.randn(3, 4, dtype=lib.complex64), lib.randn(3, 4, dtype=lib.complex64)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_like_torch(i):
    same_error(ERRORS[i])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_empty_batch(reduction):
    check(lambda lib, a: F(lib).cross_entropy(a, lib.zeros(0, dtype=lib.int64), reduction=reduction),
          np.zeros((0, 3)), grad=False)


def test_nll_uint8_target():
    check(lambda lib, a: F(lib).nll_loss(a, lib.tensor([0, 2, 1], dtype=lib.uint8)), r(3, 3))


def test_legacy_size_average_reduce_flags():
    x, t = r(3, 4), r(3, 4)
    for kw in ({"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True}):
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            e = ember.nn.functional.mse_loss(ember.tensor(x), ember.tensor(t), **kw)
        with pytest.warns(UserWarning):
            tt = torch.nn.functional.mse_loss(torch.tensor(x), torch.tensor(t), **kw)
        np.testing.assert_allclose(e.numpy(), tt.numpy())
        with pytest.warns(UserWarning):
            assert ember.nn.L1Loss(**kw).reduction == torch.nn.L1Loss(**kw).reduction


@pytest.mark.parametrize("shape", [(3, 4), (4,), (2, 4, 3), (2, 4, 3, 2), (2, 4, 2, 2, 2)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_graph_node_names(shape, reduction):
    """nll_loss of log_softmax has torch's nodes; cross_entropy is one fused node with the name torch shows on the
    loss (NOTE [fused cross-entropy]: torch's LogSoftmaxBackward0 below it is part of the fused node)."""
    x = r(*shape)
    t = rng.integers(0, 4, (shape[0],) + shape[2:] if len(shape) > 1 else ())
    outs, fused = [], []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.nll_loss(lib.nn.functional.log_softmax(xt, 1 if len(shape) > 1 else 0), lib.tensor(t),
                                       reduction=reduction)
        outs.append((type(y.grad_fn).__name__, [type(f).__name__ for f, _ in y.grad_fn.next_functions]))
        y = lib.nn.functional.cross_entropy(xt, lib.tensor(t), reduction=reduction)
        fused.append(type(y.grad_fn).__name__)
    assert outs[0] == outs[1]
    assert fused[0] == fused[1]


# ---------------------------------------------------------------------------------------------- singular points
# Where torch's gradients are finite (all-padding batches, p = 0 or 1, infinite differences) ember's are too; a
# NaN there turns weights into NaN mid-training. Values and first gradients against torch (second derivatives at
# these points differ by design of torch's double-backward formulas, so they are compared at interior points by
# op_db instead).
INF = np.inf
_IGN3 = np.array([-100, -100, -100])
SINGULAR = {
    "cross_entropy every target ignored": (lambda lib, x: F(lib).cross_entropy(x, lib.tensor(_IGN3)), (r(3, 4),)),
    "nll_loss every target ignored": (lambda lib, x: F(lib).nll_loss(x, lib.tensor(_IGN3)), (r(3, 4),)),
    "nll_loss ignored, rest weight 0": (lambda lib, x: F(lib).nll_loss(
        x, lib.tensor([1, 1, -100]), weight=lib.tensor([1.0, 0.0, 1.0, 1.0], dtype=lib.float64)), (r(3, 4),)),
    "nll_loss 4-d every target ignored": (lambda lib, x: F(lib).nll_loss(
        x, lib.full((2, 3, 2), -100, dtype=lib.int64)), (r(2, 4, 3, 2),)),
    "cross_entropy ignored with label smoothing": (lambda lib, x: F(lib).cross_entropy(
        x, lib.tensor(_IGN3), label_smoothing=0.1), (r(3, 4),)),
    "cross_entropy ignored, smoothing, weight": (lambda lib, x: F(lib).cross_entropy(
        x, lib.tensor(_IGN3), weight=lib.tensor([1.0, 2.0, 0.5, 1.0], dtype=lib.float64), label_smoothing=0.2), (r(3, 4),)),
    "cross_entropy some ignored, smoothing": (lambda lib, x: F(lib).cross_entropy(
        x, lib.tensor([2, -100, 0]), label_smoothing=0.3), (r(3, 4),)),
    "binary_cross_entropy at 0 and 1": (lambda lib, x, t: F(lib).binary_cross_entropy(x, t),
                                        (np.array([0.0, 1.0, 0.5, 0.0, 1.0], np.float32),
                                         np.array([0.0, 1.0, 1.0, 1.0, 0.0], np.float32))),
    "binary_cross_entropy at 0 and 1, none": (lambda lib, x, t: F(lib).binary_cross_entropy(x, t, reduction="none"),
                                              (np.array([0.0, 1.0, 0.5, 0.0, 1.0]),
                                               np.array([0.0, 1.0, 1.0, 1.0, 0.0]))),
    "binary_cross_entropy_with_logits at +-inf": (lambda lib, x, t: F(lib).binary_cross_entropy_with_logits(
        x, t.detach()), (np.array([INF, -INF, 0.0, 100.0], np.float32), np.array([1.0, 0.0, 0.5, 0.0], np.float32))),
    "smooth_l1_loss infinite difference": (lambda lib, x, t: F(lib).smooth_l1_loss(x, t),
                                           (np.array([INF, -INF, 1.0, 0.0], np.float32),
                                            np.array([0.0, 0.0, INF, 0.0], np.float32))),
    "smooth_l1_loss beta 0.5 infinite, none": (lambda lib, x, t: F(lib).smooth_l1_loss(
        x, t, beta=0.5, reduction="none"), (np.array([INF, -INF, np.nan, 0.2]), np.array([0.0, 0.0, 0.0, 0.0]))),
    "huber_loss infinite difference": (lambda lib, x, t: F(lib).huber_loss(x, t, delta=0.5),
                                       (np.array([INF, -INF, 1.0, 0.0], np.float32),
                                        np.array([0.0, 0.0, INF, 0.0], np.float32))),
    "huber_loss weighted, infinite": (lambda lib, x, t: F(lib).huber_loss(x, t, weight=lib.tensor([1.0, 2.0, 3.0])),
                                      (np.array([INF, -INF, 1.0]), np.array([0.0, 1.0, 2.0]))),
}


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_losses_at_singular_points_match_torch(name):
    f, arrays = SINGULAR[name]
    check(f, *arrays)


def test_all_padding_batch_keeps_weights_finite():
    """The issue's training-loop symptom: one all-padding batch must not make the parameters NaN."""
    for lib in (ember, torch):
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 3)
        opt = lib.optim.SGD(lin.parameters(), lr=0.1)
        x = lib.randn(5, 4)
        for target in (lib.tensor([0, 1, 2, 0, 1]), lib.full((5,), -100, dtype=lib.int64)):
            opt.zero_grad()
            F(lib).cross_entropy(lin(x), target).backward()
            opt.step()
        assert all(bool(p.isfinite().all()) for p in lin.parameters())


@pytest.mark.parametrize("fn", [
    lambda lib: F(lib).binary_cross_entropy(lib.rand(3), lib.rand(3), lib.rand(3, requires_grad=True)),
    lambda lib: F(lib).binary_cross_entropy_with_logits(lib.rand(3), lib.rand(3), lib.rand(3, requires_grad=True)),
    lambda lib: F(lib).binary_cross_entropy_with_logits(lib.rand(3), lib.rand(3),
                                                        pos_weight=lib.rand(3, requires_grad=True)),
    lambda lib: F(lib).mse_loss(lib.rand(3), lib.rand(4)),
    lambda lib: F(lib).l1_loss(lib.rand(3), lib.rand(4)),
    lambda lib: F(lib).smooth_l1_loss(lib.rand(2, 3), lib.rand(4)),
    lambda lib: F(lib).huber_loss(lib.rand(3), lib.rand(4)),
    lambda lib: F(lib).huber_loss(lib.rand(3), lib.rand(3), weight=lib.rand(2)),
])
def test_loss_argument_errors(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(fn)


def test_bce_with_logits_is_one_node_with_torch_saved_values():
    for lib in (ember, torch):
        x = lib.randn(2, 3, requires_grad=True)
        t, w, p = lib.rand(2, 3), lib.rand(3), lib.rand(3)
        y = F(lib).binary_cross_entropy_with_logits(x, t, w, pos_weight=p)
        fn = y.grad_fn
        assert fn.name() == "BinaryCrossEntropyWithLogitsBackward0"
        assert fn._saved_self is x and fn._saved_target is t and fn._saved_weight is w and fn._saved_pos_weight is p
        assert fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
        assert F(lib).binary_cross_entropy(x.sigmoid(), t).grad_fn.name() == "BinaryCrossEntropyBackward0"


def _c(lib, *shape, grad=False):
    """A complex64 tensor with real parts in [0, 1) and negative imaginary parts (outside [0, 1) in NumPy's
    lexicographic order)."""
    return lib.complex(lib.rand(*shape), -lib.rand(*shape)).requires_grad_(grad)


@pytest.mark.parametrize("fn", [
    lambda lib: F(lib).binary_cross_entropy(_c(lib, 3), _c(lib, 3)),
    lambda lib: F(lib).binary_cross_entropy(lib.rand(3), lib.rand(3), _c(lib, 3)),
    lambda lib: F(lib).smooth_l1_loss(lib.rand(3), _c(lib, 3)),
    lambda lib: F(lib).huber_loss(_c(lib, 3), lib.rand(3)),
    lambda lib: F(lib).huber_loss(lib.rand(3), _c(lib, 3)),
    lambda lib: F(lib).mse_loss(lib.rand(3), _c(lib, 3)),
    lambda lib: F(lib).binary_cross_entropy_with_logits(lib.rand(3), _c(lib, 3), pos_weight=lib.rand(3)),
    lambda lib: F(lib).binary_cross_entropy_with_logits(lib.rand(3), lib.rand(3), pos_weight=_c(lib, 3)),
    lambda lib: F(lib).binary_cross_entropy_with_logits(lib.rand(3), lib.rand(3), _c(lib, 3)),
    lambda lib: F(lib).binary_cross_entropy_with_logits(lib.rand(3, requires_grad=True), _c(lib, 3)),
])
def test_complex_among_real_loss_arguments_raises_like_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(fn)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits_of_complex_targets_is_complex(weighted, reduction):
    """torch's composite computes in the complex target's dtype (no gradient: it refuses complex outputs)."""
    x, t, w = r(3, 4), r(3, 4) + 1j * r(3, 4), r(4) + 1j * r(4)
    check(lambda lib, a, b, c: F(lib).binary_cross_entropy_with_logits(a, b, c if weighted else None,
                                                                       reduction=reduction),
          x, t, w, grad=False)
    # in the target's dtype (the rest is multiplied into it in place)
    check(lambda lib, a, b, c: F(lib).binary_cross_entropy_with_logits(a, b, c if weighted else None,
                                                                       reduction=reduction),
          x, t.astype(np.complex64), w, grad=False, rtol=1e-5, atol=1e-6)
