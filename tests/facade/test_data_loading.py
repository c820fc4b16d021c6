"""DataLoader behaviour beyond the recorded batches: workers in-process, streams, argument errors."""
import pytest
from gradc.torch.utils.data import DataLoader, IterableDataset, TensorDataset

import gradc.torch as torch


def _labels(loader):
    return [y.tolist() for _, y in loader]


def test_num_workers_give_the_same_batches():
    ds = TensorDataset(torch.arange(20.0), torch.arange(20))
    torch.manual_seed(4)
    one = _labels(DataLoader(ds, batch_size=6, shuffle=True))
    torch.manual_seed(4)
    many = _labels(DataLoader(ds, batch_size=6, shuffle=True, num_workers=2, pin_memory=True))
    assert one == many and sorted(sum(one, [])) == list(range(20))


def test_iterable_dataset_batches():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]


def test_argument_errors():
    ds = TensorDataset(torch.arange(4.0))
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        next(iter(DataLoader([object(), object()], batch_size=2)))


def test_loader_exposes_dataset_and_lengths():
    ds = TensorDataset(torch.arange(10.0), torch.arange(10))
    loader = DataLoader(ds, batch_size=4)
    assert loader.dataset is ds and len(loader) == 3 and len(loader.dataset) == 10


def test_typed_subclasses_and_worker_info():
    from gradc.torch.utils.data import Dataset, get_worker_info

    class Squares(Dataset[int]):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return i * i

    assert [b.tolist() for b in DataLoader(Squares(), batch_size=2)] == [[0, 1], [4]]
    assert get_worker_info() is None
