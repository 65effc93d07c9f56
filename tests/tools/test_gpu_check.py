"""tools/gpu_check.py (``make gpu-check``) on the NumPy stand-in device (``--dry-run``): its sections run and write
their summary, so the script is ready when a GPU machine runs it (NOTE [cuda stand-in] in ember/_backend.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_gpu_check_dry_run(tmp_path) -> None:
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("EMBER_FAKE_CUDA", None)
    run = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gpu_check.py"), "--dry-run", "--out",
                          str(tmp_path), "--sections", "env,smoke,ops", "--only", "torch.add", "--samples", "2"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads((tmp_path / "gpu_check.json").read_text())["sections"]
    assert all(s["ok"] for s in result.values()), result
    assert result["env"]["result"]["ember_array_type"] == "ember._backend.StandInArray"
    ops = result["ops"]["result"]
    assert ops["counts"]["pass"] >= 1 and ops["counts"]["fail"] == 0, ops["counts"]
    assert "mixing error" in result["smoke"]["result"]
    assert "Expected all tensors to be on the same device" in result["smoke"]["result"]["mixing error"]
    assert "## op_db on cuda vs torch CUDA" in (tmp_path / "gpu_check.md").read_text()
