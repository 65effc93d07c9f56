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


@pytest.fixture(autouse=True)
def _no_torch_function_mode_left():
    """A test must not leave a torch function mode behind: ``torch.set_default_device("cpu")`` (unlike ``None``)
    keeps a device mode on torch's stack, which turns off torch's fast paths (the encoder's nested-tensor path)
    for every later test in the process, so comparisons with torch failed by test order."""
    import torch

    yield
    if torch._C._len_torch_function_stack():
        torch.set_default_device(None)
        pytest.fail("the test left a torch function mode on (e.g. torch.set_default_device('cpu'); use None)")
