"""Forward mode through integer values: an index computed from the input (``np.int64(W[:, -1])``, ``argmax``,
``astype(int)``, ``//``) has no tangent, so an op it steers (a gather, a take) is differentiated in its float
operand only. Before, the cast's tangent was an integer array and the gather read it as the index (wrong
numbers). Checked on a seeded generator against central differences and reverse mode."""
import numpy as np
import pytest
from finite_differences import central_gradient

import gradc

INDICES = [
    "np.int64(W[:, -1])",
    "W[:, 0].astype(np.int64)",
    "np.argmax(W, axis=1)",
    "(np.abs(W[:, 1]) * 2.0).astype(np.int64) % 3",
    "np.int64(np.floor(W[:, 2])) // 2",
]
USES = [
    "W[{i}]",
    "W[{i}, 1]",
    "W[:, :-1][{i}]",
    "np.take(W[:, 0], {i})",
    "W[{i}] * np.sin(W)",
]


def _program(seed: int):
    rng = np.random.default_rng(seed)
    index = INDICES[int(rng.integers(len(INDICES)))]
    use = USES[int(rng.integers(len(USES)))].format(i="idx")
    source = f"def f(W):\n    idx = {index}\n    return np.sum(({use}) ** 2 * 0.5) + np.sum(idx * 1.0)\n"
    namespace = {"np": np}
    exec(compile(source, f"<integer tangents {seed}>", "exec"), namespace)
    return namespace["f"], source


@pytest.mark.parametrize("seed", range(20))
def test_jvp_through_indices_computed_from_the_input(seed):
    f, source = _program(seed)
    rng = np.random.default_rng(100 + seed)
    W = rng.uniform(-2.4, 2.4, (5, 4))
    W = np.where(np.abs(W - np.round(W)) < 0.05, W + 0.1, W)  # away from integer steps: differences are clean
    V = rng.standard_normal(W.shape)
    value, tangent = gradc.jvp(f, (W,), (V,))
    numeric = float(np.sum(central_gradient(f, W) * V))
    assert value == pytest.approx(f(W)), source
    assert tangent == pytest.approx(numeric, rel=1e-6, abs=1e-8), source
    assert tangent == pytest.approx(float(np.sum(gradc.grad(f)(W) * V)), rel=1e-10, abs=1e-12), source


def test_an_integer_output_has_a_zero_tangent():
    def counts(x):
        return np.sum(np.int64(x * 3.0) * 1.0)
    value, tangent = gradc.jvp(counts, (np.array([0.4, 1.2]),), (np.ones(2),))
    assert value == counts(np.array([0.4, 1.2])) and tangent == 0.0
