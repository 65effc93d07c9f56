"""DistributedSampler against torch's: same shares for the same permutation, a partition of the data set."""
import numpy as np
import pytest
import torch
import torch.utils.data.distributed as torch_distributed
from hypothesis import given, settings, strategies as st

import ember
from ember.utils.data import DistributedSampler


def _torch_shares(monkeypatch, n, replicas, shuffle, seed, epoch, drop_last):
    """torch's DistributedSampler, its seeded randperm replaced by ember's for the same seed (the streams differ)."""
    def ember_randperm(k, generator=None):
        g = ember.Generator()
        g.manual_seed(generator.initial_seed())
        return torch.from_numpy(ember.randperm(k, generator=g).numpy())

    monkeypatch.setattr(torch_distributed.torch, "randperm", ember_randperm)
    out = []
    for r in range(replicas):
        s = torch_distributed.DistributedSampler(range(n), replicas, r, shuffle=shuffle, seed=seed, drop_last=drop_last)
        s.set_epoch(epoch)
        out.append((list(s), len(s)))
    return out


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), replicas=st.integers(1, 5), shuffle=st.booleans(), seed=st.integers(0, 2**31),
       epoch=st.integers(0, 3), drop_last=st.booleans())
def test_same_shares_as_torch(n, replicas, shuffle, seed, epoch, drop_last):
    with pytest.MonkeyPatch.context() as mp:
        want = _torch_shares(mp, n, replicas, shuffle, seed, epoch, drop_last)
    for r in range(replicas):
        s = DistributedSampler(range(n), replicas, r, shuffle=shuffle, seed=seed, drop_last=drop_last)
        s.set_epoch(epoch)
        assert (list(s), len(s)) == want[r]


@pytest.mark.parametrize("n,replicas", [(10, 2), (10, 3), (7, 3), (2, 5), (16, 4)])
@pytest.mark.parametrize("drop_last", [False, True])
def test_partition_without_overlap_covers_the_data_set(n, replicas, drop_last):
    shares = [list(DistributedSampler(range(n), replicas, r, seed=3, drop_last=drop_last)) for r in range(replicas)]
    flat = [i for s in shares for i in s]
    assert len({len(s) for s in shares}) == 1  # equal shares
    if drop_last:
        assert len(set(flat)) == len(flat) == n - n % replicas  # disjoint, only the remainder dropped
    else:
        assert set(flat) == set(range(n))  # covered; repeats only as padding
        assert len(flat) - len(set(flat)) == (-n) % replicas


def test_epochs_reshuffle_identically_on_every_rank():
    a = DistributedSampler(range(50), 2, 0, seed=7)
    b = DistributedSampler(range(50), 2, 1, seed=7)
    first = list(a) + list(b)
    a.set_epoch(1)
    b.set_epoch(1)
    second = list(a) + list(b)
    assert sorted(first) == sorted(second) == list(range(50)) and first != second


def test_errors_like_torch():
    for lib_sampler in (DistributedSampler, torch_distributed.DistributedSampler):
        with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
            lib_sampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))


def test_in_a_dataloader():
    ds = ember.utils.data.TensorDataset(ember.arange(12.0))
    loader = ember.utils.data.DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, 3, 1, shuffle=False))
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in loader]), [1, 4, 7, 10])
