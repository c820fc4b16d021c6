"""NumPy routines and SciPy functions built as compositions (issue 24, item 5), on both targets.

Each check compiles ``loss = sum(fn(*args) * ct)`` (a random ``ct``, so any wrong entry shows) for the NumPy and
the C target and compares the value with NumPy/SciPy running ``fn`` itself and the gradient with central
differences. Seeded generators draw shapes, axes, modes and spacings; repeated positions in item assignment follow
NumPy's last write, and its derivative reaches the winning write only; refusals name the user's line.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.signal
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build
from gradc.errors import GradcError, GradcWarning, ShapeError, StaticValueNeeded, TraceError
from gradc.trace.scipy_dispatch import rebind

TARGETS = ["numpy"] + (["c"] if c_build.find_compiler() is not None else [])


def make_loss(fn, n):
    namespace = {"np": np, "fn": rebind(fn)}
    names = ", ".join(f"a{i}" for i in range(n))
    exec(f"def loss({names}, ct):\n    return np.sum(fn({names}) * ct)\n", namespace)
    return namespace["loss"]


def check(fn, args, wrt=(0,), rtol=1e-6, atol=1e-8, targets=None, seed=0):
    """Value against ``fn`` run by NumPy/SciPy and gradients against central differences, on each target."""
    expected = np.asarray(fn(*args), dtype=np.float64)
    ct = np.random.default_rng(seed).standard_normal(expected.shape)
    loss = make_loss(fn, len(args))
    reference = float(np.sum(expected * ct))
    fds = []
    for i in wrt:
        def at(x, i=i):
            shifted = list(args)
            shifted[i] = x
            return float(np.sum(np.asarray(fn(*shifted), dtype=np.float64) * ct))
        fds.append(central_gradient(at, args[i]))
    for target in targets or TARGETS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled = gradc.compile(loss, *args, ct, wrt=tuple(f"a{i}" for i in wrt), target=target)
        value, grads = compiled.value_and_grad(*args, ct)
        grads = grads if isinstance(grads, tuple) else (grads,)
        np.testing.assert_allclose(value, reference, rtol=1e-9, atol=1e-9, err_msg=f"value on {target}")
        for g, fd, i in zip(grads, fds, wrt):
            np.testing.assert_allclose(g, fd, rtol=rtol, atol=atol, err_msg=f"gradient of a{i} on {target}")


# ---------------------------------------------------------------- generators
@pytest.mark.parametrize("seed", range(6))
def test_gradient_random(seed):
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(3, 6, nd))
    f = rng.standard_normal(shape)
    axis = None if rng.random() < 0.4 else int(rng.integers(-nd, nd))
    axes = list(range(nd)) if axis is None else [axis % nd]
    edge_order = int(rng.integers(1, 3))
    kind = rng.choice(["none", "scalar", "per_axis"])
    if kind == "none":
        spacing = ()
    elif kind == "scalar":
        spacing = (float(rng.uniform(0.3, 2.0)),)
    else:  # one per axis: a number or the (non-uniform) coordinates
        spacing = tuple(np.cumsum(rng.uniform(0.5, 1.5, shape[a])) if rng.random() < 0.6 else
                        float(rng.uniform(0.3, 2.0)) for a in axes)

    def fn(x):
        out = np.gradient(x, *spacing, axis=axis, edge_order=edge_order)
        return np.stack(out) if isinstance(out, tuple) else out
    check(fn, [f])


@pytest.mark.parametrize("seed", range(4))
def test_polynomials_random(seed):
    rng = np.random.default_rng(seed)
    p = rng.standard_normal(int(rng.integers(1, 6)))
    x = rng.standard_normal(tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(0, 3)))))
    check(lambda p, x: np.polyval(p, x), [p, x], wrt=(0, 1))
    m = int(rng.integers(1, 3))
    check(lambda p: np.polyint(p, m, k=0.3) + 0.0, [p])
    if p.size > m:
        check(lambda p: np.polyder(p, m) * 1.0, [p])
    q = rng.standard_normal(int(rng.integers(1, 5)))
    check(lambda p, q: np.polysub(np.polyadd(p, q), 0.5 * q), [p, q], wrt=(0, 1), targets=["numpy"])


@pytest.mark.parametrize("seed", range(6))
def test_spaced_sequences_random(seed):
    rng = np.random.default_rng(seed)
    num = int(rng.integers(1, 7))
    endpoint = bool(rng.random() < 0.6)
    shape = () if rng.random() < 0.5 else (int(rng.integers(1, 4)),)
    axis = int(rng.integers(0, len(shape) + 1))
    start, stop = rng.uniform(0.5, 2.0, shape), rng.uniform(0.5, 2.0, shape)
    check(lambda a, b: np.linspace(a, b, num, endpoint=endpoint, axis=axis), [start, stop], wrt=(0, 1))
    check(lambda a, b: np.logspace(a, b, num, endpoint=endpoint, base=3.0, axis=axis), [start, stop], wrt=(0, 1))
    check(lambda a, b: np.geomspace(a, b, num, endpoint=endpoint, axis=axis), [start, stop], wrt=(0, 1))
    if num > 1 or not endpoint:
        check(lambda a, b: np.linspace(a, b, num, endpoint=endpoint, retstep=True)[1] * 2.0,
              [start, stop], wrt=(0, 1))


@pytest.mark.parametrize("seed", range(4))
def test_rot90_and_broadcast_arrays_random(seed):
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(2, 4))
    x = rng.standard_normal(tuple(int(s) for s in rng.integers(2, 5, nd)))
    a0, a1 = (int(v) for v in rng.choice(nd, 2, replace=False))
    k = int(rng.integers(-3, 6))
    check(lambda x: np.rot90(x, k, axes=(a0, a1)), [x])
    y = rng.standard_normal(x.shape[-1:])
    check(lambda x, y: np.broadcast_arrays(x, y)[0] * np.broadcast_arrays(x, y)[1], [x, y], wrt=(0, 1))


@pytest.mark.parametrize("seed", range(4))
def test_select_random(seed):
    rng = np.random.default_rng(seed)
    x = rng.permutation(12) * 0.25 - 1.4  # no value near a threshold
    thresholds = np.sort(rng.uniform(-1.2, 1.2, int(rng.integers(1, 4))))

    def fn(x):
        conds = [x < t for t in thresholds]
        choices = [x * (i + 1.0) + x * x for i in range(len(thresholds))]
        return np.select(conds, choices, default=np.sin(x))
    check(fn, [x])


@pytest.mark.parametrize("seed", range(6))
def test_signal_convolve_correlate_random(seed):
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 3))
    s1 = tuple(int(s) for s in rng.integers(1, 6, nd))
    s2 = tuple(int(s) for s in rng.integers(1, 4, nd))
    if rng.random() < 0.3:
        s1, s2 = s2, s1  # the smaller first
    mode = str(rng.choice(["full", "same", "valid"]))
    if mode == "valid" and not (all(p >= q for p, q in zip(s1, s2)) or all(q >= p for p, q in zip(s1, s2))):
        mode = "full"
    a, v = rng.standard_normal(s1), rng.standard_normal(s2)
    check(lambda a, v: scipy.signal.convolve(a, v, mode=mode), [a, v], wrt=(0, 1))
    check(lambda a, v: scipy.signal.correlate(a, v, mode=mode, method="direct"), [a, v], wrt=(0, 1))


def test_signal_2d_names():
    rng = np.random.default_rng(1)
    a, v = rng.standard_normal((4, 5)), rng.standard_normal((2, 2))
    check(lambda a, v: scipy.signal.convolve2d(a, v, mode="same"), [a, v], wrt=(0, 1))
    check(lambda a, v: scipy.signal.correlate2d(a, v, mode="valid"), [a, v], wrt=(0, 1))
    check(lambda a, v: scipy.signal.fftconvolve(a, v), [a, v], wrt=(0, 1), targets=["numpy"])


@pytest.mark.parametrize("seed", range(4))
def test_scipy_linalg_random(seed):
    rng = np.random.default_rng(seed)
    n, m = (int(v) for v in rng.integers(1, 4, 2))
    a = rng.standard_normal((n, n)) + 3 * np.eye(n)
    b = rng.standard_normal((m, m)) + 3 * np.eye(m)
    q = rng.standard_normal((n, m))
    check(lambda a, b, q: scipy.linalg.solve_sylvester(a, b, q), [a, b, q], wrt=(0, 1, 2), rtol=1e-5)
    s = rng.standard_normal((n + 1, n + 1))
    spd = s @ s.T + np.eye(n + 1)
    check(lambda a: scipy.linalg.sqrtm(a), [spd], rtol=1e-5)
    general = rng.uniform(0.0, 0.3, (n + 1, n + 1)) + 2.0 * np.eye(n + 1)  # not symmetric, eigenvalues near 2
    check(lambda a: scipy.linalg.sqrtm(a), [general], rtol=1e-5)
    lo, up = (int(v) for v in rng.integers(0, 3, 2))
    size = 5
    ab = rng.uniform(-0.4, 0.4, (lo + up + 1, size))
    ab[up] += 4.0
    rhs = rng.standard_normal((size, 2)) if seed % 2 else rng.standard_normal(size)
    check(lambda ab, b: scipy.linalg.solve_banded((lo, up), ab, b), [ab, rhs], wrt=(0, 1), rtol=1e-5)
    hb = rng.uniform(-0.3, 0.3, (up + 1, size))
    lower = bool(seed % 2)
    hb[0 if lower else -1] = rng.uniform(3.0, 4.0, size)
    check(lambda ab, b: scipy.linalg.solveh_banded(ab, b, lower=lower), [hb, rhs], wrt=(0, 1), rtol=1e-5)


def test_sqrtm_squares_back_and_has_a_jvp():
    rng = np.random.default_rng(5)
    s = rng.standard_normal((3, 3))
    a = s @ s.T + 0.5 * np.eye(3)
    root = gradc.jit(lambda a: scipy.linalg.sqrtm(a))(a)
    np.testing.assert_allclose(root @ root, a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(root, scipy.linalg.sqrtm(a), rtol=1e-10, atol=1e-12)
    direction = rng.standard_normal((3, 3))
    _, tangent = gradc.jvp(lambda a: scipy.linalg.sqrtm(a), (a,), (direction,))
    fd = (scipy.linalg.sqrtm(a + 1e-6 * direction) - scipy.linalg.sqrtm(a - 1e-6 * direction)) / 2e-6
    np.testing.assert_allclose(tangent, fd, rtol=1e-5, atol=1e-7)


def test_sqrtm_second_order():
    """The rule's own derivative is the rule again (it recomputes the root from its operand): the Hessian agrees
    with central differences of the gradient."""
    rng = np.random.default_rng(6)
    s, weights = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    a = s @ s.T + np.eye(3)

    def f(a, weights):
        return np.sum(scipy.linalg.sqrtm(a) * weights)
    hessian = gradc.hessian(f)(a, weights).reshape(9, 9)
    grad = gradc.grad(f)
    fd = np.stack([(grad(a + 1e-5 * e.reshape(3, 3), weights) - grad(a - 1e-5 * e.reshape(3, 3), weights)).ravel()
                   / 2e-5 for e in np.eye(9)])
    np.testing.assert_allclose(hessian, fd.T, rtol=1e-5, atol=1e-8)


def test_row_stack_alias():
    if not hasattr(np, "row_stack"):
        pytest.skip("NumPy without np.row_stack")
    rng = np.random.default_rng(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        check(lambda a, b: np.row_stack((a, b)), [rng.standard_normal(3), rng.standard_normal(3)], wrt=(0, 1))


def test_partition_values_and_positions():
    rng = np.random.default_rng(3)
    x = rng.permutation(10) * 0.3 + rng.uniform(0, 0.1, 10)
    for kth in (0, 4, -1, (2, 7)):
        got = gradc.jit(lambda x, kth=kth: np.partition(x, kth), static_argnames="kth")(x)
        want = np.partition(x, kth)
        np.testing.assert_array_equal(got[list(np.atleast_1d(kth))], want[list(np.atleast_1d(kth))])
        np.testing.assert_array_equal(np.sort(got), np.sort(want))
    check(lambda x: np.partition(x, 3)[:3], [x], targets=["numpy"])  # the three smallest: argsort has no C yet
    idx = gradc.jit(lambda x: np.argpartition(x, 2))(x)
    assert x[idx[2]] == np.partition(x, 2)[2]


# ---------------------------------------------------------------- writes: fill_diagonal, put_along_axis, index arrays
@pytest.mark.parametrize("shape,wrap,vsize", [((3, 3), False, 1), ((5, 3), False, 3), ((7, 3), True, 2),
                                               ((2, 4), False, 2), ((3, 3, 3), False, 3)])
def test_fill_diagonal(shape, wrap, vsize):
    rng = np.random.default_rng(len(shape) + vsize)
    a, v = rng.standard_normal(shape), rng.standard_normal(vsize)

    def fn(a, v):
        b = a * 1.0
        np.fill_diagonal(b, v if vsize > 1 else v[0], wrap=wrap)
        return b
    check(fn, [a, v], wrt=(0, 1))


@pytest.mark.parametrize("seed", range(4))
def test_put_along_axis_random(seed):
    rng = np.random.default_rng(seed)
    shape = (3, 4)
    axis = int(rng.integers(0, 2))
    idx_shape = list(shape)
    idx_shape[axis] = int(rng.integers(1, 4))
    idx = rng.integers(0, shape[axis], idx_shape)  # repeats are likely: NumPy's last write wins
    a, v = rng.standard_normal(shape), rng.standard_normal(idx_shape)

    def fn(a, v):
        b = a * 1.0
        np.put_along_axis(b, idx, v, axis=axis)
        return b
    check(fn, [a, v], wrt=(0, 1))

    def traced(a, v, idx):
        b = a * 1.0
        np.put_along_axis(b, idx, v, axis=axis)
        return np.sum(b * np.arange(1.0, 13.0).reshape(shape))
    for target in TARGETS:
        compiled = gradc.compile(traced, a, v, idx, wrt=("a", "v"), target=target)
        ga, gv = compiled.grad(a, v, idx)
        np.testing.assert_allclose(ga, central_gradient(lambda x: traced(x, v, idx), a), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gv, central_gradient(lambda x: traced(a, x, idx), v), rtol=1e-6, atol=1e-8)


def one_hot_loss(w, x, labels):
    n = x.shape[0]
    y = np.zeros((n, w.shape[1]))
    y[np.arange(n), labels] = 1.0
    return np.sum((x @ w - y) ** 2)


def test_one_hot_with_traced_labels():
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((3, 4)), rng.standard_normal((6, 3))
    labels = rng.integers(0, 4, 6)
    want = 2 * x.T @ (x @ w - np.eye(4)[labels])
    for target in TARGETS:
        compiled = gradc.compile(one_hot_loss, w, x, labels, target=target)
        np.testing.assert_allclose(compiled.grad(w, x, labels), want, rtol=1e-10)
        other = rng.integers(0, 4, 6)  # new labels at run time, same compiled code
        np.testing.assert_allclose(compiled.grad(w, x, other), 2 * x.T @ (x @ w - np.eye(4)[other]), rtol=1e-10)


def last_write(x, v, idx):
    y = x * 2.0
    y[idx] = v * v
    return np.sum(y * np.arange(1.0, y.size + 1.0))


def last_write_2d(x, v, rows, cols):
    y = x * 1.0
    y[rows, cols] = v
    return np.sum(np.sin(y))


@pytest.mark.parametrize("seed", range(6))
def test_repeated_positions_last_write_wins(seed):
    """Traced index arrays with repeats: the value is NumPy's (the last write), and only the winning write's value
    gets a derivative (central differences agree: moving a losing write changes nothing)."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(2, 6)), int(rng.integers(2, 9))
    x, v = rng.standard_normal(n), rng.standard_normal(k)
    idx = rng.integers(-n, n, k)
    rows, cols = rng.integers(0, 3, k), rng.integers(0, 2, k)
    x2 = rng.standard_normal((3, 2))
    for target in TARGETS:
        compiled = gradc.compile(last_write, x, v, idx, wrt=("x", "v"), target=target)
        value, (gx, gv) = compiled.value_and_grad(x, v, idx)
        np.testing.assert_allclose(value, last_write(x, v, idx), rtol=1e-12)
        np.testing.assert_allclose(gx, central_gradient(lambda a: last_write(a, v, idx), x), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gv, central_gradient(lambda a: last_write(x, a, idx), v), rtol=1e-6, atol=1e-8)
        compiled = gradc.compile(last_write_2d, x2, v, rows, cols, wrt=("x", "v"), target=target)
        value, (gx, gv) = compiled.value_and_grad(x2, v, rows, cols)
        np.testing.assert_allclose(value, last_write_2d(x2, v, rows, cols), rtol=1e-12)
        np.testing.assert_allclose(gv, central_gradient(lambda a: last_write_2d(x2, a, rows, cols), v), rtol=1e-6,
                                   atol=1e-8)
        np.testing.assert_allclose(gx, central_gradient(lambda a: last_write_2d(a, v, rows, cols), x2), rtol=1e-6,
                                   atol=1e-8)


def test_repeated_static_positions_and_add_at():
    rng = np.random.default_rng(9)
    x, v = rng.standard_normal(4), rng.standard_normal(5)
    idx = np.array([3, 0, 3, 3, 1])

    def assign(x, v):
        y = x * 1.0
        y[idx] = v
        return y

    def accumulate(x, v):
        y = x * 1.0
        np.add.at(y, idx, v)
        return y
    check(assign, [x, v], wrt=(0, 1))
    check(accumulate, [x, v], wrt=(0, 1))


# ---------------------------------------------------------------- refusals at the user's line
def _line_of(f, text):
    lines, start = inspect.getsourcelines(f)
    return start + next(i for i, line in enumerate(lines) if text in line)


def bad_select(x):
    return np.sum(np.select([x], [x * 2.0]))


def bad_mode(x):
    return np.sum(scipy.signal.convolve(x, np.ones(2), mode="middle"))


def bad_method(x):
    return np.sum(scipy.signal.convolve(x, np.ones(2), method="winograd"))


def bad_band(x):
    return np.sum(scipy.linalg.solve_banded((1, 1), np.ones((2, 3)) + x[0], x))


def bad_rot90(x):
    return np.sum(np.rot90(x, axes=(1, 1)))


def short_gradient(x):
    return np.sum(np.gradient(x[:2], edge_order=2))


def fill_numpy_array(x):
    b = np.zeros((3, 3))
    np.fill_diagonal(b, x[0])
    return np.sum(b)


def bad_valid(x):
    return np.sum(scipy.signal.correlate(np.ones((2, 5)) * x[0], np.ones((3, 2)), mode="valid"))


def bad_sylvester(x):
    return np.sum(scipy.linalg.solve_sylvester(np.eye(2) * x[0], np.eye(3), np.ones((3, 3))))


def traced_turns(x):
    return np.sum(np.rot90(np.ones((2, 2)) * x[0], k=x.shape[0] + x.astype(np.int64)[0]))


@pytest.mark.parametrize("fn,error,text,line", [
    (bad_select, TraceError, "boolean", "np.select("),
    (bad_mode, TraceError, "mode", "mode="),
    (bad_method, TraceError, "method", "method="),
    (bad_band, ShapeError, "l\\+u\\+1", "solve_banded("),
    (bad_rot90, ShapeError, "different", "np.rot90("),
    (short_gradient, ShapeError, "edge_order", "np.gradient("),
    (fill_numpy_array, TraceError, "converted to a concrete NumPy array", "np.fill_diagonal("),
    (bad_valid, ShapeError, "at least as large", "correlate("),
    (bad_sylvester, ShapeError, "q n x m", "solve_sylvester("),
    (traced_turns, StaticValueNeeded, "k must be known", "np.rot90("),
])
def test_refusals_name_the_users_line(fn, error, text, line):
    with pytest.raises(error, match=text) as info:
        gradc.grad(fn)(np.ones(3))
    assert isinstance(info.value, GradcError)
    assert info.value.where.endswith(f"test_numpy_routines.py:{_line_of(fn, line)}")


def add_at_traced(x, v, idx):
    y = x * 1.0
    np.add.at(y, idx, v * v)
    return np.sum(np.cos(y))


def test_add_at_with_traced_indices_accumulates():
    rng = np.random.default_rng(4)
    x, v, idx = rng.standard_normal(4), rng.standard_normal(6), np.array([1, 3, 1, 1, 0, 3])
    for target in TARGETS:
        compiled = gradc.compile(add_at_traced, x, v, idx, wrt=("x", "v"), target=target)
        value, (gx, gv) = compiled.value_and_grad(x, v, idx)
        np.testing.assert_allclose(value, add_at_traced(x, v, idx), rtol=1e-12)
        np.testing.assert_allclose(gv, central_gradient(lambda a: add_at_traced(x, a, idx), v), rtol=1e-6, atol=1e-8)


def test_polyval_of_a_list_of_traced_coefficients():
    check(lambda a, x: np.polyval([a[0], 2.0, a[1]], x), [np.array([0.5, -1.0]), np.linspace(-1, 1, 4)])


def put_into_input(x):
    np.put_along_axis(x, np.array([0]), 1.0, axis=0)
    return np.sum(x)


def test_put_along_axis_into_an_input_warns_at_the_line():
    x = np.ones(3)
    with pytest.warns(GradcWarning, match="in place") as caught:
        grad = gradc.grad(put_into_input)(x)
    line = _line_of(put_into_input, "np.put_along_axis(")
    assert any(w.filename.endswith("test_numpy_routines.py") and w.lineno == line for w in caught)
    np.testing.assert_array_equal(x, np.ones(3))
    np.testing.assert_array_equal(grad, [0.0, 1.0, 1.0])


@pytest.mark.parametrize("seed", range(4))
def test_structured_matrices_random(seed):
    rng = np.random.default_rng(seed)
    m, n = (int(v) for v in rng.integers(1, 5, 2))
    c, r = rng.standard_normal(m), rng.standard_normal(n)
    check(lambda c, r: scipy.linalg.toeplitz(c, r), [c, r], wrt=(0, 1))
    check(lambda c: scipy.linalg.toeplitz(c), [c])
    check(lambda c, r: scipy.linalg.hankel(c, r), [c, r], wrt=(0, 1))
    check(lambda c: scipy.linalg.hankel(c), [c])
    check(lambda c: scipy.linalg.circulant(c), [c])
    blocks = [rng.standard_normal((int(rng.integers(1, 3)), int(rng.integers(1, 3)))), rng.standard_normal(n),
              rng.standard_normal(())]
    check(lambda a, b, s: scipy.linalg.block_diag(a, b, s), blocks, wrt=(0, 1, 2))
    x = rng.standard_normal(m)
    check(lambda x: np.vander(x, n + 1, increasing=bool(seed % 2)), [x])
    check(lambda a, b: np.polymul(a, b), [c, r], wrt=(0, 1))


def uses_poly1d(p):
    return np.sum(np.poly1d(p)(np.arange(3.0)))


def test_poly1d_of_traced_coefficients_points_to_polyval():
    with pytest.raises(TraceError, match="np.polyval") as info:
        gradc.grad(uses_poly1d)(np.ones(3))
    assert info.value.where.endswith(f"test_numpy_routines.py:{_line_of(uses_poly1d, 'np.poly1d(')}")


def test_long_1d_signals_use_the_convolve_primitive():
    rng = np.random.default_rng(8)
    a, v = rng.standard_normal(40), rng.standard_normal(25)
    for mode in ("full", "same", "valid"):
        check(lambda a, v, mode=mode: scipy.signal.convolve(a, v, mode=mode), [a, v], wrt=(0, 1), targets=["numpy"])
        check(lambda a, v, mode=mode: scipy.signal.correlate(v, a, mode=mode), [a, v], wrt=(0, 1),
              targets=["numpy"])
    graph = gradc.trace(lambda a, v: scipy.signal.convolve(a, v), a, v)
    assert [e.op for e in graph.eqns] == ["convolve"]


def last_write_columns(x, v, idx):
    y = x * 1.0
    y[:, idx] = v  # v broadcasts over the rows: each row's repeated columns keep the last write
    return np.sum(np.tanh(y) * np.arange(1.0, y.size + 1.0).reshape(y.shape))


def last_write_in_loop(x, v, idx):
    y = np.zeros(4)
    for k in range(3):
        y[idx] = v * (k + 1.0)
        y = y * x
    return np.sum(y)


@pytest.mark.parametrize("seed", range(3))
def test_repeated_positions_with_slices_and_loops(seed):
    rng = np.random.default_rng(100 + seed)
    x, idx = rng.standard_normal((2, 4)), rng.integers(0, 4, 5)
    v = rng.standard_normal((2, 5)) if seed % 2 else rng.standard_normal(5)
    x1, v1, idx1 = rng.standard_normal(4), rng.standard_normal(3), rng.integers(0, 4, 3)
    for target in TARGETS:
        compiled = gradc.compile(last_write_columns, x, v, idx, wrt=("x", "v"), target=target)
        value, (gx, gv) = compiled.value_and_grad(x, v, idx)
        np.testing.assert_allclose(value, last_write_columns(x, v, idx), rtol=1e-12)
        np.testing.assert_allclose(gv, central_gradient(lambda a: last_write_columns(x, a, idx), v), rtol=1e-6,
                                   atol=1e-8)
        compiled = gradc.compile(last_write_in_loop, x1, v1, idx1, wrt=("x", "v"), target=target)
        value, (gx, gv) = compiled.value_and_grad(x1, v1, idx1)
        np.testing.assert_allclose(value, last_write_in_loop(x1, v1, idx1), rtol=1e-12)
        np.testing.assert_allclose(gv, central_gradient(lambda a: last_write_in_loop(x1, a, idx1), v1), rtol=1e-6,
                                   atol=1e-8)
        np.testing.assert_allclose(gx, central_gradient(lambda a: last_write_in_loop(a, v1, idx1), x1), rtol=1e-6,
                                   atol=1e-8)


def test_frexp_ldexp_modf():
    x = np.array([8.0, 8.0 - 2.0 ** -50, 0.0, -3.0, 0.3, 1e-300, 5e-324, -0.0, np.inf, -np.inf, np.nan])
    mantissa, exponent = gradc.jit(lambda x: np.frexp(x))(x)
    want_m, want_e = np.frexp(x)
    np.testing.assert_array_equal(mantissa, want_m)
    np.testing.assert_array_equal(exponent, want_e)
    assert exponent.dtype == want_e.dtype
    rng = np.random.default_rng(11)
    y = rng.uniform(-4, 4, 6)
    check(lambda y: np.frexp(y)[0], [y])
    e = rng.integers(-3, 4, 6)
    check(lambda y: np.ldexp(y, e), [y])
    check(lambda y: np.modf(y)[0] * 2.0 + np.modf(y)[1], [y])
    np.testing.assert_array_equal(gradc.jit(lambda y: np.stack(np.modf(y)))(y), np.stack(np.modf(y)))


@pytest.mark.parametrize("seed", range(3))
def test_polyfit_and_poly(seed):
    rng = np.random.default_rng(seed)
    x = np.linspace(-1.0, 1.0, 7) + rng.uniform(-0.05, 0.05, 7)
    y = rng.standard_normal(7)
    deg = int(rng.integers(0, 4))
    numpy_only = ["numpy"]  # np.linalg.lstsq's svd has its C lowering on the c-decomp branch
    check(lambda x, y: np.polyfit(x, y, deg), [x, y], wrt=(0, 1), rtol=1e-5, targets=numpy_only)
    weights = rng.uniform(0.5, 2.0, 7)
    check(lambda y, w: np.polyfit(x, y, deg, w=w), [y, weights], wrt=(0, 1), rtol=1e-5, targets=numpy_only)
    check(lambda y: np.polyfit(x, np.stack([y, 2.0 * y], axis=1), deg), [y], rtol=1e-5, targets=numpy_only)
    roots = rng.standard_normal(int(rng.integers(1, 5)))
    check(lambda r: np.poly(r), [roots])


def _written(fn):
    """``fn(b, *rest)`` applied in place to a copy ``b`` of the first argument, which is returned."""
    def apply(a, *rest):
        b = a * 1.0
        fn(b, *rest)
        return b
    return apply


@pytest.mark.parametrize("seed", range(3))
def test_in_place_placements(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((3, 4))
    ind = rng.integers(-12, 12, 5)
    v = rng.standard_normal(int(rng.integers(1, 4)))
    check(_written(lambda b, v: np.put(b, ind, v)), [a, v], wrt=(0, 1))
    check(_written(lambda b, v: np.put(b, [40, -15], v, mode="wrap")), [a, v], wrt=(0, 1))
    mask = rng.random((3, 4)) < 0.5
    check(_written(lambda b, v: np.putmask(b, mask, v)), [a, v], wrt=(0, 1))
    check(_written(lambda b, v: np.putmask(b, b > 0.3, v * 2.0)), [a, v], wrt=(0, 1))  # a traced mask
    check(_written(lambda b, v: np.place(b, mask, v)), [a, v], wrt=(0, 1))


@pytest.mark.parametrize("seed", range(3))
def test_selections_and_rearrangements(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((3, 4))
    condition = rng.random(4) < 0.6
    axis = int(rng.integers(0, 2))
    check(lambda a: np.compress(condition[:a.shape[axis]], a, axis=axis), [a])
    selected = rng.random((3, 4)) < 0.5
    check(lambda a: np.extract(selected, a) * 1.0, [a])
    check(lambda a: np.resize(a, (5, 3)), [a])
    picks = rng.integers(0, 3, (3, 4))
    b, c = rng.standard_normal((3, 4)), rng.standard_normal(4)
    check(lambda a, b, c: np.choose(picks, [a, b, c]), [a, b, c], wrt=(0, 1, 2))
    check(lambda a, b, c, i: np.choose(i, [a, b, c], mode="clip"), [a, b, c, picks + 1], wrt=(0, 1, 2))
    check(lambda a: np.apply_along_axis(lambda r: np.cumsum(r) * r[0], axis, a), [a])
    check(lambda a: np.apply_along_axis(lambda r: np.sum(r ** 2), axis, a), [a])
    if hasattr(np, "unstack"):
        check(lambda a: np.unstack(a, axis=axis)[1] * 2.0, [a])
    m = rng.standard_normal((4, 4))
    check(lambda m: m[np.triu_indices_from(m, 1)] + m[np.tril_indices_from(m)][:6] + m[np.diag_indices_from(m)][0],
          [m])


def test_isclose_allclose_count_nonzero():
    a = np.array([1.0, 1.0 + 1e-9, np.inf, -np.inf, np.nan, 0.0, 2.0])
    b = np.array([1.0, 1.0, np.inf, np.inf, np.nan, 1e-9, 2.1])
    jit = gradc.jit(lambda a, b: np.stack([np.isclose(a, b), np.isclose(a, b, equal_nan=True),
                                           np.isclose(a, b, rtol=0.1)]))
    np.testing.assert_array_equal(jit(a, b), np.stack([np.isclose(a, b), np.isclose(a, b, equal_nan=True),
                                                       np.isclose(a, b, rtol=0.1)]))
    assert bool(gradc.jit(lambda a: np.allclose(a, a * (1 + 1e-9)))(b[:2])) is True
    m = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, -1.0]])
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(gradc.jit(lambda m, axis=axis: np.count_nonzero(m, axis=axis),
                                                static_argnames="axis")(m), np.count_nonzero(m, axis=axis))
    check(lambda x: np.where(np.isclose(x, 0.5, atol=0.2), x * x, x) * np.count_nonzero(x > 0), [np.linspace(-1, 1, 8)])


@pytest.mark.parametrize("n", [1, 2, 3])
def test_lyapunov_solvers(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)) - 3.0 * np.eye(n)  # stable: eigenvalues in the left half plane
    q = rng.standard_normal((n, n))
    check(lambda a, q: scipy.linalg.solve_continuous_lyapunov(a, q), [a, q], wrt=(0, 1), rtol=1e-5)
    d = 0.3 * rng.standard_normal((n, n))  # spectral radius below one
    check(lambda d, q: scipy.linalg.solve_discrete_lyapunov(d, q), [d, q], wrt=(0, 1), rtol=1e-5)


@pytest.mark.parametrize("seed", range(4))
def test_lfilter_random(seed):
    rng = np.random.default_rng(seed)
    nb, na = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    b = rng.standard_normal(nb)
    a = np.concatenate([[rng.uniform(1.0, 2.0)], 0.3 * rng.standard_normal(na - 1)])  # a stable recursion
    shape = (int(rng.integers(1, 8)),) if seed % 2 == 0 else (3, int(rng.integers(2, 6)))
    x = rng.standard_normal(shape)
    axis = -1 if len(shape) == 1 else int(rng.integers(0, 2))
    check(lambda b, a, x: scipy.signal.lfilter(b, a, x, axis=axis), [b, a, x], wrt=(0, 1, 2), rtol=1e-5)


def filter_with_state(x):
    return np.sum(scipy.signal.lfilter([1.0], [1.0, -0.5], x, zi=np.zeros(1))[0])


def test_lfilter_zi_is_refused_at_the_line():
    with pytest.raises(TraceError, match="zi=") as info:
        gradc.grad(filter_with_state)(np.ones(3))
    assert info.value.where.endswith(f"test_numpy_routines.py:{_line_of(filter_with_state, 'lfilter(')}")


@pytest.mark.parametrize("target", TARGETS)
def test_sqrtm_is_scipys_root_or_a_linalg_error(target):
    """Seeded random real matrices, many with eigenvalues on the negative real axis (where SciPy's principal root
    is complex and the real iteration cannot converge): gradc returns SciPy's root or raises LinAlgError, never
    another matrix."""
    rng = np.random.default_rng(11)
    root_of = gradc.jit(lambda a: scipy.linalg.sqrtm(a), target=target)
    matched = refused = 0
    for trial in range(60):
        a = rng.standard_normal((3, 3)) + (trial % 3) * np.eye(3)  # shifted right: more matrices with real roots
        expected = scipy.linalg.sqrtm(a)
        real_root = np.max(np.abs(np.imag(expected))) <= 1e-12 * max(1.0, np.max(np.abs(expected)))
        try:
            got = root_of(a)
        except np.linalg.LinAlgError as error:
            assert "no real square root" in str(error)
            eigenvalues = np.linalg.eigvals(a)
            # refusing a matrix whose eigenvalues are all well right of the negative axis would be a defect
            assert not (real_root and np.all(eigenvalues.real > 0.05 * np.max(np.abs(eigenvalues)))), trial
            refused += 1
            continue
        assert real_root, f"trial {trial}: SciPy's root is complex, gradc returned a real matrix"
        np.testing.assert_allclose(got, np.real(expected), rtol=1e-7, atol=1e-9)
        matched += 1
    assert matched >= 10 and refused >= 10, (matched, refused)
