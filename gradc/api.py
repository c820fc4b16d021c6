"""The public transforms: ``grad``, ``value_and_grad``, ``trace`` and ``compile``.

``grad`` and ``value_and_grad`` trace on the first call for each signature
(shapes, dtypes and static values of the arguments), compile to NumPy source,
and cache; later calls run only the generated code.

>>> import numpy as np
>>> df = grad(lambda x: np.sum(x ** 2))
>>> df(np.array([1.0, 2.0]))
array([2., 4.])
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from gradc.backends.display import formula_html, source_html
from gradc.backends.numpy.emit import Function, emit_module
from gradc.backends.numpy.load import load_source
from gradc.backends.numpy.reload import reduce_by_source
from gradc.derivatives.check import CheckReport, check  # noqa: F401 - gradc.check: compiled code against f
from gradc.derivatives.closures import tracing
from gradc.derivatives.flat_function import flat_function
from gradc.derivatives.gradients import GradientNesting, gradient_graphs, scalar_loss
from gradc.derivatives.modes import MODES, SCALAR_MODES, Unit, grad_and_hvp_function, mode_functions
from gradc.derivatives.pickling import reduce_transform
from gradc.derivatives.static_args import (
    check_not_chosen,
    is_opaque,
    opaque_defaults,
    specialise_call,
    static_key,
    static_parameters,
    suggest_static,
    with_static,
)
from gradc.derivatives.static_calls import accept_static
from gradc.derivatives.tree_compile import TreeCompiled, TreePlan, is_tree
from gradc.errors import ArgumentError, StaleStateError, StaticValueNeeded, user_facing, user_location
from gradc.ir.builder import Traced
from gradc.ir.cost import work
from gradc.ir.interpret import evaluate
from gradc.ir.types import parse_type
from gradc.passes import optimize
from gradc.stages import stage
from gradc.trace import bind_arguments, check_function, def_location, function_name, function_origin, trace_bound
from gradc.trace import inplace as traced_inplace  # noqa: F401 - for the facade (see Tracer below)
from gradc.trace import trace as _trace
from gradc.trace.control_trace import check_policy, loop_checkpoint
from gradc.trace.inplace_positions import as_value, fit  # noqa: F401 - for the facade (see Tracer below)
from gradc.trace.numpy_dispatch import parse_index  # noqa: F401 - for the facade (see Tracer below)
from gradc.trace.selection import float_inputs, select_arguments
from gradc.trace.signature import call_bound, callable_signature
from gradc.trace.tracer import Tracer  # noqa: F401 - torch.compile's storage handles build on the NumPy tracer
from gradc.trace.variadic import compile_arguments, is_variadic, per_call, with_arguments
from gradc.transforms import reverse as ad
from gradc.tree_util import keystr, tree_flatten, treedef_is_leaf
from gradc.tree_util.registry import node_of

if TYPE_CHECKING:  # the C target's objects (imported when target='c' is used) and the IR's types
    from gradc.backends.c.build import CCompiled
    from gradc.backends.c.unit import CUnit
    from gradc.ir.graph import Graph
    from gradc.ir.types import TensorType


@user_facing
@with_arguments(lambda *args, **kwargs: (len(args), tuple(kwargs)))
def trace(f: Callable, *example_args: Any, **example_kwargs: Any) -> Graph:
    """The IR graph of ``f`` for arguments like these; ``str(graph)`` is its text.

    >>> import numpy as np
    >>> print(trace(lambda x: np.exp(x).sum(), np.ones(2)))
    def lambda_(x: f64[2]) -> f64[]:
      t0: f64[2] = exp x
      t1: f64[] = sum t0 axes=(0,) keepdims=False
      return t1
    """
    f = check_function(f, "gradc.trace")
    f, example_args, example_kwargs, _ = specialise_call(f, example_args, example_kwargs, ())  # act=np.tanh
    return _trace(f, *example_args, **example_kwargs)


class Compiled:
    """A function compiled for one signature: its graphs, its source and the loaded functions.

    ``forward(*args)`` is the value, ``grad(*args)`` the gradient(s),
    ``value_and_grad(*args)`` both, and calling the object returns
    ``(value, gradients)``. ``source`` is the whole emitted module.

    It pickles by its source and graphs (the functions are loaded again from the source),
    so it can be sent to ``multiprocessing`` or ``concurrent.futures`` workers; a notebook
    shows its source, highlighted (``_repr_html_``).

    >>> import numpy as np, pickle
    >>> c = compile(lambda x: np.sum(x ** 2), np.ones(2))
    >>> isinstance(c, Compiled), c.wrt, c.grad(np.array([1.0, 2.0]))
    (True, ('x',), array([2., 4.]))
    >>> pickle.loads(pickle.dumps(c)).grad(np.array([1.0, 2.0]))
    array([2., 4.])
    """

    def __init__(self, graph: Graph, wrt_names: Sequence[str], wrt_is_tuple: bool, header: list[str] | None = None,
                 emit: Callable[..., str] = emit_module, defaults: dict[str, Any] | None = None,
                 n_aux: int | None = None) -> None:
        name = graph.name
        self.name = name
        self.wrt = tuple(wrt_names)
        if n_aux is not None:  # pytrees or has_aux: flat results, nested by the caller
            self._init_flat(graph, list(wrt_names), n_aux, header, emit)
            return
        wrt_text = ", ".join(wrt_names)
        with stage("gradc.transforms", f"differentiating {name} (reverse mode, wrt {wrt_text})"):
            grad_graph = ad.grad_graph(graph, list(wrt_names), name=f"{name}_grad")
            value_and_grad_graph = ad.value_and_grad_graph(graph, list(wrt_names), name=f"{name}_value_and_grad")
        with stage("gradc.passes", f"optimising {name} and its gradient") as timer:
            self.graph = optimize(graph)
            self.grad_graph = optimize(grad_graph)
            self.value_and_grad_graph = optimize(value_and_grad_graph)
            timer.note = f"{len(self.value_and_grad_graph.eqns)} equations in value and gradient"
        n = len(wrt_names)
        grads = tuple(range(n)) if wrt_is_tuple else 0
        vgrads = tuple(range(1, n + 1)) if wrt_is_tuple else 1
        grad_doc = f"Gradient of {name} with respect to ({wrt_text})."
        value_doc = f"Value of {name} and its gradient with respect to ({wrt_text})."
        if _value_comes_free(self.value_and_grad_graph, self.grad_graph, f"{name}_grad"):
            # one sweep: the gradient function computes the value as well (it adds next to nothing) and
            # returns it when asked; value_and_grad asks
            grad_fn = Function(f"{name}_grad", self.value_and_grad_graph, grad_doc[:-1] + f"; {_FLAG}=True returns "
                               "the value too.", returns=vgrads, sections=True, defaults=defaults,
                               with_flag=(_FLAG, (0, vgrads)))
            value_and_grad_fn = Function(f"{name}_value_and_grad", self.value_and_grad_graph, value_doc,
                                         defaults=defaults, delegate=(grad_fn.name, _FLAG))
        else:
            grad_fn = Function(f"{name}_grad", self.grad_graph, grad_doc, returns=grads, sections=True,
                               defaults=defaults)
            value_and_grad_fn = Function(f"{name}_value_and_grad", self.value_and_grad_graph, value_doc,
                                         returns=(0, vgrads), sections=True, defaults=defaults)
        functions = [Function(name, self.graph, f"Value of {name}.", defaults=defaults), grad_fn, value_and_grad_fn]
        if header is None:
            header = [f"Generated by gradc from {graph.origin} (reverse mode, wrt {wrt_text}). Do not edit."]
        target = "numpy" if emit is emit_module else "array_api"
        with stage(f"gradc.backends.{target}", f"emitting and loading {name}") as timer:
            self.source = emit(functions, header)
            namespace = load_source(self.source, name)
            timer.note = f"{self.source.count(chr(10))} lines"
        self.forward = namespace[name]
        self.grad = namespace[f"{name}_grad"]
        self.value_and_grad = namespace[f"{name}_value_and_grad"]

    def _init_flat(self, graph, wrt_names, n_aux, header, emit):
        """``grad`` returns ``(grads, aux)`` and ``value_and_grad`` ``(value, grads, aux)``, each a tuple of
        leaves: the last ``n_aux`` outputs of ``graph`` are passed through, never differentiated."""
        name = self.name
        grad_graph, value_and_grad_graph = gradient_graphs(graph, wrt_names, n_aux)
        self.graph = optimize(graph)
        self.grad_graph, self.value_and_grad_graph = optimize(grad_graph), optimize(value_and_grad_graph)
        n = len(wrt_names)
        grads, aux = tuple(range(n)), tuple(range(n, n + n_aux))
        wrt_text = ", ".join(wrt_names)
        functions = [Function(name, self.graph, f"Value of {name}."),
                     Function(f"{name}_grad", self.grad_graph, f"Gradient of {name} with respect to ({wrt_text}), "
                              "and the aux.", returns=(grads, aux), sections=True),
                     Function(f"{name}_value_and_grad", self.value_and_grad_graph,
                              f"Value of {name}, its gradient with respect to ({wrt_text}), and the aux.",
                              returns=(0, tuple(k + 1 for k in grads), tuple(k + 1 for k in aux)), sections=True)]
        if header is None:
            header = [f"Generated by gradc from {graph.origin} (reverse mode, wrt {wrt_text}). Do not edit."]
        self.source = emit(functions, header)
        namespace = load_source(self.source, name)
        self.forward = namespace[name]
        self.grad = namespace[f"{name}_grad"]
        self.value_and_grad = namespace[f"{name}_value_and_grad"]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.value_and_grad(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<gradc.Compiled {self.name} wrt {', '.join(self.wrt)}>"

    def __reduce__(self) -> tuple:
        # by the source: its functions belong to no importable module (gradc.backends.numpy.reload)
        return reduce_by_source(self)

    def _repr_html_(self) -> str:
        # the function and its gradient as mathematics above the code, when small (gradc.symbolic.display)
        return source_html(repr(self)[1:-1], self.source, "python", formula=formula_html(self.graph, self.wrt))


# computing the value beside the gradient costs at most this share more (``gradc.ir.cost``): then one function
# sweeps for both, and the module holds the sweep once
VALUE_SHARE = 0.01
_FLAG = "with_value"


def _value_comes_free(value_and_grad_graph: Graph, grad_graph: Graph, grad_name: str) -> bool:
    """Whether the gradient function can compute the value as well at (almost) no cost."""
    if {grad_name, _FLAG} & set(grad_graph.params):
        return False  # a parameter of that name would hide the function or the flag
    return work(value_and_grad_graph) <= (1.0 + VALUE_SHARE) * work(grad_graph)


def spec(text: str) -> TensorType:
    """A type in place of an example array: ``spec("f64[n,10]")`` compiles once for every ``n``.

    Names are sizes known only when the compiled function runs; the emitted functions read them
    from their arguments and check that every ``n`` agrees. A string annotation such as
    ``X: "f64[n,10]"`` says the same for an argument not given.

    >>> import numpy as np
    >>> c = compile(lambda x: np.mean(x ** 2), spec("f64[n]"))
    >>> c.grad(np.arange(3.0)), c.grad(np.ones(2))
    (array([0.        , 0.66666667, 1.33333333]), array([1., 1.]))
    """
    if not isinstance(text, str):
        raise ArgumentError(f"gradc.spec takes a type string, not {type(text).__name__} {text!r:.40}",
                            where=user_location(), hint='write a dtype and sizes, e.g. gradc.spec("f64[n,10]")')
    try:
        return parse_type(text)
    except ValueError as e:
        raise ArgumentError(f"gradc.spec({text!r}): {e}", where=user_location(),
                            hint='write a dtype and sizes, e.g. "f64[n,10]" or "f32[]"') from None


def _annotated(f, args, kwargs):
    """Keyword arguments for the parameters not given whose annotation is a type string (``"f64[n,10]"``)."""
    try:
        params = list(callable_signature(f).parameters.values())
    except (TypeError, ValueError):
        return kwargs
    filled = dict(kwargs)
    for k, p in enumerate(params):
        if k < len(args) or p.name in kwargs or not isinstance(p.annotation, str) or "[" not in p.annotation:
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            continue
        try:
            filled[p.name] = parse_type(p.annotation)
        except ValueError as e:
            raise ArgumentError(f"annotation of {p.name!r}: {e}", where=def_location(f)) from None
    return filled


@user_facing
@with_arguments(compile_arguments)
def compile(f: Callable, *example_args: Any, argnums: int | tuple | None = None, wrt: Any = None,
            target: str = "numpy", mode: str = "grad", checkpoint: str | int | None = None,
            max_trips: int | None = None, static_argnums: int | tuple | None = None,
            static_argnames: str | tuple | None = None, holomorphic: bool = False, sparse: Any = False,
            **example_kwargs: Any) -> Compiled | TreeCompiled | Unit | CCompiled | CUnit:
    """Trace, differentiate, optimise and emit ``f`` for arguments like ``example_args``.

    ``argnums`` or ``wrt`` choose the arguments differentiated, as for :func:`grad` (default: the
    first parameter, ``argnums=0``).
    ``mode`` (``grad``, ``vjp``, ``jvp``, ``jacobian``, ``hessian`` or ``hvp``) picks the
    derivative; for ``grad`` the result has ``forward``, ``grad`` and ``value_and_grad``,
    for the others ``forward`` and an attribute named by the mode (``gradc.derivatives.modes``).
    ``static_argnums``/``static_argnames`` (JAX's): arguments baked into the trace (hashable Python values,
    given among the example arguments); the emitted functions do not take them and the header records
    their values. A function or another value gradc cannot trace (a default ``act=np.tanh``) is static too.
    ``max_trips`` (C target): rows of the tape of a loop whose trip count is known only when it
    runs (a ``while`` loop's, in reverse mode; default 10000); a run past it raises ``ValueError``.
    ``holomorphic=True`` (JAX's): ``f`` is a holomorphic function of complex inputs; its derivative is
    ``f'(z)`` (see :func:`grad` and ``docs/complex.md``).
    ``sparse=True`` (or a sparsity pattern) with ``mode="jacobian"`` or ``"hessian"``: the attribute named by
    the mode returns a ``scipy.sparse`` CSR matrix computed by colouring (``docs/sparse.md``), on either target.

    >>> import numpy as np
    >>> c = compile(lambda x: np.sum(np.sin(x)), np.zeros(2))
    >>> c.grad(np.zeros(2))
    array([1., 1.])
    >>> compile(lambda x: x ** 2, np.ones(2), mode="jvp").jvp(np.ones(2), np.ones(2))
    (array([1., 1.]), array([2., 2.]))
    """
    f = check_function(f, "gradc.compile")
    check_policy(checkpoint)  # options are refused at the user's call, before tracing
    selection = select_arguments(f, argnums, wrt, what="gradc.compile")
    declared = static_parameters(f, static_argnums, static_argnames, "gradc.compile")
    assert selection is not None  # gradc.compile always selects (the first parameter by default)
    check_not_chosen(f, selection.names, declared, "gradc.compile")
    example_kwargs = _annotated(f, example_args, example_kwargs)
    given = bind_arguments(f, example_args, example_kwargs)
    specialised, example_args, example_kwargs, _ = specialise_call(f, example_args, example_kwargs, declared)
    if specialised is not f:  # compiled as the function of the other arguments, which also accepts the static ones
        compiled = compile(specialised, *example_args, wrt=selection.wrt, target=target, mode=mode,
                           checkpoint=checkpoint, max_trips=max_trips, holomorphic=holomorphic, sparse=sparse,
                           **example_kwargs)
        fixed = {k[0]: given[k[0]] for k in static_key(f, given, declared)}
        return accept_static(compiled, f, fixed)
    if target not in ("numpy", "c", "array_api"):
        raise ArgumentError(f"unknown target {target!r}", hint="use target='numpy', 'c' or 'array_api'")
    if mode not in MODES:
        raise ArgumentError(f"unknown mode {mode!r}", hint=f"use one of {', '.join(MODES)}")
    if target == "array_api" and mode != "grad":
        raise ArgumentError(f"target='array_api' emits mode='grad' only, not {mode!r}", hint="use target='numpy'")
    if max_trips is not None:
        if target != "c":
            raise ArgumentError(f"max_trips bounds the tapes of target='c' only, not target={target!r}",
                                hint="drop max_trips, or pass target='c'; gradc.while_loop(..., max_trips=N) "
                                     "bounds one loop on every target")
        from gradc.backends.c.bounds import check_max_trips

        max_trips = check_max_trips(max_trips)
    if sparse is not False:
        from gradc.derivatives.sparse import compile_sparse

        return compile_sparse(f, example_args, example_kwargs, selection, target, mode, sparse)
    # the default policy of the loops traced (see gradc.fori_loop)
    example_kwargs = _annotated(f, example_args, example_kwargs)
    bound = bind_arguments(f, example_args, example_kwargs)
    if any(is_tree(v) for v in bound.values()):  # dicts, lists, tuples of arrays: gradc.derivatives.tree_compile
        return _compile_tree(f, bound, selection, target, mode, checkpoint, max_trips)
    with loop_checkpoint(checkpoint):
        try:
            graph = _trace(f, *example_args, **example_kwargs)
        except StaticValueNeeded as e:
            suggest_static(e, bound.items())
            raise
    if mode != "grad":
        return _compile_mode(f, graph, example_args, example_kwargs, selection, target, mode, max_trips,
                             holomorphic)
    graph, _ = scalar_loss(graph)
    names, as_tuple = _check_grad_signature(f, graph, selection, holomorphic)
    if target == "c":
        from gradc.backends.c.build import CCompiled  # imported here: only the C target needs sympy and ctypes

        return CCompiled(graph, names, as_tuple, max_trips=max_trips,
                         defaults=defaults_left(f, example_args, example_kwargs))
    if target == "array_api":
        from gradc.backends.array_api import emit_module as emit_array_api  # array_api_compat when called

        return Compiled(graph, names, as_tuple, emit=emit_array_api, defaults=defaults_left(f, example_args,
                                                                                         example_kwargs))
    return Compiled(graph, names, as_tuple, defaults=defaults_left(f, example_args, example_kwargs))


def _compile_tree(f, bound, selection, target, mode, checkpoint, max_trips):
    """``compile`` of a function taking pytrees: its function of the leaves, compiled, behind their structures."""
    plan = TreePlan(f, bound)
    trees = ", ".join(plan.defs)
    if mode != "grad" or target == "array_api":
        option = f"mode={mode!r}" if mode != "grad" else f"target={target!r}"
        raise ArgumentError(f"gradc.compile: {option} takes arrays; the pytree arguments ({trees}) compile with "
                            "mode='grad' for target='numpy' or 'c'", where=user_location(),
                            hint="pass the leaves as separate arguments for this mode or target")
    with loop_checkpoint(checkpoint):
        graph = trace_bound(plan.flat_function(), plan.values())[0]
    graph = graph.replace(origin=function_origin(f))
    names = plan.chosen_leaves(selection, graph)
    ad.check_differentiable_output(graph, where=def_location(f))
    header = [f"Generated by gradc from {graph.origin} (reverse mode, wrt {', '.join(selection.names)}). Do not edit.",
              "Pytree arguments come flat, one per leaf:"]
    header += [f"  {p}: " + ", ".join(f"{p}{keystr(path)} as {leaf}" for path, leaf in
                                      zip(plan.defs[p].key_paths(), plan.leaf_names[slice(*plan.ranges[p])]))
               for p in plan.defs]
    flat: Compiled | CCompiled
    if target == "c":
        from gradc.backends.c.build import CCompiled  # imported here: only the C target needs sympy and ctypes

        flat = CCompiled(graph, names, len(names) > 1, max_trips=max_trips)
    else:
        flat = Compiled(graph, names, len(names) > 1, header=header)
    return TreeCompiled(plan, flat, selection, len(names))


def defaults_left(f, args, kwargs) -> dict:
    """The parameters the call leaves to ``f``'s defaults, with the default (Python numbers, bools, None and
    strings only): the emitted functions keep them, so they are called as ``f`` is.

    >>> defaults_left(lambda x, s=2.0, n=3: x, (1.0,), {"n": 4})
    {'s': 2.0}
    """
    try:
        signature = callable_signature(f)
        bound = signature.bind_partial(*args, **kwargs)
    except (TypeError, ValueError):
        return {}
    return {name: p.default for name, p in signature.parameters.items()
            if name not in bound.arguments and p.default is not p.empty
            and type(p.default) in (int, float, bool, str, type(None))}


def _compile_mode(f, graph, args, kwargs, selection, target, mode, max_trips=None, holomorphic=False):
    """``compile(..., mode=...)`` for a mode other than grad."""
    where = def_location(f)
    if kwargs:
        args = tuple(bind_arguments(f, args, kwargs).values())
    names = float_inputs(selection, graph, where)
    if mode in SCALAR_MODES:
        ad.check_differentiable_output(graph, what=mode, where=where, holomorphic=holomorphic)
    if holomorphic:
        ad.check_holomorphic_inputs(graph, names, what=f"gradc.compile(mode={mode!r})", where=where)
    if target == "c":
        from gradc.backends.c.unit import CUnit  # imported here: only the C target needs sympy and ctypes

        functions = mode_functions(f, graph, args, names, mode, holomorphic)
        if mode == "hvp":  # and FUNC_grad_and_hvp, as the NumPy unit has
            functions.append(grad_and_hvp_function(graph, names))
        return CUnit(functions, graph, names, mode, max_trips=max_trips)
    return Unit(f, graph, args, names, mode, holomorphic=holomorphic)


def _check_grad_signature(f, graph, selection, holomorphic=None):
    """The names ``selection`` chooses, checked against ``graph`` (float inputs), and a scalar-output check,
    with errors pointing at ``f``'s definition; and whether the gradients come as a tuple.
    ``holomorphic`` as for ``check_differentiable_output`` (None: the caller checks complex values itself)."""
    where = def_location(f)
    names = float_inputs(selection, graph, where)
    ad.check_differentiable_output(graph, where=where, holomorphic=holomorphic)
    if holomorphic:
        ad.check_holomorphic_inputs(graph, names, where=where)
    return names, selection.as_tuple


_ndarray = np.ndarray


def _arg_key(value):
    t = type(value)
    if t is np.ndarray:
        return (value.shape, value.dtype)
    if t is float:
        return float
    if t is int or t is bool or t is str or value is None:
        return (t, value)
    if isinstance(value, Traced):
        return None
    if isinstance(value, np.generic):
        return (t, value.item()) if isinstance(value, np.integer) else t
    if node_of(t) is not None:  # a pytree: its structure and its leaves' keys
        leaves, treedef = tree_flatten(value)
        keys = tuple([_arg_key(x) for x in leaves])
        return None if None in keys else (treedef, keys)
    return (t, id(t))


@user_facing
def check_options(checkpoint=None) -> None:
    """Refuse a bad option of a transform at the user's call (before any tracing, outside any ``with``)."""
    check_policy(checkpoint)


@user_facing
def _check_transform(f, argnums, wrt, checkpoint, what: str):
    """``f`` as gradc calls it and the arguments chosen, refused at the user's call when wrong."""
    f = check_function(f, what)
    selection = select_arguments(f, argnums, wrt, what=what)
    check_policy(checkpoint)
    return f, selection


@user_facing
def _check_static(f, static_argnums, static_argnames, selection, what: str) -> tuple:
    """The static parameters declared, refused at the user's call when one is not a parameter or is chosen for
    differentiation."""
    static = static_parameters(f, static_argnums, static_argnames, what)
    chosen = [n for n in (selection.names if selection is not None else ()) if n in static]
    if chosen:
        raise ArgumentError(f"{what}: {chosen[0]!r} is both differentiated (argnums/wrt) and static "
                            "(static_argnums/static_argnames)", where=user_location(),
                            hint="a static argument is a constant of the trace: choose another argument to "
                                 "differentiate, or do not make it static")
    return static


def _value_as_returned(entry, shape, out_def):
    """``value_and_grad``'s entry giving the value as ``f`` returned it: in its shape (``(1,)``, ``(1, 1)``) and
    its container (autograd's ``[loss]``)."""
    def call(*args):
        value, grads = entry(*args)
        return _as_returned(value, shape, out_def), grads
    return call


def _as_returned(value, shape, out_def):
    if shape is not None:
        value = np.reshape(value, shape)
    return value if out_def is None else out_def.unflatten([value])


class _Transform:
    """The callable behind ``grad`` / ``value_and_grad``: a cache from signatures to code.

    A cache entry is the emitted function itself, unless the trace read state besides
    the arguments (a global array, a closure cell, an attribute of ``self``): then it is
    wrapped in a check that the state is unchanged (see ``gradc.trace.state``).
    """

    def __init__(self, f, argnums, wrt, with_value, static_globals=True, checkpoint=None, has_aux=False,
                 static_argnums=None, static_argnames=None, holomorphic=False):
        what = "gradc.value_and_grad" if with_value else "gradc.grad"
        f, self.selection = _check_transform(f, argnums, wrt, checkpoint, what)
        self.static = _check_static(f, static_argnums, static_argnames, self.selection, what)
        self.static_cache: dict = {}  # static values -> the transform of f specialised to them
        self.loss_shape = None  # (1,), (1, 1), ...: the shape of a one-number output, set by each trace
        self.loss_container = None  # the list or tuple holding it (autograd's [loss]), set by each trace
        functools.update_wrapper(self, f, updated=())  # not f.__dict__: a transform of a transform keeps its own state
        self.checkpoint = checkpoint
        self.fun = f
        self.wrt = self.selection.wrt
        self.with_value = with_value
        self.has_aux = has_aux
        self.holomorphic = bool(holomorphic)
        self.static_globals = static_globals
        self.cache: dict = {}
        params = list(callable_signature(f).parameters.values())  # check_function made sure it can be read
        self.names = [p.name for p in params]
        positional = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        self.n_params = len(params) if positional else None  # keyword-only parameters: always bind
        self.specialising = bool(self.static or opaque_defaults(f))
        if self.specialising:  # bind every call: the static values choose the specialisation
            self.n_params = None

    def __call__(self, *args, **kwargs):
        if self.n_params is None and self.specialising:
            return self._call_static(bind_arguments(self.fun, args, kwargs))
        if kwargs or len(args) != self.n_params:  # keywords or defaults: bind to the full parameter list
            bound = bind_arguments(self.fun, args, kwargs)
            args = tuple(bound.values())
        # the signature key, inlined for the common argument types (this is the per-call cost)
        key = tuple([(a.shape, a.dtype) if type(a) is _ndarray else float if type(a) is float else _arg_key(a)
                     for a in args])
        entry = self.cache.get(key)
        if entry is None:
            return self._first_call(args, key)
        return entry(*args)

    def _call_static(self, values: dict):
        """The call through the transform of ``f`` specialised to the static values (declared or opaque)."""
        key = static_key(self.fun, values, self.static)
        if not key:
            return self._plain_call(tuple(values.values()))
        inner = self.static_cache.get(key)
        if inner is None:
            fixed = {k[0]: values[k[0]] for k in key}
            chosen = [n for n in self.selection.names if n in fixed]
            if chosen:
                raise ArgumentError(f"cannot differentiate with respect to {chosen[0]!r}: it is static (its value "
                                    f"{values[chosen[0]]!r:.40} is baked into the trace)", where=user_location(),
                                    hint="choose another argument with argnums/wrt, or do not make it static")
            inner = _Transform(with_static(self.fun, fixed), None, self.selection.wrt, self.with_value,
                               self.static_globals, self.checkpoint, self.has_aux, holomorphic=self.holomorphic)
            self.static_cache[key] = inner
        fixed_names = {k[0] for k in key}
        return call_bound(inner, {n: v for n, v in values.items() if n not in fixed_names})

    def _plain_call(self, args):
        key = tuple([_arg_key(a) for a in args])
        entry = self.cache.get(key)
        if entry is None:
            return self._first_call(args, key)
        return entry(*args)

    @user_facing
    def _first_call(self, args, key):
        if any(is_opaque(a) for a in args):  # a function or another constant passed where no default is one
            return self._call_static(dict(zip(self.names, args)))
        if None in key or tracing():  # called while tracing an outer function: inline the adjoint graph
            return self._inline(args)
        return self._compile(args, key)(*args)

    def _traced(self, args, inline: bool = False):
        """The flat function for these arguments' structures, its graph, the state read and the output layout,
        and how the gradients nest: ``(leaf names, as_tuple, positions)`` (positions None: as the names are)."""
        plan = flat_function(self.fun, dict(zip(self.names, args)), self.has_aux)
        with loop_checkpoint(self.checkpoint):
            graph, state, layout = plan.trace(plan.leaves(args), warn_reads=self.static_globals, inline=inline)
        graph, self.loss_shape = scalar_loss(graph)  # a loss of shape (1,) or (1, 1): its one number
        self.loss_container = None if treedef_is_leaf(layout.out_def) or self.has_aux else layout.out_def
        if plan.plain:
            names, as_tuple = _check_grad_signature(self.fun, graph, self.selection)
            self._check_complex(graph, names)
            return plan, graph, state, layout, (names, as_tuple, None)
        positions, as_tuple = plan.chosen(self.selection.wrt, "wrt")
        names = plan.leaf_names_of(positions, graph)
        one_element = treedef_is_leaf(layout.out_def) or layout.out_def.node_type in (list, tuple)
        if layout.n_out != 1 or not one_element:  # an array, or autograd's one-element list or tuple
            what = "value_and_grad" if self.with_value else "grad"
            raise ArgumentError(f"{graph.name} returns {layout.out_def} ({layout.n_out} leaves"
                                f"{' before the aux' if self.has_aux else ''}); {what} needs one scalar",
                                where=def_location(self.fun), hint="return a single scalar (e.g. a loss)" + (
                                    ", and the aux as the second of a pair" if self.has_aux else ""))
        self._check_complex(graph, names)
        return plan, graph, state, layout, (names, as_tuple, positions)

    def _check_complex(self, graph, names):
        """JAX's rules: a complex output needs ``holomorphic=True``, which needs complex inputs."""
        what = "value_and_grad" if self.with_value else "grad"
        where = def_location(self.fun)
        ad.check_differentiable_output(graph.replace(outputs=graph.outputs[:1]), what=what, where=where,
                                       holomorphic=self.holomorphic)
        if self.holomorphic:
            ad.check_holomorphic_inputs(graph, names, what=what, where=where)

    def _compiled(self, args):
        plan, graph, state, layout, (names, as_tuple, positions) = self._traced(args)
        if positions is None:
            return Compiled(graph, names, as_tuple), None, state
        compiled = Compiled(graph, names, True, n_aux=layout.n_flat - layout.n_out)
        return compiled, GradientNesting(plan, layout, positions, as_tuple, self.with_value), state

    def _compile(self, args, key):
        compiled, nesting, state = self._compiled(args)
        entry = compiled.value_and_grad if self.with_value else compiled.grad
        if nesting is not None:
            entry = nesting.wrap(entry)
        if self.with_value and (self.loss_shape is not None or self.loss_container is not None) and not self.has_aux:
            entry = _value_as_returned(entry, self.loss_shape, self.loss_container)
        if state:
            entry = self._guarded(entry, state.changed, key)
        self.cache[key] = entry
        return entry

    def _guarded(self, entry, changed, key):
        def guarded(*args):
            read = changed()
            if read is None:
                return entry(*args)
            return self._stale(read, args, key)
        return guarded

    @user_facing
    def _stale(self, read, args, key):
        """A value read at trace time changed: re-trace (``static_globals=False``) or say so."""
        if not self.static_globals:
            return self._compile(args, key)(*args)
        name = function_name(self.fun)
        raise StaleStateError(f"{read.label} changed since {name} was traced (read at {read.where}, its old value "
                              "is baked into the compiled code)", where=user_location(),
                              hint=f"pass {read.label} as an argument, or use gradc.grad({name}, "
                                   "static_globals=False) to re-trace when it changes")

    def _inline(self, args):
        plan, graph, _, layout, (names, as_tuple, positions) = self._traced(args, inline=True)
        n_aux = layout.n_flat - layout.n_out
        grad_graph, value_and_grad_graph = gradient_graphs(graph, names, n_aux)
        chosen = optimize(value_and_grad_graph if self.with_value else grad_graph)  # as the emitted code runs
        leaves = plan.leaves(args)
        outs = evaluate(chosen, *[a for a, p in zip(leaves, graph.params) if p not in graph.static], *layout.captured)
        if self.with_value and (self.loss_shape is not None or self.loss_container is not None) and not self.has_aux:
            outs = [_as_returned(outs[0], self.loss_shape, self.loss_container), *outs[1:]]
        if positions is None:
            if self.with_value:
                return outs[0], (tuple(outs[1:]) if as_tuple else outs[1])
            return tuple(outs) if as_tuple else outs[0]
        return GradientNesting(plan, layout, positions, as_tuple, self.with_value).nest(outs)

    def __reduce__(self) -> str | tuple:
        return reduce_transform(self)

    @user_facing
    def compiled(self, *args, **kwargs):
        """The :class:`Compiled` object (source, graphs) for these arguments."""
        values = bind_arguments(self.fun, args, kwargs)
        key = static_key(self.fun, values, self.static)
        if key:  # the specialisation's (its graph has no static parameters)
            self._call_static(values)
            fixed = {k[0] for k in key}
            inner = self.static_cache[key]
            return inner._compiled(tuple(v for n, v in values.items() if n not in fixed))[0]
        return self._compiled(tuple(values.values()))[0]


def grad(f: Callable | None = None, argnums: int | tuple | None = None, has_aux: bool = False, *, wrt: Any = None,
         static_globals: bool = True, checkpoint: str | int | None = None,
         static_argnums: int | tuple | None = None, static_argnames: str | tuple | None = None,
         holomorphic: bool = False) -> Callable:
    """Gradient of scalar-valued ``f`` with respect to the arguments ``argnums`` or ``wrt`` choose.

    ``argnums`` is JAX's (an int or a tuple of ints; negative counts from the end; positional too, as
    JAX's and autograd's ``grad(f, 1)``); ``wrt`` means
    the same and also takes names (``wrt="w"``, ``wrt=("w", 2)``). An int or a name gives the
    gradient itself, a tuple a tuple of gradients in that order. Neither given: the first
    parameter (``argnums=0``, as in JAX: a loss takes its parameters first, its data after).
    ``gradc.trace.selection`` has the rules and the errors.

    Usable as ``grad(f)``, ``@grad`` and ``@grad(wrt=("w", "b"))``. ``f`` may be any callable:
    a def or lambda, a ``functools.partial``, a ``functools.wraps`` wrapper (called with its own
    parameters), a callable object, a bound method, a NumPy ufunc or function (``grad(np.sin)``)
    or a builtin (``grad(abs)``): ``gradc.trace.signature.callable_signature`` reads its parameters.

    ``static_argnums``/``static_argnames`` (JAX's) declare arguments static: hashable Python values
    baked into the trace, a new value traces again (``gradc.derivatives.static_args``). An argument
    gradc cannot trace (a function: a default ``act=np.tanh``) is static by itself.

    The output is a scalar, or one number in another shape (``(1,)``, ``(1, 1)``: as autograd and
    torch's ``backward()`` take it), or a one-element list or tuple (autograd-style code); anything
    else (two values, a dict) is an error, as in JAX. Called inside a function gradc is tracing,
    ``grad`` inlines its derivative; the inner function may close over the outer traced values,
    which it holds constant (``gradc.derivatives.closures``: no perturbation confusion).

    Arguments may be pytrees (``gradc.tree_util``: dicts, lists, tuples, named tuples,
    registered classes): the gradient of such an argument has its structure, its float
    leaves differentiated (an int or static leaf in a differentiated argument is an error).
    With ``has_aux=True``, ``f`` returns ``(loss, aux)`` and the result is ``(gradient, aux)``;
    aux is any pytree, returned as computed and never differentiated (see
    ``gradc.derivatives.flat_function`` for aux values not computed from the inputs).

    What ``f`` reads besides its arguments (globals, closure cells, attributes of
    ``self``) is read once, at trace time, with a GradcWarning for each array. A call
    after such a value changed raises StaleStateError; with ``static_globals=False``
    it re-traces instead (and does not warn).

    ``checkpoint`` is the default memory policy of the loops ``f`` runs on traced
    values: None (tape every iteration), ``"sqrt"`` or an int k (keep a state every
    k iterations and recompute the rest in the backward sweep).

    >>> import numpy as np
    >>> @grad(wrt=("a", "b"))
    ... def f(a, b):
    ...     return a * b
    >>> f(2.0, 3.0)
    (3.0, 2.0)
    >>> grad(lambda a, b: a * b, argnums=1)(2.0, 3.0)
    2.0
    >>> grad(lambda p, x: np.sum(p["w"] * x) + p["b"])({"w": np.ones(2), "b": 0.5}, np.array([3.0, 4.0]))
    {'b': 1.0, 'w': array([3., 4.])}
    >>> grad(lambda x, n: x ** n, static_argnums=1)(2.0, 3)
    12.0
    >>> grad(lambda x: x * grad(lambda y: x + y)(x))(5.0)
    1.0

    Complex numbers follow JAX's convention (``docs/complex.md``): of a real-valued ``f`` of
    ``z = x + iy`` the gradient is ``df/dx - i df/dy``; a complex-valued ``f`` needs
    ``holomorphic=True`` (its inputs complex too), and then the gradient is ``f'(z)``.

    >>> complex(grad(lambda z: np.abs(z) ** 2)(3 + 4j))
    (6-8j)
    >>> complex(grad(lambda z: z ** 2, holomorphic=True)(3 + 4j))
    (6+8j)
    """
    check_options(checkpoint)  # refused at the user's call, not when the first call traces
    options = dict(with_value=False, static_globals=static_globals, checkpoint=checkpoint, has_aux=has_aux,
                   static_argnums=static_argnums, static_argnames=static_argnames, holomorphic=holomorphic)
    if f is None:
        return lambda fun: (per_call(_Transform, fun, (argnums, wrt), options, "grad")
                            if is_variadic(fun) else _Transform(fun, argnums, wrt, **options))
    if is_variadic(f):  # f(*args): one transform per call arity (gradc.trace.variadic)
        return per_call(_Transform, f, (argnums, wrt), options, "grad")
    return _Transform(f, argnums, wrt, **options)


def value_and_grad(f: Callable | None = None, argnums: int | tuple | None = None, has_aux: bool = False, *,
                   wrt: Any = None, static_globals: bool = True, checkpoint: str | int | None = None,
                   static_argnums: int | tuple | None = None, static_argnames: str | tuple | None = None,
                   holomorphic: bool = False) -> Callable:
    """``(f(...), gradient)`` of scalar-valued ``f``; ``argnums``/``wrt`` and ``static_globals`` as for
    :func:`grad` (default: the first parameter); pytrees as for :func:`grad`.

    With ``has_aux=True`` (``f`` returns ``(loss, aux)``) the result is ``((loss, aux), gradient)``.

    >>> vg = value_and_grad(lambda x: x ** 3)
    >>> vg(2.0)
    (8.0, 12.0)
    >>> value_and_grad(lambda x: (x ** 2, {"double": 2 * x}), has_aux=True)(3.0)
    ((9.0, {'double': 6.0}), 6.0)
    """
    check_options(checkpoint)
    options = dict(with_value=True, static_globals=static_globals, checkpoint=checkpoint, has_aux=has_aux,
                   static_argnums=static_argnums, static_argnames=static_argnames, holomorphic=holomorphic)
    if f is None:
        return lambda fun: (per_call(_Transform, fun, (argnums, wrt), options, "value_and_grad")
                            if is_variadic(fun) else _Transform(fun, argnums, wrt, **options))
    if is_variadic(f):  # f(*args): one transform per call arity (gradc.trace.variadic)
        return per_call(_Transform, f, (argnums, wrt), options, "value_and_grad")
    return _Transform(f, argnums, wrt, **options)


__all__ = ["Compiled", "compile", "grad", "spec", "trace", "value_and_grad", "function_name"]
