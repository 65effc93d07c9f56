"""torch.nn.utils.stateless: functional_call (the same function as ember.func.functional_call)."""
from ...func._functional_call import functional_call

__all__ = ["functional_call"]
