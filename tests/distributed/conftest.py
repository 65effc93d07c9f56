"""``mpi_job``: a fixture running a worker script of tests/distributed/workers on N MPI ranks (see mpi_jobs.py)."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from mpi_jobs import run_job  # noqa: E402


@pytest.fixture
def mpi_job(tmp_path):
    """``mpi_job(nproc, script, *args)`` → (CompletedProcess, out folder); fails the test when the job fails."""

    def run(nproc: int, script: str, *args, launcher: str = "mpiexec", check: bool = True):
        out = str(tmp_path)
        proc = run_job(nproc, script, *args, out=out, launcher=launcher)
        if check:
            assert proc.returncode == 0, f"MPI job failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        return proc, out

    return run
