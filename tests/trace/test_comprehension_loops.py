"""List comprehensions over a range stay loops on traced values (issue 26.3, GradBench ht's compile time).

``np.stack([helper(x[i]) for i in range(n)])`` is one ``scan`` in the IR whatever ``n`` (not ``n`` copies
of the helper's body); values equal the user's function run by NumPy, gradients equal central finite
differences, on the NumPy and the C target. Comprehensions that only Python can run (items of different
shapes, a Python list indexed by the counter, concrete values) keep Python's result exactly. A seeded
generator writes more comprehensions.
"""
import random
import re

import numpy as np
import pytest
from finite_differences import central_gradient as central

import gradc
from gradc import GradcError
from gradc.trace import trace

RNG = np.random.default_rng(7)
X = RNG.normal(size=(9, 3))
W = RNG.normal(size=3)


def rotate(v, w):
    c, s = np.cos(w[0] * v[0]), np.sin(w[1] * v[1])
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2] * w[2]])


def stacked_helper(x, w):
    return np.sum(np.stack([rotate(x[i], w) for i in range(x.shape[0])]) ** 2)


def summed_items(x, w):
    return sum([np.tanh(x[i] @ w) * i for i in range(1, x.shape[0], 2)])


def items_as_array(x, w):
    rows = np.array([x[i] * w + x[i - 1] for i in range(x.shape[0] - 1, 0, -1)])
    return np.sum(np.sin(rows))


def tuple_items(x, w):
    pairs = [(x[i] * w, np.sum(x[i])) for i in range(x.shape[0])]
    return sum(a.sum() * b for a, b in pairs)


def nested(x, w):
    return np.sum(np.stack([np.stack([x[i] * w[j] for j in range(3)]) for i in range(x.shape[0])]) ** 2)


def indexed_by_data(x, w, picks):
    return np.sum(np.stack([x[int(picks[i])] * w for i in range(picks.shape[0])]) ** 3)


def over_rows(x, w):
    return np.sum(np.stack([rotate(row, w) for row in x]) ** 2)


def over_zip(x, w):
    return np.sum(np.array([np.dot(a, b) * w for a, b in zip(x, x[::-1])]))


def over_enumerate(x, w):
    return sum([np.tanh(row @ w) * k for k, row in enumerate(x)])


def over_reversed_range(x, w):
    return np.sum(np.stack([np.sin(x[i] * w) * i for i in reversed(range(1, x.shape[0]))]) ** 2)


PICKS = np.array([3, 0, 8, 8, 2, 5])
CASES = [(stacked_helper, (X, W)), (summed_items, (X, W)), (items_as_array, (X, W)), (tuple_items, (X, W)),
         (nested, (X, W)), (indexed_by_data, (X, W, PICKS)), (over_rows, (X, W)), (over_zip, (X, W)),
         (over_enumerate, (X, W)), (over_reversed_range, (X, W))]


def _reference_gradient(f, args):
    return central(lambda v: f(v, *args[1:]), args[0])


@pytest.mark.parametrize("f,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_same_as_python_and_finite_differences(f, args):
    value, grad = gradc.value_and_grad(f)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    np.testing.assert_allclose(grad, _reference_gradient(f, args), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_c_target_agrees(f, args):
    from gradc.backends.c import build
    if build.find_compiler() is None:
        pytest.skip("no C compiler")
    value, grad = gradc.compile(f, *args, target="c").value_and_grad(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    np.testing.assert_allclose(grad, _reference_gradient(f, args), rtol=1e-6, atol=1e-8)


def test_the_comprehension_is_one_loop():
    texts = {rows: str(trace(stacked_helper, RNG.normal(size=(rows, 3)), W)) for rows in (4, 40)}
    for rows, text in texts.items():
        assert re.search(rf" = scan .*length={rows} ", text), text
    # one body whatever the trip count (the list's items are reads of the stacked rows, unused here)
    bodies = {rows: [line for line in text.splitlines() if " = index " not in line] for rows, text in texts.items()}
    assert len(bodies[40]) == len(bodies[4]), texts[40]


@pytest.mark.parametrize("f", [over_rows, over_zip, over_enumerate, over_reversed_range])
def test_other_iterables_are_one_loop(f):
    assert " = scan " in str(trace(f, X, W))


def test_a_python_list_zipped_runs_in_python():
    def f(x):
        scales = [1.0, 2.0, 3.0]
        return np.sum(np.stack([row * s for row, s in zip(x, scales)]))
    v = RNG.normal(size=(3, 2))
    np.testing.assert_allclose(gradc.grad(f)(v), central(f, v), rtol=1e-6)


def test_gradient_equals_the_unrolled_comprehension():
    def unrolled(x, w):  # the same items written out, which no capture keeps as a loop
        items = []
        for i in range(x.shape[0]):
            items.append(rotate(x[i], w))
            items = list(items)
        return np.sum(np.stack(items) ** 2)
    np.testing.assert_allclose(gradc.grad(stacked_helper)(X, W), gradc.grad(unrolled)(X, W), rtol=1e-13)


# ---------------------------------------------------------------- what only Python can run
def test_items_of_different_shapes_run_in_python():
    def prefix_sums(x):
        return sum([np.sum(x[:i + 1] ** 2) for i in range(x.shape[0])])
    v = RNG.normal(size=6)
    np.testing.assert_allclose(gradc.grad(prefix_sums)(v), central(prefix_sums, v), rtol=1e-6)


def test_a_python_list_indexed_by_the_counter_runs_in_python():
    def from_list(x):
        parts = [x[0], x[1] * 2.0, x[2] ** 2]
        return np.sum(np.stack([parts[i] * (i + 1) for i in range(3)]))
    v = RNG.normal(size=(3, 2))
    np.testing.assert_allclose(gradc.grad(from_list)(v), central(from_list, v), rtol=1e-6)


def test_concrete_comprehensions_are_pythons():
    def f(x):
        sizes = [i * i for i in range(4)]
        assert type(sizes) is list and sizes == [0, 1, 4, 9]
        return x * sizes[3]
    assert gradc.grad(f)(2.0) == 9.0


def test_a_traced_trip_count_is_refused_clearly():
    def f(x):
        return np.sum(np.stack([x * i for i in range(np.sum(x > 0))]))
    with pytest.raises(GradcError):
        gradc.grad(f)(np.ones(3))


# ---------------------------------------------------------------- seeded generator
ITEMS = ["np.sin(x[i]) * w", "x[i] @ w * x[i]", "rotate(x[i], w)", "np.tanh(x[i] + w) ** 2", "x[i] * i - w",
         "np.exp(-x[i] * x[i]) * w[i % 3]"]
REDUCE = ["np.sum(np.stack({}) ** 2)", "np.sum(np.array({}) * w)", "np.sum(sum({}))"]


def _program(seed):
    rnd = random.Random(seed)
    item, reduce = rnd.choice(ITEMS), rnd.choice(REDUCE)
    start, step = rnd.choice([(0, 1), (1, 1), (0, 2), (8, -1)])
    stop = -1 if step < 0 else "x.shape[0]"
    loop = rnd.choice([f"i in range({start}, {stop}, {step})", "i, row in enumerate(x)", f"i in reversed(range({stop}))"
                       if step > 0 else f"i in range({start}, {stop}, {step})"])
    source = f"def program(x, w):\n    return {reduce.format(f'[{item} for {loop}]')}\n"
    scope = {"np": np, "rotate": rotate}
    exec(compile(source, f"<comprehension {seed}>", "exec"), scope)
    return scope["program"], source


@pytest.mark.parametrize("seed", range(12))
def test_generated_comprehensions(seed):
    program, source = _program(seed)
    value, (gx, gw) = gradc.value_and_grad(program, argnums=(0, 1))(X, W)
    np.testing.assert_allclose(value, program(X, W), rtol=1e-12, err_msg=source)
    np.testing.assert_allclose(gx, central(lambda v: program(v, W), X), rtol=1e-5, atol=1e-7, err_msg=source)
    np.testing.assert_allclose(gw, central(lambda v: program(X, v), W), rtol=1e-5, atol=1e-7, err_msg=source)


# ---------------------------------------------------------------- sparse Jacobians through a kept comprehension
def rowwise(x, w):
    return np.stack([rotate(x[i], w) * x[(i + 1) % x.shape[0]][0] for i in range(x.shape[0])])


def rowwise_reversed(x, w):
    return np.stack([rotate(x[i], w) * x[i - 2][1] for i in reversed(range(2, x.shape[0], 3))])


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("f", [rowwise, rowwise_reversed])
def test_sparse_jacobian_pattern_is_exact(f, target):
    if target == "c":
        from gradc.backends.c import build
        if build.find_compiler() is None:
            pytest.skip("no C compiler")
    compiled = gradc.compile(f, X, W, mode="jacobian", sparse=True, target=target, wrt=(0,))
    size = f(X, W).size
    dense = np.stack([central(lambda v, k=k: f(v, W).ravel()[k], X).ravel() for k in range(size)])
    # item i reads row i (rotate mixes entries 0 and 1, keeps 2) and one entry of another row
    np.testing.assert_array_equal(compiled.pattern.toarray(), np.abs(dense) > 1e-9)
    np.testing.assert_allclose(compiled.jacobian(X, W).toarray(), dense, rtol=1e-6, atol=1e-8)
