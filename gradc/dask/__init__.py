"""Data-parallel gradients on Dask: one compiled gradient per chunk, summed in a tree.

``gradc.dask.value_and_grad(loss, wrt="w", rows=("X", "y"))`` makes a function
``(value, gradient)`` of the same arguments as ``loss``, where the ``rows``
arguments are Dask arrays split along their first axis. For a loss that is a
sum or a mean over those rows (plus any term of the other arguments alone, such
as a regularisation) it computes

* per chunk, in one task that reads each block once: the value and gradient of
  that chunk's share (the emitted NumPy value-and-gradient of its rows' partial sum);
* a tree reduction of the partial values and gradients (``split_every`` at a time);
* once at the end, on the client: the division of a mean by the global number of
  rows, and the value and gradient of the term without rows.

The other arguments (the parameters) enter the task graph once per call, as one
key, so each worker receives them once. Any Dask scheduler runs it: the threaded
one by default, ``dask.distributed`` when a ``Client`` is active.

Whether the loss is such a sum is decided on its traced graph
(:mod:`gradc.dask.rows`): the row axis is followed through every op, and a loss that
normalises rows by a statistic of all rows, sorts or takes a max over rows,
mixes rows through a matmul over the row axis, or applies a nonlinear function to
a sum over rows is refused with a ``TraceError`` naming the op, instead of
returning a wrong gradient. So is a loss that reads the number of rows
(``X.shape[0]``, ``len(X)``): write ``np.mean`` instead.

The per-chunk function is compiled once for every chunk length: the row
arguments are traced with a named size (``f64[rows,10]``, see ``gradc.spec``),
so the ragged last chunk runs the same emitted code as the others.

>>> import numpy as np, dask.array as da
>>> def loss(w, X, y, lam):
...     return np.mean((X @ w - y) ** 2) + lam * np.sum(w * w)
>>> vg = value_and_grad(loss, wrt="w", rows=("X", "y"))
>>> X = da.from_array(np.arange(10.0).reshape(5, 2), chunks=2); y = da.ones(5, chunks=2)
>>> value, grad = vg(np.array([0.5, -0.5]), X, y, 0.1)
>>> round(value, 6), grad
(2.3, array([-11.9, -15.1]))
"""
from __future__ import annotations

import inspect
import os
import sys
import warnings

import numpy as np

from gradc.api import Compiled
from gradc.backends.numpy.load import load_source
from gradc.dask.rows import NotSeparable, split
from gradc.errors import ArgumentError, TraceError, user_facing, user_location
from gradc.ir.dims import size_symbol
from gradc.ir.types import TensorType, dtype_name
from gradc.trace import bind_arguments, check_function, check_wrt, def_location, function_name, trace

__all__ = ["RowGradient", "value_and_grad"]


def value_and_grad(f, *, wrt=0, rows, split_every: int = 8) -> "RowGradient":
    """``f``'s value and gradient with respect to ``wrt``, computed chunk by chunk over the ``rows`` arguments.

    ``rows`` names the arguments (a name, a tuple of names, or a comma-separated
    string) whose first axis holds the rows; they are Dask arrays (NumPy arrays are
    wrapped) of one length, rechunked to the first one's row chunks. ``wrt`` is as
    for :func:`gradc.grad` and may not name a row argument. See the module docstring.

    >>> import numpy as np
    >>> vg = value_and_grad(lambda w, X: np.sum(np.exp(X @ w)), rows="X")
    >>> vg(np.zeros(2), np.ones((3, 2)))
    (3.0, array([3., 3.]))
    """
    return _checked(f, wrt, rows, split_every)


@user_facing
def _checked(f, wrt, rows, split_every) -> "RowGradient":
    """The options refused at the user's call (this is the first frame outside gradc's entry)."""
    what = "gradc.dask.value_and_grad"
    check_function(f, what)
    check_wrt(f, wrt, what)
    if isinstance(rows, str):
        rows = tuple(r.strip() for r in rows.split(","))
    rows = tuple(rows) if isinstance(rows, (tuple, list)) else rows
    if not isinstance(rows, tuple) or not all(isinstance(r, str) for r in rows):
        raise ArgumentError(f"{what}: rows={rows!r}", where=user_location(),
                            hint="name the row arguments: rows='X' or rows=('X', 'y')")
    if not rows:
        raise ArgumentError("rows is empty", where=user_location(),
                            hint="name the arguments whose first axis holds the rows")
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise ArgumentError(f"split_every={split_every!r}", where=user_location(), hint="use an int of at least 2")
    try:
        params = inspect.signature(f).parameters
    except (TypeError, ValueError):
        params = None
    if params is not None and not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params.values()):
        missing = [r for r in rows if r not in params]
        if missing:
            raise ArgumentError(f"rows names {', '.join(missing)}: not a parameter of {function_name(f)}",
                                where=user_location(), hint=f"parameters are: {', '.join(params)}")
        names = list(params)
        wrt_items = wrt if isinstance(wrt, (tuple, list)) else (wrt,)
        wrt_names = [names[w] if isinstance(w, int) and w < len(names) else w for w in wrt_items]
        bad = [n for n in wrt_names if n in rows]
        if bad:
            raise ArgumentError(f"wrt names the row argument {bad[0]!r}", where=user_location(),
                                hint="differentiate with respect to the parameters; the rows are data")
    return RowGradient(f, wrt, rows, split_every)


class RowGradient:
    """The data-parallel value and gradient of one loss: ``vg(*args)`` computes, ``vg.lazy(*args)`` builds.

    ``compiled`` maps each chunk length seen so far to the ``gradc.Compiled`` of that
    chunk's share (``.source`` is the emitted NumPy module every task runs).
    """

    def __init__(self, f, wrt, rows, split_every):
        self.f, self.wrt, self.rows, self.split_every = f, wrt, rows, split_every
        self.compiled: dict = {}  # signature -> (Compiled, split) of a chunk's share, for any chunk length
        self._offsets: dict = {}  # signature -> (Compiled of the free term, or its constant value)
        self._checked: set = set()  # signatures whose row-count independence was checked

    def __call__(self, *args, **kwargs):
        """``(value, gradient)`` as a float and NumPy array(s), computed by the current Dask scheduler."""
        dask, _ = _dask()
        return dask.compute(self.lazy(*args, **kwargs))[0]

    def lazy(self, *args, **kwargs):
        """A ``dask.delayed`` object of ``(value, gradient)``: the per-chunk tasks, their tree sum and the finish."""
        dask, da = _dask()
        bound = dict(bind_arguments(self.f, args, kwargs))
        missing = [r for r in self.rows if r not in bound]
        if missing:
            raise ArgumentError(f"rows names {', '.join(missing)}: not a parameter of the function",
                                where=def_location(self.f), hint=f"parameters are: {', '.join(bound)}")
        blocks, lengths = _row_blocks({r: bound[r] for r in self.rows}, da, self.rows)
        params = {n: v for n, v in bound.items() if n not in self.rows}
        signature = _signature(params, {r: bound[r] for r in self.rows})
        if signature not in self._checked:
            self._check_row_count(bound, signature)
        some, parts = self._entry(bound, signature)
        order, as_tuple = list(some.graph.params), isinstance(self.wrt, (tuple, list))
        shared = dask.delayed(params, pure=True, traverse=False)  # one key: each worker receives it once
        source = dask.delayed(some.source, pure=True, traverse=False)
        run = dask.delayed(_chunk_value_and_grad, pure=True)
        # a chunk of no rows adds nothing to a sum over rows (and the emitted code takes at least one row)
        level = [run(source, some.name, order, self.rows, shared, *bs) for bs, n in zip(blocks, lengths) if n]
        add = dask.delayed(_add, pure=True)
        while len(level) > 1:
            level = [add(*level[i:i + self.split_every]) for i in range(0, len(level), self.split_every)]
        n_rows = sum(lengths)
        offset = self._offset(bound, signature, some.wrt)
        if not n_rows:  # no rows at all: as gradc.value_and_grad on the whole (empty) data, following NumPy
            total = (0.0, tuple(np.zeros_like(np.asarray(bound[n], dtype=float)) for n in some.wrt))
            if parts.mean:  # NumPy's mean of no values: nan, with its warning; the sum over rows of the gradient is 0
                _warn_user("Mean of empty slice")
            scale = (float("nan") if parts.mean else 1.0, 1.0)
            return dask.delayed(_finish, pure=True)(total, offset, scale, as_tuple)
        scale = 1.0 / n_rows if parts.mean else 1.0  # a mean's division, once, by the number of all rows
        return dask.delayed(_finish, pure=True)(level[0], offset, (scale, scale), as_tuple)

    # ---- compiling
    def _trace(self, bound, length=None):
        """The loss traced with rows of ``length``, or of a named size (one compile for every chunk)."""
        rows = length if length is not None else size_symbol(_free_name("rows", bound))
        example = {n: (_rows_like(v, rows) if n in self.rows else v) for n, v in bound.items()}
        return trace(self.f, *example.values())

    def _split(self, graph):
        try:
            return split(graph, self.rows)
        except NotSeparable as e:
            raise TraceError(f"{graph.name} is not a sum or mean over the rows of {', '.join(self.rows)}: {e}",
                             where=def_location(self.f),
                             hint="gradc.dask sums per-chunk gradients, which is exact only for such losses; "
                                  "use gradc.grad on the whole data instead") from None

    def _entry(self, bound, signature):
        key = signature
        if key not in self.compiled:
            graph = self._trace(bound)
            parts = self._split(graph)
            names, as_tuple = _wrt_names(graph, self.wrt, self.rows, self.f)
            self.compiled[key] = (Compiled(parts.partial, names, as_tuple), parts)
        return self.compiled[key]

    def _offset(self, bound, signature, names):
        if signature not in self._offsets:
            parts = self._split(self._trace(bound, 2))
            g = parts.offset
            depends = {v.name for v in g.inputs} & set(names) and g.eqns
            self._offsets[signature] = Compiled(g, list(names), True) if depends else _constant(g)
        offset = self._offsets[signature]
        params = [bound[n] for n in offset.graph.params] if isinstance(offset, Compiled) else None
        if params is None:  # no term of the parameters alone: a constant, zero gradients
            return offset, tuple(np.zeros_like(np.asarray(bound[n], dtype=float)) for n in names)
        value, grads = offset.value_and_grad(*params)
        return value, grads

    def _check_row_count(self, bound, signature):
        """Refuse a loss that reads the number of rows as a value: it would see a chunk's, not the data's."""
        a, b = (self._trace(bound, n) for n in (2, 3))
        if _constants(a) != _constants(b):
            raise TraceError(f"{a.name} reads the number of rows of {', '.join(self.rows)} as a value "
                             "(X.shape[0], len(X), np.arange(len(X)), ...): per chunk it would be the chunk's",
                             where=def_location(self.f), hint="write np.mean over the rows instead of dividing by it")
        self._checked.add(signature)


# ---- what the tasks run (module level: picklable for dask.distributed's workers)
_LOADED: dict = {}


def _chunk_value_and_grad(source, name, order, rows, params, *blocks):
    """One chunk's share: value and gradients (a tuple) of the emitted function on these row blocks."""
    fn = _LOADED.get(source)
    if fn is None:  # once per worker process and chunk length
        fn = _LOADED[source] = load_source(source, name)[f"{name}_value_and_grad"]
    values = dict(params)
    values.update((r, np.asarray(b)) for r, b in zip(rows, blocks))  # np.asarray: a memmap block is an ndarray
    value, grads = fn(*[values[n] for n in order])
    return float(value), tuple(grads) if isinstance(grads, tuple) else (grads,)


def _add(*parts):
    value = sum(p[0] for p in parts)
    grads = tuple(sum(gs) for gs in zip(*(p[1] for p in parts)))
    return value, grads


def _finish(total, offset, scales, as_tuple):
    value_scale, grad_scale = scales
    value = float(offset[0]) + value_scale * total[0]
    grads = tuple(np.asarray(o) + grad_scale * g for o, g in zip(offset[1], total[1]))
    return value, grads if as_tuple else grads[0]


def _warn_user(message: str) -> None:
    """NumPy's RuntimeWarning, attributed to the user's line (the first frame outside gradc)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    level, frame = 1, sys._getframe(0)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, RuntimeWarning, stacklevel=level)


# ---- helpers
def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError:
        raise ImportError("gradc.dask needs Dask: pip install 'gradc[dask]'") from None
    return dask, da


def _row_blocks(rows: dict, da, names):
    """Per chunk, the blocks of every row argument (rechunked to the first one's rows), and the chunk lengths."""
    arrays = {n: v if isinstance(v, da.Array) else da.from_array(np.asarray(v)) for n, v in rows.items()}
    first = arrays[names[0]]
    if first.ndim == 0:
        raise ArgumentError(f"row argument {names[0]!r} is a scalar",
                            hint="pass an array whose first axis holds the rows")
    lengths = first.chunks[0]
    if any(np.isnan(c) for c in lengths):
        raise ArgumentError(f"{names[0]} has unknown chunk sizes", hint="call .compute_chunk_sizes() on it first")
    blocks = []
    for n in names:
        x = arrays[n]
        if x.ndim == 0 or x.shape[0] != first.shape[0]:
            raise ArgumentError(f"row arguments {names[0]} and {n} have different numbers of rows",
                                hint="every row argument holds the same rows along its first axis")
        wanted = (lengths,) + tuple((d,) for d in x.shape[1:])
        if x.chunks != wanted:
            x = x.rechunk(wanted)
        blocks.append(x.to_delayed().reshape(-1))
    return list(zip(*blocks)), [int(c) for c in lengths]


def _rows_like(x, length):
    """A stand-in with ``length`` rows (an int, or a named size: then a type) and ``x``'s other dimensions and
    dtype, without memory (for tracing)."""
    shape = (length,) + tuple(int(d) for d in x.shape[1:])
    if not isinstance(length, int):
        return TensorType(shape, dtype_name(x.dtype))
    return np.broadcast_to(np.zeros((), np.dtype(x.dtype)), shape)


def _free_name(name, taken):
    """``name``, or ``name_1``, ``name_2``, ... : the first that is not a parameter's."""
    k, candidate = 0, name
    while candidate in taken:
        k += 1
        candidate = f"{name}_{k}"
    return candidate


def _signature(params: dict, rows: dict) -> tuple:
    key = []
    for n, v in params.items():
        if isinstance(v, np.ndarray):
            key.append((n, v.shape, v.dtype.str))
        elif isinstance(v, (float, np.floating)):
            key.append((n, float))
        else:
            key.append((n, type(v), v if isinstance(v, (int, bool, str, type(None))) else id(v)))
    key += [(n, tuple(v.shape[1:]), np.dtype(v.dtype).str) for n, v in rows.items()]
    return tuple(key)


def _wrt_names(graph, wrt, rows, f):
    from gradc.transforms.reverse import resolve_wrt

    names, as_tuple = resolve_wrt(graph, wrt, def_location(f))
    bad = [n for n in names if n in rows]
    if bad:
        raise ArgumentError(f"wrt names the row argument {bad[0]!r}", where=def_location(f),
                            hint="differentiate with respect to the parameters; the rows are data")
    return names, as_tuple


def _constant(graph):
    out = graph.outputs[0]
    return float(np.asarray(getattr(out, "value", 0.0))) if not graph.eqns else 0.0


def _constants(graph) -> list:
    """Every constant operand of the graph, in order: what changes with the number of rows if the loss reads it."""
    from gradc.ir.graph import Const

    return [(a.type.shape, a.value.tobytes()) for e in graph.eqns for a in e.inputs if isinstance(a, Const)]
