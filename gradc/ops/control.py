"""Control-flow ops: equations whose params hold sub-graphs (``scan``, ``while_loop``, ``cond``) and ``element``.

* ``scan``: a counted loop. Inputs ``[length], *consts, *carry, *xs``; the body graph takes
  ``(i, *consts, *carry, *x_i)`` and returns ``(*carry, *y_i)``; the result is the tuple
  ``(*carry, *ys)``, ``ys`` stacked along a new first axis. ``length`` is a static param
  or, when None, the first input (an ``i64[]`` known when the loop starts). The counter
  ``i`` runs ``start, start + step, ...``; ``reverse`` runs the iterations backwards
  (iteration ``j`` still reads ``x[j]`` and writes ``y[j]``), which is how the adjoint
  of a loop reads its tape.
* ``while_loop``: inputs ``*cond_consts, *body_consts, *carry``; ``cond`` maps
  ``(*cond_consts, *carry)`` to a ``bool[]``, ``body`` maps ``(*body_consts, *carry)`` to
  ``(*carry, *y)``. The result is ``(*carry, trips, *ys)``, each ``y`` a stack (one entry per
  trip: a while loop's tape).
* ``cond``: inputs ``pred, *operands``; ``branches`` is ``(false_graph, true_graph)``, both
  taking the operands and returning values of the same types; the result is the tuple.
* ``element``: item ``index`` of a tuple result (the only reader of a tuple).

Their derivative and batching rules transform sub-graphs, which is the transforms'
business: they are installed into ``SUBGRAPH_RULES`` by ``gradc.transforms.control``.

>>> from gradc.ir.types import TensorType
>>> OPS["element"].infer([TupleType((TensorType((), "f64"),))], {"index": 0})
f64[]
"""
from __future__ import annotations

import numpy as np

from gradc.errors import MissingRuleError
from gradc.ir.interpret import evaluate
from gradc.ir.registry import OPS, defop  # noqa: F401
from gradc.ir.types import StackType, TensorType, TupleType

SUBGRAPH_RULES: dict = {}  # (op name, "vjp" | "jvp" | "batch") -> rule, installed by gradc.transforms.control
I64 = TensorType((), "i64")


def _rule(op: str, kind: str):
    def call(*args, **kwargs):
        rule = SUBGRAPH_RULES.get((op, kind))
        if rule is None:
            raise MissingRuleError(f"op {op} has no {kind} rule here (import gradc.transforms to install it)")
        return rule(*args, **kwargs)
    return call


def _stacked(item: TensorType, length):
    return StackType(item) if length is None else item.with_shape((length,) + tuple(item.shape))


def _slice_type(t, length, what):
    if isinstance(t, StackType):
        if length is not None:
            raise TypeError(f"{what}: a stack read by a loop of static length {length}")
        return t.item
    if length is not None and (not t.shape or t.shape[0] != length):
        raise TypeError(f"{what}: {t} does not have {length} rows")
    if length is None:
        raise TypeError(f"{what}: a loop of run-time length reads an array {t}, not a stack")
    return t.with_shape(t.shape[1:])


def _same(expected, got, what):
    if list(expected) != list(got):
        raise TypeError(f"{what}: types {list(got)} where {list(expected)} were expected")


# ---------------------------------------------------------------- scan
def scan_parts(inputs, params):
    """``(length input or None, consts, carry, xs)`` of a scan equation's inputs."""
    inputs = list(inputs)
    length = inputs.pop(0) if params["length"] is None else None
    k, c = params["n_consts"], params["n_carry"]
    return length, inputs[:k], inputs[k:k + c], inputs[k + c:]


def _scan_infer(types, params):
    body, length = params["body"], params["length"]
    n_len, k, c = (1 if length is None else 0), params["n_consts"], params["n_carry"]
    if length is None and types[0] != I64:
        raise TypeError(f"scan: a run-time length must be i64[], not {types[0]}")
    consts, carry, xs = types[n_len:n_len + k], types[n_len + k:n_len + k + c], types[n_len + k + c:]
    slices = [_slice_type(t, length, "scan") for t in xs]
    _same([I64] + list(consts) + list(carry) + slices, [v.type for v in body.inputs], "scan body inputs")
    outs = [o.type for o in body.outputs]
    _same(carry, outs[:c], "scan body carry")
    return TupleType(tuple(carry) + tuple(_stacked(t, length) for t in outs[c:]))


def _scan_impl(*args, body, n_consts, n_carry, length, reverse=False, start=0, step=1, **_):
    args = list(args)
    trips = int(args.pop(0)) if length is None else length
    consts, carry, xs = args[:n_consts], args[n_consts:n_consts + n_carry], args[n_consts + n_carry:]
    item_types = [o.type for o in body.outputs[n_carry:]]
    ys = [np.empty((trips,) + t.shape, t.np_dtype) for t in item_types]
    for j in (range(trips - 1, -1, -1) if reverse else range(trips)):
        outs = evaluate(body, np.int64(start + j * step), *consts, *carry, *(x[j] for x in xs))
        carry = outs[:n_carry]
        for y, value in zip(ys, outs[n_carry:]):
            y[j] = value
    return tuple(carry) + tuple(ys)


defop("scan", infer=_scan_infer, impl=_scan_impl, vjp=_rule("scan", "vjp"), jvp=_rule("scan", "jvp"),
      batch=_rule("scan", "batch"), c=("scan",),  # C: a for loop (gradc.backends.c.control)
      doc="a counted loop; reverse mode tapes the carried values its adjoint reads and runs the loop backwards")


# ---------------------------------------------------------------- while_loop
def while_parts(inputs, params):
    """``(cond consts, body consts, carry)`` of a while_loop equation's inputs."""
    inputs = list(inputs)
    a, b = params["n_cond_consts"], params["n_body_consts"]
    return inputs[:a], inputs[a:a + b], inputs[a + b:]


def _while_infer(types, params):
    cond, body = params["cond"], params["body"]
    a, b = params["n_cond_consts"], params["n_body_consts"]
    carry = list(types[a + b:])
    _same(list(types[:a]) + carry, [v.type for v in cond.inputs], "while_loop condition inputs")
    if [o.type for o in cond.outputs] != [TensorType((), "bool")]:
        raise TypeError(f"while_loop: the condition gives {[o.type for o in cond.outputs]}, not one bool[]")
    _same(list(types[a:a + b]) + carry, [v.type for v in body.inputs], "while_loop body inputs")
    outs = [o.type for o in body.outputs]
    _same(carry, outs[:len(carry)], "while_loop body carry")
    return TupleType(tuple(carry) + (I64,) + tuple(StackType(t) for t in outs[len(carry):]))


def _while_impl(*args, cond, body, n_cond_consts, n_body_consts, max_trips=None, **_):
    cond_consts, body_consts, carry = while_parts(args, dict(n_cond_consts=n_cond_consts,
                                                              n_body_consts=n_body_consts))
    n = len(carry)
    ys: list = [[] for _ in body.outputs[n:]]
    trips = 0
    while bool(evaluate(cond, *cond_consts, *carry)[0]):
        if max_trips is not None and trips >= max_trips:
            raise RuntimeError(f"while_loop ran more than max_trips={max_trips} times")
        outs = evaluate(body, *body_consts, *carry)
        carry = outs[:n]
        for y, value in zip(ys, outs[n:]):
            y.append(value)
        trips += 1
    stacks = [np.array(y, dtype=o.type.np_dtype).reshape((trips,) + o.type.shape)
              for y, o in zip(ys, body.outputs[n:])]
    return tuple(carry) + (np.int64(trips),) + tuple(stacks)


defop("while_loop", infer=_while_infer, impl=_while_impl, vjp=_rule("while_loop", "vjp"),
      jvp=_rule("while_loop", "jvp"), batch=_rule("while_loop", "batch"), c=("while_loop",),  # C: a while loop
      doc="a loop on a condition; reverse mode tapes its carried values (one stack entry per trip) and runs "
          "the adjoint as a counted loop of as many trips, backwards")


# ---------------------------------------------------------------- cond
def _cond_infer(types, params):
    false_g, true_g = params["branches"]
    if types[0].shape != () or types[0].dtype not in ("bool", "i64", "i32"):
        raise TypeError(f"cond: the predicate must be a scalar bool, not {types[0]}")
    for g in (false_g, true_g):
        _same(types[1:], [v.type for v in g.inputs], "cond branch inputs")
    _same([o.type for o in false_g.outputs], [o.type for o in true_g.outputs], "cond branch outputs")
    return TupleType(tuple(o.type for o in true_g.outputs))


def _cond_impl(pred, *operands, branches, **_):  # adjoint=True marks reverse mode's (for comments)
    return tuple(evaluate(branches[1] if bool(pred) else branches[0], *operands))


defop("cond", infer=_cond_infer, impl=_cond_impl, vjp=_rule("cond", "vjp"), jvp=_rule("cond", "jvp"),
      batch=_rule("cond", "batch"), c=("cond",),  # C: if/else
      doc="if/else on a traced scalar; its adjoint is an if/else on the same predicate")


# ---------------------------------------------------------------- element
def _element_infer(types, params):
    if not isinstance(types[0], TupleType):
        raise TypeError(f"element of {types[0]}, not of a tuple")
    return types[0].items[params["index"]]


defop("element", infer=_element_infer, impl=lambda t, index: t[index], vjp=_rule("element", "vjp"),
      jvp=_rule("element", "jvp"), batch=_rule("element", "batch"), c=("element",),  # C: the loop's storage
      doc="one result of a loop or branch")

SUBGRAPH_OPS = frozenset({"scan", "while_loop", "cond"})
