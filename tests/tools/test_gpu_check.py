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


def test_sharded_op_check_equals_one_process(tmp_path) -> None:
    """``--jobs 2`` (NOTE [sharded op check]) gives the same per-op results, counts and host fallbacks as one
    process, in op_db's order."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("EMBER_FAKE_CUDA", None)
    results = []
    for jobs in ("1", "2"):
        out = tmp_path / jobs
        run = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gpu_check.py"), "--dry-run", "--out",
                              str(out), "--sections", "ops", "--only", "pool", "--samples", "2", "--jobs", jobs],
                             env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        results.append(json.loads((out / "gpu_check.json").read_text())["sections"]["ops"]["result"])
    one, two = results
    assert two["jobs"] == 2 and one["jobs"] == 1
    assert list(one["per_op"].items()) == list(two["per_op"].items())
    assert one["counts"] == two["counts"] and one["counts"]["samples"] > 20
    assert one["host_fallbacks"] == two["host_fallbacks"]


def test_gpu_check_bench_dry_run(tmp_path) -> None:
    """The bench section on the stand-in (test sizes): eager rows, and compiled rows for W2, W3, W6 whose steps
    replay compiled programs (NOTE [compiled on devices] in ember/_compile/__init__.py) with torch's first loss."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("EMBER_FAKE_CUDA", None)
    run = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gpu_check.py"), "--dry-run", "--out",
                          str(tmp_path), "--sections", "bench", "--bench-seconds", "0.01", "--bench-tiny"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    bench = json.loads((tmp_path / "gpu_check.json").read_text())["sections"]["bench"]["result"]
    assert sorted(bench) == ["W2", "W3", "W5", "W6"]
    for name, row in bench.items():
        assert row["loss_close"] and row["ember_ms"] > 0 and row["torch_ms"] > 0, row
        if name == "W5":
            assert not any(k.startswith("ember_compiled") for k in row)
            continue
        assert row["ember_compiled_loss_close"] and row["ember_compiled_first_loss"] == row["first_loss"]["ember"]
        assert row["ember_compiled_ms"] > 0 and row["ember_compiled_first_two_s"] > 0 and row["ember_compiled_ratio"]
        assert row["ember_compiled_entries"].startswith("compiled x") and "breaks" not in row["ember_compiled_entries"]
        assert row["ember_compiled_host_fallbacks"] == []
    # W6 takes the fused formulas (NOTE [fused formulas] in ember/_fuse.py), eager and compiled; none refused
    for mode in ("ember", "ember_compiled"):
        assert {"adam_step_110", "tanh_backward"} <= set(bench["W6"][mode + "_fused_runs"]), bench["W6"]
        assert bench["W6"][mode + "_fuse_fallbacks"] == {}
    md = (tmp_path / "gpu_check.md").read_text()
    assert "Fused formulas run (NOTE [fused formulas]" in md and "cupy.fuse refused (their plain ops ran): 0" in md
    assert "## Compiled workloads on cuda" in md and "| W6 |" in md.split("## Compiled workloads")[1]


def test_torch_cuda_gaps_are_counted_apart(monkeypatch) -> None:
    """Where torch CUDA raises, or differs from its own CPU kernel, and ember agrees with torch's CPU, the op is a
    ``torch_cuda_gap``, not a pass or a failure; a wrong ember answer still fails. torch's CUDA is played here by
    its CPU kernel with one op refused and one op's outputs scaled."""
    import torch

    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import gpu_check as g
    from ember import _backend

    monkeypatch.setattr(g, "DRY", [True])
    was = _backend.stand_in_enabled()
    _backend.enable_stand_in(True, strict=True)
    real = g._run_case

    def cuda_as_played(lib, op, sample, arrays, i, dev=None):
        out, grads = real(lib, op, sample, arrays, i, dev)
        if lib is torch and dev is None and op.name == "matmul int":
            return RuntimeError("\"addmm_cuda\" not implemented for 'Long'"), None
        if lib is torch and dev is None and op.name == "torch.matmul":
            return [o * 1.5 for o in out], grads
        if lib is not torch and op.name == "Tensor.matmul":
            return [o * 1.5 for o in out], grads
        return out, grads

    monkeypatch.setattr(g, "_run_case", cuda_as_played)
    try:
        r = g.check_ops(60, 1, "matmul")
    finally:
        _backend.enable_stand_in(was)
    status = {name: v["status"] for name, v in r["per_op"].items()}
    assert status["matmul int"] == status["torch.matmul"] == "torch_cuda_gap"
    assert status["Tensor.matmul"] == "fail"
    assert status["matmul @"] == "pass"
    assert "its CPU kernel runs" in r["torch_cuda_gaps"]["matmul int"]
    assert "ember agrees with the CPU" in r["torch_cuda_gaps"]["torch.matmul"]
    assert r["counts"]["torch_cuda_gap"] == 2 and r["counts"]["fail"] == 1
