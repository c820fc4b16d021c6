"""Named sizes (``f64[n,10]``): one compile for every ``n``, checked against fixed-size compiles.

Each function is compiled once with ``gradc.spec`` types and once per size with example arrays;
value and gradient must agree for sizes 1, 2, 3, 17 and 100, and the gradient must match
central finite differences. Then the guard, the IR text, folding and the error paths.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

import gradc
from gradc.errors import GradcError
from tests.finite_differences import central_gradient

SIZES = (1, 2, 3, 17, 100)


def logistic(X, y, w):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.1 * np.sum(w ** 2)


def least_squares(X, y, w):
    r = X @ w - y
    return np.sum(r ** 2) / X.shape[0]


def least_squares_rows(X, y, w):
    return 0.5 * np.sum((X @ w - y) ** 2) / y.shape[0] + 1e-3 * w @ w


def softmax_xent(X, Y, W):
    z = X @ W
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * logp, axis=1))


def mlp(X, y, W1, w2):
    h = np.tanh(X @ W1)
    return np.mean((h @ w2 - y) ** 2)


def poisson(X, y, w):
    eta = X @ w
    return np.mean(np.exp(eta) - y * eta)


def weighted(X, y, w):
    wts = 1.0 + y ** 2
    return np.sum(wts * (X @ w) ** 2) / np.sum(wts)


def gram(X, y, w):
    G = X.T @ X / X.shape[0]
    return np.sum((G @ w - w) ** 2) + np.mean(y) * w[0]


def column_means(X, y, w):
    mu = np.mean(X, axis=0)
    sd = np.std(X, axis=0)
    return np.sum(mu * w) + np.sum(sd * w ** 2) + np.var(y)


def smoothness(X, y, w):
    d = X[1:] - X[:-1]
    return np.sum((d @ w) ** 2) + np.sum(np.diff(y) ** 2) + np.mean(X[:, 0] * w[1])


def huber_rows(X, y, w):
    r = X @ w - y
    a = np.abs(r)
    return np.mean(np.where(a <= 1.0, 0.5 * r ** 2, a - 0.5))


def centered(X, y, w):
    Xc = X - X.mean(axis=0, keepdims=True)
    yc = y - y.mean()
    return np.mean((Xc @ w - yc) ** 2)


def flattened(X, y, w):
    flat = X.reshape(-1)
    return np.sum(flat ** 2 * 0.01) + np.sum(X.reshape(X.shape[0], 3) @ w * y) / flat.shape[0]


def appended_bias(X, y, w):
    Xb = np.concatenate([X, X[:, :1] * 0.0 + 1.0], axis=1)
    return np.mean((Xb @ np.concatenate([w, w[:1]]) - y) ** 2)


def einsum_rows(X, y, w):
    return np.einsum("ij,j,i->", X, w, y) / X.shape[0] + np.sum(np.einsum("ij,ij->i", X, X) * 0.01)


def stacked_columns(X, y, w):
    Z = np.stack([X[:, 0] * y, X[:, 1], X[:, 2] - y], axis=1)
    return np.mean(np.sin(Z @ w))


def logsumexp_rows(X, y, w):
    return np.mean(logsumexp(X * w, axis=1) - y)


ROW_LOSSES = [logistic, least_squares, least_squares_rows, mlp, poisson, weighted, gram, column_means,
              smoothness, huber_rows, centered, flattened, appended_bias, einsum_rows, stacked_columns,
              logsumexp_rows]


def _data(n, rng, k=3):
    return rng.standard_normal((n, k)), rng.standard_normal(n)


def _params(f, rng):
    if f is mlp:
        return (rng.standard_normal((3, 4)) * 0.5, rng.standard_normal(4))
    return (rng.standard_normal(3),)


@pytest.mark.parametrize("f", ROW_LOSSES, ids=lambda f: f.__name__)
def test_one_compile_matches_fixed_compiles(f):
    rng = np.random.default_rng(0)
    params = _params(f, rng)
    wrt = tuple(range(2, 2 + len(params)))
    sym = gradc.compile(f, gradc.spec("f64[n,3]"), gradc.spec("f64[n]"), *params, wrt=wrt)
    for n in SIZES:
        if f is smoothness and n == 1:
            continue  # np.diff of one row is empty; checked at the other sizes
        X, y = _data(n, rng)
        fixed = gradc.compile(f, X, y, *params, wrt=wrt)
        value, grads = sym.value_and_grad(X, y, *params)
        want_value, want_grads = fixed.value_and_grad(X, y, *params)
        np.testing.assert_allclose(value, want_value, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(value, f(X, y, *params), rtol=1e-12, atol=1e-14)
        for g, h in zip(grads, want_grads):
            np.testing.assert_allclose(g, h, rtol=1e-11, atol=1e-13)
    X, y = _data(7, rng)
    for k, p in enumerate(params):
        numeric = central_gradient(lambda q, k=k: f(X, y, *params[:k], q, *params[k + 1:]), p)
        np.testing.assert_allclose(sym.grad(X, y, *params)[k], numeric, rtol=1e-6, atol=1e-7)


def test_softmax_cross_entropy_with_two_named_sizes():
    rng = np.random.default_rng(1)
    W = rng.standard_normal((4, 3))
    sym = gradc.compile(softmax_xent, gradc.spec("f64[n,d]"), gradc.spec("f64[n,3]"), gradc.spec("f64[d,3]"),
                        wrt=2)
    for n, d in [(1, 4), (5, 4), (9, 2)]:
        X, W = rng.standard_normal((n, d)), rng.standard_normal((d, 3))
        Y = np.eye(3)[rng.integers(0, 3, n)]
        fixed = gradc.compile(softmax_xent, X, Y, W, wrt=2)
        np.testing.assert_allclose(sym.grad(X, Y, W), fixed.grad(X, Y, W), rtol=1e-12, atol=1e-14)
        numeric = central_gradient(lambda V, X=X, Y=Y: softmax_xent(X, Y, V), W)
        np.testing.assert_allclose(sym.grad(X, Y, W), numeric, rtol=1e-6, atol=1e-8)


def test_gradient_with_respect_to_a_named_size_array():
    def loss(X, w):
        return np.mean(np.sin(X) * w)
    sym = gradc.compile(loss, gradc.spec("f64[n,2]"), np.ones(2), wrt=(0, 1))
    rng = np.random.default_rng(2)
    for n in (1, 4):
        X, w = rng.standard_normal((n, 2)), rng.standard_normal(2)
        gX, gw = sym.grad(X, w)
        np.testing.assert_allclose(gX, np.cos(X) * w / (2 * n), rtol=1e-13)
        np.testing.assert_allclose(gw, np.sin(X).sum(0) / (2 * n), rtol=1e-13)


def test_ir_and_emitted_code_carry_the_name():
    text = str(gradc.trace(logistic, gradc.spec("f64[n,3]"), gradc.spec("f64[n]"), np.zeros(3)))
    assert "X: f64[n,3], y: f64[n]" in text
    assert "count=n" in text  # the mean divides by n, never by a number folded in
    sym = gradc.compile(logistic, gradc.spec("f64[n,3]"), gradc.spec("f64[n]"), np.zeros(3), wrt=2)
    assert "n = X.shape[0]" in sym.source
    assert "/ n" in sym.source and "float(n)" in sym.source
    again = gradc.compile(logistic, gradc.spec("f64[n,3]"), gradc.spec("f64[n]"), np.zeros(3), wrt=2)
    assert again.source == sym.source


def test_string_annotations_give_named_sizes():
    def loss(X: "f64[rows,3]", y: "f64[rows]", w):  # noqa: F821  (a gradc type, not a forward reference)
        return np.mean((X @ w - y) ** 2)
    sym = gradc.compile(loss, w=np.zeros(3), wrt="w")
    assert "rows = X.shape[0]" in sym.source
    rng = np.random.default_rng(3)
    X, y, w = rng.standard_normal((6, 3)), rng.standard_normal(6), rng.standard_normal(3)
    np.testing.assert_allclose(sym.grad(X, y, w), 2 * X.T @ (X @ w - y) / 6, rtol=1e-13)


def test_guard_checks_that_the_sizes_agree():
    sym = gradc.compile(logistic, gradc.spec("f64[n,3]"), gradc.spec("f64[n]"), np.zeros(3), wrt=2)
    with pytest.raises(ValueError, match=r"argument 'y' has shape \(4,\), so n = 4, but an earlier argument has "
                                         r"n = 5; the sizes named n must agree"):
        sym.grad(np.ones((5, 3)), np.ones(4), np.zeros(3))
    with pytest.raises(ValueError, match=r"argument 'X' must be float64 array of shape \(n, 3\)"):
        sym.grad(np.ones((5, 2)), np.ones(5), np.zeros(3))
    with pytest.raises(ValueError, match="a named size must be at least 1"):
        sym.grad(np.ones((0, 3)), np.ones(0), np.zeros(3))


def test_spec_errors_are_clear():
    with pytest.raises(gradc.ArgumentError, match="a dimension is an integer or a size name"):
        gradc.spec("f64[n+1,3]")
    with pytest.raises(gradc.ArgumentError, match="unknown dtype"):
        gradc.spec("f65[n]")


def test_a_size_named_like_a_parameter_is_refused():
    def loss(X, n):
        return np.sum(X) * n
    with pytest.raises(GradcError, match="size named 'n'.*also a parameter of loss"):
        gradc.compile(loss, gradc.spec("f64[n]"), 2.0)


def test_python_needing_the_size_as_a_number_says_so():
    def loss(X, w):
        return np.sum(np.zeros(X.shape[0]) + X @ w)
    with pytest.raises(GradcError, match="the size n is known only when the compiled function runs") as err:
        gradc.compile(loss, gradc.spec("f64[n,3]"), np.zeros(3))
    assert "test_symbolic_sizes.py" in str(err.value)


def test_len_of_a_named_axis_says_to_use_shape():
    def loss(X, w):
        return np.sum(X @ w) / len(X)
    with pytest.raises(GradcError, match=r"len\(\) of an array whose length n is a named size.*x.shape\[0\]"):
        gradc.compile(loss, gradc.spec("f64[n,3]"), np.zeros(3))


def test_a_slice_of_fixed_length_on_a_named_axis_is_refused():
    def loss(X, w):
        return np.sum(X[:5] @ w)
    with pytest.raises(GradcError, match="not a fixed expression of n"):
        gradc.compile(loss, gradc.spec("f64[n,3]"), np.zeros(3))


def test_mismatched_named_sizes_do_not_broadcast():
    def loss(X, Z):
        return np.sum(X * Z)
    with pytest.raises(GradcError, match="do not broadcast"):
        gradc.compile(loss, gradc.spec("f64[n]"), gradc.spec("f64[m]"))


def test_cli_compiles_named_sizes_and_checks_them(tmp_path):
    from tests.cli.cli_harness import run_cli

    (tmp_path / "model.py").write_text("import numpy as np\n\n\ndef loss(X, y, w):\n"
                                       "    return np.mean((X @ w - y) ** 2)\n")
    result = run_cli("compile", "model.py:loss", "--arg", "X=f64[n,3]", "--arg", "y=f64[n]", "--arg", "w=f64[3]",
                     "--wrt", "w", "--check", "-o", "out.py", cwd=tmp_path)
    assert result.status == 0, result.stderr
    assert "check: ok" in result.stderr
    namespace: dict = {}
    exec(compile((tmp_path / "out.py").read_text(), "out.py", "exec"), namespace)
    rng = np.random.default_rng(4)
    for n in (1, 6):
        X, y, w = rng.standard_normal((n, 3)), rng.standard_normal(n), rng.standard_normal(3)
        np.testing.assert_allclose(namespace["loss_grad"](X, y, w), 2 * X.T @ (X @ w - y) / n, rtol=1e-13)


def test_array_api_target_takes_named_sizes():
    pytest.importorskip("array_api_compat")
    sym = gradc.compile(logistic, gradc.spec("f64[n,3]"), gradc.spec("f64[n]"), np.zeros(3), wrt=2,
                        target="array_api")
    rng = np.random.default_rng(5)
    for n in (1, 4, 9):
        X, y, w = rng.standard_normal((n, 3)), rng.standard_normal(n), rng.standard_normal(3)
        want = gradc.compile(logistic, X, y, w, wrt=2).grad(X, y, w)
        np.testing.assert_allclose(sym.grad(X, y, w), want, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="the sizes named n must agree"):
        sym.grad(np.ones((3, 3)), np.ones(2), np.zeros(3))
    strict = pytest.importorskip("array_api_strict")
    X, y, w = rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal(3)
    got = sym.grad(strict.asarray(X), strict.asarray(y), strict.asarray(w))
    np.testing.assert_allclose(np.asarray(got), gradc.compile(logistic, X, y, w, wrt=2).grad(X, y, w), rtol=1e-12)


MODES = [("jvp", lambda c, X, y, w: c.jvp(X, y, w, np.array([1.0, -2.0, 0.5]))),
         ("vjp", lambda c, X, y, w: c.vjp(X, y, w, 1.0)),
         ("hessian", lambda c, X, y, w: c.hessian(X, y, w)),
         ("hvp", lambda c, X, y, w: c.hvp(X, y, w, np.array([0.3, 1.0, -1.0]))),
         ("jacobian", lambda c, X, y, w: c.jacobian(X, y, w))]


@pytest.mark.parametrize("mode, call", MODES, ids=[m for m, _ in MODES])
def test_every_mode_takes_named_sizes(mode, call):
    sym = gradc.compile(logistic, gradc.spec("f64[n,3]"), gradc.spec("f64[n]"), np.zeros(3), wrt="w", mode=mode)
    rng = np.random.default_rng(6)
    for n in (1, 4, 9):
        X, y, w = rng.standard_normal((n, 3)), rng.standard_normal(n), rng.standard_normal(3)
        got = call(sym, X, y, w)
        want = call(gradc.compile(logistic, X, y, w, wrt="w", mode=mode), X, y, w)
        for g, h in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(g, h, rtol=1e-12, atol=1e-14)
    if mode == "hessian":  # against finite differences of the (independently checked) gradient
        X, y, w = rng.standard_normal((5, 3)), rng.standard_normal(5), rng.standard_normal(3)
        grad = gradc.compile(logistic, X, y, w, wrt="w").grad
        numeric = np.array([central_gradient(lambda v, i=i: grad(X, y, v)[i], w) for i in range(3)])
        np.testing.assert_allclose(sym.hessian(X, y, w), numeric, rtol=1e-6, atol=1e-8)


def test_jacobian_of_per_row_outputs_uses_the_fixed_side():
    def predict(X, w):
        return np.tanh(X @ w)
    sym = gradc.compile(predict, gradc.spec("f64[n,3]"), np.zeros(3), wrt="w", mode="jacobian")
    rng = np.random.default_rng(7)
    for n in (1, 6):
        X, w = rng.standard_normal((n, 3)), rng.standard_normal(3)
        np.testing.assert_allclose(sym.jacobian(X, w), (1 - np.tanh(X @ w) ** 2)[:, None] * X, rtol=1e-13)
    with pytest.raises(GradcError, match="named sizes on both sides"):
        gradc.compile(predict, gradc.spec("f64[n,3]"), np.zeros(3), wrt="X", mode="jacobian")


def test_scans_and_sorts_along_a_named_axis():
    def loss(X, w):
        return np.sum(np.cumsum(X @ w) ** 2) + np.sum(np.sort(X[:, 0]) * w[0]) + np.median(X[0] * w)
    sym = gradc.compile(loss, gradc.spec("f64[n,3]"), np.zeros(3), wrt="w")
    rng = np.random.default_rng(8)
    for n in (1, 2, 7):
        X, w = rng.standard_normal((n, 3)), rng.standard_normal(3)
        np.testing.assert_allclose(sym.grad(X, w), gradc.compile(loss, X, w, wrt="w").grad(X, w), rtol=1e-12)


def _quantiles(X, w):
    r = X @ w
    return (np.median(np.abs(r)) + np.percentile(r, 75) + np.sum(np.quantile(r, [0.1, 0.9], method="nearest"))
            + np.quantile(r, 0.3, method="midpoint") + np.quantile(r, 0.6, method="lower")
            + np.quantile(r, 0.6, method="higher"))


def test_quantiles_over_a_named_axis_pick_their_positions_at_run_time():
    sym = gradc.compile(_quantiles, gradc.spec("f64[n,3]"), np.zeros(3), wrt="w")
    rng = np.random.default_rng(10)
    for n in (1, 2, 3, 8, 17):
        X, w = rng.standard_normal((n, 3)), rng.standard_normal(3)
        np.testing.assert_allclose(sym.forward(X, w), _quantiles(X, w), rtol=1e-13)
        np.testing.assert_allclose(sym.grad(X, w), gradc.compile(_quantiles, X, w, wrt="w").grad(X, w), rtol=1e-12)
    X, w = rng.standard_normal((9, 3)), rng.standard_normal(3)
    np.testing.assert_allclose(sym.grad(X, w), central_gradient(lambda v: _quantiles(X, v), w), rtol=1e-6)


def test_a_loop_over_the_rows_of_a_named_size_runs_n_times():
    def loss(X, w):
        acc = 0.0
        for i in range(X.shape[0]):
            acc = acc + np.tanh(X[i] @ w) ** 2
        return acc / X.shape[0]
    sym = gradc.compile(loss, gradc.spec("f64[n,3]"), np.zeros(3), wrt="w")
    assert "for i in range(" in sym.source  # one loop of run-time length, not unrolled
    rng = np.random.default_rng(9)
    for n in (1, 2, 5):
        X, w = rng.standard_normal((n, 3)), rng.standard_normal(3)
        np.testing.assert_allclose(sym.grad(X, w), gradc.compile(loss, X, w, wrt="w").grad(X, w), rtol=1e-12)
        numeric = central_gradient(lambda v, X=X: loss(X, v), w)
        np.testing.assert_allclose(sym.grad(X, w), numeric, rtol=1e-6, atol=1e-9)


def _like_arrays(X, y, w):
    base = np.zeros_like(y) + np.ones_like(y) * 0.5
    return np.sum((X @ w - y + base) ** 2)


def _float_size_arithmetic(X, y, w):
    n = X.shape[0]
    return np.sum((X @ w - y) ** 2) / (2.0 * n) + np.log(n) * w[0] + np.sqrt(X.shape[0]) * 0.5 * w[1] ** 2


def _covariance_over_rows(X, y, w):
    return np.sum(np.cov((X * w).T)) + np.corrcoef(X @ w, y)[0, 1]


def _diagonals(X, y, w):
    r = X @ w - y
    return np.trace(np.outer(r, y)) + np.sum(np.diag(r) @ y)


def _cumulative_product(X, y, w):
    return np.sum(np.cumprod(1.0 + 0.1 * np.tanh(X @ w)))


def _rolled(X, y, w):
    r = X @ w - y
    return np.sum(r * np.roll(r, 1)) + np.sum((X - np.roll(X, -1, axis=0)) @ w ** 2)


def _fixed_row_index(X, y, w):
    return X[0] @ w + np.sum(X[-1] * w ** 2) + np.mean(y)


MORE_ROW_LOSSES = [_like_arrays, _float_size_arithmetic, _covariance_over_rows, _diagonals, _cumulative_product,
                   _rolled, _fixed_row_index]


@pytest.mark.parametrize("f", MORE_ROW_LOSSES, ids=lambda f: f.__name__.strip("_"))
def test_more_functions_of_named_sizes(f):
    rng = np.random.default_rng(12)
    w = rng.standard_normal(3)
    sym = gradc.compile(f, gradc.spec("f64[n,3]"), gradc.spec("f64[n]"), w, wrt="w")
    for n in (2, 3, 9) if f is _covariance_over_rows else (1, 2, 3, 9):
        X, y = _data(n, rng)
        np.testing.assert_allclose(sym.forward(X, y, w), f(X, y, w), rtol=1e-12, atol=1e-14)
        want = gradc.compile(f, X, y, w, wrt="w").grad(X, y, w)
        np.testing.assert_allclose(sym.grad(X, y, w), want, rtol=1e-11, atol=1e-13)
    X, y = _data(6, rng)
    np.testing.assert_allclose(sym.grad(X, y, w), central_gradient(lambda v: f(X, y, v), w), rtol=1e-6, atol=1e-8)


def _python_if_on_a_size(X, w):
    if X.shape[0] > 10:  # MARK
        return np.sum(X @ w)
    return np.mean(X @ w)


def _float_of_a_size(X, w):
    n = float(X.shape[0])
    return np.sum(X @ w) / n


def _roll_by_two(X, w):
    return np.sum(np.roll(X @ w, 2))


@pytest.mark.parametrize("f, words", [(_python_if_on_a_size, "used where Python needs a number"),
                                      (_float_of_a_size, "used where Python needs a number"),
                                      (_roll_by_two, "np.roll by 2 along an axis of named size n")])
def test_python_numbers_from_named_sizes_are_refused_at_the_users_line(f, words):
    with pytest.raises(GradcError, match=words) as err:
        gradc.compile(f, gradc.spec("f64[n,3]"), np.zeros(3))
    assert "test_symbolic_sizes.py:" in str(err.value)
