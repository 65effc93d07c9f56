"""torch.cuda.random: the CUDA generators' seeds and states (none without CUDA; seeding is queued, as torch's)."""
from __future__ import annotations

from . import _lazy_call, _lazy_init, device_count, runtime

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed"]


def get_rng_state(device="cuda"):
    """The RNG state of one CUDA device as a uint8 tensor."""
    _lazy_init()
    return runtime.get_rng_state(device)


def get_rng_state_all() -> list:
    """The RNG states of every CUDA device (none without CUDA)."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state, device="cuda") -> None:
    """Set one CUDA device's RNG state (applied when CUDA initialises)."""
    state = new_state.clone()
    _lazy_call(lambda: runtime.set_rng_state(state, device))


def set_rng_state_all(new_states) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed: int) -> None:
    """Seed the current CUDA device's generator (a no-op without CUDA; ``seed`` must be an integer)."""
    seed = int(seed)
    _lazy_call(lambda: runtime.manual_seed(seed, all_devices=False))


def manual_seed_all(seed: int) -> None:
    """Seed every CUDA device's generator (a no-op without CUDA)."""
    seed = int(seed)
    _lazy_call(lambda: runtime.manual_seed(seed, all_devices=True))


def seed() -> None:
    _lazy_call(lambda: runtime.seed(all_devices=False))


def seed_all() -> None:
    _lazy_call(lambda: runtime.seed(all_devices=True))


def initial_seed() -> int:
    _lazy_init()
    return runtime.initial_seed()
