"""tools/kernel_count.py: kernels and host syncs per training step on the stand-in, beside torch's ATen count."""
from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import kernel_count  # noqa: E402
from ember import _backend as B  # noqa: E402


@pytest.fixture
def restore_stand_in():
    yield
    B.enable_stand_in(False)


def test_counts_of_w5_and_w2(restore_stand_in) -> None:
    rows = kernel_count.count(["W5", "W2"], tiny=True)
    w5 = rows["W5"]
    # torch: six GEMMs, the sum, the ones of backward's seed (aten::fill_); ember the same
    assert w5["torch_by_kernel"] == {"aten::mm": 6, "aten::sum": 1, "aten::fill_": 1}
    assert (w5["ember"], w5["ember_syncs"], w5["ember_compiled"], w5["ember_compiled_syncs"]) == (8, 0, 8, 0)
    w2 = rows["W2"]
    assert w2["ember_syncs"] == w2["ember_compiled_syncs"] == 0
    assert w2["ember_by_kernel"]["matmul"] == w2["torch_by_kernel"]["aten::mm"] == 8  # 3 forward, 5 backward
    assert w2["torch_by_kernel"]["aten::sub_"] == 6  # SGD: one in-place update per parameter
    table = kernel_count.table(rows)
    assert table.splitlines()[2].startswith("| W5 | 8 | 0 | 8 | 0 | 8 |")
