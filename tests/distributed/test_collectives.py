"""ember.distributed's collectives on real MPI jobs of 2 and 3 ranks, compared against torch on the same inputs."""
import functools
import json
import os

import numpy as np
import pytest
import torch

import ember.distributed as dist

BITWISE = {"BAND": torch.bitwise_and, "BOR": torch.bitwise_or, "BXOR": torch.bitwise_xor}


def _load(out: str, size: int):
    arrays = [dict(np.load(os.path.join(out, f"rank{r}.npz"))) for r in range(size)]
    errors = [json.load(open(os.path.join(out, f"rank{r}.json"))) for r in range(size)]
    return arrays, errors


def _expected(op: str, xs: list) -> torch.Tensor:
    """torch's reduction of the ranks' inputs, in their dtype (AVG on integers truncates, as C division)."""
    s = torch.stack([torch.from_numpy(x) for x in xs])
    dt = s.dtype
    if op in BITWISE:
        return functools.reduce(BITWISE[op], s.unbind(0))
    if dt == torch.bool:
        return {"SUM": s.any(0), "MAX": s.any(0), "MIN": s.all(0), "PRODUCT": s.all(0)}[op]
    if op == "SUM":
        return s.sum(0).to(dt)
    if op == "AVG":
        total = s.sum(0, dtype=torch.float64 if dt.is_floating_point else torch.int64)
        return (total / len(xs)).to(dt) if dt.is_floating_point else torch.div(total, len(xs), rounding_mode="trunc").to(dt)
    if op == "PRODUCT":
        return s.prod(0).to(dt)
    return s.amax(0) if op == "MAX" else s.amin(0)


def _close(got, want, dtype: str) -> None:
    want = want.numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = {"float16": 2e-3, "float32": 1e-6, "float64": 1e-12}.get(dtype, 0)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


@pytest.fixture(scope="module", params=[2, 3], ids=["2ranks", "3ranks"])
def job(request, tmp_path_factory):
    from mpi_jobs import run_job  # noqa: PLC0415 - tests/distributed/mpi_jobs.py

    size = request.param
    out = str(tmp_path_factory.mktemp(f"collectives{size}"))
    proc = run_job(size, "collectives.py", out=out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return (size, *_load(out, size))


DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["SUM", "AVG", "MAX", "MIN", "PRODUCT", "BAND", "BOR", "BXOR"])
def test_all_reduce(job, op, dtype):
    size, arrays, errors = job
    key = f"all_reduce_{op}_{dtype}"
    if dtype.startswith("float") and op in BITWISE:
        assert all(e[key][0] == "RuntimeError" and "Cannot use ReduceOp." + op in e[key][1] for e in errors)
        return
    if dtype == "bool" and op == "AVG":
        assert all(e[key] == ["ValueError", "Cannot use ReduceOp.AVG with boolean inputs"] for e in errors)
        return
    want = _expected(op, [a[f"in_{dtype}"] for a in arrays])
    for a in arrays:
        _close(a[key], want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_to_last_rank(job, dtype):
    size, arrays, _ = job
    want = _expected("MAX", [a[f"in_{dtype}"] for a in arrays])
    _close(arrays[-1][f"reduce_MAX_{dtype}"], want, dtype)
    for a in arrays[:-1]:  # the other ranks keep their input
        np.testing.assert_array_equal(a[f"reduce_MAX_{dtype}"], a[f"in_{dtype}"])


def test_async_strided_and_scalar(job):
    size, arrays, _ = job
    want = _expected("SUM", [a["in_float32"] for a in arrays])
    maxed = torch.stack([torch.from_numpy(a["in_strided"]) for a in arrays])
    for a in arrays:
        assert a["async_wait"].tolist() == [True, True]
        _close(a["async_all_reduce"], want, "float32")
        base = torch.from_numpy(a["in_strided"]).clone()
        base.t()[::2] = maxed.amax(0).t()[::2]  # only the view's elements change, in the base
        np.testing.assert_array_equal(a["strided_base"], base.numpy())
        assert a["scalar_product"] == np.prod(np.arange(1, size + 1, dtype=np.float32)) and a["scalar_product"].ndim == 0


def test_broadcast_gather_scatter(job):
    size, arrays, _ = job
    for r, a in enumerate(arrays):
        np.testing.assert_array_equal(a["broadcast_last"], arrays[-1]["in_int64"])
        np.testing.assert_array_equal(a["broadcast_1_async"], arrays[1]["in_float32"])
        np.testing.assert_array_equal(a["all_gather"], np.stack([b["in_float32"] for b in arrays]))
        np.testing.assert_array_equal(a["all_gather_into_tensor"], np.concatenate([b["in_int32"] for b in arrays]))
        np.testing.assert_array_equal(a["scatter_0"], [10 * r, 10 * r + 1])
        # reduce_scatter: rank r gets the sum over ranks q of (q * 10 + r)
        np.testing.assert_array_equal(a["reduce_scatter"], [sum(q * 10 + r for q in range(size))] * 2)
    np.testing.assert_array_equal(arrays[1]["gather_1"], np.stack([b["in_float32"] for b in arrays]))
    assert all("gather_1" not in a for i, a in enumerate(arrays) if i != 1)


def test_point_to_point(job):
    size, arrays, _ = job
    for r, a in enumerate(arrays):
        np.testing.assert_array_equal(a["ring"], [float((r - 1) % size)] * 3)
        assert a["ring_sender"] == (r - 1) % size
    assert arrays[0]["irecv_any_sender"] == size - 1
    np.testing.assert_array_equal(arrays[0]["irecv_any"], [7.0, 8.0, 9.0])


def test_groups_barrier_objects(job):
    size, arrays, _ = job
    members = {0, size - 1}
    for r, a in enumerate(arrays):
        if r in members:
            assert a["group_sum"].tolist() == [float(1 + size)]
            assert a["group_rank"].tolist() == [sorted(members).index(r), 2]
            assert a["group_warned"] == 0
            assert a["group_broadcast"].tolist() == [float(size - 1)]
        else:  # outside the group: untouched, rank -1, and torch's warning
            assert a["group_sum"].tolist() == [float(r + 1)]
            assert a["group_rank"].tolist() == [-1, -1]
            assert a["group_warned"] == 1
        assert a["objects"].tolist() == list(range(size))
        assert a["object_list"].all()
        assert not a["initialized_after_destroy"]


@pytest.mark.parametrize("n,drop_last", [(23, False), (23, True), (30, False)])
def test_distributed_sampler_partitions_the_data_set(job, n, drop_last):
    size, arrays, _ = job
    shares = [a[f"sampler_{n}_{drop_last}"].tolist() for a in arrays]
    flat = [i for s in shares for i in s]
    assert len({len(s) for s in shares}) == 1
    if drop_last:  # disjoint shares, only the remainder left out
        assert len(set(flat)) == len(flat) == n - n % size
    else:  # every index; repeats only as the padding to equal shares
        assert set(flat) == set(range(n)) and len(flat) - n == (-n) % size


def test_argument_errors(job):
    size, _, errors = job
    expect = {
        "gather_list_on_non_dst": ("ValueError", "Argument ``gather_list`` must NOT be specified on non-destination"),
        "gather_list_missing": ("ValueError", "Argument ``gather_list`` must be specified on destination rank."),
        "all_gather_len": ("RuntimeError", f"invalid output tensor list at index 0 (expected length {size}, got 1)"),
        "all_gather_shape": ("RuntimeError", "invalid tensor size at index 0 (expected (2), got (3))"),
        "scatter_missing": ("ValueError", "Argument ``scatter_list`` must be specified on source rank."),
        "not_a_tensor": ("TypeError", "Expected parameter `tensor` of type torch.Tensor"),
        "send_to_self": ("ValueError", "destination rank should not be the same as the rank of the current process"),
        "init_twice": ("ValueError", "trying to initialize the default process group twice!"),
        "bad_src": ("ValueError", f"Global rank {size + 3} is not part of group"),
    }
    for e in errors:
        for key, (kind, gist) in expect.items():
            assert e[key][0] == kind and gist in e[key][1], (key, e[key])


def test_not_initialized_errors():
    """Before init_process_group: torch's ValueError (MPI is not loaded for this)."""
    assert not dist.is_initialized()
    for fn in (dist.get_rank, dist.get_world_size, dist.barrier, dist.destroy_process_group):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            fn()
    with pytest.raises(RuntimeError, match="Distributed package doesn't have NCCL built in"):
        dist.init_process_group("nccl")
    assert dist.GroupMember.WORLD is None and dist.group.WORLD is None


def test_missing_mpi4py_says_how_to_install(monkeypatch):
    from ember.distributed import _mpi

    monkeypatch.setattr(_mpi, "_MPI", None)
    monkeypatch.setitem(__import__("sys").modules, "mpi4py", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'ember\[dist\]'"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()
