"""DistributedDataParallel on 2 real MPI ranks equals single-process training on the global batch (ember and
torch), for plain and per-parameter buckets, no_sync accumulation, unused parameters and BatchNorm buffers."""
import os
import sys

import numpy as np
import pytest
import torch

import ember

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "workers"))
from _data import STEPS, batches  # noqa: E402

WORLD = 2


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    from mpi_jobs import run_job  # noqa: PLC0415 - tests/distributed/mpi_jobs.py

    out = str(tmp_path_factory.mktemp("ddp"))
    proc = run_job(WORLD, "ddp.py", out=out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [dict(np.load(os.path.join(out, f"rank{r}.npz"))) for r in range(WORLD)]


def _prefixed(arrays: dict, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}


def _train_single(lib, init: dict, data: list, lr: float, momentum: float, scale: float = 1.0, accumulate=False):
    """Single-process training of the worker's MLP from ``init`` on the global batches."""
    nn = lib.nn
    net = nn.Sequential()
    net.fc1, net.fc2 = nn.Linear(6, 16), nn.Linear(16, 4)
    net.load_state_dict({k: lib.tensor(v) for k, v in init.items() if not k.startswith("extra")}, strict=True)
    net.forward = lambda x: net.fc2(lib.relu(net.fc1(x)))
    opt = lib.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
    loss_fn = nn.CrossEntropyLoss()
    if accumulate:  # one step on every micro-batch at once
        x = np.concatenate([b[0] for b in data])
        y = np.concatenate([b[1] for b in data])
        data = [(x, y)]
    for x, y in data:
        opt.zero_grad()
        (loss_fn(net(lib.tensor(x)), lib.tensor(y)) * scale).backward()
        opt.step()
    return {k: v.detach().numpy() for k, v in net.state_dict().items()}


@pytest.mark.parametrize("name", ["plain", "tiny", "late"])
def test_ddp_equals_single_process_on_the_global_batch(ranks, name):
    init = _prefixed(ranks[0], f"{name}_init_")
    assert not np.array_equal(init["fc1.weight"], ranks[1][f"{name}_init_fc1.weight"])  # replicas started apart
    for lib, tol in ((ember, 2e-6), (torch, 2e-5)):
        want = _train_single(lib, init, batches(1, STEPS), lr=0.1, momentum=0.9)
        for r in ranks:
            got = _prefixed(r, f"{name}_final_")
            for k, v in want.items():
                np.testing.assert_allclose(got[k], v, rtol=tol, atol=tol, err_msg=f"{lib.__name__} {k}")


def test_buckets_and_unused_parameters(ranks):
    assert ranks[0]["plain_buckets"] == 1
    assert ranks[0]["tiny_buckets"] == 6  # one per parameter, the unused layer's included
    for r in ranks:  # no rank used the extra layer: its grad stays None, as torch's
        assert r["tiny_extra_grad_is_none"]
        np.testing.assert_array_equal(r["tiny_final_extra.weight"], ranks[0]["tiny_init_extra.weight"])


def test_no_sync_accumulation_equals_one_large_step(ranks):
    init = _prefixed(ranks[0], "accum_init_")
    micro = batches(2, 3)
    for lib, tol in ((ember, 2e-6), (torch, 2e-5)):
        want = _train_single(lib, init, micro, lr=0.5, momentum=0.0, accumulate=True)
        for r in ranks:
            for k, v in want.items():
                np.testing.assert_allclose(r[f"accum_final_{k}"], v, rtol=tol, atol=tol, err_msg=k)
    # under no_sync the gradients stayed local (different per rank); the synced backward averaged them
    assert not np.allclose(ranks[0]["accum_local_grad"], ranks[1]["accum_local_grad"])
    np.testing.assert_array_equal(ranks[0]["accum_grad"], ranks[1]["accum_grad"])


def test_buffers_follow_rank_0(ranks):
    # each rank's running stats last saw its own half batch; the next forward broadcast rank 0's to every rank
    assert not np.allclose(ranks[0]["bn_mean_after_train"], ranks[1]["bn_mean_after_train"])
    for r in ranks:
        np.testing.assert_array_equal(r["bn_mean_after_eval"], ranks[0]["bn_mean_after_train"])
        assert r["bn_batches_tracked"] == 3


def test_unused_parameters_differ_per_rank(ranks):
    """Each rank uses another head: a head's gradient is its one rank's gradient over the world size (torch)."""
    init = _prefixed(ranks[0], "heads_init_")
    x, y = batches(4, 1)[0]
    per = len(x) // WORLD
    want = {k: np.zeros_like(v) for k, v in init.items()}
    for r in range(WORLD):
        nets = {n: torch.nn.Linear(*s) for n, s in (("trunk", (6, 8)), ("a", (8, 2)), ("b", (8, 2)))}
        for k, v in init.items():
            mod, attr = k.split(".")
            getattr(nets[mod], attr).data = torch.from_numpy(v.copy())
        xb, yb = torch.from_numpy(x[r * per:(r + 1) * per]), torch.from_numpy(y[r * per:(r + 1) * per] % 2)
        head = nets["a"] if r % 2 == 0 else nets["b"]
        torch.nn.functional.cross_entropy(head(torch.relu(nets["trunk"](xb))), yb).backward()
        for k in want:
            mod, attr = k.split(".")
            g = getattr(nets[mod], attr).grad
            if g is not None:
                want[k] += g.numpy() / WORLD
    for rk in ranks:
        for k, v in want.items():
            np.testing.assert_allclose(rk[f"heads_grad_{k}"], v, rtol=1e-5, atol=1e-6, err_msg=k)


def test_wrapper_form_and_refusals(ranks):
    r = ranks[0]
    assert str(r["repr"]).startswith("DistributedDataParallel(\n  (module): TwoHeads(\n    (trunk): Linear(")
    assert set(r["state_dict_keys"].tolist()) == {f"module.{m}.{p}" for m in ("trunk", "a", "b")
                                                  for p in ("weight", "bias")}
    assert str(r["error_device_ids"]).startswith("ValueError: DistributedDataParallel device_ids and output_device "
                                                 "arguments only work with single-device/multiple-device GPU modules")
    assert str(r["error_no_params"]) == ("RuntimeError: DistributedDataParallel is not needed when a module doesn't "
                                         "have any parameter that requires a gradient.")
    assert str(r["error_unknown_keyword"]).startswith("TypeError: ") and "bucket_size" in str(r["error_unknown_keyword"])
    assert str(r["error_mixed_precision"]) == ("NotImplementedError: ember: DistributedDataParallel(mixed_precision=...) "
                                               "is not supported")


def test_buffer_flags_and_deprecations(ranks):
    """broadcast_buffers / forward_sync_buffers / check_reduction as torch 2.13 reads them (its warnings)."""
    for rank, r in enumerate(ranks):
        def values(key, when):
            return r[f"flags_{key}_{when}"].tolist()

        assert values("default", "init") == [0.0, 0.0] and values("default", "forward") == [10.0, 10.0]
        assert values("broadcast_false", "init") == [rank] * 2 and values("broadcast_false", "forward") == [10 + rank] * 2
        assert values("forward_sync_false", "init") == [0.0, 0.0]
        assert values("forward_sync_false", "forward") == [10 + rank] * 2
        assert values("check_reduction", "forward") == [10.0, 10.0]
        assert str(r["flags_default_warnings"][0]) == ""
        assert str(r["flags_broadcast_false_warnings"][0]).startswith("FutureWarning: `broadcast_buffers` is deprecated.")
        assert str(r["flags_check_reduction_warnings"][0]) == (
            "FutureWarning: The `check_reduction` argument in `DistributedDataParallel` module is deprecated. Please "
            "avoid using it.")


def test_unfinished_reduction_raises_at_the_next_forward(ranks):
    gist = "Expected to have finished reduction in the prior iteration before starting a new one."
    for rank, r in enumerate(ranks):
        assert str(r["error_two_forwards"]).startswith(gist)
        assert str(r["error_after_two_forwards"]) == ""  # the error reset the reducer
        unused = str(r["error_unused"])
        assert unused.startswith(gist) and "find_unused_parameters=True" in unused
        assert unused.endswith(f"Parameter indices which did not receive grad for rank {rank}: 4 5")
