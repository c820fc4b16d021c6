#!/usr/bin/env python3
"""Conformance cases for torch.utils.data: batches, shuffling with torch's RNG streams, collation, splits.

    /tmp/torchenv/bin/python tests/facade/spec/gen_data.py torch > tests/facade/spec/data.expected.txt
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spec_runner import main, registry  # noqa: E402

CASES, case = registry()


def dataset(T, n=10):
    return T.utils.data.TensorDataset(T.arange(n * 2, dtype=T.float32).reshape(n, 2), T.arange(n))


def labels(loader, epochs=1):
    return [[y.tolist() for _, y in loader] for _ in range(epochs)]


@case
def sequential_batches(T):
    D = T.utils.data
    ds = dataset(T)
    loader = D.DataLoader(ds, batch_size=4)
    x, y = next(iter(loader))
    return [labels(loader), len(loader), x.tolist(), str(x.dtype), str(y.dtype), list(x.shape),
            labels(D.DataLoader(ds, batch_size=4, drop_last=True)), len(D.DataLoader(ds, batch_size=4, drop_last=True))]


@case
def shuffle_with_global_seed(T):
    D = T.utils.data
    out = []
    for seed in (0, 1, 42):
        T.manual_seed(seed)
        out.append(labels(D.DataLoader(dataset(T, 13), batch_size=4, shuffle=True), epochs=3))
        out.append(T.rand(2).tolist())  # the RNG stream after three epochs
    return out


@case
def shuffle_drop_last(T):
    T.manual_seed(3)
    D = T.utils.data
    return labels(D.DataLoader(dataset(T, 11), batch_size=3, shuffle=True, drop_last=True), epochs=2)


@case
def shuffle_with_generator(T):
    D = T.utils.data
    g = T.Generator()
    g.manual_seed(7)
    T.manual_seed(0)
    loader = D.DataLoader(dataset(T, 9), batch_size=2, shuffle=True, generator=g)
    return [labels(loader, epochs=2), T.rand(1).tolist(), g.initial_seed()]


@case
def collate_structures(T):
    D = T.utils.data

    class Pairs(D.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": T.full((2,), float(i)), "label": i, "weight": i / 2, "name": f"item{i}"}

    class Tuples(D.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return T.ones(3) * i, (i, float(i)), [i, i + 1]

    out = []
    for batch in D.DataLoader(Pairs(), batch_size=2):
        out.append({k: (v.tolist(), str(v.dtype)) if hasattr(v, "dtype") else v for k, v in batch.items()})
    x, pair, lst = next(iter(D.DataLoader(Tuples(), batch_size=3)))
    out.append([x.tolist(), type(pair).__name__, [p.tolist() for p in pair], [str(p.dtype) for p in pair],
                type(lst).__name__, [v.tolist() for v in lst]])
    return out


@case
def collate_numpy_and_unbatched(T):
    import numpy as np
    D = T.utils.data

    class Arrays(D.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return np.full(2, i, dtype=np.float64), np.int64(i)

    x, y = next(iter(D.DataLoader(Arrays(), batch_size=3)))
    single = [type(b).__name__ for b in next(iter(D.DataLoader(Arrays(), batch_size=None)))]
    return [x.tolist(), str(x.dtype), y.tolist(), str(y.dtype), single]


@case
def random_split_lengths_and_fractions(T):
    D = T.utils.data
    ds = dataset(T, 10)
    a, b = D.random_split(ds, [7, 3], generator=T.Generator().manual_seed(42))
    T.manual_seed(5)
    c, d, e = D.random_split(ds, [0.5, 0.3, 0.2])
    f, g = D.random_split(range(11), [0.5, 0.5], generator=T.Generator().manual_seed(0))
    return [a.indices, b.indices, c.indices, d.indices, e.indices, [len(f), len(g)], list(f), a[0][1].tolist(),
            T.rand(1).tolist()]


@case
def random_split_errors(T):
    D = T.utils.data
    out = []
    for bad in (lambda: D.random_split(range(5), [2, 2]), lambda: D.TensorDataset(T.ones(3), T.ones(4))):
        try:
            bad()
            out.append("NO ERROR")
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {e}")
    return out


@case
def subsets_concat_samplers(T):
    D = T.utils.data
    ds = dataset(T, 6)
    sub = D.Subset(ds, [5, 0, 3])
    both = ds + sub
    T.manual_seed(2)
    rs = list(D.RandomSampler(range(6)))
    srs = list(D.SubsetRandomSampler([10, 20, 30, 40]))
    return [len(sub), sub[0][1].tolist(), len(both), both[7][1].tolist(), rs, srs,
            list(D.BatchSampler(D.SequentialSampler(range(5)), batch_size=2, drop_last=True)),
            labels(D.DataLoader(ds, batch_sampler=[[0, 1], [4, 2, 3]]))]


@case
def training_loop_with_loader(T):
    """The "optimization" tutorial's loop in miniature: shuffled batches, SGD, the losses printed."""
    D, nn = T.utils.data, T.nn
    T.manual_seed(0)
    x = T.randn(64, 4)
    y = (x @ T.tensor([[1.0], [-2.0], [0.5], [0.0]]) + 0.1).squeeze(1)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = T.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.MSELoss()
    losses = []
    for _ in range(3):
        for xb, yb in D.DataLoader(D.TensorDataset(x, y), batch_size=16, shuffle=True):
            loss = loss_fn(model(xb).squeeze(1), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    return losses


if __name__ == "__main__":
    sys.exit(main(CASES, sys.argv))
