"""A seeded generator of fill-style programs: arrays written by index inside loops, as users write them.

Each program is the source text of a module defining ``f(x)`` (``x`` a float vector, or ``f(X)``
for a matrix) and, where it calls one, a helper. Statements come from the shapes users write:
writes at counter-derived indices (``out[i]``, ``out[i - 1]``, ``out[n - 1 - i]``), tuple targets
(``out[i - 1], out[i] = a, b``), slices (``Y[:, j] = ...``, ``Y[i, :] += ...``), augmented
writes (``+=``, ``-=``, ``*=``), reads of earlier slots (``out[i - 1] * 0.5``), ``np.add.at``,
``if`` on a traced value inside the loop, helpers that write and return the array, writes
through a row view (``Y[i][j] = ...``), and nested loops. The function is run by NumPy as the
reference; values stay bounded (products by constants below one, ``sin``/``tanh``).

>>> import random
>>> src = program(random.Random(0))
>>> "def f(" in src and "for " in src
True
"""
from __future__ import annotations

import random

_VECTOR_STATEMENTS = ("set", "aug", "tuple", "recurrence", "branch", "add_at", "helper", "reverse_index")
_MATRIX_STATEMENTS = ("column", "row_aug", "cell", "through_row", "nested")


def _scalar(rng: random.Random, i: str, lo: int) -> str:
    """An expression of the loop's entries: bounded, differentiable."""
    atoms = [f"x[{i}]", f"np.sin(x[{i}])", f"np.tanh(x[{i}])", f"x[{i}] * x[{i}]"]
    if lo >= 1:
        atoms += [f"x[{i} - 1]", f"np.cos(x[{i} - 1])"]
    a, b = rng.choice(atoms), rng.choice(atoms)
    op = rng.choice(["+", "-", "*"])
    c = rng.choice(["0.5", "1.5", "-0.75"])
    return f"{c} * {a} {op} {b}"


def _vector_statement(rng: random.Random, kind: str, lo: int, helper: list) -> list:
    e = _scalar(rng, "i", lo)
    if kind == "set":
        return [f"out[i] = {e}"]
    if kind == "aug":
        op = rng.choice(["+=", "-=", "*="])
        return [f"out[i] {op} {e}"]
    if kind == "tuple" and lo >= 1:
        return [f"out[i - 1], out[i] = out[i] + {e}, {_scalar(rng, 'i', lo)}"]
    if kind == "recurrence" and lo >= 1:
        return [f"out[i] = out[i - 1] * 0.5 + {e}"]
    if kind == "branch":
        return ["if x[i] > 0.1:", f"    out[i] = {e}", "else:", f"    out[i] += {_scalar(rng, 'i', lo)}"]
    if kind == "add_at":
        return [f"np.add.at(out, i % 3, {e})"]
    if kind == "helper":
        helper.append(["def _write(out, x, i):", f"    out[i] = out[i] * 0.25 + {e}", "    return out"])
        return ["out = _write(out, x, i)"]
    if kind == "reverse_index":
        return [f"out[n - 1 - i] = out[n - 1 - i] * 0.5 + {e}"]
    return [f"out[i] = {e}"]


def _vector_program(rng: random.Random) -> str:
    lo = rng.choice([0, 1])
    start = rng.choice(["np.zeros(n)", "x.copy()", "np.ones(n) * 0.5", "x * 0.0"])
    helper: list = []
    body = []
    for _ in range(rng.randint(1, 3)):
        body += _vector_statement(rng, rng.choice(_VECTOR_STATEMENTS), lo, helper)
    loss = rng.choice(["np.sum(out * out)", "np.sum(np.sin(out) * x)", "np.sum(out) + out[0] * out[-1]"])
    lines = [*helper[-1:][0]] if helper else []
    lines += ["", "def f(x):", "    n = x.shape[0]", f"    out = {start}", f"    for i in range({lo}, n):"]
    lines += ["        " + s for s in body]
    lines += [f"    return {loss}"]
    return "\n".join(lines) + "\n"


def _matrix_program(rng: random.Random) -> str:
    kind = rng.choice(_MATRIX_STATEMENTS)
    start = rng.choice(["np.zeros(X.shape)", "X.copy()", "X * 0.5"])
    if kind == "column":
        loop = ["for j in range(X.shape[1]):", "    Y[:, j] = np.sin(X[:, j]) * (j + 1) + Y[:, j] * 0.5"]
    elif kind == "row_aug":
        loop = ["for i in range(X.shape[0]):", "    Y[i, :] += np.tanh(X[i, :]) * X[i, 0]"]
    elif kind == "cell":
        loop = ["for i in range(1, X.shape[0]):", "    Y[i, 1] = Y[i - 1, 1] * 0.5 + X[i, 0] * X[i, 2]"]
    elif kind == "through_row":
        loop = ["for i in range(X.shape[0]):", "    Y[i][0] = np.sin(X[i, 1]) * X[i, 0]"]
    else:
        loop = ["for i in range(X.shape[0]):", "    for j in range(X.shape[1]):",
                "        Y[i, j] = Y[i, j] * 0.5 + X[i, j] * X[j % X.shape[0], i % X.shape[1]]"]
    loss = rng.choice(["np.sum(Y * Y)", "np.sum(np.sin(Y) * X)"])
    lines = ["def f(X):", f"    Y = {start}"] + ["    " + s for s in loop] + [f"    return {loss}"]
    return "\n".join(lines) + "\n"


def program(rng: random.Random) -> str:
    """The source of one random program (a module with ``import numpy as np`` and ``f``)."""
    body = _matrix_program(rng) if rng.random() < 0.3 else _vector_program(rng)
    return "import numpy as np\n\n\n" + body
