"""torch._C's few functions that Python libraries call directly: the same results as torch."""
from oracle import ember, torch


def test_log_api_usage_once_returns_none():
    for lib in (ember, torch):
        assert lib._C._log_api_usage_once("world.test") is None


def test_no_tracing_state_outside_a_trace():
    assert ember._C._get_tracing_state() is torch._C._get_tracing_state() is None
