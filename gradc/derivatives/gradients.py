"""What ``grad`` and ``value_and_grad`` (``gradc.api``) add for pytrees and ``has_aux``: gradient graphs that
pass the aux through, and the nesting of their flat results.

>>> import numpy as np
>>> from gradc.trace import trace
>>> g = trace(lambda x: (np.sum(x ** 2), np.mean(x)), np.ones(2))
>>> grad_graph, value_and_grad_graph = gradient_graphs(g, ["x"], n_aux=1)
>>> len(grad_graph.outputs), len(value_and_grad_graph.outputs)
(2, 3)
"""
from __future__ import annotations

from gradc.ir.builder import next_index
from gradc.ir.graph import Eqn, Var
from gradc.ir.types import TensorType
from gradc.transforms import reverse as ad


def gradient_graphs(graph, wrt_names, n_aux: int = 0):
    """``(grad graph, value_and_grad graph)`` of a graph whose first output is the scalar differentiated and
    whose last ``n_aux`` outputs pass through: ``(grads..., aux...)`` and ``(value, grads..., aux...)``."""
    main = graph.replace(outputs=graph.outputs[:len(graph.outputs) - n_aux])
    value_and_grad_graph = ad.value_and_grad_graph(main, wrt_names, name=f"{graph.name}_value_and_grad")
    aux = list(graph.outputs[len(main.outputs):])
    value_and_grad_graph = value_and_grad_graph.replace(outputs=value_and_grad_graph.outputs + aux)
    return value_and_grad_graph.replace(name=f"{graph.name}_grad", outputs=value_and_grad_graph.outputs[1:]), \
        value_and_grad_graph


class GradientNesting:
    """The flat results of a gradient function (``value, grads..., aux...``) nested as JAX's: the gradient of
    each chosen argument has its structure, and with ``has_aux`` the value is ``(value, aux)``."""

    def __init__(self, plan, layout, positions, as_tuple, with_value):
        self.plan, self.layout, self.positions, self.as_tuple = plan, layout, positions, as_tuple
        self.with_value = with_value
        self.n = sum(plan.defs[k].num_leaves for k in positions)

    def wrap(self, entry):
        leaves, nest = self.plan.leaves, self.nest_parts

        def call(*args):
            return nest(entry(*leaves(args)))
        return call

    def nest(self, outs):
        """From a flat list: ``[value,] grads..., aux...``."""
        outs = list(outs)
        if self.with_value:
            return self.nest_parts((outs[0], outs[1:1 + self.n], outs[1 + self.n:]))
        return self.nest_parts((outs[:self.n], outs[self.n:]))

    def nest_parts(self, parts):
        """From the emitted function's ``([value,] grads, aux)``."""
        value, grads, aux = parts if self.with_value else (None, *parts)
        grads = self.plan.group(grads, self.positions, self.as_tuple)
        if self.plan.has_aux:
            value = (value, self.layout.aux((value, *aux)))
        return (value, grads) if self.with_value else grads if not self.plan.has_aux else (grads, value[1])


def scalar_loss(graph):
    """``graph`` with its first output, when it holds one number in an array of shape ``(1,)``, ``(1, 1)``, ...,
    reshaped to a scalar (as autograd's ``grad`` and torch's ``backward()`` take a one-element output), and the
    shape it had (None when nothing changed). Any other shape is left for the scalar check to refuse.

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> g, shape = scalar_loss(trace(lambda x: np.sum(x).reshape(1, 1), np.ones(2)))
    >>> g.outputs[0].type, shape
    (f64[], (1, 1))
    """
    out = graph.outputs[0] if graph.outputs else None
    shape = getattr(getattr(out, "type", None), "shape", ())
    if not isinstance(out, Var) or shape == () or any(d != 1 for d in shape):
        return graph, None
    taken = {v.name for v in graph.inputs} | {e.out.name for e in graph.eqns} | set(graph.params)
    k = next_index(graph)
    while f"t{k}" in taken:
        k += 1
    scalar = Var(f"t{k}", TensorType((), out.type.dtype))
    eqn = Eqn("reshape", (out,), {"shape": ()}, scalar)
    return graph.replace(eqns=list(graph.eqns) + [eqn], outputs=[scalar] + list(graph.outputs[1:])), shape
