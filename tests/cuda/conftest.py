"""The ``stand_in`` fixture of the cuda tests: ``cuda`` backed by the strict NumPy stand-in for one test (NOTE [cuda
stand-in] in ember/_backend.py), and the process as it was afterwards (default device, pending device asserts)."""
import pytest

import ember
from ember import _backend as B


@pytest.fixture
def stand_in():
    B.enable_stand_in(True, strict=True)
    yield
    ember.set_default_device(None)
    B.enable_stand_in(False)
    B._pending.clear()
