"""One rank of ``ember.distributed.run``: torchrun's environment variables, the script, and a job-wide abort
when this rank fails (an exception or a non-zero exit), so no other rank waits forever in a collective."""
from __future__ import annotations

import os
import runpy
import sys
import traceback

# (torchrun's name, the MPI launchers' names: MPICH hydra, Open MPI)
_ENV = (("RANK", ("PMI_RANK", "OMPI_COMM_WORLD_RANK")),
        ("WORLD_SIZE", ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")),
        ("LOCAL_RANK", ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK")),
        ("LOCAL_WORLD_SIZE", ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")))


def _set_env() -> None:
    for name, sources in _ENV:
        for src in sources:
            if src in os.environ:
                os.environ.setdefault(name, os.environ[src])
                break


def _abort(code: int) -> None:
    from .process_group import abort_job  # noqa: PLC0415 - MPI only when a rank fails

    abort_job(code)


def main(argv: list[str]) -> int:
    _set_env()
    module = bool(argv) and argv[0] == "-m"
    if module:
        argv = argv[1:]
    if not argv:
        raise SystemExit("usage: python -m ember.distributed._worker [-m] target [args]")
    sys.argv = list(argv)
    try:
        if module:
            runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code:
            if not isinstance(e.code, int):
                print(e.code, file=sys.stderr)
            _abort(code)
        return 0
    except BaseException:  # noqa: BLE001 - any failure ends the whole job
        traceback.print_exc()
        _abort(1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
