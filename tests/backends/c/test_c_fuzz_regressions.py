"""Programs random testing found the C target (and once the folder) getting wrong, each as its minimal form.

Each is compiled to C and checked against the NumPy target, the reference interpreter
and central finite differences (``tests/test_random_programs.py`` runs the generator).
"""
import numpy as np
import pytest

import gradc
from gradc.backends.c.build import find_compiler
from gradc.ir.interpret import evaluate

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")


def where_of_reductions(c, b):
    # SymPy called ``t0 - ite(...)`` non-real and refused to compare it (a raw TypeError)
    return np.maximum(np.sum(c), np.where(np.sum(c) > 0.1, np.minimum(c[2], b), 0.3))


def gather_of_broadcast_scalar(x):
    # the broadcast scalar has no array to index: the C read ``t0[G0[k] + 0*a0]`` of a local
    return np.sum((np.sum(x) + np.zeros(4))[np.array([2, 0, 1, 0])])


def gather_of_constant(x):
    return np.sum(x * np.full(4, 2.5)[np.array([1, 3, 3])])


def gather_of_broadcast_row(x):
    return np.sum((x[0] + np.zeros((3, 2)))[np.array([2, 0, 2])] * x)


def gather_at_broadcast_index(x, y):
    # the index array is a broadcast scalar (a local): there is no index array to read either
    return np.sum(x[np.argmax(y) + np.zeros(3, dtype=np.int64)] * y)


def flattened_new_axis(x):
    # fold turned broadcast_to(reshape(x[None, :, 0:], (4,)), (1, 4)) into a broadcast of the 3-d value
    # (NumPy target: "input operand has more dimensions than allowed"); found by the NumPy fuzzer
    return np.sum(x[None, :, 0:].reshape(-1) + x)


def logaddexp_of_where_of_square(x):
    # SymPy cannot tell x**2.0 is real, so an ite of it was "maybe non-real" and the minimum's
    # comparison raised "Invalid comparison of non-real" (found by the C fuzzer, seed 13)
    v = x ** 2
    return np.sum(np.minimum(np.logaddexp(x, np.where(v < 0.2, 0.5, v)), v))


def heaviside_of_where(x):
    return np.sum(np.maximum(x, np.where(x > 0.5, x * 2.0, -x)))


def minimum_of_where_and_sum(x, y):
    return np.sum(np.minimum(np.where(x > y, x, y), np.sum(x) - y))


PROGRAMS = [
    (where_of_reductions, (np.array([0.3, -0.2, 0.9, 0.4]), 0.5)),
    (where_of_reductions, (np.array([-0.3, -0.2, 0.1, 0.0]), 0.25)),
    (gather_of_broadcast_scalar, (np.array([0.5, 1.5, -2.0]),)),
    (gather_of_constant, (np.array([0.5, 1.5, -2.0]),)),
    (gather_of_broadcast_row, (np.array([[0.5, 1.5], [-2.0, 0.25], [1.0, 3.0]]),)),
    (gather_at_broadcast_index, (np.array([0.5, 1.5, -2.0]), np.array([0.1, 0.9, 0.3]))),
    (flattened_new_axis, (np.array([[-0.69, -1.37, -1.45, 0.94]]),)),
    (logaddexp_of_where_of_square, (np.array([0.3, -0.9, 1.2]),)),
    (heaviside_of_where, (np.array([0.2, 0.7, -1.3, 2.0]),)),
    (minimum_of_where_and_sum, (np.array([0.2, 0.7, -1.3]), np.array([0.1, 0.9, -1.0]))),
]


def central_differences(f, args, i, h=1e-6):
    x = np.asarray(args[i], dtype=np.float64)
    g = np.zeros_like(x)
    for j in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[j] += h
        down[j] -= h
        hi = list(args)
        lo = list(args)
        hi[i], lo[i] = (up, down) if x.shape else (float(up), float(down))
        g[j] = (f(*hi) - f(*lo)) / (2 * h)
    return g


@pytest.mark.parametrize("f, args", PROGRAMS, ids=[f"{p.__name__}-{n}" for n, (p, _) in enumerate(PROGRAMS)])
def test_c_agrees(f, args):
    wrt = tuple(range(len(args)))
    c = gradc.compile(f, *args, wrt=wrt, target="c")
    py = gradc.compile(f, *args, wrt=wrt)
    value, grads = c(*args)
    ref_value, ref_grads = py(*args)
    reference = evaluate(py.value_and_grad_graph, *args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    np.testing.assert_allclose(value, reference[0], rtol=1e-12)
    for i, (got, want, interp) in enumerate(zip(grads, ref_grads, reference[1:])):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got, interp, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got, central_differences(f, args, i), rtol=1e-5, atol=1e-6)
    assert type(c.forward(*args)) is float  # a float64 scalar is a Python float, as on the NumPy target


@pytest.mark.parametrize("path", ["fast", "slow"])
def test_float64_scalars_are_python_floats(path):
    """Both call paths of the C target return a float64 scalar as a Python float, like the NumPy target."""
    f = minimum_of_where_and_sum
    args = PROGRAMS[-1][1]
    c = gradc.compile(lambda x, s: f(x, args[1]) * s, args[0], 1.5, wrt=(0, 1), target="c")
    call = c.value_and_grad if path == "fast" else c._slow_value_and_grad
    value, (gx, gs) = call(args[0], 1.5)
    assert type(value) is float and type(gs) is float and isinstance(gx, np.ndarray)
    py = gradc.compile(lambda x, s: f(x, args[1]) * s, args[0], 1.5, wrt=(0, 1))
    assert isinstance(py.forward(args[0], 1.5), float)
    assert value == pytest.approx(py.forward(args[0], 1.5), rel=1e-12)
