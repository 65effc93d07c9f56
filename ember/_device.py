"""Devices as torch code spells them: cpu, and cuda where CuPy (or the test stand-in) provides it."""
from __future__ import annotations

from builtins import type as builtins_type

_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
          "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")

__all__ = ["device"]


class device:
    """``ember.device("cpu")``; "cuda" holds tensors where available (NOTE [device seam] in ember/_backend.py)."""

    __slots__ = ("type", "index")

    def __init__(self, type: "str | device", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({builtins_type(type).__name__})")
        name, colon, idx = type.partition(":")
        if not name.replace("_", "a").isalpha() or not name.isascii():
            raise RuntimeError(f"Invalid device string: '{type}'")
        if name not in _TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of device string: {type}")
        if colon and not (idx.isdigit() and (idx == "0" or not idx.startswith("0"))):
            raise RuntimeError(f"Invalid device string: '{type}'")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = name
        self.index = int(idx) if colon else index

    def __eq__(self, other) -> bool:
        # As torch: a device never equals a string (``t.device == "cpu"`` is False).
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


_cpu = device("cpu")

# torch's error for converting to a CUDA tensor type (Tensor.type("torch.cuda.FloatTensor")) on its CPU build
NO_ATEN_CUDA = (
    "Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two shared libraries: a CPU "
    "library and a CUDA library; this error has occurred because you are trying to use some CUDA functionality, but "
    "the CUDA library has not been loaded by the dynamic linker for some reason.  The CUDA library MUST be loaded, "
    "EVEN IF you don't directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic library dependencies if you "
    "don't depend on any of their symbols.  You can check if this has occurred by using ldd on your binary to see if "
    "there is a dependency on *_cuda.so library.")


def _check_device(dev) -> device:
    """The device (cpu for None and meta), or torch's error for an accelerator this machine does not have."""
    if dev is None:
        return _cpu
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cuda":
        if _backend.cuda_available():  # NOTE [device seam] in ember/_backend.py
            if d.index is not None and d.index >= _backend.cuda_device_count():
                raise RuntimeError("CUDA error: invalid device ordinal")
            return d
        raise AssertionError("Torch not compiled with CUDA enabled")
    if d.type == "xpu":
        raise AssertionError("Torch not compiled with XPU enabled")
    if d.type == "mtia":
        raise AssertionError("Torch not compiled with MTIA enabled. Ensure you have `import "
                             "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
                             "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!")
    if d.type not in ("cpu", "meta"):  # meta tensors are plain CPU tensors here
        raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
    return _cpu


from . import _backend  # noqa: E402 - imports this module's ``device``
