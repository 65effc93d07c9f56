"""AdaptiveLogSoftmaxWithLoss against torch with torch's weights: outputs, loss, first and second gradients,
log_prob, predict, the unbatched form, printed form, state_dict keys and errors."""
import numpy as np
import pytest

from oracle import assert_close, ember, same_error, torch


def _pair(args, kwargs, seed=0):
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    rng = np.random.default_rng(seed)
    sd = {k: rng.standard_normal(tuple(v.shape)) for k, v in tm.state_dict().items()}
    tm.load_state_dict({k: torch.tensor(v) for k, v in sd.items()})
    em = ember.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    em.load_state_dict(sd)
    return em, tm


@pytest.mark.parametrize("args,kwargs,targets", [
    ((8, 20, [4, 10, 15]), dict(div_value=2.0, head_bias=True), [0, 5, 12, 19, 3, 11]),
    ((6, 10, [3]), {}, [1, 1, 2, 0]),  # only the shortlist is hit
    ((16, 12, (2, 7)), dict(div_value=4.0), [8, 9, 11, 10]),  # only tail clusters
])
def test_adaptive_log_softmax(args, kwargs, targets):
    em, tm = _pair(args, kwargs)
    assert repr(em) == repr(tm) and list(em.state_dict()) == list(tm.state_dict())
    x = np.random.default_rng(1).standard_normal((len(targets), args[0]))
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    eo, to = em(xe, ember.tensor(targets)), tm(xt, torch.tensor(targets))
    assert type(eo).__name__ == "_ASMoutput" and eo._fields == to._fields
    assert_close(eo.output, to.output)
    assert_close(eo.loss, to.loss)
    ep, tp = [xe, *em.parameters()], [xt, *tm.parameters()]
    ge = ember.autograd.grad(eo.loss, ep, create_graph=True, allow_unused=True)
    gt = torch.autograd.grad(to.loss, tp, create_graph=True, allow_unused=True)
    for a, b in zip(ge, gt):
        assert (a is None) == (b is None)
        if b is not None:
            assert_close(a, b)
    gge = ember.autograd.grad(sum((g ** 2).sum() for g in ge if g is not None), xe)[0]
    ggt = torch.autograd.grad(sum((g ** 2).sum() for g in gt if g is not None), xt)[0]
    assert_close(gge, ggt, atol=1e-6)
    with ember.no_grad(), torch.no_grad():
        assert_close(em.log_prob(ember.tensor(x)), tm.log_prob(torch.tensor(x)))
        assert em.predict(ember.tensor(x)).tolist() == tm.predict(torch.tensor(x)).tolist()
        e1, t1 = em(ember.tensor(x[0]), ember.tensor(targets[0])), tm(torch.tensor(x[0]), torch.tensor(targets[0]))
        assert_close(e1.output, t1.output)
        assert_close(e1.loss, t1.loss)


def test_adaptive_log_softmax_predict_mixed_rows():
    em, tm = _pair((4, 9, [2, 5]), dict(head_bias=True), seed=3)
    x = np.random.default_rng(7).standard_normal((40, 4)) * 3
    with ember.no_grad(), torch.no_grad():
        ep, tp = em.predict(ember.tensor(x)), tm.predict(torch.tensor(x))
    assert ep.tolist() == tp.tolist() and len(set(tp.tolist())) > 2


@pytest.mark.parametrize("fn", [
    lambda lib, m: m(lib.ones(6, 8, dtype=lib.float64), lib.zeros(3, dtype=lib.int64)),
    lambda lib, m: m(lib.ones(6, 8, dtype=lib.float64), lib.zeros(6, 1, dtype=lib.int64)),
    lambda lib, m: m(lib.ones(6, 8, dtype=lib.float64), lib.tensor([0, 1, 2, 3, 4, 25])),
    lambda lib, m: m(lib.ones(1, 6, 8, dtype=lib.float64), lib.zeros(6, dtype=lib.int64)),
    lambda lib, m: m(lib.ones(6, 8, dtype=lib.float64), lib.tensor(3)),
    lambda lib, m: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 20, []),
    lambda lib, m: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 3]),
    lambda lib, m: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 20]),
    lambda lib, m: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 5]),
    lambda lib, m: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [2.5]),
])
def test_adaptive_log_softmax_errors(fn):
    same_error(lambda lib: fn(lib, lib.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10]).double()))
