"""Helper calls return only the results their callers read (gradc/backends/c/call_outputs.py).

Checked against the user's function run by NumPy and against central differences, and on the emitted C:
a helper whose first result is never read takes one output buffer, not two.
"""
import re

import numpy as np
import pytest
from finite_differences import central_gradient as central_differences

import gradc
from gradc.backends.c.build import find_compiler
from gradc.backends.c.call_outputs import prune_call_outputs
from gradc.trace import trace

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")


def pair(x):
    return np.exp(x) @ x.T, np.sin(x)


def second_only(x):
    _, b = pair(x)
    _, d = pair(2.0 * x)
    return np.sum(b) + np.sum(d * d)


def helper_outputs(source: str, name: str) -> int:
    """How many output buffers the C helper ``name`` takes."""
    line = next(line for line in source.splitlines() if re.match(rf"static \w+ {name}\(", line))
    return len(re.findall(r"double \*restrict out\d*", line))


def test_a_result_no_caller_reads_is_not_computed():
    x = np.random.default_rng(0).random((3, 4))
    compiled = gradc.compile(second_only, x, target="c")
    assert helper_outputs(compiled.source, "gradc_call_pair") == 1  # sin only: exp(x) @ x.T is gone
    assert "gradc_exp" not in compiled.source.split("gradc_call_pair(")[1].split("\n}\n")[0]
    value, grad = compiled.value_and_grad(x)
    assert np.isclose(value, second_only(x), rtol=1e-13)
    np.testing.assert_allclose(grad, central_differences(second_only, x), rtol=1e-6, atol=1e-8)


def test_kmeans_direction_skips_the_distance_tangent():
    """The Hessian-vector product of k-means reads only the centroid term of the distances' tangent."""
    def cost(points, centroids):
        d = (np.sum(points ** 2, 1)[None, :] + np.sum(centroids ** 2, 1)[:, None]
             - 2 * centroids @ points.T)
        return np.min(d, axis=0).sum()

    def direction(P, C):
        g, h = gradc.jvp(lambda c: gradc.grad(cost, argnums=1)(P, c), (C,), (np.ones_like(C),))
        return g / h

    rng = np.random.default_rng(1)
    P = rng.random((40, 3))
    C = P[-4:].copy()
    c_fn = gradc.jit(direction, target="c")
    got = c_fn(P, C)
    nearest = np.argmin(((P[:, None, :] - C[None]) ** 2).sum(-1), axis=1)
    closed = np.stack([C[j] - P[nearest == j].mean(0) for j in range(len(C))])  # the eval's closed form
    np.testing.assert_allclose(got, closed, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, gradc.jit(direction)(P, C), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_random_selections_of_results_agree_with_numpy(seed):
    """Seeded generator: a helper of three results, the caller reading a random subset of them in a random
    order (one read twice), value and gradient against NumPy and central differences."""
    rng = np.random.default_rng(seed)
    picks = [int(k) for k in rng.choice(3, size=int(rng.integers(1, 4)), replace=True)]
    scale = float(rng.uniform(0.5, 2.0))

    def three(x):
        return np.tanh(x) * scale, np.cos(x) @ x.T, np.log1p(x * x)

    def f(x):
        first = three(x)
        second = three(x + 1.0)
        return sum(np.sum(first[k] * second[k]) for k in picks)

    x = rng.random((2, 3))
    compiled = gradc.compile(f, x, target="c")
    value, grad = compiled.value_and_grad(x)
    assert np.isclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(grad, central_differences(f, x), rtol=1e-6, atol=1e-8)
    unread = 3 - len(set(picks))
    if unread:  # fewer outputs than the helper has results
        assert helper_outputs(compiled.source, "gradc_call_three") == 3 - unread


def test_every_result_read_keeps_the_body():
    def f(x):
        a, b = pair(x)
        c, d = pair(x + 1.0)
        return np.sum(a) + np.sum(b) + np.sum(c * d[:, :3])

    graph = trace(f, np.ones((3, 4)))
    assert prune_call_outputs(graph) is graph

