"""What the tests of the generated files (ember/_tensor.pyi, docs/compat.md) say when one is stale."""
from __future__ import annotations


def stale_message(path: str, current: str, wanted: str, make: str, script: str) -> str:
    """The message of a stale generated file: the command that regenerates it and the first line that differs."""
    old, new = current.splitlines(), wanted.splitlines()
    i = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    return (f"{path} is stale: regenerate it with `{make}` (or `{script}` from the repository root with the "
            f"venv's python), then commit it. First difference, line {i + 1}: has "
            f"{old[i] if i < len(old) else None!r}, wants {new[i] if i < len(new) else None!r}")
