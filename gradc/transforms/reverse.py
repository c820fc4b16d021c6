"""Reverse mode as a graph-to-graph transform.

``value_and_grad_graph(g, wrt)`` copies ``g``'s forward equations, seeds the
output's cotangent with 1, and walks the equations backwards, applying each
op's VJP rule. Rules are written with gradc ops, so they append ordinary
equations, and the result can be differentiated again. Only cotangents that
lead to a ``wrt`` input are computed; a value used more than once sums its
contributions. The cotangent of ``v`` is named ``v_bar``.

>>> import numpy as np
>>> from gradc.trace import trace
>>> g = value_and_grad_graph(trace(lambda x: np.sin(x), 0.5), ["x"])
>>> print(g)
def lambda__value_and_grad(x: f64[]) -> (f64[], f64[]):
  t0: f64[] = sin x
  t1: f64[] = cos x
  x_bar: f64[] = mul 1.0 t1
  return t0, x_bar
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ArgumentError, MissingRuleError, OutputDtypeError, OutputShapeError
from gradc.ir.builder import Builder, Traced, next_index
from gradc.ir.graph import Const, Graph, Var
from gradc.ir.registry import OPS
from gradc.ir.types import TensorType, TupleType
from gradc.ops import elementwise as ew
from gradc.ops.values import aval
from gradc.trace.selection import float_inputs, select_arguments
from gradc.transforms import call_residuals
from gradc.transforms.shift_invariance import zero_derivative_shifts
from gradc.transforms.stabilise import stabilise

# reverse mode holds constant the shifts every output is invariant to (False: differentiate through them, as
# the tests do to compare the closed-form adjoints with the unrewritten ones)
SHIFTS_HELD_CONSTANT = True


def check_differentiable_output(graph: Graph, what: str = "grad", where: str | None = None,
                                holomorphic: bool | None = None) -> Var | Const:
    """The single scalar float output that ``grad`` differentiates, or an error pointing at ``where``.

    A complex output needs ``holomorphic=True`` (JAX's rule: ``f`` promised holomorphic, its inputs and
    output complex); None (the graph transforms' own checks) takes either.
    """
    where = where or graph.origin or None
    if len(graph.outputs) != 1:
        raise ArgumentError(f"{graph.name} returns {len(graph.outputs)} values; {what} needs one scalar",
                            where=where, hint="return a single scalar (e.g. a loss)")
    out = graph.outputs[0]
    if out.type.shape != () and not (what == "grad" and _one_element(out.type.shape)):  # (1,), (1, 1): as autograd
        raise OutputShapeError(f"{graph.name} returns an array of shape {out.type.shape}; {what} needs a scalar output",
                               where=where, hint="reduce it, e.g. with np.sum or np.mean")
    if out.type.is_complex and holomorphic is False:
        raise OutputDtypeError(f"{graph.name} returns {out.type.dtype}; {what} needs a real-valued output (a float "
                               "dtype) unless the function is holomorphic", where=where,
                               hint=f"pass holomorphic=True to {what} for a holomorphic function (z**2, np.exp(z)); of "
                                    "another function of complex values, differentiate a real value (np.abs(w)**2, "
                                    "np.real(w)) or use gradc.vjp")
    if holomorphic and not out.type.is_complex:
        raise OutputDtypeError(f"{graph.name} returns {out.type.dtype}; {what}(..., holomorphic=True) needs a complex "
                               "output", where=where,
                               hint="drop holomorphic=True for a real-valued function, or return a complex value")
    if not out.type.is_inexact:
        raise OutputDtypeError(f"{graph.name} returns {out.type.dtype}; {what} needs a float output",
                               where=where, hint="return a float (e.g. with .astype(np.float64))")
    return out


def check_holomorphic_inputs(graph: Graph, wrt, what: str = "grad", where: str | None = None) -> None:
    """``holomorphic=True`` differentiates with respect to complex inputs only (JAX's rule)."""
    inputs = {v.name: v for v in graph.inputs}
    for name in wrt:
        t = inputs[name].type
        if not t.is_complex:
            raise ArgumentError(f"{what}(..., holomorphic=True) differentiates with respect to complex inputs; "
                                f"{name!r} is {t.dtype}", where=where or graph.origin or None,
                                hint=f"pass {name} as a complex array (e.g. {name}.astype(np.complex128)), or drop "
                                     "holomorphic=True")


def _one_element(shape) -> bool:
    return all(isinstance(d, int) and d == 1 for d in shape)


def resolve_wrt(graph, wrt, where=None):
    """``wrt`` (int, name or tuple of them) as a list of input names, and whether it was a tuple.

    For a graph alone (no function at hand: positions index ``graph.params``); the rules are
    ``gradc.trace.selection``'s. Errors point at ``where`` (the function's ``file:line``), else at
    ``graph.origin``.
    """
    where = where or graph.origin
    selection = select_arguments(None, wrt=wrt, what=graph.name, where=where, params=graph.params)
    return float_inputs(selection, graph, where), selection.as_tuple


def _active_vars(graph: Graph, wrt_vars) -> set:
    """Ids of the variables that depend on any ``wrt`` input through a nonzero derivative (the max a log-sum-exp
    subtracts has none: ``gradc.transforms.shift_invariance``)."""
    active = {id(v) for v in wrt_vars}
    constant = {id(v) for v in zero_derivative_shifts(graph)} if SHIFTS_HELD_CONSTANT else set()
    for eqn in graph.eqns:
        if id(eqn.out) in constant or (isinstance(eqn.out.type, TensorType) and not eqn.out.type.is_inexact):
            continue  # (an integer or bool value has no derivative: it only steers, as an index or a count)
        if not OPS[eqn.op].nondiff and any(isinstance(a, Var) and id(a) in active for a in eqn.inputs):
            active.add(id(eqn.out))
    return active


def value_and_grad_graph(graph: Graph, wrt: list[str], name: str | None = None) -> Graph:
    """A graph returning ``(value, d value / d wrt[0], ...)`` for a scalar-output ``graph``."""
    graph = stabilise(graph)  # naive log-sigmoid and softplus in their stable forms, whose adjoints are closed
    out = check_differentiable_output(graph)
    graph = _with_split_calls(graph, wrt)
    builder, wrap = _extend(graph)
    seed = Const(np.ones(out.type.shape, out.type.np_dtype))  # () or an output of one element
    grads = _backward(graph, wrt, builder, wrap, [(out, wrap(seed))])
    adjoint = frozenset(e.out.name for e in builder.eqns[len(graph.eqns):])
    return builder.graph(name or f"{graph.name}_value_and_grad", [out] + grads,
                         params=graph.params, static=graph.static, origin=graph.origin, adjoint=adjoint)


def vjp_graph(graph: Graph, wrt: list[str], name: str | None = None) -> Graph:
    """A graph of ``(inputs..., one cotangent per output)`` returning ``(outputs..., d/d wrt...)``.

    The cotangent of output ``t`` is the input ``t_bar``; the gradients are
    ``sum_k <t_k_bar, d t_k / d w>`` for each ``w`` in ``wrt``.

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> g = vjp_graph(trace(lambda x: np.sin(x), np.ones(2)), ["x"])
    >>> g.params, [v.name for v in g.outputs]
    (['x', 't0_bar'], ['t0', 'x_bar'])
    """
    graph = _with_split_calls(stabilise(graph), wrt)
    builder, wrap = _extend(graph)
    seeds = []
    for k, out in enumerate(graph.outputs):
        label = out.name if isinstance(out, Var) else f"out{k}"
        ct = builder.input(builder.fresh_name(f"{label}_bar"), out.type)
        seeds.append((out, wrap(ct)))
    grads = _backward(graph, wrt, builder, wrap, seeds)
    adjoint = frozenset(e.out.name for e in builder.eqns[len(graph.eqns):])
    return builder.graph(name or f"{graph.name}_vjp", list(graph.outputs) + grads,
                         params=graph.params + [v.name for v in builder.inputs[len(graph.inputs):]],
                         static=graph.static, origin=graph.origin, adjoint=adjoint)


def _with_split_calls(graph: Graph, wrt: list[str]) -> Graph:
    """``graph`` with its helpers' calls (in loops too) returning what their adjoints read (split mode,
    ``gradc.transforms.call_residuals``), so that no helper's forward runs twice."""
    if not call_residuals.SPLIT:
        return graph
    inputs = {v.name: v for v in graph.inputs}
    active = _active_vars(graph, [inputs[n] for n in wrt])
    return call_residuals.split_calls(graph, active, _active_vars, vjp_graph)


def _extend(graph: Graph):
    """A Builder holding ``graph``'s inputs and equations, to append the reverse sweep to."""
    taken = set(graph.params) | {e.out.name for e in graph.eqns}
    builder = Builder(taken=taken, first_index=next_index(graph))
    builder.adopt(graph.inputs)
    builder.eqns = list(graph.eqns)
    return builder, lambda atom: Traced(builder, atom)


def _backward(graph: Graph, wrt: list[str], builder: Builder, wrap, seeds) -> list:
    """The reverse sweep from ``seeds`` (pairs of an output atom and its cotangent): atoms of d/d ``wrt``."""
    inputs = {v.name: v for v in graph.inputs}
    wrt_vars = [inputs[n] for n in wrt]
    forward_ids = {id(v) for v in builder.inputs} | {id(e.out) for e in graph.eqns}
    named: set = set()

    def total(contributions, var):
        """Sum the cotangent contributions of ``var`` and name the result ``var_bar``."""
        acc = contributions[0]
        for c in contributions[1:]:
            acc = ew.add(acc, c)
        atom = acc.atom
        if var is not None and isinstance(atom, Var) and id(atom) not in forward_ids and id(atom) not in named:
            builder.rename(atom, f"{var.name}_bar")
            named.add(id(atom))
        return acc

    active = _active_vars(graph, wrt_vars)
    cts: dict = {}
    for out, seed in seeds:
        if isinstance(out, Var) and id(out) in active:
            cts.setdefault(id(out), []).append(seed)
    items: dict = {}  # id(tuple value) -> {index: [contributions]}: a loop's or branch's results
    for eqn in reversed(graph.eqns):
        if isinstance(eqn.out.type, TupleType):
            per_item = items.pop(id(eqn.out), None)
            if per_item is None:
                continue
            ct = [total(per_item[k], None) if k in per_item else None for k in range(len(eqn.out.type.items))]
        else:
            contributions = cts.pop(id(eqn.out), None)
            if contributions is None:
                continue
            ct = total(contributions, eqn.out)
            if eqn.op == "element":
                if id(eqn.inputs[0]) in active:
                    items.setdefault(id(eqn.inputs[0]), {}).setdefault(eqn.params["index"], []).append(ct)
                continue
        op = OPS[eqn.op]
        if op.nondiff:
            continue
        needs = [isinstance(a, Var) and id(a) in active for a in eqn.inputs]
        if op.vjp is None:
            raise MissingRuleError(f"op {eqn.op} has no derivative rule")
        results = op.vjp(ct, wrap(eqn.out), *(wrap(a) for a in eqn.inputs), needs=needs, **eqn.params)
        for atom, need, r in zip(eqn.inputs, needs, results):
            if not need or r is None:
                continue
            if aval(r) != atom.type:
                raise AssertionError(f"internal: VJP of {eqn.op} gave {aval(r)} for {atom.name}: {atom.type}")
            cts.setdefault(id(atom), []).append(r)
    grads = []
    for v in wrt_vars:
        contributions = cts.get(id(v))
        grads.append((total(contributions, v) if contributions else ew.zeros_like(wrap(v))).atom)
    return grads


def grad_graph(graph: Graph, wrt: list[str], name: str | None = None) -> Graph:
    """Like ``value_and_grad_graph`` without the value (dead forward code is left to DCE)."""
    g = value_and_grad_graph(graph, wrt)
    return g.replace(name=name or f"{graph.name}_grad", outputs=g.outputs[1:])
