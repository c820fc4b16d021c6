"""The C target's small dense linear algebra (gradc/backends/c/linalg.py).

Values and gradients of the C target against the NumPy target (1e-12 relative; float32 to a few
ulp) and against central finite differences; 1 x 1 matrices, stacks, strided operands; what
non-positive-definite and singular input gives (NaN, documented in the module); and the one
error listing every op without a C lowering.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c.linalg import helper_text
from gradc.ops import linalg_cholesky as lch
from gradc.ops import linalg_scipy as lsp

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


def spd(*shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) / shape[-1] + np.eye(shape[-1])


def well_conditioned(*shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape) + 3.0 * np.eye(shape[-1])


def normal(*shape, seed=2):
    return np.random.default_rng(seed).standard_normal(shape)


def close(c_value, np_value, rtol=1e-12):
    c_value, np_value = np.asarray(c_value), np.asarray(np_value)
    assert c_value.shape == np_value.shape and c_value.dtype == np_value.dtype
    scale = max(float(np.max(np.abs(np_value), initial=0.0)), 1e-300)
    assert float(np.max(np.abs(c_value - np_value), initial=0.0)) <= rtol * scale


def both(f, args, wrt):
    return gradc.compile(f, *args, wrt=wrt, target="c"), gradc.compile(f, *args, wrt=wrt)


def finite_difference(f, args, k, direction, h=1e-6):
    plus, minus = list(args), list(args)
    plus[k], minus[k] = args[k] + h * direction, args[k] - h * direction
    return (f(*plus) - f(*minus)) / (2 * h)


# ---------------------------------------------------------------- the benchmark's losses, small
def gp_nll(a, y):
    chol = np.linalg.cholesky(a)
    z = scipy.linalg.solve_triangular(chol, y, lower=True)
    return 0.5 * (z @ z) + np.sum(np.log(np.diag(chol)))


def gls(b, x, y, sigma):
    chol = np.linalg.cholesky(sigma)
    z = scipy.linalg.solve_triangular(chol, y - x @ b, lower=True)
    return 0.5 * (z @ z)


@pytest.mark.parametrize("n", [1, 2, 5, 17])
def test_gp_value_and_gradient(n):
    a, y = spd(n, n), normal(n)
    c, p = both(gp_nll, (a, y), ("a", "y"))
    value, (ga, gy) = c.value_and_grad(a, y)
    ref_value, (ref_ga, ref_gy) = p.value_and_grad(a, y)
    close(value, ref_value)
    close(ga, ref_ga)
    close(gy, ref_gy)
    e = normal(n, n, seed=3)
    e = e + e.T  # symmetric: the gradient is read on the lower triangle
    assert abs(np.sum(ga * np.tril(e)) - finite_difference(gp_nll, (a, y), 0, e)) <= 1e-7 * (1 + np.abs(ga).max())


def test_gls_value_and_gradient():
    b, x, sigma = normal(4), normal(9, 4, seed=4), spd(9, 9, seed=5)
    y = x @ np.ones(4) + normal(9, seed=6)
    c, p = both(gls, (b, x, y, sigma), ("b", "sigma"))
    (value, grads), (ref_value, ref_grads) = c.value_and_grad(b, x, y, sigma), p.value_and_grad(b, x, y, sigma)
    close(value, ref_value)
    for g, r in zip(grads, ref_grads):
        close(g, r)
    d = normal(4, seed=7)
    assert abs(grads[0] @ d - finite_difference(gls, (b, x, y, sigma), 0, d)) <= 1e-7 * (1 + np.abs(grads[0]).max())


# ---------------------------------------------------------------- each op, batched and transposed
def triangular_solves(a, b):
    lower = lsp.solve_triangular(a, b, lower=True)
    upper_t = lsp.solve_triangular(a, b, trans=1)
    return np.sum(lower * upper_t) + np.sum(lsp.solve_triangular(np.swapaxes(a, -1, -2), b, lower=True, trans=1))


def solves(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2) + np.sum(np.linalg.inv(a)) + np.sum(np.linalg.slogdet(a)[1])


def determinant(a):
    return np.sum(np.linalg.det(a))


def factor_solves(a, b):
    return np.sum(lsp.cho_solve(lsp.cho_factor(a), b) ** 2) + np.sum(lsp.lu_solve(lsp.lu_factor(a), b, trans=1))


def cholesky_upper_stack(a, w):
    return np.sum(np.linalg.cholesky(a, upper=True) * w)


CASES = [
    ("triangular_solves", triangular_solves, lambda: (well_conditioned(4, 4), normal(4, 3))),
    ("triangular_solves_1x1", triangular_solves, lambda: (well_conditioned(1, 1), normal(1, 2))),
    ("triangular_solves_stack", triangular_solves, lambda: (well_conditioned(2, 3, 3), normal(2, 3, 2))),
    ("solves", solves, lambda: (well_conditioned(5, 5), normal(5, 2))),
    ("solves_stack", solves, lambda: (well_conditioned(3, 4, 4), normal(3, 4, 1))),
    ("determinant_stack", determinant, lambda: (well_conditioned(2, 3, 3),)),
    ("factor_solves", factor_solves, lambda: (spd(4, 4), normal(4, 2))),
    ("cholesky_upper_stack", cholesky_upper_stack, lambda: (spd(3, 4, 4), normal(3, 4, 4))),
]


@pytest.mark.parametrize("name, f, make", CASES, ids=[c[0] for c in CASES])
def test_op_values_and_gradients(name, f, make):
    args = make()
    c, p = both(f, args, 0)
    (value, grad), (ref_value, ref_grad) = c.value_and_grad(*args), p.value_and_grad(*args)
    close(value, ref_value)
    close(grad, ref_grad)
    d = normal(*args[0].shape, seed=8)
    if name.startswith(("factor", "cholesky")):
        d = d + np.swapaxes(d, -1, -2)  # Cholesky reads one triangle (its gradient is 0 on the other): symmetric
    fd = finite_difference(f, args, 0, d)
    assert abs(np.sum(grad * d) - fd) <= 1e-6 * (1 + abs(fd))


def test_cholesky_grad_beyond_a_block():
    """The C helper is Murray's unblocked algorithm; the NumPy target's blocked one must agree."""
    n = lch.BLOCK + 9
    a, w = spd(n, n, seed=9), normal(n, n, seed=10)
    c, p = both(cholesky_upper_stack, (a, w), 0)
    close(c.grad(a, w), p.grad(a, w), rtol=1e-11)


def test_float32():
    a, b = spd(4, 4).astype(np.float32), normal(4, 2).astype(np.float32)
    c, p = both(factor_solves, (a, b), 0)
    value, grad = c.value_and_grad(a, b)
    ref_value, ref_grad = p.value_and_grad(a, b)
    assert np.asarray(value).dtype == np.float32 and grad.dtype == np.float32
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-4, atol=1e-5 * np.abs(ref_grad).max())


# ---------------------------------------------------------------- bad input: NaN, never garbage
def chol_sum(a):
    return np.sum(np.linalg.cholesky(a))


def test_not_positive_definite_raises_numpys_error_and_nan_stays_nan():
    good = spd(3, 3)
    c = gradc.compile(chol_sum, good, target="c")
    assert np.isfinite(c.forward(good))
    for bad in (np.diag([1.0, -1.0, 2.0]), np.zeros((3, 3))):
        with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
            np.linalg.cholesky(bad)
        for run in (c.forward, c.value_and_grad):
            with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
                run(bad)
    nan = np.full((3, 3), np.nan)
    assert np.isnan(np.linalg.cholesky(nan)[np.tril_indices(3)]).all()  # NumPy raises nothing for NaN
    assert np.isnan(c.forward(nan))
    value, grad = c.value_and_grad(nan)
    assert np.isnan(value) and np.isnan(grad[np.tril_indices(3)]).all()  # (the upper triangle is not read)


def test_singular_solve_and_determinant():
    def f(a, b):
        return np.sum(np.linalg.solve(a, b))

    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    c = gradc.compile(f, np.eye(2), np.ones(2), target="c")
    for run in (c.forward, c.value_and_grad):
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            run(singular, np.ones(2))
    assert np.isnan(c.forward(np.full((2, 2), np.nan), np.ones(2)))  # NaN is NaN, as NumPy's
    sign = gradc.compile(lambda a: np.linalg.slogdet(a)[0] * 1.0, np.eye(2), target="c")
    logdet = gradc.compile(lambda a: np.linalg.slogdet(a)[1], np.eye(2), target="c")
    assert sign.forward(singular) == 0.0 and logdet.forward(singular) == -np.inf
    assert sign.forward(np.diag([-2.0, 3.0])) == -1.0 and logdet.forward(np.diag([-2.0, 3.0])) == np.log(6.0)


# ---------------------------------------------------------------- what stays without C, and the source
def test_unlowered_ops_listed_at_once(monkeypatch):
    from gradc.ir.registry import OPS
    for name in ("eigh", "svdvals"):  # they have C now (linalg_decomp): take it away for this test
        monkeypatch.setattr(OPS[name], "c", None)

    def f(a):
        return np.sum(np.linalg.eigh(a)[0]) + np.sum(np.linalg.svd(a, compute_uv=False)) + np.sum(np.linalg.cholesky(a))

    with pytest.raises(gradc.GradcError, match="no C lowering for ops eigh, svdvals in f"):
        gradc.compile(f, spd(3, 3), target="c")


def test_source_is_deterministic_and_helpers_defined_once():
    from gradc.backends.c.build import emit_sources_for
    first = emit_sources_for(solves, well_conditioned(3, 3), normal(3, 2))[0]
    assert first == emit_sources_for(solves, well_conditioned(3, 3), normal(3, 2))[0]
    assert first.count("static long gradc_lu(") == 1 and first.count("static int gradc_solve(") == 1
    assert "static void gradc_trisolvef(long n" in helper_text("trisolve", "float")


def test_failures_match_numpys_on_random_integer_matrices():
    """Seeded small integer matrices, many exactly singular or not positive definite: the C target raises NumPy's
    LinAlgError (same message) where NumPy does, and agrees with NumPy's values elsewhere. The one allowed
    difference: C refuses an exactly singular matrix (exact determinant 0) where LAPACK's rounding left a tiny
    pivot and NumPy returned a meaningless solution."""
    import sympy

    rng = np.random.default_rng(3)
    ops = {"solve": lambda a: np.linalg.solve(a, np.arange(1.0, a.shape[0] + 1)), "inv": np.linalg.inv,
           "cholesky": np.linalg.cholesky}
    compiled: dict = {}
    outcomes = {"ok": 0, "err": 0}
    for trial in range(120):
        n = int(rng.integers(2, 5))
        a = rng.integers(-2, 3, (n, n)).astype(float)
        if trial % 2:
            a = a @ a.T if trial % 4 == 1 else a + a.T
        for name, f in ops.items():
            try:
                expected = ("ok", f(a))
            except np.linalg.LinAlgError as error:
                expected = ("err", str(error))
            run = compiled.setdefault((name, n), gradc.jit(f, target="c"))
            try:
                got = ("ok", run(a))
            except np.linalg.LinAlgError as error:
                got = ("err", str(error))
            outcomes[got[0]] += 1
            if expected[0] == "ok" and got[0] == "ok":
                np.testing.assert_allclose(got[1], expected[1], rtol=1e-8, atol=1e-8)
            elif got[0] == "err" and expected[0] == "ok":
                assert name != "cholesky" and sympy.Matrix(a.astype(int).tolist()).det() == 0, (name, a)
            else:
                assert got == expected, (name, a)
    assert outcomes["ok"] > 100 and outcomes["err"] > 50, outcomes
