"""ember.utils.data against torch.utils.data: same sampler order gives the same batches."""
import collections
import os

import numpy as np
import pytest

from oracle import torch, ember, to_np


def _batches_equal(eb, tb):
    if isinstance(tb, torch.Tensor):
        assert isinstance(eb, ember.Tensor), type(eb)
        assert str(eb.dtype) == str(tb.dtype) and tuple(eb.shape) == tuple(tb.shape)
        np.testing.assert_array_equal(to_np(eb), to_np(tb))
    elif isinstance(tb, dict):
        assert type(eb) is type(tb) and list(eb) == list(tb)
        for k in tb:
            _batches_equal(eb[k], tb[k])
    elif isinstance(tb, (list, tuple)):
        assert type(eb) is type(tb) and len(eb) == len(tb), (type(eb), type(tb))
        for a, b in zip(eb, tb):
            _batches_equal(a, b)
    else:
        assert eb == tb


Point = collections.namedtuple("Point", "a b")


class _Samples:
    """A map-style dataset of mixed sample types (tuples, dicts, numpy, numbers, strings)."""

    def __init__(self, lib, n=11):
        self.lib, self.n = lib, n
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((n, 3)).astype(np.float32)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": self.lib.tensor(self.x[i]), "np": self.x[i] * 2, "i": i, "f": float(i) / 3,
                "s": f"s{i}", "pair": (i, self.x[i, 0].item()), "pt": Point(i, [i, i + 1]), "flag": i % 2 == 0}


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (4, False), (4, True), (11, False)])
def test_sequential_batches_match_torch(batch_size, drop_last):
    e = ember.utils.data.DataLoader(_Samples(ember), batch_size=batch_size, drop_last=drop_last)
    t = torch.utils.data.DataLoader(_Samples(torch), batch_size=batch_size, drop_last=drop_last)
    assert len(e) == len(t)
    eb, tb = list(e), list(t)
    assert len(eb) == len(tb)
    for a, b in zip(eb, tb):
        _batches_equal(a, b)


def test_given_batch_sampler_order_matches_torch():
    order = [[3, 1], [0, 10, 7], [5]]
    e = ember.utils.data.DataLoader(_Samples(ember), batch_sampler=order)
    t = torch.utils.data.DataLoader(_Samples(torch), batch_sampler=order)
    for a, b in zip(e, t):
        _batches_equal(a, b)


def test_batch_size_none_converts_like_torch():
    e = list(ember.utils.data.DataLoader(_Samples(ember), batch_size=None))
    t = list(torch.utils.data.DataLoader(_Samples(torch), batch_size=None))
    for a, b in zip(e, t):
        _batches_equal(a, b)


def test_shuffle_is_a_permutation_and_reproducible_with_generator():
    ds = ember.utils.data.TensorDataset(ember.arange(20))
    runs = []
    for _ in range(2):
        g = ember.Generator().manual_seed(7)
        runs.append([int(v) for (b,) in ember.utils.data.DataLoader(ds, batch_size=6, shuffle=True, generator=g)
                     for v in b])
    assert runs[0] == runs[1] and sorted(runs[0]) == list(range(20)) and runs[0] != list(range(20))


def test_argument_errors_match_torch():
    for kwargs in [dict(shuffle=True, sampler=[0, 1]), dict(batch_sampler=[[0]], batch_size=2),
                   dict(batch_size=None, drop_last=True), dict(num_workers=-1)]:
        msgs = []
        for lib in (ember, torch):
            with pytest.raises(ValueError) as ei:
                lib.utils.data.DataLoader(list(range(4)), **kwargs)
            msgs.append(str(ei.value))
        assert msgs[0] == msgs[1]


def test_default_collate_errors_match_torch():
    for batch in ([[1, 2], [3]], [object(), object()]):
        errs = []
        for lib in (ember, torch):
            with pytest.raises((RuntimeError, TypeError)) as ei:
                lib.utils.data.default_collate(batch)
            errs.append((type(ei.value), str(ei.value).split(";")[0]))
        assert errs[0][0] is errs[1][0] and errs[0][1] == errs[1][1]


def _init_fn(worker_id):
    info = ember.utils.data.get_worker_info()
    assert info.id == worker_id and info.num_workers == 2


@pytest.mark.parametrize("persistent", [False, True])
def test_workers_give_the_same_batches_in_order(persistent):
    ds = _Samples(ember, n=23)
    loader = ember.utils.data.DataLoader(ds, batch_size=4, num_workers=2, worker_init_fn=_init_fn,
                                         persistent_workers=persistent)
    plain = list(ember.utils.data.DataLoader(ds, batch_size=4))
    for _ in range(2):  # two epochs
        got = list(loader)
        assert len(got) == len(plain)
        for a, b in zip(got, plain):
            np.testing.assert_array_equal(a["x"].numpy(), b["x"].numpy())
            assert a["s"] == b["s"]


class _Failing:
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError("bad sample 5")
        return i


def test_worker_error_is_reported_not_hung():
    loader = ember.utils.data.DataLoader(_Failing(), batch_size=2, num_workers=2)
    with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process") as ei:
        list(loader)
    assert "bad sample 5" in str(ei.value)


class _Dies:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        os._exit(3)


def test_worker_that_dies_is_reported():
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(ember.utils.data.DataLoader(_Dies(), batch_size=2, num_workers=1))


class _Stream(ember.utils.data.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = ember.utils.data.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


def test_iterable_dataset_single_and_multi_worker():
    assert [b.tolist() for b in ember.utils.data.DataLoader(_Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    got = sorted(v for b in ember.utils.data.DataLoader(_Stream(10), batch_size=2, num_workers=2) for v in b.tolist())
    assert got == list(range(10))


@pytest.mark.parametrize("kwargs", [dict(shuffle=True), dict(shuffle=0), dict(sampler=[0, 1]),
                                    dict(batch_sampler=[[0]]), dict(shuffle=None, sampler=None)], ids=str)
def test_iterable_dataset_refuses_ordering_options_as_torch(kwargs):
    outcomes = []
    for lib in (ember, torch):
        class Stream(lib.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(3))
        try:
            lib.utils.data.DataLoader(Stream(), **kwargs)
            outcomes.append(None)
        except ValueError as e:
            outcomes.append(str(e))
    assert outcomes[0] == outcomes[1]


def test_datasets_and_random_split():
    from ember.utils.data import ConcatDataset, Subset, TensorDataset, random_split

    a = TensorDataset(ember.arange(5))
    b = TensorDataset(ember.arange(5, 8))
    c = ConcatDataset([a, b])
    assert len(c) == 8 and c[6][0].item() == 6 and c[-1][0].item() == 7
    s = Subset(c, [7, 0])
    assert [s[i][0].item() for i in range(2)] == [7, 0]
    parts = random_split(range(10), [0.5, 0.3, 0.2], generator=ember.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [5, 3, 2]
    assert sorted(i for p in parts for i in p) == list(range(10))
    with pytest.raises(ValueError):
        random_split(range(10), [3, 3])
    with pytest.raises(AssertionError):
        TensorDataset(ember.zeros(3), ember.zeros(4))


def test_samplers():
    from ember.utils.data import BatchSampler, SequentialSampler, WeightedRandomSampler, SubsetRandomSampler

    assert list(BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)) == \
        list(torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(range(7)), 3, drop_last=False))
    assert len(BatchSampler(range(7), 3, True)) == 2
    draws = list(WeightedRandomSampler([0.0, 1.0, 3.0], 4000, generator=ember.Generator().manual_seed(0)))
    counts = np.bincount(draws, minlength=3)
    assert counts[0] == 0 and 0.2 < counts[1] / 4000 < 0.3
    assert sorted(SubsetRandomSampler([4, 8, 9])) == [4, 8, 9]
