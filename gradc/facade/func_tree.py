"""What ``torch.func``'s transforms share: nested arguments (pytrees), ``argnums``, and transform levels.

A pytree is a Tensor (or any other leaf, None included, as in torch 2.13) or a tuple, list or
dict of pytrees. ``flatten`` gives its leaves and a ``Spec`` that ``unflatten`` rebuilds from.

A ``Level`` is one call of a transform. It gives the function fresh inputs of its own (``wrap``),
so differentiating with respect to them never mixes in other uses of the caller's tensors, and
hands results back (``unwrap``) still attached to the caller's graph only when they depend on
tensors that require grad outside the call: torch.func's ``grad(f)(x)`` is differentiable again
when ``x`` requires grad, and detached when it does not.

>>> leaves, spec = flatten({"w": 1, "b": (2, 3)})
>>> leaves, spec.text()
([1, 2, 3], "{'w': *, 'b': (*, *)}")
>>> unflatten([4, 5, 6], spec)
{'w': 4, 'b': (5, 6)}
"""
from __future__ import annotations

from gradc.facade import grad_fn as gf
from gradc.facade.creation import zeros_like
from gradc.facade.grad_mode import is_grad_enabled
from gradc.facade.tensor import Tensor


class Spec:
    """The shape of a pytree: ``kind`` is "*" for a leaf, else the container type; ``keys`` for a dict."""

    def __init__(self, kind, children=(), keys=None):
        self.kind, self.children, self.keys = kind, tuple(children), keys

    def __eq__(self, other):
        return isinstance(other, Spec) and (self.kind, self.keys, self.children) == \
            (other.kind, other.keys, other.children)

    __hash__ = None

    def count(self) -> int:
        return 1 if self.kind == "*" else sum(c.count() for c in self.children)

    def text(self) -> str:
        """torch's ``treespec_pprint`` form: ``(*, [*, {'a': *}])``."""
        if self.kind == "*":
            return "*"
        inner = [c.text() for c in self.children]
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {t}" for k, t in zip(self.keys, inner)) + "}"
        if self.kind is list:
            return "[" + ", ".join(inner) + "]"
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"


def _node(tree):
    if isinstance(tree, (tuple, list)):
        return type(tree), list(tree), None
    if isinstance(tree, dict):
        return dict, list(tree.values()), list(tree.keys())
    return None


def flatten(tree):
    """``(leaves, spec)``, leaves left to right (dicts in insertion order)."""
    leaves = []

    def walk(t):
        node = _node(t)
        if node is None:
            leaves.append(t)
            return Spec("*")
        kind, items, keys = node
        return Spec(kind, [walk(c) for c in items], keys)
    return leaves, walk(tree)


def unflatten(leaves, spec):
    """The pytree of shape ``spec`` with ``leaves`` in order."""
    it = iter(leaves)

    def build(s):
        if s.kind == "*":
            return next(it)
        items = [build(c) for c in s.children]
        if s.kind is dict:
            return dict(zip(s.keys, items))
        if s.kind in (tuple, list):
            return s.kind(items)
        return s.kind(*items) if hasattr(s.kind, "_fields") else s.kind(items)  # namedtuples take fields
    return build(spec)


def tree_map(fn, tree):
    leaves, spec = flatten(tree)
    return unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, spec):
    """One value per leaf of ``spec``: ``prefix`` is a pytree whose leaves stand for whole subtrees (vmap's
    ``in_dims``); None when the structures disagree."""
    node = _node(prefix)
    if node is None:
        return [prefix] * spec.count()
    kind, items, keys = node
    if spec.kind != kind and not (spec.kind != "*" and issubclass(spec.kind, kind)):
        return None
    if len(items) != len(spec.children) or (keys is not None and keys != spec.keys):
        return None
    out = []
    for item, child in zip(items, spec.children):
        got = broadcast_prefix(item, child)
        if got is None:
            return None
        out.extend(got)
    return out


def argnum_positions(argnums, num_args):
    """The argument positions ``argnums`` (an int or a tuple of ints) names, negative ones counted from the end."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    wanted = (argnums,) if isinstance(argnums, int) else argnums
    positions = []
    for a in wanted:
        if not isinstance(a, int):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if not -num_args <= a < num_args:
            raise RuntimeError(f"Got argnum={a}, but only {num_args} positional inputs")
        positions.append(a % num_args)
    if isinstance(argnums, tuple):
        if not positions:
            raise RuntimeError("argnums must be non-empty")
        if len(set(positions)) != len(positions):
            raise RuntimeError(f"argnums elements must be unique, got {tuple(positions)}")
    return tuple(positions)


def check_tensor_outputs(leaves, api):
    if not leaves or (len(leaves) == 1 and leaves[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {leaves})")
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(leaf)}")


class Level:
    """One transform call: its fresh inputs and dummies, and the unwrapping of its results."""

    def __init__(self):
        self._fresh = {}  # id -> tensor (kept alive so ids stay unique)
        self._outer_grad = is_grad_enabled()

    def wrap(self, x):
        """The function's own copy of input ``x``: a view when ``x`` requires grad (the caller's graph stays
        reachable through it), else a new leaf that requires grad."""
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if x.requires_grad:
            return x.view_as(x)
        return self._own(x.detach().requires_grad_(True))

    def dummy(self, like):
        """A zero cotangent that requires grad, for the double-backward trick."""
        return self._own(zeros_like(like, requires_grad=True))

    def _own(self, t):
        self._fresh[id(t)] = t
        return t

    def unwrap(self, tree):
        """``tree`` with every Tensor detached unless it depends on a tensor the caller's autograd tracks."""
        return tree_map(lambda t: t if not isinstance(t, Tensor) or self._reaches_outside(t) else t.detach(), tree)

    def _reaches_outside(self, t):
        if not (self._outer_grad and t.requires_grad):
            return False
        if t.grad_fn is None:
            return id(t) not in self._fresh
        stack, seen = [t.grad_fn], {id(t.grad_fn)}
        while stack:
            node = stack.pop()
            if isinstance(node, gf.AccumulateGrad):
                if id(node.variable) not in self._fresh:
                    return True
                continue
            for child in node._edges:
                if child is not None and id(child) not in seen:
                    seen.add(id(child))
                    stack.append(child)
        return False
