"""torch.nn.modules.batchnorm's names (``from torch.nn.modules.batchnorm import _BatchNorm``): the batch norm
layers, defined in normalization.py and syncbatchnorm.py."""
from .normalization import (_NormBase, _BatchNorm, _LazyNormBase, BatchNorm1d, BatchNorm2d, BatchNorm3d,  # noqa: F401
                            LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d)
from .syncbatchnorm import SyncBatchNorm

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d", "LazyBatchNorm3d",
           "SyncBatchNorm"]
