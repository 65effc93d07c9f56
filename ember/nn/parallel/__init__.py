"""ember.nn.parallel: DataParallel (a transparent wrapper without accelerators), DistributedDataParallel, and the
multi-GPU helpers (replicate, scatter, parallel_apply, gather) with torch's CPU-build behaviour."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel", "DataParallel",
           "DistributedDataParallel"]
