"""Recurrent layers and cells under torch and gradc (as ``gen_layers.py``).

    /work/main/.venv/bin/python tests/facade/spec/gen_recurrent.py torch > tests/facade/spec/recurrent.expected.txt
    python tests/facade/spec/gen_recurrent.py gradc.torch      # the same cases under gradc

A case seeds, builds a layer (its initial parameters are part of the result: the same seed must
give torch's numbers), runs a forward from seeded inputs (and initial states where the case says),
backwards a seeded random cotangent on every output and returns ``print(layer)``, the parameter
names and ``state_dict`` keys, outputs, ``grad_fn`` names and the gradients of the parameters,
the input and the initial states. ``_f64`` cases compute in float64.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_runner  # noqa: E402
from gen_layers import image, t  # noqa: E402

CASES, case = spec_runner.registry()


def _flat(out):
    """``output, h`` or ``output, (h, c)`` (or a cell's ``h`` / ``(h, c)``) as a flat list."""
    if not isinstance(out, tuple):
        return [out]
    flat = []
    for item in out:
        flat += list(item) if isinstance(item, tuple) else [item]
    return flat


def _grad_fn(x):
    return type(x.grad_fn).__name__ if x.grad_fn is not None else None


def _run(T, make, x_shape, states=(), f64=False, seed=30, train=None):
    """Build ``make()`` after ``manual_seed(seed)``, run it on seeded inputs, backward; plain values out."""
    T.manual_seed(seed)
    layer = make()
    if train is not None:
        layer.train(train)
    names = [name for name, _ in layer.named_parameters()]
    init = [t(p) for p in layer.parameters()]
    x = image(T, *x_shape, f64=f64).requires_grad_(True)
    hx = [image(T, *shape, f64=f64).requires_grad_(True) for shape in states]
    args = (x,) if not hx else (x, hx[0] if len(hx) == 1 else tuple(hx))
    if not hx and "Cell" not in type(layer).__name__:
        args = (x, None)
    outs = _flat(layer(*args))
    loss = 0
    for out in outs:
        ct = (T.rand(*out.shape) * 2 - 1).to(out.dtype)
        loss = loss + (out * ct).sum()
    loss.backward()
    return {"repr": repr(layer), "names": names, "keys": list(layer.state_dict().keys()), "init": init,
            "outs": [t(o) for o in outs], "grad_fn": [_grad_fn(o) for o in outs],
            "grads": [t(p.grad) for p in layer.parameters()], "x_grad": t(x.grad),
            "h_grads": [t(h.grad) for h in hx]}


# ---------------------------------------------------------------- LSTM
@case
def lstm_default(T):
    return _run(T, lambda: T.nn.LSTM(3, 4), (5, 2, 3))


@case
def lstm_default_f64(T):
    return _run(T, lambda: T.nn.LSTM(3, 4, dtype=T.float64), (5, 2, 3), f64=True)


@case
def lstm_two_layers_bidirectional_batch_first(T):
    return _run(T, lambda: T.nn.LSTM(3, 4, 2, batch_first=True, bidirectional=True), (2, 6, 3))


@case
def lstm_initial_states_f64(T):
    return _run(T, lambda: T.nn.LSTM(2, 3, num_layers=2, bidirectional=True, dtype=T.float64), (4, 3, 2),
                states=[(4, 3, 3), (4, 3, 3)], f64=True)


@case
def lstm_proj_size_f64(T):
    return _run(T, lambda: T.nn.LSTM(3, 5, num_layers=2, proj_size=2, bidirectional=True, dtype=T.float64),
                (4, 2, 3), states=[(4, 2, 2), (4, 2, 5)], f64=True)


@case
def lstm_no_bias_unbatched(T):
    return _run(T, lambda: T.nn.LSTM(3, 4, bias=False), (5, 3))


@case
def lstm_unbatched_states_batch_first_f64(T):
    return _run(T, lambda: T.nn.LSTM(3, 4, batch_first=True, dtype=T.float64), (5, 3), states=[(1, 4), (1, 4)],
                f64=True)


@case
def lstm_eval_dropout_is_identity(T):
    return _run(T, lambda: T.nn.LSTM(3, 4, num_layers=2, dropout=0.5), (3, 2, 3), train=False)


@case
def lstm_training_dropout_stream_f64(T):
    """Dropout between layers in training draws torch's random stream: the same masks for the same seed."""
    return _run(T, lambda: T.nn.LSTM(3, 4, num_layers=3, dropout=0.5, bidirectional=True, dtype=T.float64),
                (5, 2, 3), f64=True, train=True)


@case
def gru_training_dropout_stream(T):
    return _run(T, lambda: T.nn.GRU(3, 4, num_layers=2, dropout=0.3), (4, 3, 3), train=True)


# ---------------------------------------------------------------- GRU
@case
def gru_default(T):
    return _run(T, lambda: T.nn.GRU(3, 4), (5, 2, 3))


@case
def gru_three_layers_bidirectional_f64(T):
    return _run(T, lambda: T.nn.GRU(2, 3, 3, bidirectional=True, dtype=T.float64), (4, 2, 2),
                states=[(6, 2, 3)], f64=True)


@case
def gru_batch_first_no_bias(T):
    return _run(T, lambda: T.nn.GRU(3, 4, batch_first=True, bias=False), (2, 5, 3), states=[(1, 2, 4)])


@case
def gru_unbatched_f64(T):
    return _run(T, lambda: T.nn.GRU(3, 2, num_layers=2, dtype=T.float64), (4, 3), states=[(2, 2)], f64=True)


# ---------------------------------------------------------------- RNN
@case
def rnn_tanh_default(T):
    return _run(T, lambda: T.nn.RNN(3, 4), (5, 2, 3))


@case
def rnn_relu_two_layers_bidirectional_f64(T):
    return _run(T, lambda: T.nn.RNN(3, 4, 2, nonlinearity="relu", bidirectional=True, dtype=T.float64),
                (5, 2, 3), states=[(4, 2, 4)], f64=True)


@case
def rnn_positional_relu_batch_first(T):
    return _run(T, lambda: T.nn.RNN(3, 4, 1, "relu", True, True), (2, 4, 3))


@case
def rnn_unbatched_f64(T):
    return _run(T, lambda: T.nn.RNN(2, 3, bidirectional=True, dtype=T.float64), (6, 2), f64=True)


# ---------------------------------------------------------------- cells
@case
def lstm_cell_default(T):
    return _run(T, lambda: T.nn.LSTMCell(3, 4), (2, 3))


@case
def lstm_cell_states_f64(T):
    return _run(T, lambda: T.nn.LSTMCell(3, 4, dtype=T.float64), (2, 3), states=[(2, 4), (2, 4)], f64=True)


@case
def lstm_cell_unbatched_no_bias(T):
    return _run(T, lambda: T.nn.LSTMCell(3, 4, bias=False), (3,), states=[(4,), (4,)])


@case
def gru_cell_default(T):
    return _run(T, lambda: T.nn.GRUCell(3, 4), (2, 3))


@case
def gru_cell_states_f64(T):
    return _run(T, lambda: T.nn.GRUCell(3, 4, dtype=T.float64), (3, 3), states=[(3, 4)], f64=True)


@case
def gru_cell_unbatched(T):
    return _run(T, lambda: T.nn.GRUCell(2, 3), (2,))


@case
def rnn_cell_default(T):
    return _run(T, lambda: T.nn.RNNCell(3, 4), (2, 3))


@case
def rnn_cell_relu_no_bias_f64(T):
    return _run(T, lambda: T.nn.RNNCell(3, 4, bias=False, nonlinearity="relu", dtype=T.float64), (2, 3),
                states=[(2, 4)], f64=True)


@case
def cells_unrolled_over_time(T):
    """A cell stepped by hand over a sequence, the way tutorials use it."""
    T.manual_seed(31)
    cell = T.nn.LSTMCell(3, 4)
    xs = T.randn(6, 2, 3)
    h = c = T.zeros(2, 4)
    outs = []
    for i in range(xs.shape[0]):
        h, c = cell(xs[i], (h, c))
        outs.append(h)
    loss = T.stack(outs).pow(2).sum()
    loss.backward()
    return [t(loss), [t(p.grad) for p in cell.parameters()]]


@case
def lstm_printed_step_by_step(T):
    """One step at a time from a given state, then the whole sequence at once: printed as torch prints."""
    T.manual_seed(4)
    lstm = T.nn.LSTM(3, 3)
    steps = [T.randn(1, 3) for _ in range(4)]
    state = (T.randn(1, 1, 3), T.randn(1, 1, 3))
    for x in steps:
        out, state = lstm(x.view(1, 1, -1), state)
    printed = [str(out), str(state)]
    whole, final = lstm(T.cat(steps).view(len(steps), 1, -1), (T.randn(1, 1, 3), T.randn(1, 1, 3)))
    return printed + [str(whole), str(final)]


@case
def lstm_tagger_training(T):
    """Embedding -> LSTM -> Linear -> log_softmax, NLLLoss, SGD over two tagged sentences (tutorial style)."""
    T.manual_seed(5)
    data = [([0, 1, 2, 3, 4], [0, 1, 2, 0, 1]), ([5, 6, 2, 7], [0, 1, 2, 0])]

    class Tagger(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = T.nn.Embedding(8, 5)
            self.lstm = T.nn.LSTM(5, 6)
            self.out = T.nn.Linear(6, 3)

        def forward(self, words):
            e = self.embed(words)
            h, _ = self.lstm(e.view(len(words), 1, -1))
            return T.nn.functional.log_softmax(self.out(h.view(len(words), -1)), dim=1)

    model = Tagger()
    opt = T.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(15):
        for words, tags in data:
            model.zero_grad()
            loss = T.nn.functional.nll_loss(model(T.tensor(words)), T.tensor(tags))
            loss.backward()
            opt.step()
            losses.append(loss.item())
    with T.no_grad():
        scores = model(T.tensor(data[0][0]))
    return [losses, t(scores), str(model)]


def _packed(T, make, lengths, enforce_sorted, states=(), f64=False, seed=40):
    """A padded batch packed, run through ``make()``, unpacked; outputs and every gradient."""
    T.manual_seed(seed)
    layer = make()
    R = T.nn.utils.rnn
    x = image(T, max(lengths), len(lengths), 3, f64=f64).requires_grad_(True)
    hx = [image(T, *shape, f64=f64).requires_grad_(True) for shape in states]
    packed = R.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    out, hn = layer(packed, None if not hx else hx[0] if len(hx) == 1 else tuple(hx))
    padded, lens = R.pad_packed_sequence(out, batch_first=True, padding_value=-2.0)
    finals = list(hn) if isinstance(hn, tuple) else [hn]
    loss = 0
    for o in [padded] + finals:
        loss = loss + (o * (T.rand(*o.shape) * 2 - 1).to(o.dtype)).sum()
    loss.backward()
    return {"packed": [t(packed.data), t(packed.batch_sizes), t(packed.sorted_indices), t(packed.unsorted_indices)],
            "out": [t(out.data), t(out.batch_sizes), t(padded), t(lens)], "finals": [t(f) for f in finals],
            "grads": [t(p.grad) for p in layer.parameters()], "x_grad": t(x.grad), "h_grads": [t(h.grad) for h in hx]}


@case
def packed_lstm_bidirectional_unsorted_f64(T):
    return _packed(T, lambda: T.nn.LSTM(3, 4, 2, bidirectional=True, dtype=T.float64), [2, 5, 1, 5, 3], False,
                   states=[(4, 5, 4), (4, 5, 4)], f64=True)


@case
def packed_gru_sorted(T):
    return _packed(T, lambda: T.nn.GRU(3, 4, bidirectional=True), [4, 4, 2, 1], True, states=[(2, 4, 4)])


@case
def packed_rnn_relu_f64(T):
    return _packed(T, lambda: T.nn.RNN(3, 2, nonlinearity="relu", dtype=T.float64), [1, 3, 2], False, f64=True)


@case
def packed_lstm_proj_batch_first_ignored(T):
    return _packed(T, lambda: T.nn.LSTM(3, 4, proj_size=2, batch_first=True), [3, 1, 2], False)


@case
def rnn_utils_functions(T):
    T.manual_seed(41)
    R = T.nn.utils.rnn
    seqs = [T.randn(n, 2) for n in (2, 4, 1)]
    packed = R.pack_sequence(seqs, enforce_sorted=False)
    padded, lens = R.pad_packed_sequence(packed, total_length=6)
    return [t(R.pad_sequence(seqs)), t(R.pad_sequence(seqs, batch_first=True, padding_value=9.0)),
            t(R.pad_sequence(seqs, padding_side="left")), [t(v) for v in packed], t(padded), t(lens),
            [t(s) for s in R.unpack_sequence(packed)], [t(s) for s in R.unpad_sequence(padded, lens)],
            [t(v) for v in R.pack_sequence(sorted(seqs, key=len, reverse=True))]]


@case
def printed_models(T):
    return [repr(m) for m in (
        T.nn.LSTM(3, 4, 2, bias=False, batch_first=True, dropout=0.0, bidirectional=True, proj_size=2),
        T.nn.RNN(3, 4, nonlinearity="relu", dropout=0.5, num_layers=2), T.nn.GRU(3, 4, dropout=1),
        T.nn.GRUCell(3, 4, bias=False), T.nn.RNNCell(3, 4, nonlinearity="relu"), T.nn.LSTMCell(2, 2),
        T.nn.Sequential(T.nn.Embedding(10, 3), T.nn.GRU(3, 5, batch_first=True)))]


@case
def all_weights_shapes(T):
    m = T.nn.LSTM(3, 5, 2, bidirectional=True, proj_size=2)
    return [[list(p.shape) for p in group] for group in m.all_weights] + [m._flat_weights_names]


if __name__ == "__main__":
    sys.exit(spec_runner.main(CASES, sys.argv))
