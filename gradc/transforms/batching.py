"""Batching (vmap) as a graph-to-graph transform: one graph computes a function for a whole batch.

``vmap_graph(g, in_axes, n)`` gives each input marked ``0`` in ``in_axes`` a new
leading axis of length ``n`` (inputs marked ``None`` are shared by every batch
element) and returns a graph whose every output has that leading axis: output
``[i]`` is ``g``'s output for batch element ``i``. Jacobians are built on it as
one batched sweep over basis vectors instead of a Python loop of calls.

Each equation with a batched input is rewritten by its op's batching rule; the
others are copied unchanged. A rule gets the equation's inputs (values of the
new graph), a flag per input saying whether it has the batch axis, and the
params, and returns the output with the batch axis in front, built with gradc's
own ops, so the result is an ordinary graph to differentiate, optimise and emit.
Where the rules come from:

* elementwise ops: one generic rule here (operands of an elementwise equation
  have one shape, so an unbatched operand is broadcast along the batch axis);
* reductions typed like ``sum`` (``sum``, ``mean``, ``max``, ``min``, ``prod``): one
  generic rule here, which shifts ``axes`` by one (``mean``'s ``count`` stays);
* every other op: its own ``batch=`` rule at its ``defop`` (``gradc.ops``), except
  ``custom_call``, whose derivative is the user's rule: batching it batches that
  rule too (by this transform, on the rule's trace), so the derivative of the
  batched graph is the user's rule applied to each batch element.

A batched value keeps the name of the value it batches; a rule's intermediates
take new ``tN`` names.

>>> import numpy as np
>>> from gradc.trace import trace
>>> g = trace(lambda x, w: np.tanh(x @ w).sum(), np.ones(3), np.ones((3, 2)))
>>> print(vmap_graph(g, [0, None], 4))
def lambda__vmap(x: f64[4,3], w: f64[3,2]) -> f64[4]:
  t0: f64[4,2] = matmul x w
  t1: f64[4,2] = tanh t0
  t2: f64[4] = sum t1 axes=(1,) keepdims=False
  return t2
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ArgumentError, MissingRuleError
from gradc.ir.builder import Builder, Traced, next_index
from gradc.ir.graph import Const, Eqn, Graph, Var
from gradc.ir.interpret import evaluate
from gradc.ir.registry import OPS, bind
from gradc.ops import autodiff
from gradc.ops.values import batch_size as size_of_batch
from gradc.ops.values import with_batch


def _elementwise_rule(name):
    def batch(*xs, batched, **params):
        n = size_of_batch(xs, batched)
        return bind(name, *(with_batch(x, b, n) for x, b in zip(xs, batched)), **params)
    return batch


def _reduction_rule(name):
    def batch(x, batched, axes, **params):
        return bind(name, x, axes=tuple(a + 1 for a in axes), **params)
    return batch


_BATCHED_RULES: dict = {}  # a user rule's key in autodiff.RULES -> the key of its batched version


def _batched_user_rule(key: str) -> str:
    """The key of a rule that applies user rule ``key`` to every batch element (all operands batched)."""
    if key not in _BATCHED_RULES:
        rule = autodiff.RULES[key]

        def vjp(ct, residuals, xs):
            return _per_element(lambda c, r, x: rule.vjp(c[0], r, x), [[ct], residuals, xs])

        def jvp(tangents, residuals, xs, out):
            return _per_element(lambda t, r, x, o: [rule.jvp(t, r, x, o[0])], [tangents, residuals, xs, [out]])[0]

        batched = autodiff.Rule(f"{rule.name}_vmap", vjp=vjp if rule.vjp else None, jvp=jvp if rule.jvp else None)
        _BATCHED_RULES[key] = autodiff.register_rule(batched)
    return _BATCHED_RULES[key]


def _per_element(fn, groups):
    """``fn`` (lists of values -> list of values or None) on batched values, as one batched computation.

    ``fn`` is traced on values of one batch element, and the trace is batched and inlined.
    """
    values = [v for group in groups for v in group if v is not None]
    n = values[0].aval.shape[0]
    b = Builder(taken={f"a{i}" for i in range(len(values))})
    inputs = iter([Traced(b, b.input(f"a{i}", v.aval.with_shape(v.aval.shape[1:]))) for i, v in enumerate(values)])
    results = fn(*[[None if v is None else next(inputs) for v in group] for group in groups])
    present = [r for r in results if r is not None]
    graph = vmap_graph(b.graph("rule", [r.atom for r in present]), 0, n)
    outs = iter(evaluate(graph, *values))
    return [None if r is None else next(outs) for r in results]


def _custom_call_batch(*args, batched, rule, **params):
    n = size_of_batch(args, batched)
    args = [with_batch(a, flag, n) for a, flag in zip(args, batched)]
    return bind("custom_call", *args, rule=_batched_user_rule(rule), **params)


def batching_rule(op):
    """The rule that batches ``op`` (its own ``batch=``, else a generic one), or None if it has none.

    >>> batching_rule(OPS["sin"]) is not None, batching_rule(OPS["matmul"]) is OPS["matmul"].batch
    (True, True)
    """
    if op.batch is not None:
        return op.batch
    if op.name == "custom_call":
        return _custom_call_batch
    if op.elementwise:
        return _elementwise_rule(op.name)
    if op.infer is OPS["sum"].infer:  # typed like sum: params axes and keepdims (mean: count too)
        return _reduction_rule(op.name)
    return None


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_arguments(graph, in_axes, batch_size, where):
    """``in_axes`` as one flag per graph input (batched or not), or an ArgumentError saying what is wrong."""
    if not _is_int(batch_size) or batch_size < 0:
        raise ArgumentError(f"batch size {batch_size!r} is not an int >= 0", where=where,
                            hint="give the length of the new leading axis, e.g. 3")
    names = [v.name for v in graph.inputs]
    axes = list(in_axes) if isinstance(in_axes, (list, tuple)) else [in_axes] * len(names)
    if len(axes) != len(names):
        raise ArgumentError(f"in_axes has {len(axes)} entries but {graph.name} has {len(names)} array inputs "
                            f"({', '.join(names) or 'none'})", where=where, hint="give one entry per array input")
    for name, axis in zip(names, axes):
        if axis is not None and (not _is_int(axis) or axis != 0):
            raise ArgumentError(f"in_axes for {name} is {axis!r}; gradc batches along a new leading axis only",
                                where=where, hint="use 0 (batched along axis 0) or None (shared by the batch)")
    return [axis == 0 for axis in axes]


def batched_outputs(graph: Graph, flags) -> list:
    """Which outputs of ``graph`` depend on the inputs flagged in ``flags`` (a forward dependence sweep).

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> batched_outputs(trace(lambda x, y: (x * 2.0, y), 1.0, 1.0), [True, False])
    [True, False]
    """
    marked = {id(v) for v, f in zip(graph.inputs, flags) if f}
    for eqn in graph.eqns:
        if any(id(a) in marked for a in eqn.inputs):
            marked.add(id(eqn.out))
    return [id(o) in marked for o in graph.outputs]


def vmap_graph(graph: Graph, in_axes, batch_size: int, name: str | None = None, where: str | None = None,
               out_batched=None) -> Graph:
    """``graph`` for a batch of ``batch_size``: inputs with ``in_axes`` 0 and every output get a leading axis.

    ``in_axes`` has one entry per graph input (0 or None), or is one of them for all.
    A batch of size 0 gives empty outputs of the right shapes. Errors point at ``where``
    (the user's ``file:line``), else at ``graph.origin``.

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> g = vmap_graph(trace(lambda x, y: x * y, np.ones(2), 1.0), [None, 0], 3)
    >>> [str(v.type) for v in g.inputs], str(g.outputs[0].type)
    (['f64[2]', 'f64[3]'], 'f64[3,2]')
    """
    where = where or graph.origin or None
    flags = _check_arguments(graph, in_axes, batch_size, where)
    batch_size = int(batch_size)
    builder = Builder(taken=set(graph.params) | {e.out.name for e in graph.eqns}, first_index=next_index(graph))
    env = {}  # id of a var of ``graph`` -> (its value in the new graph, whether it has the batch axis)
    for v, batched in zip(graph.inputs, flags):
        t = v.type.with_shape((batch_size,) + v.type.shape) if batched else v.type
        env[id(v)] = (Traced(builder, builder.input(v.name, t)), batched)

    def read(atom):
        return (Traced(builder, atom), False) if isinstance(atom, Const) else env[id(atom)]

    adjoint = set()
    for eqn in graph.eqns if batch_size else ():  # an empty batch has empty outputs, whatever they compute
        xs, batched = zip(*(read(a) for a in eqn.inputs)) if eqn.inputs else ((), ())
        start = len(builder.eqns)
        if eqn.op == "element" and isinstance(xs[0], list):  # an item of a batched loop's results
            env[id(eqn.out)] = xs[0][eqn.params["index"]]
            continue
        if any(batched):
            out = _batch_equation(eqn, xs, batched, batch_size, graph, where)
            new = {id(e.out) for e in builder.eqns[start:]}
            if isinstance(out, list):  # a loop's or branch's results, each with the batch axis or not
                env[id(eqn.out)] = (out, True)
                continue
            if isinstance(out.atom, Var) and id(out.atom) in new:
                out.atom.name = eqn.out.name  # the batched value keeps its name (reserved in ``taken``)
        else:
            var = Var(eqn.out.name, eqn.out.type)
            builder.eqns.append(Eqn(eqn.op, tuple(x.atom for x in xs), dict(eqn.params), var))
            out = Traced(builder, var)
        env[id(eqn.out)] = (out, any(batched))
        if eqn.out.name in graph.adjoint:
            adjoint.update(e.out.name for e in builder.eqns[start:])
    outputs = []
    for atom in graph.outputs:
        if batch_size == 0:
            zero = Traced(builder, Const(np.zeros((), atom.type.np_dtype)))
            outputs.append(bind("broadcast_to", zero, shape=(0,) + atom.type.shape).atom)
            continue
        value, batched = read(atom)
        if out_batched is not None and not out_batched[len(outputs)]:  # asked to stay unbatched
            if batched:
                raise AssertionError(f"internal: output {len(outputs)} of {graph.name} depends on the batch")
            outputs.append(value.atom)
            continue
        outputs.append(with_batch(value, batched, batch_size).atom)
    return builder.graph(name or f"{graph.name}_vmap", outputs, params=list(graph.params), static=graph.static,
                         origin=graph.origin, adjoint=frozenset(adjoint))


def _batch_equation(eqn, xs, batched, n, graph, where):
    rule = batching_rule(OPS[eqn.op])
    if rule is None:
        raise MissingRuleError(f"op {eqn.op} (computing {eqn.out.name} in {graph.name}) has no batching rule",
                               where=where,
                               hint="batch the function with a Python loop, or give the op a batch= rule")
    out = rule(*xs, batched=tuple(batched), **eqn.params)
    if isinstance(out, list):  # tuple-valued ops give (value, has the batch axis) per item
        return out
    expected = eqn.out.type.with_shape((n,) + eqn.out.type.shape)
    if out.aval != expected:
        raise AssertionError(f"internal: the batching rule of {eqn.op} gave {out.aval}, expected {expected}")
    return out
