"""``scipy.stats`` distributions on traced values: stand-ins for SciPy's objects, routed by public name.

``scipy.stats.norm``, ``t``, ``gamma``, ... (every name of ``gradc.ops.special_stats.DISTRIBUTIONS``),
``multivariate_normal`` and ``dirichlet`` are replaced while tracing by objects whose methods take SciPy's
arguments (``x, *shapes, loc=0, scale=1``, positionally or by keyword) and compute in gradc ops when an argument
is traced; every other call goes to SciPy's own object. Calling one freezes it (``norm(mu, s).logpdf(x)``), and
a frozen distribution made with constants outside the traced function (``prior = norm(0, 1)`` at module level)
is replaced the same way. A method gradc lacks (``rvs``, ``fit``, ``t.ppf`` ...) with a traced argument is
refused by its public name at the user's line, and so is a distribution gradc lacks, whichever way it is reached.

>>> "scipy.stats.norm" in scipy_dispatch.SCIPY_FUNCTIONS and "scipy.stats.multivariate_normal" in STAND_INS
True
"""
from __future__ import annotations

import importlib
import inspect
import types

import numpy as np

from gradc.errors import TraceError
from gradc.ops import distributions_multivariate as mv
from gradc.ops import elementwise as ew
from gradc.ops import special_stats as st
from gradc.ops.values import first_traced
from gradc.trace import array_like_dispatch as array_likes
from gradc.trace import scipy_dispatch
from gradc.trace.signature import CALLABLE_CONVERTERS


def _has_tracer(values) -> bool:
    return any(first_traced([v]) is not None or (isinstance(v, (tuple, list)) and _has_tracer(v)) for v in values)


def _f64(value):
    """``value`` in float64, as SciPy's distributions compute (ints and float32 included)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and array_likes.has_traced(value):  # SciPy's np.asarray of the list
        value = array_likes.build(value)
    return ew.astype(value if first_traced([value]) is not None else np.asarray(value, dtype=float), "f64")


_FIRST = {"ppf": "q", "isf": "q", "logpmf": "k", "pmf": "k"}
_REFUSED_HINTS = {
    "rvs": "draw standard samples outside the differentiated function (or pass them in) and transform them: "
           "loc + scale * z",
    "fit": "fitting is an optimisation: differentiate the log-likelihood (sum of logpdf) instead",
}


def _refusal(what, available):
    method = what.rsplit(".", 1)[-1]
    hint = _REFUSED_HINTS.get(method, f"gradc has {', '.join(available)}" if available else
                              "write its density with NumPy operations gradc supports")
    return TraceError(f"{what} is not supported by gradc on traced arguments", hint=hint)


def _bind(name, method, args, kwargs):
    """SciPy's arguments of ``<name>.<method>``: ``(x, *shapes, loc=0, scale=1)`` as x, shapes, loc, scale."""
    spec = st.DISTRIBUTIONS[name]
    what = f"scipy.stats.{name}.{method}"
    first = "k" if spec.discrete else _FIRST.get(method, "x")
    names = (first, *spec.shapes, "loc", *(() if spec.discrete else ("scale",)))
    values = {"loc": 0.0, "scale": 1.0}
    if len(args) > len(names):
        raise TraceError(f"{what} takes at most {len(names)} arguments ({', '.join(names)})",
                         hint=f"call {what}({', '.join(names)})")
    values.update(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or names.index(key) < len(args):
            raise TraceError(f"{what} got an unexpected or repeated argument {key!r}",
                             hint=f"its arguments are {', '.join(names)}")
        values[key] = value
    missing = [n for n in names if n not in values]
    if missing:
        raise TraceError(f"{what} is missing {', '.join(missing)}", hint=f"call {what}({', '.join(names)})")
    return values[first], tuple(values[n] for n in spec.shapes), values["loc"], values["scale"]


class _StandIn:
    """What the univariate and multivariate stand-ins share: SciPy's object for the rest, freezing."""

    routes_itself = True  # scipy_dispatch uses this object as it is (it falls back to SciPy by itself)

    def __init__(self, name):
        self._name = name

    def _real(self):
        return getattr(importlib.import_module("scipy.stats"), self._name)

    def _methods(self) -> list:
        raise NotImplementedError

    def _compute(self, method, args, kwargs):
        raise NotImplementedError

    def __getattr__(self, method):
        if method.startswith("__"):  # protocols (copy, pickle, inspection) are the stand-in's own
            raise AttributeError(method)
        real = getattr(self._real(), method)
        if method.startswith("_") or not callable(real):
            return real
        known = method in self._methods()

        def call(*args, **kwargs):
            if not _has_tracer(args) and not _has_tracer(kwargs.values()):
                return real(*args, **kwargs)
            if not known:
                raise _refusal(f"scipy.stats.{self._name}.{method}", self._methods())
            return self._compute(method, args, kwargs)
        call.__name__ = method
        return call

    def __call__(self, *args, **kwargs):
        """A frozen distribution: ``norm(loc, scale)``, ``t(df, loc, scale)``, ``multivariate_normal(mean, cov)``."""
        return Frozen(self, args, kwargs)

    def __repr__(self):
        return f"<gradc stand-in for scipy.stats.{self._name}>"


class Distribution(_StandIn):
    """Stands in for a univariate ``scipy.stats.<name>`` (methods: ``special_stats.METHODS[name]``)."""

    def _methods(self):
        return st.METHODS[self._name]

    def _compute(self, method, args, kwargs):
        x, shapes, loc, scale = _bind(self._name, method, args, kwargs)
        return st.evaluate(self._name, method, _f64(x), tuple(_f64(s) for s in shapes), _f64(loc), _f64(scale))


class Multivariate(_StandIn):
    """Stands in for ``scipy.stats.multivariate_normal`` or ``scipy.stats.dirichlet`` (logpdf and pdf)."""

    def _methods(self):
        return ["logpdf", "pdf", *(["entropy"] if self._name == "multivariate_normal" else [])]

    def _compute(self, method, args, kwargs):
        what = f"scipy.stats.{self._name}.{method}"
        if self._name == "dirichlet":
            value = _call(mv.dirichlet_logpdf, what, args, kwargs, ("x", "alpha"), {})
        elif method == "entropy":
            return _call(_normal_entropy, what, args, kwargs, ("mean", "cov"), {"mean": None, "cov": 1.0})
        else:
            defaults = {"mean": None, "cov": 1.0, "allow_singular": False}
            value = _call(_normal_logpdf, what, args, kwargs, ("x", "mean", "cov", "allow_singular"), defaults)
        return ew.exp(value) if method == "pdf" else value


def _normal_logpdf(x, mean, cov, allow_singular, what):
    if not isinstance(allow_singular, (bool, np.bool_)):
        raise TraceError(f"{what}: allow_singular must be True or False", hint="drop allow_singular=")
    if not _is_array_like(cov, "cov"):  # SciPy's Covariance objects
        raise TraceError(f"{what} with cov of type {type(cov).__name__} is not supported by gradc",
                         hint="pass the covariance as an array (a matrix, its diagonal or a scalar), not a "
                              "scipy.stats.Covariance object")
    return mv.multivariate_normal_logpdf(x, 0.0 if mean is None else mean, cov, bool(allow_singular), what=what)


def _normal_entropy(mean, cov, what):
    _normal_logpdf(0.0, mean, cov, False, what)  # the same checks of the arguments
    return mv.multivariate_normal_entropy(0.0 if mean is None else mean, cov, what=what)


def _call(fn, what, args, kwargs, names, defaults):
    if len(args) > len(names):
        raise TraceError(f"{what} takes at most {len(names)} arguments ({', '.join(names)})",
                         hint=f"call {what}({', '.join(names)})")
    values = {**defaults, **dict(zip(names, args))}
    for key, value in kwargs.items():
        if key not in names or names.index(key) < len(args):
            raise TraceError(f"{what} got an unexpected or repeated argument {key!r}",
                             hint=f"its arguments are {', '.join(names)}")
        values[key] = value
    missing = [n for n in names if n not in values]
    if missing:
        raise TraceError(f"{what} is missing {', '.join(missing)}", hint=f"call {what}({', '.join(names)})")
    ordered = [values[n] for n in names]
    arrays = [_f64(np.asarray(v) if isinstance(v, (list, tuple)) else v) if _is_array_like(v, n) else v
              for n, v in zip(names, ordered)]
    return fn(*arrays, what=what)


def _is_array_like(value, name) -> bool:
    if name == "allow_singular":
        return False
    return isinstance(value, (list, tuple, np.ndarray, np.generic, int, float)) or first_traced([value]) is not None


class Frozen:
    """``dist(*args, **kwargs)``: its methods are ``dist``'s with those arguments after the first."""

    def __init__(self, dist, args, kwargs):
        self._dist, self._args, self._kwargs = dist, tuple(args), dict(kwargs)

    def __getattr__(self, method):
        if method.startswith("_"):
            raise AttributeError(method)
        traced = _has_tracer(self._args) or _has_tracer(self._kwargs.values())
        if traced or method in self._dist._methods():
            bound = getattr(self._dist, method)
            return lambda *first, **kw: bound(*first[:1], *self._args, *first[1:], **self._kwargs, **kw)
        return getattr(self._dist._real()(*self._args, **self._kwargs), method)

    def __repr__(self):
        return f"<gradc stand-in for a frozen scipy.stats.{self._dist._name}>"


STAND_INS: dict = {}
for _name in st.DISTRIBUTIONS:
    STAND_INS[f"scipy.stats.{_name}"] = Distribution(_name)
for _name in ("multivariate_normal", "dirichlet"):
    STAND_INS[f"scipy.stats.{_name}"] = Multivariate(_name)
for _path, _stand_in in STAND_INS.items():
    scipy_dispatch.register(_path, _stand_in)


# ---------------------------------------------------------------- frozen objects made outside, and the names
def distribution_name(obj):
    """``norm`` for SciPy's ``norm`` object or a frozen ``norm(...)``; None for anything else."""
    module = type(obj).__module__ or ""
    if not module.startswith("scipy.stats"):
        return None
    dist = getattr(obj, "dist", obj)  # rv_frozen keeps its generator in .dist
    name = getattr(dist, "name", None)
    if isinstance(name, str):
        return name
    cls = type(obj).__name__
    for suffix in ("_frozen", "_gen"):
        if cls.endswith(suffix):
            return cls[: -len(suffix)]
    return None


def stand_in_for(value):
    """A stand-in for a frozen SciPy distribution made with constants, or for a bound method of a distribution
    (``stats.norm.pdf`` or ``prior.logpdf`` kept in a variable); None for any other value."""
    if isinstance(value, types.MethodType):
        owner = stand_in_for(value.__self__)
        if owner is None:
            owner = STAND_INS.get(f"scipy.stats.{distribution_name(value.__self__)}")
        return getattr(owner, value.__name__) if owner is not None and not value.__name__.startswith("_") else None
    if not (type(value).__module__ or "").startswith("scipy.stats") or not type(value).__name__.endswith("frozen"):
        return None
    name = distribution_name(value)
    stand_in = STAND_INS.get(f"scipy.stats.{name}")
    if stand_in is None:
        return None
    if isinstance(stand_in, Distribution):
        return Frozen(stand_in, getattr(value, "args", ()), getattr(value, "kwds", {}))
    if hasattr(stand_in, "frozen_arguments"):  # gradc.trace.distribution_matrix's
        return Frozen(stand_in, stand_in.frozen_arguments(value), {})
    if name == "dirichlet":
        return Frozen(stand_in, (value.alpha,), {})
    return Frozen(stand_in, (value.mean, value.cov), {})


def conversion_message(frames):
    """The refusal for SciPy distribution code that met a tracer (``frames``: SciPy's, outermost last)."""
    for frame in reversed(frames):
        name = distribution_name(frame.f_locals.get("self"))
        if name is not None:
            what = f"scipy.stats.{name}.{frame.f_code.co_name}"
            stand_in = STAND_INS.get(f"scipy.stats.{name}")
            if stand_in is not None and frame.f_code.co_name in stand_in._methods():
                return (f"{what} was reached on a traced value through an object gradc could not route (a frozen "
                        "distribution passed in as an argument or kept in a container)",
                        f"make it in the differentiated function or its module, or call {what}(x, ...) directly")
            available = ", ".join(sorted(n.rsplit(".", 1)[1] for n in STAND_INS))
            return (f"{what} is not supported by gradc on traced arguments",
                    _REFUSED_HINTS.get(frame.f_code.co_name, f"gradc's scipy.stats distributions: {available}"))
    return None


def _parameters(owner_name, method, frozen):
    """The named parameters of a distribution's method, as SciPy documents them."""
    plain = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if frozen:
        return [inspect.Parameter(_FIRST.get(method, "x"), plain)]
    if owner_name == "dirichlet":
        return [inspect.Parameter(n, plain) for n in ("x", "alpha")]
    if owner_name in ("multinomial", "wishart", "invwishart"):
        return [inspect.Parameter(n, plain) for n in ("x", "n", "p") if owner_name == "multinomial" or n == "x"] + \
            [inspect.Parameter(n, plain) for n in ("df", "scale") if owner_name != "multinomial"]
    if owner_name == "multivariate_normal":
        given = [] if method == "entropy" else [inspect.Parameter("x", plain)]
        return given + [inspect.Parameter("mean", plain, default=None), inspect.Parameter("cov", plain, default=1.0)]
    spec = st.DISTRIBUTIONS[owner_name]
    first = "k" if spec.discrete else _FIRST.get(method, "x")
    defaults = [("loc", 0.0)] + ([] if spec.discrete else [("scale", 1.0)])
    return ([inspect.Parameter(first, plain)] + [inspect.Parameter(n, plain) for n in spec.shapes]
            + [inspect.Parameter(n, plain, default=v) for n, v in defaults])


def as_named_function(f):
    """A distribution's method passed itself to a transform (``gradc.grad(scipy.stats.norm.logpdf)``): a
    function of SciPy's named parameters calling the stand-in; None for anything else."""
    if not isinstance(f, types.MethodType) or not (type(f.__self__).__module__ or "").startswith("scipy.stats"):
        return None
    name = distribution_name(f.__self__)
    stand_in = STAND_INS.get(f"scipy.stats.{name}")
    if name is None or f.__name__.startswith("_"):
        return None
    if stand_in is None or f.__name__ not in stand_in._methods():
        raise _refusal(f"scipy.stats.{name}.{f.__name__}", stand_in._methods() if stand_in is not None else [])
    method = stand_in_for(f)

    def distribution_method(*args, **kwargs):
        return method(*args, **kwargs)

    frozen = type(f.__self__).__name__.endswith("frozen")
    distribution_method.__signature__ = inspect.Signature(_parameters(name, f.__name__, frozen))
    distribution_method.__name__ = distribution_method.__qualname__ = f"{name}_{f.__name__}"
    return distribution_method


scipy_dispatch.add_stand_in_maker(stand_in_for)
CALLABLE_CONVERTERS.append(as_named_function)
scipy_dispatch.add_conversion_namer(conversion_message)

__all__ = ["Distribution", "Multivariate", "Frozen", "STAND_INS"]
