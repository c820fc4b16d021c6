"""scipy.integrate.quad over infinite intervals (gradc/integrate/quadrature.py: the variable transformation).

References independent of gradc: closed forms (Laplace transforms, Gaussian integrals, arctan), SciPy's own quad
(QUADPACK's qagi) on the same integrand, and central differences of the user's function run by SciPy; both
targets; a seeded generator of Gaussian-type integrands with random parameters."""
import numpy as np
import pytest
import scipy.integrate as si

import gradc
from gradc.backends.c import build as c_build

TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(c_build.find_compiler() is None,
                                                                  reason="no C compiler"))]
TOL = 1e-7  # quad's default tolerance is 1.49e-8 (relative): the adaptive solver meets it, not more


def central(fun, x, eps=1e-5):
    return (fun(x + eps) - fun(x - eps)) / (2 * eps)


def laplace(k):
    return si.quad(lambda x: np.exp(-k * x), 0.0, np.inf)[0]


def gaussian(s):
    return si.quad(lambda x, s: np.exp(-x * x / (2 * s * s)), -np.inf, np.inf, args=(s,))[0]


def cauchy_tail(a):
    return si.quad(lambda x: 1.0 / (1.0 + x * x), a, np.inf)[0]


def left_tail(b):
    return si.quad(lambda x: np.exp(x) * (1 + 0.5 * np.sin(x)), -np.inf, b)[0]


def reversed_tail(k):
    return si.quad(lambda x: np.exp(-k * x), np.inf, 0.0)[0]


CLOSED = [  # (function, point, value, derivative)
    (laplace, 2.0, 0.5, -0.25),
    (gaussian, 1.5, np.sqrt(2 * np.pi) * 1.5, np.sqrt(2 * np.pi)),
    (cauchy_tail, 0.5, np.pi / 2 - np.arctan(0.5), -1 / 1.25),  # d/da: -f(a)
    (reversed_tail, 2.0, -0.5, 0.25),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, x, value, derivative", CLOSED, ids=[c[0].__name__ for c in CLOSED])
def test_closed_forms(fn, x, value, derivative, target):
    got, grad = gradc.compile(fn, x, target=target).value_and_grad(x)
    assert abs(got - value) <= TOL * abs(value)
    assert abs(grad - derivative) <= 1e-6 * abs(derivative)


def test_left_tail_matches_scipy_and_differences():
    b = 0.3
    assert abs(gradc.jit(left_tail)(b) - left_tail(b)) <= TOL * abs(left_tail(b))
    # d/db of the integral up to b is the integrand at b
    assert abs(gradc.grad(left_tail)(b) - np.exp(b) * (1 + 0.5 * np.sin(b))) <= 1e-6


@pytest.mark.parametrize("seed", range(5))
def test_random_gaussian_type_integrands(seed):
    """Integrand c exp(-(x - m)^2 / (2 s^2)) (1 + e x^2), over [a, inf), (-inf, b] or the line, random parameters."""
    rng = np.random.default_rng(seed)
    m, s, e, c = rng.normal(), rng.uniform(0.5, 2.0), rng.uniform(0.0, 1.0), rng.uniform(0.5, 2.0)
    lo, hi = [(rng.normal(), np.inf), (-np.inf, rng.normal()), (-np.inf, np.inf)][seed % 3]

    def integral(params):
        def f(x, m, s):
            return params[3] * np.exp(-(x - m) ** 2 / (2 * s * s)) * (1 + params[2] * x * x)
        return si.quad(f, lo, hi, args=(params[0], params[1]))[0]
    params = np.array([m, s, e, c])
    assert abs(gradc.jit(integral)(params) - integral(params)) <= TOL * abs(integral(params))
    grad = gradc.grad(integral)(params)
    for i, step in enumerate(np.eye(4)):
        along = central(lambda t, step=step: integral(params + t * step), 0.0)
        assert abs(grad[i] - along) <= 1e-5 * (1 + abs(grad[i]))


def test_infinite_limits_of_one_sign_give_zero_and_nothing_traced_runs_scipy():
    assert gradc.jit(lambda k: si.quad(lambda x: k * np.exp(-x * x), np.inf, np.inf)[0] + k)(1.0) == 1.0
    value = gradc.jit(lambda k: k * si.quad(lambda x: np.exp(-x * x), -np.inf, np.inf)[0])(2.0)
    assert abs(value - 2 * np.sqrt(np.pi)) < 1e-12  # SciPy's own quad: nothing traced in it


def test_nan_limit_is_refused_clearly():
    def f(k):
        return si.quad(lambda x: k * x, 0.0, np.nan)[0]
    with pytest.raises(gradc.GradcError, match="a limit is NaN") as info:
        gradc.grad(f)(1.0)
    assert "test_quad_infinite.py" in str(info.value)
