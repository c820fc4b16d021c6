"""Datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``, ``random_split``.

>>> import gradc.torch as torch
>>> ds = TensorDataset(torch.arange(10), torch.arange(10) * 2)
>>> ds[3], len(ds)
((tensor(3), tensor(6)), 10)
>>> [len(s) for s in random_split(ds, [0.7, 0.3], generator=torch.Generator().manual_seed(0))]
[7, 3]
"""
from __future__ import annotations

import bisect
import math
import warnings

from gradc.facade import rng


class Dataset:
    """A map-style dataset: ``__getitem__(index)`` and (for samplers) ``__len__``."""

    __module__ = "torch.utils.data.dataset"

    def __class_getitem__(cls, item):  # ``Dataset[Tuple[Tensor, int]]`` in annotations, as torch's Generic
        return cls

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is iterated (a stream) rather than indexed."""

    __module__ = "torch.utils.data.dataset"

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset):
    """Rows of tensors of the same length: item ``i`` is ``(t[i] for t in tensors)``."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class Subset(Dataset):
    """The items of ``dataset`` at ``indices``, in that order."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """Datasets one after the other."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes, total = [], 0
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


def _lengths_from_fractions(fractions, n):
    lengths = [int(math.floor(n * f)) for f in fractions]
    for i in range(n - sum(lengths)):  # hand out the remainder round-robin, as torch does
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.", stacklevel=3)
    return lengths


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping Subsets of the given lengths (or fractions summing to 1).

    The indices are ``torch.randperm(len(dataset), generator=generator)``, so a seeded split is torch's.
    """
    generator = rng.default_generator if generator is None else generator
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths = _lengths_from_fractions(lengths, len(dataset))
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = generator.permutation(sum(lengths))
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, indices[offset:offset + length]))
        offset += length
    return out
