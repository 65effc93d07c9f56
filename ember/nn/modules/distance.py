"""torch.nn.modules.distance's names: PairwiseDistance and CosineSimilarity, defined in activation.py."""
from .activation import PairwiseDistance, CosineSimilarity

__all__ = ["PairwiseDistance", "CosineSimilarity"]
