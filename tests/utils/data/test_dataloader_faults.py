"""DataLoader under faults and at scale: seeded shuffles independent of num_workers, workers that never keep the
interpreter alive (scripts run in subprocesses with a timeout), and samplers that draw lazily."""
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from oracle import torch, ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _order(lib, num_workers, seed=7, epochs=2):
    """The sample order of ``epochs`` shuffled epochs with a seeded generator."""
    ds = lib.utils.data.TensorDataset(lib.arange(20))
    loader = lib.utils.data.DataLoader(ds, batch_size=3, shuffle=True, num_workers=num_workers,
                                       generator=lib.Generator().manual_seed(seed))
    return [v for _ in range(epochs) for (b,) in loader for v in b.tolist()]


def test_seeded_shuffle_is_the_same_for_any_num_workers():
    """torch's order does not depend on num_workers (oracle: the property, since the streams differ)."""
    torch_orders = [_order(torch, w) for w in (0, 2)]
    assert torch_orders[0] == torch_orders[1]
    orders = [_order(ember, w) for w in (0, 1, 2)]
    assert orders[0] == orders[1] == orders[2]
    assert sorted(orders[0][:20]) == list(range(20)) and orders[0][:20] != orders[0][20:]  # a new order per epoch
    assert _order(ember, 0, seed=8) != orders[0]


def test_default_generator_shuffle_is_the_same_for_any_num_workers():
    orders = []
    for w in (0, 2):
        ember.manual_seed(3)
        ds = ember.utils.data.TensorDataset(ember.arange(16))
        orders.append([v for (b,) in ember.utils.data.DataLoader(ds, batch_size=4, shuffle=True, num_workers=w)
                       for v in b.tolist()])
    assert orders[0] == orders[1]


def _run_script(body: str, timeout: float = 60.0):
    """Run ``body`` with ember importable; returns (returncode, stderr, seconds)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-c", textwrap.dedent(body)], capture_output=True, text=True, env=env,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the script hung (killed after {timeout} s); stderr: {e.stderr}")
    return p.returncode, p.stderr, time.monotonic() - start


_PRELUDE = """
    import ember as torch
    from ember.utils.data import DataLoader, RandomSampler, TensorDataset

    ds = TensorDataset(torch.arange(1000.0).reshape(-1, 1))
"""


@pytest.mark.parametrize("loader", [
    "DataLoader(ds, batch_size=4, shuffle=True, num_workers=2)",
    "DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True)",
    "DataLoader(ds, batch_size=4, num_workers=2, sampler=RandomSampler(ds, replacement=True, num_samples=10**10))",
])
def test_exception_with_a_live_iterator_exits_promptly(loader):
    """The issue's hang: an exception leaves the script while a multi-worker iterator is alive."""
    rc, err, _ = _run_script(_PRELUDE + f"""
    it = iter({loader})
    print(next(it)[0].shape)
    raise RuntimeError("boom in the training loop")
    """)
    assert rc == 1 and "boom in the training loop" in err


def test_exit_without_exception_with_live_iterators():
    rc, err, _ = _run_script(_PRELUDE + """
    its = [iter(DataLoader(ds, batch_size=4, shuffle=True, num_workers=2)) for _ in range(3)]
    for it in its:
        next(it)
    """)
    assert rc == 0, err


_CHILD = """
import ember as torch, time
from ember.utils.data import DataLoader, TensorDataset
it = iter(DataLoader(TensorDataset(torch.arange(100.0)), batch_size=2, num_workers=2))
next(it)
print(" ".join(str(w.pid) for w in it._workers), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


_CHILD_KILLED_WHILE_WORKERS_START = """
import ember as torch, time
from ember.utils.data import DataLoader, TensorDataset
it = iter(DataLoader(TensorDataset(torch.arange(100.0)), batch_size=2, num_workers=2,
                     worker_init_fn=lambda _: time.sleep(1.5)))
print(" ".join(str(w.pid) for w in it._workers), flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("child_code", [_CHILD, _CHILD_KILLED_WHILE_WORKERS_START], ids=["running", "starting"])
def test_workers_exit_when_the_main_process_is_killed(child_code):
    """Workers end once the main process is killed, also when it dies before they reach their loop (a worker that
    read its parent's pid itself then read the reaper's, and lived on)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen([sys.executable, "-c", child_code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        pids = [int(p) for p in child.stdout.readline().split()]
    finally:
        child.kill()
        child.wait()
    deadline = time.monotonic() + 20
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    alive = [p for p in pids if _alive(p)]
    for p in alive:
        os.kill(p, 9)
    assert len(pids) == 2 and not alive, "workers outlived their killed parent"


def test_a_failing_sampler_stops_the_started_workers():
    class Bad(ember.utils.data.Sampler):
        def __iter__(self):
            raise ValueError("sampler broke")

        def __len__(self):
            return 4

    loader = ember.utils.data.DataLoader(list(range(8)), sampler=Bad(), num_workers=2)
    before = set(p.pid for p in __import__("multiprocessing").active_children())
    with pytest.raises(ValueError, match="sampler broke"):
        iter(loader)
    after = [p for p in __import__("multiprocessing").active_children() if p.pid not in before]
    assert not after


# ---------------------------------------------------------------------------------------------- lazy samplers
def test_random_sampler_with_replacement_draws_lazily():
    """A language-model script asks for 10**10 samples; torch draws them 32 at a time."""
    ds = list(range(50))
    for lib in (ember, torch):
        s = lib.utils.data.RandomSampler(ds, replacement=True, num_samples=10**10,
                                         generator=lib.Generator().manual_seed(0))
        assert len(s) == 10**10
        it = iter(s)
        first = [next(it) for _ in range(1000)]
        assert all(0 <= i < 50 for i in first) and len(set(first)) > 40
    sampler = ember.utils.data.RandomSampler(ds, replacement=True, num_samples=70,
                                             generator=ember.Generator().manual_seed(1))
    assert len(list(sampler)) == 70  # a partial last chunk
    loader = ember.utils.data.DataLoader(ds, batch_size=8, sampler=ember.utils.data.RandomSampler(
        ds, replacement=True, num_samples=10**12))
    assert len(loader) == 10**12 // 8 and next(iter(loader)).shape == (8,)


def test_weighted_sampler_with_replacement_draws_lazily_with_the_right_frequencies():
    w = [0.0, 1.0, 3.0, 0.0, 4.0]
    s = ember.utils.data.WeightedRandomSampler(w, 10**12, generator=ember.Generator().manual_seed(0))
    it = iter(s)
    draws = np.array([next(it) for _ in range(80000)])
    counts = np.bincount(draws, minlength=5) / len(draws)
    assert counts[0] == 0 and counts[3] == 0
    np.testing.assert_allclose(counts[[1, 2, 4]], [0.125, 0.375, 0.5], atol=0.01)
    a = list(ember.utils.data.WeightedRandomSampler(w, 100, generator=ember.Generator().manual_seed(5)))
    b = list(ember.utils.data.WeightedRandomSampler(w, 100, generator=ember.Generator().manual_seed(5)))
    assert a == b and len(a) == 100
    no_repl = list(ember.utils.data.WeightedRandomSampler(w, 3, replacement=False,
                                                          generator=ember.Generator().manual_seed(0)))
    assert sorted(no_repl) == [1, 2, 4]
