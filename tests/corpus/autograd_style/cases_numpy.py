"""Autograd-style cases: elementwise functions, binary operations with broadcasting, reductions.

In the manner of HIPS autograd's own suite (one small function per NumPy feature, random
inputs, every mode checked against numerical differences); written here, not copied.
"""
from __future__ import annotations

import numpy as np
from transform_checks import Case

rs = np.random.RandomState(0)


def randn(*shape):
    return rs.randn(*shape)


def positive(*shape):
    return rs.rand(*shape) + 0.5


def unit(*shape):
    return rs.rand(*shape) * 1.6 - 0.8


CASES: list[Case] = []

# elementwise, each summed (scalar output, second order) and each as an array output
UNARY = {
    "sin": (np.sin, randn), "cos": (np.cos, randn), "tan": (np.tan, unit), "exp": (np.exp, randn),
    "log": (np.log, positive), "log2": (np.log2, positive), "log10": (np.log10, positive),
    "log1p": (np.log1p, positive), "expm1": (np.expm1, randn), "exp2": (np.exp2, randn),
    "sqrt": (np.sqrt, positive), "cbrt": (np.cbrt, positive), "square": (np.square, randn),
    "reciprocal": (np.reciprocal, positive), "negative": (np.negative, randn), "tanh": (np.tanh, randn),
    "sinh": (np.sinh, randn), "cosh": (np.cosh, randn), "arcsin": (np.arcsin, unit),
    "arccos": (np.arccos, unit), "arctan": (np.arctan, randn), "arcsinh": (np.arcsinh, randn),
    "arctanh": (np.arctanh, unit), "abs": (np.abs, positive), "fabs": (np.fabs, positive),
    "deg2rad": (np.deg2rad, randn), "rad2deg": (np.rad2deg, randn), "sinc": (np.sinc, positive),
}


def summed(ufunc):
    return lambda x: np.sum(ufunc(x))


def applied(ufunc):
    return lambda x: ufunc(x)


def weighted(ufunc):
    return lambda a, b: np.sum(ufunc(a, b) * np.cos(a * b))


for name, (ufunc, draw) in UNARY.items():
    x = draw(3, 2)
    CASES.append(Case(f"{name}_sum", summed(ufunc), (x,), order=2))
    CASES.append(Case(f"{name}_array", applied(ufunc), (x,)))
CASES.append(Case("arccosh_sum", lambda x: np.sum(np.arccosh(x)), (positive(4) + 1.0,), order=2))
CASES.append(Case("power_half", lambda x: np.sum(np.power(x, 0.5)), (positive(4),), order=2))
CASES.append(Case("operator_pow_int", lambda x: np.sum(x ** 3), (randn(4),), order=2))
CASES.append(Case("logistic", lambda x: np.sum(1 / (1 + np.exp(-x))), (randn(5),), order=2))
CASES.append(Case("softplus", lambda x: np.sum(np.logaddexp(0.0, x)), (randn(5),), order=2))
CASES.append(Case("relu_kink_away", lambda x: np.sum(np.maximum(x, 0.0) ** 2), (np.array([-1.2, 0.3, 2.0]),)))
CASES.append(Case("where_static_mask", lambda x: np.sum(np.where(x > 0, x ** 2, -x)), (np.array([-1.0, 0.5, 2.0]),)))
CASES.append(Case("clip", lambda x: np.sum(np.clip(x, -0.5, 0.5) * x), (np.array([-1.0, 0.2, 0.9, -0.3]),)))

# binary, with broadcasting; each argument differentiated
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "true_divide": np.true_divide, "power": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "fmax": np.fmax, "fmin": np.fmin, "arctan2": np.arctan2, "hypot": np.hypot, "logaddexp": np.logaddexp,
    "logaddexp2": np.logaddexp2,
}
SHAPES = {"same": ((3, 2), (3, 2)), "row_col": ((3, 1), (1, 4)), "scalar_array": ((), (3,)),
          "array_scalar": ((2, 3), ())}
for name, ufunc in BINARY.items():
    for shapes_name, (sa, sb) in SHAPES.items():
        a = positive(*sa) if sa else float(positive())
        b = positive(*sb) + 0.1 if sb else float(positive()) + 0.1
        for argnum in (0, 1):
            CASES.append(Case(f"{name}_{shapes_name}_arg{argnum}", weighted(ufunc), (a, b), argnum=argnum,
                              order=2 if shapes_name == "same" else 1))
CASES.append(Case("operator_mix", lambda x, y: np.sum((x + 2) * y - x / y + (-x) ** 2 - 3 / y), (randn(3), positive(3)),
                  argnum=1, order=2))
CASES.append(Case("mod_kink_away", lambda x: np.sum(np.mod(x, 1.0) * x), (np.array([0.3, 1.4, -0.6]),)))

# reductions
REDUCTIONS = [
    ("sum_all", lambda x: np.sum(x)), ("sum_axis0", lambda x: np.sum(x, axis=0)),
    ("sum_axis_neg", lambda x: np.sum(x, axis=-1)), ("sum_keepdims", lambda x: np.sum(x, axis=1, keepdims=True)),
    ("sum_two_axes", lambda x: np.sum(x, axis=(0, 2))), ("mean_all", lambda x: np.mean(x)),
    ("mean_axis", lambda x: np.mean(x, axis=1)), ("prod_all", lambda x: np.prod(x)),
    ("prod_axis", lambda x: np.prod(x, axis=0)), ("max_all", lambda x: np.max(x)),
    ("max_axis", lambda x: np.max(x, axis=1)), ("max_keepdims", lambda x: np.max(x, axis=2, keepdims=True)),
    ("min_all", lambda x: np.min(x)), ("min_axis", lambda x: np.min(x, axis=0)), ("amax", lambda x: np.amax(x, 1)),
    ("std", lambda x: np.std(x)), ("std_axis", lambda x: np.std(x, axis=1)), ("var", lambda x: np.var(x)),
    ("var_ddof", lambda x: np.var(x, axis=0, ddof=1)), ("cumsum", lambda x: np.cumsum(x)),
    ("cumsum_axis", lambda x: np.cumsum(x, axis=1)), ("cumprod", lambda x: np.cumprod(x, axis=0)),
    ("method_sum", lambda x: x.sum(axis=1)), ("method_mean", lambda x: x.mean()), ("method_max", lambda x: x.max(0)),
    ("norm_vector", lambda x: np.linalg.norm(x.ravel())), ("norm_fro", lambda x: np.linalg.norm(x[0])),
    ("norm_axis", lambda x: np.linalg.norm(x, axis=2)), ("logsumexp_style", lambda x: np.log(np.sum(np.exp(x)))),
    ("average", lambda x: np.average(x, axis=0)), ("trace_2d", lambda x: np.trace(x[0])),
]
for name, fun in REDUCTIONS:
    x = randn(2, 3, 4) + 0.1 * np.arange(24).reshape(2, 3, 4)  # distinct entries: max and min are smooth here
    scalar = np.ndim(fun(x)) == 0
    smooth = scalar and "max" not in name and "min" not in name
    CASES.append(Case(f"reduce_{name}", fun, (x,), order=2 if smooth else 1))
