"""Tracing loops and branches into sub-graphs: the traced half of ``gradc.trace.control``.

A body is traced once, in a builder nested in the one recording the loop; values it
reads from outside the loop become inputs of the sub-graph (captured), and the loop
becomes one ``scan``, ``while_loop`` or ``cond`` equation with an ``element`` per result.

Carried values keep their type across iterations. A carried Python number is weakly
typed, as in NumPy: ``total = 0`` then ``total = total + x[i]`` carries a float (and an
array, if ``x[i]`` is one); any other change of shape or dtype is an error at the user's line.

A loop with a static trip count of at most ``UNROLL_MAX_TRIPS`` (0 or 1) is unrolled:
there is no loop to keep. So is a loop of static length whose body needs its counter as a
Python int (a slice ``x[:i]``, a list index): the body is traced once per iteration, as Python
runs it (``UNROLLED`` records where and why). ``gradc show`` prints the loops that stay loops.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.trace.control import fori_loop
>>> print(trace(lambda x: fori_loop(0, 3, lambda i, v: v * x, x), 2.0))
def lambda_(x: f64[]) -> f64[]:
  t1: (f64[],) = scan x x length=3 n_carry=1 n_consts=1 reverse=False start=0 step=1
    def body(i: i64[], x_1: f64[], c0: f64[]) -> f64[]:
      t0: f64[] = mul c0 x_1
      return t0
  t2: f64[] = element t1 index=0
  return t2
"""
from __future__ import annotations

import collections
import contextlib
import contextvars

import numpy as np

from gradc.errors import StaticValueNeeded, TraceError
from gradc.ir import dims
from gradc.ir.atoms import Const
from gradc.ir.builder import BRANCHES, Builder, Traced
from gradc.ir.graph import Graph
from gradc.ir.types import TensorType, type_of_array
from gradc.ops import elementwise as ew
from gradc.ops import shape as sh
from gradc.ops.values import result_dtype
from gradc.trace import checks
from gradc.trace.carried_writes import ACTIVE, changed_in_place, check_distinct, check_no_stale_reads, write_back
from gradc.trace.checkpoint import POLICY_HINT, Binomial, as_policy
from gradc.trace.python_scalars import python_scalar_types

UNROLL_MAX_TRIPS = 1
DEFAULT_CHECKPOINT: contextvars.ContextVar = contextvars.ContextVar("checkpoint", default=None)  # grad(checkpoint=)
# (where, why) of the loops run in Python because their body needs the counter as an int
UNROLLED: collections.deque = collections.deque(maxlen=64)
_ACTIVE: list = ACTIVE  # builders of the bodies being traced, innermost last
I64 = TensorType((), "i64")
BOOL = TensorType((), "bool")


# ---------------------------------------------------------------- pytrees of carried values
def flatten(tree):
    """``(leaves, rebuild)`` for nested tuples, lists and dicts, and objects with a ``gc_flatten()`` method giving
    theirs (anything else is a leaf)."""
    if hasattr(type(tree), "gc_flatten"):
        return tree.gc_flatten()
    if isinstance(tree, (tuple, list)):
        parts = [flatten(t) for t in tree]
        kind = type(tree)

        def rebuild(leaves):
            out, k = [], 0
            for leaves_of, rebuild_of in parts:
                out.append(rebuild_of(leaves[k:k + len(leaves_of)]))
                k += len(leaves_of)
            return kind(out) if kind in (tuple, list) else kind(*out)
        return [leaf for leaves_of, _ in parts for leaf in leaves_of], rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        values, rebuild_values = flatten([tree[k] for k in keys])
        return values, lambda leaves: dict(zip(keys, rebuild_values(leaves)))
    return [tree], lambda leaves: leaves[0]


def is_unset(leaf) -> bool:
    """A variable not assigned yet (``capture_runtime.Undefined``) that a loop may carry: the body assigns it
    before any read, and its first traced result gives its type."""
    return bool(getattr(type(leaf), "is_unset", False))


def _leaf_type(leaf, names, k, where):
    """The IR type of a carried leaf and whether it is weak (a Python number: it may widen)."""
    if is_unset(leaf):
        return None, False
    if isinstance(leaf, Traced):
        return leaf.aval, False
    if isinstance(leaf, bool):
        return BOOL, False
    if isinstance(leaf, int):
        return I64, True
    if isinstance(leaf, float):
        return TensorType((), "f64"), True
    if isinstance(leaf, (np.ndarray, np.generic)):
        arr = np.asarray(leaf)
        if arr.dtype.kind == "f" and arr.dtype != np.float32:
            arr = arr.astype(np.float64)
        elif arr.dtype.kind in "iu":
            arr = arr.astype(np.int64) if arr.dtype != np.int32 else arr
        return type_of_array(arr), False
    raise TraceError(f"the loop carries {_label(names, k)}, a {type(leaf).__name__}, which gradc cannot trace",
                     where=where, hint="carry NumPy arrays, numbers, and tuples or lists of them; keep other "
                          "objects out of the variables the loop changes")


def _label(names, k):
    return repr(names[k]) if names and k < len(names) and names[k] else f"carried value {k}"


def _current(*values, hint=None) -> Builder:
    leaves = [leaf for v in values + (hint,) for leaf in flatten(v)[0] if isinstance(leaf, Traced)]
    candidates = [leaf.builder for leaf in leaves]
    if _ACTIVE:  # a helper's body being traced; a value of a trace nested in it (a derivative inlined) is deeper
        candidates = [_ACTIVE[-1]] + [b for b in candidates if b.encloses(_ACTIVE[-1]) and b is not _ACTIVE[-1]]
    return max(candidates, key=lambda b: b.depth)


def _atom_in(builder: Builder, value, t: TensorType):
    """``value`` as an atom of ``builder`` with type ``t`` (converted or broadcast where the type says)."""
    if isinstance(value, Traced):
        if value.builder is not builder:
            if not builder.encloses(value.builder):
                from gradc.ir.builder import raise_escaped
                raise_escaped()
            value = _wrap(builder, builder.capture(value.builder, value.atom))
        if value.aval.dtype != t.dtype:
            value = ew.astype(value, t.dtype)
        if value.aval.shape != t.shape:
            value = sh.broadcast_to(value, t.shape)
        return value.atom
    if is_unset(value):  # never read before the loop assigns it (see is_unset)
        value = 0
    return Const(np.broadcast_to(np.asarray(value, dtype=t.np_dtype), t.shape))


def _wrap(builder, atom):
    from gradc.trace.tracer import Tracer
    return Tracer(builder, atom)


def _wrap_weak(builder, atom, python=False):
    """A carried number, traced: ``total += x`` makes a new value, as it does for a number (a traced array's
    ``+=`` is NumPy's in-place update, which may not change the dtype). With ``python``, it is also a Python
    number (NumPy's weak scalars: ``0.0 + float32`` is float32; ``gradc.trace.python_scalars``)."""
    return python_scalar_types()[1 if python else 0](builder, atom)


def _wrap_counter(builder, atom):
    """The counter of a ``for i in range(...)`` kept as a loop: a Python int in the user's code, so it promotes as
    one (``i * x`` keeps a float32 ``x`` float32: NumPy's weak Python scalars, ``gradc.ops.values.result_dtype``)."""
    return python_scalar_types()[1](builder, atom)


def _widen(t: TensorType, got, weak: bool):
    """The carry type that also holds ``got`` (a body result), or None when it may not change."""
    if got == t:
        return t
    dtype = result_dtype(np.zeros((), t.np_dtype), np.zeros((), got.np_dtype))
    shape = t.shape
    if got.shape != t.shape:
        if not (weak and t.shape == ()):
            return None
        shape = got.shape
    if dtype != t.dtype and not weak and not (t.is_float is False and dtype in ("f64", "f32")):
        return None
    return TensorType(tuple(shape), dtype)


# ---------------------------------------------------------------- tracing a body
def _owned_copy(leaf) -> bool:
    """``y = x.copy()`` not yet written: it shares ``x``'s value but is a new array, so a loop writing it in place
    does not write ``x``."""
    while getattr(leaf, "_base", None) is not None:  # a view of such a copy writes into the copy
        leaf = leaf._base
    return getattr(leaf, "copied", None) is leaf.atom


class _Sub:
    """A body traced in a nested builder: its graph and the enclosing values it read."""

    def __init__(self, parent: Builder, name: str, fn, leading: list, carry_types: list, names, rebuild,
                 weak=(), origins=(), branch=False, counter=False, python=()):
        b = Builder(parent=parent)
        self.builder = b
        lead_vars = [b.input(b.fresh_name(n), t) for n, t in leading]
        carry_vars = [b.input(b.fresh_name(_var_name(names, k)), t) if t is not None else None
                      for k, t in enumerate(carry_types)]
        # where each carried value starts (for the in-place rules: `x += ...` on a loop over an input x)
        b.carry_origins = {id(v): leaf.atom for v, leaf in zip(carry_vars, origins)
                           if isinstance(leaf, Traced) and leaf.builder is parent and not _owned_copy(leaf)}
        args = [_wrap_counter(b, v) if counter else _wrap(b, v) for v in lead_vars]
        weak = list(weak) + [False] * (len(carry_vars) - len(weak))
        python = list(python) + [False] * (len(carry_vars) - len(python))
        self.carry_leaves = [origins[k] if v is None else _wrap_weak(b, v, p) if w else _wrap(b, v)
                             for k, (v, w, p) in enumerate(zip(carry_vars, weak, python))]
        carry = rebuild(self.carry_leaves)
        _ACTIVE.append(b)
        if branch:
            BRANCHES.append(b)
        try:
            self.result = fn(*args, carry)
        finally:
            _ACTIVE.pop()
            if branch:
                BRANCHES.pop()
        self.name, self.lead_vars, self.carry_vars = name, lead_vars, carry_vars

    def graph(self, outputs) -> Graph:
        b = self.builder
        b.closed = True
        inputs = self.lead_vars + b.capture_inputs + self.carry_vars
        return Graph(self.name, inputs, list(b.eqns), list(outputs))


def _structure_changed(before, after, names, where):
    """Name the loop variable whose structure changed (a list or dict that grew, a value that became a tuple)."""
    if not (isinstance(before, tuple) and isinstance(after, tuple) and len(before) == len(after)):
        return
    for k, (a, b) in enumerate(zip(before, after)):
        n_a, n_b = len(flatten(a)[0]), len(flatten(b)[0])
        if n_a != n_b:
            raise TraceError(f"{_label(names, k)} holds {n_a} values before the loop and {n_b} after an iteration "
                             "(a list or dict that grows in the loop, or a value that becomes a tuple)", where=where,
                             hint="a loop variable keeps its structure across iterations: append to a list "
                                  "(ys.append(y), then np.stack(ys) after the loop) in a for loop over a range fixed "
                                  "when gradc compiles, or fill an array of fixed shape (x = np.zeros(n), then "
                                  "x[k] = ...)")


def _var_name(names, k):
    if names and k < len(names) and names[k] and str(names[k]).isidentifier():
        return str(names[k])
    return f"c{k}"


def _trace_loop_body(parent, name, fn, leading, init_leaves, rebuild, names, where, extra_out=0, counter=False):
    """Trace ``fn(*leading, carry) -> carry`` (plus ``extra_out`` leaves after the carry), widening weak
    carries until the types are stable. Returns ``(sub, carry types, output leaves)``."""
    types, weak = zip(*[_leaf_type(leaf, names, k, where) for k, leaf in enumerate(init_leaves)]) \
        if init_leaves else ((), ())
    types = list(types)
    # a carry begun as a Python number promotes as one in the first iteration (NumPy's weak scalars): it then
    # holds what that iteration made of it (``0.0 + float32`` is float32), and is traced again with that type
    python = list(weak)
    for _ in range(4):
        sub = _Sub(parent, name, fn, leading, types, names, rebuild, weak, init_leaves, counter=counter,
                   python=python)
        out = sub.result
        if extra_out:
            if not isinstance(out, tuple) or len(out) != 2:
                raise TraceError("the loop body must return (carry, y)", where=where,
                                 hint="return a pair: the new carried values and this iteration's output")
        out_leaves, _ = flatten(out[0] if extra_out else out)
        if len(out_leaves) != len(types):
            _structure_changed(rebuild(list(init_leaves)), out[0] if extra_out else out, names, where)
            raise TraceError(f"the loop body returns {len(out_leaves)} carried values, it was given {len(types)}",
                             where=where, hint="return the carried values in the structure they came in")
        changed = False
        for k, (t, leaf) in enumerate(zip(types, out_leaves)):
            got = _leaf_type(leaf, names, k, where)[0]
            if t is None or got is None:
                if got is None:  # the body never assigns it: a value read after the loop that Python leaves unbound
                    raise TraceError(f"{_label(names, k)} is read after the loop but the loop never assigns it",
                                     where=where, hint=f"assign {_label(names, k)} before the loop")
                types[k], changed = got, True
                continue
            if got == t or (not isinstance(leaf, Traced) and got.shape == () and
                            np.can_cast(got.np_dtype, t.np_dtype, "same_kind")):
                continue
            if python[k]:  # the first iteration made a NumPy value of the Python number
                types[k], python[k], changed = got, False, True
                continue
            wider = _widen(t, got, weak[k])
            if wider is None:
                raise TraceError(f"{_label(names, k)} changes from {t} to {got} in the loop", where=where,
                                 hint="a loop variable keeps its shape and dtype across iterations: "
                                      "initialise it with the right shape and dtype before the loop "
                                      "(e.g. np.zeros(shape) or 0.0)")
            if wider != t:
                types[k], changed = wider, True
        if not changed:
            return sub, types, out
        sub.builder.closed = True  # traced again with wider types: this attempt is finished
    raise TraceError("the loop's carried types do not settle", where=where,
                     hint="initialise each loop variable with its final shape and dtype before the loop")


def _record(builder, op, inputs, params, out_types):
    """One equation with a tuple result, and an ``element`` per item: the results as tracers."""
    from gradc.ir.registry import OPS
    from gradc.ir.types import TupleType
    tuple_type = OPS[op].infer([a.type for a in inputs], params)
    assert isinstance(tuple_type, TupleType)
    var = builder.add(op, inputs, params, tuple_type)
    return [_wrap(builder, builder.add("element", (var,), {"index": k}, t))
            for k, t in enumerate(tuple_type.items)]


# ---------------------------------------------------------------- the primitives
def fori_loop(lower, upper, body, init_val, *, step=1, checkpoint=None, names=None, where=None):
    """``for i in range(lower, upper, step): val = body(i, val)`` with traced values: one ``scan`` equation."""
    if not isinstance(step, (int, np.integer)) or step == 0:
        raise TraceError("a loop's step must be a nonzero Python int", where=where, hint="use range(a, b, 2)")
    builder = _current(lower, upper, init_val)
    static = not isinstance(lower, Traced) and not isinstance(upper, Traced)
    leaves, rebuild = flatten(init_val)
    checkpoint = as_policy(checkpoint, where)
    if not static:
        _no_binomial(checkpoint, "a loop whose trip count is known only when it runs", where)
    if static:
        trips = len(range(int(lower), int(upper), int(step)))
        if trips <= UNROLL_MAX_TRIPS or UNROLL_STATIC.get():
            val = init_val
            for i in range(int(lower), int(upper), int(step)):
                val = body(i, val)
            return val
        checkpoint = checkpoint if checkpoint is not None else DEFAULT_CHECKPOINT.get()
        segment = segment_length(checkpoint, trips, where)
        if segment is not None:
            return _segmented(int(lower), int(step), trips, segment, body, init_val, names, where)
        start, length, inputs = int(lower), trips, []
    else:
        lo = _wrap(builder, _atom_in(builder, lower, I64))
        hi = _wrap(builder, _atom_in(builder, upper, I64))
        count = traced_trip_count(lo, hi, int(step))
        start, length, inputs = 0, None, [count.atom]

    def counted(j, carry):
        i = j if static else ew.add(lo, ew.mul(j, np.int64(step)))
        return body(i, carry)
    try:
        sub, types, out = _trace_loop_body(builder, "body", counted, [("i", I64)], leaves, rebuild, names, where,
                                           counter=True)
    except StaticValueNeeded as err:
        if not static:
            raise
        # the body needs its counter as a Python int (x[:i], a list index): run the loop in Python (unrolled)
        UNROLLED.append((where, str(err.args[0]) if err.args else ""))
        val = init_val
        for i in range(int(lower), int(upper), int(step)):
            val = body(i, val)
        return val
    out_leaves, _ = flatten(out)
    outputs = [_atom_in(sub.builder, leaf, t) for leaf, t in zip(out_leaves, types)]
    graph = sub.graph(outputs)
    consts = list(sub.builder.captured)
    init = [_atom_in(builder, leaf, t) for leaf, t in zip(leaves, types)]
    params = dict(body=graph, n_consts=len(consts), n_carry=len(init), length=length, reverse=False,
                  start=start if static else 0, step=int(step) if static else 1)
    if checkpoint is not None:
        params["checkpoint"] = checkpoint
    results = _record(builder, "scan", inputs + consts + init, params, None)
    return rebuild(_kept_in_place(builder, sub, leaves, out_leaves, results, names, where))


def traced_trip_count(lo, hi, step: int):
    """``len(range(lo, hi, step))`` of traced integer bounds (Python's rule: none when the step points away).

    >>> traced_trip_count(2, 11, 3), traced_trip_count(5, 0, -2), traced_trip_count(0, 4, -1)
    (3, 3, 0)
    """
    if step in (1, -1):  # no division: hi - lo, or lo - hi
        span = ew.sub(hi, lo) if step == 1 else ew.sub(lo, hi)
        return ew.maximum(span, np.int64(0)) if isinstance(span, Traced) else max(int(span), 0)
    span = ew.add(ew.sub(hi, lo), np.int64(step - (1 if step > 0 else -1)))
    count = span // np.int64(step) if isinstance(span, Traced) else np.int64(span // step)
    return ew.maximum(count, np.int64(0)) if isinstance(count, Traced) else max(int(count), 0)


def _kept_in_place(builder, sub, leaves, out_leaves, results, names, where):
    """A loop's results, with the arrays its body changed in place written into the objects it started from."""
    pairs = {k: j for k, j in changed_in_place(sub, out_leaves).items() if k == j}
    check_distinct(leaves, set(pairs.values()), names, where, "loop")
    check_no_stale_reads(sub.builder, leaves, set(pairs.values()), names, where, "loop")
    return write_back(builder, leaves, results, pairs)


UNROLL_STATIC: contextvars.ContextVar = contextvars.ContextVar("unroll_static", default=False)


@contextlib.contextmanager
def unrolled_loops(active: bool = True):
    """Inside the block, loops of static length run in Python (unrolled): for a target without loops (C).

    >>> with unrolled_loops():
    ...     UNROLL_STATIC.get()
    True
    """
    token = UNROLL_STATIC.set(bool(active))
    try:
        yield
    finally:
        UNROLL_STATIC.reset(token)


@contextlib.contextmanager
def loop_checkpoint(policy):
    """The default ``checkpoint=`` of the loops traced inside the block (``grad(f, checkpoint=...)``).

    >>> with loop_checkpoint("sqrt"):
    ...     DEFAULT_CHECKPOINT.get()
    'sqrt'
    """
    policy = check_policy(policy)
    token = DEFAULT_CHECKPOINT.set(policy)
    try:
        yield
    finally:
        DEFAULT_CHECKPOINT.reset(token)


def check_policy(policy, where=None):
    """``policy`` as a checkpointing policy, or a TraceError at ``where`` (by default the user's line: call it
    where the user passes it, before any tracing).

    >>> check_policy("sqrt"), check_policy(None)
    ('sqrt', None)
    """
    policy = as_policy(policy, where)
    if policy is not None:
        segment_length(policy, 4, where)
    return policy


def segment_length(checkpoint, trips: int, where) -> int | None:
    """How many iterations one checkpointed segment holds (None: tape every iteration).

    ``None``/``"none"``: tape everything; ``"sqrt"``: segments of ceil(sqrt(T)) iterations;
    an int k: segments of k iterations. Reverse mode then keeps one state per segment and
    recomputes a segment's tape when its turn comes: about T/k + k states instead of T.
    A binomial policy keeps the loop whole (None): its reverse rule follows the Revolve schedule.

    >>> segment_length("sqrt", 10_000, None), segment_length(None, 10, None)
    (100, None)
    """
    checkpoint = as_policy(checkpoint, where)
    if checkpoint is None or checkpoint == "none" or isinstance(checkpoint, Binomial):
        return None
    if checkpoint == "sqrt":
        k = int(np.ceil(np.sqrt(trips)))
    elif isinstance(checkpoint, (int, np.integer)) and not isinstance(checkpoint, bool) and checkpoint >= 1:
        k = int(checkpoint)
    else:
        raise TraceError(f"checkpoint={checkpoint!r} is not a checkpointing policy", where=where, hint=POLICY_HINT)
    return k if 1 < k < trips else None


def _no_binomial(checkpoint, what: str, where) -> None:
    """Refuse binomial checkpointing (asked for, or the default of ``grad``) on a loop without a static trip count."""
    policy = checkpoint if checkpoint is not None else DEFAULT_CHECKPOINT.get()
    if isinstance(policy, Binomial):
        raise TraceError(f"{policy!r} checkpointing needs a trip count known at trace time; this is {what}",
                         where=where, hint='use checkpoint="sqrt" or an int k for this loop, or give it a fixed '
                                           'trip count (a for loop over range(T) with a Python int T)')


def _segmented(lower, step, trips, k, body, init_val, names, where):
    """The loop as ``trips // k`` segments of ``k`` iterations (a nested loop) and the rest: reverse mode
    tapes the state once per segment and recomputes each segment's iterations when it runs backwards."""
    n_seg, rest = divmod(trips, k)

    def segment(s, val):
        first = ew.add(ew.mul(s, np.int64(k * step)), np.int64(lower))
        return fori_loop(0, k, lambda j, v: body(ew.add(first, ew.mul(j, np.int64(step))), v), val,
                         names=names, where=where, checkpoint="none")
    val = fori_loop(0, n_seg, segment, init_val, names=names, where=where, checkpoint="none")
    if rest:
        done = lower + n_seg * k * step
        val = fori_loop(done, done + rest * step, body, val, step=step, names=names, where=where, checkpoint="none")
    return val


def while_loop(cond_fun, body_fun, init_val, *, max_trips=None, checkpoint=None, names=None, where=None,
               hint=None, promote_python=False):
    """``while cond_fun(val): val = body_fun(val)`` with traced values: one ``while_loop`` equation.

    ``hint``: a traced value that made the loop traced (when ``init_val`` holds none).
    ``promote_python``: the condition was a Python value (on a Python counter the loop carries);
    if it stays one once the counter is traced, StaticValueNeeded says to run the loop in Python."""
    builder = _current(init_val, hint=hint)
    leaves, rebuild = flatten(init_val)
    checkpoint = as_policy(checkpoint, where)
    _no_binomial(checkpoint, "a while loop", where)
    sub, types, out = _trace_loop_body(builder, "body", lambda carry: body_fun(carry), [], leaves, rebuild,
                                       names, where)
    out_leaves, _ = flatten(out)
    body_graph = sub.graph([_atom_in(sub.builder, leaf, t) for leaf, t in zip(out_leaves, types)])
    csub = _Sub(builder, "cond", lambda carry: cond_fun(carry), [], types, names, rebuild)
    if not isinstance(csub.result, Traced):
        csub.builder.closed = True
        if promote_python:
            raise StaticValueNeeded("the while condition does not depend on the loop's values", where=where)
        raise TraceError("the while condition does not depend on any value the loop changes", where=where,
                         hint="the loop would run forever or not at all: make the condition read a loop variable")
    pred = _predicate(csub.builder, csub.result, where, "while")
    cond_graph = csub.graph([pred])
    init = [_atom_in(builder, leaf, t) for leaf, t in zip(leaves, types)]
    cond_consts, body_consts = list(csub.builder.captured), list(sub.builder.captured)
    # the graphs list their captured inputs before the carry: cond(*cond_consts, *carry), body(*body_consts, *carry)
    params = dict(cond=cond_graph, body=body_graph, n_cond_consts=len(cond_consts), n_body_consts=len(body_consts))
    if max_trips is not None:
        params["max_trips"] = int(max_trips)
    if checkpoint is not None:
        params["checkpoint"] = checkpoint
    results = _record(builder, "while_loop", cond_consts + body_consts + init, params, None)
    return rebuild(_kept_in_place(builder, sub, leaves, out_leaves, results[:len(init)], names, where))


def _predicate(builder, value, where, what):
    """A branch or loop condition as a ``bool[]`` atom of ``builder``."""
    if isinstance(value, Traced):
        if value.aval.shape != ():
            raise TraceError(f"the {what} condition is an array of shape {value.aval.shape}, not one truth value",
                             where=where, hint="use np.where(cond, a, b) to choose elementwise, or reduce the "
                                               "condition with np.all(...) / np.any(...)")
        if value.aval.dtype != "bool":
            value = ew.not_equal(value, np.zeros((), value.aval.np_dtype))
        return _atom_in(builder, value, BOOL)
    return Const(np.asarray(bool(value)))


def cond(pred, true_fun, false_fun, *operands, names=None, where=None):
    """``true_fun(*operands) if pred else false_fun(*operands)`` on a traced scalar ``pred``: one ``cond`` equation."""
    builder = _current(pred, operands)
    pred_atom = _predicate(builder, pred, where, "if")
    leaves, rebuild = flatten(tuple(operands))
    types = [_leaf_type(leaf, names, k, where)[0] for k, leaf in enumerate(leaves)]
    subs = [_Sub(builder, name, lambda carry, fn=checks.branch(fn): fn(*carry), [], types, None, rebuild,
                 branch=True) for name, fn in (("if_false", false_fun), ("if_true", true_fun))]
    raised = [s.result for s in subs]  # a branch ending in the user's raise: a run-time check (gradc.trace.checks)
    done, value = checks.settle_branches(builder, pred_atom, subs, flatten,
                                         lambda b, leaf, k: _zero_like(b, _leaf_type(leaf, names, k, where)[0]))
    if done:
        return value
    results = [flatten(s.result) for s in subs]
    (f_leaves, f_rebuild), (t_leaves, _) = results
    if len(f_leaves) != len(t_leaves):
        _different_appends(subs[1].result, subs[0].result, names, where)
        raise TraceError(f"the two branches give {len(t_leaves)} and {len(f_leaves)} values", where=where,
                         hint="both branches must assign the same variables (or return the same structure)")
    out_types = []
    for k, (a, b) in enumerate(zip(t_leaves, f_leaves)):
        ta, tb = _leaf_type(a, names, k, where)[0], _leaf_type(b, names, k, where)[0]
        if ta is None or tb is None:  # unset in one branch (a loop variable only a `return` reads): the other's
            if ta is None and tb is None:
                raise TraceError(f"{_label(names, k)} is not assigned in either branch", where=where,
                                 hint="assign it before the `if`")
            ta = tb = ta or tb
        try:
            shape = tuple(dims.broadcast(ta.shape, tb.shape))
        except ValueError:
            shape = None
        if shape is None or (shape != ta.shape and isinstance(a, Traced)) or (
                shape != tb.shape and isinstance(b, Traced)):
            raise TraceError(f"{_label(names, k)} is {ta} in one branch and {tb} in the other", where=where,
                             hint="give it the same shape in both branches")
        out_types.append(TensorType(shape, result_dtype(np.zeros((), ta.np_dtype), np.zeros((), tb.np_dtype))))
    outs = [[_atom_in(s.builder, leaf, t) for leaf, t in zip(r[0], out_types)] for s, r in zip(subs, results)]
    # both branches take the same inputs: every value either one captured, then the operands
    consts = []
    for s in subs:
        for atom in s.builder.captured:
            if all(atom is not c for c in consts):
                consts.append(atom)
    graphs = []
    for s, o in zip(subs, outs):
        s.builder.closed = True
        own = {id(a): v for a, v in zip(s.builder.captured, s.builder.capture_inputs)}
        const_vars = [own.get(id(a)) or _unused(s.builder, a) for a in consts]
        graphs.append(Graph(s.name, const_vars + s.carry_vars, list(s.builder.eqns), o))
    operand_atoms = [_atom_in(builder, leaf, t) for leaf, t in zip(leaves, types)]
    results = _record(builder, "cond", [pred_atom] + consts + operand_atoms, dict(branches=tuple(graphs)), None)
    checks.finish(raised, where)
    return f_rebuild(_branches_in_place(builder, subs, leaves, results, names, where))


def _different_appends(true_result, false_result, names, where):
    """Name the list a traced loop collects that gets a different number of items in the two branches."""
    if not (isinstance(true_result, tuple) and isinstance(false_result, tuple)):
        return
    for k, (a, b) in enumerate(zip(true_result, false_result)):
        if hasattr(type(a), "new_rows") and hasattr(type(b), "new_rows") and a.new_rows() != b.new_rows():
            raise TraceError(f"{_label(names, k)} gets {a.new_rows()} item(s) in one branch of this `if` on a traced "
                             f"value and {b.new_rows()} in the other (a `break` or `continue` before an append skips "
                             "it too): the loop collecting the list must append the same number of items at every "
                             "iteration", where=where,
                             hint="append in every branch (e.g. x * 0.0 where there is nothing to collect, with a "
                                  "mask to drop it after the loop), or fill an array instead (out = np.zeros(n), "
                                  "then out[i] = value)")


def _zero_like(builder, t: TensorType):
    """Zeros of type ``t`` in ``builder`` (a broadcast scalar: a named size stays a name)."""
    zero = _wrap(builder, Const(np.zeros((), t.np_dtype)))
    return sh.broadcast_to(zero, t.shape) if t.shape else zero


def _branches_in_place(builder, subs, leaves, results, names, where):
    """A branch's results, with each operand that both branches change in place (or one changes, the other
    leaves alone) written into the object it came from."""
    found = [changed_in_place(s, flatten(s.result)[0]) for s in subs]
    untouched = [{k: j for k, leaf in enumerate(flatten(s.result)[0]) for j, w in enumerate(s.carry_leaves)
                  if leaf is w} for s in subs]
    pairs = {}
    for k, j in {**found[0], **found[1]}.items():
        if all(u.get(k) == j for u in untouched):
            pairs[k] = j
    check_distinct(leaves, set(pairs.values()), names, where, "`if`")
    for s in subs:
        check_no_stale_reads(s.builder, leaves, set(pairs.values()), names, where, "`if`")
    return write_back(builder, leaves, results, pairs)


def _unused(builder, atom):
    from gradc.ir.atoms import Var
    return Var(builder.fresh_name(atom.name), atom.type)


def scan(f, init, xs, length=None, *, checkpoint=None, names=None, where=None, hint=None):
    """``carry, y = f(carry, x)`` over ``xs``'s first axis with traced values: one ``scan`` equation."""
    builder = _current(init, xs, hint=hint)
    x_leaves, x_rebuild = flatten(xs)
    x_atoms = [_atom_in(builder, x, _leaf_type(x, None, 0, where)[0]) for x in x_leaves]
    lengths = {a.type.shape[0] for a in x_atoms if a.type.shape}
    if any(not a.type.shape for a in x_atoms) or len(lengths) > 1 or (length is not None and lengths
                                                                         and lengths != {length}):
        raise TraceError("scan's xs must be arrays with the same number of rows", where=where,
                         hint="stack the per-step inputs along the first axis")
    trips = length if not lengths else lengths.pop()
    if trips is None:
        raise TraceError("scan needs xs or length=", where=where, hint="pass length=<number of steps>")
    checkpoint = as_policy(checkpoint, where)
    if checkpoint is not None:
        segment_length(checkpoint, max(int(trips), 1), where)  # a bad policy is refused
    elif isinstance(DEFAULT_CHECKPOINT.get(), Binomial):  # grad(checkpoint=binomial(s)) reaches scans too
        checkpoint = DEFAULT_CHECKPOINT.get()
    if UNROLL_STATIC.get():  # a target without loops: the steps one after another
        carry, ys = init, []
        for k in range(trips):
            carry, y = f(carry, x_rebuild([_wrap(builder, a)[k] for a in x_atoms]) if x_atoms else None)
            ys.append(y)
        y_leaves = [flatten(y)[0] for y in ys]
        _, y_rebuild = flatten(ys[0])
        from gradc.trace.numpy_dispatch import _stack
        return carry, y_rebuild([_stack([leaves[j] for leaves in y_leaves]) for j in range(len(y_leaves[0]))])
    leaves, rebuild = flatten(init)
    slices = [(f"x{k}", a.type.with_shape(a.type.shape[1:])) for k, a in enumerate(x_atoms)]

    def step(i, *rest):
        *x_slices, carry = rest
        return f(carry, x_rebuild(list(x_slices)) if x_atoms else None)
    leading = [("i", I64)] + slices
    sub, types, out = _trace_loop_body(builder, "body", step, leading, leaves, rebuild, names, where, extra_out=1)
    carry_leaves, _ = flatten(out[0])
    y_leaves, y_rebuild = flatten(out[1])
    outputs = [_atom_in(sub.builder, leaf, t) for leaf, t in zip(carry_leaves, types)]
    outputs += [_atom_in(sub.builder, y, _leaf_type(y, None, 0, where)[0]) for y in y_leaves]
    b = sub.builder
    b.closed = True
    # the scan op's body takes (i, *consts, *carry, *x_i): reorder the traced inputs
    graph = Graph("body", [sub.lead_vars[0]] + b.capture_inputs + sub.carry_vars + sub.lead_vars[1:],
                  list(b.eqns), outputs)
    init_atoms = [_atom_in(builder, leaf, t) for leaf, t in zip(leaves, types)]
    params = dict(body=graph, n_consts=len(b.captured), n_carry=len(init_atoms), length=trips, reverse=False,
                  start=0, step=1)
    if checkpoint is not None:
        params["checkpoint"] = checkpoint
    results = _record(builder, "scan", list(b.captured) + init_atoms + x_atoms, params, None)
    return rebuild(results[:len(init_atoms)]), y_rebuild(results[len(init_atoms):])
