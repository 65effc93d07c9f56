"""Distributions with parameters on the stand-in ``cuda`` device (default device left on the CPU): every tensor a
distribution makes (samples, constant supports, NaN/inf moments, identity matrices, masks) lands on the parameters'
device, and values that use no randomness equal the CPU's (NOTE [cuda stand-in] in ember/_backend.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember
import ember.distributions as dist


def _t(dev, *values):
    return ember.tensor(np.asarray(values, np.float32), device=dev)


def _spd(dev):
    return ember.tensor(np.array([[2.0, 0.5, 0.1], [0.5, 1.5, 0.2], [0.1, 0.2, 1.0]], np.float32), device=dev)


CASES = {
    "Normal": lambda d: dist.Normal(_t(d, 0.5, -1.0), 2.0),
    "Cauchy": lambda d: dist.Cauchy(_t(d, 0.5, -1.0), _t(d, 1.0, 2.0)),
    "HalfNormal": lambda d: dist.HalfNormal(_t(d, 1.0, 2.0)),
    "Uniform": lambda d: dist.Uniform(_t(d, 0.0, 1.0), 3.0),
    "Bernoulli": lambda d: dist.Bernoulli(probs=_t(d, 0.2, 0.7)),
    "Binomial": lambda d: dist.Binomial(4, probs=_t(d, 0.2, 0.7)),
    "Categorical": lambda d: dist.Categorical(probs=_t(d, 0.2, 0.3, 0.5)),
    "OneHotCategorical": lambda d: dist.OneHotCategorical(probs=_t(d, 0.2, 0.3, 0.5)),
    "RelaxedBernoulli": lambda d: dist.RelaxedBernoulli(_t(d, 0.5), probs=_t(d, 0.2, 0.7)),
    "RelaxedOneHotCategorical": lambda d: dist.RelaxedOneHotCategorical(_t(d, 0.5), probs=_t(d, 0.2, 0.3, 0.5)),
    "ContinuousBernoulli": lambda d: dist.ContinuousBernoulli(probs=_t(d, 0.2, 0.7)),
    "GeneralizedPareto": lambda d: dist.GeneralizedPareto(_t(d, 0.0, 1.0), _t(d, 1.0, 2.0), _t(d, 0.1, 0.2)),
    "VonMises": lambda d: dist.VonMises(_t(d, 0.5, -1.0), _t(d, 1.0, 4.0)),
    "MultivariateNormal": lambda d: dist.MultivariateNormal(_t(d, 0.0, 1.0, 2.0), precision_matrix=_spd(d)),
    "LowRankMultivariateNormal": lambda d: dist.LowRankMultivariateNormal(
        _t(d, 0.0, 1.0, 2.0), _spd(d)[:, :2], _t(d, 1.0, 2.0, 3.0)),
    "Wishart": lambda d: dist.Wishart(df=_t(d, 4.0), covariance_matrix=_spd(d)),
    "LKJCholesky": lambda d: dist.LKJCholesky(3, _t(d, 2.0)),
}


def _values(make, dev) -> dict:
    """Everything of the distribution that is computed without randomness, and the device of a sample."""
    d = make(dev)
    ember.manual_seed(0)
    x = d.sample((2,))
    out = {"sample device": str(x.device), "log_prob": d.log_prob(x)}
    for name in ("mean", "variance", "mode", "entropy"):
        try:
            v = getattr(d, name)
            out[name] = v() if callable(v) else v
        except NotImplementedError:
            pass
    if d.has_enumerate_support:
        out["support"] = d.enumerate_support()
    if d.has_rsample:
        out["rsample device"] = str(d.rsample().device)
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_distribution_tensors_on_the_parameters_device(stand_in, name) -> None:
    assert str(ember.get_default_device()) == "cpu"
    on_device = _values(CASES[name], "cuda")
    on_host = _values(CASES[name], "cpu")
    assert on_device["sample device"] == "cuda:0"
    assert on_device.get("rsample device", "cuda:0") == "cuda:0"
    assert on_device.keys() == on_host.keys()
    for key, v in on_device.items():
        if isinstance(v, ember.Tensor):
            assert str(v.device) == "cuda:0", f"{key} on {v.device}"
            if key != "log_prob":  # (of the samples, which come from each device's generator)
                np.testing.assert_allclose(v.cpu().numpy(), on_host[key].numpy(), rtol=1e-6, atol=1e-7,
                                           err_msg=key)


def test_numbers_broadcast_with_tensors_join_their_device(stand_in) -> None:
    d = dist.Normal(ember.zeros(2, device="cuda"), 1.0)
    assert str(d.scale.device) == "cuda:0"
    assert math.isnan(dist.Cauchy(ember.zeros(1, device="cuda"), 1.0).mean.item())
