"""torch.storage: the memory behind tensors (see Tensor.storage / untyped_storage)."""
from __future__ import annotations

import warnings

__all__: list = []

_warned = [False]
_always_warn = [False]


def _warn_typed_storage_removal(stacklevel: int = 2) -> None:
    """torch's deprecation warning for TypedStorage, once per process (always with the always-warn switch)."""
    if _always_warn[0] or not _warned[0]:
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                      "only storage class. This should only matter to you if you are using storages directly.  To "
                      "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=stacklevel + 1)
        _warned[0] = True


def _reset_warn_typed_storage_removal() -> None:
    _warned[0] = False
