"""Seeded tensor programs as PyTorch users write them, run on real torch and on ``gradc.torch``.

A program is a list of steps over named values; each step is a line of Python calling ``torch``
(the module under test is bound to that name), so a failing case prints as code. Leaves are
float32 or float64 tensors with ``requires_grad=True``; the last value is summed with fixed weights
and ``backward()`` runs, so every entry carries its own cotangent.

>>> p = generate(1, seed=0)[0]
>>> p.lines[0].startswith("v")
True
"""
from __future__ import annotations

import numpy as np

# unary steps over {a}: (template, whether the result keeps the operand's shape)
UNARY = [
    ("torch.exp({a} * 0.5)", True), ("torch.tanh({a})", True), ("torch.sigmoid({a})", True), ("torch.relu({a})", True),
    ("torch.sin({a})", True), ("{a} ** 2", True), ("torch.log({a}.abs() + 1.0)", True),
    ("torch.sqrt({a} * {a} + 0.5)", True), ("{a}.abs()", True), ("torch.clamp({a}, -0.5, 0.7)", True), ("-{a}", True),
    ("{a} * 3.0 - 1.0", True), ("torch.softmax({a}, dim=-1)", True), ("torch.log_softmax({a}, dim=-1)", True),
    ("{a}.cumsum(dim=-1)", True), ("{a}.flip(-1)", True), ("torch.where({a} > 0, {a}, {a} * 0.1)", True),
    ("torch.nn.functional.gelu({a})", True), ("torch.nn.functional.softplus({a})", True), ("{a}.exp().log()", True),
    ("{a}.sum(dim=-1, keepdim=True)", False), ("{a}.mean(dim=0)", False), ("{a}.max(dim=-1).values", False),
    ("{a}.t()", False), ("{a}.reshape(-1)", False), ("{a}.unsqueeze(0)", False), ("{a}[..., :2]", False),
    ("{a}.norm()", False), ("{a}.var(dim=-1)", False), ("{a}.prod(dim=0)", False), ("{a}.amin(dim=-1)", False),
]
# binary steps over {a} and {b} of one shape: (template, whether the result keeps that shape)
BINARY = [("{a} + {b}", True), ("{a} - {b}", True), ("{a} * {b}", True), ("{a} / ({b}.abs() + 0.5)", True),
          ("torch.maximum({a}, {b})", True), ("torch.minimum({a}, {b})", True), ("torch.atan2({a}, {b})", True),
          ("{a} * {b}.sum()", True), ("torch.hypot({a}, {b})", True), ("torch.cat([{a}, {b}], dim=-1)", False),
          ("torch.stack([{a}, {b}]).sum(dim=0)", True), ("{a} @ {b}.t()", False)]


class Program:
    """``lines`` of Python over ``v0..vN`` (leaves first), run by ``run(torch_module, leaves)``."""

    def __init__(self, leaves, lines, dtype):
        self.leaves, self.lines, self.dtype = leaves, lines, dtype

    def __repr__(self):
        shapes = [leaf.shape for leaf in self.leaves]
        return f"Program(dtype={self.dtype.__name__}, leaves={shapes})\n" + "\n".join(self.lines)

    def run(self, torch):
        """``(values, leaves)``: every value the program computes, and its leaf tensors after ``backward``."""
        leaves = [torch.tensor(leaf, requires_grad=True) for leaf in self.leaves]
        env = {"torch": torch, **{f"v{i}": t for i, t in enumerate(leaves)}}
        for line in self.lines:
            exec(line, env)
        values = [env[f"v{i}"] for i in range(len(self.leaves) + len(self.lines) - 1)]
        loss = env["loss"]
        loss.backward()
        return values + [loss], leaves


def one_program(rng) -> Program:
    dtype = (np.float32, np.float64)[rng.integers(2)]
    shape = (int(rng.integers(1, 4)), int(rng.integers(2, 5)))
    leaves = [rng.uniform(-1.5, 1.5, shape).astype(dtype) for _ in range(int(rng.integers(1, 3)))]
    full = [f"v{i}" for i in range(len(leaves))]  # the values of the leaves' shape
    lines, count = [], len(leaves)
    for _ in range(int(rng.integers(2, 6))):
        name = f"v{count}"
        count += 1
        if len(full) >= 2 and rng.random() < 0.4:
            a, b = (str(v) for v in rng.choice(full, 2, replace=False))
            template, keeps = BINARY[rng.integers(len(BINARY))]
            lines.append(f"{name} = " + template.format(a=a, b=b))
        else:
            template, keeps = UNARY[rng.integers(len(UNARY))]
            lines.append(f"{name} = " + template.format(a=full[-1]))
        if keeps:
            full.append(name)
    last = f"v{count - 1}"
    lines.append(f"loss = ({last} * torch.arange(1.0, {last}.numel() + 1.0, dtype={last}.dtype)"
                 f".reshape({last}.shape)).sum()")
    return Program(leaves, lines, dtype)


def generate(n: int, seed: int) -> list:
    """``n`` programs from ``seed``."""
    rng = np.random.default_rng(seed)
    return [one_program(rng) for _ in range(n)]
