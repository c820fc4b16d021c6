"""A seeded generator of programs that collect lists in loops and return from inside loops (tests/trace).

Each program is Python source of ``def prog(x, w, c)`` (``x``: f64[4], ``w``: a float, ``c``: f64[8])
returning a float; the tests run it as Python and compiled by gradc and compare values and gradients.

>>> import random
>>> "def prog(x, w, c):" in list_program(random.Random(0))
True
"""
from __future__ import annotations

ITERABLES = ["range({T})", "reversed(range({T}))", "range({T} - 1, -1, -1)", "range(1, 2 * {T}, 2)",
             "range(2 * {T} - 1, 0, -2)", "M"]
USES = [
    "np.sum(np.stack(ys))",
    "np.sum(np.array(ys) ** 2)",
    "np.sum(np.asarray(ys) * 0.5)",
    "np.sum(np.concatenate(ys))",
    "np.sum(np.vstack(ys))",
    "np.sum(np.hstack(ys))",
    "np.sum(sum(ys))",
    "np.sum(ys[1])",
    "np.sum(ys[-1])",
    "np.sum(np.stack(ys[1:3]))",
    "len(ys) * np.sum(ys[0])",
    "loop",
    "reversed loop",
    "np.mean(ys)",
]


def list_program(rng) -> str:
    """A loop appending to ``ys`` (maybe a second list of pairs ``zs``), then a few uses of the lists."""
    T = rng.randint(2, 4)
    iterable = rng.choice(ITERABLES).format(T=T)
    lines = ["def prog(x, w, c):", "    M = np.outer(c[:3], x) * 0.3", "    h = x * 0.5"]
    prefix = rng.random() < 0.4
    lines.append("    ys = [x * 0.1]" if prefix else "    ys = []")
    pairs = rng.random() < 0.3
    if pairs:
        lines.append("    zs = []")
    item = "row" if iterable == "M" else "i"
    lines.append(f"    for {item} in {iterable}:")
    term = "row * 0.2" if iterable == "M" else rng.choice(["c[i] * 0.3", "x[i % 4] * 0.2", "0.1 * i"])
    lines.append(f"        h = np.tanh(h * w + {term})")
    appended = False
    if rng.random() < 0.3:
        lines += ["        if np.sum(h) > 0.3:", "            ys.append(h * 2.0)", "        else:",
                  "            ys.append(h - 0.1)"]
        appended = True
    else:
        lines.append(rng.choice(["        ys.append(h)", "        ys += [np.sin(h)]", "        ys.extend([h * w])"]))
        appended = True
    if rng.random() < 0.3:
        lines.append("        ys.append(np.cos(h))")
    if appended and rng.random() < 0.4:
        lines.append(rng.choice(["        h = h + 0.1 * ys[-1]", "        h = h - 0.05 * ys[len(ys) - 2]"
                                 if prefix else "        h = h + 0.2 * ys[-1]"]))
    if pairs:
        lines.append("        zs.append((h, h * w))")
    lines.append("    out = 0.0")
    for use in rng.sample(USES, rng.randint(1, 3)):
        if use == "loop":
            lines += ["    for y in ys:", "        out = out * 0.5 + np.sum(y)"]
        elif use == "reversed loop":
            lines += ["    for y in reversed(ys):", "        out = out * 0.7 + np.sum(y * y)"]
        else:
            lines.append(f"    out = out + {use}")
    if pairs:
        lines.append(rng.choice(["    out = out + sum(np.sum(a * b) for a, b in zs)",
                                 "    out = out + np.sum(zs[-1][1])"]))
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def return_program(rng) -> str:
    """``return`` inside ``while True:``, a nested traced loop, or under traced ``if``s in them (``s`` grows every
    iteration, so ``while True:`` ends)."""
    J = rng.randint(1, 3)
    outer = rng.choice(["while True:", f"for i in range({rng.randint(2, 4)}):"])
    lines = ["def prog(x, w, c):", "    s = np.sum(x) * 0.1 + 0.2", f"    {outer}"]
    if rng.random() < 0.5:
        lines += [f"        for j in range({J}):",
                  "            s = s + 0.3 * w + np.sin(s) * 0.05 + 0.1 * j + c[j] * 0.05",
                  f"            if s > {rng.uniform(1.0, 2.0):.3f}:",
                  rng.choice(["                return s * (j + 1.0)", "                return s + np.sum(x) * j"])]
    else:
        lines += ["        s = s + 0.4 * w + np.sin(s) * 0.05 + c[0] * 0.05",
                  f"        if s > {rng.uniform(1.0, 2.0):.3f}:",
                  "            return s * 2.0"]
    if rng.random() < 0.5:
        lines += [f"        if s < {rng.uniform(-1.0, 0.0):.3f}:", "            return -s"]
    lines.append("        s = s + 0.25")
    if outer.startswith("for"):
        lines.append("    return s - 1.0")
    return "\n".join(lines) + "\n"
