"""``gradc.compile`` on pytree arguments: the function of the leaves it traces, and the compiled object's boundary.

``gradc.compile(loss, {"w": w, "b": b}, X, y)`` compiles ``loss`` as a function of its leaves:
one flat parameter per leaf, named by its path (``gradc.tree_util.path_name``:
``params["w"]`` is ``params_w``, ``layers[0]["b"]`` is ``layers_0_b``; a parameter that is no
pytree keeps its own name). Names are made distinct deterministically: the plain parameters
keep theirs, and a leaf whose name is taken (``f(params, params_w)`` with ``params["w"]``)
gets ``_2``, ``_3``, ... in leaf order. Keys that are no identifiers become ones
(``"x y"`` is ``p_x_y``, ``"1"`` is ``p_1``, a keyword gains ``_``).

:class:`TreeCompiled` wraps the flat compiled object (NumPy or C): its ``forward``, ``grad``
and ``value_and_grad`` take the user's pytrees and return gradients nested as the arguments
differentiated; ``source`` (NumPy target) is the flat module followed by its pytree wrappers
(``gradc.backends.numpy.tree_wrapper``), so the module runs standalone with the user's
structures too.

>>> import numpy as np
>>> plan = TreePlan(lambda p, x: p["w"] * x, {"p": {"w": 2.0, "b": [1.0]}, "x": 3.0})
>>> plan.leaf_names
['p_b_0', 'p_w', 'x']
"""
from __future__ import annotations

import inspect

from gradc.backends.numpy.tree_wrapper import Parameter, tree_wrappers
from gradc.errors import ArgumentError
from gradc.trace import call_bound, def_location, function_name
from gradc.trace.capture import capture
from gradc.trace.scipy_dispatch import rebind
from gradc.trace.signature import callable_signature
from gradc.tree_util import keystr, tree_flatten, treedef_is_leaf


def is_tree(value) -> bool:
    """Whether an argument is a pytree node to flatten (None stays a static argument, as before pytrees)."""
    return value is not None and not treedef_is_leaf(tree_flatten(value)[1])


class TreePlan:
    """How the arguments ``bound`` (every parameter of ``f`` by name, in order) become flat leaves and back."""

    def __init__(self, f, bound: dict):
        self.f = f
        self.params = list(bound)
        self.defs = {}  # parameter -> its PyTreeDef, for the parameters that are pytrees
        plain = {p for p, v in bound.items() if not is_tree(v)}
        taken = set(plain)
        self.leaf_names, self.ranges, self.leaves = [], {}, []
        for p, value in bound.items():
            start = len(self.leaf_names)
            if p in plain:
                self.leaf_names.append(p)
                self.leaves.append(value)
            else:
                leaves, treedef = tree_flatten(value)
                self.defs[p] = treedef
                for name in treedef.leaf_names(p):
                    self.leaf_names.append(_distinct(name, taken))
                self.leaves += leaves
            taken.update(self.leaf_names[start:])
            self.ranges[p] = (start, len(self.leaf_names))

    def values(self) -> dict:
        """The example leaves by flat parameter name (what ``trace_bound`` takes)."""
        return dict(zip(self.leaf_names, self.leaves))

    def flat_function(self):
        """``f`` as a function of the leaves (parameters ``leaf_names``), named and located as ``f``."""
        inner = capture(rebind(self.f))  # SciPy names and if/for/while in the user's own function

        def flat(*leaves):
            return call_bound(inner, self.nest_arguments(leaves))

        flat.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in self.leaf_names])
        flat.__name__ = flat.__qualname__ = function_name(self.f)
        flat.__wrapped__ = self.f  # errors about the function point at the user's def
        return flat

    def leaf_function(self):
        """``f`` of the leaves, run as Python (not traced): the reference ``gradc.check`` compares with."""
        def of_leaves(*leaves):
            return call_bound(self.f, self.nest_arguments(leaves))

        of_leaves.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in self.leaf_names])
        of_leaves.__name__ = of_leaves.__qualname__ = function_name(self.f)
        return of_leaves

    def nest_arguments(self, leaves) -> dict:
        """Every parameter's value from the flat leaves."""
        out = {}
        for p in self.params:
            a, b = self.ranges[p]
            out[p] = self.defs[p].unflatten(leaves[a:b]) if p in self.defs else leaves[a]
        return out

    def flatten_call(self, args, kwargs, what: str) -> list:
        """The leaves of a call's arguments, each pytree checked against the compiled structure."""
        try:
            bound = callable_signature(self.f).bind(*args, **kwargs)
        except TypeError as e:
            raise ArgumentError(f"{what}: {e}", hint="call it as the function compiled is called") from None
        bound.apply_defaults()
        leaves = []
        for p in self.params:
            value = bound.arguments[p]
            if p in self.defs:
                leaves += self.defs[p].flatten_up_to(value, f"{what}'s argument {p!r}")
            else:
                leaves.append(value)
        return leaves

    def chosen_leaves(self, selection, graph) -> list:
        """The flat names of the leaves of the parameters ``selection`` chooses; each must be a float array."""
        inputs = {v.name: v for v in graph.inputs}
        names = []
        for p in selection.names:
            a, b = self.ranges[p]
            paths = self.defs[p].key_paths() if p in self.defs else [()]
            for name, path in zip(self.leaf_names[a:b], paths):
                v = inputs.get(name)
                if v is None or not v.type.is_inexact:
                    kind = f"a static {type(graph.static.get(name)).__name__}" if v is None else \
                        f"of dtype {v.type.dtype}"
                    raise ArgumentError(f"cannot differentiate with respect to {p}{keystr(path)}: it is {kind}",
                                        where=def_location(self.f),
                                        hint="every leaf of a parameter differentiated is a float array: pass it "
                                             "as one, or move it to an argument not differentiated")
                names.append(name)
            if a == b:
                raise ArgumentError(f"cannot differentiate with respect to {p}: it has no leaves",
                                    where=def_location(self.f), hint="choose a parameter holding arrays")
        return names

    def nest_gradients(self, flat, selection):
        """The flat gradients (one per chosen leaf, in order) nested as the parameters chosen."""
        out, i = [], 0
        for p in selection.names:
            a, b = self.ranges[p]
            n = b - a
            out.append(self.defs[p].unflatten(flat[i:i + n]) if p in self.defs else flat[i])
            i += n
        return tuple(out) if selection.as_tuple else out[0]

    def wrapper_parameters(self) -> list:
        """The parameters as :mod:`gradc.backends.numpy.tree_wrapper` describes them."""
        return [Parameter(p, self.defs.get(p), self.leaf_names[slice(*self.ranges[p])]) for p in self.params]


def _distinct(name: str, taken: set) -> str:
    unique, k = name, 1
    while unique in taken:
        k += 1
        unique = f"{name}_{k}"
    return unique


class TreeCompiled:
    """A compiled function of pytrees: the flat compiled object (``flat``) behind the user's structures."""

    def __init__(self, plan: TreePlan, flat, selection, n_chosen: int):
        self.plan, self.flat, self.selection = plan, flat, selection
        self.name = flat.name
        self.wrt = tuple(selection.names)
        self.leaf_wrt = tuple(flat.wrt)
        self._tuple = n_chosen > 1
        if hasattr(flat, "c_source"):  # the C target: its files are the flat functions (no pytree wrappers in C)
            self.c_source, self.header = flat.c_source, flat.header
            self.source = getattr(flat, "source", flat.c_source)
        else:
            self.source = flat.source.rstrip("\n") + "\n\n\n" + tree_wrappers(
                self.name, plan.wrapper_parameters(), [plan.params.index(p) for p in selection.names],
                selection.as_tuple, self._tuple)
        for attr in ("graph", "grad_graph", "value_and_grad_graph"):
            if hasattr(flat, attr):
                setattr(self, attr, getattr(flat, attr))

    def _leaves(self, args, kwargs, what):
        return self.plan.flatten_call(args, kwargs, f"{self.name}.{what}")

    def _nest(self, grads):
        return self.plan.nest_gradients(list(grads) if self._tuple else [grads], self.selection)

    def forward(self, *args, **kwargs):
        """The value of the function at these (pytree) arguments."""
        return self.flat.forward(*self._leaves(args, kwargs, "forward"))

    def grad(self, *args, **kwargs):
        """The gradient, nested as the arguments differentiated (a tuple of them for a tuple ``wrt``)."""
        return self._nest(self.flat.grad(*self._leaves(args, kwargs, "grad")))

    def value_and_grad(self, *args, **kwargs):
        """``(value, gradient)``, the gradient nested as :meth:`grad`'s."""
        value, grads = self.flat.value_and_grad(*self._leaves(args, kwargs, "value_and_grad"))
        return value, self._nest(grads)

    def __call__(self, *args, **kwargs):
        return self.value_and_grad(*args, **kwargs)

    def __repr__(self):
        return f"<gradc.Compiled {self.name} wrt {', '.join(self.wrt)} (pytrees: {', '.join(self.plan.defs)})>"
