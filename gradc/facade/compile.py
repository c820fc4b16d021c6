"""``torch.compile``: facade functions and modules run as gradc-emitted NumPy, forward and backward.

``compile(fn_or_module)`` returns a callable that, for each new input signature (shapes,
dtypes and ``requires_grad`` of the tensor arguments and of the state it reads, the other
arguments' values, train/eval mode, grad mode), traces the call into a gradc graph
(``gradc.facade.compile_trace``), differentiates and optimises it and emits NumPy source.
Module parameters and buffers are inputs of that code, not constants, so ``optimizer.step()``
is seen by the next call. When grad is needed, the output gets one ``CompiledFunctionBackward``
node: for a scalar output the emitted ``value_and_grad`` runs in the forward and backward
scales its gradients by the cotangent; otherwise the emitted VJP is split in two
(``gradc.facade.compile_split``): the forward half also returns what the backward half reads,
so backward does not recompute the forward. Gradients land in ``.grad`` as eager's do.

Dropout in training mode is compiled with its noise as an input of the code: each call draws
it from torch's stream, in the order eager draws it, so a seeded compiled model gives eager's
numbers. Views and in-place writes are functionalised (``gradc.facade.functionalize``): a
write through any view updates its base and every other view, as in eager. In-place writes
to inputs (``buffer.add_(...)``, batch norm's running statistics) are compiled: the new values
are extra outputs, written back. The Python state a signature's trace read (module
attributes, globals, closure cells, lists and dicts they hold) is guarded
(``gradc.facade.compile_guards``): when it changes, the call re-traces.

A call that cannot be traced (``.item()`` or a Python ``if`` on a value, reading ``.grad``,
other random draws such as ``torch.randn`` inside, an op without a traced form, a tensor that
requires grad but is neither an argument nor state the function reaches, a write torch
refuses or that compiled code cannot give an autograd history, a function that changes the
Python state it reads) runs eagerly, with one warning per function giving the reason.

torch's ``mode``, ``dynamic``, ``backend`` and ``options`` choose among
torch's own code generators: gradc has one, so they are accepted and ignored (``backend``
must name one of torch's: a callable backend is refused). ``fullgraph=True`` turns the
fallback into an error. ``disable=True`` returns the function unchanged.

``source`` is the emitted module of the latest signature (a readable training step)::

    >>> import gradc.torch as torch
    >>> lin = torch.nn.Linear(3, 1)
    >>> loss_fn = torch.compile(lambda x: lin(x).pow(2).mean())
    >>> x = torch.ones(2, 3)
    >>> torch.allclose(loss_fn(x), lin(x).pow(2).mean())
    True
    >>> "def lambda_" in loss_fn.source
    True
"""
from __future__ import annotations

import functools
import inspect
import os
import warnings
from typing import Any, Callable

import numpy as np

import gradc.api as gapi
from gradc.errors import ArgumentError, GradcError, TraceError
from gradc.facade import compile_trace as ct
from gradc.facade import grad_fn as gf
from gradc.facade import grad_mode, rng
from gradc.facade.compile_guards import RECOMPILE_LIMIT, Guards
from gradc.facade.compile_split import split
from gradc.facade.nn.functional_layers import dropout_noise
from gradc.facade.nn.module_base import Module
from gradc.facade.record import record
from gradc.facade.tensor import Tensor
from gradc.ir import registry

# torch's node class for compiled code, shown as torch shows it (``<torch.autograd.function.Compiled...>``)
gf._CLASSES["CompiledFunctionBackward"] = type("CompiledFunctionBackward", (gf.Node,),
                                               {"__module__": "torch.autograd.function"})
BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "tvm", "onnxrt", "openxla", "tensorrt")
MODES = (None, "default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")  # torch's order


class _Entry:
    """The compiled code of one signature."""

    def __init__(self, info, unit, need_grad, scalar, wrt_pos, n_args, halves=None, guards=None):
        self.info, self.unit = info, unit
        self.guards = guards  # the Python state the trace read (``compile_guards.Guards``)
        self.halves = halves  # (forward, backward) of the split VJP (``compile_split``), or None
        self.need_grad, self.scalar = need_grad, scalar
        self.wrt_pos = wrt_pos  # input positions with a gradient, in the order the code returns them
        self.n_args = n_args


class CompiledFunction:
    """What ``torch.compile(fn)`` returns: call it like ``fn`` (see the module docstring).

    >>> import gradc.torch as torch
    >>> f = torch.compile(lambda x: (x * x).sum())
    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> f(x).backward(); x.grad
    tensor([2., 4.])
    """

    def __init__(self, fn, fullgraph=False):
        functools.update_wrapper(self, fn, updated=())
        self._orig_fn = fn
        self.fullgraph = fullgraph
        self._cache = {}
        self._recompiles = 0
        self._warned = False
        self._last = None
        self._names = getattr(fn, "__name__", "compiled")
        code = getattr(getattr(fn, "__func__", fn), "__code__", None)
        self._file = os.path.basename(code.co_filename) if code else "?"

    def __get__(self, obj, objtype=None):  # @torch.compile on a method binds like a function
        return self if obj is None else functools.partial(self.__call__, obj)

    def __repr__(self):
        return f"<gradc compiled {self._names}>"

    @property
    def source(self) -> str:
        """The emitted NumPy module of the most recently compiled signature."""
        if self._last is None:
            raise RuntimeError(f"{self._names} has not been compiled yet: call it once (compiling happens at the "
                               "first call for each input signature), then read .source")
        # the header names the wrapper's file; the user's function is what was compiled
        return self._last.unit.source.replace("compile_trace.py:", self._file + ":", 1)

    def __call__(self, *args, **kwargs):
        entry, tensors = self._lookup(args, kwargs)
        if entry is None:
            return self._orig_fn(*args, **kwargs)
        return _run(entry, tensors)

    def _lookup(self, args, kwargs):
        """The compiled code for this call's signature (None: run eagerly) and the call's input tensors."""
        modules = ct.reachable_modules(self._orig_fn, args)
        state = ct.state_tensors(self._orig_fn, modules)
        leaves = []
        spec = ct.flatten((args, kwargs), leaves)
        n_args = len(leaves)
        tensors = leaves + [t for _, t in state]
        enabled = grad_mode._STATE["enabled"]
        key = (spec, enabled, tuple([(t._data.shape, t._data.dtype.char, t._requires_grad) for t in tensors]),
               tuple([m.training for _, top in modules for m in top.modules()]), len(state), ct.memory_key(tensors))
        entry = self._cache.get(key, False)
        if entry and self._stale(entry, modules):
            entry = False if self._recompiles <= RECOMPILE_LIMIT else None
            self._cache[key] = entry
        if entry is False:
            entry = self._cache[key] = self._compile(args, kwargs, tensors, state, n_args, enabled, modules)
            if entry is not None:
                self._last = entry
        return entry, tensors

    def _stale(self, entry, modules):
        """Whether Python state the entry's trace read has changed since (``compile_guards``): re-trace, or
        after ``RECOMPILE_LIMIT`` re-traces run eagerly (with a warning), as torch does."""
        changed = entry.guards.changed()
        if changed is None:
            return False
        self._recompiles += 1
        if self._recompiles > RECOMPILE_LIMIT:
            warnings.warn(f"torch.compile: {self._names} runs eagerly from now on: it was re-traced "
                          f"{RECOMPILE_LIMIT} times because Python state it reads changed ({changed} last)",
                          UserWarning, stacklevel=5)
        return True

    def _compile(self, args, kwargs, tensors, state, n_args, enabled, modules):
        names, taken = [], set()
        for i in range(n_args):
            names.append(ct.identifier(_arg_name(self._orig_fn, i, n_args), taken))
        for name, _ in state:
            names.append(ct.identifier(name, taken))
        info = ct.TraceInfo()
        pure = ct.make_pure(self._orig_fn, args, kwargs, tensors, names, info)
        arrays = [t._data for t in tensors]
        wrt_pos = [i for i, t in enumerate(tensors) if t._requires_grad] if enabled else []
        before = Guards(self._orig_fn, modules)
        try:
            graph = _trace_without_drawing(pure, arrays)
            wrt_pos = _read_by_outputs(graph, wrt_pos)  # torch.compile gives no .grad to an input never read
            if info.draws:  # trace again with the dropout noise as inputs
                names = names + [ct.identifier(f"dropout_noise{i}", taken) for i in range(len(info.draws))]
                pure = ct.make_pure(self._orig_fn, args, kwargs, tensors, names, info, n_noise=len(info.draws))
                arrays = arrays + [np.ones(shape, dtype) for shape, _, dtype in info.draws]
            outs = graph.outputs
            need_grad = bool(wrt_pos) and any(o.type.dtype.startswith("f") for o in outs[:info.n_out])
            scalar = need_grad and info.n_out == 1 and not info.mutated and outs[0].type.shape == ()
            if not need_grad:
                wrt_pos = []
                floats = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
                if not floats:
                    raise TraceError("no floating-point input to compile for", hint="call it eagerly")
                unit = gapi.compile(pure, *arrays, wrt=names[floats[0]], mode="vjp")
            elif scalar:
                unit = gapi.compile(pure, *arrays, wrt=tuple(names[i] for i in wrt_pos))
            else:
                unit = gapi.compile(pure, *arrays, wrt=tuple(names[i] for i in wrt_pos), mode="vjp")
            guards = Guards(self._orig_fn, modules)
            if before.changed() is not None:
                raise TraceError(f"the function changes Python state it reads ({before.changed()}) while it runs; "
                                 "compiled code would not repeat that", hint="keep such updates outside the "
                                 "compiled function, or make the state a tensor buffer updated in place")
        except Exception as e:  # noqa: BLE001 - whatever stops the trace, eager runs the call (and raises a real error)
            self._fallback(e)
            return None
        halves = None
        if need_grad and not scalar and not info.mutated:
            try:
                halves = split(unit.graphs[f"{pure.__name__}_vjp"], len(arrays), info.n_out)
            except GradcError:  # backward recomputes the forward instead (the emitted F_vjp)
                halves = None
        return _Entry(info, unit, need_grad, scalar, wrt_pos, n_args, halves, guards)

    def _fallback(self, error):
        if self.fullgraph:
            raise error
        if not self._warned:
            self._warned = True
            reason = (str(error).splitlines() or [type(error).__name__])[0]
            warnings.warn(f"torch.compile: {self._names} runs eagerly (it cannot be traced: {reason})",
                          UserWarning, stacklevel=4)


def _read_by_outputs(graph, positions: list) -> list:
    """The input ``positions`` some output of ``graph`` depends on (sub-graphs take their operands as inputs of
    their equation, so a backward walk over the top level finds them all)."""
    live = {id(o) for o in graph.outputs}
    for eqn in reversed(graph.eqns):
        if id(eqn.out) in live:
            live.update(id(a) for a in eqn.inputs)
    return [i for i in positions if id(graph.inputs[i]) in live]


def _trace_without_drawing(pure, arrays):
    """The graph of ``pure``; a TraceError if the call drew random numbers other than dropout's noise.

    Such a draw (``torch.randn`` inside the function) would be baked into the compiled code
    as a constant: the generator is put back as it was and the function runs eagerly.
    """
    g = rng.default_generator
    before = (g._mt.state, g._pending)
    drew = False
    try:
        graph = gapi.trace(pure, *arrays)
    finally:  # a trace that drew (even one that failed) leaves the stream as eager will find it
        after = g._mt.state
        drew = after["state"]["pos"] != before[0]["state"]["pos"] or g._pending != before[1] or \
            not np.array_equal(after["state"]["key"], before[0]["state"]["key"])
        if drew:
            g._mt.state, g._pending = before
    if drew:
        raise TraceError("the function draws random numbers (torch.randn, torch.rand, ...): compiled code would "
                         "repeat one draw forever", hint="draw them outside and pass them in as arguments")
    return graph


def _arg_name(fn, i, n):
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return params[i] if n == len(params) and i < len(params) else f"arg{i}"


def _run(entry, tensors):
    info = entry.info
    arrays = [t._data for t in tensors]
    if info.draws:  # dropout's noise, drawn from torch's stream in the order eager would draw it
        arrays += [dropout_noise(shape, p, dtype) for shape, p, dtype in info.draws]
    unit = entry.unit
    if entry.need_grad and entry.scalar:
        value, grads = unit.value_and_grad(*arrays)
        if not isinstance(grads, tuple):
            grads = (grads,)
        per_input = [None] * len(tensors)
        for i, g in zip(entry.wrt_pos, grads):
            per_input[i] = g
        out = record("CompiledFunctionBackward", _no_replay, tensors, precomputed=(np.asarray(value), per_input),
                     saved=[tensors[i] for i in entry.wrt_pos])
        outs = [out]
    elif entry.halves is not None:
        forward, backward = entry.halves
        results = forward(*arrays)
        results = results if isinstance(results, tuple) else (results,)
        outs = [Tensor._wrap(np.asarray(r)) for r in results[:info.n_out]]
        outs = _attach_vjp(entry, tensors, outs, _split_vjp(backward, results[info.n_out:]))
    else:
        results = unit.forward(*arrays)
        n_graph = info.n_out + len(info.mutated)
        results = list(results) if n_graph > 1 else [results]
        if entry.need_grad and info.mutated:  # the backward recomputes from the values before the writes
            arrays = [a.copy() if i in info.mutated else a for i, a in enumerate(arrays)]
        outs = [Tensor._wrap(np.asarray(r)) for r in results]
        if entry.need_grad:  # the inputs' new values get nodes too: a write with a history passes it on
            outs = _attach_vjp(entry, tensors, outs, _recompute_vjp(unit, arrays))
        for pos, new in zip(info.mutated, outs[info.n_out:]):
            t = tensors[pos]
            if pos in info.tracked and new._grad_fn is not None:  # as eager's in-place op: t takes the history
                t._inplace(lambda _, new=new: new)
            else:
                t._data[...] = new._data
                t._bump()
        outs = outs[:info.n_out]
    leaves = []
    it = iter(_aliased(outs, info.out_alias, tensors))
    for const in info.out_consts:
        leaves.append(next(it) if const is None else Tensor._wrap(const.copy()))
    return ct.unflatten(info.out_spec, _placeholder(info.out_spec), iter(leaves))


def _aliased(outs, aliases, tensors):
    """The outputs, sharing memory with the inputs where eager's would: an input returned is that tensor,
    a view of an input views its memory (a later in-place write through it reaches the input, as in eager)."""
    result = []
    for out, alias in zip(outs, aliases):
        if alias is not None and alias[0] == "input":
            out = tensors[alias[1]]
        elif alias is not None:
            data = tensors[alias[1]]._data
            for op, params in alias[2]:
                data = registry.OPS[op].impl(data, **params)
            if data.shape == out._data.shape:
                out._data, out._vc = data, tensors[alias[1]]._vc
        result.append(out)
    return result


def _placeholder(spec):
    """A tree shaped like ``spec`` holding its non-tensor values (the tensors are filled in by ``unflatten``)."""
    if spec is Tensor:
        return None
    if isinstance(spec, tuple) and spec and spec[0] in (tuple, list):
        return spec[0](_placeholder(s) for s in spec[1])
    if isinstance(spec, tuple) and spec and spec[0] is dict:
        return {k: _placeholder(s) for k, s in spec[1]}
    if isinstance(spec, tuple) and spec and spec[0] == "value":
        return spec[2]
    raise ArgumentError("torch.compile: the function returned an object gradc cannot rebuild",
                        hint="return tensors, numbers, or tuples, lists and dicts of them")


def _no_replay(*_):
    raise RuntimeError("double backward (create_graph=True) through a torch.compile'd function is not supported by "
                       "gradc; run the function eagerly for higher-order gradients")


def _attach_vjp(entry, tensors, outs, pullback):
    """Each float output gets a node: ``pullback(cotangents)`` (zero for the other outputs) gives the gradients."""
    wrt = [tensors[i] for i in entry.wrt_pos]
    result = []
    for k, out in enumerate(outs):
        if out._data.dtype.kind != "f":
            result.append(out)
            continue
        node_out = record("CompiledFunctionBackward", _no_replay, wrt, precomputed=(out._data, None), saved=wrt)
        node_out._grad_fn._vjp = _output_vjp(pullback, outs, k)
        result.append(node_out)
    return result


def _output_vjp(pullback, outs, k):
    def vjp(ct_):
        cts = [np.zeros_like(o._data) for o in outs]
        cts[k] = np.asarray(ct_, dtype=outs[k]._data.dtype)
        grads = pullback(cts)
        return list(grads) if isinstance(grads, tuple) else [grads]
    return vjp


def _recompute_vjp(unit, arrays):
    """The emitted ``F_vjp``: it returns ``(outputs, gradients)``, recomputing the forward."""
    return lambda cts: unit.vjp(*arrays, *cts)[1]


def _split_vjp(backward, residuals):
    """The backward half of the split VJP, on the residuals its forward half returned."""
    return lambda cts: backward(*residuals, *cts)


def _module_compile(self, *args, **kwargs):
    """``Module.compile()``: from now on, calling the module runs its forward compiled (in place)."""
    self.__dict__["forward"] = compile(type(self).forward.__get__(self), *args, **kwargs)


Module.compile = _module_compile


class OptimizedModule(Module):
    """``torch.compile(module)``: the module's forward compiled; attributes read through to ``_orig_mod``."""

    def __init__(self, mod, fullgraph=False):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled_forward"] = CompiledFunction(mod.forward, fullgraph)

    def forward(self, *args, **kwargs):
        return self._compiled_forward(*args, **kwargs)

    @property
    def source(self):
        return self._compiled_forward.source

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)


def compile(model: Callable | None = None, *example_inputs: Any, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str = "inductor", mode: str | None = None,
            options: dict | None = None, disable: bool = False) -> Callable:
    """``torch.compile``: a function or module, or a decorator when ``model`` is omitted (module docstring).

    ``example_inputs`` (gradc's addition) compile ``model`` for those Tensors at once, without
    running it, so ``.source`` can be read before the first call.

    >>> import gradc.torch as torch
    >>> @torch.compile(mode="max-autotune")
    ... def f(x):
    ...     return torch.sin(x) + 1
    >>> f(torch.zeros(2))
    tensor([1., 1.])
    >>> "def lambda_(x)" in torch.compile(lambda x: (x * x).sum(), torch.ones(2)).source
    True
    """
    if callable(backend) or backend not in BACKENDS:
        raise ArgumentError(f"torch.compile: backend {backend!r} is not one gradc accepts",
                            hint="gradc has a single code generator (NumPy source); leave backend at its default")
    if mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(m for m in MODES if m)}")
    if any(isinstance(a, np.ndarray) for a in example_inputs):
        raise ArgumentError("torch.compile: example inputs are Tensors, not NumPy arrays",
                            hint="gradc.compile(f, *example_args) compiles NumPy code (import gradc); "
                                 "for facade code pass torch.from_numpy(array)")
    if model is None:
        if example_inputs:
            raise ArgumentError("torch.compile: example inputs need the function or module to compile",
                                hint="pass it first: torch.compile(fn, *example_inputs)")
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if disable:
        return model
    if isinstance(model, Module):
        compiled = OptimizedModule(model, fullgraph)
        target = compiled._compiled_forward
    elif not callable(model):
        raise RuntimeError("torch.compile: the argument must be a function or an nn.Module")
    else:
        compiled = target = CompiledFunction(model, fullgraph)
    if example_inputs:
        target._lookup(example_inputs, {})
    return compiled
