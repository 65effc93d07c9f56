"""DistributedSampler: each process of a distributed job reads its own share of a data set."""
from __future__ import annotations

import math
from typing import Iterator, Sized

from ... import _factories as _F
from ..._random import Generator
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices ``rank, rank + num_replicas, ...`` of the (shuffled, padded or trimmed) data set indices.

    As torch's: with ``shuffle`` the order is a permutation seeded by ``seed + epoch`` (call ``set_epoch`` each
    epoch), the same on every rank; without ``drop_last`` the list is padded with its own first indices to a
    multiple of ``num_replicas``, with it trimmed. ``num_replicas``/``rank`` default to ember.distributed's.
    The permutation comes from ember's generator, whose stream differs from torch's for the same seed.
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist  # noqa: PLC0415 - only when the job's layout is asked for

            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def _indices(self) -> list[int]:
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _F.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return indices

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices()[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch seeds the shuffle: call it before each epoch for a new order."""
        self.epoch = epoch
