"""The emitted NumPy module computes as NumPy at special points, on every path.

Every unary and binary elementwise op of the registry whose implementation is a NumPy
ufunc (the walk finds them; a new one is tested without an edit here) is compiled from
the user's own call of that ufunc, for a Python float (all-scalar code: Python floats and
``math``), a 0-d array and a 1-element array (NumPy arrays), and run at 0, -0.0, +-1,
+-inf, nan, huge, tiny and negative values. The emitted value equals NumPy's (nan and inf
at the same places), warns where NumPy warns (but for an inf or nan operand or result of
``+``, ``-``, ``*``, ``/`` on Python floats, which IEEE arithmetic gives without a word) and
never raises; the gradient on scalars
equals the gradient of the same op on arrays.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.special

import gradc
from gradc.ir.registry import OPS

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324, 1e-300, 710.0,
           -745.5]
# binary ops: every pair from a smaller set (the cross product stays a few hundred calls an op)
SPECIAL_PAIRS = [0.0, -0.0, 1.0, -1.0, 2.0, -0.5, np.inf, -np.inf, np.nan, 1e300]


def _ufunc_ops(nin: int) -> list:
    """``(op name, ufunc)`` of the elementwise float ops whose implementation is a NumPy ufunc of ``nin`` inputs."""
    found = []
    for name, op in sorted(OPS.items()):
        ufunc = op.impl
        if not isinstance(ufunc, np.ufunc) and op.impl.__module__ == "gradc.ops.special_scipy":  # erf, gammaln...
            ufunc = getattr(scipy.special, name, None)
        if not op.elementwise or not isinstance(ufunc, np.ufunc) or ufunc.nin != nin or ufunc.nout != 1:
            continue
        if "dd->d" not in ufunc.types and "d->d" not in ufunc.types and "dd->?" not in ufunc.types \
                and "d->?" not in ufunc.types:
            continue
        found.append((name, ufunc))
    return found


PYTHON_OPERATORS = {"add", "sub", "mul", "div"}
UNARY = _ufunc_ops(1)
BINARY = _ufunc_ops(2)


def test_the_walk_finds_the_ops():
    names = {name for name, _ in UNARY + BINARY}
    assert {"sqrt", "log", "arcsin", "arccos", "exp", "div", "pow", "maximum", "mod", "floor_divide",
            "arctan2", "hypot", "logaddexp", "erf", "gammaln"} <= names


def _run(fn, *args):
    """``(result, warned, error)`` of ``fn(*args)``: whether NumPy (or the code) warned, and what it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args)
        except Exception as e:  # noqa: BLE001  (the test reports what was raised)
            return None, False, e
    warned = any(issubclass(w.category, RuntimeWarning) for w in caught)
    return result, warned, None


def _same(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape and a.size == b.size == 1:
        a, b = a.reshape(()), b.reshape(())
    both_nan = np.isnan(a) & np.isnan(b)
    close = np.isclose(a, b, rtol=1e-12, atol=1e-300) | (a == b)
    return bool(np.all(both_nan | close))


def _user_function(ufunc, nin):
    if nin == 1:
        return lambda x: ufunc(x)
    return lambda x, y: ufunc(x, y)


def _array_function(ufunc, nin):
    if nin == 1:
        return lambda x: np.sum(ufunc(x))
    return lambda x, y: np.sum(ufunc(x, y))


def _compile(f, args, differentiable):
    if differentiable:
        return gradc.compile(f, *args, wrt=tuple(range(len(args))))
    return gradc.compile(f, *args, mode="jvp")  # a comparison or floor: the value only


def _points(nin):
    return [(v,) for v in SPECIAL] if nin == 1 else list(itertools.product(SPECIAL_PAIRS, repeat=2))


def _as(kind, point):
    if kind == "float":
        return tuple(float(v) for v in point)
    if kind == "0d":
        return tuple(np.array(v) for v in point)
    return tuple(np.array([v]) for v in point)


@pytest.mark.parametrize("name,ufunc", UNARY + BINARY, ids=[name for name, _ in UNARY + BINARY])
def test_values_and_gradients_at_special_points(name, ufunc):
    nin = ufunc.nin
    differentiable = not OPS[name].nondiff
    user = _user_function(ufunc, nin)
    mismatches = []
    compiled = {}
    for kind in ("float", "0d", "array"):
        f = _array_function(ufunc, nin) if kind == "array" else user
        example = _as(kind, (0.5,) * nin)
        try:
            compiled[kind] = _compile(f, example, differentiable)
        except gradc.GradcError as e:  # an op NumPy code reaches only on arrays: say so, do not hide it
            pytest.fail(f"{name} on {kind} inputs does not compile: {e}")
    for point in _points(nin):
        expected, numpy_warned, numpy_error = _run(user, *_as("float", point))
        array_grads = scalar_grads = None
        for kind in ("float", "0d", "array"):
            c = compiled[kind]
            args = _as(kind, point)
            value, warned, error = _run(c.forward, *args)
            if error is not None:
                if numpy_error is None:
                    mismatches.append(f"{kind}{point}: value raised {error!r}, NumPy gives {expected}")
                continue
            if numpy_error is None and not _same(value, expected):
                mismatches.append(f"{kind}{point}: value {value}, NumPy {expected}")
            # np.float64's ``**`` (the NumPy twin's spelling) does not warn for an infinite exponent; np.power does.
            # Python's + - * / give IEEE's inf and nan silently: all-scalar code leaves out NumPy's warning for an
            # inf or nan operand or result (a test of every result for it cost a tenth of a small function's time)
            silent = (name == "pow" and np.isinf(point[1])) or (
                name in PYTHON_OPERATORS and not (np.all(np.isfinite(point)) and np.isfinite(expected)))
            if numpy_error is None and kind == "float" and warned != numpy_warned and not (silent and numpy_warned):
                mismatches.append(f"{kind}{point}: warned={warned}, NumPy warned={numpy_warned}")
            if not differentiable:
                continue
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    grads = c.grad(*args)
                except Exception as e:  # noqa: BLE001
                    mismatches.append(f"{kind}{point}: gradient raised {e!r}")
                    continue
            grads = grads if isinstance(grads, tuple) else (grads,)
            if kind == "array":
                array_grads = grads
            elif kind == "float":
                scalar_grads = grads
        if differentiable and array_grads is not None and scalar_grads is not None and not all(
                _same(s, a) for s, a in zip(scalar_grads, array_grads)):
            mismatches.append(f"{point}: gradient on floats {scalar_grads}, on arrays {array_grads}")
    assert not mismatches, f"{name}: {len(mismatches)} mismatches, first: " + "; ".join(mismatches[:6])


# ---------------------------------------------------------------- the examples


def test_power_zero_has_slope_zero_everywhere_also_at_zero():
    # x ** 0 is the constant 1: its derivative is 0 at every x (torch masks y == 0 the same way), never
    # the 0 * inf of y * x ** (y - 1)
    assert gradc.grad(lambda x: np.power(x, 0.0))(0.0) == 0.0
    assert np.array_equal(gradc.grad(lambda x: np.sum(np.power(x, 0.0)))(np.array([0.0, -1.0, 2.0])), np.zeros(3))
    with np.errstate(all="ignore"):  # a traced exponent: the slope is chosen per entry
        x_bar, y_bar = gradc.grad(lambda x, y: np.sum(np.power(x, y)), wrt=("x", "y"))(
            np.array([0.0, 2.0, 0.0]), np.array([0.0, 2.0, 1.0]))
    assert np.array_equal(x_bar, [0.0, 4.0, 1.0])
    assert np.allclose(y_bar, [0.0, 4.0 * np.log(2.0), 0.0])


@pytest.mark.parametrize("fn,point,expected", [(np.arcsin, 1.0, np.inf), (np.arcsin, -1.0, np.inf),
                                               (np.arccos, 1.0, -np.inf), (np.arccos, -1.0, -np.inf),
                                               (np.sqrt, 0.0, np.inf), (np.log, 0.0, np.inf)])
def test_derivative_at_the_domain_edge_is_infinite_with_a_warning(fn, point, expected):
    with pytest.warns(RuntimeWarning):
        got = gradc.grad(lambda x: fn(x))(point)
    assert got == expected


def test_scalar_code_still_uses_python_floats_and_math():
    source = gradc.compile(lambda x, y: np.sin(x) * np.exp(y) + x / y, 0.5, 2.0, wrt=(0, 1)).source
    assert "from math import" in source and "except (ArithmeticError, ValueError)" in source
    assert "np.sin(" in source  # the twin, for NumPy's inf and nan


def test_two_scalar_arguments_of_array_code_divide_as_numpy():
    # x / y of two Python-float arguments of array code: the NumPy twin gives inf where Python raises
    f = lambda a, x, y: np.sum(a) + x / y  # noqa: E731
    with np.errstate(all="ignore"):
        value, grads = gradc.value_and_grad(f, wrt=(1, 2))(np.ones(2), 1.0, 0.0)
    assert value == np.inf and grads[0] == np.inf


@pytest.mark.parametrize("x", [1.0, np.array([3.0]), np.array([[1.0, 2.0, 3.0]])])
def test_std_of_one_value_has_derivative_zero(x):
    # over an axis of length 1 (or of a scalar) np.std is the constant 0: its derivative is 0, not nan
    if np.ndim(x):
        assert np.all(gradc.grad(lambda x: np.sum(np.std(x, axis=0)))(x) == 0.0)
        assert np.all(gradc.grad(lambda x: np.sum(np.var(x, axis=0)))(x) == 0.0)
    if np.size(x) == 1:
        assert np.all(gradc.grad(lambda x: np.std(x))(x) == 0.0)


def test_std_var_norm_at_zero_spread_match_torch():
    # torch 2.13.0 gives 0 for std and linalg.norm where the spread or length is 0 (JAX gives nan)
    equal = np.full(3, 2.0)
    assert np.all(gradc.grad(lambda x: np.std(x))(equal) == 0.0)
    assert np.all(gradc.grad(lambda x: np.var(x))(equal) == 0.0)
    assert np.all(gradc.grad(lambda x: np.linalg.norm(x))(np.zeros(3)) == 0.0)
    assert np.all(gradc.grad(lambda x: np.linalg.norm(x, axis=0).sum())(np.zeros((2, 2))) == 0.0)
    # elsewhere the usual derivative, against central differences
    x = np.array([1.0, 2.0, 4.0])
    h = 1e-6
    fd = [(np.std(x + h * e) - np.std(x - h * e)) / (2 * h) for e in np.eye(3)]
    assert np.allclose(gradc.grad(lambda x: np.std(x))(x), fd, rtol=1e-6)
    assert np.isnan(gradc.compile(lambda x: np.std(x), np.array([1.0, np.nan])).forward(np.array([1.0, np.nan])))


def test_std_of_a_scalar_over_an_axis_is_refused_as_numpy_does():
    with pytest.raises(np.exceptions.AxisError):
        np.std(1.0, axis=0)
    with pytest.raises(gradc.ShapeError, match="out of bounds for a scalar"):
        gradc.grad(lambda x: np.std(x, axis=0))(1.0)
