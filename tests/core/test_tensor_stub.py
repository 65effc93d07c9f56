"""ember/_tensor.pyi is generated from ember.Tensor (tools/tensor_stub.py, `make stub`); these fail when it is stale."""
from __future__ import annotations

import ast
import os
import sys

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import tensor_stub  # noqa: E402
from generated import stale_message  # noqa: E402


def test_tensor_stub_is_current() -> None:
    with open(tensor_stub.STUB) as f:
        current = f.read()
    assert current == tensor_stub.render(), stale_message("ember/_tensor.pyi", current, tensor_stub.render(), "make stub",
                                                   "python tools/tensor_stub.py")



def test_stub_declares_every_public_tensor_attribute() -> None:
    with open(tensor_stub.STUB) as f:
        tree = ast.parse(f.read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    declared = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    declared |= {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)}
    public = {n for n in dir(ember.Tensor) if not n.startswith("_")}
    assert public <= declared, sorted(public - declared)
    assert {"sum", "view", "backward", "shape", "grad", "__add__", "__getitem__"} <= declared
