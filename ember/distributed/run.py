"""Launcher: ``python -m ember.distributed.run -n 2 train.py [args]`` starts the script on 2 MPI ranks.

It runs the ``mpiexec`` next to this Python (the mpich wheel installs one into the environment's bin folder),
else the first on PATH. Each rank runs the script through ``ember.distributed._worker``, which sets torchrun's
environment variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE) and ends the whole job when a rank
fails. ``--hosts``/``--hostfile`` spread the ranks over machines (same mpiexec, same environment path on each).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

__all__ = ["find_mpiexec", "command", "main", "under_mpi"]


def under_mpi() -> bool:
    """Whether this process was started by an MPI launcher (MPICH hydra or Open MPI)."""
    return "PMI_RANK" in os.environ or "OMPI_COMM_WORLD_RANK" in os.environ


def find_mpiexec() -> str:
    """The mpiexec of this Python's environment, else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    found = shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError("mpiexec not found: pip install 'ember[dist]' (the mpich wheel brings one)")
    return found


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ember.distributed.run",
                                description="Run a training script on several MPI ranks (ember.distributed).")
    p.add_argument("-n", "--nproc", "--nproc-per-node", "--nproc_per_node", dest="nproc", type=int, default=1,
                   help="number of processes (ranks) in all")
    p.add_argument("--hosts", help="comma-separated host list, e.g. node1:4,node2:4 (hydra's -hosts)")
    p.add_argument("--hostfile", help="a file of hosts, one per line (hydra's -f)")
    p.add_argument("--timeout", type=int, default=None, help="end the job after this many seconds")
    p.add_argument("-m", dest="module", action="store_true", help="run the target as a module (python -m)")
    p.add_argument("target", help="the script (or, with -m, the module) to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def command(nproc: int, target: str, args=(), module: bool = False, hosts: str | None = None,
            hostfile: str | None = None) -> list[str]:
    """The mpiexec command line that starts ``target`` on ``nproc`` ranks."""
    cmd = [find_mpiexec(), "-n", str(nproc)]
    if hosts:
        cmd += ["-hosts", hosts]
    if hostfile:
        cmd += ["-f", hostfile]
    cmd += [sys.executable, "-m", "ember.distributed._worker"] + (["-m"] if module else []) + [target, *args]
    return cmd


def main(argv=None) -> int:
    a = _parser().parse_args(argv)
    if a.nproc < 1:
        raise SystemExit("-n must be at least 1")
    env = dict(os.environ)
    if a.timeout:
        env["MPIEXEC_TIMEOUT"] = str(a.timeout)  # hydra ends the job after this many seconds
    cmd = command(a.nproc, a.target, a.args, a.module, a.hosts, a.hostfile)
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
