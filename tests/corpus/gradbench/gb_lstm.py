"""GradBench ``lstm`` (ADBench's): a stacked LSTM with diagonal weights over a character sequence.

The objective is ADBench's as its Python tools write it: per layer ``gates = concat(input, hidden,
input, hidden) * weight + bias``; ``predict`` copies the state, overwrites two rows per layer in a loop
(``s2[i], s2[i + 1] = lstm(...)``); the loss normalises with Python's ``sum(exp(ypred), 2)`` (a start
of 2: ADBench's quirk, kept by GradBench's C++ reference too). Gradient in ``main_params`` and
``extra_params``. Inputs: ``l`` layers in {2, 4, 6}, ``c`` characters in {1024, 4096, 8192} of a text,
each character as ``b`` bits (7 for ASCII); parameters and state ``random((..))``.
"""
from __future__ import annotations

import numpy as np

DEFAULT_SIZE = (2, 1024, 7)  # (layers, characters, bits): the eval's smallest default
SMALL_SIZE = (2, 4, 3)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lstm(weight, bias, hidden, cell, _input):
    gates = np.concatenate((_input, hidden, _input, hidden)) * weight + bias
    hsize = hidden.shape[0]
    forget = sigmoid(gates[0:hsize])
    ingate = sigmoid(gates[hsize:2 * hsize])
    outgate = sigmoid(gates[2 * hsize:3 * hsize])
    change = np.tanh(gates[3 * hsize:])
    cell = cell * forget + ingate * change
    hidden = outgate * np.tanh(cell)
    return hidden, cell


def predict(w, w2, s, x):
    s2 = s.copy()
    x = x * w2[0]
    for i in range(0, len(s), 2):
        s2[i], s2[i + 1] = lstm(w[i], w[i + 1], s[i], s[i + 1], x)
        x = s2[i]
    return x * w2[1] + w2[2], s2


def lstm_objective(main_params, extra_params, state, sequence):
    total = 0.0
    count = 0
    _input = sequence[0]
    all_states = [state]
    for t in range(0, len(sequence) - 1):
        ypred, new_state = predict(main_params, extra_params, all_states[t], _input)
        all_states.append(new_state)
        ynorm = ypred - np.log(sum(np.exp(ypred), 2))
        ygold = sequence[t + 1]
        total += sum(ygold * ynorm)
        count += ygold.shape[0]
        _input = ygold
    return -total / count


def generate(size=SMALL_SIZE, seed=31337):
    layers, chars, bits = size
    rng = np.random.RandomState(seed)
    codes = rng.randint(32, 127, size=chars)  # printable ASCII, as the eval's text
    sequence = ((codes[:, None] >> np.arange(bits - 1, -1, -1)[None, :]) & 1).astype(np.float64)
    return {"main_params": rng.random_sample((2 * layers, 4 * bits)),
            "extra_params": rng.random_sample((3, bits)),
            "state": rng.random_sample((2 * layers, bits)),
            "sequence": sequence}


def objective_by_hand(main_params, extra_params, state, sequence):
    """The same objective written independently: one layer at a time, the ``+ 2`` explicit."""
    bits = state.shape[1]
    layers = state.shape[0] // 2
    hidden = [state[2 * k].copy() for k in range(layers)]
    cell = [state[2 * k + 1].copy() for k in range(layers)]
    total = 0.0
    for t in range(len(sequence) - 1):
        x = sequence[t] * extra_params[0]
        for k in range(layers):
            w, b = main_params[2 * k], main_params[2 * k + 1]
            f = 1 / (1 + np.exp(-(x * w[:bits] + b[:bits])))
            ig = 1 / (1 + np.exp(-(hidden[k] * w[bits:2 * bits] + b[bits:2 * bits])))
            og = 1 / (1 + np.exp(-(x * w[2 * bits:3 * bits] + b[2 * bits:3 * bits])))
            ch = np.tanh(hidden[k] * w[3 * bits:] + b[3 * bits:])
            cell[k] = cell[k] * f + ig * ch
            hidden[k] = og * np.tanh(cell[k])
            x = hidden[k]
        y = x * extra_params[1] + extra_params[2]
        total += np.dot(sequence[t + 1], y - np.log(np.exp(y).sum() + 2))
    return -total / ((len(sequence) - 1) * bits)
