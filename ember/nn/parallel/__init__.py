"""ember.nn.parallel: DataParallel (a transparent wrapper without accelerators) and DistributedDataParallel."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "data_parallel", "DistributedDataParallel"]
