"""Failing ranks end the whole job (non-zero, no hang: the job's timeout would fail the test), DDP refuses
replicas of different shapes, and the launcher runs scripts like plain mpiexec with torchrun's variables."""
import json
import os

import pytest


@pytest.mark.parametrize("launcher", ["mpiexec", "ember"])
def test_a_raising_rank_ends_the_job(mpi_job, launcher):
    proc, _ = mpi_job(2, "faults.py", "raise", launcher=launcher, check=False)
    assert proc.returncode != 0
    assert "rank 1 failed on purpose" in proc.stderr


def test_a_rank_exiting_non_zero_ends_the_job(mpi_job):
    proc, _ = mpi_job(2, "faults.py", "exit", launcher="ember", check=False)
    assert proc.returncode == 3


def test_mismatched_models_are_refused_at_construction(mpi_job):
    proc, _ = mpi_job(2, "faults.py", "shapes", check=False)
    assert proc.returncode != 0
    assert "RuntimeError: DDP expects same model across all ranks, but Rank 1's parameter 0 (weight) of size [5, 4]" \
        in proc.stderr, proc.stderr


@pytest.mark.parametrize("launcher", ["mpiexec", "ember"])
def test_launchers_start_every_rank(mpi_job, launcher):
    _, out = mpi_job(3, "faults.py", "ok", launcher=launcher)
    got = [json.load(open(os.path.join(out, f"rank{r}.json"))) for r in range(3)]
    assert [g["rank"] for g in got] == [0, 1, 2] and all(g["world"] == 3 for g in got)
    assert all(g["argv"] == [out, "ok"] for g in got)
    if launcher == "ember":  # torchrun's variables, from the MPI launcher's
        assert [g["env"] for g in got] == [[str(r), "3", str(r), "3"] for r in range(3)]


# ---------------------------------------------------------------------------------------------- agreement
def test_collectives_refuse_ranks_that_disagree(mpi_job):
    """NOTE [collective fingerprints]: a disagreement raises torch's TORCH_DISTRIBUTED_DEBUG=DETAIL error on every
    rank before data moves (torch's gloo without it returns wrong values on one rank, or aborts)."""
    _, out = mpi_job(2, "agreement.py", "mismatch")
    res = [json.load(open(os.path.join(out, f"rank{r}.json"))) for r in range(2)]
    expected = {
        "shape": "Tensor Tensor shapes: 3vs 4", "dtype": "Tensor Tensor dtypes: Floatvs Double",
        "collective": "Op type: ALLREDUCEvs BROADCAST", "root": "Root: 0vs 1", "reduce op": "Reduce op: SUMvs MAX",
        "all_gather": "Tensor Tensor shapes: 2x2vs 2x3", "gather": "Tensor Tensor shapes: 2vs 3",
        "reduce_scatter": "Tensor Tensor dtypes: Longvs Int", "barrier vs all_reduce": "Op type: BARRIERvs ALLREDUCE",
        "async": "Tensor Tensor shapes: 2x3vs 3x2",
    }
    for name, diff in expected.items():
        for r in range(2):
            msg = res[r][name]
            assert msg.startswith(f"RuntimeError: Detected mismatch between collectives on ranks. Rank {r} is "
                                  "running collective: CollectiveFingerPrint("), (name, r, msg)
            assert f"but Rank {1 - r} is running collective" in msg, (name, r, msg)
        assert diff in res[0][name], (name, res[0][name])
    assert "OpType=ALLREDUCE, TensorShape=[3], TensorDtypes=Float" in res[0]["shape"]
    for r in range(2):
        assert res[r]["after"] == [3.0, 3.0, 3.0]
        assert res[r]["objects"] == [[0, 1], [0, 1, 2]]
        assert res[r]["broadcast_object"] == ["from 1"]


def test_timeout_of_init_process_group_is_honoured(mpi_job):
    """init_process_group(timeout=2 s): the waiting rank raises gloo's timeout error instead of waiting for ever."""
    proc, _ = mpi_job(2, "agreement.py", "timeout", launcher="ember", check=False)
    assert proc.returncode != 0
    assert "ember.distributed.DistBackendError: Timed out waiting 2000ms for ALLREDUCE operation" in proc.stderr, \
        proc.stderr[-2000:]


def test_timeout_of_barrier_is_honoured(mpi_job):
    """barrier(timeout=2 s) in a group with the default (30 min) timeout: the waiting rank raises after 2 s."""
    proc, _ = mpi_job(2, "agreement.py", "barrier_timeout", launcher="ember", check=False)
    assert proc.returncode != 0
    assert "ember.distributed.DistBackendError: Timed out waiting 2000ms for BARRIER operation" in proc.stderr, \
        proc.stderr[-2000:]
    assert "device_ids: Invalid function argument: device_ids type should be List[int]" in proc.stderr
    assert "new_group: Distributed package doesn't have NCCL built in" in proc.stderr
    assert "broadcast_object_list: Torch not compiled with CUDA enabled" in proc.stderr


@pytest.mark.parametrize("mode", ["early_exit", "destroyed"])
def test_a_rank_leaving_ends_the_ranks_waiting_for_it(mpi_job, mode):
    """A rank that finishes early (exit 0) or leaves the group: the others' waits end with gloo's "Connection closed
    by peer" (torch's launcher then fails the job) instead of blocking until the job's timeout."""
    proc, _ = mpi_job(2, "agreement.py", mode, launcher="ember", check=False)
    assert proc.returncode != 0
    assert "DistBackendError: Connection closed by peer [rank 1]" in proc.stderr, proc.stderr[-2000:]
