"""The one place that imports mpi4py (lazily: ``import ember`` never loads MPI)."""
from __future__ import annotations

_MPI = None
_HINT = ("ember.distributed runs on MPI through mpi4py; install both with: pip install 'ember[dist]' "
         "(mpi4py and the mpich wheel, which brings its own mpiexec)")


def mpi():
    """The ``mpi4py.MPI`` module (MPI is initialised by the first call)."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI  # noqa: PLC0415 - optional extra, imported on first use
        except ImportError as e:
            raise ModuleNotFoundError(f"{_HINT} ({e})") from e
        _MPI = MPI
    return _MPI


def available() -> bool:
    """Whether mpi4py can be imported (without importing it)."""
    import importlib.util  # noqa: PLC0415 - rare

    try:
        return importlib.util.find_spec("mpi4py") is not None
    except (ImportError, ValueError):
        return False
