"""Forward mode (JVP) as a graph-to-graph transform, with each op's tangent derived from its VJP rule.

``jvp_graph(g, wrt)`` takes a tangent input ``w_dot`` for each ``w`` in ``wrt`` and
returns ``(outputs..., output tangents...)``, computing each tangent right after
its primal in one forward sweep. The tangent of ``v`` is named ``v_dot``.

Where an op's tangent comes from: its VJP rule ``ct -> (x1_bar, ..., xn_bar)`` is
linear in ``ct`` with ``<ct, J_i d_i> = <x_i_bar(ct), d_i>``, so the output's
tangent ``sum_i J_i d_i`` is the gradient with respect to ``ct`` of the scalar
``sum_i <x_i_bar(ct), d_i>``. gradc builds that scalar from the VJP rule once per
(op, types, params), differentiates it with reverse mode and inlines the result;
the placeholder ``ct`` drops out (the result cannot depend on it) and dead code
goes. The VJP rule thus stays the one definition of an op's derivative, and every
op has forward mode the day it has a VJP rule. An op may still say ``jvp=`` at its
``defop`` where the derived form would be wasteful. A ``linear`` op's tangent is the op itself
applied to the tangents (``linear_tangent``): derived, ``concatenate``'s would add one
zero-filled output-sized array per operand.

>>> import numpy as np
>>> from gradc.trace import trace
>>> g = jvp_graph(trace(lambda x: np.sin(x) * x, 0.5), ["x"])
>>> g.params, [v.name for v in g.outputs]
(['x', 'x_dot'], ['t1', 't1_dot'])

(``gradc.passes.optimize`` then removes the placeholder's dead arithmetic.)
"""
from __future__ import annotations

from gradc.errors import MissingRuleError
from gradc.ir.builder import Builder, Traced, next_index
from gradc.ir.graph import Graph, Var
from gradc.ir.interpret import evaluate
from gradc.ir.registry import OPS, bind
from gradc.ir.types import TensorType
from gradc.ops import elementwise as ew
from gradc.ops import reduce as red
from gradc.transforms.reverse import grad_graph

_RULES: dict = {}  # (op, input types, output type, needs, params) -> the derived tangent graph, or None


def _params_key(params: dict):
    items = []
    for k in sorted(params):
        v = params[k]
        try:
            hash(v)
        except TypeError:
            return None  # unhashable params (arrays): derive afresh each time
        items.append((k, v))
    return tuple(items)


def derived_rule(op, in_types, out_type, needs, params) -> Graph | None:
    """The graph ``(ct, out, x_0.., d_i..) -> out_dot`` derived from ``op``'s VJP rule (None: zero tangent).

    ``d_i`` are the tangents of the inputs with ``needs[i]``; see the module docstring.

    >>> from gradc.ir.types import TensorType
    >>> t = TensorType((), "f64")
    >>> print(derived_rule(OPS["exp"], [t], t, [True], {}))
    def exp_tangent(ct: f64[], out: f64[], x0: f64[], d0: f64[]) -> f64[]:
      t0: f64[] = mul ct out
      t1: f64[] = mul t0 d0
      t0_bar: f64[] = mul 1.0 d0
      ct_bar: f64[] = mul t0_bar out
      return ct_bar
    """
    pkey = _params_key(params)
    key = None if pkey is None else (op.name, tuple(in_types), out_type, tuple(needs), pkey)
    if key is not None and key in _RULES:
        return _RULES[key]
    b = Builder(taken={"ct", "out"} | {f"x{i}" for i in range(len(in_types))} | {f"d{i}" for i in range(len(in_types))})
    ct = Traced(b, b.input("ct", out_type))
    out = Traced(b, b.input("out", out_type))
    xs = [Traced(b, b.input(f"x{i}", t)) for i, t in enumerate(in_types)]
    ds = [Traced(b, b.input(f"d{i}", t)) if need else None for i, (t, need) in enumerate(zip(in_types, needs))]
    results = op.vjp(ct, out, *xs, needs=list(needs), **params)
    total = None
    for d, r in zip(ds, results):
        if d is None or r is None:
            continue
        term = ew.mul(r, d)
        if term.aval.is_complex:  # the pairing of a cotangent and a tangent is Re(r * d) (JAX's convention)
            term = bind("real", term)
        if term.aval.shape:
            term = red.sum_(term)
        total = term if total is None else ew.add(total, term)
    rule = None
    if total is not None:
        inner = b.graph(f"{op.name}_tangent", [total.atom])
        rule = grad_graph(inner, ["ct"], name=f"{op.name}_tangent")
        rule = rule.replace(inputs=inner.inputs, params=[v.name for v in inner.inputs])
    if key is not None:
        _RULES[key] = rule
    return rule


def linear_tangent(eqn, builder, tangents):
    """The tangent of a linear op's output: the op applied to its inputs' tangents (zeros for a float input without
    one; integer inputs, which only steer it, as they are), as JAX's ``linear`` primitives do.

    The form derived from the VJP rule is the same map written as a sum of transposes: for ``concatenate`` and
    ``index_update`` one zero-filled array of the output's size per operand, added up (``n`` operands: ``n``
    full-size buffers where one suffices).

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> g = jvp_graph(trace(lambda x, y: np.concatenate([x, y]), np.ones(2), np.ones(3)), ["x", "y"])
    >>> [e.op for e in g.eqns]
    ['concatenate', 'concatenate']
    """
    wrap = lambda atom: Traced(builder, atom)  # noqa: E731
    operands = []
    for a, t in zip(eqn.inputs, tangents):
        if t is not None and a.type.is_inexact:
            operands.append(t)
        elif a.type.is_inexact:
            operands.append(ew.zeros_like(wrap(a)))
        else:
            operands.append(wrap(a))
    params = {k: v for k, v in eqn.params.items() if k != "in_place"}  # the tangent's operand is not ours to write
    return bind(eqn.op, *operands, **params)


def _tangent(eqn, builder, tangents):
    """The tangent of ``eqn.out`` (a Traced of ``builder``) or None, given its inputs' tangents."""
    op = OPS[eqn.op]
    needs = [t is not None for t in tangents]
    if op.nondiff or not any(needs):
        return None
    wrap = lambda atom: Traced(builder, atom)  # noqa: E731
    if op.jvp is not None:
        return op.jvp(tangents, wrap(eqn.out), *(wrap(a) for a in eqn.inputs), **eqn.params)
    if op.linear and not op.elementwise:  # (an elementwise one's derived tangent is already the op's own form)
        return linear_tangent(eqn, builder, tangents)
    if op.vjp is None:
        raise MissingRuleError(f"op {eqn.op} has no derivative rule")
    rule = derived_rule(op, [a.type for a in eqn.inputs], eqn.out.type, needs, eqn.params)
    if rule is None:
        return None
    zero_ct = ew.zeros_like(wrap(eqn.out))  # a broadcast scalar, not an array constant: it drops out (docstring)
    args = [zero_ct, wrap(eqn.out)] + [wrap(a) for a in eqn.inputs] + [t for t in tangents if t is not None]
    (out_dot,) = evaluate(rule, *args)
    return out_dot


def jvp_graph(graph: Graph, wrt: list[str], name: str | None = None) -> Graph:
    """A graph of ``(inputs..., w_dot for w in wrt)`` returning ``(outputs..., their tangents...)``.

    Outputs that do not depend on any ``wrt`` input get a zero tangent.
    """
    taken = set(graph.params) | {e.out.name for e in graph.eqns}
    builder = Builder(taken=taken, first_index=next_index(graph))
    builder.adopt(graph.inputs)
    inputs = {v.name: v for v in graph.inputs}
    tangent = {}
    for w in wrt:
        v = inputs[w]
        tangent[id(v)] = Traced(builder, builder.input(builder.fresh_name(f"{w}_dot"), v.type))
    forward_ids = {id(v) for v in graph.inputs} | {id(e.out) for e in graph.eqns}
    for eqn in graph.eqns:
        builder.eqns.append(eqn)
        tangents = [tangent.get(id(a)) if isinstance(a, Var) else None for a in eqn.inputs]
        if isinstance(eqn.out.type, TensorType) and not eqn.out.type.is_inexact:
            continue  # an integer or bool value has no tangent (it only steers: an index, a count, a mask)
        dot = _tangent(eqn, builder, tangents)
        if dot is None:
            continue
        if isinstance(dot, list):  # a loop's or branch's results: one tangent (or None) per item
            tangent[id(eqn.out)] = dot
            continue
        if dot.aval != eqn.out.type:
            raise AssertionError(f"internal: tangent of {eqn.op} is {dot.aval}, its output {eqn.out.type}")
        atom = dot.atom
        if isinstance(atom, Var) and id(atom) not in forward_ids and atom not in builder.inputs:
            builder.rename(atom, f"{eqn.out.name}_dot")
            forward_ids.add(id(atom))  # named once: a value that is two tangents keeps its first name
        tangent[id(eqn.out)] = dot
    out_dots = []
    for out in graph.outputs:
        dot = tangent.get(id(out)) if isinstance(out, Var) else None
        out_dots.append(dot.atom if dot is not None else ew.zeros_like(Traced(builder, out)).atom)
    return builder.graph(name or f"{graph.name}_jvp", list(graph.outputs) + out_dots,
                         params=graph.params + [v.name for v in builder.inputs[len(graph.inputs):]],
                         static=graph.static, origin=graph.origin)


def hvp_graph(graph: Graph, wrt: list[str], name: str | None = None) -> Graph:
    """Forward over reverse: ``(inputs..., w_dot for w in wrt)`` -> the Hessian of scalar ``graph`` times the tangents.

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> [v.name for v in hvp_graph(trace(lambda x: np.sum(x ** 3), np.ones(2)), ["x"]).inputs]
    ['x', 'x_dot']
    """
    gg = grad_graph(graph, wrt, name=f"{graph.name}_grad")
    hg = jvp_graph(gg, wrt, name=name or f"{graph.name}_hvp")
    return hg.replace(outputs=hg.outputs[len(wrt):])
