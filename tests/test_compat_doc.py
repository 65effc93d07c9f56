"""docs/compat.md is generated from the code (tools/compat.py); this fails when it is stale."""
from __future__ import annotations

import os
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import compat  # noqa: E402
from generated import stale_message  # noqa: E402


def test_compat_doc_is_current() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = compat.render()
    with open(compat.DOC) as f:
        current = f.read()
    assert current == text, stale_message("docs/compat.md", current, text, "make compat", "python tools/compat.py")



def test_every_namespace_section_and_status_is_explained() -> None:
    with open(compat.DOC) as f:
        doc = f.read()
    for path, _ in compat.NAMESPACES:
        assert f"## `{path}`" in doc
    assert "TorchScript archives: raises a clear error" in doc and "not implemented yet" in doc


def test_status_derivation() -> None:
    assert compat._annotation("torch.jit", "save", True)[0] == "not supported"
    assert compat._annotation("torch.jit", "script", True)[0] == "partial"
    assert compat._annotation("torch", "abs", True) == ("supported", "")
    assert compat._annotation("torch", "quantize_per_tensor", False) == ("not supported", "quantized kernels")
    assert compat._annotation("torch", "no_such_name", False) == ("not supported", "not implemented yet")
