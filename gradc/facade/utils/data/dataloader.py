"""``DataLoader`` and ``default_collate``: batches of a dataset, in torch's order and layout.

Each pass over a loader draws one 64-bit seed from the loader's generator (torch's
"base seed"), then the sampler draws its own, as torch's single-process iterator does: a
seeded program sees torch's batches in torch's order. Workers run in-process
(``num_workers`` is accepted and changes nothing but speed).

>>> import gradc.torch as torch
>>> ds = TensorDataset(torch.arange(5.), torch.arange(5))
>>> [x.tolist() for x, y in DataLoader(ds, batch_size=2)]
[[0.0, 1.0], [2.0, 3.0], [4.0]]
"""
from __future__ import annotations

import collections.abc

import numpy as np

from gradc.facade import creation, dtypes
from gradc.facade import functional as fn
from gradc.facade.tensor import Tensor
from gradc.facade.utils.data.dataset import IterableDataset, TensorDataset  # noqa: F401 - the docstring's example
from gradc.facade.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler, fresh_seed

COLLATE_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def default_convert(data):
    """One sample without batching: NumPy arrays become tensors, containers are converted inside."""
    if isinstance(data, (np.ndarray, np.generic)) and data.dtype.kind not in "OSU":
        return creation.as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()}) if type(data) is not dict else \
            {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(default_convert(d) for d in data)
    return data


def default_collate(batch):
    """Stack a list of samples into a batch: tensors are stacked, numbers become tensors, dicts and
    tuples are collated field by field (a tuple of fields becomes a list, as in torch)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return fn.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OSU":
            raise TypeError(COLLATE_ERROR.format(elem.dtype))
        return default_collate([creation.as_tensor(b) for b in batch])
    if isinstance(elem, np.generic):
        return creation.tensor(np.asarray(batch))
    if isinstance(elem, float):
        return creation.tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):
        return creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        out = {key: default_collate([d[key] for d in batch]) for key in elem}
        return out if type(elem) is dict else _rebuild(type(elem), out)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild(type(elem), columns)
    raise TypeError(COLLATE_ERROR.format(type(elem)))


def _rebuild(kind, value):
    try:
        return kind(value)
    except TypeError:
        return value


def get_worker_info():
    """Information about the current loader worker: None, as every batch is loaded in the main process."""
    return None


class DataLoader:
    """Iterate over ``dataset`` in batches (see the module docstring for the random streams)."""

    __module__ = "torch.utils.data.dataloader"

    def __class_getitem__(cls, item):  # ``DataLoader[Tensor]`` in annotations
        return cls

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        self.dataset, self.num_workers, self.generator = dataset, num_workers, generator
        self.pin_memory, self.timeout, self.worker_init_fn = pin_memory, timeout, worker_init_fn
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable and (shuffle not in (None, False) or sampler is not None or batch_sampler is not None):
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle, sampler and "
                             f"batch_sampler options, but got shuffle={shuffle}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.collate_fn = collate_fn or (default_collate if batch_size is not None or batch_sampler is not None
                                         else default_convert)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self):
        fresh_seed(self.generator)  # torch's iterator draws its workers' base seed first
        if self._iterable:
            return self._iter_stream()
        return self._iter_map()

    def _iter_map(self):
        if self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield self.collate_fn([self.dataset[i] for i in indices])
        else:
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])

    def _iter_stream(self):
        if self.batch_size is None:
            for item in self.dataset:
                yield self.collate_fn(item)
            return
        batch = []
        for item in self.dataset:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)
