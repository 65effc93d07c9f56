"""ember.nn.parallel: DataParallel (a transparent wrapper without accelerators)."""
from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
