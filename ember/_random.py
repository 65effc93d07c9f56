"""Random number generation: the default Generator, manual_seed, seed, get/set_rng_state."""
from __future__ import annotations

import json

import numpy as np

from ._device import device as _device_type
from .autograd.grad_mode import _mode

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
           "default_generator"]


# torch's errors for a generator on a device this machine does not have
_NO_GENERATOR = {
    "cuda": "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into two shared "
            "libraries: a CPU library and a CUDA library; this error has occurred because you are trying to use some "
            "CUDA functionality, but the CUDA library has not been loaded by the dynamic linker for some reason.  The "
            "CUDA library MUST be loaded, EVEN IF you don't directly use any symbols from the CUDA library! One common "
            "culprit is a lack of -Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic "
            "library dependencies if you don't depend on any of their symbols.  You can check if this has occurred by "
            "using ldd on your binary to see if there is a dependency on *_cuda.so library.",
    "xpu": "Cannot get XPU generator without ATen_xpu library.",
    "mps": "Cannot execute getNewGenerator() without MPS backend.",
    "meta": "META device type not an accelerator.",
}


def _generator_device(dev) -> None:
    """torch's error unless ``dev`` is the CPU."""
    kind = (dev if isinstance(dev, _device_type) else _device_type(dev)).type
    if kind != "cpu":
        raise RuntimeError(_NO_GENERATOR.get(kind, "Backend doesn`t support getNewGenerator()"))


class Generator:
    """A random stream (NumPy's PCG64 underneath); ``manual_seed`` makes it reproducible."""

    def __init__(self, device="cpu") -> None:
        _generator_device(device)
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


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)
