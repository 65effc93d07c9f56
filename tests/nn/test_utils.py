"""nn.utils against torch.nn.utils: gradient clipping and parameter/vector conversion."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from oracle import assert_close, assert_same, check, ember, same_error, torch

NORMS = [0.5, 1, 2, 3.0, math.inf, -math.inf, 0, "inf"]


def _params(lib, grads, dtypes=None):
    """Parameters of ones whose .grad are the given arrays (None: no grad)."""
    ps = []
    for i, g in enumerate(grads):
        dt = None if dtypes is None else getattr(lib, dtypes[i])
        if g is None:
            p = lib.nn.Parameter(lib.ones(3, dtype=dt))
        else:
            grad = lib.tensor(g.copy(), dtype=dt)
            p = lib.nn.Parameter(lib.ones_like(grad))
            p.grad = grad
        ps.append(p)
    return ps


def _grads(seed, scale=1.0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) * scale for s in [(4, 3), (5,), (), (2, 0), (2, 3, 2)]]


def _grad_of(params) -> list:
    return [p.grad for p in params]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), norm=st.sampled_from(NORMS), max_norm=st.sampled_from([0.1, 1.0, 100.0]),
       scale=st.sampled_from([1e-3, 1.0, 30.0]))
def test_clip_grad_norm_matches_torch(seed, norm, max_norm, scale):
    grads = _grads(seed, scale) + [None]
    if norm in (math.inf, -math.inf, "inf"):  # no identity: empty gradients raise (test_empty_grad_inf_norm)
        grads = [g for g in grads if g is None or g.size]
    ep, tp = _params(ember, grads), _params(torch, grads)
    en = ember.nn.utils.clip_grad_norm_(ep, max_norm, norm_type=norm)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type=norm)
    assert_close(en, tn, rtol=1e-5, what="total norm")
    assert_same(_grad_of(ep), _grad_of(tp), what="grad")


@pytest.mark.parametrize("norm", [2, math.inf, 1])
def test_clip_grad_norm_mixed_dtypes_and_single_tensor(norm):
    grads = [np.array([3.0, 4.0]), np.array([[1.0, -2.0]]), np.array([12.0])]
    dts = ["float32", "float64", "float16"]
    ep, tp = _params(ember, grads, dts), _params(torch, grads, dts)
    assert_close(ember.nn.utils.clip_grad_norm_(ep, 1.0, norm), torch.nn.utils.clip_grad_norm_(tp, 1.0, norm))
    assert_same(_grad_of(ep), _grad_of(tp), what="grad")
    e1, t1 = _params(ember, grads[:1]), _params(torch, grads[:1])
    assert_close(ember.nn.utils.clip_grad_norm_(e1[0], 2.0, norm), torch.nn.utils.clip_grad_norm_(t1[0], 2.0, norm))
    assert_same(_grad_of(e1), _grad_of(t1), what="grad")


def test_total_norm_of_nothing_and_generators():
    for lib in (ember, torch):
        n = lib.nn.utils.clip_grad_norm_([], 1.0)
        assert n.dtype == lib.float32 and n.item() == 0.0
        assert lib.nn.utils.clip_grad_norm_(_params(lib, [None]), 1.0).item() == 0.0
        with pytest.warns(UserWarning, match="empty generator"):
            lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ps = _params(lib, _grads(0))
            lib.nn.utils.clip_grad_norm_((p for p in ps), 1.0)  # non-empty generator: no warning
        with pytest.warns(FutureWarning, match="clip_grad_norm_"):
            lib.nn.utils.clip_grad_norm(_params(lib, _grads(1)), 1.0)


@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_non_finite_total_norm(bad):
    grads = [np.array([1.0, bad], np.float32), np.ones(2, np.float32)]
    same_error(lambda lib: lib.nn.utils.clip_grad_norm_(_params(lib, grads), 1.0, error_if_nonfinite=True))
    ep, tp = _params(ember, grads), _params(torch, grads)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy warnings leak
        en = ember.nn.utils.clip_grad_norm_(ep, 1.0)
    assert_close(en, torch.nn.utils.clip_grad_norm_(tp, 1.0))
    assert_same(_grad_of(ep), _grad_of(tp), what="grad")


@pytest.mark.parametrize("norm", [math.inf, -math.inf])
def test_empty_grad_inf_norm(norm):
    same_error(lambda lib: lib.nn.utils.clip_grad_norm_(_params(lib, [np.ones((2, 0), np.float32)]), 1.0, norm))


def test_bad_norm_type_error():
    same_error(lambda lib: lib.nn.utils.clip_grad_norm_(_params(lib, _grads(0)), 1.0, norm_type="fro"))


def test_get_total_norm_and_clip_grads_with_norm():
    grads = [g for g in _grads(3, 5.0) if g.size]
    for norm in (2.0, math.inf, 1):
        ep, tp = _params(ember, grads), _params(torch, grads)
        en = ember.nn.utils.get_total_norm([p.grad for p in ep], norm)
        tn = torch.nn.utils.get_total_norm([p.grad for p in tp], norm)
        assert_close(en, tn)
        assert_close(ember.nn.utils.get_total_norm(ep[0].grad, norm), torch.nn.utils.get_total_norm(tp[0].grad, norm))
        assert ember.nn.utils.clip_grads_with_norm_(ep, 2.0, en) is None
        torch.nn.utils.clip_grads_with_norm_(tp, 2.0, tn)
        assert_same(_grad_of(ep), _grad_of(tp), what="grad")


@pytest.mark.parametrize("clip", [0.0, 0.3, 2])
def test_clip_grad_value_matches_torch(clip):
    grads = _grads(7, 2.0) + [None]
    ep, tp = _params(ember, grads), _params(torch, grads)
    assert ember.nn.utils.clip_grad_value_(ep, clip) is None
    torch.nn.utils.clip_grad_value_(tp, clip)
    assert_same(_grad_of(ep), _grad_of(tp), what="grad")
    ep, tp = _params(ember, grads[:1]), _params(torch, grads[:1])
    ember.nn.utils.clip_grad_value_(ep[0], clip, foreach=True)
    torch.nn.utils.clip_grad_value_(tp[0], clip, foreach=True)
    assert_same(_grad_of(ep), _grad_of(tp), what="grad")


def test_clipping_a_model_after_backward():
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
        return m

    em, tm = run(ember), run(torch)
    em.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    em(ember.tensor(x)).pow(2).sum().backward()
    tm(torch.tensor(x)).pow(2).sum().backward()
    assert_close(ember.nn.utils.clip_grad_norm_(em.parameters(), 0.5),
                 torch.nn.utils.clip_grad_norm_(tm.parameters(), 0.5))
    assert_same(_grad_of(list(em.parameters())), _grad_of(list(tm.parameters())), what="grad")


# ---------------------------------------------------------------- parameters <-> vector
def test_parameters_to_vector_values_and_grads():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(2, 3), (4,), (), (1, 2, 2)]]
    check(lambda lib, *ts: lib.nn.utils.parameters_to_vector(ts), *arrays, gradgrad=True)
    check(lambda lib, a, b: lib.nn.utils.parameters_to_vector(iter([a[1:], b])), arrays[0], arrays[1])
    same_error(lambda lib: lib.nn.utils.parameters_to_vector([lib.tensor(arrays[0]).mT]))  # view(-1) of a transpose


def test_vector_to_parameters_roundtrip():
    rng = np.random.default_rng(1)
    vec = rng.standard_normal(6 + 4 + 1 + 5).astype(np.float32)
    res = []
    for lib in (ember, torch):
        ps = [lib.nn.Parameter(lib.zeros(s)) for s in [(2, 3), (4,), (), (5,)]]
        v = lib.tensor(vec)
        assert lib.nn.utils.vector_to_parameters(v, ps) is None
        assert all(p.requires_grad and p.grad_fn is None for p in ps)
        v[0] = 100.0  # the parameters view vec's memory, as torch's do
        res.append(ps)
        assert_close(lib.nn.utils.parameters_to_vector(ps), v) if lib is torch else None
    for a, b in zip(*res):
        assert_close(a, b)


def test_convert_errors():
    same_error(lambda lib: lib.nn.utils.vector_to_parameters([1.0, 2.0], [lib.nn.Parameter(lib.ones(2))]))
    same_error(lambda lib: lib.nn.utils.vector_to_parameters(np.ones(2), [lib.nn.Parameter(lib.ones(2))]))
    same_error(lambda lib: lib.nn.utils.parameters_to_vector([]))
    same_error(lambda lib: lib.nn.utils.vector_to_parameters(lib.ones(3), [lib.nn.Parameter(lib.ones(2, 2))]))


def test_namespace_matches_torch():
    names = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_",
             "parameters_to_vector", "vector_to_parameters", "clip_grad", "convert_parameters"]
    for n in names:
        assert hasattr(torch.nn.utils, n) and hasattr(ember.nn.utils, n), n
    import ember.nn.utils.clip_grad as cg  # noqa: F401 - importable as torch's
