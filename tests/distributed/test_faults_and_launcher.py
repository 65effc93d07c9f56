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
