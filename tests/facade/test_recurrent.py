"""nn.LSTM/GRU/RNN and cells: random configurations against torch 2.13.0 (skipped without torch),
central differences of the facade's gradients, the argument errors torch raises, dropout, modes.

The recorded conformance cases are in ``test_recurrent_torch.py``; here a seeded generator draws
configurations (mode, sizes, layers, directions, batch_first, bias, proj_size, batched or not,
initial states or not, dtype) and compares every output and gradient with torch live.
"""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

import gradc.torch as G

LAYERS = ("LSTM", "GRU", "RNN")
CELLS = ("LSTMCell", "GRUCell", "RNNCell")


def _config(seed):
    """A random layer or cell configuration: (class name, args, kwargs, input shape, state shapes, f64)."""
    r = random.Random(seed)
    cls = r.choice(LAYERS + CELLS)
    f64 = r.random() < 0.5
    inp, hid = r.randint(1, 4), r.randint(2, 5)
    kw = {"bias": r.random() < 0.7}
    batch = r.randint(1, 3)
    batched = r.random() < 0.75
    with_states = r.random() < 0.5
    if cls.endswith("Cell"):
        if cls == "RNNCell":
            kw["nonlinearity"] = r.choice(["tanh", "relu"])
        x_shape = (batch, inp) if batched else (inp,)
        one = (batch, hid) if batched else (hid,)
        states = [] if not with_states else [one, one] if cls == "LSTMCell" else [one]
        return cls, (inp, hid), kw, x_shape, states, f64
    kw.update(num_layers=r.randint(1, 3), batch_first=r.random() < 0.5, bidirectional=r.random() < 0.5)
    if cls == "RNN":
        kw["nonlinearity"] = r.choice(["tanh", "relu"])
    if cls == "LSTM" and r.random() < 0.3:
        kw["proj_size"] = r.randint(1, hid - 1)
    steps = r.randint(1, 5)
    x_shape = ((batch, steps) if kw["batch_first"] else (steps, batch)) + (inp,)
    if not batched:
        x_shape = (steps, inp)
    layers = kw["num_layers"] * (2 if kw["bidirectional"] else 1)
    out = kw.get("proj_size") or hid
    h = (layers, batch, out) if batched else (layers, out)
    c = (layers, batch, hid) if batched else (layers, hid)
    states = [] if not with_states else [h, c] if cls == "LSTM" else [h]
    return cls, (inp, hid), kw, x_shape, states, f64


def _flat(out):
    if not isinstance(out, tuple):
        return [out]
    return [t for item in out for t in (item if isinstance(item, tuple) else (item,))]


def _run(T, cfg, seed):
    """Build and run a configuration under ``T`` (torch or the facade); plain numpy results out."""
    cls, args, kw, x_shape, states, f64 = cfg
    kw = dict(kw, dtype=T.float64 if f64 else T.float32)
    T.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = getattr(T.nn, cls)(*args, **kw)
        outs = _forward(T, layer, x_shape, states, f64, seed)
    return _results(layer, outs)


def _forward(T, layer, x_shape, states, f64, seed):
    rs = np.random.RandomState(seed)
    dt = np.float64 if f64 else np.float32
    x = T.tensor(rs.uniform(-2, 2, x_shape).astype(dt), requires_grad=True)
    hx = [T.tensor(rs.uniform(-1, 1, s).astype(dt), requires_grad=True) for s in states]
    call = (x,) if not hx else (x, hx[0] if len(hx) == 1 else tuple(hx))
    outs = _flat(layer(*call))
    loss = sum((o * T.tensor(rs.uniform(-1, 1, tuple(o.shape)).astype(dt))).sum() for o in outs)
    loss.backward()
    return outs, [x] + hx


def _results(layer, run):
    outs, inputs = run
    as_np = lambda t: np.asarray(t.detach().numpy())  # noqa: E731
    return {"repr": repr(layer), "names": [n for n, _ in layer.named_parameters()],
            "keys": list(layer.state_dict()), "init": [as_np(p) for p in layer.parameters()],
            "outs": [as_np(o) for o in outs], "grads": [as_np(p.grad) for p in layer.parameters()],
            "inputs": [as_np(t.grad) for t in inputs]}


@pytest.mark.parametrize("seed", range(48))
def test_random_configuration_matches_torch(seed):
    torch = pytest.importorskip("torch")
    cfg = _config(seed)
    theirs, ours = _run(torch, cfg, seed), _run(G, cfg, seed)
    assert ours["repr"] == theirs["repr"]
    assert ours["names"] == theirs["names"] and ours["keys"] == theirs["keys"]
    for a, b in zip(ours["init"], theirs["init"]):  # the same seed gives torch's numbers exactly
        assert a.dtype == b.dtype and np.array_equal(a, b)
    tol = dict(rtol=1e-9, atol=1e-12) if cfg[-1] else dict(rtol=2e-4, atol=2e-5)
    for group in ("outs", "grads", "inputs"):
        assert len(ours[group]) == len(theirs[group])
        for a, b in zip(ours[group], theirs[group]):
            assert a.shape == b.shape and a.dtype == b.dtype, (group, a.shape, b.shape)
            np.testing.assert_allclose(a, b, err_msg=f"{cfg} {group}", **tol)


# ---------------------------------------------------------------- central differences (no torch needed)
def _loss(layer, x, hx, weights):
    outs = _flat(layer(x, hx))
    return sum((o * w).sum() for o, w in zip(outs, weights))


@pytest.mark.parametrize("make, x_shape, states", [
    (lambda: G.nn.LSTM(2, 3, 2, bidirectional=True, proj_size=2, dtype=G.float64), (3, 2, 2), [(4, 2, 2), (4, 2, 3)]),
    (lambda: G.nn.GRU(2, 3, 2, batch_first=True, dtype=G.float64), (2, 3, 2), [(2, 2, 3)]),
    (lambda: G.nn.RNN(3, 2, nonlinearity="relu", bidirectional=True, dtype=G.float64), (4, 3), [(2, 2)]),
    (lambda: G.nn.LSTMCell(2, 3, dtype=G.float64), (2, 2), [(2, 3), (2, 3)]),
    (lambda: G.nn.GRUCell(3, 2, bias=False, dtype=G.float64), (3,), [(2,)]),
], ids=["lstm", "gru", "rnn_relu", "lstm_cell", "gru_cell"])
def test_gradients_match_central_differences(make, x_shape, states):
    G.manual_seed(5)
    layer = make()
    rs = np.random.RandomState(1)
    x = G.tensor(rs.uniform(-1, 1, x_shape), requires_grad=True)
    hx = [G.tensor(rs.uniform(-1, 1, s), requires_grad=True) for s in states]
    state = hx[0] if len(hx) == 1 else tuple(hx)
    with G.no_grad():
        shapes = [tuple(o.shape) for o in _flat(layer(x, state))]
    weights = [G.tensor(rs.uniform(-1, 1, s)) for s in shapes]
    _loss(layer, x, state, weights).backward()
    eps = 1e-6
    for t in [x, *hx, *layer.parameters()]:
        data = t.detach().numpy().reshape(-1)  # a view of t's storage: perturbed in place
        for i in rs.choice(data.size, size=min(6, data.size), replace=False):
            old = data[i]
            with G.no_grad():
                data[i] = old + eps
                up = _loss(layer, x, state, weights).item()
                data[i] = old - eps
                down = _loss(layer, x, state, weights).item()
            data[i] = old
            assert t.grad.numpy().reshape(-1)[i] == pytest.approx((up - down) / (2 * eps), rel=1e-5, abs=1e-7)


# ---------------------------------------------------------------- behaviour
def test_dropout_between_layers_only_in_training():
    G.manual_seed(0)
    lstm = G.nn.LSTM(3, 4, num_layers=2, dropout=1.0)
    x = G.randn(5, 2, 3)
    out_train, (h, _) = lstm(x)
    # p = 1 zeroes the first layer's output, so the second layer sees zeros: its output is the same
    # for every input, and the first layer's final state is untouched
    out_other, (h_other, _) = lstm(G.randn(5, 2, 3))
    assert np.allclose(out_train.detach().numpy(), out_other.detach().numpy())
    assert not np.allclose(h[0].detach().numpy(), h_other[0].detach().numpy())
    lstm.eval()
    out_eval, _ = lstm(x)
    assert not np.allclose(out_eval.detach().numpy(), out_train.detach().numpy())
    assert np.array_equal(lstm(x)[0].detach().numpy(), out_eval.detach().numpy())


def test_dropout_with_one_layer_warns_as_torch():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        G.nn.GRU(3, 4, dropout=0.2)


def test_no_grad_and_double():
    G.manual_seed(0)
    gru = G.nn.GRU(3, 4).double()
    with G.no_grad():
        out, h = gru(G.randn(2, 1, 3, dtype=G.float64))
    assert out.grad_fn is None and out.dtype == G.float64 and h.shape == (1, 1, 4)


def test_empty_batch_gives_empty_outputs():
    out, (h, c) = G.nn.LSTM(3, 4, 2)(G.zeros(5, 0, 3))
    assert tuple(out.shape) == (5, 0, 4) and tuple(h.shape) == (2, 0, 4) and tuple(c.shape) == (2, 0, 4)


def test_state_dict_round_trip_and_training_step():
    G.manual_seed(0)
    a, b = G.nn.LSTM(3, 4, 2, bidirectional=True), G.nn.LSTM(3, 4, 2, bidirectional=True)
    b.load_state_dict(a.state_dict())
    x = G.randn(4, 2, 3)
    assert np.array_equal(a(x)[0].detach().numpy(), b(x)[0].detach().numpy())
    opt = G.optim.SGD(b.parameters(), lr=0.1)
    loss = b(x)[0].pow(2).sum()
    loss.backward()
    opt.step()
    assert b(x)[0].pow(2).sum().item() < loss.item()


def test_functional_call_uses_the_given_parameters():
    G.manual_seed(0)
    rnn = G.nn.RNN(2, 3)
    zeroed = {name: G.zeros_like(p) for name, p in rnn.named_parameters()}
    out, h = G.func.functional_call(rnn, zeroed, (G.randn(4, 1, 2),))
    assert not out.detach().numpy().any() and not h.detach().numpy().any()


@pytest.mark.parametrize("call, error, message", [
    (lambda: G.nn.LSTM(3, 4)(G.zeros(2, 3, 4, 5)), ValueError, "LSTM: Expected input to be 2D or 3D, got 4D instead"),
    (lambda: G.nn.RNN(3, 4)(G.zeros(3)), ValueError, "RNN: Expected input to be 2D or 3D, got 1D tensor instead"),
    (lambda: G.nn.GRU(3, 4)(G.zeros(2, 2, 5)), RuntimeError,
     r"input.size\(-1\) must be equal to input_size. Expected 3, got 5"),
    (lambda: G.nn.GRU(3, 4)(G.zeros(2, 2, 3), G.zeros(1, 3, 4)), RuntimeError,
     r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"),
    (lambda: G.nn.LSTM(3, 4)(G.zeros(2, 2, 3), (G.zeros(1, 2, 4), G.zeros(1, 2, 5))), RuntimeError,
     r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 2, 5\]"),
    (lambda: G.nn.LSTM(3, 4)(G.zeros(2, 2, 3), (G.zeros(2, 4), G.zeros(1, 2, 4))), RuntimeError,
     r"For batched 3-D input, hx and cx should also be 3-D but got \(2-D, 3-D\) tensors"),
    (lambda: G.nn.GRU(3, 4)(G.zeros(2, 3), G.zeros(1, 1, 4)), RuntimeError,
     "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"),
    (lambda: G.nn.LSTM(3, 4)(G.zeros(2, 2, 3), G.zeros(1, 2, 4)), TypeError, r"hx must be a tuple \(h_0, c_0\)"),
    (lambda: G.nn.LSTM(3, 4)(G.zeros(2, 2, 3, dtype=G.float64)), ValueError,
     r"RNN input dtype \(torch.float64\) does not match weight dtype \(torch.float32\)"),
    (lambda: G.nn.LSTM(3, 4)(G.zeros(0, 2, 3)), RuntimeError, "Expected sequence length to be larger than 0"),
    (lambda: G.nn.RNN(3, 4, nonlinearity="gelu"), ValueError, "Unknown nonlinearity 'gelu'"),
    (lambda: G.nn.GRU(3, 4, proj_size=2), ValueError, "proj_size argument is only supported for LSTM"),
    (lambda: G.nn.LSTM(3, 4, proj_size=4), ValueError, "proj_size has to be smaller than hidden_size"),
    (lambda: G.nn.LSTM(3, 4, dropout=1.5), ValueError, r"dropout should be a number in range \[0, 1\]"),
    (lambda: G.nn.LSTM(3, 4.0), TypeError, "hidden_size should be of type int, got: float"),
    (lambda: G.nn.LSTM(0, 4), ValueError, "input_size must be greater than zero"),
    (lambda: G.nn.GRU(3, 4, 0), ValueError, "num_layers must be greater than zero"),
    (lambda: G.nn.GRU(3, 4, bias=1), TypeError, "bias should be of type bool, got: int"),
    (lambda: G.nn.LSTMCell(3, 4)(G.zeros(2, 5)), RuntimeError, "input has inconsistent input_size: got 5 expected 3"),
    (lambda: G.nn.GRUCell(3, 4)(G.zeros(2, 3), G.zeros(3, 4)), RuntimeError,
     "Input batch size 2 doesn't match hidden0 batch size 3"),
    (lambda: G.nn.LSTMCell(3, 4)(G.zeros(2, 3), (G.zeros(2, 4), G.zeros(2, 5))), RuntimeError,
     "hidden1 has inconsistent hidden_size: got 5, expected 4"),
    (lambda: G.nn.RNNCell(3, 4)(G.zeros(1, 2, 3)), ValueError, "RNNCell: Expected input to be 1D or 2D, got 3D"),
    (lambda: G.nn.LSTMCell(3, 4)(G.zeros(3), (G.zeros(1, 1, 4), G.zeros(4))), ValueError,
     r"LSTMCell: Expected hx\[0\] to be 1D or 2D, got 3D instead"),
    (lambda: G.nn.RNNCell(3, 4, nonlinearity="gelu")(G.zeros(2, 3)), RuntimeError, "Unknown nonlinearity: gelu"),
    (lambda: G.nn.RNNCell(3, 4)(G.zeros(2, 3, dtype=G.float64)), RuntimeError,
     r"RNNCell input dtype \(torch.float64\) does not match weight dtype \(torch.float32\)"),
    (lambda: G.nn.LSTMCell(3, 4)(G.zeros(2, 3), G.zeros(2, 4)), TypeError, r"hx must be a tuple \(h, c\)"),
])
def test_errors_say_what_is_wrong(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("cls, kw", [("LSTM", {"num_layers": 2, "proj_size": 2}), ("GRU", {"bidirectional": True}),
                                     ("RNN", {"batch_first": True})])
def test_double_backward_matches_torch(cls, kw):
    """A gradient penalty: the gradient of |d out / d x|^2, through the recurrence twice (float64)."""
    torch = pytest.importorskip("torch")
    grads = []
    for T in (torch, G):
        T.manual_seed(2)
        layer = getattr(T.nn, cls)(3, 4, dtype=T.float64, **kw)
        x = T.tensor(np.random.RandomState(0).uniform(-1, 1, (4, 2, 3)), requires_grad=True)
        g, = T.autograd.grad(layer(x)[0].pow(2).sum(), x, create_graph=True)
        g.pow(2).sum().backward()
        grads.append([np.asarray(t.grad.numpy()) for t in [x, *layer.parameters()]])
    for theirs, ours in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
