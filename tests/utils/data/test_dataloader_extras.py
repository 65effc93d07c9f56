"""DataLoader options next to torch's: pin_memory (a no-op without an accelerator), prefetch_factor checks,
in_order=False and the worker timeout. Ordering is forced with gate files, never with sleeps."""
import gc
import os
import time
import warnings

import numpy as np
import pytest

from oracle import torch, ember, to_np


class _Gated:
    """Items; fetching ``blocked`` waits (in the worker) until the gate file exists (a 30 s cap stops hangs)."""

    def __init__(self, lib, n, blocked, gate):
        self.lib, self.n, self.blocked, self.gate = lib, n, blocked, gate

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i in self.blocked:
            for _ in range(3000):
                if os.path.exists(self.gate):
                    break
                time.sleep(0.01)
        return self.lib.tensor([float(i)])


def _open(gate):
    with open(gate, "w"):
        pass


def test_pin_memory_is_accepted_and_warns_like_torch():
    out = []
    for lib in (ember, torch):
        data = [lib.tensor([float(i), 2.0 * i]) for i in range(5)]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            batches = [to_np(b) for b in lib.utils.data.DataLoader(data, batch_size=2, pin_memory=True)]
        out.append((batches, [str(x.message) for x in w if "pin_memory" in str(x.message)]))
    assert len(out[0][0]) == len(out[1][0])
    for a, b in zip(out[0][0], out[1][0]):
        np.testing.assert_array_equal(a, b)
    assert out[0][1] == out[1][1] and len(out[0][1]) == 1


@pytest.mark.parametrize("kwargs", [dict(num_workers=0, prefetch_factor=2), dict(num_workers=1, prefetch_factor=-1)])
def test_prefetch_factor_errors_match_torch(kwargs):
    msgs = []
    for lib in (ember, torch):
        with pytest.raises(ValueError) as ei:
            lib.utils.data.DataLoader(list(range(4)), **kwargs)
        msgs.append(str(ei.value))
    assert msgs[0] == msgs[1]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # torch's half-built iterator's __del__
def test_prefetch_factor_zero_fails_when_iterated_like_torch():
    msgs = []
    for lib in (ember, torch):
        loader = lib.utils.data.DataLoader(list(range(4)), num_workers=1, prefetch_factor=0)
        assert loader.prefetch_factor == 0
        with pytest.raises(AssertionError) as ei:
            iter(loader)
        msgs.append(str(ei.value))
        del ei
        gc.collect()  # torch's half-built iterator complains in __del__: let that happen under this test's filter
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("prefetch_factor", [1, 3])
def test_prefetch_factor_batches_match_torch(prefetch_factor):
    res = []
    for lib in (ember, torch):
        loader = lib.utils.data.DataLoader([lib.tensor([float(i)]) for i in range(7)], batch_size=2, num_workers=2,
                                           prefetch_factor=prefetch_factor)
        assert loader.prefetch_factor == prefetch_factor
        res.append([to_np(b).tolist() for b in loader])
    assert res[0] == res[1]


def test_in_order_false_yields_finished_batches_first(tmp_path):
    # worker 0 gets items 0 and 2, worker 1 gets 1 and 3; item 0 is held until the first batch arrives
    for lib in (ember, torch):
        gate = str(tmp_path / f"{lib.__name__}.gate")
        loader = lib.utils.data.DataLoader(_Gated(lib, 4, {0}, gate), batch_size=1, num_workers=2, in_order=False)
        it = iter(loader)
        first = next(it)
        _open(gate)
        rest = [b.item() for b in it]
        assert first.item() != 0.0, lib.__name__
        assert sorted([first.item()] + rest) == [0.0, 1.0, 2.0, 3.0], lib.__name__


def test_in_order_false_without_delays_matches_torch_set():
    res = []
    for lib in (ember, torch):
        loader = lib.utils.data.DataLoader([lib.tensor([float(i)]) for i in range(9)], batch_size=2, num_workers=2,
                                           in_order=False)
        res.append(sorted(to_np(b).tolist() for b in loader))
    assert res[0] == res[1]


def test_worker_timeout_error_matches_torch(tmp_path):
    msgs = []
    for lib in (ember, torch):
        gate = str(tmp_path / f"{lib.__name__}.gate")
        loader = lib.utils.data.DataLoader(_Gated(lib, 2, {0, 1}, gate), batch_size=1, num_workers=1, timeout=1)
        it = iter(loader)
        try:
            with pytest.raises(RuntimeError) as ei:
                next(it)
        finally:
            _open(gate)  # let the worker finish so shutdown is quick
            del it
        msgs.append((ei.type, str(ei.value)))
    assert msgs[0] == msgs[1]
    assert msgs[0][1] == "DataLoader timed out after 1 seconds"
