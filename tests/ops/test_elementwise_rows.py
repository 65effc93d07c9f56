"""The rows of the elementwise op tables declare their public names (NOTE [one row per op] in ember/ops/_table.py):
each flag is checked against torch, and what a row declares is what ember has."""
from __future__ import annotations

import importlib

import pytest
import torch

import ember
from ember.ops import _table

_ROWS = [(module, table_name, name, row) for module in _table.ROW_MODULES
         for table_name, table in vars(importlib.import_module(module)).items()
         if isinstance(table, dict) and table and all(isinstance(r, _table.Names) for r in table.values())
         for name, row in table.items() if row.function]


def _where(module: str, table: str, name: str) -> str:
    return f"the row {name!r} of {module}.{table}"


def test_the_tables_are_found() -> None:
    tables = {(m, t) for m, t, _, _ in _ROWS}
    assert {("ember.ops.elementwise", "_UNARY"), ("ember.ops.elementwise", "_BINARY"),
            ("ember.ops.comparison", "_COMPARISONS"), ("ember.ops.piecewise", "_WRITTEN")} <= tables
    assert len(_ROWS) > 100


@pytest.mark.parametrize("module, table, name, row", _ROWS, ids=[f"{t}.{n}" for _, t, n, _ in _ROWS])
def test_row_flags_match_torch(module: str, table: str, name: str, row) -> None:
    where = _where(module, table, name)
    for n in (name, *row.aliases):
        assert hasattr(torch, n), f"{where}: torch has no torch.{n}"
        assert getattr(ember, n) is getattr(importlib.import_module(module), n)
        assert n in importlib.import_module(module).__all__
        has_method, has_inplace = hasattr(torch.Tensor, n), hasattr(torch.Tensor, n + "_")
        assert not row.method or has_method, f"{where}: torch has no Tensor.{n}: set method=False"
        assert row.method or not has_method or hasattr(ember.Tensor, n), \
            f"{where}: torch has Tensor.{n}: set method=True (or write it)"
        assert not row.inplace or has_inplace, f"{where}: torch has no Tensor.{n}_: set inplace=False"
        assert row.inplace or not has_inplace or hasattr(ember.Tensor, n + "_"), \
            f"{where}: torch has Tensor.{n}_: set inplace=True (or write it)"
        assert row.torch_inplace == hasattr(torch, n + "_"), \
            f"{where}: torch {'has' if hasattr(torch, n + '_') else 'has no'} torch.{n}_: set torch_inplace=" \
            f"{hasattr(torch, n + '_')}"
        if row.torch_inplace:
            assert n + "_" in ember._aten.INPLACE_FORMS and callable(getattr(ember, n + "_"))


def test_exports_are_the_rows() -> None:
    mod = importlib.import_module("ember.ops.elementwise")
    assert mod.EXPORTS.methods.count("exp") == 1 and "arcsin" in mod.EXPORTS.methods
    assert "exp" in mod.EXPORTS.inplace and "maximum" not in mod.EXPORTS.inplace
    assert "exp_" in mod.EXPORTS.torch_inplace and "erfinv_" not in mod.EXPORTS.torch_inplace
    assert ember.arcsin is ember.asin and ember.arctan2 is not ember.atan2  # an alias's errors name it


def test_a_written_row_without_its_function_is_an_error() -> None:
    ns = {"__name__": "m"}
    with pytest.raises(RuntimeError, match="the row 'f' says its function is written"):
        _table.export(ns, ({"f": _table.Names(function="written")},), {})
    ns = {"__name__": "m", "f": len}
    out = _table.export(ns, ({"f": _table.Names(function="written", aliases=("g",), torch_inplace=True)},), {})
    assert ns["g"] is len and out.public == ["f", "g"]
    assert (out.methods, out.inplace, out.torch_inplace) == (("f", "g"), ("f", "g"), ("f_", "g_"))
