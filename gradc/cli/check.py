"""``gradc compile --check``: the emitted code against central finite differences on random inputs.

Float inputs are drawn from ``--check-range LO,HI`` (default [0.5, 1.5], inside the
domains of log and sqrt); integer inputs are zeros. A NaN or an inf, in the emitted
gradient, in the finite differences or in the function's value, is a failure (exit 3)
that names the entries: a check never passes what it could not compare.

>>> parse_check_range("2,3.5")
(2.0, 3.5)
"""
from __future__ import annotations

import math
import sys

import numpy as np

from gradc.cli.load import CliError
from gradc.ir.dims import substitute, symbols_of
from gradc.ir.types import TensorType

EXIT_CHECK_FAILED = 3
CHECK_TOLERANCE = 1e-4
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


def run_check(job, source=None, functions=None, interval=DEFAULT_RANGE):
    """Run the emitted code on random inputs against central finite differences; print one verdict line.

    ``source`` is an emitted NumPy module; ``functions`` a ``(forward, value_and_grad)`` pair instead
    (the compiled C library). Returns the exit status: 0, or 3 for a mismatch or a non-finite value.
    """
    if functions is None:
        from gradc.backends.numpy.load import load_source

        name = job.graph.name
        namespace = load_source(source, name)
        functions = namespace[name], namespace[f"{name}_value_and_grad"]
    forward, value_and_grad = functions
    types = _types(job)
    rng = np.random.default_rng(0)
    names = list(types)
    values = [random_value(types[n], rng, interval) for n in names]
    span = f"inputs from [{interval[0]:g}, {interval[1]:g}]"
    outputs = _call(value_and_grad, values)
    if isinstance(outputs, float):  # scalar code (Python's math) raised a domain or range error
        entries = ", ".join(f"{n} (raises)" for n in job.wrt)
        print(f"gradc: check: NOT FINITE: the emitted code raises a math domain or range error at the sampled "
              f"{span}, so no gradient entry is finite: {entries}; outside the function's domain?; "
              "sample elsewhere with --check-range LO,HI", file=sys.stderr)
        return EXIT_CHECK_FAILED
    value, grads = outputs
    grads = (grads,) if len(job.wrt) == 1 else grads
    worst_abs = worst_rel = 0.0
    checked, bad = 0, []
    for name, g in zip(job.wrt, grads):
        i, t = names.index(name), types[name]
        for k in _picks(t, rng):
            fd = _central_difference(forward, values, i, t, k)
            got = float(np.asarray(g).reshape(-1)[k])
            checked += 1
            if not (math.isfinite(got) and math.isfinite(fd)):
                bad.append((_entry(name, t, k), got, fd))
                continue
            err = abs(got - fd)
            worst_abs = max(worst_abs, err)
            worst_rel = max(worst_rel, err / max(1.0, abs(fd)))
    if bad or not math.isfinite(float(value)):
        print(f"gradc: check: NOT FINITE: {_non_finite(bad, checked, float(value), span)}", file=sys.stderr)
        return EXIT_CHECK_FAILED
    ok = worst_rel <= (CHECK_TOLERANCE if all(types[n].dtype == "f64" for n in job.wrt) else 1e-2)
    verdict = "ok" if ok else "MISMATCH"
    print(f"gradc: check: {verdict}: largest error {worst_abs:.3g} (relative {worst_rel:.3g}) over {checked} "
          f"gradient entries against central finite differences, {span}", file=sys.stderr)
    return 0 if ok else EXIT_CHECK_FAILED


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


def _picks(t, rng):
    size = int(np.prod(t.shape)) if t.shape else 1
    return range(size) if size <= 50 else sorted(rng.choice(size, 50, replace=False))


def _central_difference(forward, values, i, t, k):
    """``(f(x + h e_k) - f(x - h e_k)) / 2h``, with ``h`` relative to the entry's size."""
    base = values[i]
    x = float(np.asarray(base).reshape(-1)[k])
    h = (1e-6 if t.dtype == "f64" else 1e-2) * max(1.0, abs(x))

    def shifted(delta):
        if t.shape == () and t.dtype == "f64":
            return base + delta
        arr = np.array(base, copy=True)
        arr.reshape(-1)[k] += delta
        return arr
    plus, minus = list(values), list(values)
    plus[i], minus[i] = shifted(h), shifted(-h)
    return (float(_call(forward, plus)) - float(_call(forward, minus))) / (2 * h)


def _call(fn, args):
    """``fn(*args)``; NaN where scalar code (Python's math) raises a domain or range error instead."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args)
    except (OverflowError, ZeroDivisionError):
        return math.nan
    except ValueError as e:
        if "math domain" not in str(e):
            raise
        return math.nan


def _entry(name, t, k):
    if not t.shape:
        return name
    return f"{name}[{','.join(str(int(j)) for j in np.unravel_index(k, t.shape))}]"


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
