"""Third-order reverse mode in the manner of autograd's ``check_grads(np.dot, [0, 1], order=3)``: each order
a ``gradc.vjp`` of the previous order's pullback, over a helper (a named local function, kept as a call).
Found running autograd's own test_systematic.py against gradc: the helper's split forwards of the second and
third order extend one another, and the merge kept the middle one while the pullback read the third's
residuals (a NameError in the emitted module). Checked against central differences of the second order."""
import numpy as np
import pytest

import gradc


def make_vjp(fun):
    def at(x):
        out, pull = gradc.vjp(fun, x)

        def vjp(ct):
            return pull(ct)[0]
        return vjp, out
    return at


def _next_order(f):
    """``(x, v) -> vjp of f at x applied to v``: the next order's function, as check_grads builds it."""
    return lambda xv: make_vjp(lambda a: f(a))(xv[0])[0](xv[1])


def _like(value, rng, complex_ok=True):
    leaves, tree = gradc.tree_util.tree_flatten(value)
    made = []
    for leaf in leaves:
        a = np.asarray(leaf)
        r = rng.standard_normal(a.shape)
        made.append(r + 1j * rng.standard_normal(a.shape) if np.iscomplexobj(a) and complex_ok else r)
    return gradc.tree_util.tree_unflatten(tree, made)


def _pair(a, b):
    la, _ = gradc.tree_util.tree_flatten(a)
    lb, _ = gradc.tree_util.tree_flatten(b)
    return sum(float(np.real(np.sum(np.asarray(x) * np.asarray(y)))) for x, y in zip(la, lb))


def _shifted(x, v, eps):
    lx, tree = gradc.tree_util.tree_flatten(x)
    lv, _ = gradc.tree_util.tree_flatten(v)
    return gradc.tree_util.tree_unflatten(tree, [np.asarray(a) + eps * np.asarray(b) for a, b in zip(lx, lv)])


@pytest.mark.parametrize("complex_b", [False, True])
def test_third_order_vjp_of_a_helper_over_real_and_complex(complex_b):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 2, 3))
    b = rng.standard_normal(3) + (1j * rng.standard_normal(3) if complex_b else 0)

    def product(ab):  # a named function: kept as a call, split at each order
        full = [ab[0], ab[1]]
        return np.dot(*full)
    second = _next_order(product)
    x2 = ((a, b), _like(product((a, b)), rng))
    third = _next_order(second)
    x3 = (x2, _like(second(x2), rng))
    out, pull = gradc.vjp(third, x3)
    ct, direction = _like(out, rng), _like(x3, rng)
    exact = _pair(direction, pull(ct)[0])
    eps = 1e-6
    numeric = _pair(ct, gradc.tree_util.tree_map(
        lambda p, m: (np.asarray(p) - np.asarray(m)) / (2 * eps),
        third(_shifted(x3, direction, eps)), third(_shifted(x3, direction, -eps))))
    assert exact == pytest.approx(numeric, rel=1e-6, abs=1e-8)
