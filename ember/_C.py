"""torch._C: the few private binding functions that Python libraries call directly (not the C++ API itself)."""
from __future__ import annotations


def _log_api_usage_once(event: str) -> None:
    """Records a usage event for torch's telemetry; ember keeps none."""


def _get_tracing_state():
    """The active TorchScript tracing state: none, since ember has no tracer."""
    return None
