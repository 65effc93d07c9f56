"""ember.save to a path is atomic: a writer SIGKILLed mid-save leaves the previous checkpoint intact.

A child process builds ~100 MB of tensors, waits for "go", then saves them over an existing checkpoint. The
parent watches for the child's temp file next to the target, lets it grow past a few MB, and kills the child
with SIGKILL (no cleanup can run). The old checkpoint must still load, byte for byte, in ember and torch.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")

_CHILD = r"""
import sys
import numpy as np
import ember
payload = {f"t{i}": ember.from_numpy(np.full((1 << 20,), i, dtype=np.float32)) for i in range(25)}  # 100 MB
print("ready", flush=True)
sys.stdin.readline()
ember.save(payload, sys.argv[1])
print("saved", flush=True)
"""
_KILL_AT = 4 << 20  # bytes of temp file written before the kill


def _old_checkpoint(path) -> dict:
    old = {"w": np.arange(12, dtype=np.float32).reshape(3, 4), "step": np.array(7, dtype=np.int64)}
    ember.save({k: ember.from_numpy(v) for k, v in old.items()} | {"epoch": 3}, path)
    return old


def _temp_files(folder, target: str) -> list:
    return [e for e in os.scandir(folder) if e.name.startswith(f".{target}.") and e.name.endswith(".tmp")]


def _kill_mid_write(folder, target: str) -> bool:
    """Run the child; SIGKILL it once its temp file holds _KILL_AT bytes. False if the save finished first."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(ember.__file__)),
                                                       os.environ.get("PYTHONPATH", "")]))
    child = subprocess.Popen([sys.executable, "-c", _CHILD, os.path.join(folder, target)], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        child.stdin.write("go\n")
        child.stdin.flush()
        while child.poll() is None:
            tmps = _temp_files(folder, target)
            try:
                big = tmps and tmps[0].stat().st_size >= _KILL_AT
            except FileNotFoundError:  # renamed between scandir and stat: the save completed
                big = False
            if big:
                os.kill(child.pid, signal.SIGKILL)
                child.wait()
                # a descheduled parent may have let the save finish (renamed) before the kill landed
                return os.path.exists(tmps[0].path)
        return False
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stdin.close()
        child.stdout.close()


def test_sigkill_mid_save_leaves_old_checkpoint_intact(tmp_path):
    target = "ckpt.pt"
    path = tmp_path / target
    old = _old_checkpoint(path)
    before = path.read_bytes()
    for _ in range(5):  # the kill races the writer; a missed race (save completed) just runs again
        if _kill_mid_write(tmp_path, target):
            break
        _old_checkpoint(path)
        before = path.read_bytes()
        for e in _temp_files(tmp_path, target):
            os.unlink(e.path)
    else:
        pytest.fail("the save always completed before the temp file reached the kill size")

    # the killed writer left only its hidden temp file (partial, never renamed); the target is the old file
    leftovers = _temp_files(tmp_path, target)
    assert len(leftovers) == 1 and leftovers[0].stat().st_size >= _KILL_AT
    assert sorted(os.listdir(tmp_path)) == sorted([target, leftovers[0].name])
    assert path.read_bytes() == before
    for loaded in (ember.load(path), torch.load(path, weights_only=True)):
        assert loaded["epoch"] == 3 and set(loaded) == {"w", "step", "epoch"}
        for k, v in old.items():
            np.testing.assert_array_equal(loaded[k].numpy(), v)
    # and the path stays writable: the next save replaces it normally, and removes the killed writer's temp file
    ember.save({"x": ember.ones(2)}, path)
    np.testing.assert_array_equal(torch.load(path, weights_only=True)["x"].numpy(), np.ones(2, np.float32))
    assert os.listdir(tmp_path) == [target]


def test_a_successful_save_removes_only_stale_temp_files(tmp_path):
    """NOTE [stale temp files]: temp files of dead writers of this host, of this process outside a save, and any
    older than a day go; those a live writer may still be writing (another live process here, another host's
    recent one) stay, and so do other targets' and unrelated files."""
    from ember import serialization as S

    target = "model.pt"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        names = {
            f".{target}.{S._HOST}.{dead_pid}.0123456789ab.tmp": False,  # killed writer of this host
            f".{target}.{S._HOST}.{os.getpid()}.0123456789ac.tmp": False,  # an interrupted save of this process
            f".{target}.{S._HOST}.{live.pid}.0123456789ad.tmp": True,  # a live writer
            f".{target}.otherhost.{dead_pid}.0123456789ae.tmp": True,  # another host's, recent: may be writing
            f".{target}.otherhost.{dead_pid}.0123456789af.tmp#old": False,  # another host's, a day old
            f".{target}.0123456789b0.tmp": True,  # the older name, recent
            f".{target}.0123456789b1.tmp#old": False,  # the older name, a day old
            f".other.pt.{S._HOST}.{dead_pid}.0123456789b2.tmp": True,  # another target's
            "notes.txt": True,
        }
        for name in names:
            path = tmp_path / name.split("#")[0]
            path.write_bytes(b"partial")
            if name.endswith("#old"):
                past = time.time() - 2 * S._STALE_AGE_S
                os.utime(path, (past, past))
        ember.save({"w": ember.ones(3)}, tmp_path / target)
        kept = set(os.listdir(tmp_path))
        assert kept == {n.split("#")[0] for n, keep in names.items() if keep} | {target}
    finally:
        live.kill()
        live.wait()


def test_failed_save_in_process_removes_its_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    old = _old_checkpoint(path)
    before = path.read_bytes()

    class Boom(Exception):
        pass

    payload = {"a": ember.from_numpy(np.ones(1 << 16, np.float32)), "b": ember.from_numpy(np.ones(4, np.float32))}
    real_zip_entry = ember.serialization._zip_entry
    calls = []

    def failing_zip_entry(zf, name, data):
        calls.append(name)
        if "/data/" in name and len([c for c in calls if "/data/" in c]) == 2:
            raise Boom()
        return real_zip_entry(zf, name, data)

    monkeypatch.setattr(ember.serialization, "_zip_entry", failing_zip_entry)
    with pytest.raises(Boom):
        ember.save(payload, path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["ckpt.pt"] and path.read_bytes() == before
    np.testing.assert_array_equal(ember.load(path)["w"].numpy(), old["w"])
