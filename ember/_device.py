"""Devices as torch code spells them, on a machine with only a CPU."""
from __future__ import annotations

__all__ = ["device"]


class device:
    """``ember.device("cpu")``; "cuda"/"mps" parse but cannot hold tensors here."""

    __slots__ = ("type", "index")

    def __init__(self, type: "str | device", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int):
            type, index = "cuda", type
        name, _, idx = str(type).partition(":")
        if name not in ("cpu", "cuda", "mps", "meta", "xpu"):
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, "
                "maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of "
                f"device string: {type}")
        self.type = name
        self.index = int(idx) if idx else index

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
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


def _check_device(dev) -> device:
    """The device, or torch's error for an accelerator this machine does not have."""
    if dev is None:
        return _cpu
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    if d.type == "mps":
        raise RuntimeError("MPS backend is not available on this machine (ember runs on the CPU)")
    if d.type not in ("cpu", "meta"):
        raise RuntimeError(f"ember has no {d.type} backend; use device('cpu')")
    return _cpu
