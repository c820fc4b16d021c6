"""``static_argnums`` / ``static_argnames`` on every transform (JAX's names and meaning).

A static argument is a hashable Python value baked into the trace: part of the cache key (a new value
traces again), not a parameter of the emitted code, recorded in its header. References: the user's
function run by NumPy and central finite differences.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from tests.finite_differences import central_gradient

X = np.array([0.4, -1.2, 0.9])
V = np.array([1.0, -0.5, 2.0])


def power_sum(x, n, mode="sum"):
    """``n`` sets a trip count and ``mode`` a Python branch: both steer Python, so both are static."""
    y = x
    for _ in range(n - 1):
        y = y * x
    return np.sum(y) if mode == "sum" else np.mean(y)


def powers(x, n):
    out = x
    for _ in range(n - 1):
        out = out * x
    return out


def numeric_jacobian(f, x, h=1e-6):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=-1)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("how", ["argnums", "negative_argnums", "argnames", "keyword_call"])
def test_grad_and_value_and_grad_with_a_static_trip_count(n, how):
    options = {"argnums": dict(static_argnums=1), "negative_argnums": dict(static_argnums=-2),
               "argnames": dict(static_argnames="n"), "keyword_call": dict(static_argnames=("n",))}[how]
    g = gradc.grad(power_sum, **options)
    got = g(X, n=n) if how == "keyword_call" else g(X, n)
    np.testing.assert_allclose(got, central_gradient(lambda x: power_sum(x, n), X), rtol=1e-6, atol=1e-8)
    value, grad = gradc.value_and_grad(power_sum, **options)(X, n)
    assert np.isclose(value, power_sum(X, n))
    np.testing.assert_allclose(grad, got)


def test_a_new_static_value_traces_again_and_the_old_one_is_cached():
    g = gradc.grad(power_sum, static_argnames=("n", "mode"))
    first = g(X, 2, "sum")
    assert len(g.static_cache) == 1
    g(X, 3, "sum")
    g(X, 2, "mean")
    assert len(g.static_cache) == 3
    np.testing.assert_allclose(g(X, 2, "sum"), first)
    assert len(g.static_cache) == 3
    np.testing.assert_allclose(g(X, 2, "mean"), central_gradient(lambda x: power_sum(x, 2, "mean"), X), atol=1e-8)


def test_static_argument_with_the_same_value_of_another_type_is_another_key():
    g = gradc.grad(lambda x, c: np.sum(x * c), static_argnums=1)
    assert isinstance(g(X, 2), np.ndarray) and isinstance(g(X, 2.0), np.ndarray)
    assert len(g.static_cache) == 2  # 2 and 2.0 are equal and hash alike, yet JAX-style keys keep the type


def test_every_jacobian_transform_takes_static_arguments():
    want = numeric_jacobian(lambda x: powers(x, 3), X)
    for transform in (gradc.jacfwd, gradc.jacrev, gradc.jacobian):
        np.testing.assert_allclose(transform(powers, static_argnums=1)(X, 3), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(transform(powers, static_argnames="n")(X, n=3), want, rtol=1e-6, atol=1e-8)


def test_hessian_and_hvp_take_static_arguments():
    want = numeric_jacobian(lambda x: central_gradient(lambda y: power_sum(y, 4), x, h=1e-4), X, h=1e-4)
    np.testing.assert_allclose(gradc.hessian(power_sum, static_argnums=1)(X, 4), want, rtol=1e-4, atol=1e-4)
    got = gradc.hvp(power_sum, (X, 4), (V, None), static_argnums=1)
    np.testing.assert_allclose(got, want @ V, rtol=1e-4, atol=1e-4)


def test_jvp_and_vjp_take_static_arguments():
    out, tangent = gradc.jvp(powers, (X, 3), (V, None), static_argnums=1)
    np.testing.assert_allclose(out, X ** 3)
    np.testing.assert_allclose(tangent, 3 * X ** 2 * V)
    out, pullback = gradc.vjp(powers, X, 3, static_argnums=1)
    ct, n_ct = pullback(V)
    np.testing.assert_allclose(ct, 3 * X ** 2 * V)
    assert n_ct is None  # one entry per primal, as JAX's; a static one's is None
    np.testing.assert_allclose(gradc.vjp(powers, X, 3, static_argnums=1, wrt="x")[1](V), 3 * X ** 2 * V)


def test_vmap_and_jit_take_static_arguments():
    batch = np.stack([X, 2 * X])
    got = gradc.vmap(power_sum, in_axes=(0, None), static_argnums=1)(batch, 3)
    np.testing.assert_allclose(got, [power_sum(row, 3) for row in batch])
    np.testing.assert_allclose(gradc.jit(power_sum, static_argnums=1)(X, 3), power_sum(X, 3))


def test_compile_bakes_the_static_values_in_and_its_header_records_them():
    c = gradc.compile(power_sum, X, 3, "mean", static_argnames=("n", "mode"))
    header = c.source.splitlines()[0]
    assert "static n=3, mode='mean'" in header
    assert "def power_sum(x):" in c.source  # the emitted functions do not take them
    np.testing.assert_allclose(c.grad(X), central_gradient(lambda x: power_sum(x, 3, "mean"), X), atol=1e-8)
    c2 = gradc.compile(power_sum, X, 3, static_argnums=1, target="c")
    np.testing.assert_allclose(c2.grad(X), central_gradient(lambda x: power_sum(x, 3), X), atol=1e-8)


def test_compile_with_static_arguments_in_other_modes():
    u = gradc.compile(powers, X, 2, static_argnums=1, mode="jvp")
    out, tangent = u.jvp(X, V)
    np.testing.assert_allclose(tangent, 2 * X * V)


def test_a_list_indexed_by_a_static_integer_table():
    def chain(x, parents):
        values = [x[0]]
        for i in range(1, len(parents)):
            values.append(values[parents[i]] * x[i])
        return values[-1]

    parents = (0, 0, 1)
    got = gradc.grad(chain, static_argnums=1)(X, parents)
    np.testing.assert_allclose(got, central_gradient(lambda x: chain(x, parents), X), atol=1e-8)


def test_a_list_indexed_by_an_integer_table_is_a_traced_choice():
    def chain(x, parents):
        values = [x[0]]
        for i in range(1, 3):
            values.append(values[parents[i]] * x[i])
        return values[-1]

    parents = np.array([0, 0, 1])
    got = gradc.grad(chain)(X, parents)
    np.testing.assert_allclose(got, central_gradient(lambda x: chain(x, parents), X), rtol=1e-6, atol=1e-8)


def test_the_error_meeting_an_integer_array_suggests_making_it_static():
    def padded(x, sizes):
        return np.sum(np.zeros(sizes[0]) + x[0])

    with pytest.raises(gradc.TraceError, match=r"static_argnames=\('sizes',\)") as info:
        gradc.grad(padded)(X, np.array([2, 3]))
    assert "test_static_args.py" in str(info.value)


# ---------------------------------------------------------------- random programs: static values x transforms
@pytest.mark.parametrize("seed", range(12))
def test_random_static_powers_and_scales(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5))
    scale = float(rng.choice([0.5, 2.0, -1.5]))
    x = rng.uniform(0.5, 1.5, 4)

    def f(x, n, scale):
        y = x
        for _ in range(n - 1):
            y = np.sin(y) * x
        return np.sum(y) * scale

    ref = lambda v: f(v, n, scale)  # noqa: E731
    want = central_gradient(ref, x)
    np.testing.assert_allclose(gradc.grad(f, static_argnums=(1, 2))(x, n, scale), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gradc.jacrev(f, static_argnames=("n", "scale"))(x, n, scale), want,
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gradc.jvp(f, (x, n, scale), (np.ones(4), None, None), static_argnums=(1, 2))[1],
                               want.sum(), rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- error paths
def test_a_static_position_out_of_range_is_a_clear_error():
    with pytest.raises(gradc.ArgumentError, match=r"static_argnums has 5, not a positional parameter"):
        gradc.grad(power_sum, static_argnums=5)


def test_an_unknown_static_name_is_a_clear_error():
    with pytest.raises(gradc.ArgumentError, match=r"static_argnames has 'm', not a parameter of power_sum"):
        gradc.jacfwd(power_sum, static_argnames="m")


def test_a_static_argument_that_is_differentiated_is_a_clear_error():
    with pytest.raises(gradc.ArgumentError, match="both differentiated .* and static") as info:
        gradc.grad(power_sum, argnums=0, static_argnums=0)
    assert "test_static_args.py" in str(info.value)
    with pytest.raises(gradc.ArgumentError, match="both differentiated"):
        gradc.compile(power_sum, X, 2, static_argnums=0)


def test_an_unhashable_static_value_is_a_clear_error():
    with pytest.raises(gradc.ArgumentError, match="not hashable; static arguments are cache keys"):
        gradc.grad(lambda x, shape: np.sum(x), static_argnums=1)(X, [1, 2])


def test_a_static_argument_given_a_traced_value_is_a_clear_error():
    inner = gradc.grad(lambda x, n: np.sum(x * n), static_argnums=1)
    with pytest.raises(gradc.ArgumentError, match="static argument 'n' .* is a traced value"):
        gradc.grad(lambda x: inner(x, x[0]))(X)


def _gather_by_table(x, table):
    """A Python loop steered by an integer table (as GradBench's parent table steers ``ht``)."""
    out = []
    for i in range(len(table)):
        out.append(x[table[i]] * (i + 1) if table[i] >= 0 else x[0] * 0.5)
    return np.sum(np.stack(out) ** 2)


def test_a_numpy_array_may_be_static_and_is_keyed_by_its_contents():
    g = gradc.grad(_gather_by_table, static_argnums=1)
    x = np.array([0.3, -1.2, 2.0])
    for table in (np.array([-1, 0, 2, 1]), np.array([2, 2, -1])):
        got = g(x, table)
        want = central_gradient(lambda v, t=table: _gather_by_table(v, t), x)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    table = np.array([1, 0])
    first = g(x, table)
    table[0] = 2  # changed in place: a new key, a new trace (never the stale one)
    np.testing.assert_allclose(g(x, table), central_gradient(lambda v: _gather_by_table(v, table), x),
                               rtol=1e-6, atol=1e-8)
    assert not np.allclose(first, g(x, table))
