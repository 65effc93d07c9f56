"""The world harness (tools/world, docs/world.md): what it reads from a run's output, the stand-in data it writes,
snapshots that lack files, and the offline URL table. Running the scripts themselves is not part of the suite."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from tools.world import data, run
from tools.world.scripts import SCRIPTS

ROOT = Path(__file__).resolve().parents[2]


def test_first_failure_reports_the_last_traceback_and_the_deepest_ember_frame():
    log = textwrap.dedent(f"""\
        Traceback (most recent call last):
          File "/x/old.py", line 1, in f
        KeyError: 'stale'
        step 3 loss 1.0
        Traceback (most recent call last):
          File "main.py", line 40, in <module>
            train()
          File "{ROOT}/ember/nn/functional.py", line 699, in _class_targets
            raise ValueError(...)
          File "/usr/lib/python3.11/site-packages/numpy/core/foo.py", line 3, in g
        ValueError: Expected input batch_size (1) to match target batch_size (0).
        """)
    exc, where = run.first_failure(log)
    assert exc == "ValueError: Expected input batch_size (1) to match target batch_size (0)."
    assert where == "ember/nn/functional.py:699 _class_targets"
    assert run.first_failure("all fine\n") == (None, None)


def test_compare_words():
    assert run.compare([], [1.0]) == "-"
    text = run.compare([2.0, 1.0], [2.0, 1.1])
    assert text.startswith("last 1.1 vs 1 (10% apart)") and "torch falls" in text and "ember falls" in text


def _idx(path):
    raw = path.read_bytes()
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    assert raw[2] == 0x08  # unsigned bytes
    return np.frombuffer(raw[4 + 4 * ndim:], np.uint8).reshape(shape)


def test_mnist_stand_in_is_idx_and_learnable(tmp_path):
    data.mnist(tmp_path, n_train=200, n_test=100)
    raw = tmp_path / "MNIST" / "raw"
    x, y = _idx(raw / "train-images-idx3-ubyte"), _idx(raw / "train-labels-idx1-ubyte")
    xt, yt = _idx(raw / "t10k-images-idx3-ubyte"), _idx(raw / "t10k-labels-idx1-ubyte")
    assert x.shape == (200, 28, 28) and y.shape == (200,) and xt.shape == (100, 28, 28) and y.max() < 10
    with gzip.open(raw / "train-images-idx3-ubyte.gz") as f:
        assert f.read() == (raw / "train-images-idx3-ubyte").read_bytes()
    # the test split shares the training split's class templates: nearest class mean classifies it
    means = np.stack([x[y == c].reshape(-1, 784).mean(0) for c in range(10)])
    pred = ((xt.reshape(-1, 1, 784).astype(float) - means) ** 2).sum(-1).argmin(1)
    assert (pred == yt).mean() > 0.9


def test_text_stand_in_has_what_the_scripts_sample_from():
    text = data.text(20_000)
    assert len(text) == 20_001 and set("O God, O God!") <= set(text)
    assert text == data.text(20_000)  # seeded: both sides see the same bytes


def _git(cwd, *args):
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_export_skips_what_a_snapshot_lacks(tmp_path):
    work = tmp_path / "src"
    (work / "pkg" / "data").mkdir(parents=True)
    (work / "pkg" / "main.py").write_text("print('hi')\n")
    (work / "pkg" / "data" / "big.txt").write_text("large data\n")
    _git(tmp_path, "init", "-q", str(work))
    _git(work, "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    commit = _git(work, "rev-parse", "HEAD")
    big = _git(work, "rev-parse", "HEAD:pkg/data/big.txt")
    snapshot = tmp_path / "repos" / "o+r" / "repo"
    snapshot.parent.mkdir(parents=True)
    os.rename(work / ".git", snapshot)
    os.remove(snapshot / "objects" / big[:2] / big[2:])  # loose objects: drop the large file's blob
    dest = tmp_path / "out"
    run._export(tmp_path / "repos", ("o/r", commit), dest, ["pkg"])
    assert (dest / "pkg" / "main.py").read_text() == "print('hi')\n"
    assert not (dest / "pkg" / "data" / "big.txt").exists()


def test_offline_url_table(tmp_path):
    served = tmp_path / "cora.tgz"
    served.write_bytes(b"payload")
    code = textwrap.dedent("""
        import urllib.error, urllib.request
        from tools.world import child
        child._patch_urllib()
        print(urllib.request.urlopen("https://example.org/cora.tgz").read().decode())
        try:
            urllib.request.urlopen("https://example.org/other")
        except urllib.error.URLError as e:
            print("offline" if "no network here" in str(e) else e)
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT), WORLD_URLS=json.dumps({"https://example.org/cora.tgz": str(served)}))
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["payload", "offline"], out.stderr


def test_script_table_is_well_formed():
    names = [s.name for s in SCRIPTS]
    assert len(names) == len(set(names))
    for s in SCRIPTS:
        repo, commit = s.source
        assert "/" in repo and len(commit) == 40 and s.changed
