"""Sparse Jacobians and Hessians against the dense ones and central finite differences; detected patterns
against finite-difference patterns of random programs; colourings structurally orthogonal."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import gradc
from gradc.derivatives.sparse import SparseJacobian
from gradc.errors import ArgumentError, ShapeError
from gradc.trace import trace
from gradc.transforms.colouring import ORDERINGS, colour_columns, colour_rows, is_structurally_orthogonal
from gradc.transforms.sparsity import jacobian_pattern

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "corpus", "gradbench"))

from random_programs import random_program  # noqa: E402


def central_jacobian(f, x, h=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        cols.append((np.ravel(f(x + e)) - np.ravel(f(x - e))) / (2 * h))
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("seed", range(40))
def test_random_program_pattern_is_conservative_and_values_match(seed):
    f, x = random_program(seed)
    fd = central_jacobian(f, x)
    pattern = jacobian_pattern(trace(f, x), ["x"], [x]).toarray()
    assert pattern.shape == fd.shape
    missed = (np.abs(fd) > 1e-7) & ~pattern
    assert not missed.any(), f"pattern misses {np.argwhere(missed).tolist()}"
    got = gradc.jacobian(f, sparse=True)(x)
    assert sp.issparse(got) and got.format == "csr"
    dense = np.asarray(gradc.jacobian(f)(x)).reshape(fd.shape)
    np.testing.assert_allclose(got.toarray(), dense, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.toarray(), fd, rtol=1e-5, atol=1e-6)


def test_tridiagonal_needs_three_colours_and_matches():
    def f(x):
        y = x * x
        return y[1:-1] - 2.0 * np.sin(x[:-2]) + x[2:] ** 3

    x = np.linspace(0.1, 1.0, 40)
    sj = SparseJacobian.of(f, (x,), [0])
    assert sj.n_colours == 3 and sj.mode == "fwd"
    np.testing.assert_allclose(sj(x).toarray(), central_jacobian(f, x), rtol=1e-6, atol=1e-7)


def test_row_colouring_when_rows_are_fewer():
    def f(x):  # 2 outputs from disjoint halves, each dense in its half: rows orthogonal
        return np.stack([np.sum(np.sin(x[:10])), np.prod(x[10:])])

    x = np.linspace(0.5, 1.5, 20)
    sj = SparseJacobian.of(f, (x,), [0])
    assert sj.mode == "rev" and sj.n_colours == 1
    np.testing.assert_allclose(sj(x).toarray(), central_jacobian(f, x), rtol=1e-6, atol=1e-8)


def test_several_arguments_and_outputs_concatenate():
    def f(a, b):
        return a * b[:3], np.cos(b)

    a, b = np.linspace(0.1, 0.3, 3), np.linspace(0.5, 0.9, 5)
    got = gradc.jacobian(f, argnums=(0, 1), sparse=True)(a, b).toarray()
    (d00, d01), (d10, d11) = gradc.jacobian(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(got, np.block([[d00, d01], [d10, d11]]), rtol=1e-12)


def test_integer_inputs_steer_the_pattern():
    def f(x, idx):
        return x[idx] * x[(idx + 1) % 6]

    x = np.linspace(0.3, 1.3, 6)
    jac = gradc.jacobian(f, sparse=True)
    for idx in (np.array([0, 2, 4]), np.array([5, 5, 1])):
        want = central_jacobian(lambda v, idx=idx: f(v, idx), x)
        np.testing.assert_allclose(jac(x, idx).toarray(), want, rtol=1e-6, atol=1e-8)


def test_given_pattern_is_used_and_checked():
    def f(x):
        return x[1:] - x[:-1]

    x = np.arange(5.0)
    pattern = sp.eye(4, 5, format="csr") + sp.eye(4, 5, k=1, format="csr")
    got = gradc.jacobian(f, sparse=pattern)(x)
    np.testing.assert_allclose(got.toarray(), central_jacobian(f, x), atol=1e-8)
    with pytest.raises(ShapeError, match=r"shape \(5, 5\)"):
        gradc.jacobian(f, sparse=sp.eye(5, format="csr"))(x)
    with pytest.raises(ArgumentError, match="sparse= takes True or a sparsity pattern"):
        gradc.jacobian(f, sparse="yes")


def test_sparse_hessian_matches_dense_and_finite_differences():
    def f(x):
        return np.sum((x[1:] - x[:-1] ** 2) ** 2) + np.sum(np.cos(x)) * 0.1 + x[0] * x[-1]

    x = np.linspace(-0.5, 0.7, 12)
    got = gradc.hessian(f, sparse=True)(x)
    assert sp.issparse(got)
    np.testing.assert_allclose(got.toarray(), gradc.hessian(f)(x), rtol=1e-10, atol=1e-12)
    fd = central_jacobian(gradc.grad(f), x)
    np.testing.assert_allclose(got.toarray(), fd, rtol=1e-5, atol=1e-6)
    assert SparseJacobian.of(f, (x,), [0], hessian=True).n_colours < x.size


@pytest.mark.parametrize("seed", range(6))
def test_c_target_matches_numpy(seed):
    from gradc.backends.c import build

    if build.find_compiler() is None:
        pytest.skip("no C compiler")
    f, x = random_program(seed)
    want = SparseJacobian.of(f, (x,), [0])(x).toarray()
    got = SparseJacobian.of(f, (x,), [0], target="c")(x).toarray()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("ordering", ORDERINGS)
def test_colourings_are_structurally_orthogonal(seed, ordering):
    rng = np.random.default_rng(seed)
    pattern = sp.random(30, 25, density=0.12, random_state=rng, format="csr").astype(bool)
    columns = colour_columns(pattern, ordering)
    assert is_structurally_orthogonal(pattern, columns)
    assert columns.max(initial=-1) + 1 >= np.diff(pattern.indptr).max()  # a row's nonzeros all differ
    rows = colour_rows(pattern, ordering)
    assert is_structurally_orthogonal(pattern.T.tocsr(), rows)


def test_unknown_ordering_is_refused():
    with pytest.raises(ValueError, match="unknown ordering"):
        colour_columns(sp.eye(3, format="csr"), "random")


@pytest.mark.parametrize("seed", range(12))
def test_loops_by_fixed_point_stay_conservative(seed, monkeypatch):
    import gradc.transforms.sparsity_control as sparsity

    monkeypatch.setattr(sparsity, "UNROLL_LIMIT", 0)  # every scan by the fixed point, not unrolled

    def f(x):
        def body(i, c):
            return c * np.roll(c, 1) * 0.5 + np.sin(c)
        head = gradc.fori_loop(0, 3, body, x[:4])
        return np.concatenate([head, x[4:] ** 2])

    x = np.random.default_rng(seed).uniform(0.2, 1.2, 8)
    pattern = jacobian_pattern(trace(f, x), ["x"], [x]).toarray()
    fd = central_jacobian(f, x)
    assert not ((np.abs(fd) > 1e-7) & ~pattern).any()
    assert not pattern[4:, :4].any() and not pattern[:4, 4:].any()  # the loop stays in its block
    np.testing.assert_allclose(gradc.jacobian(f, sparse=True)(x).toarray(), fd, rtol=1e-5, atol=1e-6)


def test_while_loop_by_fixed_point():
    def f(x):
        def cond(c):
            return c[0] < 10.0

        def body(c):
            return c * 1.5 + np.roll(c, 1) * 0.1

        head = gradc.while_loop(cond, body, x[:3])
        return np.concatenate([head, np.exp(x[3:])])

    x = np.array([1.0, 0.5, 0.7, 0.2, 0.3])
    got = gradc.jacobian(f, sparse=True)(x).toarray()
    np.testing.assert_allclose(got, gradc.jacobian(f)(x), rtol=1e-10)
    np.testing.assert_allclose(got, central_jacobian(f, x), rtol=1e-5, atol=1e-6)
    assert not got[3:, :3].any()


def test_the_same_function_gives_the_same_module_text():
    from gradc.derivatives.sparse_module import sparse_module_source

    def f(x):
        return x[1:] * np.cos(x[:-1])

    x = np.ones(30)
    texts = {sparse_module_source(SparseJacobian(trace(f, x), ["x"], [x]), "jacobian", ["h"]) for _ in range(2)}
    assert len(texts) == 1


def test_bad_uses_are_clear_errors():
    def f(x, idx):
        return x[idx] * 2.0

    x, idx = np.ones(4), np.array([0, 2])
    with pytest.raises(ArgumentError, match="idx is not a float array input"):
        gradc.jacobian(f, argnums=1, sparse=True)(x, idx)
    with pytest.raises(ArgumentError, match="neither has_aux nor static"):
        gradc.jacobian(lambda v: (v * 2.0, v), has_aux=True, sparse=True)
    with pytest.raises(ShapeError, match="named size"):
        jacobian_pattern(trace(lambda v: v * 2.0, gradc.spec("f64[n]")), ["v"], [None])


def test_ops_without_a_derivative_carry_no_pattern():
    def f(x):
        return x * np.floor(x[::-1] * 3.0) + gradc.stop_gradient(x[0]) * x

    x = np.linspace(0.15, 0.95, 5)
    pattern = jacobian_pattern(trace(f, x), ["x"], [x]).toarray()
    np.testing.assert_array_equal(pattern, np.eye(5, dtype=bool))
    # stop_gradient hides x[0] from the derivative (finite differences of f would see it): the dense Jacobian
    np.testing.assert_allclose(gradc.jacobian(f, sparse=True)(x).toarray(), gradc.jacobian(f)(x), atol=1e-12)


def test_arguments_by_keyword_and_defaults():
    def f(x, idx, scale=2.0):
        return x[idx] * scale

    jac = gradc.jacobian(f, sparse=True)
    x, idx = np.ones(3), np.array([2, 0])
    np.testing.assert_array_equal(jac(x, idx=idx).toarray(), [[0, 0, 2], [2, 0, 0]])
    np.testing.assert_array_equal(jac(x, idx, scale=3.0).toarray(), [[0, 0, 3], [3, 0, 0]])
