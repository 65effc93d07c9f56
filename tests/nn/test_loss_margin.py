"""Margin losses vs torch 2.13 (hinge embedding, soft margin, multilabel soft margin, multilabel margin, multi
margin, triplet with a distance function) and their modules: values, grads and second grads on random shapes for
every reduction and option, torch's errors for bad shapes, targets and options."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from nn._parity import reseeding
from oracle import check, same_error, ember, torch

rng = np.random.default_rng(11)
_reseed = reseeding(rng, 11)
REDUCTIONS = ["mean", "sum", "none"]


def r(*shape, lo=None, hi=None):
    if lo is not None:
        return rng.uniform(lo, hi, shape)
    return rng.standard_normal(shape)


def F(lib):
    return lib.nn.functional


def signs(*shape, zeros=False):
    """Targets in {1, -1} (and 0 with ``zeros``: torch then adds both terms)."""
    return rng.choice([1.0, -1.0, 0.0] if zeros else [1.0, -1.0], shape)


def multilabel_targets(n, c):
    """Rows of class indices ended by -1 (some rows full, one with a repeated class, one starting with -1)."""
    t = np.full((n, c), -1, np.int64)
    for i in range(n):
        k = rng.integers(0, c + 1)
        t[i, :k] = rng.permutation(c)[:k]
        if i == 1 and c > 2:
            t[i, :3] = [0, 0, 1]  # a class listed twice counts twice
        if k < c and i % 2:
            t[i, k + 1:] = rng.integers(0, c, c - k - 1)  # ignored: after the first -1
    if n > 2:
        t[2, 0] = -1
    return t


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), ()], ids=str)
@pytest.mark.parametrize("margin", [1.0, 0.3])
def test_hinge_embedding(reduction, shape, margin):
    y = signs(*shape, zeros=True)
    check(lambda lib, x: F(lib).hinge_embedding_loss(x, lib.tensor(y), margin, reduction=reduction), r(*shape),
          gradgrad=True)
    check(lambda lib, x: lib.hinge_embedding_loss(x, lib.tensor(y), margin, REDUCTIONS.index(reduction) % 3 and
                                                  {"mean": 1, "sum": 2, "none": 0}[reduction]), r(*shape))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shapes", [((5,), (5,)), ((3, 4), (3, 4)), ((2, 3, 4), (3, 4)), ((), ())], ids=str)
def test_soft_margin(reduction, shapes):
    x, y = r(*shapes[0]) * 3, signs(*shapes[1])
    check(lambda lib, a: F(lib).soft_margin_loss(a, lib.tensor(y), reduction=reduction), x, gradgrad=True)
    check(lambda lib, a, b: F(lib).soft_margin_loss(a, b, reduction=reduction), x, r(*shapes[1]), gradgrad=True,
          requires_grad=[True, False])  # torch: no derivative for the target


def test_soft_margin_float32_large_and_long_target():
    x = np.array([-100.0, -20.0, 0.0, 20.0, 100.0], np.float32)
    check(lambda lib, a: F(lib).soft_margin_loss(a, lib.tensor([1, -1, 1, 1, -1]), reduction="none"), x)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(4, 5), (5,), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin(reduction, shape, weighted):
    y = rng.integers(0, 2, shape).astype(np.float64)
    w = r(shape[-1], lo=0.5, hi=2.0)
    check(lambda lib, x: F(lib).multilabel_soft_margin_loss(x, lib.tensor(y), lib.tensor(w) if weighted else None,
                                                            reduction=reduction), r(*shape) * 3, gradgrad=True)
    check(lambda lib, x, t: F(lib).multilabel_soft_margin_loss(x, t, reduction=reduction), r(*shape),
          r(*shape, lo=0, hi=1), gradgrad=True)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("n,c", [(5, 4), (3, 6), (1, 1), (4, 2)])
def test_multilabel_margin(reduction, n, c):
    t = multilabel_targets(n, c)
    x = r(n, c)
    # torch has no second derivative here: first derivatives against torch, second ones (zero: piecewise linear)
    # against finite differences of ember's first derivatives
    check(lambda lib, a: F(lib).multilabel_margin_loss(a, lib.tensor(t), reduction=reduction), x)
    xe = ember.tensor(x, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda a: F(ember).multilabel_margin_loss(a, ember.tensor(t),
                                                                                  reduction=reduction), (xe,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_vector_and_scalar_inputs(reduction):
    check(lambda lib, x: F(lib).multilabel_margin_loss(x, lib.tensor([3, 0, -1, 1, 2]), reduction=reduction),
          r(5))
    for target in ([0], 0, [-1]):
        check(lambda lib, x: F(lib).multilabel_margin_loss(x, lib.tensor(target), reduction=reduction), r())
    if reduction != "mean":  # torch's mean over an empty batch reads uninitialised memory
        check(lambda lib, x: F(lib).multilabel_margin_loss(x, lib.zeros(0, 4, dtype=lib.int64), reduction=reduction),
              r(0, 4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("margin", [1.0, 0.4])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n,c", [(6, 4), (3, 7), (2, 1)])
def test_multi_margin(reduction, p, margin, weighted, n, c):
    t = rng.integers(0, c, n)
    w = r(c, lo=0.5, hi=2.0)

    def fn(lib, x, wt):
        return F(lib).multi_margin_loss(x, lib.tensor(t), p, margin, lib.tensor(w) if weighted else None,
                                        reduction=reduction)
    x = r(n, c)
    # torch has no derivative for weight and no second derivative at all: first derivatives against torch, second
    # ones (p=2: non-zero) against finite differences of ember's own first derivatives
    check(fn, x, w, requires_grad=[True, False])
    xe = ember.tensor(x, requires_grad=True)
    assert ember.autograd.gradgradcheck(lambda a: fn(ember, a, None), (xe,))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multi_margin_vector_scalar_and_empty(reduction):
    for target in ([2], 2):
        check(lambda lib, x: F(lib).multi_margin_loss(x, lib.tensor(target), p=2, reduction=reduction), r(4))
    check(lambda lib, x: F(lib).multi_margin_loss(x, lib.tensor(0), reduction=reduction), r())
    check(lambda lib, x: F(lib).multi_margin_loss(x, lib.tensor([0]), reduction=reduction), r())
    check(lambda lib, x: F(lib).multi_margin_loss(x, lib.tensor(0), p=2, reduction=reduction), r(5))
    if reduction != "mean":  # torch's mean over an empty batch reads uninitialised memory
        check(lambda lib, x: F(lib).multi_margin_loss(x, lib.zeros(0, dtype=lib.int64), reduction=reduction),
              r(0, 3))


def _cos_distance(lib):
    return lambda a, b: 1.0 - lib.nn.functional.cosine_similarity(a, b, dim=-1)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("distance", ["default", "cosine", "l1 module"])
@pytest.mark.parametrize("shape", [(5, 3), (4,), (2, 3, 4)], ids=str)
def test_triplet_margin_with_distance(reduction, swap, distance, shape):
    def fn(lib, a, p, n):
        d = {"default": None, "cosine": _cos_distance(lib), "l1 module": lib.nn.PairwiseDistance(p=1.0)}[distance]
        return F(lib).triplet_margin_with_distance_loss(a, p, n, distance_function=d, margin=1.5, swap=swap,
                                                        reduction=reduction)
    check(fn, r(*shape), r(*shape), r(*shape), gradgrad=True)


def test_triplet_with_distance_default_equals_triplet_margin_loss():
    a, p, n = (ember.tensor(r(6, 4)) for _ in range(3))
    u = F(ember).triplet_margin_with_distance_loss(a, p, n, swap=True, reduction="none")
    v = F(ember).triplet_margin_loss(a, p, n, swap=True, reduction="none")
    np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-12)


MODULES = [
    (lambda nn, w: nn.HingeEmbeddingLoss(0.5), "signs"),
    (lambda nn, w: nn.HingeEmbeddingLoss(reduction="sum"), "signs"),
    (lambda nn, w: nn.SoftMarginLoss(), "signs"),
    (lambda nn, w: nn.SoftMarginLoss(reduction="none"), "signs"),
    (lambda nn, w: nn.MultiLabelSoftMarginLoss(), "binary"),
    (lambda nn, w: nn.MultiLabelSoftMarginLoss(weight=w, reduction="sum"), "binary"),
    (lambda nn, w: nn.MultiLabelMarginLoss(), "multilabel"),
    (lambda nn, w: nn.MultiLabelMarginLoss(reduction="none"), "multilabel"),
    (lambda nn, w: nn.MultiMarginLoss(), "class"),
    (lambda nn, w: nn.MultiMarginLoss(p=2, margin=0.5, weight=w, reduction="none"), "class"),
    (lambda nn, w: nn.NLLLoss2d(), "class"),
    (lambda nn, w: nn.NLLLoss2d(weight=w, reduction="sum"), "class"),
]


@pytest.mark.parametrize("i", range(len(MODULES)))
def test_loss_modules(i):
    ctor, kind = MODULES[i]
    x, w = r(5, 4), r(4, lo=0.5, hi=2.0)
    t = {"signs": lambda: signs(5, 4), "binary": lambda: rng.integers(0, 2, (5, 4)).astype(np.float64),
         "multilabel": lambda: multilabel_targets(5, 4), "class": lambda: rng.integers(0, 4, 5)}[kind]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        # torch's multilabel margin and multi margin losses have no second derivative
        check(lambda lib, a: ctor(lib.nn, lib.tensor(w))(a, lib.tensor(t)), x, gradgrad=kind not in ("multilabel",)
              and "MultiMargin" not in type(ctor(torch.nn, None)).__name__)
        em, tm = ctor(ember.nn, ember.tensor(w)), ctor(torch.nn, torch.tensor(w))
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    assert {k: v for k, v in vars(em).items() if not k.startswith("_") and k != "training"} == \
        {k: v for k, v in vars(tm).items() if not k.startswith("_") and k != "training"}


def test_nll_loss2d_is_a_deprecated_nll_loss():
    for lib in (ember, torch):
        with pytest.warns(FutureWarning, match="NLLLoss2d` has been deprecated"):
            m = lib.nn.NLLLoss2d(ignore_index=1)
        assert isinstance(m, lib.nn.NLLLoss) and m.ignore_index == 1
    x, t = r(2, 3, 4, 5), rng.integers(0, 3, (2, 4, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        check(lambda lib, a: lib.nn.NLLLoss2d()(a.log_softmax(1), lib.tensor(t)), x, gradgrad=True)


@pytest.mark.parametrize("swap", [False, True])
def test_triplet_with_distance_module(swap):
    a, p, n = r(4, 3), r(4, 3), r(4, 3)
    for make in (lambda lib: lib.nn.TripletMarginWithDistanceLoss(swap=swap),
                 lambda lib: lib.nn.TripletMarginWithDistanceLoss(distance_function=_cos_distance(lib), margin=0.5,
                                                                  swap=swap, reduction="sum"),
                 lambda lib: lib.nn.TripletMarginWithDistanceLoss(distance_function=lib.nn.PairwiseDistance(p=1.0),
                                                                  reduction="none")):
        check(lambda lib, u, v, w: make(lib)(u, v, w), a, p, n, gradgrad=True)
        assert repr(make(ember)) == repr(make(torch))
        em, tm = make(ember), make(torch)
        assert (em.margin, em.swap, em.reduction) == (tm.margin, tm.swap, tm.reduction)
        assert [k for k, _ in em.named_modules()] == [k for k, _ in tm.named_modules()]


def L(lib, *v):
    return lib.tensor(list(v))


ERRORS = [
    lambda lib: F(lib).multi_margin_loss(lib.randn(3, 4), L(lib, 0, 1, 2), p=3),
    lambda lib: F(lib).multi_margin_loss(lib.randn(3, 4), L(lib, 0, 1, 4)),
    lambda lib: F(lib).multi_margin_loss(lib.randn(3, 4), L(lib, 0, 1, -1)),
    lambda lib: F(lib).multi_margin_loss(lib.randn(3, 4), L(lib, 0, 1)),
    lambda lib: F(lib).multi_margin_loss(lib.randn(3, 4), L(lib, 0, 1, 2), weight=lib.ones(3)),
    lambda lib: F(lib).multi_margin_loss(lib.randn(3, 4), L(lib, 0, 1, 2), weight=lib.ones(2, 2)),
    lambda lib: F(lib).multi_margin_loss(lib.randn(2, 3, 4), L(lib, 0, 1)),
    lambda lib: F(lib).multi_margin_loss(lib.randn(3, 0), L(lib, 0, 1, 2)),
    lambda lib: F(lib).multi_margin_loss(lib.randn(3, 4), L(lib, 0.0, 1.0, 2.0)),
    lambda lib: F(lib).multi_margin_loss(lib.randn(3, 4), L(lib, 0, 1, 2), reduction="foo"),
    lambda lib: F(lib).multilabel_margin_loss(lib.randn(3, 4), lib.tensor([[0, 1, -1, 4]] * 3)),
    lambda lib: F(lib).multilabel_margin_loss(lib.randn(3, 4), lib.tensor([[0, 1, -2, 2]] * 3)),
    lambda lib: F(lib).multilabel_margin_loss(lib.randn(3, 4), lib.tensor([[0, 1, -1]] * 3)),
    lambda lib: F(lib).multilabel_margin_loss(lib.randn(4), lib.tensor([0, 1, -1])),
    lambda lib: F(lib).multilabel_margin_loss(lib.randn(3, 4), lib.tensor([[0.0, 1, -1, 2]] * 3)),
    lambda lib: F(lib).multilabel_margin_loss(lib.randn(2, 3, 4), lib.zeros(2, 3, 4, dtype=lib.int64)),
    lambda lib: F(lib).multilabel_margin_loss(lib.randn(3, 4), lib.zeros(3, 4, dtype=lib.int64), reduction="foo"),
    lambda lib: F(lib).soft_margin_loss(lib.randn(3, 4), lib.randn(2, 4)),
    lambda lib: F(lib).soft_margin_loss(lib.randn(3, 4), lib.randn(3, 4), reduction="foo"),
    lambda lib: F(lib).multilabel_soft_margin_loss(lib.randn(3, 4), lib.randn(2, 4)),
    lambda lib: F(lib).multilabel_soft_margin_loss(lib.randn(3, 4), lib.randn(3, 4), reduction="foo"),
    lambda lib: F(lib).multilabel_soft_margin_loss(lib.randn(()), lib.randn(())),
    lambda lib: F(lib).hinge_embedding_loss(lib.randn(3, 4), lib.randn(2, 4)),
    lambda lib: F(lib).hinge_embedding_loss(lib.randn(3, 4), lib.randn(3, 4), reduction="foo"),
    lambda lib: F(lib).triplet_margin_with_distance_loss(lib.randn(3, 4), lib.randn(3, 4), lib.randn(3, 4),
                                                         margin=0),
    lambda lib: F(lib).triplet_margin_with_distance_loss(lib.randn(3, 4), lib.randn(3, 4), lib.randn(4)),
    lambda lib: F(lib).triplet_margin_with_distance_loss(lib.randn(3, 4), lib.randn(3, 4), lib.randn(3, 4),
                                                         reduction="foo"),
    lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-1),
    lambda lib: lib.nn.MultiMarginLoss(p=3),
    lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
    lambda lib: lib.hinge_embedding_loss([1.0], lib.ones(1)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_like_torch(i):
    same_error(ERRORS[i])


def test_legacy_flags():
    x, y = r(3, 4), signs(3, 4)
    for kw in ({"size_average": False}, {"reduce": False}):
        for name in ("hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss"):
            with pytest.warns(UserWarning):
                e = getattr(F(ember), name)(ember.tensor(x), ember.tensor(y), **kw)
            with pytest.warns(UserWarning):
                t = getattr(F(torch), name)(torch.tensor(x), torch.tensor(y), **kw)
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


def test_names_exist():
    for name in ("hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss",
                 "multi_margin_loss", "triplet_margin_with_distance_loss"):
        assert callable(getattr(ember.nn.functional, name)) and hasattr(torch.nn.functional, name)
    for name in ("HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss",
                 "MultiMarginLoss", "TripletMarginWithDistanceLoss", "NLLLoss2d"):
        assert issubclass(getattr(ember.nn, name), ember.nn.Module) and hasattr(torch.nn, name)


@pytest.mark.parametrize("name", ["hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
                                  "multilabel_margin_loss", "multi_margin_loss", "triplet_margin_with_distance_loss"])
def test_float32_keeps_dtype(name):
    x = r(4, 5).astype(np.float32)
    target = {"multilabel_margin_loss": multilabel_targets(4, 5), "multi_margin_loss": rng.integers(0, 5, 4),
              "multilabel_soft_margin_loss": rng.integers(0, 2, (4, 5)).astype(np.float32)}.get(
                  name, signs(4, 5).astype(np.float32))

    def fn(lib, a, b):
        if name == "triplet_margin_with_distance_loss":
            return F(lib).triplet_margin_with_distance_loss(a, b, a.flip(0), swap=True)
        return getattr(F(lib), name)(a, lib.tensor(target))
    check(fn, x, r(4, 5).astype(np.float32))
