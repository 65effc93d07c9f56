"""Normalization layers vs torch: train/eval outputs, input and parameter grads, running statistics, reprs."""
from __future__ import annotations

import numpy as np
import pytest

from oracle import check, same_error, ember, torch
from nn._parity import module_parity, copy_state, reseeding

rng = np.random.default_rng(2)
_reseed = reseeding(rng, 2)


def r(*shape, dtype=np.float32):
    return (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)


def _randomize(tm) -> None:
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.randn_like(p))


BN = [
    ("bn1d 2d", lambda nn: nn.BatchNorm1d(4), (6, 4)),
    ("bn1d 3d", lambda nn: nn.BatchNorm1d(3, momentum=0.3), (4, 3, 5)),
    ("bn1d cumulative", lambda nn: nn.BatchNorm1d(3, momentum=None), (4, 3)),
    ("bn1d no affine", lambda nn: nn.BatchNorm1d(3, affine=False), (5, 3)),
    ("bn1d no stats", lambda nn: nn.BatchNorm1d(3, track_running_stats=False), (5, 3)),
    ("bn2d", lambda nn: nn.BatchNorm2d(3, eps=1e-3), (2, 3, 4, 5)),
    ("bn2d no bias", lambda nn: nn.BatchNorm2d(3, bias=False), (2, 3, 2, 2)),
    ("in2d", lambda nn: nn.InstanceNorm2d(3), (2, 3, 4, 4)),
    ("in2d affine stats", lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True), (2, 3, 4, 4)),
    ("in2d unbatched", lambda nn: nn.InstanceNorm2d(3, affine=True), (3, 4, 4)),
]


@pytest.mark.parametrize("name,ctor,shape", BN, ids=[b[0] for b in BN])
def test_batch_and_instance_norm(name, ctor, shape):
    em, tm = ctor(ember.nn), ctor(torch.nn)
    _randomize(tm)
    copy_state(em, tm)
    for _ in range(3):  # running stats evolve over several training steps, then eval uses them
        x = r(*shape)
        xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ye, yt = em(xe), tm(xt)
        np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
        up = rng.standard_normal(yt.shape).astype(np.float32)
        ye.backward(ember.tensor(up))
        yt.backward(torch.tensor(up))
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-3, atol=1e-4)
        for (n, p), (_, q) in zip(em.named_parameters(), tm.named_parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-3, atol=1e-4, err_msg=n)
    for (n, b), (_, c) in zip(em.named_buffers(), tm.named_buffers()):
        assert str(b.dtype).split(".")[-1] == str(c.dtype).split(".")[-1], n
        np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)
    em.eval()
    tm.eval()
    module_parity(lambda lib: em if lib is ember else tm, r(*shape), train=False, rtol=1e-4, atol=1e-5)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())


def test_batch_norm_double_backward_matches_torch():
    w, b = r(3).astype(np.float64), r(3).astype(np.float64)
    check(lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True), r(5, 3, 2).astype(
        np.float64), w, b, gradgrad=True)


@pytest.mark.parametrize("ctor,shape", [
    (lambda nn: nn.LayerNorm(5), (3, 5)), (lambda nn: nn.LayerNorm((4, 5), eps=1e-3), (2, 4, 5)),
    (lambda nn: nn.LayerNorm(5, elementwise_affine=False), (2, 3, 5)), (lambda nn: nn.LayerNorm(5, bias=False), (3, 5)),
    (lambda nn: nn.GroupNorm(2, 4), (3, 4, 5)), (lambda nn: nn.GroupNorm(1, 6, affine=False), (2, 6, 2, 2)),
    (lambda nn: nn.GroupNorm(3, 6, eps=1e-2), (2, 6)), (lambda nn: nn.RMSNorm(5), (3, 5)),
    (lambda nn: nn.RMSNorm((2, 5), eps=1e-4), (3, 2, 5)), (lambda nn: nn.RMSNorm(5, elementwise_affine=False), (5,)),
])
def test_layer_group_rms_norm(ctor, shape):
    tm = ctor(torch.nn)
    _randomize(tm)
    for train in (True, False):
        tm.zero_grad()
        module_parity(lambda lib: tm if lib is torch else ctor(ember.nn), r(*shape), train=train, rtol=1e-4,
                      atol=1e-5)
    assert repr(ctor(ember.nn)) == repr(ctor(torch.nn))


@pytest.mark.parametrize("fn", [
    lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (4,), w, b),
    lambda lib, x, w, b: lib.nn.functional.group_norm(x.reshape(3, 4, 1), 2, w, b),
    lambda lib, x, w, b: lib.nn.functional.rms_norm(x, (4,), w),
    lambda lib, x, w, b: lib.nn.functional.instance_norm(x.reshape(1, 3, 4), weight=w[:3], bias=b[:3]),
])
def test_functional_second_grads(fn):
    check(fn, r(3, 4).astype(np.float64), r(4).astype(np.float64), r(4).astype(np.float64), gradgrad=True)


def test_errors_like_torch():
    same_error(lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(1, 3)))
    same_error(lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(2, 3, 4, 5)))
    same_error(lambda lib: lib.nn.BatchNorm2d(3)(lib.randn(2, 3)))
    same_error(lambda lib: lib.nn.functional.layer_norm(lib.randn(2, 3), (4,)))
    same_error(lambda lib: lib.nn.functional.group_norm(lib.randn(2, 6), 4))
    same_error(lambda lib: lib.nn.GroupNorm(4, 6))


# ---------------------------------------------------------------- BatchNorm3d, InstanceNorm1d/3d, LocalResponseNorm
MORE_NORMS = [
    ("bn3d", lambda nn: nn.BatchNorm3d(3, momentum=0.2), (2, 3, 2, 3, 2)),
    ("bn3d cumulative no bias", lambda nn: nn.BatchNorm3d(2, momentum=None, bias=False), (3, 2, 2, 2, 3)),
    ("in1d", lambda nn: nn.InstanceNorm1d(3), (4, 3, 6)),
    ("in1d affine stats", lambda nn: nn.InstanceNorm1d(3, affine=True, track_running_stats=True), (4, 3, 6)),
    ("in1d unbatched stats", lambda nn: nn.InstanceNorm1d(3, track_running_stats=True, momentum=None), (3, 5)),
    ("in3d", lambda nn: nn.InstanceNorm3d(2, eps=1e-3), (2, 2, 3, 2, 3)),
    ("in3d affine stats", lambda nn: nn.InstanceNorm3d(2, affine=True, track_running_stats=True), (2, 2, 2, 3, 2)),
    ("in3d unbatched", lambda nn: nn.InstanceNorm3d(2, affine=True), (2, 3, 2, 2)),
]


@pytest.mark.parametrize("name,ctor,shape", MORE_NORMS, ids=[b[0] for b in MORE_NORMS])
def test_batch_norm_3d_and_instance_norm_1d_3d(name, ctor, shape):
    test_batch_and_instance_norm(name, ctor, shape)


@pytest.mark.parametrize("shape", [(2, 5, 4), (3, 6, 2, 3), (2, 4, 2, 3, 2)])
@pytest.mark.parametrize("size,alpha,beta,k", [(2, 1e-4, 0.75, 1.0), (3, 0.5, 0.6, 2.0), (5, 1.0, 1.3, 0.5),
                                               (8, 0.3, 0.75, 1.0)])
def test_local_response_norm(shape, size, alpha, beta, k):
    x = r(*shape).astype(np.float64)
    check(lambda lib, x: lib.nn.functional.local_response_norm(x, size, alpha, beta, k), x, gradgrad=True)
    module_parity(lambda lib: lib.nn.LocalResponseNorm(size, alpha, beta, k), x.astype(np.float32), rtol=1e-4,
                  atol=1e-5)
    assert repr(ember.nn.LocalResponseNorm(size, alpha, beta, k)) == repr(torch.nn.LocalResponseNorm(size, alpha,
                                                                                                       beta, k))


def test_more_norm_errors_like_torch():
    import warnings

    same_error(lambda lib: lib.nn.BatchNorm3d(3)(lib.randn(2, 3, 4, 4)))
    same_error(lambda lib: lib.nn.InstanceNorm1d(3)(lib.randn(2, 3, 4, 4)))
    same_error(lambda lib: lib.nn.InstanceNorm3d(3)(lib.randn(3, 4, 4)))
    same_error(lambda lib: lib.nn.InstanceNorm2d(3)(lib.randn(2, 3)))
    same_error(lambda lib: lib.nn.InstanceNorm1d(3, affine=True)(lib.randn(2, 4, 5)))
    same_error(lambda lib: lib.nn.InstanceNorm3d(3, affine=True)(lib.randn(4, 2, 2, 2)))
    same_error(lambda lib: lib.nn.functional.local_response_norm(lib.randn(2, 3), 2))
    msgs = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            lib.nn.InstanceNorm1d(3)(lib.randn(2, 4, 5))
        msgs.append([str(w.message) for w in rec])
    assert msgs[0] == msgs[1] and msgs[0]
    e = ember.randn(0, 3, 4)
    assert ember.nn.functional.local_response_norm(e, 2) is e


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(4, 5)),
    lambda lib: lib.nn.BatchNorm2d(3)(lib.randn(4, 5, 2, 2)),
    lambda lib: lib.nn.BatchNorm1d(3).eval()(lib.randn(4, 5)),
    lambda lib: lib.nn.functional.batch_norm(lib.randn(4, 5), lib.zeros(5), lib.ones(3)),
    lambda lib: lib.nn.functional.batch_norm(lib.randn(4, 5), lib.zeros(5), lib.ones(5), lib.ones(3)),
    lambda lib: lib.nn.functional.batch_norm(lib.randn(4, 5), None, None, None, lib.ones(3), training=True),
    lambda lib: lib.nn.functional.batch_norm(lib.randn(4, 5), None, None, lib.ones(5)),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(2, 5, 3), lib.zeros(3), lib.ones(3)),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(2, 5, 3), None, None, lib.ones(3)),
])
def test_per_channel_size_errors_match_torch(fn):
    """The issue's BatchNorm1d(3) on a (4, 5) input: torch's "running_mean should contain 5 elements not 3", not
    NumPy's reshape error."""
    same_error(fn)
