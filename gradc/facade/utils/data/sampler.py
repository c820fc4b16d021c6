"""Samplers: the order in which a DataLoader visits a dataset, drawn from torch's random streams.

``RandomSampler`` without a generator seeds a fresh one from a 64-bit draw of the default
generator each epoch and permutes with it, as torch does, so ``torch.manual_seed(s)`` gives
torch's shuffled order.

>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
"""
from __future__ import annotations

from gradc.facade import rng


class Sampler:
    __module__ = "torch.utils.data.sampler"

    def __class_getitem__(cls, item):  # ``Sampler[int]`` in annotations
        return cls

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    __module__ = "torch.utils.data.sampler"

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def fresh_seed(generator=None) -> int:
    """``torch.empty((), dtype=torch.int64).random_(generator=g).item()``: a 63-bit draw."""
    g = rng.default_generator if generator is None else generator
    return g.random64() % (1 << 63)


class RandomSampler(Sampler):
    __module__ = "torch.utils.data.sampler"

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if replacement:
            raise NotImplementedError("RandomSampler(replacement=True) is not supported by gradc; use "
                                      "replacement=False or draw indices with torch.randint")
        self.data_source, self.replacement, self._num_samples, self.generator = (
            data_source, replacement, num_samples, generator)
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = rng.Generator().manual_seed(fresh_seed())
        for _ in range(self.num_samples // n):
            yield from generator.permutation(n)
        yield from generator.permutation(n)[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    __module__ = "torch.utils.data.sampler"

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        g = self.generator if self.generator is not None else rng.default_generator
        for i in g.permutation(len(self.indices)):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    __module__ = "torch.utils.data.sampler"

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
