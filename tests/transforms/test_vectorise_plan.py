"""The loop vectoriser batches a loop only when its iterations have every value they read (issue 26, review):
a running value read inside the loop before it ends keeps the loop, by rule (``_plan``), never by catching a
failure. References: the user's function run by NumPy, central differences, and the loop kept as written."""
import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.passes.vectorise_loops import loops_kept


def running_sum_stacked(x):
    acc = 0.0
    ys = []
    for i in range(4):
        acc = acc + x[i]
        ys.append(acc * 2)  # the updated running sum, read inside the loop
    return np.sum(np.stack(ys) ** 2)


def running_sum_filled(x):
    acc = np.zeros(3)
    out = np.zeros(4)
    for i in range(4):
        acc = acc + x[i]
        out[i] = np.sum(acc * acc)
    return np.sum(out) + np.sum(acc)


def running_sum_read_before(x):
    acc = np.zeros(3)
    out = np.zeros(4)
    for i in range(4):
        out[i] = np.sum(np.sin(acc))  # the running sum as it starts this iteration
        acc = acc + x[i] ** 2
    return np.sum(out)


def independent_fill(x):  # batched: each iteration reads only its own row
    out = np.zeros(4)
    for i in range(4):
        out[i] = np.sum(np.tanh(x[i]))
    return np.sum(out ** 2)


def two_sums_feeding(x):
    a = np.zeros(3)
    b = np.zeros(3)
    for i in range(4):
        a = a + x[i]
        b = b + a * x[i]
    return np.sum(b)


PROGRAMS = [running_sum_stacked, running_sum_filled, running_sum_read_before, independent_fill, two_sums_feeding]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_gradient_matches_numpy_and_the_kept_loop(f, seed):
    x = np.random.default_rng(seed).standard_normal((4, 3))
    compiled = gradc.compile(f, x)
    value, grad = compiled.value_and_grad(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(f, x), rtol=1e-6, atol=1e-8)
    with loops_kept():
        np.testing.assert_allclose(gradc.compile(f, x).value_and_grad(x)[1], grad, rtol=1e-12, atol=1e-14)


def _random_program(rng):
    """A loop over rows of x carrying a running value ``acc`` and filling ``out``, whose reads of ``acc`` (as it
    starts, as updated, not at all) are chosen at random."""
    update = rng.choice(["acc + x[i]", "acc + np.sin(x[i])", "acc * 0.5 + x[i] ** 2"])
    fill = rng.choice(["np.sum(acc)", "np.sum(x[i] * acc)", "np.sum(np.cos(x[i]))", "np.sum(acc ** 2) + x[i, 0]"])
    before = bool(rng.integers(2))
    body = [f"        acc = {update}", f"        out[i] = {fill}"]
    if before:
        body.reverse()
    src = "\n".join(["def program(x):", "    acc = np.zeros(3)", "    out = np.zeros(x.shape[0])",
                     "    for i in range(x.shape[0]):", *body, "    return np.sum(out ** 2) + np.sum(acc)", ""])
    return src


@pytest.mark.parametrize("seed", range(12))
def test_random_carry_reads(seed, tmp_path):
    """Seeded loops reading their carried value in each way: NumPy's value and central differences agree."""
    import importlib.util
    rng = np.random.default_rng(seed)
    path = tmp_path / f"loop_program_{seed}.py"
    path.write_text("import numpy as np\n\n" + _random_program(rng))
    spec = importlib.util.spec_from_file_location(f"loop_program_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = rng.standard_normal((int(rng.integers(1, 6)), 3))
    value, grad = gradc.compile(module.program, x).value_and_grad(x)
    np.testing.assert_allclose(value, module.program(x), rtol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(module.program, x), rtol=1e-5, atol=1e-7)
