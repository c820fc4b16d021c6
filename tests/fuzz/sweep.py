"""Seeded sweeps in the style of JAX's lax_numpy tests: one NumPy call over shapes (0-d, empty,
broadcasting), axes (negative, tuples, None), keepdims, dtypes (float32/64, integer and bool
operands) and special values, each checked on gradc's NumPy and C targets against NumPy itself and
against central differences in float64.

A case is ``(source, args, wrt)``: ``source`` defines ``def prog(...)`` returning a scalar (the
call's result summed with fixed weights, so every output entry carries a distinct cotangent).

>>> cases = list(generate(3, seed=0))
>>> len(cases), all(c.source.startswith("def prog(") for c in cases)
(3, True)
"""
from __future__ import annotations

import hashlib
import linecache

import numpy as np

SHAPES = [(), (0,), (1,), (3,), (2, 3), (3, 1), (1, 4), (2, 0), (2, 3, 2), (0, 3)]
# name -> (template over input `x`, domain map): the map moves a uniform(-1.5, 1.5) sample into the domain
UNARY = {
    "sin": ("np.sin(x)", None), "cos": ("np.cos(x)", None), "tan": ("np.tan(x)", "0.5 * x"),
    "exp": ("np.exp(x)", None), "exp2": ("np.exp2(x)", None), "expm1": ("np.expm1(x)", None),
    "log": ("np.log(x)", "abs"), "log2": ("np.log2(x)", "abs"), "log10": ("np.log10(x)", "abs"),
    "log1p": ("np.log1p(x)", "abs"), "sqrt": ("np.sqrt(x)", "abs"), "cbrt": ("np.cbrt(x)", "abs"),
    "tanh": ("np.tanh(x)", None), "sinh": ("np.sinh(x)", None), "cosh": ("np.cosh(x)", None),
    "arcsin": ("np.arcsin(x)", "0.6 * x"), "arccos": ("np.arccos(x)", "0.6 * x"),
    "arctan": ("np.arctan(x)", None), "arcsinh": ("np.arcsinh(x)", None), "arccosh": ("np.arccosh(x)", "1+abs"),
    "arctanh": ("np.arctanh(x)", "0.6 * x"), "abs": ("np.abs(x)", None), "fabs": ("np.fabs(x)", None),
    "square": ("np.square(x)", None), "reciprocal": ("np.reciprocal(x)", "abs"), "negative": ("np.negative(x)", None),
    "positive": ("np.positive(x)", None), "sign": ("np.sign(x) * x", None), "deg2rad": ("np.deg2rad(x)", None),
    "rad2deg": ("np.rad2deg(x)", None), "floor": ("np.floor(x) + x", None), "ceil": ("np.ceil(x) * x", None),
    "rint": ("np.rint(x) + x", None), "trunc": ("np.trunc(x) * x", None), "sinc": ("np.sinc(x)", None),
    "pow3": ("x ** 3", None), "pow_half": ("x ** 0.5", "abs"), "pow_neg": ("x ** -2", "abs"),
    "rpow": ("2.0 ** x", None), "logistic": ("1.0 / (1.0 + np.exp(-x))", None),
    "heaviside": ("np.heaviside(x, 0.5) * x", None),
    "i0": ("np.i0(x)", None), "nan_to_num": ("np.nan_to_num(x)", None), "clip": ("np.clip(x, -0.5, 0.7)", None),
    "round": ("np.round(x, 1) + x", None), "conj": ("np.conj(x)", None), "real": ("np.real(x)", None),
    "angle_sq": ("np.angle(x) * x", None), "spacing_free": ("np.copysign(x, -1.0)", None),
}
BINARY = {
    "add": "x + y", "subtract": "x - y", "multiply": "x * y", "divide": "x / y", "power": "x ** y",
    "arctan2": "np.arctan2(x, y)", "hypot": "np.hypot(x, y)", "maximum": "np.maximum(x, y)",
    "minimum": "np.minimum(x, y)", "fmax": "np.fmax(x, y)", "fmin": "np.fmin(x, y)",
    "logaddexp": "np.logaddexp(x, y)", "logaddexp2": "np.logaddexp2(x, y)", "copysign": "np.copysign(x, y)",
    "float_power": "np.float_power(x, y)", "fmod": "np.fmod(x, y)", "mod": "np.mod(x, y)",
    "where": "np.where(x > y, x * y, x - y)", "true_divide": "np.true_divide(x, y)",
    "floor_divide": "np.floor_divide(x, y) * x", "ldexp_free": "x * np.exp2(y)",
}
POSITIVE_BASE = {"power", "float_power"}  # x > 0 so the real power is defined
AWAY_FROM_ZERO = {"divide", "true_divide", "fmod", "mod", "floor_divide"}  # y away from 0
# reductions taking axis (None, int or tuple) and keepdims
REDUCE = {
    "sum": "np.sum(x{})", "mean": "np.mean(x{})", "max": "np.max(x{})", "min": "np.min(x{})",
    "prod": "np.prod(x{})", "var": "np.var(x{})", "std": "np.std(x{})", "amax": "np.amax(x{})",
    "nansum": "np.nansum(x{})", "ptp": "np.ptp(x{})", "average": "np.average(x{})", "nanmean": "np.nanmean(x{})",
    "logsumexp": "scipy.special.logsumexp(x{})", "norm": "np.linalg.norm(x{})", "nanmax": "np.nanmax(x{})",
    "median": "np.median(x{})", "any_mask": "np.sum(x * np.any(x > 0{}))",
    "count": "np.sum(x) * np.count_nonzero(x > 0{})",
    "method_sum": "x.sum({})", "method_max": "x.max({})", "method_mean": "x.mean({})", "method_prod": "x.prod({})",
}
NO_TUPLE_AXIS = {"ptp", "norm", "median", "average"}  # keep to one axis where NumPy's own rules differ
NO_KEEPDIMS = {"average"}
# ops with a single integer axis (or None)
SCAN = {
    "cumsum": "np.cumsum(x{})", "cumprod": "np.cumprod(x{})", "sort": "np.sort(x{})", "flip": "np.flip(x{})",
    "diff": "np.diff(x{})", "softmax": "scipy.special.softmax(x{})", "log_softmax": "scipy.special.log_softmax(x{})",
    "roll": "np.roll(x, 1{})", "gradient": "np.gradient(x{})", "trapz": "np.trapezoid(x{})",
    "argmax_take": "np.take_along_axis(x, np.expand_dims(np.argmax(x{}), -1), -1)",
    "repeat": "np.repeat(x, 2{})", "nancumsum": "np.nancumsum(x{})", "cummax_free": "np.maximum.accumulate(x{})",
}
NEEDS_AXIS = {"argmax_take", "gradient"}


def _axis_text(ndim, rng, tuple_ok=True, keep_ok=True):
    choice = rng.integers(0, 4)
    if choice == 0 or ndim == 0:
        axis = None
    elif choice == 3 and tuple_ok and ndim >= 2:
        a, b = rng.choice(ndim, 2, replace=False)
        axis = (int(a) - ndim * int(rng.integers(0, 2)), int(b))
    else:
        axis = int(rng.integers(-ndim, ndim))
    text = "" if axis is None else f", axis={axis}"
    if keep_ok and rng.integers(0, 2):
        text += ", keepdims=True"
    return text


class Case:
    """One generated program: ``source``, example ``args`` and the positions ``wrt`` to differentiate."""

    def __init__(self, source, args, wrt, tol_dtype):
        self.source, self.args, self.wrt, self.dtype = source, args, wrt, tol_dtype

    def __repr__(self):
        return f"Case({self.source!r}, args={self.args!r}, wrt={self.wrt})"

    def function(self):
        import scipy.special  # noqa: F401 - programs call scipy.special.logsumexp and friends

        # a file name linecache knows: gradc reads the source of `if`/`for`/`while` on traced values
        filename = f"<fuzz {hashlib.sha1(self.source.encode()).hexdigest()[:12]}>"
        linecache.cache[filename] = (len(self.source), None, self.source.splitlines(True), filename)
        namespace = {"np": np, "scipy": __import__("scipy")}
        exec(compile(self.source, filename, "exec"), namespace)
        return namespace["prog"]


def _sample(rng, shape, dtype, domain=None):
    x = rng.uniform(-1.5, 1.5, size=shape)
    if domain == "abs":
        x = np.abs(x) + 0.3
    elif domain == "1+abs":
        x = np.abs(x) + 1.3
    elif domain is not None:
        x = eval(domain, {"np": np}, {"x": x})
    x = np.asarray(x).astype(dtype)
    return x if shape != () else (float(x) if dtype == np.float64 else dtype(x))


def _weights(shape_of_result, rng):
    return rng.uniform(0.5, 1.5, size=shape_of_result).round(3)


def _finish(source_body, params, args, wrt, dtype, rng):
    """Wrap ``out = <expr>`` into a scalar program with fixed per-entry weights."""
    namespace = {"np": np, "scipy": __import__("scipy")}
    __import__("scipy.special")
    try:
        with np.errstate(all="ignore"):
            out = eval(source_body, namespace, dict(zip(params, args)))
    except Exception:  # noqa: BLE001 - NumPy refuses this combination: not a case
        return None
    out = np.asarray(out)
    if out.dtype.kind not in "f" or not np.all(np.isfinite(out)) or out.size > 200:
        return None
    w = _weights(out.shape, rng)
    if out.size == 0:
        weights = f"np.ones({out.shape!r})"
    else:
        weights = f"np.array({w.tolist()!r})" if out.ndim else repr(float(w))
    src = (f"def prog({', '.join(params)}):\n    out = {source_body}\n"
           f"    return np.sum(out * {weights})\n")
    return Case(src, args, wrt, dtype)


def one_case(rng):
    """A random case of a random family (None when NumPy refuses the combination)."""
    family = rng.choice(["unary", "binary", "binary", "reduce", "reduce", "scan", "mixed"])
    dtype = np.float32 if rng.integers(0, 4) == 0 else np.float64
    shape = SHAPES[rng.integers(0, len(SHAPES))]
    if family == "unary":
        name = sorted(UNARY)[rng.integers(0, len(UNARY))]
        template, domain = UNARY[name]
        return _finish(template, ["x"], [_sample(rng, shape, dtype, domain)], [0], dtype, rng)
    if family in ("binary", "mixed"):
        name = sorted(BINARY)[rng.integers(0, len(BINARY))]
        other = _broadcast_partner(shape, rng)
        x = _sample(rng, shape, dtype, "abs" if name in POSITIVE_BASE else None)
        y = _sample(rng, other, dtype, "abs" if name in AWAY_FROM_ZERO else None)
        if rng.integers(0, 2):
            x, y = (x, y) if name in POSITIVE_BASE else (y, x)
        wrt = [0, 1]
        if family == "mixed":  # one operand integer, bool or a Python number: not differentiated
            kind = rng.integers(0, 3)
            if kind == 0:
                y = (np.asarray(y) * 3).round().astype(np.int64)
                if name in AWAY_FROM_ZERO | {"power", "float_power"}:
                    y = np.where(y == 0, 2, np.abs(y) if name in POSITIVE_BASE else y)
            elif kind == 1:
                y = np.asarray(y) > 0
                if name in AWAY_FROM_ZERO or name == "ldexp_free":  # NumPy: exp2 of a bool is float16 (gradc: x's)
                    return None
            else:
                y = 2 if name not in AWAY_FROM_ZERO else 3
            wrt = [0]
        return _finish(BINARY[name], ["x", "y"], [x, y], wrt, dtype, rng)
    if family == "reduce":
        name = sorted(REDUCE)[rng.integers(0, len(REDUCE))]
        x = _sample(rng, shape, dtype, "abs" if name == "norm" else None)
        axis = _axis_text(len(shape), rng, name not in NO_TUPLE_AXIS, name not in NO_KEEPDIMS)
        form = REDUCE[name]
        axis = axis.lstrip(", ") if form.startswith("x.") else axis
        return _finish(form.format(axis), ["x"], [x], [0], dtype, rng)
    name = sorted(SCAN)[rng.integers(0, len(SCAN))]
    x = _sample(rng, shape, dtype)
    ndim = len(shape)
    if ndim == 0 and name not in ("cumsum", "cumprod"):
        return None
    axis = "" if (ndim == 0 or rng.integers(0, 3) == 0) and name not in NEEDS_AXIS \
        else f", axis={int(rng.integers(-ndim, ndim)) if ndim else 0}"
    if name in NEEDS_AXIS and ndim == 0:
        return None
    return _finish(SCAN[name].format(axis), ["x"], [x], [0], dtype, rng)


def _broadcast_partner(shape, rng):
    """A shape that broadcasts with ``shape``: equal, a suffix, ones in place of some dims, or ()."""
    choice = rng.integers(0, 5)
    if choice == 0 or not shape:
        return shape if choice else ()
    if choice == 1:
        return ()
    if choice == 2:
        return shape[rng.integers(0, len(shape)):]
    if choice == 3:
        return tuple(1 if rng.integers(0, 2) else d for d in shape)
    return (1,) + tuple(shape)


def generate(n, seed, make=None):
    """``n`` cases from ``seed``, drawn by ``make(rng)`` (default: this module's ``one_case``; a draw that
    gives None, a combination NumPy refuses, is drawn again)."""
    make = make or one_case
    rng = np.random.default_rng(seed)
    made = 0
    while made < n:
        case = make(rng)
        if case is not None:
            made += 1
            yield case
