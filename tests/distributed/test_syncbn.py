"""SyncBatchNorm on 2 real MPI ranks equals BatchNorm on the global batch in one torch process (outputs, input and
parameter gradients of the loss summed over ranks, running statistics); convert_sync_batchnorm inside DDP equals
single-process training; the differentiable collectives' gradients."""
import os

import numpy as np
import pytest
import torch

import ember

WORLD = 2


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    from mpi_jobs import run_job  # noqa: PLC0415 - tests/distributed/mpi_jobs.py

    out = str(tmp_path_factory.mktemp("syncbn"))
    proc = run_job(WORLD, "syncbn.py", out=out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [dict(np.load(os.path.join(out, f"rank{r}.npz"))) for r in range(WORLD)]


def _slices():
    per = 8 // WORLD
    return [slice(r * per, (r + 1) * per) for r in range(WORLD)]


def test_sync_batchnorm_equals_batchnorm_on_the_global_batch(ranks):
    r = np.random.default_rng(0)
    xs = [r.standard_normal((8, 3, 5)) * 2 + 1 for _ in range(2)]
    ups = [r.standard_normal((8, 3, 5)) for _ in range(2)]
    w0, b0 = r.standard_normal(3), r.standard_normal(3)
    bn = torch.nn.BatchNorm1d(3, momentum=0.3, dtype=torch.float64)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor(w0))
        bn.bias.copy_(torch.tensor(b0))
    for i, (x, up) in enumerate(zip(xs, ups)):
        xt = torch.tensor(x, requires_grad=True)
        bn.zero_grad()
        y = bn(xt)
        (y * torch.tensor(up)).sum().backward()
        for k, sl in enumerate(_slices()):
            np.testing.assert_allclose(ranks[k][f"bn_y{i}"], y.detach().numpy()[sl], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(ranks[k][f"bn_gx{i}"], xt.grad.numpy()[sl], rtol=1e-9, atol=1e-11)
        # each rank's parameter grads come from its own slice; together they are the global batch's
        np.testing.assert_allclose(sum(rk[f"bn_gw{i}"] for rk in ranks), bn.weight.grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(sum(rk[f"bn_gb{i}"] for rk in ranks), bn.bias.grad.numpy(), rtol=1e-10)
    for rk in ranks:
        np.testing.assert_allclose(rk["bn_running_mean"], bn.running_mean.numpy(), rtol=1e-12)
        np.testing.assert_allclose(rk["bn_running_var"], bn.running_var.numpy(), rtol=1e-12)
        assert int(rk["bn_tracked"]) == 2
    bn.eval()
    for k, sl in enumerate(_slices()):
        np.testing.assert_allclose(ranks[k]["bn_eval"], bn(torch.tensor(xs[0])).detach().numpy()[sl], rtol=1e-10)


def test_converted_model_under_ddp_equals_single_process_training(ranks):
    init = ranks[0]["conv_init"]
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                              torch.nn.Flatten(), torch.nn.Linear(4 * 16, 3))
    with torch.no_grad():
        at = 0
        for p in net.parameters():
            p.copy_(torch.tensor(init[at:at + p.numel()]).reshape(p.shape))
            at += p.numel()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    data = np.random.default_rng(1)
    for _ in range(3):
        x = data.standard_normal((8, 1, 4, 4)).astype(np.float32)
        y = data.integers(0, 3, 8)
        opt.zero_grad()
        # DDP averages the ranks' gradients of their mean losses: the global mean loss's gradient
        torch.nn.functional.cross_entropy(net(torch.tensor(x)), torch.tensor(y)).backward()
        opt.step()
    for rk in ranks:
        for k, v in net.state_dict().items():
            np.testing.assert_allclose(rk[f"conv_final_{k}"], v.numpy(), rtol=2e-5, atol=2e-6, err_msg=k)
    converted = torch.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert str(ranks[0]["conv_repr"]) == repr(converted)


def test_differentiable_all_gather_and_all_reduce(ranks):
    vs = [np.arange(3.0) + 10 * k for k in range(WORLD)]
    for k, rk in enumerate(ranks):
        np.testing.assert_array_equal(rk["gather_out"], np.stack(vs))
        # v_k reaches slot k of every rank's output list, weighted there by 1 + k + 10 * rank
        np.testing.assert_array_equal(rk["gather_grad"], np.full(3, sum(1.0 + k + 10 * q for q in range(WORLD))))
        np.testing.assert_array_equal(rk["reduce_out"], sum(np.arange(3.0) * (q + 1) for q in range(WORLD)))
        np.testing.assert_array_equal(rk["reduce_grad"], np.full(3, float(sum(q + 2 for q in range(WORLD)))))


def test_without_a_process_group_it_is_batchnorm():
    x = np.random.default_rng(2).standard_normal((6, 3, 4))
    outs = []
    for lib in (ember, torch):
        m = lib.nn.SyncBatchNorm(3)
        xt = lib.tensor(x, dtype=lib.float32, requires_grad=True)
        y = m(xt)
        y.pow(2).sum().backward()
        outs.append((y.detach().numpy(), xt.grad.numpy(), m.running_var.numpy(), repr(m)))
    (ye, ge, re, pe), (yt, gt, rt, pt) = outs
    np.testing.assert_allclose(ye, yt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ge, gt, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(re, rt, rtol=1e-6)
    assert pe == pt


@pytest.mark.parametrize("shape", [(3,), (3, 0)])
def test_input_errors_match_torch(shape):
    from oracle import same_error  # noqa: PLC0415

    same_error(lambda lib: lib.nn.SyncBatchNorm(4)(lib.zeros(shape)))
