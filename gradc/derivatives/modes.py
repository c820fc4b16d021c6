"""Every derivative mode as the functions of one emitted unit, for ``gradc compile --mode`` and the C target.

``mode_functions(f, graph, args, wrt, mode)`` gives ``[(name, graph, doc, returns)]``:
the function itself, then its derivative in the mode asked for:

============  ==================================================  =====================================
mode          the derivative function                            returns
============  ==================================================  =====================================
``vjp``       ``F_vjp(params..., out_bar...)``                    outputs, then d/d each ``wrt``
``jvp``       ``F_jvp(params..., w_dot for w in wrt)``            outputs, then their tangents
``jacobian``  ``F_jacobian(params...)``                           d output / d ``wrt`` (JAX's shapes)
``hessian``   ``F_hessian(params...)``                            d2 F / d ``wrt`` d ``wrt``
``hvp``       ``F_hvp(params..., w_dot for w in wrt)``            the Hessian times the tangents
============  ==================================================  =====================================

(``grad`` is ``gradc.api.Compiled``'s three functions.) Graphs are optimised here.
The ``hvp`` unit has a third function, ``F_grad_and_hvp(params..., w_dot for w in wrt)``
(:func:`grad_and_hvp_function`): the gradient and the Hessian-vector product from one call that
runs the forward and the reverse sweep once (a Newton-CG step needs both).

>>> import numpy as np
>>> from gradc.trace import trace
>>> f = lambda x: np.sin(x)
>>> [name for name, *_ in mode_functions(f, trace(f, np.ones(2)), (np.ones(2),), ["x"], "jvp")]
['lambda_', 'lambda__jvp']
"""
from __future__ import annotations

from gradc.backends.display import source_html
from gradc.backends.numpy.reload import reduce_by_source
from gradc.derivatives.jacobians import jacobian_graph, jacrev
from gradc.derivatives.transforms import outputs_then_derivatives
from gradc.errors import ArgumentError
from gradc.passes import optimize
from gradc.stages import stage
from gradc.trace.selection import Selection
from gradc.transforms import forward, reverse

MODES = ("grad", "vjp", "jvp", "jacobian", "hessian", "hvp")
SCALAR_MODES = ("grad", "hessian", "hvp")  # the ones that need a scalar output


def mode_functions(f, graph, args, wrt, mode, holomorphic=False):
    """The functions of a unit for ``mode`` (see the module docstring); ``wrt`` are parameter names."""
    if mode not in MODES or mode == "grad":
        raise ArgumentError(f"unknown mode {mode!r}", hint=f"use one of {', '.join(MODES)}")
    name = graph.name
    selection = Selection(tuple(wrt), len(wrt) > 1)
    n_out, k = len(graph.outputs), len(wrt)
    wrt_text = ", ".join(wrt)
    base = (name, optimize(graph), f"Value of {name}.", 0 if n_out == 1 else tuple(range(n_out)))
    if mode == "vjp":
        g = reverse.vjp_graph(graph, list(wrt), name=f"{name}_vjp")
        grads = tuple(range(n_out, n_out + k)) if k > 1 else n_out
        return [base, (g.name, optimize(g), f"Value of {name} and the pull-back of its output cotangents onto "
                                            f"({wrt_text}).", (base[3], grads))]
    if mode == "jvp":
        g = forward.jvp_graph(graph, list(wrt), name=f"{name}_jvp")
        return [base, (g.name, optimize(g), f"Value of {name} and its tangent along ({wrt_text}_dot) "
                                            "(forward mode).", outputs_then_derivatives(g))]
    if mode == "hvp":
        reverse.check_differentiable_output(graph, what="hvp")
        g = forward.hvp_graph(graph, list(wrt))
        return [base, (g.name, optimize(g), f"Hessian of {name} with respect to ({wrt_text}) times the "
                                            "tangents (forward over reverse).", 0 if k == 1 else tuple(range(k)))]
    if mode == "jacobian":
        g, returns = jacobian_graph(f, args, selection, "auto", holomorphic=holomorphic)
        return [base, (g.name, optimize(g), f"Jacobian of {name} with respect to ({wrt_text}).", returns)]
    reverse.check_differentiable_output(graph, what="hessian")
    g, returns = jacobian_graph(jacrev(f, wrt=selection.wrt, holomorphic=holomorphic), args, selection, "fwd",
                                what="hessian", holomorphic=holomorphic)
    return [base, (g.name, optimize(g), f"Hessian of {name} with respect to ({wrt_text}) "
                                        "(forward over reverse).", returns)]


def grad_and_hvp_function(graph, wrt):
    """``(name, graph, doc, returns)`` of ``F_grad_and_hvp``: ``(gradient, hvp)``, each a tuple when ``wrt`` has
    several names; the jvp of the gradient graph keeps the gradient, so the forward and reverse sweeps run once.

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> name, g, _, returns = grad_and_hvp_function(trace(lambda x: np.sum(x ** 3), np.ones(2)), ["x"])
    >>> name, [v.name for v in g.inputs], returns
    ('lambda__grad_and_hvp', ['x', 'x_dot'], (0, 1))
    """
    k = len(wrt)
    name = f"{graph.name}_grad_and_hvp"
    reverse.check_differentiable_output(graph, what="hvp")
    g = forward.jvp_graph(reverse.grad_graph(graph, list(wrt)), list(wrt), name=name)
    returns = (0, 1) if k == 1 else (tuple(range(k)), tuple(range(k, 2 * k)))
    doc = (f"Gradient of {graph.name} with respect to ({', '.join(wrt)}) and its Hessian times the tangents, "
           "from one forward and one reverse sweep (forward over reverse).")
    return name, optimize(g), doc, returns


class Unit:
    """``gradc.compile(f, ..., mode=MODE)`` on the NumPy target: FUNC and FUNC_<MODE> in one loaded module.

    ``forward`` is FUNC; the attribute named by the mode (``jvp``, ``vjp``, ``jacobian``,
    ``hessian``, ``hvp``) is FUNC_<MODE>; ``source`` is the module, ``graphs`` the optimised graphs.
    In ``hvp`` mode ``grad_and_hvp`` is FUNC_grad_and_hvp (the gradient and the product from one call).
    It pickles by its source and graphs (``gradc.backends.numpy.reload``) and shows its source in a notebook.

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> f = lambda x: np.sin(x)
    >>> u = Unit(f, trace(f, np.zeros(2)), (np.zeros(2),), ["x"], "jacobian")
    >>> u.jacobian(np.zeros(2))
    array([[1., 0.],
           [0., 1.]])
    """

    def __init__(self, f, graph, args, wrt, mode, header=None, holomorphic=False):
        from gradc.backends.numpy.emit import Function, emit_module
        from gradc.backends.numpy.load import load_source

        with stage("gradc.transforms", f"differentiating {graph.name} ({mode}, wrt {', '.join(wrt)})"):
            functions = mode_functions(f, graph, args, wrt, mode, holomorphic)
            if mode == "hvp":
                functions.append(grad_and_hvp_function(graph, wrt))
        self.name, self.mode, self.wrt = graph.name, mode, tuple(wrt)
        self.graphs = {name: g for name, g, _, _ in functions}
        header = header or [f"Generated by gradc from {graph.origin} ({mode}, wrt {', '.join(wrt)}). Do not edit."]
        with stage("gradc.backends.numpy", f"emitting and loading {graph.name} ({mode})"):
            self.source = emit_module([Function(name, g, doc, returns=r) for name, g, doc, r in functions], header)
            namespace = load_source(self.source, graph.name)
        self.forward = namespace[graph.name]
        setattr(self, mode, namespace[f"{graph.name}_{mode}"])
        if mode == "hvp":
            self.grad_and_hvp = namespace[f"{graph.name}_grad_and_hvp"]

    def __repr__(self):
        return f"<gradc.Unit {self.name} {self.mode} wrt {', '.join(self.wrt)}>"

    def __reduce__(self):
        return reduce_by_source(self)  # its functions belong to no importable module: loaded again from the source

    def _repr_html_(self) -> str:
        return source_html(repr(self)[1:-1], self.source, "python")
