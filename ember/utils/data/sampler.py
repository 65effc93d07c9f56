"""Samplers: which indices a DataLoader fetches, and in which order."""
from __future__ import annotations

from typing import Generic, Iterable, Iterator, Sequence, Sized

import numpy as np

from ... import _factories as _F
from ..._random import Generator, _rng
from ..._tensor import Tensor
from .dataset import T_co

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


class Sampler(Generic[T_co]):
    """Base class: an iterable of indices (or of index lists, for batch samplers). It takes no arguments, as
    torch's (whose ``data_source`` argument was removed)."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _seeded_generator(generator: Generator | None) -> Generator:
    """``generator``, or a new one seeded from the default generator (as torch's samplers do)."""
    if generator is not None:
        return generator
    g = Generator()
    g.manual_seed(int(_rng(None).integers(0, 2**63 - 1)))
    return g


class RandomSampler(Sampler):
    """A random permutation (or draws with replacement) of the indices."""

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        g = _seeded_generator(self.generator)
        if self.replacement:  # drawn lazily in chunks of 32, as torch's (num_samples may be 10**10)
            for _ in range(self.num_samples // 32):
                yield from g._rng.integers(0, n, 32).tolist()
            yield from g._rng.integers(0, n, self.num_samples % 32).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from _F.randperm(n, generator=g).tolist()
        yield from _F.randperm(n, generator=g).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in random order."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _F.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = np.asarray(weights._data if isinstance(weights, Tensor) else weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = _F.tensor(w)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        w = self.weights._data
        p = w / w.sum()
        if not self.replacement and self.num_samples > np.count_nonzero(p):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        rng = _rng(self.generator)
        if not self.replacement:  # (at most len(weights) indices)
            yield from rng.choice(len(p), self.num_samples, replace=False, p=p).tolist()
            return
        # with replacement: drawn lazily in chunks, so a huge num_samples costs no memory (torch's draws them all)
        cdf = np.cumsum(p)
        cdf /= cdf[-1]
        for start in range(0, self.num_samples, _CHUNK):
            u = rng.random(min(_CHUNK, self.num_samples - start))
            yield from np.minimum(np.searchsorted(cdf, u, side="right"), len(p) - 1).tolist()

    def __len__(self) -> int:
        return self.num_samples


_CHUNK = 1 << 16


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``."""

    def __init__(self, sampler: Sampler | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
