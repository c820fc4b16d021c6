"""User-written derivative rules, inlined into the emitted code: ``custom_vjp``, ``custom_jvp``, ``stop_gradient``.

The user's function runs as usual (traced, so its value is computed by its own
ops); its result is marked with the ``custom_call`` op, whose derivative is the
user's rule, traced in NumPy like the function itself. A ``custom_jvp`` rule
serves reverse mode too, by transposition (it is linear in the tangents); a
``custom_vjp`` rule serves reverse mode only, and forward mode over it is a clear
error, as in JAX.

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


def _split_args(args):
    """The traced arguments (the custom op's inputs) and their positions."""
    positions = [i for i, a in enumerate(args) if isinstance(a, Traced)]
    return positions, [args[i] for i in positions]


def _mark(name, y, residuals, xs, key):
    if isinstance(y, (tuple, list)):
        raise TraceError(f"{name} returns {len(y)} values; a function with a custom rule returns one array here",
                         hint="split it into functions of one output each")
    if not isinstance(y, Traced):
        return y  # its value does not depend on a traced argument: nothing to differentiate
    return autodiff.custom_call(y, list(residuals), xs, key)


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
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.name = function_name(fun)
        self.keys: dict = {}  # call structure -> rule key

    def _arguments(self, args, kwargs):
        """The arguments as a tuple in parameter order (tracing passes them by name)."""
        return tuple(bind_arguments(self.fun, args, kwargs).values()) if kwargs else args

    def _rule_key(self, args, make_rule):
        """The traced arguments and the key of this call structure's rule (``make_rule(positions)`` on a miss)."""
        positions, xs = _split_args(args)
        statics = tuple(a if isinstance(a, (int, float, bool, str, type(None))) else id(a)
                        for i, a in enumerate(args) if i not in positions)
        structure = (tuple(positions), len(args), statics)
        if structure not in self.keys:
            self.keys[structure] = autodiff.register_rule(make_rule(positions))
        return xs, self.keys[structure]


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
        if not any(isinstance(a, Traced) for a in args):
            return self.fun(*args)
        if self.bwd is None:
            raise TraceError(f"{self.name} is a custom_vjp function without a rule", where=user_location(),
                             hint=f"call {self.name}.defvjp(fwd, bwd) before using it")
        out = self.fwd(*args)
        if not isinstance(out, tuple) or len(out) != 2:
            raise TraceError(f"the fwd rule of {self.name} must return (value, residuals)", where=user_location(),
                             hint="e.g. `return y, (x,)`")
        y, residuals = out
        residuals = tuple(residuals) if isinstance(residuals, (tuple, list)) else (residuals,)
        xs, key = self._rule_key(args, lambda positions: autodiff.Rule(
            self.name, vjp=functools.partial(self._vjp, positions=positions, nargs=len(args))))
        return _mark(self.name, y, residuals, xs, key)

    def _vjp(self, ct, residuals, xs, positions, nargs):
        cts = self.bwd(tuple(_tracer(r) for r in residuals), _tracer(ct))
        cts = tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)
        if len(cts) != nargs:
            raise ArgumentError(f"the bwd rule of {self.name} returned {len(cts)} cotangents for "
                                f"{nargs} arguments", hint="return one per argument (None for none)")
        return [_as_type(cts[i], x, f"the cotangent {self.name}'s bwd returns for argument {i}")
                for i, x in zip(positions, xs)]


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
        if not any(isinstance(a, Traced) for a in args):
            return self.fun(*args)
        if self.rule is None:
            raise TraceError(f"{self.name} is a custom_jvp function without a rule", where=user_location(),
                             hint=f"call {self.name}.defjvp(rule) before using it")

        def make_rule(positions):
            call = _Call(self, list(args), positions)
            return autodiff.Rule(self.name, vjp=call.vjp, jvp=call.jvp)

        xs, key = self._rule_key(args, make_rule)
        return _mark(self.name, self.fun(*args), (), xs, key)


class _Call:
    """One call structure of a ``custom_jvp`` function: which arguments are traced, the others' values."""

    def __init__(self, fn: custom_jvp, args: list, positions: list):
        self.fn, self.args, self.positions = fn, args, positions

    def _rule_tangent(self, xs, tangents):
        primals = list(self.args)
        dots = [0.0] * len(primals)
        for i, x, t in zip(self.positions, xs, tangents):
            primals[i] = _tracer(x)
            dots[i] = _tracer(t if t is not None else ew.zeros_like(x))
        out = self.fn.rule(tuple(primals), tuple(dots))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TraceError(f"the jvp rule of {self.fn.name} must return (value, tangent)",
                             hint="e.g. `return y, dy`")
        return out[1]

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
    mode differentiates the block as usual. The block returns one array.

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
        if not any(isinstance(a, Traced) for a in args):
            return self.fun(*args)

        def make_rule(positions):
            block = _Block(self.fun, list(args), positions)
            return autodiff.Rule(f"{self.name}_checkpoint", vjp=block.vjp, jvp=block.jvp)

        xs, key = self._rule_key(args, make_rule)
        return _mark(self.name, self.fun(*args), (), xs, key)


class _Block:
    """One call structure of a checkpointed function: the block rerun from its inputs for each rule."""

    def __init__(self, fun, args, positions):
        self.fun, self.args, self.positions = fun, args, positions

    def _call(self, xs):
        full = list(self.args)
        for i, x in zip(self.positions, xs):
            full[i] = _tracer(x)
        return full

    def vjp(self, ct, residuals, xs):
        again = self._call([autodiff.recompute(x) for x in xs])
        _, pullback = vjp(self.fun, *again)
        cts = pullback(_tracer(ct))
        return [_as_type(cts[i], x, "the checkpointed block's cotangent") for i, x in zip(self.positions, xs)]

    def jvp(self, tangents, residuals, xs, out):
        primals = self._call(xs)
        dots = [np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0 for a in primals]  # constants: no tangent
        for i, x, t in zip(self.positions, xs, tangents):
            dots[i] = _tracer(t if t is not None else ew.zeros_like(x))
        _, dot = jvp(self.fun, tuple(primals), tuple(dots))
        return _as_type(dot, out, "the checkpointed block's tangent")
