"""``torch.utils.data`` of the facade: datasets, samplers, ``DataLoader``, ``random_split``.

Imported as ``gradc.torch.utils.data`` (an alias, see ``gradc.facade.torch_modules``).
"""
from gradc.facade.utils.data.dataloader import DataLoader, default_collate, default_convert, get_worker_info
from gradc.facade.utils.data.dataset import (
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from gradc.facade.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
)

__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "default_collate",
           "default_convert", "get_worker_info", "random_split"]
