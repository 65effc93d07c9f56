"""torch._dynamo.exc: the exceptions torch.compile raises (ember.compile raises the same ones)."""
from __future__ import annotations

__all__ = ["TorchDynamoException", "Unsupported", "InvalidBackend", "RecompileError", "FailOnRecompileLimitHit",
           "BackendCompilerFailed", "UserError", "InternalTorchDynamoError"]


class TorchDynamoException(RuntimeError):
    """Base of the compiler's exceptions."""


class InternalTorchDynamoError(TorchDynamoException):
    pass


class Unsupported(TorchDynamoException):
    """Something the compiler cannot capture in one graph (raised at a graph break under fullgraph=True)."""

    def __init__(self, msg: str, gb_type: str = "", skip_frame: bool = False) -> None:
        super().__init__(msg)
        self.msg = msg
        self.gb_type = gb_type
        self.skip_frame = skip_frame


class UserError(Unsupported):
    pass


class InvalidBackend(TorchDynamoException):
    def __init__(self, name) -> None:
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for available backends.")


class BackendCompilerFailed(TorchDynamoException):
    pass


class RecompileError(TorchDynamoException):
    pass


class FailOnRecompileLimitHit(Exception):
    pass
