"""Random number generation: the default Generator, manual_seed, seed, get/set_rng_state."""
from __future__ import annotations

import json

import numpy as np

from .autograd.grad_mode import _mode

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "default_generator"]


class Generator:
    """A random stream (NumPy's PCG64 underneath); ``manual_seed`` makes it reproducible."""

    def __init__(self, device="cpu") -> None:
        self._seed = 67280421310721
        self._rng = np.random.default_rng(self._seed)

    @property
    def device(self):
        from ._device import _cpu

        return _cpu

    def manual_seed(self, seed: int) -> "Generator":
        seed = int(seed)
        if not -0x8000_0000_0000_0000 <= seed <= 0xFFFF_FFFF_FFFF_FFFF:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy) & 0xFFFF_FFFF_FFFF_FFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        from ._factories import tensor

        raw = json.dumps(self._rng.bit_generator.state).encode()
        return tensor(np.frombuffer(raw, np.uint8).copy())

    def set_state(self, state) -> "Generator":
        try:
            st = json.loads(bytes(np.asarray(state._data, np.uint8)).decode())
        except (ValueError, UnicodeDecodeError):
            raise RuntimeError("Expected a generator state made by get_state()") from None
        if not isinstance(st, dict) or st.get("bit_generator") != "PCG64":
            raise RuntimeError("Expected a generator state made by get_state()")
        self._rng.bit_generator.state = st
        return self


default_generator = Generator()


def _rng(generator: Generator | None) -> np.random.Generator:
    if _mode.interpose is not None:  # a vmap level in randomness="error" mode refuses every draw
        _refuse_under_vmap(_mode.interpose)
    gen = generator if generator is not None else default_generator
    if _mode.tracer is not None:  # ember.compile replays draws from the generator's stream at call time
        _mode.tracer.generator(gen)
    return gen._rng


def _refuse_under_vmap(level) -> None:
    while level is not None:
        if getattr(level, "randomness", None) == "error":
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                               "'same' or 'different' randomness flags on vmap or perform the randomness operation "
                               "out of vmap")
        level = level.below


def manual_seed(seed: int) -> Generator:
    """Seed the default generator."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)
