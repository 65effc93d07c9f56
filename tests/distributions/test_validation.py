"""Argument and sample validation (validate_args) with torch's errors and messages, the global default, printed
forms, sample_n's deprecation, lazy parameters and subclassing rules."""
from __future__ import annotations

import warnings

import pytest

from oracle import ember, same_error, torch


def _d(lib):
    return lib.distributions


BAD_PARAMS = [
    lambda lib: _d(lib).Normal(lib.tensor([0.0, 1.0]), lib.tensor([1.0, -1.0])),
    lambda lib: _d(lib).Normal(lib.tensor([float("nan")]), 1.0),
    lambda lib: _d(lib).Normal(0.0, 0.0),
    lambda lib: _d(lib).Bernoulli(probs=lib.tensor([1.5])),
    lambda lib: _d(lib).Bernoulli(),
    lambda lib: _d(lib).Bernoulli(probs=0.3, logits=0.1),
    lambda lib: _d(lib).Categorical(probs=lib.tensor([0.5, -0.1, 0.6])),
    lambda lib: _d(lib).Categorical(probs=lib.tensor(0.5)),
    lambda lib: _d(lib).Categorical(logits=lib.tensor(0.5)),
    lambda lib: _d(lib).Categorical(logits=lib.tensor([0.0, float("nan")])),
    lambda lib: _d(lib).Uniform(lib.tensor([0.0, 2.0]), lib.tensor([1.0, 1.0])),
    lambda lib: _d(lib).Beta(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda lib: _d(lib).Dirichlet(lib.tensor([1.0, 0.0])),
    lambda lib: _d(lib).Dirichlet(lib.tensor(1.0)),
    lambda lib: _d(lib).Gamma(-1.0, 1.0),
    lambda lib: _d(lib).Exponential(lib.tensor([-2.0])),
    lambda lib: _d(lib).Poisson(lib.tensor([-1.0])),
    lambda lib: _d(lib).Binomial(lib.tensor([2.5]), lib.tensor([0.5])),
    lambda lib: _d(lib).Geometric(lib.tensor([0.0, 0.5])),
    lambda lib: _d(lib).Chi2(lib.tensor([-1.0])),
    lambda lib: _d(lib).StudentT(lib.tensor([-1.0])),
    lambda lib: _d(lib).MultivariateNormal(lib.zeros(2), lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib: _d(lib).MultivariateNormal(lib.zeros(2), lib.eye(2), scale_tril=lib.eye(2)),
    lambda lib: _d(lib).MultivariateNormal(lib.zeros(()), lib.eye(2)),
    lambda lib: _d(lib).MultivariateNormal(lib.zeros(2), lib.ones(2)),
    lambda lib: _d(lib).MultivariateNormal(lib.zeros(2), scale_tril=lib.ones(2)),
    lambda lib: _d(lib).MultivariateNormal(lib.zeros(2), precision_matrix=lib.ones(2)),
    lambda lib: _d(lib).MultivariateNormal(lib.zeros(2), scale_tril=lib.tensor([[1.0, 1.0], [0.0, 1.0]])),
    lambda lib: _d(lib).LowRankMultivariateNormal(lib.zeros(3), lib.ones(2, 1), lib.ones(3)),
    lambda lib: _d(lib).LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 1), lib.ones(2)),
    lambda lib: _d(lib).LowRankMultivariateNormal(lib.zeros(3), lib.ones(3), lib.ones(3)),
    lambda lib: _d(lib).LowRankMultivariateNormal(lib.zeros(2, 3), lib.ones(4, 3, 1), lib.ones(3)),
    lambda lib: _d(lib).LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 1), -lib.ones(3)),
    lambda lib: _d(lib).Independent(_d(lib).Normal(lib.zeros(2), 1.0), 2),
    lambda lib: _d(lib).MixtureSameFamily(_d(lib).Normal(0.0, 1.0), _d(lib).Normal(lib.zeros(2), 1.0)),
    lambda lib: _d(lib).MixtureSameFamily(_d(lib).Categorical(lib.ones(3)), _d(lib).Normal(lib.zeros(2), 1.0)),
    lambda lib: _d(lib).MixtureSameFamily(_d(lib).Categorical(lib.ones(2, 2)), _d(lib).Normal(lib.zeros(3, 2), 1.0)),
    lambda lib: _d(lib).MixtureSameFamily(_d(lib).Categorical(lib.ones(2)), 3),
    lambda lib: _d(lib).TransformedDistribution(_d(lib).Normal(0.0, 1.0), 3),
    lambda lib: _d(lib).TransformedDistribution(_d(lib).Normal(0.0, 1.0), [3]),
    lambda lib: _d(lib).TransformedDistribution(_d(lib).Normal(0.0, 1.0), _d(lib).StickBreakingTransform()),
    lambda lib: _d(lib).Normal("a", 1.0),
    lambda lib: _d(lib).Multinomial(lib.tensor(3), lib.ones(2)),
    lambda lib: _d(lib).RelaxedBernoulli(lib.tensor(0.5), probs=lib.tensor([2.0])),
    lambda lib: _d(lib).ContinuousBernoulli(probs=lib.tensor([2.0]), validate_args=True),
]


@pytest.mark.parametrize("make", BAD_PARAMS, ids=range(len(BAD_PARAMS)))
def test_bad_parameters(make) -> None:
    """The same exception as torch, and the same message (ember prints tensors as torch does)."""
    e, t = same_error(make, match_words=[])
    assert str(e) == str(t)


BAD_VALUES = [
    lambda lib: _d(lib).Normal(0.0, 1.0).log_prob(1.0),
    lambda lib: _d(lib).Normal(lib.zeros(3), 1.0).log_prob(lib.zeros(2)),
    lambda lib: _d(lib).Normal(lib.zeros(3), 1.0).log_prob(lib.tensor([0.0, float("nan"), 1.0])),
    lambda lib: _d(lib).Exponential(1.0).log_prob(lib.tensor([-1.0])),
    lambda lib: _d(lib).Bernoulli(0.3).log_prob(lib.tensor([0.5])),
    lambda lib: _d(lib).Categorical(lib.ones(3)).log_prob(lib.tensor([3])),
    lambda lib: _d(lib).Dirichlet(lib.ones(3)).log_prob(lib.tensor([0.5, 0.5])),
    lambda lib: _d(lib).Dirichlet(lib.ones(3)).log_prob(lib.tensor([0.5, 0.5, 0.5])),
    lambda lib: _d(lib).MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(lib.zeros(3)),
    lambda lib: _d(lib).Uniform(0.0, 1.0).log_prob(lib.tensor(2.0)),
    lambda lib: _d(lib).Uniform(0.0, 1.0).cdf(lib.tensor(2.0)),
    lambda lib: _d(lib).Beta(1.0, 2.0).log_prob(lib.tensor(1.5)),
    lambda lib: _d(lib).Binomial(3, lib.tensor(0.5)).log_prob(lib.tensor(4.0)),
    lambda lib: _d(lib).Poisson(2.0).log_prob(lib.tensor(1.5)),
    lambda lib: _d(lib).OneHotCategorical(lib.ones(3)).log_prob(lib.tensor([1.0, 1.0, 0.0])),
    lambda lib: _d(lib).LogNormal(0.0, 1.0).log_prob(lib.tensor(-1.0)),
    lambda lib: _d(lib).Independent(_d(lib).Normal(lib.zeros(2, 3), 1.0), 1).log_prob(lib.zeros(2, 4)),
    lambda lib: _d(lib).Binomial(lib.tensor([2.0, 3.0]), lib.tensor(0.5)).entropy(),
    lambda lib: _d(lib).Independent(_d(lib).Bernoulli(lib.ones(2) * 0.5), 1).enumerate_support(),
    lambda lib: _d(lib).Categorical(lib.ones(3)).cdf(lib.tensor(1)),
    lambda lib: _d(lib).Normal(0.0, 1.0).enumerate_support(),
    lambda lib: _d(lib).Poisson(1.0).rsample(),
    lambda lib: _d(lib).MixtureSameFamily(_d(lib).Categorical(lib.ones(2)), _d(lib).Normal(lib.zeros(2), 1.0)).rsample(),
    lambda lib: _d(lib).Dirichlet(lib.ones(3)).cdf(lib.ones(3) / 3),
    lambda lib: _d(lib).Multinomial(3, lib.ones(2)).log_prob(lib.tensor([-1.0, 4.0])),
]


@pytest.mark.parametrize("call", BAD_VALUES, ids=range(len(BAD_VALUES)))
def test_bad_values_and_missing_methods(call) -> None:
    e, t = same_error(call, match_words=[])
    assert str(e) == str(t)


def test_validation_switches() -> None:
    for lib in (ember, torch):
        D = _d(lib)
        assert D.Distribution._validate_args is True
        D.Normal(0.0, -1.0, validate_args=False).log_prob(lib.tensor(5.0))  # nothing checked
        try:
            D.Distribution.set_default_validate_args(False)
            n = D.Normal(0.0, -1.0)
            assert n._validate_args is False
            n.log_prob(lib.tensor(5.0))
            assert D.Normal(0.0, 1.0, validate_args=True)._validate_args is True
        finally:
            D.Distribution.set_default_validate_args(True)
    same_error(lambda lib: _d(lib).Distribution.set_default_validate_args(2))


def test_sample_n_warns_and_draws() -> None:
    for lib in (ember, torch):
        with pytest.warns(FutureWarning, match=r"`sample_n\(n\)` will be deprecated. Use `sample\(\(n,\)\)` instead."):
            assert _d(lib).Normal(lib.zeros(2), 1.0).sample_n(3).shape == (3, 2)


def test_missing_constraints_warn() -> None:
    msgs = []
    for lib in (ember, torch):
        D = _d(lib)

        class Bare(D.Distribution):
            def log_prob(self, value):
                return value

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            d = Bare(validate_args=True)
            d.log_prob(lib.zeros(()))
            d._validate_sample(lib.zeros(()))
        msgs.append([str(m.message).replace("ember", "torch").split("'")[-1] for m in w])
        with pytest.raises(NotImplementedError):
            d.expand((2,))
        assert d.batch_shape == () and d.event_shape == ()
    assert msgs[0] == msgs[1] and len(msgs[0]) == 2


def test_lazy_parameters_and_gradients() -> None:
    """probs/logits computed from the other on first use, under grad mode (as torch's lazy_property)."""
    for lib in (ember, torch):
        D = _d(lib)
        x = lib.tensor([0.2, -1.0, 0.5], requires_grad=True)
        c = D.Categorical(logits=x)
        assert "probs" not in vars(c)
        with lib.no_grad():
            p = c.probs  # first computed here, with gradients enabled all the same
        assert p.requires_grad and "probs" in vars(c) and c.probs is p
        assert isinstance(type(c).__dict__["probs"], D.utils.lazy_property)
        assert isinstance(D.Categorical.probs, property)
        b = D.Bernoulli(logits=x)
        assert b.param_shape == (3,) and b._param is x and b.probs.grad_fn is not None


def test_subclass_with_custom_init_must_define_expand() -> None:
    results = []
    for lib in (ember, torch):
        D = _d(lib)

        class Scaled(D.Normal):
            def __init__(self, s):
                super().__init__(lib.zeros(2), s)

        class Plain(D.Normal):
            pass

        try:
            Scaled(1.0).expand((3, 2))
        except NotImplementedError as err:
            results.append(str(err))
        e = Plain(lib.zeros(2), 1.0).expand((3, 2))
        assert type(e) is Plain and e.batch_shape == (3, 2)
    assert results[0] == results[1] and len(results) == 2


def test_broadcast_all_and_utils() -> None:
    for lib in (ember, torch):
        U = _d(lib).utils
        a, b = U.broadcast_all(lib.ones(2, 1, dtype=lib.float64), 3)
        assert a.shape == b.shape == (2, 1) and b.dtype == lib.float64
        a, b = U.broadcast_all(1.0, 2)
        assert a.shape == () and a.dtype == lib.float32
    same_error(lambda lib: _d(lib).utils.broadcast_all(lib.ones(2), "x"))
    same_error(lambda lib: _d(lib).utils.vec_to_tril_matrix(lib.ones(4)))
    same_error(lambda lib: _d(lib).utils.tril_matrix_to_vec(lib.ones(3, 3), 5))
    for lib in (ember, torch):
        U = _d(lib).utils
        p = lib.tensor([0.0, 0.5, 1.0])
        assert repr(U.clamp_probs(p)) == repr(_d(torch).utils.clamp_probs(torch.tensor([0.0, 0.5, 1.0])))
        assert U.euler_constant == 0.57721566490153286060


def test_printed_forms() -> None:
    def forms(lib):
        D = _d(lib)
        return [repr(D.Normal(0.0, 1.0)), repr(D.Normal(lib.tensor([0.5]), lib.tensor([2.0]))),
                repr(D.Normal(lib.zeros(2, requires_grad=True), 1.0)),
                repr(D.Categorical(logits=lib.zeros(3))), repr(D.Uniform(0.0, lib.ones(2))),
                repr(D.Independent(D.Normal(lib.zeros(2), 1.0), 1)), repr(D.LogNormal(0.0, 1.0)),
                repr(D.MultivariateNormal(lib.zeros(2), scale_tril=lib.eye(2))), repr(D.Chi2(2.0)),
                repr(D.Beta(1.0, 2.0)), repr(D.StudentT(3.0)), repr(D.OneHotCategorical(lib.ones(3))),
                repr(D.MixtureSameFamily(D.Categorical(lib.ones(2)), D.Normal(lib.zeros(2), 1.0))),
                repr(D.Binomial(5, lib.tensor(0.3))), repr(D.transforms.AffineTransform(1.0, 2.0).inv),
                repr(D.constraints.interval(0, lib.tensor([1.0, 2.0]))), repr(D.constraints.real_vector),
                repr(D.constraints.integer_interval(0, 3)), repr(D.biject_to(D.constraints.positive)),
                repr(D.transform_to(D.constraints.interval(-1.0, 1.0)))]

    assert forms(ember) == forms(torch)
