"""ember.random: the default generator's seeding and state, and ``fork_rng``."""
from __future__ import annotations

import contextlib
from typing import Iterator

from ._random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, **kwargs) -> Iterator[None]:
    """Random draws inside the block do not change the default generator's state afterwards."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
