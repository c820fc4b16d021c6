"""``gradc.check(compiled, f, *args)``: the compiled code against the user's own function, at ``args``.

Every value the compiled functions return is compared with ``f`` run by NumPy, output by
output; every derivative with central finite differences **of f** (never of the compiled
forward), taken in float64 with two step sizes (entries where they disagree sit on a kink
and are skipped): the gradient and a vector-Jacobian product entry by entry (at most
``max_entries`` per argument), a Jacobian-vector product, a Jacobian and a Hessian along a
random direction. Only the float arguments named by ``compiled.wrt`` move; integer, bool and
static arguments stay as given. A NaN or an inf on either side is a failure, never a pass.

It returns a :class:`CheckReport` (one :class:`Comparison` per value and derivative compared,
with its largest absolute and relative error) and, when ``raise_on_failure`` (the default:
a check is an assertion), raises :class:`gradc.errors.CheckError` carrying that report.

>>> import numpy as np, gradc
>>> f = lambda x: np.sum(np.sin(x) * x)
>>> x = np.array([0.3, 0.7])
>>> report = gradc.check(gradc.compile(f, x), f, x)
>>> report.passed, [c.what for c in report.comparisons]
(True, ['value', 'value_and_grad: value', 'value_and_grad: d/dx', 'grad: d/dx'])
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from gradc.derivatives.differences import (
    FIRST_STEPS,
    SECOND_STEPS,
    Point,
    directional_difference,
    entry_label,
    first_difference,
    flat_outputs,
    mixed_difference,
    picks,
    quiet_call,
    two_step,
)
from gradc.derivatives.static_args import specialise_call, static_parameters
from gradc.errors import ArgumentError, CheckError, user_facing, user_location
from gradc.trace.selection import ALL, select_arguments

VALUE_TOLERANCE = {"f64": 1e-8, "f32": 1e-3}  # relative to 1 + the largest |reference| entry
FIRST_TOLERANCE = {"f64": 1e-5, "f32": 2e-3}
SECOND_TOLERANCE = {"f64": 1e-4, "f32": 2e-3}
EPS = float(np.finfo(np.float64).eps)


@dataclass
class Comparison:
    """One value or derivative compared: ``got`` (compiled) against ``want`` (``f`` or its finite differences)."""

    what: str
    kind: str = "derivative"  # or "value": compared with f itself, not its finite differences
    compared: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0  # the largest error over 1 + the largest |reference| entry
    tolerance: float = 0.0
    allowed: float = 0.0  # the absolute error allowed: tolerance * (1 + largest |reference|) + the rounding slack
    skipped: int = 0  # entries on a kink (the two step sizes disagree)
    non_finite: list = field(default_factory=list)  # (entry, got, want) where either is NaN or inf
    problem: str | None = None  # the compiled code raised, or shapes differ
    worst: tuple | None = None  # (entry, got, want) with the largest error

    @property
    def passed(self) -> bool:
        return self.problem is None and not self.non_finite and self.max_abs <= self.allowed

    def line(self) -> str:
        if self.problem:
            return f"{self.what}: {self.problem}"
        text = f"{self.what}: largest error {self.max_abs:.3g} (relative {self.max_rel:.3g}, tolerance " \
               f"{self.tolerance:.3g}) over {self.compared} entries"
        if self.skipped:
            text += f", {self.skipped} on a kink skipped"
        if self.non_finite:
            text += f", {len(self.non_finite)} not finite: " + ", ".join(
                f"{e} (compiled {g}, reference {w})" for e, g, w in self.non_finite[:4])
        elif not self.passed and self.worst:
            e, g, w = self.worst
            text += f"; at {e} the compiled code gives {g!r}, the reference {w!r}"
        return text + ("" if self.passed else "  FAILED")


@dataclass
class CheckReport:
    """Every comparison ``gradc.check`` made; ``passed`` when all of them did."""

    name: str
    mode: str
    comparisons: list = field(default_factory=list)
    wrt: tuple = ()  # the arguments differentiated

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.comparisons)

    @property
    def failures(self) -> list:
        return [c for c in self.comparisons if not c.passed]

    def __str__(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        return "\n".join([f"gradc.check of {self.name} ({self.mode}): {verdict}"] +
                         [f"  {c.line()}" for c in self.comparisons])


def _dtype(values) -> str:
    return "f32" if any(np.asarray(v).dtype == np.float32 for v in values) else "f64"


def compare(what, got, want, tolerance, labels, slack=0.0, skip=None) -> Comparison:
    """``got`` against ``want`` (arrays of one shape): non-finite entries, then the largest error.

    ``labels(k)`` names flat entry ``k``; ``slack`` is an absolute allowance (the differences' rounding);
    ``skip`` marks entries not compared (kinks).

    >>> compare("v", np.ones(2), np.array([1.0, 1.5]), 1e-8, str).max_abs
    0.5
    """
    result = Comparison(what, tolerance=tolerance)
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        result.problem = f"the compiled code gives shape {got.shape}, the reference {want.shape}"
        return result
    g, w = got.reshape(-1), want.reshape(-1)
    skip = np.zeros(g.shape, bool) if skip is None else np.asarray(skip).reshape(-1)
    finite = np.isfinite(g) & np.isfinite(w)
    result.non_finite = [(labels(k), float(g[k]), float(w[k])) for k in np.flatnonzero(~finite)]
    result.skipped = int(np.sum(skip & finite))
    use = finite & ~skip
    result.compared = int(np.sum(use))
    if result.compared:
        err = np.where(use, np.abs(g - w), 0.0)
        scale = 1.0 + float(np.max(np.abs(w[use])))
        k = int(np.argmax(err))
        result.max_abs = float(err[k])
        result.max_rel = result.max_abs / scale
        result.allowed = tolerance * scale + slack
        result.worst = (labels(k), float(g[k]), float(w[k]))
    return result


def _raised(what, exc) -> Comparison:
    return Comparison(what, problem=f"the compiled code raises {type(exc).__name__}: {exc}")


SOLVE_TOLERANCE_FACTOR = 100  # two solvers at tolerance tol (gradc's and SciPy's) agree to about this * tol


def solve_tolerance(graph) -> float:
    """The relative accuracy allowed for the values of ``graph``: an ODE solve at ``rtol`` gives a value that
    SciPy's solver at the same ``rtol`` matches only to the tolerance (0 when every value is exact).

    >>> solve_tolerance(None)
    0.0
    """
    from gradc.ir.graph import subgraphs
    from gradc.ops.autodiff import RULES
    worst, pending = 0.0, [graph] if graph is not None else []
    while pending:
        for eqn in pending.pop().eqns:
            if eqn.op == "custom_call":
                worst = max(worst, SOLVE_TOLERANCE_FACTOR * getattr(RULES.get(eqn.params["rule"]), "tolerance", 0.0))
            pending.extend(subgraphs(eqn))
    return worst


class _Checker:
    """The state of one check: the point, the user's function, the compiled one, the directions drawn."""

    def __init__(self, compiled, f, point, seed, max_entries, only=None):
        self.compiled, self.f, self.point = compiled, f, point
        self.rng = np.random.default_rng(seed)
        self.max_entries = max_entries
        self.wrt = list(compiled.wrt)
        self.only = set(self.wrt if only is None else only)  # the derivatives compared (check's argnums/wrt)
        missing = [w for w in self.wrt if w not in point.slots]
        if missing:
            raise ArgumentError(f"gradc.check: {', '.join(missing)} (differentiated by the compiled code) is not an "
                                f"argument of the call", hint="pass every argument the compiled function takes")
        self.slots = [point.slot(w) for w in self.wrt]
        self.wide = point.in_float64(self.slots)  # finite differences in float64
        self.dtypes = {w: _dtype([point.get(s)]) for w, s in zip(self.wrt, self.slots)}
        raw = point.call(f)
        self.reference = flat_outputs(raw)
        self.report: list = []
        again = flat_outputs(point.call(f))
        if len(again) != len(self.reference) or not all(
                a.shape == b.shape and np.array_equal(a, b, equal_nan=True) for a, b in zip(again, self.reference)):
            self.report.append(Comparison("f itself", "value", problem=f"{getattr(f, '__name__', 'f')} returns "
                                          "different values on two calls with the same arguments (a random draw, or "
                                          "state it changes?): the compiled code fixed them when it was traced, so "
                                          "f cannot be the reference"))
        wide = quiet_call(f, self.wide)  # f computing in float32 inside rounds its differences at float32's eps
        self.eps = float(np.finfo(np.float32).eps) if _dtype(wide if isinstance(wide, (tuple, list)) else [wide]) \
            == "f32" else EPS
        self.value_dtype = _dtype(raw if isinstance(raw, (tuple, list)) else [raw])
        self.solve_tolerance = solve_tolerance(getattr(compiled, "graph", None))

    def outputs(self, point):
        return flat_outputs(quiet_call(self.f, point))

    def run(self, fn, what, point=None):
        """The compiled ``fn`` at the point (or a Comparison saying it raised)."""
        try:
            with np.errstate(all="ignore"):
                return (point or self.point).call_compiled(fn), None
        except (ArithmeticError, ValueError) as exc:  # e.g. Python's math on a scalar path
            failure = _raised(what, exc)
            self.report.append(failure)
            return None, failure

    def values(self, what, got):
        got = flat_outputs(got)
        if len(got) != len(self.reference):
            self.report.append(Comparison(what, "value", problem=f"the compiled code returns {len(got)} outputs, "
                                                        f"{getattr(self.f, '__name__', 'f')} {len(self.reference)}"))
            return
        for i, (g, w) in enumerate(zip(got, self.reference)):
            label = what if len(got) == 1 else f"{what} (output {i})"
            name = "value" if len(got) == 1 else f"output{i}"
            comparison = compare(label, g, w, max(VALUE_TOLERANCE[self.value_dtype], self.solve_tolerance),
                                 lambda k, w=w, n=name: entry_label(n, w.shape, k))
            comparison.kind = "value"
            self.report.append(comparison)

    def tangent(self, like):
        t = self.rng.standard_normal(np.shape(like))
        return float(t) if np.ndim(like) == 0 and not isinstance(like, np.ndarray) else t

    # ---------------------------------------------------------------- references
    def first_entries(self, s):
        """Per wrt: ``(entries, fd, smooth, slack)`` of the gradient of the scalar ``s`` (sampled entries)."""
        at_x = s(self.wide)
        base = abs(at_x) if math.isfinite(at_x) else 0.0
        out: list = []  # None for a wrt the check leaves out (argnums=/wrt= of gradc.check)
        for w, slot in zip(self.wrt, self.slots):
            if w not in self.only:
                out.append(None)
                continue
            value, dtype = self.wide.get(slot), self.dtypes[w]
            ks = picks(int(np.size(value)), self.rng, self.max_entries)
            pairs = [first_difference(s, self.wide, slot, k, FIRST_STEPS[dtype], dtype, at_x, self.eps) for k in ks]
            slack = 8 * self.eps * (1.0 + base) / FIRST_STEPS[dtype][0]
            out.append((ks, np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs], bool), slack))
        return out

    def counted(self, what, results, expected: int, of: str) -> bool:
        """Whether the compiled code returned ``expected`` results (else a failed comparison says so)."""
        if len(results) == expected:
            return True
        self.report.append(Comparison(what, problem=f"the compiled code returns {len(results)} {of}, "
                                                    f"{expected} expected"))
        return False

    def compare_gradients(self, what, grads, reference):
        if not self.counted(what.rstrip(":"), grads, len(self.wrt), "gradients"):
            return
        for w, g, entries in zip(self.wrt, grads, reference):
            if entries is None:  # not chosen
                continue
            ks, fd, smooth, slack = entries
            shape = np.shape(self.point.get(self.point.slot(w)))
            got = np.asarray(g, np.float64).reshape(-1)
            if got.size != int(np.prod(shape)):
                self.report.append(Comparison(f"{what} d/d{w}", problem=f"the compiled gradient has {got.size} "
                                                                          f"entries, {w} has {int(np.prod(shape))}"))
                continue
            self.report.append(compare(f"{what} d/d{w}", got[ks], fd, FIRST_TOLERANCE[self.dtypes[w]],
                                       lambda i, ks=ks, w=w, shape=shape: entry_label(w, shape, ks[i]),
                                       slack, ~smooth))

    def directional(self, v):
        dtype = "f32" if "f32" in self.dtypes.values() else "f64"
        direction = dict(zip(self.slots, v))
        fine, coarse = (directional_difference(self.outputs, self.wide, direction, h) for h in FIRST_STEPS[dtype])
        smooth = [np.abs(a - b) <= (1e-2 if dtype == "f32" else 1e-5) * (1.0 + np.abs(a)) for a, b in zip(fine, coarse)]
        slack = 8 * self.eps * (1.0 + max(float(np.max(np.abs(r), initial=0.0)) for r in self.reference)) / \
            FIRST_STEPS[dtype][0]
        return fine, smooth, slack, dtype

    def compare_tangents(self, what, tangents, v):
        if not self.counted(what, tangents, len(self.reference), "outputs"):
            return
        fine, smooth, slack, dtype = self.directional(v)
        for i, (t, fd, ok) in enumerate(zip(tangents, fine, smooth)):
            label = what if len(fine) == 1 else f"{what} (output {i})"
            self.report.append(compare(label, t, fd, FIRST_TOLERANCE[dtype],
                                       lambda k, fd=fd, i=i: entry_label(f"output{i}", fd.shape, k), slack, ~ok))

    def compare_second(self, what, hv, v):
        """``H v`` per wrt against mixed second differences of ``f`` (sampled entries)."""
        if not self.counted(what.rstrip(":"), hv, len(self.wrt), "results"):
            return
        direction = dict(zip(self.slots, v))

        def s(p):
            return float(self.outputs(p)[0])
        at_x = s(self.wide)
        base = abs(at_x) if math.isfinite(at_x) else 0.0
        for w, slot, got in zip(self.wrt, self.slots, hv):
            if w not in self.only:
                continue
            dtype, shape = self.dtypes[w], np.shape(self.point.get(slot))
            if np.size(got) != int(np.prod(shape)):
                self.report.append(Comparison(f"{what} d/d{w}", problem=f"the compiled code gives {np.size(got)} "
                                                                          f"entries, {w} has {int(np.prod(shape))}"))
                continue
            ks = picks(int(np.prod(shape)), self.rng, max(1, self.max_entries // 2))
            pairs = [two_step(lambda h, k=k, slot=slot: mixed_difference(s, self.wide, slot, k, direction,
                                                                                   h), SECOND_STEPS[dtype],
                              2, dtype) for k in ks]
            slack = 16 * self.eps * (1.0 + base) / SECOND_STEPS[dtype][0] ** 2
            got = np.asarray(got, np.float64).reshape(-1)
            self.report.append(compare(f"{what} d/d{w}", got[ks], np.array([p[0] for p in pairs]),
                                       SECOND_TOLERANCE[dtype], lambda i, ks=ks, w=w, shape=shape:
                                       entry_label(w, shape, ks[i]), slack, ~np.array([p[1] for p in pairs], bool)))


def _per_wrt(grads, n: int) -> list:
    """A gradient result as one entry per wrt (a single wrt's gradient may come bare or in a 1-tuple)."""
    if n == 1:
        return [grads[0] if isinstance(grads, (tuple, list)) and len(grads) == 1 else grads]
    return list(grads)


def _like(value, dtype_of):
    """``value`` (float64) in the dtype of ``dtype_of``: a float for a Python scalar, float32 where it is."""
    if np.ndim(dtype_of) == 0 and not isinstance(dtype_of, np.ndarray):
        return float(value)
    return np.asarray(value, np.asarray(dtype_of).dtype if np.asarray(dtype_of).dtype.kind == "f" else np.float64)


def _check_grad(c: _Checker):
    comp = c.compiled
    value, failure = c.run(comp.forward, "value")
    if failure is None:
        c.values("value", value)
    reference = c.first_entries(lambda p: float(np.sum(c.outputs(p)[0])))
    both, failure = c.run(comp.value_and_grad, "value_and_grad")
    if failure is None:
        c.values("value_and_grad: value", both[0])
        c.compare_gradients("value_and_grad:", _per_wrt(both[1], len(c.wrt)), reference)
    if hasattr(comp, "grad"):
        grads, failure = c.run(comp.grad, "grad")
        if failure is None:
            c.compare_gradients("grad:", _per_wrt(grads, len(c.wrt)), reference)


def _with(fn, extra):
    """``fn`` called with ``extra`` arguments after the point's positional ones."""
    return lambda *args, **kwargs: fn(*args, *extra, **kwargs)


def _check_mode(c: _Checker, mode: str):
    comp = c.compiled
    derivative = getattr(comp, mode)
    value, failure = c.run(comp.forward, "value")
    if failure is None:
        c.values("value", value)
    n_out = len(c.reference)
    # a random direction in the arguments chosen; zero in the others (their derivatives are not compared)
    v = [_like(c.tangent(c.point.get(s)) if w in c.only else np.zeros(np.shape(c.point.get(s))), c.point.get(s))
         for w, s in zip(c.wrt, c.slots)]
    if mode == "vjp":
        u = [_like(c.tangent(r), r if r.shape else float(r)) for r in c.reference]
        u = [np.asarray(x, np.float32) if c.value_dtype == "f32" and np.ndim(x) else x for x in u]
        reference = c.first_entries(lambda p: sum(float(np.sum(a * b)) for a, b in zip(u, c.outputs(p))))
        out, failure = c.run(_with(derivative, u), "vjp")
        if failure is None:
            out = flat_outputs(out)
            c.values("vjp: value", out[:n_out])
            c.compare_gradients("vjp:", out[n_out:], reference)
        return
    if mode in ("jvp", "hvp"):
        out, failure = c.run(_with(derivative, v), mode)
        if failure is None and mode == "jvp":
            out = flat_outputs(out)
            c.values("jvp: value", out[:n_out])
            c.compare_tangents("jvp: tangent", out[n_out:], v)
        elif failure is None:
            c.compare_second("hvp:", _per_wrt(out, len(c.wrt)), v)
        if mode == "hvp" and hasattr(comp, "grad_and_hvp"):  # the gradient and the product from one call
            both, failure = c.run(_with(comp.grad_and_hvp, v), "grad_and_hvp")
            if failure is None:
                reference = c.first_entries(lambda p: float(np.sum(c.outputs(p)[0])))
                c.compare_gradients("grad_and_hvp: gradient", _per_wrt(both[0], len(c.wrt)), reference)
                c.compare_second("grad_and_hvp: hvp", _per_wrt(both[1], len(c.wrt)), v)
        return
    blocks, failure = c.run(derivative, mode)
    if failure is not None:
        return
    blocks = flat_outputs(blocks)
    sizes = [int(np.size(c.point.get(s))) for s in c.slots]
    rows = [r.size for r in c.reference] if mode == "jacobian" else sizes
    if len(blocks) != len(rows) * len(sizes):
        c.report.append(Comparison(mode, problem=f"the compiled code returns {len(blocks)} blocks, "
                                                 f"{len(rows) * len(sizes)} expected"))
        return
    products = []
    for i, size in enumerate(rows):
        row = blocks[i * len(sizes):(i + 1) * len(sizes)]
        if any(b.size != size * n for b, n in zip(row, sizes)):
            c.report.append(Comparison(mode, problem="the compiled code returns blocks of the wrong size: "
                                                     f"{[b.shape for b in row]} for {size} rows"))
            return
        products.append(sum(b.reshape(size, -1) @ np.ravel(vj) for b, vj in zip(row, v)))
    if mode == "jacobian":
        c.compare_tangents("jacobian . v", [p.reshape(r.shape) for p, r in zip(products, c.reference)], v)
    else:
        c.compare_second("hessian . v", products, v)


@user_facing
def check(compiled: Any, f: Callable, *example_args: Any, seed: int = 0, max_entries: int = 50,
          raise_on_failure: bool = True, argnums: int | tuple | None = None, wrt: Any = None,
          static_argnums: int | tuple | None = None, static_argnames: str | tuple | None = None,
          **example_kwargs: Any) -> CheckReport:
    """Compare ``compiled`` (a ``gradc.compile`` result, any mode, any target) with ``f`` at
    ``f(*example_args, **example_kwargs)``.

    The module docstring says what is compared. ``seed`` fixes the random directions and the
    entries sampled (``max_entries`` per argument); with ``raise_on_failure`` (default) a failed
    comparison raises :class:`gradc.errors.CheckError` (its ``report`` attribute holds the report),
    otherwise the report is returned either way. ``argnums`` or ``wrt`` (``gradc.trace.selection``;
    default: every argument the compiled code differentiates) compare the derivatives with respect
    to those arguments only. Pytree arguments are checked leaf by leaf. ``static_argnums`` /
    ``static_argnames``: as given to ``gradc.compile`` (the static values among the example arguments).

    >>> import numpy as np, gradc
    >>> f = lambda x: np.tanh(x) * 2
    >>> x = np.array([0.1, 0.2])
    >>> gradc.check(gradc.compile(f, x, mode="jvp"), f, x).passed
    True
    >>> wrong = gradc.compile(lambda x: np.tanh(x) * 3, x, mode="jvp")
    >>> gradc.check(wrong, f, x, raise_on_failure=False).passed
    False
    """
    mode = getattr(compiled, "mode", None) or "grad"
    if not (callable(getattr(compiled, "forward", None)) and hasattr(compiled, "wrt")):
        raise ArgumentError(f"gradc.check: {type(compiled).__name__} is not a compiled function",
                            hint="pass what gradc.compile(f, *args, ...) returned, then f and the arguments")
    if not callable(getattr(compiled, "value_and_grad" if mode == "grad" else mode, None)):
        raise ArgumentError(f"gradc.check: the compiled object has no {mode} function")
    if mode != "grad" and example_kwargs:
        raise ArgumentError(f"gradc.check: mode {mode!r} takes extra arguments after f's: pass f's arguments "
                            "positionally", hint="e.g. gradc.check(compiled, f, x, w)")
    if not callable(f):
        raise ArgumentError(f"gradc.check: f must be the Python function compiled, not a {type(f).__name__}")
    selection = select_arguments(f, argnums, wrt, what="gradc.check", default=ALL)
    declared = static_parameters(f, static_argnums, static_argnames, "gradc.check")
    f, example_args, example_kwargs, _ = specialise_call(f, example_args, example_kwargs, declared)
    only = None if selection is None else list(selection.names)
    plan = getattr(compiled, "plan", None)
    if plan is not None:  # pytree arguments: the flat compiled functions against f as a function of the leaves
        wrt_shown = compiled.wrt
        example_args, example_kwargs = plan.flatten_call(example_args, example_kwargs, "gradc.check"), {}
        if only is not None:
            only = [leaf for p in only for leaf in plan.leaf_names[slice(*plan.ranges[p])]]
        compiled, f = compiled.flat, plan.leaf_function()
    if only is not None:
        missing = [w for w in only if w not in compiled.wrt]
        if missing:
            raise ArgumentError(f"gradc.check: the compiled code does not differentiate with respect to "
                                f"{', '.join(missing)}", where=user_location(),
                                hint=f"it differentiates {', '.join(compiled.wrt)}: choose among them, or "
                                     "compile with that argnums/wrt")
    checker = _Checker(compiled, f, Point.of(f, example_args, example_kwargs), seed, max_entries, only)
    if mode == "grad":
        _check_grad(checker)
    else:
        _check_mode(checker, mode)
    name = getattr(compiled, "name", getattr(f, "__name__", "f"))
    shown = wrt_shown if plan is not None else compiled.wrt
    report = CheckReport(name, mode, checker.report, tuple(shown if selection is None else selection.names))
    if raise_on_failure and not report.passed:
        failed = report.failures
        raise CheckError(f"gradc.check: the compiled {mode} of {name} disagrees with {name}: "
                         + "; ".join(c.line().removesuffix("  FAILED") for c in failed[:2])
                         + (f"; and {len(failed) - 2} more" if len(failed) > 2 else ""), report=report,
                         hint="print(err.report) lists every comparison; a non-finite entry may mean the "
                              "arguments are outside the function's domain")
    return report
