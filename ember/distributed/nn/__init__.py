"""torch.distributed.nn: collectives that autograd differentiates through (``functional``)."""
from . import functional

__all__ = ["functional"]
