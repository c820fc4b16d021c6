"""Packed sequences (``torch.nn.utils.rnn``) through LSTM/GRU/RNN: seeded random batches against torch
2.13.0 (skipped without torch), central differences through a packed batch, and torch's errors.
"""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

import gradc.torch as G


def _config(seed):
    r = random.Random(seed)
    cls = r.choice(["LSTM", "GRU", "RNN"])
    kw = {"num_layers": r.randint(1, 2), "bidirectional": r.random() < 0.5, "bias": r.random() < 0.8}
    if cls == "RNN":
        kw["nonlinearity"] = r.choice(["tanh", "relu"])
    if cls == "LSTM" and r.random() < 0.3:
        kw["proj_size"] = 2
    lengths = [r.randint(1, 5) for _ in range(r.randint(1, 4))]
    enforce = r.random() < 0.3
    if enforce:
        lengths.sort(reverse=True)
    return cls, kw, lengths, enforce, r.random() < 0.5, r.random() < 0.5


def _run(T, cfg, seed):
    cls, kw, lengths, enforce, with_states, f64 = cfg
    dt = T.float64 if f64 else T.float32
    T.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = getattr(T.nn, cls)(3, 4, dtype=dt, **kw)
        rs = np.random.RandomState(seed)
        ndt = np.float64 if f64 else np.float32
        x = T.tensor(rs.uniform(-1, 1, (max(lengths), len(lengths), 3)).astype(ndt), requires_grad=True)
        hx = []
        if with_states:
            layers = kw["num_layers"] * (2 if kw["bidirectional"] else 1)
            hx = [T.tensor(rs.uniform(-1, 1, (layers, len(lengths), kw.get("proj_size", 4))).astype(ndt),
                           requires_grad=True)]
            if cls == "LSTM":
                hx.append(T.tensor(rs.uniform(-1, 1, (layers, len(lengths), 4)).astype(ndt), requires_grad=True))
        packed = T.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce)
        out, hn = layer(packed, None if not hx else hx[0] if cls != "LSTM" else tuple(hx))
        padded, lens = T.nn.utils.rnn.pad_packed_sequence(out)
        finals = list(hn) if isinstance(hn, tuple) else [hn]
        loss = sum((o * T.tensor(rs.uniform(-1, 1, tuple(o.shape)).astype(ndt))).sum() for o in [padded] + finals)
        loss.backward()
    as_np = lambda v: np.asarray(v.detach().numpy())  # noqa: E731
    return ([as_np(out.data), as_np(out.batch_sizes), as_np(padded), as_np(lens)] + [as_np(f) for f in finals]
            + [as_np(p.grad) for p in layer.parameters()] + [as_np(v.grad) for v in [x] + hx])


@pytest.mark.parametrize("seed", range(24))
def test_random_packed_batch_matches_torch(seed):
    torch = pytest.importorskip("torch")
    cfg = _config(seed)
    theirs, ours = _run(torch, cfg, seed), _run(G, cfg, seed)
    tol = dict(rtol=1e-9, atol=1e-12) if cfg[-1] else dict(rtol=2e-4, atol=2e-5)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, err_msg=str(cfg), **tol)


def test_packed_gradients_match_central_differences():
    """Only the steps a sequence has count: perturbing padding changes nothing, the rest as differenced."""
    G.manual_seed(3)
    gru = G.nn.GRU(2, 3, bidirectional=True, dtype=G.float64)
    rs = np.random.RandomState(4)
    x = G.tensor(rs.uniform(-1, 1, (4, 3, 2)), requires_grad=True)
    lengths = [2, 4, 1]
    R = G.nn.utils.rnn

    def loss():
        out, h = gru(R.pack_padded_sequence(x, lengths, enforce_sorted=False))
        return (out.data.pow(2).sum() + h.sum() * 0.5)
    loss().backward()
    data = x.detach().numpy()
    for t, b, f in [(0, 0, 0), (1, 0, 1), (3, 1, 0), (0, 2, 1), (2, 2, 0), (3, 0, 1)]:
        old = data[t, b, f]
        with G.no_grad():
            data[t, b, f] = old + 1e-6
            up = loss().item()
            data[t, b, f] = old - 1e-6
            down = loss().item()
        data[t, b, f] = old
        expected = (up - down) / 2e-6 if t < lengths[b] else 0.0
        assert x.grad.numpy()[t, b, f] == pytest.approx(expected, rel=1e-6, abs=1e-9)


def test_pack_round_trip_in_the_callers_order():
    seqs = [G.tensor(np.arange(n * 2, dtype=np.float32).reshape(n, 2) + 10 * n) for n in (2, 5, 3)]
    packed = G.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    assert packed.sorted_indices.tolist() == [1, 2, 0] and packed.unsorted_indices.tolist() == [2, 0, 1]
    assert packed.batch_sizes.tolist() == [3, 3, 2, 1, 1]
    for got, want in zip(G.nn.utils.rnn.unpack_sequence(packed), seqs):
        assert np.array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("call, error, message", [
    (lambda: G.nn.utils.rnn.pack_padded_sequence(G.zeros(3, 2, 1), [1, 2]), RuntimeError,
     "must be sorted in decreasing order when `enforce_sorted` is True"),
    (lambda: G.nn.utils.rnn.pack_padded_sequence(G.zeros(3, 2, 1), [2, 0]), RuntimeError,
     "Length of all samples has to be greater than 0"),
    (lambda: G.nn.utils.rnn.pack_padded_sequence(G.zeros(3, 2, 1), [3]), RuntimeError,
     r"Expected `len\(lengths\)` to be equal to batch_size"),
    (lambda: G.nn.utils.rnn.pad_packed_sequence(G.nn.utils.rnn.pack_sequence([G.zeros(3)]), total_length=2),
     ValueError, "Expected total_length to be at least the length of the longest sequence"),
    (lambda: G.nn.utils.rnn.pad_sequence([G.zeros(2)], padding_side="middle"), ValueError,
     "Expected padding_side to be one of left or right"),
    (lambda: G.nn.LSTM(2, 3)(G.nn.utils.rnn.pack_sequence([G.zeros(2, 4)])), RuntimeError,
     r"input.size\(-1\) must be equal to input_size. Expected 2, got 4"),
    (lambda: G.nn.GRU(2, 3)(G.nn.utils.rnn.pack_sequence([G.zeros(2, 2)]), G.zeros(1, 2, 3)), RuntimeError,
     r"Expected hidden size \(1, 1, 3\), got \[1, 2, 3\]"),
])
def test_packed_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()
