"""Seeded random "fill" programs: arrays written in loops and branches, as users write them.

``fill_program(seed)`` is the source of a function ``f(x)`` (``x`` of shape ``(6,)``, or
``(3, 4)`` for the nested-loop kind) that allocates an array, fills it in a ``for`` loop by
index assignment (at the counter, at counter-derived positions, tuple targets, ``+=``,
whole columns), reading its earlier slots and taking branches on data, and returns a
scalar of it; a snapshot read after later writes checks that no emitted code writes into
storage a value still needs. The test files import the source from a file (gradc reads the
source of loops) and compare against the function run by NumPy.

>>> "def f(x):" in fill_program(0)
True
"""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np

N = 6
SHAPE_2D = (3, 4)


def _expr(rng, reads: list) -> str:
    """A random smooth expression of ``x[i]`` and the slots in ``reads``."""
    atoms = ["x[i]", "np.sin(x[i])", "np.cos(x[i]) * 0.5", "(x[i] * x[i])"] + reads
    terms = [str(rng.choice(atoms)) for _ in range(int(rng.integers(1, 4)))]
    ops = [str(rng.choice([" + ", " * ", " - "])) for _ in terms[1:]]
    text = terms[0] + "".join(o + t for o, t in zip(ops, terms[1:]))
    return f"0.5 * ({text})" if rng.random() < 0.5 else text


def _statement(rng, reads) -> list:
    """One or two lines writing ``out`` inside the loop (indented by the caller)."""
    kind = int(rng.integers(0, 6))
    if kind == 0:
        return [f"out[i] = {_expr(rng, reads)}"]
    if kind == 1:
        return [f"out[i] += {_expr(rng, reads)}"]
    if kind == 2:
        return [f"out[(i + {int(rng.integers(1, N))}) % {N}] = {_expr(rng, reads)}"]
    if kind == 3:
        return [f"out[i], out[(i + 1) % {N}] = {_expr(rng, reads)}, {_expr(rng, reads)}"]
    if kind == 4:
        lines = [f"if x[i] > {rng.uniform(-0.5, 0.5):.2f}:", f"    out[i] = {_expr(rng, reads)}"]
        if rng.random() < 0.5:
            lines += ["else:", f"    out[(i + 2) % {N}] += {_expr(rng, reads)}"]
        return lines
    return [f"out[(i + {N - 1}) % {N}] += 0.25 * out[i] * x[i]"]


def fill_program(seed: int) -> str:
    """The source of a random fill program ``f(x)`` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    if seed % 5 == 4:
        return _nested_program(rng)
    start = str(rng.choice(["np.zeros(n)", "x.copy()", "x * 0.5", "np.ones(n) * 0.1", "base.copy()", "base * 1.0"]))
    # base: a value read in the loop that the array starts as (a copy the optimiser may remove)
    lines = ["def f(x):", "    n = x.shape[0]", "    base = np.tanh(x) * 2.0", f"    out = {start}"]
    snapshot = rng.random() < 0.5
    first = int(rng.integers(1, 3))
    lines.append(f"    for i in range({first}, n):")
    reads = ["out[i - 1]", f"out[(i + 1) % {N}]", "out[i]", f"base[(i + 2) % {N}]"]
    for _ in range(int(rng.integers(1, 4))):
        lines += ["        " + s for s in _statement(rng, reads)]
    if snapshot:  # a copy read after the array is written again: an aliasing bug shows in the value
        lines.append("    before = out * 1.0")
        lines.append("    for i in range(n):")
        lines.append(f"        out[i] = out[i] * {rng.uniform(0.5, 1.5):.2f} + x[i]")
        lines.append("    return np.sum(out * out) + np.sum(before * x) + np.sum(base)")
    else:
        lines.append(f"    return np.sum(out * x) + {rng.uniform(0, 1):.2f} * np.sum(np.sin(out) * base)")
    return "\n".join(lines) + "\n"


def _nested_program(rng) -> str:
    """Nested loops filling a matrix element by element, or column by column."""
    if rng.random() < 0.5:
        body = ["        for j in range(k):",
                "            out[i, j] = np.sin(X[i, j]) * X[i, (j + 1) % k] + 0.5 * out[i, j - 1]"]
    else:
        body = ["        out[i, :] = np.tanh(X[i, :]) * (i + 1)",
                "        if X[i, 0] > 0.0:",
                "            out[i, 1] += X[i, 2] * X[i, 3]"]
    return "\n".join(["def f(X):", "    m, k = X.shape", "    out = np.zeros((m, k))", "    for i in range(m):",
                      *body, "    return np.sum(out * X) + np.sum(out * out)"]) + "\n"


def argument(seed: int) -> np.ndarray:
    """The argument of program ``seed``, away from its branches' thresholds by chance only."""
    rng = np.random.default_rng(1000 + seed)
    shape = SHAPE_2D if seed % 5 == 4 else (N,)
    return rng.uniform(-1.0, 1.0, shape)


def load(source: str, directory: pathlib.Path, name: str):
    """``f`` of ``source``, imported from a file in ``directory`` (so its source can be read)."""
    path = directory / f"{name}.py"
    path.write_text("import numpy as np\n\n\n" + source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f
