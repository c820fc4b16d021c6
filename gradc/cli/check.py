"""``gradc compile --check``: the emitted code against the user's own function, on random inputs.

``gradc.check`` (``gradc.derivatives.check``) does the comparing: every value the emitted
code returns against FUNC run by NumPy, every derivative (any ``--mode``, any target) against
central finite differences of FUNC. This module draws the inputs and prints one verdict line.

Float inputs are drawn from ``--check-range LO,HI`` (default [0.5, 1.5], inside the
domains of log and sqrt); integer and bool arrays are drawn small (below the smallest
array size, so they index any axis; zeros when FUNC refuses those) and held fixed. A NaN
or an inf, in the emitted code's results, in the finite differences or in the function's
value, is a failure (exit 3) that names the entries: a check never passes what it could
not compare.

>>> parse_check_range("2,3.5")
(2.0, 3.5)
"""
from __future__ import annotations

import inspect
import math
import sys

import numpy as np

from gradc.backends.escape import printable
from gradc.cli.load import CliError
from gradc.derivatives.differences import flat_outputs
from gradc.ir.dims import substitute, symbols_of
from gradc.ir.types import TensorType
from gradc.trace.signature import callable_signature

EXIT_CHECK_FAILED = 3
DEFAULT_RANGE = (0.5, 1.5)
_SHOWN = 8  # non-finite entries named in the message; the rest are counted


def parse_check_range(text: str):
    """``LO,HI`` as two finite floats with LO < HI, or a CliError."""
    parts = text.split(",")
    try:
        lo, hi = (float(p) for p in parts) if len(parts) == 2 else (math.nan, math.nan)
    except ValueError:
        lo = hi = math.nan
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise CliError(f"--check-range {text!r} is not an interval", where="",
                       hint="write LO,HI with finite numbers LO < HI, e.g. --check-range 2,3 "
                            "(or --check-range=-2,-1 for negative bounds)")
    return lo, hi


def check_interval(args):
    """The sampling interval the options ask for; ``--check-range`` without ``--check`` is a mistake."""
    text = getattr(args, "check_range", None)
    if text is None:
        return DEFAULT_RANGE
    if not args.check:
        raise CliError("--check-range only applies to --check", where="",
                       hint="add --check, or drop --check-range")
    return parse_check_range(text)


def random_value(t, rng, interval=DEFAULT_RANGE):
    """A random argument for --check: floats uniform in ``interval``, ints zero, static values as they are."""
    if not isinstance(t, TensorType):
        return t
    if t.is_float:
        value = rng.uniform(*interval, size=t.shape).astype(t.np_dtype)
        return float(value) if t.shape == () and t.dtype == "f64" else value
    return np.zeros(t.shape, dtype=t.np_dtype)


def draw_arguments(job, interval=DEFAULT_RANGE, seed=0):
    """``(args, kwargs)`` for one check of ``job.func``: floats uniform in ``interval``, static values as given.

    Integer and bool arrays are drawn small (below the smallest array size, so they index any axis)
    and are never moved by the finite differences; when the function raises or is not finite
    with them, zeros are tried instead.
    """
    types = _types(job)
    rng = np.random.default_rng(seed)
    floats = {n: random_value(t, rng, interval) for n, t in types.items()
              if not isinstance(t, TensorType) or t.is_float}
    dims = [int(d) for t in types.values() if isinstance(t, TensorType) for d in t.shape if isinstance(d, int)]
    bound = min([8] + dims)
    tries = [{n: _small_integers(t, rng, bound) for n, t in types.items() if n not in floats},
             {n: random_value(t, rng) for n, t in types.items() if n not in floats}]
    first, error = None, None
    for integers in tries:
        args, kwargs = _call_form(job.func, {n: floats[n] if n in floats else integers[n] for n in types})
        error, finite = _runs(job.func, args, kwargs)
        if error is None and finite:
            return args, kwargs
        if error is None and first is None:
            first = args, kwargs
        if not integers:
            break
    if first is None:
        raise CliError(f"{job.func_name} raises {type(error).__name__} at the random inputs of --check: "
                       f"{printable(str(error))}", where="",
                       hint="sample elsewhere with --check-range LO,HI, or check the function at its types without "
                            "--check")
    return first


def _small_integers(t, rng, bound):
    if np.dtype(t.np_dtype).kind == "b":
        return rng.integers(0, 2, size=t.shape).astype(bool)
    return rng.integers(0, max(1, bound), size=t.shape).astype(t.np_dtype)


def _call_form(func, values):
    """``values`` (name -> value, in parameter order) as ``(args, kwargs)``: keyword-only parameters by name."""
    try:
        params = callable_signature(func).parameters
    except (TypeError, ValueError):
        return list(values.values()), {}
    keyword = {n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    return [v for n, v in values.items() if n not in keyword], {n: v for n, v in values.items() if n in keyword}


def _runs(func, args, kwargs):
    """``(exception or None, whether every output is finite)`` of the user's function at these arguments."""
    try:
        with np.errstate(all="ignore"):
            outputs = flat_outputs(func(*args, **kwargs))
    except Exception as e:  # the user's code refuses these integers: try others
        return e, False
    return None, all(bool(np.all(np.isfinite(o))) for o in outputs)


def run_check(job, compiled, interval=DEFAULT_RANGE):
    """``gradc.check`` of ``compiled`` against the user's ``job.func`` on random inputs; print one verdict line.

    ``compiled`` has ``forward``, ``wrt`` and ``value_and_grad`` (or ``mode`` and the function of that
    name). Returns the exit status: 0, or 3 for a mismatch or a non-finite value.
    """
    from gradc.derivatives.check import check

    args, kwargs = draw_arguments(job, interval)
    report = check(compiled, job.func, *args, raise_on_failure=False, **kwargs)
    span = f"inputs from [{interval[0]:g}, {interval[1]:g}]"
    status, line = verdict(report, job.func_name, span)
    print(f"gradc: check: {line}", file=sys.stderr)
    return status


def _is_value(c) -> bool:
    return c.kind == "value"


def verdict(report, name, span):
    """``(exit status, the line after "gradc: check: ")`` for a :class:`gradc.derivatives.check.CheckReport`."""
    mode = report.mode
    derivative = [c for c in report.comparisons if not _is_value(c) and not c.what.startswith("grad:")]
    raised = [c for c in report.comparisons if c.problem and "raises" in c.problem]
    if raised and all(any(word in c.problem for word in _MATH_ERRORS) for c in raised):
        entries = ", ".join(f"{n} (raises)" for n in report.wrt)
        return EXIT_CHECK_FAILED, (f"NOT FINITE: the emitted code raises a math domain or range error at the sampled "
                                   f"{span}, so no gradient entry is finite: {entries}; outside the function's "
                                   "domain?; sample elsewhere with --check-range LO,HI")
    if any(c.non_finite for c in report.comparisons) and not raised:
        bad, seen = [], set()
        for c in derivative:
            for label, got, want in c.non_finite:
                if label not in seen:
                    seen.add(label)
                    bad.append((label, got, want))
        checked = sum(c.compared + c.skipped + len(c.non_finite) for c in derivative)
        values = [w for c in report.comparisons if _is_value(c) for _, g, w in c.non_finite]
        value = values[0] if values else 0.0
        return EXIT_CHECK_FAILED, f"NOT FINITE: {_non_finite(bad, checked, value, span)}"
    if not report.passed:
        first = report.failures[0]
        more = f" (and {len(report.failures) - 1} more comparisons fail)" if len(report.failures) > 1 else ""
        against = f"the value against {name} run by NumPy" if first.kind == "value" else \
            f"a derivative against central finite differences of {name}"
        return EXIT_CHECK_FAILED, (f"MISMATCH ({against}): {first.line().removesuffix('  FAILED')}{more}, {span}")
    worst = max(derivative, key=lambda c: c.max_rel, default=None)
    entries = sum(c.compared for c in derivative)
    error = f"largest error {worst.max_abs:.3g} (relative {worst.max_rel:.3g})" if worst else "no derivative entry"
    skipped = sum(c.skipped for c in derivative)
    kinks = f" ({skipped} on a kink skipped)" if skipped else ""
    if mode == "grad":
        return 0, (f"ok: the value agrees with {name} run by NumPy and the gradient with central finite differences "
                   f"of it: {error} over {entries} gradient entries{kinks}, {span}")
    return 0, (f"ok: {mode} agrees with finite differences of {name} (and the value with {name} run by NumPy): "
               f"{error} over {entries} entries{kinks}, {span}")


_MATH_ERRORS = ("math domain", "math range", "ZeroDivisionError", "OverflowError")


def _types(job):
    """Each parameter's type as traced (a float default is a traced f64[]), or its static value."""
    traced = {v.name: v.type for v in job.graph.inputs} if getattr(job, "graph", None) is not None else {}
    types = {n: traced.get(n, t) for n, t in job.types.items()}
    return {n: _sampled(t) for n, t in types.items()}


CHECK_SIZE = 4  # the value --check gives every named size (f64[n,3] is checked as f64[4,3])


def _sampled(t):
    """A type with named sizes at ``CHECK_SIZE``; other types and static values as they are."""
    if isinstance(t, TensorType) and t.is_symbolic:
        sizes = {s.name: CHECK_SIZE for s in symbols_of(t.shape)}
        return t.with_shape(tuple(substitute(d, sizes) for d in t.shape))
    return t


def _kind(v):
    return "NaN" if math.isnan(v) else "inf"


def _non_finite(bad, checked, value, span):
    """The one-line reason: which entries, what is not finite there, and the likely cause."""
    parts = []
    for label, got, fd in bad[:_SHOWN]:
        what = [f"gradient {_kind(got)}"] if not math.isfinite(got) else []
        what += [f"finite differences {_kind(fd)}"] if not math.isfinite(fd) else []
        parts.append(f"{label} ({', '.join(what)})")
    more = f" and {len(bad) - _SHOWN} more" if len(bad) > _SHOWN else ""
    text = f"{len(bad)} of {checked} checked gradient entries are not finite: {', '.join(parts)}{more}" if bad \
        else f"the function's value is {_kind(value)}"
    if not math.isfinite(value):
        cause = f"the function's value is {_kind(value)} at the sampled {span}: outside its domain?"
    elif any(math.isfinite(got) is False for _, got, _ in bad) and all(math.isfinite(fd) for _, _, fd in bad):
        cause = (f"the function is finite at the sampled {span} but its derivative is not "
                 "(sqrt or a power below 1 at 0?)")
    else:
        cause = f"the function is not finite next to the sampled {span}: near the edge of its domain?"
    return f"{text}; {cause}; sample elsewhere with --check-range LO,HI"
