"""Run a worker script of tests/distributed/workers on N real MPI ranks (loopback, one machine).

Jobs are serialised across pytest-xdist workers by a file lock (each starts N busy-polling ranks on a small
machine) and bounded by a timeout; each rank writes its results to ``out`` (a fresh folder) for the test to
compare against torch/NumPy.
"""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile

import ember
from ember.distributed.run import find_mpiexec

WORKERS = os.path.join(os.path.dirname(__file__), "workers")
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(ember.__file__)))  # the ember checkout under test
_LOCK = os.path.join(tempfile.gettempdir(), "ember-mpi-tests.lock")
TIMEOUT = 120


def run_job(nproc: int, script: str, *args, out: str, launcher: str = "mpiexec", timeout: int = TIMEOUT):
    """Start ``script`` on ``nproc`` ranks with plain mpiexec or ember's launcher; returns CompletedProcess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = _ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["MPIEXEC_TIMEOUT"] = str(timeout)  # hydra ends a stuck job itself; subprocess's timeout is the backstop
    env.pop("PYTEST_XDIST_WORKER", None)
    path = os.path.join(WORKERS, script)
    if launcher == "mpiexec":
        cmd = [find_mpiexec(), "-n", str(nproc), sys.executable, path, out, *args]
    else:
        cmd = [sys.executable, "-m", "ember.distributed.run", "-n", str(nproc), path, out, *args]
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout + 30)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
