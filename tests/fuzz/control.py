"""Seeded programs in the style of autograd's and Tangent's tests: Python control flow on traced and
static values, closures, lists built in loops, index assignment and augmented assignment, ``break``
and ``while`` with a traced condition, integer index arithmetic.

Each program updates a state ``h`` (a float vector of length ``n``) from inputs ``x`` (length ``n``),
``w`` (length ``n``) and a scalar ``s``, then returns a scalar. Checked like the sweep cases
(``tests/fuzz/checks.py``): both targets against NumPy running the program and central differences.

>>> case = next(generate(1, seed=3))
>>> case.source.splitlines()[0]
'def prog(x, w, s):'
"""
from __future__ import annotations

import numpy as np

from .sweep import Case
from .sweep import generate as generate_cases


def _c(rng, lo=-0.9, hi=0.9):
    return round(float(rng.uniform(lo, hi)), 3)


def _statement(rng, n):
    """Lines (indented by four) of one random statement that reads and writes ``h``."""
    kind = int(rng.integers(0, 17))
    a, b = _c(rng), _c(rng)
    j = int(rng.integers(-n, n))
    if kind == 0:
        return [f"h = np.tanh(h * w + {a} * s)"]
    if kind == 1:
        k = int(rng.integers(0, 4))
        return [f"for i in range({k}):", f"    h = h * {abs(a)} + np.sin(h) * w[(i * 2 + 1) % {n}]"]
    if kind == 2:
        return [f"if np.sum(h) > {a}:", f"    h = h * w + {b}", "else:", f"    h = np.cos(h) - s * {b}"]
    if kind == 3:
        return ["k = 0", f"while np.sum(h * h) < {abs(a) * n + 0.5} and k < 3:", f"    h = h * 1.3 + {b}",
                "    k += 1"]
    if kind == 4:
        return ["def g(v):", f"    return np.exp(-v * v) * w + {a}", "h = g(h) + g(h[::-1]) * s"]
    if kind == 5:
        return ["h = h.copy()", f"h[{j}] = h[{j}] * s + {a}"]
    if kind == 6:
        return ["h = h.copy()", f"h[1:] += h[:-1] * {a}"]  # overlapping views: NumPy reads before writing
    if kind == 7:
        return [f"parts = [h[i] * w[({n} - 1 - i)] + {a} * i for i in range({n})]", "h = np.array(parts)"]
    if kind == 8:
        return ["acc = []", f"for i in range({n}):", f"    acc.append(np.sum(h[:i + 1]) * {a})",
                "h = h + np.stack(acc)"]
    if kind == 9:
        return ["h = h * 1.0", "h *= w", f"h -= {a}", "h /= 1.5"]
    if kind == 10:
        return [f"h = np.where(h > s, h * {a}, w - h)"]
    if kind == 11:
        return ["for i in range(4):", f"    if np.max(h) > {abs(a) + 0.5}:", "        break",
                f"    h = h * 1.25 + {b}"]
    if kind == 12:
        return ["total = 0.0", "for v in h:", f"    total = total + v * {a}", "h = h + total"]
    if kind == 13:
        return [f"h = np.cumsum(h * {a})[::-1] + w"]
    if kind == 14:
        return ["lo, hi = h[:1], h[1:]", f"h = np.concatenate([hi * {a}, lo + s])"]
    if kind == 15:
        return [f"m = {j % n}", "h = h.copy()", f"h[m], h[0] = h[0] * {a}, h[m] + s"]  # swap-like tuple write
    return [f"h = h + s * np.dot(h, w) * {a}"]


def one_case(rng):
    n = int(rng.integers(1, 5))
    dtype = np.float32 if rng.integers(0, 5) == 0 else np.float64
    lines = ["h = x * 1.0"]
    for _ in range(int(rng.integers(1, 5))):
        lines += _statement(rng, n)
    lines.append(f"return np.sum(h * h) * {_c(rng, 0.2, 1.0)} + np.sum(h)")
    source = "def prog(x, w, s):\n" + "".join(f"    {line}\n" for line in lines)
    x = rng.uniform(-1, 1, n).astype(dtype)
    w = rng.uniform(-1, 1, n).astype(dtype)
    s = float(rng.uniform(-1, 1)) if dtype == np.float64 else np.float32(rng.uniform(-1, 1))
    case = Case(source, [x, w, s], [0, 1, 2], dtype)
    try:
        with np.errstate(all="ignore"):
            value = case.function()(*case.args)
    except Exception:  # noqa: BLE001 - NumPy refuses (e.g. a shape that no longer fits): not a case
        return None
    if not np.isfinite(value) or abs(value) > 1e4:
        return None
    return case


def generate(n, seed):
    """``n`` programs from ``seed``."""
    return generate_cases(n, seed, one_case)
