"""ember.random: the default generator's seeding and state, and ``fork_rng``."""
from __future__ import annotations

import contextlib
from typing import Iterator

from ._device import _check_device, device
from ._random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str | None = None) -> Iterator[None]:
    """Random draws inside the block do not change the default generator's state afterwards. ``devices``: the
    accelerator devices of ``device_type`` (default cuda) whose states torch also forks: none exist here, so
    naming one is torch's error; ``device_type="meta"`` forks nothing, as torch."""
    if device_type == "meta":
        yield
        return
    kind = device(device_type or "cuda").type  # torch's error for an unknown type
    if kind == "cpu":  # torch looks for torch.cpu.get_rng_state
        raise AttributeError("module 'torch.cpu' has no attribute 'get_rng_state'")
    if not enabled:
        yield
        return
    if devices is not None and list(devices):
        _check_device(kind)
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
