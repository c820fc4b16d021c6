"""What the NumPy emitter reads off a graph before writing it: which values to inline,
which broadcasts NumPy makes implicit, which index gradients share one buffer.

>>> import numpy as np
>>> from gradc.trace import trace
>>> g = trace(lambda x: np.sum(np.sin(x) * 2.0), np.ones(3))
>>> len(elided_broadcasts(g))
1
"""
from __future__ import annotations

import ast

from gradc.ir import dims
from gradc.ir.graph import Graph, Var
from gradc.ir.registry import OPS
from gradc.ops.control import scan_parts, while_parts


def _stores(eqn, value) -> bool:
    """Whether ``eqn`` only stores ``value`` into an array (``out[...] = value``), which broadcasts it."""
    return eqn.op in ("index_grad", "gather_grad") and eqn.inputs[0] is value and all(
        a is not value for a in eqn.inputs[1:])


def elided_broadcasts(graph: Graph, narrowed: dict | None = None) -> set:
    """Ids of ``broadcast_to`` results that every consumer can take unbroadcast.

    Elementwise NumPy operations broadcast by themselves; a broadcast is left
    out when, with it (and the ones left out before it) unbroadcast, every
    consumer still gets its output's shape. Graph outputs are never left out.
    A loop or branch that reads the value as a constant takes it unbroadcast
    when its body does (``x = x + dt * f(x)`` in the loop, not a ``dt`` spread
    to the state's shape before it): ``narrowed`` (``id(input) -> shape``) is
    given the sub-graph inputs bound so, for the bodies' own analyses.
    """
    narrowed = {} if narrowed is None else narrowed
    consumers = _consumers(graph)
    outputs = {id(o) for o in graph.outputs}
    source_shape: dict = {}
    elided: set = set()

    def effective_shape(atom):
        if id(atom) in elided:
            return source_shape[id(atom)]
        return narrowed.get(id(atom), atom.type.shape)

    for eqn in graph.eqns:
        if eqn.op != "broadcast_to" or id(eqn.out) in outputs:
            continue
        uses = consumers.get(id(eqn.out), [])
        if not uses:
            continue
        elided.add(id(eqn.out))
        source_shape[id(eqn.out)] = effective_shape(eqn.inputs[0])
        trial = dict(narrowed)
        if all(_takes_unbroadcast(u, eqn.out, effective_shape, trial) for u in uses):
            narrowed.update(trial)
        else:
            elided.discard(id(eqn.out))
    return elided


def _consumers(graph: Graph) -> dict:
    found: dict = {}
    for eqn in graph.eqns:
        for a in eqn.inputs:
            if isinstance(a, Var):
                found.setdefault(id(a), []).append(eqn)
    return found


def _takes_unbroadcast(use, value, effective_shape, narrowed: dict) -> bool:
    """Whether ``use`` gives the same result with ``value`` (and the others narrowed) unbroadcast."""
    if _stores(use, value):
        return True
    if OPS[use.op].elementwise and use.op != "astype":
        try:
            return tuple(dims.broadcast(*(effective_shape(a) for a in use.inputs))) == use.out.type.shape
        except ValueError:
            return False
    bound = _loop_invariant_bindings(use)
    positions = [k for k, a in enumerate(use.inputs) if a is value]
    if not bound or any(k not in bound for k in positions):
        return False  # read per iteration (a carried value, a sequence) or by an op that needs the shape
    for k in positions:
        for var in bound[k]:
            narrowed[id(var)] = effective_shape(value)
    graphs = {id(g): g for k in positions for g in bound[k].values()}
    return all(_body_takes_narrowed(g, narrowed) for g in graphs.values())


def _loop_invariant_bindings(eqn) -> dict:
    """``{input position: {sub-graph input: sub-graph}}`` of the inputs a loop or branch reads unchanged."""
    bound: dict = {}

    def bind(offset, atoms, graph, first):
        for k, _ in enumerate(atoms):
            bound.setdefault(offset + k, {})[graph.inputs[first + k]] = graph

    if eqn.op == "scan":
        length, consts, _, _ = scan_parts(eqn.inputs, eqn.params)
        bind(0 if length is None else 1, consts, eqn.params["body"], 1)
    elif eqn.op == "while_loop":
        cond_consts, body_consts, _ = while_parts(eqn.inputs, eqn.params)
        bind(0, cond_consts, eqn.params["cond"], 0)
        bind(len(cond_consts), body_consts, eqn.params["body"], 0)
    elif eqn.op == "cond":
        for branch in eqn.params["branches"]:
            bind(1, eqn.inputs[1:], branch, 0)
    return bound


def _body_takes_narrowed(graph: Graph, narrowed: dict) -> bool:
    """Every reader in ``graph`` of its narrowed inputs gets its output's shape; none is an output."""
    inputs = [v for v in graph.inputs if id(v) in narrowed]
    if any(o is v for o in graph.outputs for v in inputs):
        return False
    consumers = _consumers(graph)

    def effective_shape(atom):
        return narrowed.get(id(atom), atom.type.shape)
    return all(_takes_unbroadcast(u, v, effective_shape, narrowed) for v in inputs for u in consumers.get(id(v), []))


def accumulations(graph: Graph):
    """Sums of ``index_grad`` results, to be written into one zero buffer.

    ``index_grad(a, s1) + index_grad(b, s2)`` (each term read only there) is emitted as
    ``out = np.zeros(...)``, ``out[s1] = a``, ``out[s2] += b``: one buffer instead of
    one per term plus a sum of whole arrays. Chains of such sums make one buffer.
    Returns ``({id(outermost sum): [index_grad equations]}, ids of the values folded in)``.

    >>> import numpy as np
    >>> from gradc.transforms import reverse as ad
    >>> from gradc.passes import optimize
    >>> from gradc.backends.numpy.emit import Function, emit_module
    >>> from gradc.trace import trace
    >>> g = optimize(ad.grad_graph(trace(lambda x: np.sum(x[1:] * x[:-1]), np.ones(4)), ["x"], name="g"))
    >>> print(emit_module([Function("g", g, "g.")]))
    import numpy as np
    ...
        x_bar = np.empty((4,))
        x_bar[3] = 0.0
        x_bar[:-1] = x[1:]
        x_bar[1:] += x[:-1]
        return x_bar
    ...
    """
    uses: dict = {}
    for atom in [a for e in graph.eqns for a in e.inputs] + list(graph.outputs):
        uses[id(atom)] = uses.get(id(atom), 0) + 1
    pieces: dict = {}  # id(value) -> the index_grad equations it is the sum of
    inner: set = set()  # ids of values read by a longer chain
    for eqn in graph.eqns:
        if eqn.op == "index_grad":
            pieces[id(eqn.out)] = [eqn]
        elif eqn.op == "add" and eqn.inputs[0] is not eqn.inputs[1] and all(
                isinstance(a, Var) and id(a) in pieces and uses[id(a)] == 1 for a in eqn.inputs):
            pieces[id(eqn.out)] = pieces[id(eqn.inputs[0])] + pieces[id(eqn.inputs[1])]
            inner.update(id(a) for a in eqn.inputs)
    chains = {k: v for k, v in pieces.items() if len(v) > 1 and k not in inner}
    return chains, inner


MAX_INLINE_OPS = 3  # array code: at most this many operations in an expression written inline
# all-scalar code: long expressions are cheap, but a chain of thousands nested into one expression would
# overflow the recursion of Python's parser and of ast.unparse: nesting stops at this many operations
MAX_INLINE_SCALAR_OPS = 40


def operation_count(expr: ast.expr) -> int:
    """How many operations an expression performs (calls, operators, subscripts, ``.T``)."""
    return sum(isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript, ast.Compare))
               or isinstance(node, ast.Attribute) and node.attr == "T" for node in ast.walk(expr))


def occurrences(expr: ast.expr, result) -> int:
    """How many times the node ``expr`` itself occurs in a spelling's result (an expression or statements)."""
    trees = result if isinstance(result, list) else [result]
    return sum(node is expr for tree in trees for node in ast.walk(tree))


def single_use_values(graph: Graph) -> set:
    """Ids of values read once, not outputs: they are written inline, where short.

    ``y_bar = x * (2.0 * y) + t2`` instead of three statements. In all-scalar code
    each statement costs about as much as the arithmetic; with arrays, a temporary
    inside an expression is freed (or reused in place by NumPy) at once, where a
    named one lives until the function returns, and large dead arrays freed together
    at the return make the allocator hand memory back and fault it in again on the
    next call (the mlp workload ran 1.5x slower for that). Squares stay named, so
    that ``t ** 2`` can be spelled ``t * t``.
    """
    uses: dict = {}
    for atom in [a for e in graph.eqns for a in e.inputs] + list(graph.outputs):
        uses[id(atom)] = uses.get(id(atom), 0) + 1
    outputs = {id(o) for o in graph.outputs}
    squared = {id(e.inputs[0]) for e in graph.eqns if e.op == "pow"}
    return {id(e.out) for e in graph.eqns
            if uses.get(id(e.out), 0) == 1 and id(e.out) not in outputs and id(e.out) not in squared}
