"""Tracing: run the user's NumPy function on tracers and record a Graph.

``tracer`` (the traced array and its operators), ``numpy_dispatch`` (which NumPy
function or ufunc becomes which op), ``signature`` (binding the user's parameters
and classifying arguments), ``frozen`` and ``state`` (what the function reads
besides its arguments: reported at trace time, checked at call time), and
``trace`` here. Plain NumPy code reaches gradc
through ``__array_ufunc__``, ``__array_function__`` and Python operators. Shapes,
dtypes and Python ints are static, so Python control flow on them simply runs;
branching on a traced value is a TraceError that points at the user's line.

May import: ``gradc.ir``, ``gradc.ops``, ``gradc.errors``.

>>> import numpy as np
>>> g = trace(lambda x: np.sin(x) * 2.0, np.ones(3))
>>> print(g)
def lambda_(x: f64[3]) -> f64[3]:
  t0: f64[3] = sin x
  t1: f64[3] = broadcast_to 2.0 shape=(3,)
  t2: f64[3] = mul t0 t1
  return t2
"""
from __future__ import annotations

import contextvars
import inspect
import os

import numpy as np

from gradc.errors import _SKIP_DIRS, StaticValueNeeded, TraceError, _display_path
from gradc.ir.builder import Builder, Traced
from gradc.ir.dims import needed_a_number
from gradc.ir.graph import Const
from gradc.stages import stage
from gradc.trace import matrix_root, recursive_filters  # noqa: F401  (register sqrtm, lfilter: loops, above the tables)
from gradc.trace.capture import capture as capture_control_flow
from gradc.trace.control_trace import UNROLLED
from gradc.trace.frozen import scan, warn_frozen
from gradc.trace.scipy_dispatch import rebind
from gradc.trace.selection import check_wrt  # noqa: F401  (re-exported for the layers above)
from gradc.trace.signature import (  # noqa: F401  (re-exported for the layers above)
    bind_arguments,
    call_bound,
    check_function,
    classify_argument,
    def_location,
    function_name,
    function_origin,
    unwrap,
)
from gradc.trace.state import CapturedState
from gradc.trace.tracer import TRACING, Tracer


class Enclosing:
    """Set in :data:`ENCLOSING` around the trace of a transform inlined into the trace in progress: ``parent`` is the
    builder of that trace; after the trace, ``captured`` holds its values the function read (one per extra input)."""

    def __init__(self, parent):
        self.parent = parent
        self.captured: list = []


ENCLOSING: contextvars.ContextVar = contextvars.ContextVar("gradc_enclosing", default=None)


def trace(f, *args, **kwargs):
    """Trace ``f`` on example arguments (only their shapes, dtypes and static values matter).

    What ``f`` reads besides its arguments is frozen at trace time, with a GradcWarning (see ``frozen``).

    >>> import numpy as np
    >>> print(trace(lambda x, n: x[:n].sum(), np.ones(4), 2))
    def lambda_(x: f64[4], n=2) -> f64[]:
      t0: f64[2] = index x spec=(:2,)
      t1: f64[] = sum t0 axes=(0,) keepdims=False
      return t1
    """
    return trace_bound(f, bind_arguments(f, args, kwargs))[0]


def trace_bound(f, values: dict, *, warn_reads: bool = True):
    """``(graph, state)`` for ``f`` on ``values`` (every parameter by name, in order); ``state`` is what
    ``f`` read besides its arguments (a :class:`CapturedState`, empty when nothing).

    >>> import numpy as np
    >>> graph, state = trace_bound(lambda x, *, k: x * k, {"x": np.ones(2), "k": 2.0})
    >>> graph.params, bool(state)
    (['x', 'k'], False)
    """
    _check_function_kind(f)
    # a transform inlined into an enclosing trace (gradc.derivatives.closures): values of that trace the function
    # reads (a closure over an outer traced value) become extra inputs of this graph, constants of its derivative
    nested = ENCLOSING.get()
    builder = Builder(taken=values, parent=nested.parent if nested is not None else None)
    call_args, static = {}, {}
    kinds = {name: classify_argument(name, value) for name, value in values.items()}
    _check_size_names(f, kinds)
    for name in values:
        kind, info = kinds[name]
        if kind == "tensor":
            call_args[name] = Tracer(builder, builder.input(name, info))
        else:
            static[name] = call_args[name] = info
    # a Python float or NumPy scalar argument cannot change in place: `b = x; b += 1` rebinds b (gradc.trace.inplace)
    from gradc.trace.inplace import immutable_input
    builder.immutable_inputs = frozenset(n for n, v in values.items() if isinstance(v, (int, float, np.generic)) or
                                         isinstance(v, Traced) and immutable_input(v))  # an enclosing trace's float
    token = TRACING.set(builder)  # a named size met alone (range(X.shape[0])) is read from this trace's inputs
    nested_token = ENCLOSING.set(None)  # only this trace: a trace inside it says for itself
    try:
        with stage("gradc.trace", f"tracing {function_name(f)}", _progress(builder)) as timer:
            result = call_bound(capture_control_flow(rebind(f)), call_args)  # SciPy names: gradc's; if/for/while
            timer.note = f"{len(builder.eqns)} operations"
    except TypeError as e:
        refusal = _named_size_refusal(e, builder)
        if refusal is None:
            raise
        raise refusal from None
    finally:
        TRACING.reset(token)
        ENCLOSING.reset(nested_token)
    outputs = [_output_atom(r, builder, f) for r in (result if isinstance(result, (tuple, list)) else (result,))]
    params = list(values)
    if builder.captured:  # only under ENCLOSING: the enclosing trace's values read, as trailing inputs
        builder.inputs.extend(builder.capture_inputs)
        params += [v.name for v in builder.capture_inputs]
        nested.captured = [Tracer(nested.parent, atom) for atom in builder.captured]
    graph = builder.graph(function_name(f), outputs, params=params, static=static, origin=function_origin(f))
    found = scan(f)
    warn_frozen(found, function_name(f), reads=warn_reads)
    return graph, CapturedState(found.reads)


def _progress(builder):
    """What a trace running long is doing, for the slow-compile notice (``gradc.stages``): the operations
    recorded so far, and the loop it is unrolling when a loop began running in Python since the trace began."""
    mark = UNROLLED[-1] if UNROLLED else None

    def describe() -> str:
        done = f"{len(builder.eqns):,} operations recorded so far"
        if UNROLLED and UNROLLED[-1] is not mark:
            return f"unrolling the loop at {UNROLLED[-1][0]}: {done}"
        return done
    return describe


def _named_size_refusal(error: TypeError, builder):
    """The TypeError Python or NumPy raised on a named size (``if X.shape[0] > 10``, ``float(n)``,
    ``np.arange(n)``) as a clear error at the user's line; None for any other TypeError."""
    if not builder.size_sources or not needed_a_number(error):
        return None
    import sympy

    skip = _SKIP_DIRS + (os.path.dirname(os.path.abspath(sympy.__file__)),)
    where, tb = None, error.__traceback__
    while tb is not None:
        path = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if not path.startswith(skip) and not path.startswith("<frozen"):
            where = f"{_display_path(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
        tb = tb.tb_next
    names = ", ".join(s.name for s in builder.size_sources)
    return StaticValueNeeded(f"a named size ({names}) is used where Python needs a number (a Python `if` on it, "
                             "float(), np.arange, an array's length)", where=where,
                             hint="named sizes are known only when the compiled code runs: keep them in array "
                                  "arithmetic (np.sum(r) / X.shape[0]), or compile for a fixed size")


def _check_size_names(f, kinds: dict) -> None:
    """A named size (``gradc.spec("f64[n]")``) may not be called like a parameter of ``f``: refused at the user's
    call, naming both."""
    for name, (kind, info) in kinds.items():
        if kind != "tensor":
            continue
        for d in info.shape:
            size = getattr(d, "name", None) if getattr(d, "is_Symbol", False) else None
            if size is not None and size in kinds:
                renamed = ",".join(f"{size}_rows" if getattr(e, "name", None) == size else str(e) for e in info.shape)
                raise TraceError(f"{name}'s type {info} has a size named {size!r}, and {size!r} is also a parameter "
                                 f"of {function_name(f)} (defined at {def_location(f)})",
                                 hint=f"rename the size ({info.dtype}[{renamed}]) or the parameter")


def _check_function_kind(f):
    """Generators and coroutines cannot be traced: say so at their ``def``."""
    inner = unwrap(f)
    if inspect.isgeneratorfunction(inner) or inspect.isasyncgenfunction(inner):
        raise TraceError(f"{function_name(f)} is a generator function (it uses yield), not a function returning "
                         "a value", where=def_location(f), hint="return the value instead of yielding it")
    if inspect.iscoroutinefunction(inner):
        raise TraceError(f"{function_name(f)} is an async function", where=def_location(f),
                         hint="define it with def, not async def, and return the value")


def _output_atom(value, builder, f):
    if isinstance(value, Tracer):
        if value.builder is not builder and builder.parent is not None and builder.encloses(value.builder):
            return builder.capture(value.builder, value.atom)  # an enclosing trace's value returned as it is
        if value.builder is not builder:
            raise TraceError("the function returned a value traced elsewhere", where=def_location(f),
                             hint="return values computed from this function's own arguments")
        return value.atom
    if value is None:
        raise TraceError(f"{function_name(f)} returned None", where=def_location(f),
                         hint="end it with `return <the value>` (is a return statement missing?)")
    if inspect.isgenerator(value):
        raise TraceError(f"{function_name(f)} returned a generator, not an array", where=def_location(f),
                         hint="return an array: np.array([...]) or np.stack([...]) instead of ( ... for ...)")
    try:
        return Const(np.asarray(value, dtype=np.float64) if isinstance(value, (int, float)) else np.asarray(value))
    except Exception:
        raise TraceError(f"{function_name(f)} returned a {type(value).__name__}, not an array",
                         where=def_location(f), hint="return a NumPy value (e.g. a scalar loss)") from None
