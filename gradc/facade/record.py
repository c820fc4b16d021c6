"""Recording Tensor ops: one graph node per torch-level op, backed by the op registry.

``record(name, fn, operands)`` computes ``fn`` (a function written with gradc ops) on the
operands' arrays and, when grad mode is on and an operand requires grad, attaches a node
called ``name``. Its VJP re-applies ``fn`` to stand-in tensors and runs the registry's VJP
rules backwards through those primitive steps (broadcasts, dtype casts and all), so the
facade has no derivative formulas of its own. Under ``create_graph`` the stand-ins are
linked to the original graph and the rules run on Tensors, recording as they go.
"""
from __future__ import annotations

import numpy as np

import gradc.ops.elementwise as ew
from gradc.errors import TraceError
from gradc.facade import grad_fn as gf
from gradc.facade import grad_mode, views
from gradc.facade.tensor import Tensor
from gradc.ir import registry
from gradc.ir.types import TensorType, type_of_array

# Names of nodes recorded by the registry hook (VJP rules applied to Tensors, create_graph=True).
HOOK_NAMES = {"broadcast_to": "ExpandBackward0", "reshape": "ViewBackward0", "astype": "ToCopyBackward0",
              "transpose": "PermuteBackward0", "index": "SelectBackward0", "gather": "IndexBackward0",
              "sum": "SumBackward1", "mean": "MeanBackward1", "max": "MaxBackward1", "min": "MinBackward1",
              "matmul": "MmBackward0", "index_grad": "SelectBackwardBackward0", "concatenate": "CatBackward0",
              "log1p": "Log1PBackward0", "clip": "ClampBackward1", "maximum": "MaximumBackward0",
              "minimum": "MinimumBackward0", "outer": "MmBackward0"}


def aval_of(t) -> TensorType:
    return type_of_array(t._data)


def tracking(operands) -> bool:
    return grad_mode.is_grad_enabled() and any(getattr(o, "requires_grad", False) for o in operands)


def values(operands):
    return [o._data if isinstance(o, Tensor) else o for o in operands]


def record(name, fn, operands, saves=False, saved=(), out_saved=False, nondiff=False, wrap=None, precomputed=None):
    """Apply ``fn`` to ``operands`` (Tensors, arrays, numbers) and record node ``name``.

    ``precomputed``, ``(value, grads)``: ``fn``'s value and the gradient of a scalar ``fn`` for
    each operand (None where not wanted), from code compiled from the same VJP rules; the node
    then scales ``grads`` by its cotangent instead of differentiating ``fn`` (except under
    ``create_graph``).
    """
    T = Tensor
    vals = []
    track = False
    for o in operands:
        if isinstance(o, T):
            vals.append(o._data)
            track = track or o._requires_grad
        else:
            vals.append(o)
            track = track or getattr(o, "requires_grad", False)
    if track and grad_mode._STATE["tracing"]:
        _refuse_concrete(operands)
    track = track and not nondiff and grad_mode._STATE["enabled"]
    if precomputed is not None:
        data, tape = precomputed[0], None
    else:
        # the primitive steps of the forward, kept for the backward (unless an array is passed twice)
        tape = [] if track and (len(vals) == 1 or _distinct(vals, operands)) else None
        prev, prev_tape = grad_mode._STATE["enabled"], registry.TAPE
        grad_mode._STATE["enabled"] = False
        registry.TAPE = tape
        try:
            data = fn(*vals)
        finally:
            grad_mode._STATE["enabled"] = prev
            registry.TAPE = prev_tape
    out = T._wrap(data)
    if name in views.VIEW_NODES:  # a view op whose result shares its operand's storage is a view (torch's rules)
        src = operands[0]
        if isinstance(src, T) and views.shares_storage(data, src._data):
            views.mark(out, src, fn, name)
    elif type(data) is np.ndarray and data.base is not None:
        for o in operands:  # a NumPy view of an operand shares its version counter, as torch views do
            if isinstance(o, T) and np.may_share_memory(data, o._data):
                out._vc = o._vc
                break
    if not track:
        return out
    edges = [(o._grad_fn or gf.edge(o) if o._requires_grad else None) if isinstance(o, T) else None
             for o in operands]
    node = gf.node_class(name)(edges, None, saves=saves)
    # the node keeps what torch's saved variables keep, never a tensor that may later get a history (a cycle)
    kept = tuple([gf.saved_operand(o) if isinstance(o, T) else o for o in operands])
    if saved:
        by_id = {id(o): k for o, k in zip(operands, kept)}
        node._saved = [(by_id[id(s)] if id(s) in by_id else gf.saved_operand(s), s._vc[0], None)
                       for s in saved if isinstance(s, T)]
        node._saves = True
    taped = None if tape is None else (flatten_tape(tape), tuple(vals), data, out._vc, out._vc[0])
    node._vjp = _vjp_by_replay(fn, kept, node._edges, taped, precomputed and precomputed[1])
    node._operands = kept
    out._grad_fn, out._requires_grad = node, True
    if out_saved:
        node._saved = [*node._saved, gf.saved_output(out)]
        node._saves = True
    return out


def _refuse_concrete(operands):
    """While ``torch.compile`` traces: an operand that requires grad must be an input of the trace."""
    for o in operands:
        if isinstance(o, Tensor) and o._requires_grad and type(o._data) is np.ndarray:
            raise TraceError("the function uses a tensor that requires grad but is neither an argument nor a "
                             "parameter or buffer of a module it reaches (its gradient would be lost)",
                             hint="pass the tensor as an argument, or keep it in a Module")


def _distinct(vals, operands):
    """Whether the tape can tell the operands apart: each array passed once, or again only as the same tensor
    (``torch.cat((x, h, x, h))``: its slots share one edge, so the first takes the whole cotangent)."""
    seen = {}
    for v, o in zip(vals, operands):
        if type(v) is np.ndarray:
            if seen.setdefault(id(v), o) is not o:
                return False
    return True


def alias(data, edge):
    """A stand-in tensor for ``data`` whose gradient flows into ``edge``."""
    t = Tensor._wrap(data)
    t._grad_fn = gf.node_class("AliasBackward0")([edge], lambda ct: (ct,))
    t._requires_grad = True
    return t


class _ReplayVjp:
    """The VJP of a recorded node (``edges``: the node's edges; it holds no reference to the node).

    A slotted object rather than a closure: graphs hold one per node, and a closure's cells are
    as many more objects for Python's cyclic collector to walk while a long graph is alive.
    """

    __slots__ = ("fn", "operands", "edges", "taped", "grads")

    def __init__(self, fn, operands, edges, taped=None, grads=None):
        self.fn, self.operands, self.edges, self.taped, self.grads = fn, operands, edges, taped, grads

    def __call__(self, ct):
        cg = gf.STATE["create_graph"]
        grads, taped, edges = self.grads, self.taped, self.edges
        if grads is not None and not cg:
            if getattr(ct, "ndim", None) == 0 and ct == 1:  # backward() of the loss itself: no scaling pass
                return list(grads)
            return [None if g is None else g * ct for g in grads]
        if taped is not None and not cg and taped[3][0] == taped[4]:  # output not changed in place since the forward
            return _vjp_by_tape(unflatten_tape(taped[0]), taped[1], taped[2], edges, ct)
        return _replay(self.fn, self.operands, edges, cg, ct)


def _replay(fn, operands, edges, cg, ct):
    """The VJP by re-running ``fn`` on stand-ins of the operands and walking the graph it records."""
    T = Tensor
    args, stand_ins = [], []
    for o, e in zip(operands, edges):
        if isinstance(o, T) and e is not None:
            a = alias(o._data, e if cg else None)
            stand_ins.append(a)
            args.append(a)
        else:
            args.append(o._data if isinstance(o, T) else o)
    prev = grad_mode._STATE["enabled"]
    grad_mode._STATE["enabled"] = True
    try:
        out = fn(*args)
    finally:
        grad_mode._STATE["enabled"] = prev
    if not isinstance(out, T) or out.grad_fn is None:  # zero derivative (floor, round, sign, ...)
        return [np.zeros_like(o._data) if isinstance(o, T) and e is not None else None
                for o, e in zip(operands, edges)]
    got = iter(gf.run([out.grad_fn], [ct], retain_graph=False, create_graph=cg,
                      capture=[a.grad_fn for a in stand_ins]))
    return [next(got) if (isinstance(o, T) and e is not None) else None for o, e in zip(operands, edges)]


_vjp_by_replay = _ReplayVjp


replay_vjp = _vjp_by_replay  # for nodes recorded elsewhere (gradc.facade.fast_ops) that replay under create_graph


def _vjp_by_tape(tape, vals, root, edges, ct):
    """The replay's result, from the forward's own primitive steps: the registry's VJP rules on arrays."""
    if len(tape) == 1:  # one primitive applied to the operands themselves (add, reshape, matmul, ...)
        op, args, params, out = tape[0]
        if out is root and not op.nondiff and len(args) == len(vals) and _same(args, vals):
            needs = tuple([e is not None for e in edges])
            return [r if need else None for r, need in zip(op.vjp(ct, out, *args, needs=needs, **params), needs)]
    live = {id(v) for v, e in zip(vals, edges) if e is not None}
    for op, args, _params, out in tape:
        if not op.nondiff:
            for a in args:
                if id(a) in live:
                    live.add(id(out))
                    break
    if id(root) not in live:  # zero derivative (floor, round, sign, ...)
        return [np.zeros_like(v) if e is not None else None for v, e in zip(vals, edges)]
    cts = {id(root): ct}
    for op, args, params, out in reversed(tape):
        if op.nondiff:  # before the pop: an identity op (stop_gradient) returns its input object itself
            continue
        g = cts.pop(id(out), None)
        if g is None:
            continue
        needs = tuple(id(a) in live for a in args)
        res = op.vjp(g, out, *args, needs=needs, **params)
        for a, need, r in zip(args, needs, res):
            if need and r is not None:
                k = id(a)
                have = cts.get(k)
                cts[k] = r if have is None else ew.add(have, r)
    # pop: an array passed twice (as one tensor, see ``_distinct``) gets its whole cotangent in its first slot
    return [cts.pop(id(v), None) if e is not None else None for v, e in zip(vals, edges)]


def _same(xs, ys):
    for x, y in zip(xs, ys):
        if x is not y:
            return False
    return True


def bind_hook(op, args, params):
    """``__gradc_bind__`` of Tensor: compute with ``op.impl`` and record a node applying ``op.vjp``."""
    T = Tensor
    out = T._wrap(np.asarray(op.impl(*values(args), **params)))
    if op.nondiff or not tracking(args):
        return out
    edges = [gf.edge(a) if isinstance(a, T) else None for a in args]
    needs = tuple(e is not None for e in edges)

    def vjp(ct):
        cg = gf.STATE["create_graph"]
        ins = [(a if cg else a._data) if isinstance(a, T) else a for a in args]
        return op.vjp(ct, out if cg else out._data, *ins, needs=needs, **params)
    name = HOOK_NAMES.get(op.name) or op.name.capitalize() + "Backward0"
    out._grad_fn, out._requires_grad = gf.node_class(name)(edges, vjp), True
    return out


def flatten_tape(tape) -> tuple:
    """A tape of ``(op, args, params, out)`` steps as one flat tuple: per step the op's name, ``len(args)``, the
    args, ``len(params)``, the params' keys and values in turn, then ``out``.

    A list of step tuples is three or four objects per step for Python's cyclic collector (sigmoid's tape:
    over a dozen per node); the flat tuple is one, and holds only names, numbers, arrays and the params' values
    (no dict: even an empty one would keep it tracked), so the collector stops tracking it once it has survived
    a collection.

    >>> import numpy as np
    >>> from gradc.ir import registry
    >>> x = np.ones(2); y = x + 1.0
    >>> flat = flatten_tape([(registry.OPS["add"], (x, 1.0), {}, y)])
    >>> flat[:2], len(flat)
    (('add', 2), 6)
    >>> unflatten_tape(flat)[0][0] is registry.OPS["add"]
    True
    """
    flat = []
    for op, args, params, result in tape:
        flat += (op.name, len(args), *args, len(params))
        for item in params.items():
            flat += item
        flat.append(result)
    return tuple(flat)


def unflatten_tape(flat) -> list:
    """The ``(op, args, params, out)`` steps of a tape made flat by ``flatten_tape``."""
    steps, i, ops = [], 0, registry.OPS
    while i < len(flat):
        j = i + 2 + flat[i + 1]
        k = j + 1 + 2 * flat[j]
        params = {flat[p]: flat[p + 1] for p in range(j + 1, k, 2)}
        steps.append((ops[flat[i]], flat[i + 2:j], params, flat[k]))
        i = k + 1
    return steps
