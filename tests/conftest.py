import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def _torch_distribution_validation():
    """torch._dynamo, started by a test calling torch.compile or torch.cond, switches torch's distribution argument
    validation off for the whole process; later tests compare ember's validation errors with torch's: put it back."""
    import torch

    validating = torch.distributions.Distribution._validate_args
    yield
    if torch.distributions.Distribution._validate_args != validating:
        torch.distributions.Distribution.set_default_validate_args(validating)
