"""Functions of which interval a value falls in: ``np.digitize``, ``np.histogram`` (and its edges), ``np.piecewise``.

* ``digitize(x, bins, right)`` is ``searchsorted`` on the bins (reversed for decreasing bins, as
  NumPy does); an integer result, no derivative.
* ``histogram(a, bins, range, density, weights)`` with a number of bins or their edges: each value's
  bin found as NumPy finds it (uniform bins by arithmetic, corrected against the edges; explicit
  edges by ``searchsorted``), the counts (or weights) accumulated by ``index_add``. The counts have
  no derivative in ``a``; the weighted counts are linear in ``weights``; the edges of ``bins=N``
  follow ``a``'s minimum and maximum (or ``range``).
* ``histogram`` and ``histogram_bin_edges`` with ``bins`` an estimator's name: the number of bins is a
  shape, which a compiled function fixes when it is traced, from shapes alone. ``'sqrt'``,
  ``'sturges'`` and ``'rice'`` give a count that depends on the number of values only (NumPy's
  ``ceil(ptp / width)`` with ``width = ptp / f(n)``), so gradc computes it then, and the compiled code
  checks at run time that NumPy's count for the actual values is the same: constant data (NumPy
  makes one bin) or integer data whose width NumPy rounds up to 1 raise ``ValueError`` there, never a
  histogram of another shape. ``'auto'``, ``'fd'``, ``'scott'``, ``'doane'`` and ``'stone'`` need the
  spread of the values (their quartiles, deviation or skew) for the count: refused, with the fix
  (compute the edges once outside, ``np.histogram_bin_edges(data, 'auto')``, and pass them as
  ``bins``). Derivatives: the counts have none; the edges ``linspace(min, max, count + 1)`` follow
  ``a``'s minimum and maximum (zero almost everywhere in the other values, as the counts).
* ``piecewise(x, condlist, funclist)`` evaluates each function on ``x`` with the entries outside its
  condition replaced by one inside it, held constant (so a function undefined outside its piece,
  ``np.sqrt`` on negatives, gives neither a NaN value nor a NaN derivative), and selects: a later
  condition wins, as NumPy's assignments in order do; the result has ``x``'s dtype.

>>> import numpy as np, gradc
>>> gradc.grad(lambda x: np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, np.sqrt])))(np.array([-2.0, 4.0]))
array([-1.  ,  0.25])
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError, TraceError, user_location
from gradc.ir.builder import Traced
from gradc.ops import autodiff
from gradc.ops.index_add import index_add

FUNCTIONS: dict = {}
UFUNCS: dict = {}


def _traced(*values) -> bool:
    return any(isinstance(v, Traced) for v in values)


def digitize(x, bins, right=False):
    """``np.digitize`` (see the module docstring)."""
    side = "left" if right else "right"
    if not isinstance(bins, Traced):
        bins = np.asarray(bins)
        if bins.ndim != 1:
            raise ShapeError("np.digitize: bins must be one-dimensional", hint="pass a 1-D array of bin edges")
        steps = np.diff(bins)
        if np.all(steps <= 0) and not np.all(steps >= 0):
            return bins.shape[0] - np.searchsorted(bins[::-1], x, side=side)
        if not np.all(steps >= 0):
            raise TraceError("np.digitize: bins must be monotonically increasing or decreasing",
                             where=user_location(), hint="sort the bin edges")
        return np.searchsorted(bins, x, side=side)
    increasing = np.searchsorted(bins, x, side=side)
    decreasing = bins.shape[0] - np.searchsorted(bins[::-1], x, side=side)
    return np.where(bins[-1] >= bins[0], increasing, decreasing)  # traced bins: assumed monotonic


def _uniform_bin(a, first, last, n):
    """NumPy's bin of each value for ``n`` equal bins from ``first`` to ``last`` (-1 / n: outside)."""
    edges = np.linspace(first, last, n + 1)
    if isinstance(a, Traced) and not isinstance(edges, Traced):  # read at traced positions: a traced value
        edges = edges + np.zeros_like(a[:1])
    index = np.floor((a - first) * (n / (last - first))).astype(np.int64)
    index = np.where(index == n, n - 1, index)
    clipped = np.clip(index, 0, n - 1)
    index = np.where(a < edges[clipped], index - 1, index)  # rounding of the arithmetic, corrected as NumPy does
    clipped = np.clip(index, 0, n - 1)
    index = np.where((a >= edges[clipped + 1]) & (index != n - 1) & (index >= 0), index + 1, index)
    inside = (a >= first) & (a <= last)
    return np.where(inside, index, -1), edges


# the estimators whose bin count depends on the number of values only: n -> the divisor f(n) of ptp in the width
_SIZE_ESTIMATORS = {"sqrt": lambda n: np.sqrt(n), "sturges": lambda n: np.log2(n) + 1.0,
                    "rice": lambda n: 2.0 * n ** (1.0 / 3)}
_SPREAD_ESTIMATORS = ("auto", "fd", "scott", "doane", "stone")


def _estimated_count(what, a, name, range, weights):  # noqa: A002 (NumPy's name)
    """The bin count of estimator ``name`` for ``a`` (flat), with the run-time check that NumPy's is the same."""
    if name in (*_SIZE_ESTIMATORS, *_SPREAD_ESTIMATORS) and weights is not None:
        raise TraceError(f"{what}: automated estimation of the number of bins is not supported for weighted data "
                         "(NumPy's rule)", where=user_location(), hint="pass a number of bins or the edges")
    if name in _SPREAD_ESTIMATORS:
        raise TraceError(f"{what} with bins={name!r} is not supported by gradc: its number of bins depends on the "
                         "spread of the values, and it is the shape of the result", where=user_location(),
                         hint=f"compute the edges once outside the traced function (edges = "
                              f"np.histogram_bin_edges(data, {name!r})) and pass bins=edges, or pass a number of "
                              "bins; 'sqrt', 'sturges' and 'rice' depend on the number of values only and work")
    if name not in _SIZE_ESTIMATORS:
        raise TraceError(f"{what}: {name!r} is not a valid estimator for bins", where=user_location(),
                         hint=f"use one of {', '.join(sorted([*_SIZE_ESTIMATORS, *_SPREAD_ESTIMATORS]))}")
    if range is not None:
        raise TraceError(f"{what} with bins={name!r} and range=: the count depends on how many values fall in the "
                         "range", where=user_location(), hint="select the values first, or pass a number of bins")
    size = a.shape[0]
    if size <= 1:  # no value, or one: no spread, one bin
        return 1
    divisor = _SIZE_ESTIMATORS[name](size)
    count = int(np.ceil(1.0 / (1.0 / divisor)))
    if isinstance(a, Traced):  # NumPy's own count for the values, checked when the compiled code runs
        from gradc.ops.checks import check
        spread = (np.max(a) - np.min(a)).astype(np.float64)
        width = spread / divisor
        if np.issubdtype(a.dtype, np.integer):
            width = np.where(width < 1, 1.0, width)
        numpys = np.where(width > 0, np.ceil(spread / np.where(width > 0, width, 1.0)), 1.0)
        check(numpys != count, "ValueError",
              (f"{what} with bins={name!r}: NumPy's number of bins for these values differs from the {count} the "
               "compiled function was traced with (constant data get one bin; integer data a width of at least 1)",),
              user_location() or "")
    return count


def _outer_edges(what, a, range):  # noqa: A002 (NumPy's name)
    if range is not None:
        first, last = range
    else:
        first, last = np.min(a), np.max(a)
    if not _traced(first, last) and not first <= last:
        raise TraceError(f"{what}: max must be larger than min in range", where=user_location(),
                         hint="check range=")
    same = first == last
    return np.where(same, first - 0.5, first) + 0.0, np.where(same, last + 0.5, last) + 0.0


def _flat(x):
    return x.reshape(-1) if isinstance(x, Traced) else np.asarray(x).reshape(-1)


def _count(what, a, bins, range, weights):  # noqa: A002 (NumPy's name)
    """The number of equal bins (an int), or None for explicit edges."""
    if isinstance(bins, str):
        return _estimated_count(what, a, bins, range, weights)
    if np.ndim(bins) == 0:
        n = int(bins)
        if n < 1:
            raise ShapeError(f"{what}: bins must be a positive integer", hint="pass bins >= 1")
        return n
    return None


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 (NumPy's name)
    """``np.histogram_bin_edges`` (see the module docstring)."""
    a = _flat(a)
    n = _count("np.histogram_bin_edges", a, bins, range, weights)
    if n is None:
        return bins if isinstance(bins, Traced) else np.asarray(bins)
    first, last = _outer_edges("np.histogram_bin_edges", a, range)
    return np.linspace(first, last, n + 1)


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002 (NumPy's name)
    """``np.histogram`` (see the module docstring)."""
    a = _flat(a)
    if weights is not None:
        weights = _flat(weights)
    n = _count("np.histogram", a, bins, range, weights)
    if n is not None:
        first, last = _outer_edges("np.histogram", a, range)
        index, edges = _uniform_bin(a, first, last, n)
    else:
        edges = bins if isinstance(bins, Traced) else np.asarray(bins, dtype=np.float64)
        n = edges.shape[0] - 1
        index = np.searchsorted(edges, a, side="right") - 1
        index = np.where(a == edges[-1], n - 1, index)
        index = np.where((a < edges[0]) | (a > edges[-1]), -1, index)
    keep = index >= 0
    counted = (keep.astype(np.int64) if weights is None else np.where(keep, weights, 0))
    dtype = np.int64 if weights is None else np.result_type(weights.dtype, np.float64 if density else weights.dtype)
    hist = index_add(np.zeros(n, dtype=dtype), counted.astype(dtype), [np.where(keep, index, 0)], [("array", 0)])
    if density:
        widths = np.diff(edges)
        hist = hist / widths / np.sum(hist)
    return hist, edges


def _callable_piece(f, x, cond, args, kw):
    """``f`` on ``x`` with the entries outside ``cond`` replaced by ``x``'s first entry inside it (held constant)."""
    flat_x, flat_cond = np.reshape(x, (-1,)), np.reshape(cond, (-1,))
    inside = flat_x[np.argmax(flat_cond)] if np.size(flat_x) else 0.0
    safe = np.where(cond, x, autodiff.stop_gradient(inside) if isinstance(inside, Traced) else inside)
    return f(safe, *args, **kw)


def piecewise(x, condlist, funclist, *args, **kw):
    """``np.piecewise`` (see the module docstring)."""
    if not isinstance(x, Traced):
        x = np.asarray(x)
    if not isinstance(condlist, (list, tuple)) or (condlist and not isinstance(condlist[0], (list, tuple, Traced,
                                                                                            np.ndarray))):
        condlist = [condlist]  # one condition (an array of bools, or a list of bools for a 1-D x)
    condlist = list(condlist)
    funclist = list(funclist)
    if len(funclist) == len(condlist) + 1:  # the last function: where no condition holds
        otherwise = np.logical_not(np.any(np.stack([np.broadcast_to(c, np.shape(x)) for c in condlist]), axis=0)) \
            if condlist else np.ones(np.shape(x), dtype=bool)
        condlist.append(otherwise)
    elif len(funclist) != len(condlist):
        raise ShapeError(f"np.piecewise: {len(condlist)} conditions and {len(funclist)} functions (the functions "
                         "must be as many as the conditions, or one more)", hint="check funclist")
    y = np.zeros(np.shape(x), dtype=x.dtype)
    for cond, f in zip(condlist, funclist):
        cond = np.broadcast_to(cond, np.shape(x))
        value = _callable_piece(f, x, cond, args, kw) if callable(f) else f
        value = value.astype(x.dtype) if isinstance(value, Traced) else np.asarray(value, dtype=x.dtype)
        y = np.where(cond, value, y)
    return y


FUNCTIONS.update({np.digitize: digitize, np.histogram: histogram, np.histogram_bin_edges: histogram_bin_edges,
                  np.piecewise: piecewise})
