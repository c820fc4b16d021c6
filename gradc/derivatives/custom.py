"""User-written derivative rules, inlined into the emitted code: ``custom_vjp``, ``custom_jvp``, ``stop_gradient``.

The user's function runs as usual (traced, so its value is computed by its own
ops); its result is marked with the ``custom_call`` op, whose derivative is the
user's rule, traced in NumPy like the function itself. A ``custom_jvp`` rule
serves reverse mode too, by transposition (it is linear in the tangents); a
``custom_vjp`` rule serves reverse mode only, and forward mode over it is a clear
error, as in JAX. Arguments, results and residuals may be pytrees (``gradc.tree_util``):
each traced leaf of the result is marked on its own, and the rule for it sees a cotangent
of the result's structure with zeros elsewhere (rules are linear in the cotangent).

>>> import numpy as np, gradc
>>> @custom_vjp
... def clip_gradient(x):
...     return x
>>> clip_gradient.defvjp(lambda x: (x, ()), lambda res, g: (np.clip(g, -1.0, 1.0),))
>>> gradc.grad(lambda x: np.sum(clip_gradient(x) * 5.0))(np.ones(2))
array([1., 1.])
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from gradc.derivatives.transforms import jvp, vjp
from gradc.errors import ArgumentError, TraceError, user_location
from gradc.ir.builder import Builder, Traced
from gradc.ir.interpret import evaluate
from gradc.ops import autodiff
from gradc.ops import elementwise as ew
from gradc.ops import reduce as red
from gradc.trace import bind_arguments, check_function, function_name
from gradc.trace.tracer import Tracer
from gradc.transforms.reverse import grad_graph
from gradc.tree_util import tree_flatten, tree_leaves, tree_structure, treedef_is_leaf

stop_gradient = autodiff.stop_gradient


def _tracer(value):
    return Tracer(value.builder, value.atom) if isinstance(value, Traced) else value


def _as_type(value, like: Traced, what: str):
    """A rule's result ``value`` as a traced value of ``like``'s shape and dtype (None: zeros)."""
    t = like.aval
    if value is None:
        return ew.zeros_like(like)
    if isinstance(value, Traced):
        if value.aval.shape != t.shape:
            raise TraceError(f"{what} has shape {value.aval.shape}, expected {t.shape}",
                             hint="a rule returns one value per argument, shaped like that argument")
        return ew.astype(value, t.dtype)
    arr = np.asarray(value)
    if arr.shape not in ((), t.shape):
        raise TraceError(f"{what} has shape {arr.shape}, expected {t.shape}",
                         hint="a rule returns one value per argument, shaped like that argument")
    return ew.coerce(arr.astype(t.np_dtype), t.dtype, t.shape, like)


def _flatten_args(args):
    """The leaves of all the arguments, and each argument's structure."""
    flat, defs = [], []
    for a in args:
        leaves, treedef = tree_flatten(a)
        flat.extend(leaves)
        defs.append(treedef)
    return flat, tuple(defs)


def _unflatten_args(defs, flat) -> list:
    out, i = [], 0
    for d in defs:
        out.append(d.unflatten(flat[i:i + d.num_leaves]))
        i += d.num_leaves
    return out


def _zeros_like(value):
    """A zero cotangent for an output leaf: traced (the rule runs in a trace) or a NumPy zero."""
    if isinstance(value, Traced):
        return _tracer(ew.zeros_like(value))
    return np.zeros_like(np.asarray(value, dtype=np.float64))


class _Structure:
    """One call structure: the arguments' leaves (traced ones replaced when a rule runs) and structures."""

    def __init__(self, args):
        self.flat, self.defs = _flatten_args(args)
        self.positions = [i for i, a in enumerate(self.flat) if isinstance(a, Traced)]
        self.xs = [self.flat[i] for i in self.positions]
        statics = tuple(a if isinstance(a, (int, float, bool, str, type(None))) else id(a)
                        for i, a in enumerate(self.flat) if i not in set(self.positions))
        self.key = (self.defs, tuple(self.positions), len(self.flat), statics)

    def args_with(self, xs, fill=None) -> list:
        """The arguments with the traced leaves replaced by ``xs`` (the others ``fill(leaf)`` when given)."""
        flat = [fill(a) for a in self.flat] if fill is not None else list(self.flat)
        for i, x in zip(self.positions, xs):
            flat[i] = _tracer(x)
        return _unflatten_args(self.defs, flat)

    def leaf_cotangents(self, cts, what: str) -> list:
        """Per-argument cotangents (pytrees, None for zero) as one per leaf (None for zero)."""
        flat = []
        for k, (d, c) in enumerate(zip(self.defs, cts)):
            if c is None or treedef_is_leaf(d):
                flat.extend([c] * d.num_leaves if c is None else [c])
            else:
                flat.extend(d.flatten_up_to(c, f"{what} for argument {k}"))
        return flat


def _mark(owner, y, residuals, call: _Structure, make_rule):
    """``y`` with each traced leaf marked by ``custom_call``; ``make_rule(out_def, k, others)`` is the rule for
    leaf ``k`` (one per call structure, output structure and leaf), ``others`` the other traced leaves."""
    out_leaves, out_def = tree_flatten(y)
    traced = [k for k, leaf in enumerate(out_leaves) if isinstance(leaf, Traced)]
    if not traced:
        return y  # its value does not depend on a traced argument: nothing to differentiate
    others = [out_leaves[k] for k in traced] if len(traced) > 1 else []  # their zero cotangents are shaped by them
    constants = {j: leaf for j, leaf in enumerate(out_leaves) if j not in traced}
    marked = list(out_leaves)
    for k in traced:
        key = (call.key, out_def, k)
        if key not in owner.keys:
            owner.keys[key] = autodiff.register_rule(make_rule(out_def, k, (traced, constants)))
        marked[k] = autodiff.custom_call(out_leaves[k], list(residuals) + others, call.xs, owner.keys[key])
    return out_def.unflatten(marked)


def _cotangent_tree(ct, out_def, k, leaves_info, others):
    """The output's cotangent: ``ct`` at leaf ``k``, zeros elsewhere (shaped by the other leaves: the traced
    ones are ``others``, in the custom call's inputs; ``leaves_info = (traced positions, constant leaves)``)."""
    traced, constants = leaves_info
    by_leaf = {**constants, **dict(zip(traced, others))}
    return out_def.unflatten([_tracer(ct) if j == k else _zeros_like(by_leaf[j]) for j in range(out_def.num_leaves)])


def _no_generator(fun, what):
    """A block or a function with a rule returns its value: a generator or async function is refused now."""
    import inspect
    inner = inspect.unwrap(fun)
    if inspect.isgeneratorfunction(inner) or inspect.isasyncgenfunction(inner) or inspect.iscoroutinefunction(inner):
        raise ArgumentError(f"{what}: {function_name(fun)} is a generator or async function, not a function "
                            "returning a value", where=user_location(), hint="define it with def and return the value")


class _WithRule:
    """What ``custom_vjp``, ``custom_jvp`` and ``checkpoint`` share: the wrapped function, and one rule
    key per call structure (which arguments are traced, the values of the others)."""

    def __init__(self, fun: Callable):
        check_function(fun, f"gradc.{type(self).__name__}")
        _no_generator(fun, f"gradc.{type(self).__name__}")
        functools.update_wrapper(self, fun, updated=())  # not fun.__dict__: a rule of a transform keeps its own state
        self.fun = fun
        self.name = function_name(fun)
        self.keys: dict = {}  # call structure -> rule key

    def _arguments(self, args, kwargs):
        """The arguments as a tuple in parameter order (tracing passes them by name)."""
        return tuple(bind_arguments(self.fun, args, kwargs).values()) if kwargs else args


class custom_vjp(_WithRule):  # noqa: N801 (JAX's spelling)
    """A function with its own reverse-mode rule: ``f.defvjp(fwd, bwd)``.

    ``fwd(*args) -> (value, residuals)`` (residuals: a tuple of arrays, saved for the
    backward sweep); ``bwd(residuals, ct) -> one cotangent per argument`` (None for
    an argument that gets none). Both are written in NumPy and inlined into the
    emitted code.

    >>> import numpy as np, gradc
    >>> @custom_vjp
    ... def softplus(x):
    ...     return np.log1p(np.exp(x))
    >>> def fwd(x):
    ...     s = 1.0 / (1.0 + np.exp(-x))
    ...     return np.log1p(np.exp(x)), (s,)
    >>> softplus.defvjp(fwd, lambda res, g: (g * res[0],))
    >>> gradc.grad(lambda x: np.sum(softplus(x)))(np.zeros(2))
    array([0.5, 0.5])
    """

    def __init__(self, fun: Callable):
        super().__init__(fun)
        self.bwd = None

    def defvjp(self, fwd, bwd):
        """Set the rule (see the class docstring); returns None, as JAX's does."""
        check_function(fwd, f"{self.name}.defvjp: fwd")
        check_function(bwd, f"{self.name}.defvjp: bwd")
        self.fwd, self.bwd = fwd, bwd
        self.keys.clear()

    def __call__(self, *args, **kwargs):
        args = self._arguments(args, kwargs)
        call = _Structure(args)
        if not call.positions:
            return self.fun(*args)
        if self.bwd is None:
            raise TraceError(f"{self.name} is a custom_vjp function without a rule", where=user_location(),
                             hint=f"call {self.name}.defvjp(fwd, bwd) before using it")
        out = self.fwd(*args)
        if not isinstance(out, tuple) or len(out) != 2:
            raise TraceError(f"the fwd rule of {self.name} must return (value, residuals)", where=user_location(),
                             hint="e.g. `return y, (x,)`")
        y, residuals = out
        if treedef_is_leaf(tree_structure(residuals)):
            residuals = (residuals,)  # a single residual reaches bwd as a 1-tuple
        res_leaves, res_def = tree_flatten(residuals)
        bound = [i for i, r in enumerate(res_leaves) if isinstance(r, (Traced, np.ndarray, float, np.generic))]
        static = {i: r for i, r in enumerate(res_leaves) if i not in set(bound)}

        def make_rule(out_def, k, traced):
            return autodiff.Rule(self.name, vjp=functools.partial(
                self._vjp, call=call, res=(res_def, bound, static), out=(out_def, k, traced), nargs=len(args)))

        return _mark(self, y, [res_leaves[i] for i in bound], call, make_rule)

    def _vjp(self, ct, residuals, xs, call, res, out, nargs):
        res_def, bound, static = res
        out_def, k, traced = out
        res_leaves = [None] * res_def.num_leaves
        for i, r in zip(bound, residuals):
            res_leaves[i] = _tracer(r)
        for i, r in static.items():
            res_leaves[i] = r
        others = residuals[len(bound):]
        cts = self.bwd(res_def.unflatten(res_leaves),
                       _cotangent_tree(ct, out_def, k, traced, others))
        cts = tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)
        if len(cts) != nargs:
            raise ArgumentError(f"the bwd rule of {self.name} returned {len(cts)} cotangents for "
                                f"{nargs} arguments", hint="return one per argument (None for none)")
        flat = call.leaf_cotangents(cts, f"the cotangent {self.name}'s bwd returns")
        return [_as_type(flat[i], x, f"the cotangent {self.name}'s bwd returns for leaf {i}")
                for i, x in zip(call.positions, xs)]


class custom_jvp(_WithRule):  # noqa: N801 (JAX's spelling)
    """A function with its own forward-mode rule: ``f.defjvp(rule)``; reverse mode transposes it.

    ``rule(primals, tangents) -> (value, tangent)``, written in NumPy and linear in the tangents.

    >>> import numpy as np, gradc
    >>> @custom_jvp
    ... def safe_norm(x):
    ...     return np.sqrt(np.sum(x * x))
    >>> def rule(primals, tangents):
    ...     (x,), (dx,) = primals, tangents
    ...     n = np.sqrt(np.sum(x * x))
    ...     return n, np.sum(x * dx) / np.maximum(n, 1e-12)
    >>> safe_norm.defjvp(rule)
    >>> [float(v) for v in gradc.jvp(safe_norm, (np.array([3.0, 4.0]),), (np.array([1.0, 0.0]),))]
    [5.0, 0.6]
    >>> gradc.grad(safe_norm)(np.array([3.0, 4.0]))
    array([0.6, 0.8])
    """

    def __init__(self, fun: Callable):
        super().__init__(fun)
        self.rule = None

    def defjvp(self, rule):
        """Set the rule (see the class docstring); returns None."""
        check_function(rule, f"{self.name}.defjvp")
        self.rule = rule
        self.keys.clear()

    def __call__(self, *args, **kwargs):
        args = self._arguments(args, kwargs)
        call = _Structure(args)
        if not call.positions:
            return self.fun(*args)
        if self.rule is None:
            raise TraceError(f"{self.name} is a custom_jvp function without a rule", where=user_location(),
                             hint=f"call {self.name}.defjvp(rule) before using it")

        def make_rule(out_def, k, traced):
            rule_call = _Call(self, call, k)
            return autodiff.Rule(self.name, vjp=rule_call.vjp, jvp=rule_call.jvp)

        return _mark(self, self.fun(*args), (), call, make_rule)


class _Call:
    """One call structure of a ``custom_jvp`` function and one leaf ``k`` of its result."""

    def __init__(self, fn: custom_jvp, call: _Structure, k: int):
        self.fn, self.call, self.k = fn, call, k

    def _rule_tangent(self, xs, tangents):
        primals = self.call.args_with(xs)
        zero = [t if t is not None else ew.zeros_like(x) for x, t in zip(xs, tangents)]
        dots = self.call.args_with(zero, fill=lambda a: 0.0)
        out = self.fn.rule(tuple(primals), tuple(dots))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TraceError(f"the jvp rule of {self.fn.name} must return (value, tangent)",
                             hint="e.g. `return y, dy`")
        leaves = tree_leaves(out[1])
        if len(leaves) <= self.k:
            raise TraceError(f"the jvp rule of {self.fn.name} returned a tangent of {len(leaves)} leaves for an "
                             f"output of more", hint="return a tangent with the output's structure")
        return leaves[self.k]

    def jvp(self, tangents, residuals, xs, out):
        return _as_type(self._rule_tangent(xs, tangents), out, f"the tangent {self.fn.name}'s jvp rule returns")

    def vjp(self, ct, residuals, xs):
        """The transpose of the (linear) tangent map, by reverse mode over the rule: grad_d <ct, rule(x; d)>."""
        b = Builder(taken={f"x{i}" for i in range(len(xs))} | {f"d{i}" for i in range(len(xs))} | {"ct"})
        mini_xs = [Traced(b, b.input(f"x{i}", x.aval)) for i, x in enumerate(xs)]
        mini_ds = [Traced(b, b.input(f"d{i}", x.aval)) for i, x in enumerate(xs)]
        mini_ct = Traced(b, b.input("ct", ct.aval))
        dot = self.jvp(mini_ds, (), mini_xs, mini_ct)
        s = ew.mul(dot, mini_ct)
        s = red.sum_(s) if s.aval.shape else s
        inner = b.graph(f"{self.fn.name}_transposed", [s.atom])
        g = grad_graph(inner, [f"d{i}" for i in range(len(xs))])
        zeros = [ew.zeros_like(x) for x in xs]
        return evaluate(g, *xs, *zeros, ct)


class checkpoint(_WithRule):  # noqa: N801 (JAX's spelling, as a decorator)
    """``fn`` whose intermediate values are recomputed in the backward sweep instead of kept for it.

    Under reverse mode only the block's inputs are kept; the backward sweep runs the
    block again from them (visible in the emitted code: its operations appear a second
    time, after the ``recompute`` of its inputs) and differentiates that copy. Forward
    mode differentiates the block as usual. Arguments and result may be pytrees.

    >>> import numpy as np, gradc
    >>> block = checkpoint(lambda x: np.sin(np.sin(x)))
    >>> c = gradc.compile(lambda x: np.sum(block(x) ** 2), np.ones(3))
    >>> print(c.source.split("# backward\\n")[1].split("\\n\\n")[0])  # the inner sin again, from the input
        t17 = x
        t25 = np.sin(np.sin(x)) * np.cos(np.sin(t17))
        x_bar = 2.0 * (t25 * np.cos(t17))
        return x_bar
    """

    def __call__(self, *args, **kwargs):
        args = self._arguments(args, kwargs)
        call = _Structure(args)
        if not call.positions:
            return self.fun(*args)

        def make_rule(out_def, k, traced):
            block = _Block(self.fun, call, (out_def, k, traced))
            return autodiff.Rule(f"{self.name}_checkpoint", vjp=block.vjp, jvp=block.jvp)

        return _mark(self, self.fun(*args), (), call, make_rule)


class _Block:
    """One call structure of a checkpointed function and one leaf of its result: the block rerun from its
    inputs for each rule."""

    def __init__(self, fun, call: _Structure, out):
        self.fun, self.call, self.out = fun, call, out

    def vjp(self, ct, residuals, xs):
        out_def, k, traced = self.out
        again = self.call.args_with([autodiff.recompute(x) for x in xs])
        _, pullback = vjp(self.fun, *again)
        cts = pullback(_cotangent_tree(ct, out_def, k, traced, residuals))
        flat = self.call.leaf_cotangents(cts, "the checkpointed block's cotangent")
        return [_as_type(flat[i], x, "the checkpointed block's cotangent") for i, x in zip(self.call.positions, xs)]

    def jvp(self, tangents, residuals, xs, out):
        primals = self.call.args_with(xs)
        zero = [t if t is not None else ew.zeros_like(x) for x, t in zip(xs, tangents)]
        # constants: no tangent
        dots = self.call.args_with(zero, fill=lambda a: np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0)
        _, dot = jvp(self.fun, tuple(primals), tuple(dots))
        return _as_type(tree_leaves(dot)[self.out[1]], out, "the checkpointed block's tangent")
