"""Central finite differences of the user's own function, for ``gradc.check``: the reference no gradc code is in.

The function is called as the user wrote it (plain NumPy); float32 arguments are moved to
float64 for the differences, so the reference is as exact as the function allows. Each
difference is taken with two step sizes: where they disagree the entry sits on a kink (or
a jump) and is skipped rather than compared.

>>> import numpy as np
>>> point = Point.of(lambda x: None, (np.array([1.0, 2.0]),), {})
>>> s = lambda p: float(np.sum(p.args[0] ** 2))
>>> round(entry_difference(s, point, point.slot("x"), 1, 1e-6), 6)
4.0
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np

from gradc.trace.signature import callable_signature

FIRST_STEPS = {"f64": (1e-6, 1e-5), "f32": (1e-4, 1e-3)}  # relative to max(1, |x|)
SECOND_STEPS = {"f64": (1e-4, 3e-4), "f32": (3e-3, 1e-2)}
KINK = {1: 1e-5, 2: 1e-3}  # two steps disagreeing by more than this (relative) mark a kink: skipped
F32_KINK = {1: 1e-2, 2: 5e-2}


@dataclass
class Point:
    """The arguments of one call, ``f(*args, **kwargs)``, and where each parameter name sits in them.

    ``order``: the slots of f's parameters in order, when the call gives exactly its first ones;
    the compiled functions are then called with them all positionally (the C target's functions
    take no keywords), else as ``f`` is.
    """

    args: list
    kwargs: dict
    slots: dict  # parameter name -> ("arg", index) or ("kw", name)
    order: list | None = None

    @classmethod
    def of(cls, f, args, kwargs) -> Point:
        slots, order = {}, None
        try:
            params = callable_signature(f).parameters
            bound = callable_signature(f).bind(*args, **kwargs)
            position = 0
            for name in bound.arguments:
                kind = params[name].kind
                if kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD) \
                        and name not in kwargs:
                    slots[name] = ("arg", position)
                    position += 1
                elif kind is not inspect.Parameter.VAR_POSITIONAL and kind is not inspect.Parameter.VAR_KEYWORD:
                    slots[name] = ("kw", name)
            if list(bound.arguments) == list(params)[:len(bound.arguments)] and len(slots) == len(bound.arguments):
                order = [slots[name] for name in bound.arguments]
        except (TypeError, ValueError):  # no signature (a builtin, a partial of one): positions only
            pass
        for i in range(len(args)):
            slots.setdefault(f"arg{i}", ("arg", i))
        return cls(list(args), dict(kwargs), slots, order)

    def slot(self, name: str):
        return self.slots[name]

    def get(self, slot):
        kind, key = slot
        return self.args[key] if kind == "arg" else self.kwargs[key]

    def with_value(self, slot, value) -> Point:
        args, kwargs = list(self.args), dict(self.kwargs)
        kind, key = slot
        if kind == "arg":
            args[key] = value
        else:
            kwargs[key] = value
        return Point(args, kwargs, self.slots, self.order)

    def call(self, fn):
        """``fn`` called as the user's function is."""
        return fn(*self.args, **self.kwargs)

    def call_compiled(self, fn):
        """``fn`` (a compiled function) called positionally when :attr:`order` allows, else as ``f`` is."""
        if self.order is None:
            return fn(*self.args, **self.kwargs)
        return fn(*[self.get(slot) for slot in self.order])

    def in_float64(self, slots) -> Point:
        """The same point with the float32 arguments in ``slots`` as float64 (exact: every float32 is a float64)."""
        point = self
        for slot in slots:
            value = self.get(slot)
            if np.asarray(value).dtype == np.float32:
                point = point.with_value(slot, np.asarray(value, np.float64))
        return point


def flat_outputs(value) -> list:
    """Every output of a call as float64 arrays, tuples and lists flattened in order.

    >>> [a.shape for a in flat_outputs((1.0, [np.zeros(2)]))]
    [(), (2,)]
    """
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in flat_outputs(v)]
    return [np.asarray(value, dtype=np.float64)]


def quiet_call(fn, point: Point):
    """``fn`` at ``point`` with NumPy's warnings off; NaN where Python's math raises a domain or range error."""
    try:
        with np.errstate(all="ignore"):
            return point.call(fn)
    except (OverflowError, ZeroDivisionError):
        return math.nan
    except ValueError as e:
        if "math domain" not in str(e):
            raise
        return math.nan


def _shifted(value, k: int, delta: float):
    arr = np.array(value, dtype=np.float64, copy=True)
    arr.reshape(-1)[k] += delta
    return float(arr) if arr.shape == () and not isinstance(value, np.ndarray) else arr


def _step(value, k: int, relative: float) -> float:
    x = float(np.asarray(value, np.float64).reshape(-1)[k])
    return relative * max(1.0, abs(x)) if math.isfinite(x) else relative


def entry_difference(s, point: Point, slot, k: int, relative: float) -> float:
    """``(s(x + h e_k) - s(x - h e_k)) / 2h`` for the scalar function ``s`` of a point, ``h`` relative to |x_k|."""
    return entry_slopes(s, point, slot, k, relative, 0.0)[0]


def entry_slopes(s, point: Point, slot, k: int, relative: float, at_x: float) -> tuple:
    """``(central difference, |forward - backward slope|, h)`` at entry ``k``; ``at_x`` is ``s(point)``.

    On a smooth function the two one-sided slopes differ by about ``h * s''``; across a kink
    hit exactly (``|x|`` at 0) by the jump in slope, whatever ``h``.
    """
    value = point.get(slot)
    h = _step(value, k, relative)
    plus, minus = s(point.with_value(slot, _shifted(value, k, h))), s(point.with_value(slot, _shifted(value, k, -h)))
    return (plus - minus) / (2 * h), abs(plus - 2 * at_x + minus) / h, h


def first_difference(s, point: Point, slot, k: int, steps, dtype: str, at_x: float, eps: float) -> tuple:
    """``(difference, compare)``: the central difference at the smaller step, and whether it is fit to compare.

    Not fit: the two steps disagree (a kink between the points), or the one-sided slopes differ
    by about as much at both steps (a kink at the point itself). Not-finite differences are
    always compared (and reported).
    """
    fine, jump, h = entry_slopes(s, point, slot, k, steps[0], at_x)
    coarse, coarse_jump, _ = entry_slopes(s, point, slot, k, steps[1], at_x)
    if not (math.isfinite(fine) and math.isfinite(coarse)):
        return (fine if not math.isfinite(fine) else coarse), True
    kink = (F32_KINK if dtype == "f32" else KINK)[1]
    if abs(fine - coarse) > kink * (1.0 + abs(fine)):
        return fine, False
    noise = 100 * eps * abs(at_x) / h if math.isfinite(at_x) else 0.0
    at_kink = jump > 1e-3 * (1.0 + abs(fine)) + noise and coarse_jump < 3 * jump
    return fine, not at_kink


def along(point: Point, direction: dict, t: float) -> Point:
    """``point + t * direction`` (``direction``: slot -> array shaped like the argument)."""
    for slot, d in direction.items():
        value = np.asarray(point.get(slot), np.float64) + t * np.asarray(d, np.float64)
        point = point.with_value(slot, float(value) if value.shape == () and not isinstance(
            point.get(slot), np.ndarray) else value)
    return point


def directional_difference(outputs, point: Point, direction: dict, relative: float) -> list:
    """``(F(x + h v) - F(x - h v)) / 2h`` for every output of ``F`` (``outputs(point)`` gives them flattened)."""
    h = relative * max([1.0] + [float(np.max(np.abs(point.get(s)), initial=0.0)) for s in direction])
    plus, minus = outputs(along(point, direction, h)), outputs(along(point, direction, -h))
    return [(a - b) / (2 * h) for a, b in zip(plus, minus)]


def mixed_difference(s, point: Point, slot, k: int, direction: dict, relative: float) -> float:
    """``d2 s / dx_k dv`` by a mixed central second difference (four calls)."""
    value = point.get(slot)
    h = _step(value, k, relative)
    total = 0.0
    for a, b in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
        shifted = point.with_value(slot, _shifted(value, k, a * h))
        total += a * b * s(along(shifted, direction, b * h))
    return total / (4 * h * h)


def picks(size: int, rng, limit: int) -> list:
    """The flat entries compared: all of them up to ``limit``, else ``limit`` drawn without replacement, in order."""
    return list(range(size)) if size <= limit else sorted(int(k) for k in rng.choice(size, limit, replace=False))


def two_step(difference, steps, order: int, dtype: str):
    """``(value, smooth)``: the difference at the smaller step, and whether the larger step agrees (no kink)."""
    fine, coarse = difference(steps[0]), difference(steps[1])
    if not (math.isfinite(fine) and math.isfinite(coarse)):
        return (fine if not math.isfinite(fine) else coarse), True  # not finite: reported, never skipped
    kink = (F32_KINK if dtype == "f32" else KINK)[order]
    return fine, abs(fine - coarse) <= kink * (1.0 + abs(fine))


def entry_label(name: str, shape, k: int) -> str:
    """``x[1,2]`` for flat entry ``k`` of ``name`` shaped ``shape`` (``x`` for a scalar).

    >>> entry_label("x", (2, 3), 5)
    'x[1,2]'
    """
    if not shape:
        return name
    return f"{name}[{','.join(str(int(j)) for j in np.unravel_index(k, shape))}]"
