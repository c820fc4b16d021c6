"""Graph nodes of the Tensor facade and the engine that walks them backwards.

Every differentiable Tensor op records one node whose class carries torch's name
(``AddBackward0``...). A node holds one edge per input slot, ``(node or None, 0)``,
fixed when it is created, and a VJP callable mapping the output cotangent to one
cotangent per slot. The VJP callables apply the op registry's rules (see
``gradc.facade.record``); the engine only orders nodes and adds cotangents.
"""
from __future__ import annotations

import gc
import heapq
import itertools
from weakref import ref as _weakref

import numpy as np

import gradc.ops.elementwise as ew
from gradc.facade import dtypes, grad_mode
from gradc.facade.tensor import Size, Tensor

SECOND_TIME = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")
_HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
         "with torch.autograd.set_detect_anomaly(True, check_nan=False).")

STATE = {"create_graph": False, "capture": None}  # capture: ids of the nodes whose cotangents a run returns
# How torch's nodes list a Python-number operand: not at all (an overload taking a Scalar), or wrapped as a
# tensor in the ``other`` slot even when it came first (the reflected operators ``__radd__``, ``__rmul__``).
_SCALAR_NOT_AN_INPUT = frozenset({"PowBackward0"})
_SELF_FIRST = frozenset({"AddBackward0", "MulBackward0"})
_SAVES_NO_OPERAND = frozenset({"AddBackward0", "SubBackward0", "RsubBackward0", "RsubBackward1"})
SEQUENCE = itertools.count(1)
_CLASSES: dict = {}
_ARRAY = np.ndarray


class Node:
    """Base of all graph nodes (subclasses are named per op, in module ``builtins``)."""

    _retained = ()  # tensors whose hooks or retained .grad see this node's cotangent (a tuple once set)
    _freed = False
    _seq = 0  # creation order (torch's sequence number: the engine's order among ready nodes)
    _refuse = None  # torch's error when the engine reaches this node (``gradc.facade.views``)
    _saved = ()  # (tensor, its version when saved, producer) for the tensors the VJP reads
    _saves = False
    _LANE = None  # the lane class (``node_class``) of nodes whose VJP is a method of their class

    def __init__(self, edges, vjp=None, saved=(), saves=False):
        self._seq = next(SEQUENCE)
        self._edges = tuple(edges)
        self._vjp = vjp
        if saved:
            self._saved = [(saved_operand(t), t._vc[0], None) for t in saved]
        if saves or saved:
            self._saves = True

    @property
    def metadata(self):
        """A dict for the user's annotations (made on first use: most nodes never get one)."""
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    @property
    def next_functions(self):
        edges = self._edges
        if type(self).__name__ == "CopySlices" and len(edges) == 2 and edges[1] is not None:
            # torch's CopySlices lists the base's old history, then the in-place op's inputs other than the view
            return ((edges[0], 0),) + tuple(edges[1].next_functions[1:])
        operands = self.__dict__.get("_operands")
        if operands is not None and len(operands) == 2 and len(edges) == 2:
            name = type(self).__name__
            if name in _SCALAR_NOT_AN_INPUT and not isinstance(operands[1], Tensor):
                edges = edges[:1]  # ``pow(Tensor, Scalar)``: the number is an argument, not an input
            elif name in _SELF_FIRST and not isinstance(operands[0], Tensor) and isinstance(operands[1], Tensor):
                edges = edges[::-1]  # ``2 * x`` is ``x.__rmul__(2)``: torch's node has the tensor as ``self``
        return tuple((e, 0) for e in edges)

    @property
    def requires_grad(self):
        return True

    def name(self):
        return type(self).__name__

    def register_hook(self, fn):
        raise NotImplementedError("hooks on graph nodes are not supported by the gradc facade")

    register_prehook = register_hook

    def __getattr__(self, name):
        # saved values, as torch exposes them: _saved_self, _saved_other, _saved_alpha, _saved_result
        if not name.startswith("_saved_") or name.startswith("_saved_a") and name != "_saved_alpha":
            raise AttributeError(name)
        if name == "_saved_alpha" and type(self).__name__ in ("AddBackward0", "SubBackward0"):
            return 1
        if self._freed:
            raise RuntimeError(SECOND_TIME)
        operands = self.__dict__.get("_operands", ())
        index = {"_saved_self": 0, "_saved_other": 1}.get(name)
        if index is not None and index < len(operands):
            kept = operands[index]
            kind = type(self).__name__
            if kept is NOT_SAVED or kind in _SAVES_NO_OPERAND or (index == 1 and kind.startswith("PowBackward")):
                raise AttributeError(name)  # torch's node saves no such tensor (an exponent is ``_saved_exponent``)
            return kept
        if name == "_saved_result" and self._saved:
            saved = self._saved[-1][0]
            return saved.unpack(self) if type(saved) is SavedOutput else saved
        raise AttributeError(name)

    def _check(self):
        if self._freed:
            raise RuntimeError(SECOND_TIME)
        if self._refuse:
            raise RuntimeError(self._refuse)
        for t, version, producer in self._saved:
            if t._vc[0] != version:
                raise RuntimeError(version_message(t, version, self if producer is OWN else producer))


OWN = "own"  # the producer of a saved entry that is the node's own output (held without the node: no cycle)


class SavedOutput:
    """A node's own output as the node saves it: its storage and version counter, not the Tensor.

    Holding the Tensor would make a reference cycle (node -> output -> ``_grad_fn`` -> node), and
    a graph with one cycle is freed only by Python's cyclic collector, which then also walks every
    other object of the graph; torch's saved outputs likewise do not hold their ``grad_fn``.
    """

    __slots__ = ("_data", "_vc")

    def __init__(self, out):
        self._data, self._vc = out._data, out._vc

    dtype = property(lambda self: dtypes.from_np(self._data.dtype))
    shape = property(lambda self: Size(self._data.shape))
    _version = property(lambda self: self._vc[0])

    def unpack(self, node):
        """The saved output as a Tensor (a new object, as torch's unpacking gives) whose ``grad_fn`` is ``node``."""
        t = Tensor._wrap(self._data)
        t._vc, t._grad_fn, t._requires_grad = self._vc, node, True
        return t


def saved_operand(t):
    """What a node keeps of an operand ``t``, so that a graph never holds a cycle and is freed by reference counting.

    A leaf that requires grad is kept itself: it never gets a history. Any other tensor can be
    given one later by an in-place write (``s[i] = f(s[j])``, or a write to its base that renews a
    view's node), which may reach back to this node; such a tensor is kept as torch's saved
    variables keep it: a new Tensor on the same storage and version counter with the history it
    had when saved (plus a weak reference to it, for the name of its current node in torch's
    error about a changed saved tensor).
    """
    if t._grad_fn is None and t._requires_grad and t._base is None:
        return t
    s = _NEW(Tensor)
    s._data, s._vc = t._data, t._vc
    if t._requires_grad:
        s._grad_fn, s._requires_grad = t._grad_fn, True
    s._origin = _weakref(t)
    return s


_NEW = object.__new__
# The slot of a tensor operand that a node need not keep (``a + b``: the derivative reads neither): a Tensor, so
# ``next_functions`` still tells tensor operands from numbers.
NOT_SAVED = Tensor._wrap(0.0)


def saved_output(out):
    """The ``_saved`` entry of a node's own output ``out`` (at its current version)."""
    return (SavedOutput(out), out._vc[0], OWN)

    def _apply(self, ct):
        self._check()
        return self._vjp(ct)


def version_message(t, expected, producer=None):
    kind = "[torch.%s [%s]]" % (t.dtype.legacy, ", ".join(str(d) for d in t.shape))
    where = ""
    origin = getattr(t, "_origin", None)
    if origin is not None and origin() is not None:  # a saved operand: its tensor's node now, as torch names it
        t = origin()
    producer = producer or t.grad_fn
    if producer is not None:
        # torch's name: ExpBackward0 -> Exp, FillBackward2 -> Fill2
        head, _, tail = type(producer).__name__.partition("Backward")
        name = type(producer).__name__
        if name in ("CopySlices", "CopyBackwards"):  # torch's own nodes keep their C++ names
            name = "torch::autograd::" + name
        else:
            name = head + ("" if tail == "0" else tail)
        where = ", which is output 0 of %s," % name
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{kind}{where} is at version {t._version}; expected version {expected} instead. {_HINT}")


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: backward adds into ``variable.grad``."""

    __module__ = "builtins"

    _seq = 1 << 62  # torch runs a leaf's accumulation as soon as it is ready

    def __init__(self, variable):
        super().__init__(())
        self._seq = 1 << 62
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"


def node_class(name: str, lane=None):
    """The node class called ``name`` (one class per name, shown without a module). ``lane``: a Node subclass whose
    ``_vjp`` method reads the node's own attributes (``gradc.facade.fast_ops``): the node then needs no VJP object.

    >>> node_class("ExpBackward0").__name__
    'ExpBackward0'
    """
    key = name if lane is None or lane is Node else (name, lane)
    cls = _CLASSES.get(key)
    if cls is None:
        cls = _CLASSES[key] = type(name, (lane or Node,), {"__module__": "builtins"})
    return cls


def rename_node(node, name: str):
    """Give ``node`` torch's class ``name``, keeping its lane (where its VJP method lives)."""
    node.__class__ = node_class(name, type(node)._LANE)


def edge(t):
    """The node a gradient for tensor ``t`` flows into (None if ``t`` does not require grad)."""
    if t is None or not getattr(t, "requires_grad", False):
        return None
    if t.grad_fn is not None:
        return t.grad_fn
    acc = t._acc
    if acc is not None:
        acc = acc()
    if acc is None:  # the tensor keeps its accumulator weakly, as torch does: the two would be a cycle
        acc = AccumulateGrad(t)
        t._acc = _weakref(acc)
    return acc


def _toposort(roots):
    order, seen = [], {None}  # nodes hash by identity
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root._edges))]
        while stack:
            node, it = stack[-1]
            for child in it:
                if child not in seen:
                    seen.add(child)
                    stack.append((child, iter(child._edges)))
                    break
            else:
                stack.pop()
                order.append(node)
    order.reverse()
    return order


def _order(roots, retain_graph):
    """``_toposort(roots)``; for one root walked with ``retain_graph`` (a Jacobian's rows: ``backward`` per output)
    the order below the root is kept on the root, as the graph under a node never changes (edges are fixed when
    a node is made). The root is left out of its own cache, which would otherwise be a reference cycle."""
    if len(roots) != 1 or roots[0] is None:
        return _toposort(roots)
    root = roots[0]
    below = root.__dict__.get("_order_below")
    if below is not None:
        return [root, *below]
    order = _toposort(roots)
    if retain_graph:
        root._order_below = tuple(order[1:])
    return order


def _plus(a, b):
    return b if a is None else ew.add(a, b)


_UNSIGN_IMAG_ZERO = complex(-0.0, 0.0)


def torch_convention(g):
    """A cotangent of the engine as torch shows it (or the reverse: the map is its own inverse).

    The registry's VJP rules follow JAX's convention for complex values (the cotangent pairs with a
    tangent without a conjugate); torch's gradients are the conjugates of those (for a real loss of
    ``z = x + iy``, ``dL/dx + i dL/dy``). The engine runs in JAX's convention and conjugates where a
    gradient meets the user: seeds, ``.grad``, hooks, ``autograd.grad``'s results, custom Functions.
    Real values pass through untouched.

    >>> import numpy as np
    >>> torch_convention(np.array([1 + 2j])), torch_convention(np.array([1.0]))
    (array([1.-2.j]), array([1.]))
    """
    data = getattr(g, "_data", g)
    if getattr(data, "dtype", None) is None or data.dtype.kind != "c":
        return g
    # adding (-0.0 + 0.0j) turns imaginary -0.0 into 0.0 and leaves the real parts' signs: torch's untouched
    # and cancelling entries print as 0.+0.j
    return g.conj() + _UNSIGN_IMAG_ZERO if isinstance(g, Tensor) else np.conj(g) + _UNSIGN_IMAG_ZERO


def run(roots, grads, retain_graph=False, create_graph=False, capture=None):
    """Propagate ``grads`` (one per root node) backwards.

    Without ``capture``, leaves' ``.grad`` are accumulated; with it (a list of nodes), the
    cotangents arriving at those nodes are returned instead and nothing is accumulated.
    """
    buffer = {}
    for node, g in zip(roots, grads):
        if node is not None:
            buffer[id(node)] = _plus(buffer.get(id(node)), g)
    stop = {id(n) for n in capture or () if n is not None}
    STATE["capture"] = stop or None
    got = {}
    freed_now = set()  # nodes this run has freed (torch's order may visit them after a failing one)
    prev = dict(STATE), grad_mode.is_grad_enabled()
    STATE["create_graph"] = create_graph
    grad_mode._STATE["enabled"] = create_graph
    collecting = gc.isenabled()
    if collecting:  # the engine's own allocations hold no cycle: no collector pass over the live graph meanwhile
        gc.disable()
    try:
        for node in _order(roots, retain_graph):
            k = id(node)
            g = buffer.pop(k, None)
            if g is None:
                if capture is None and (node._saved or node._freed or node._refuse):  # torch runs it and unpacks
                    _check_in_torch_order(node, roots, freed_now)
                continue
            if stop and k in stop:
                got[k] = g
                continue
            if node._retained:
                for t in node._retained:
                    if t._hooks:
                        g = _run_hooks(t, g)
                    if t._retains_grad:
                        _accumulate(t, g, create_graph)
            if type(node) is AccumulateGrad:
                if node.variable._hooks:
                    g = _run_hooks(node.variable, g)
                if capture is None:
                    _accumulate(node.variable, g, create_graph)
                continue
            if node._freed or node._saved or node._refuse:
                _check_in_torch_order(node, roots, freed_now)
            cts = node._vjp(g)
            if not retain_graph and node._saves:
                node._freed = True
                freed_now.add(node)
            for child, ct in zip(node._edges, cts):
                if child is not None and ct is not None:
                    k = id(child)
                    have = buffer.get(k)
                    if have is None:
                        buffer[k] = ct
                    elif type(have) is _ARRAY and type(ct) is _ARRAY and have.dtype is ct.dtype and have.ndim \
                            and have.shape == ct.shape:  # what ew.add computes, without its dispatch
                        buffer[k] = have + ct
                    else:
                        buffer[k] = ew.add(have, ct)
    finally:
        if collecting:
            gc.enable()
        STATE.update(prev[0])
        grad_mode._STATE["enabled"] = prev[1]
    return [got.get(id(n)) if n is not None else None for n in capture or ()]


def rename(out, name: str):
    """Give ``out``'s node torch's class ``name`` (an overload's node: ``ClampMinBackward0``, ``XlogyBackward2``)."""
    node = getattr(out, "_grad_fn", None)
    if node is not None:
        rename_node(node, name)
    return out


class _LaneVjp:
    """A lane node's VJP method, called through a weak reference to the node (whose attribute holds this)."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __call__(self, ct):
        node = self.node()
        return type(node)._vjp(node, ct)


class RefusedDerivative:
    """A node's VJP refusing the derivative in one input slot as torch does (``NotImplementedError`` with torch's
    message when the engine needs that slot's cotangent); the other slots' cotangents come from ``inner``."""

    __slots__ = ("inner", "edges", "slot", "message")

    def __init__(self, inner, edges, slot, message):
        self.inner, self.edges, self.slot, self.message = inner, edges, slot, message

    def __call__(self, ct):
        target = self.edges[self.slot]
        if target is not None and _needed(target):
            raise NotImplementedError(self.message)
        cts = list(self.inner(ct))
        cts[self.slot] = None
        return cts


def _needed(node) -> bool:
    """Whether the running backward needs ``node``'s cotangent: always for ``backward()``, and for
    ``autograd.grad`` when the node reaches one of its inputs (torch computes only what those need)."""
    capture = STATE["capture"]
    if not capture:
        return True
    return any(id(n) in capture for n in _toposort([node]))


def refuse_derivative(out, slot: int, message: str):
    """Make ``out``'s node refuse the derivative in input ``slot`` (``torch.special.gammainc``'s first argument,
    the inverse hyperbolic functions' in-place versions). Returns ``out``."""
    node = getattr(out, "_grad_fn", None)
    if node is not None and slot < len(node._edges):
        # a lane node's VJP is its own method: a bound method kept on the node would be a cycle (node -> node)
        inner = _LaneVjp(_weakref(node)) if type(node)._LANE and "_vjp" not in node.__dict__ else node._vjp
        node._vjp = RefusedDerivative(inner, node._edges, slot, message)
    return out


def _check_in_torch_order(node, roots, freed_now):
    """``node._check()``; when it fails, the error torch reports: the first failing node in torch's order."""
    try:
        node._check()
    except RuntimeError:
        for other in _torch_order(roots):
            if other._saved or other._freed or other._refuse:
                if other in freed_now:  # freed by this walk, not before: only its saved versions count
                    if other._refuse:
                        raise RuntimeError(other._refuse) from None
                    for t, version, producer in other._saved:
                        if t._vc[0] != version:
                            raise RuntimeError(version_message(t, version, other if producer is OWN else producer)) \
                                from None
                else:
                    other._check()
        raise


def _torch_order(roots):
    """The nodes in the order torch's engine runs them: a node is ready once every node with an edge to it has
    run; among ready nodes, the latest created first."""
    deps = {}
    for node in _toposort(roots):
        for child in node._edges:
            if child is not None:
                deps[id(child)] = deps.get(id(child), 0) + 1
    ready = [(-r._seq, id(r), r) for r in {id(r): r for r in roots if r is not None}.values()]
    heapq.heapify(ready)
    while ready:
        node = heapq.heappop(ready)[2]
        yield node
        for child in node._edges:
            if child is not None:
                k = id(child)
                deps[k] -= 1
                if not deps[k]:
                    heapq.heappush(ready, (-child._seq, k, child))


def _run_hooks(t, g):
    for hook in t._hooks:
        arg = g if isinstance(g, Tensor) else Tensor._wrap(g)
        new = hook(torch_convention(arg))
        if new is not None:
            new = torch_convention(new)
            g = new if isinstance(g, Tensor) else new._data
    return g


def _accumulate(t, g, create_graph):
    g = torch_convention(g)
    if isinstance(g, Tensor):
        if t._grad is None:
            g = g.to(t.dtype)
            t._grad = g if not create_graph else _copy_node(g)
        else:
            t._grad = t._grad + g
        return
    g = g.astype(t._data.dtype, copy=False)  # the stored dtype is the facade dtype's NumPy dtype
    if t._grad is None:
        t._grad = Tensor._wrap(g.copy())
    elif t._grad.requires_grad and not create_graph:
        t._grad = Tensor._wrap(t._grad._data + g)
    else:
        t._grad._data += g
        t._grad._bump()


def _copy_node(g):
    out = Tensor._wrap(g._data.copy())
    if g.requires_grad:
        out._grad_fn = node_class("CopyBackwards")([edge(g)], lambda ct: (ct,))
        out._requires_grad = True
    return out
