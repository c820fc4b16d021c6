"""Tracing facade code for ``torch.compile``: which tensors a call reads, and its graph.

A compiled call's inputs are its tensor arguments plus the state it reads: the parameters
and buffers of the modules it uses (the compiled module, ``self`` of a bound method, modules
among its arguments, closure cells and the globals it names) and tensors held in those
cells and globals. ``make_pure`` swaps each input's storage for a traced ``Storage`` handle
(``gradc.facade.functionalize``: views and in-place writes become pure updates), runs the
function once (grad mode off, ``grad_mode._STATE["tracing"]`` set to a ``TraceContext``,
which the facade's in-place ops, ``detach()`` and ``contiguous()`` consult) and restores it;
facade ops then record gradc primitives, so the graph is made of the registry's ops. Inputs
written in place become extra outputs. What cannot be traced raises (``.item()``, Python
``if`` on a value, ``.grad`` of an input, a tensor that requires grad but is not an input, a
write torch refuses), and the caller falls back to eager.

>>> import gradc.torch as torch
>>> lin = torch.nn.Linear(2, 1)
>>> [name for name, _ in state_tensors(lin, reachable_modules(lin, ()))]
['weight', 'bias']
"""
from __future__ import annotations

import inspect

import numpy as np

from gradc.errors import TraceError
from gradc.facade import grad_mode
from gradc.facade.functionalize import Storage, detached, layout_of, write
from gradc.facade.nn.module_base import Module
from gradc.facade.tensor import LEAF_INPLACE, Tensor
from gradc.ir.builder import Traced


def reachable_modules(fn, args):
    """``[(prefix, module)]``: the modules ``fn`` reaches without running it.

    The compiled module or ``self`` of a bound method (prefix ``""``), modules among the
    arguments, in closure cells and in the globals ``fn`` names (prefixed by their names).
    """
    found, seen = [], set()

    def add(prefix, obj):
        if isinstance(obj, Module) and id(obj) not in seen:
            seen.add(id(obj))
            found.append((prefix, obj))
    add("", fn)
    add("", getattr(fn, "__self__", None))
    for i, a in enumerate(args):
        add(f"arg{i}.", a)
    for name, value in _free_values(fn):
        add(name + ".", value)
    return found


def _free_values(fn):
    """``(name, value)`` of ``fn``'s closure cells and the globals its code names (bound methods unwrapped)."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    out = []
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            out.append((name, cell.cell_contents))
        except ValueError:  # an empty cell
            pass
    g = fn.__globals__
    for name in code.co_names:
        if name in g:
            out.append((name, g[name]))
    return out


def state_tensors(fn, modules):
    """``[(name, tensor)]``: the parameters and buffers of ``modules``, then tensors in cells and globals."""
    out, seen = [], set()
    for prefix, m in modules:
        for name, t in list(m.named_parameters()) + list(m.named_buffers()):
            if t is not None and id(t) not in seen:
                seen.add(id(t))
                out.append((prefix + name, t))
    for name, value in _free_values(fn):
        if isinstance(value, Tensor) and id(value) not in seen:
            seen.add(id(value))
            out.append((name, value))
    return out


def identifier(name, taken):
    """A Python identifier for a tensor's name (``0.weight`` -> ``p0_weight``), unique among ``taken``."""
    text = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "arg"
    if not (text[0].isalpha() or text[0] == "_"):
        text = "p" + text
    base, k = text, 1
    while text in taken or text in ("np", "math"):
        text = f"{base}_{k}"
        k += 1
    taken.add(text)
    return text


def flatten(tree, leaves):
    """Tensors of a nested tuple/list/dict appended to ``leaves``; returns the hashable structure of the rest."""
    if isinstance(tree, Tensor):
        leaves.append(tree)
        return Tensor
    if isinstance(tree, (tuple, list)):
        return (type(tree), tuple(flatten(x, leaves) for x in tree))
    if isinstance(tree, dict):
        return (dict, tuple((k, flatten(v, leaves)) for k, v in tree.items()))
    if isinstance(tree, Module):
        return ("module", id(tree))
    try:
        hash(tree)
    except TypeError:
        return ("object", id(tree))
    return ("value", type(tree), tree)


def unflatten(spec, tree, leaves):
    """``tree`` (the original arguments) with its tensors replaced by the next ones of iterator ``leaves``."""
    if spec is Tensor:
        return next(leaves)
    if isinstance(spec, tuple) and spec and spec[0] in (tuple, list):
        return spec[0](unflatten(s, x, leaves) for s, x in zip(spec[1], tree))
    if isinstance(spec, tuple) and spec and spec[0] is dict:
        return {k: unflatten(s, tree[k], leaves) for k, s in spec[1]}
    return tree


class TraceInfo:
    """What one trace learned: the output structure, the output tensors' slots, in-place writes to inputs."""

    def __init__(self):
        self.out_spec = None
        self.out_consts = []  # per output leaf: None (a graph output) or a concrete array (a constant)
        self.out_alias = []  # per graph output: None, or how it shares an input's memory (``_alias_of``)
        self.mutated = []  # input positions written in place, in the order of the extra graph outputs
        self.tracked = []  # those an in-place op wrote a value that requires grad into (they take its history)
        self.n_out = 0
        self.draws = []  # (shape, p, dtype) of each dropout, in call order


class TraceContext:
    """What a traced call may do besides ops (``grad_mode._STATE["tracing"]`` while it runs).

    Dropout's noise becomes an input of the compiled code (``noise``): the first trace only
    records each draw's shape, probability and dtype (and returns ones); the second gets
    traced inputs, which each compiled call fills by drawing from torch's stream in the same
    order as eager would. What cannot be traced is refused (``refuse``).
    """

    def __init__(self, noise_inputs=None):
        self.draws = []
        self.noise_inputs = noise_inputs
        self.tracked = set()  # ids of the root handles an in-place op (add_, mul_, ...) wrote into

    def refuse(self, what):
        raise TraceError(f"the function reads a tensor's .{what} (compiled code cannot see gradients computed "
                         "after it was traced)", hint="compile the forward and loss; run backward() and "
                         "optimizer.step() outside the compiled function")

    def write(self, tensor, value):
        """``tensor`` takes ``value`` in place (the facade's in-place ops call this while tracing)."""
        data = tensor._data
        if isinstance(data, Storage):
            self.tracked.add(id(write(data, value)))
        elif isinstance(data, Traced):  # a value no handle stands for: nothing else can see its memory
            tensor._data = Storage(data.builder, data.atom)
            write(tensor._data, value)
        elif isinstance(value, Traced):
            raise TraceError("an in-place operation writes a value computed from the inputs into a tensor that "
                             "is not an input of the compiled function (one it made from constants, such as "
                             "torch.zeros(...), or one held in a list, a dict or an attribute)",
                             hint="build the result from the inputs (torch.cat, torch.stack, torch.where), or pass "
                                  "the tensor in as an argument")
        else:  # constants into a constant: as eager does
            np.copyto(data, np.asarray(value).astype(data.dtype, copy=False))

    @staticmethod
    def contiguous(data) -> bool:
        """Whether traced memory is C-contiguous (a view's layout says; any other traced value is)."""
        return not isinstance(data, Storage) or data.size <= 1 or bool(data.layout.flags["C_CONTIGUOUS"])

    @staticmethod
    def detached(data):
        """``t.detach()`` / ``t.data`` of traced memory: the same memory, read without a gradient."""
        return detached(data) if isinstance(data, Storage) else data

    def noise(self, shape, p, dtype):
        """The noise of the call's next dropout: ``(shape, p, dtype)`` recorded, a (traced) array returned."""
        i = len(self.draws)
        self.draws.append((tuple(shape), float(p), np.dtype(dtype)))
        if self.noise_inputs is None:
            return np.ones(shape, dtype)
        if i >= len(self.noise_inputs):
            raise TraceError("the function's dropout draws changed between two traces", hint="run it eagerly")
        return self.noise_inputs[i]


def storage_handles(tensors, arrays, grad_enabled):
    """One ``Storage`` per input tensor (``gradc.facade.functionalize``), holding its traced value.

    Tensors that share one NumPy array (``p`` and ``p.detach()``) share one handle; each handle
    has its array's memory layout; a leaf that requires grad may not be written while grad is on.
    """
    by_array, handles = {}, []
    roots = [_root(t._data) for t in tensors]
    for t, a, root in zip(tensors, arrays, roots):
        h = by_array.get(id(t._data))
        if h is None:
            refusal = None
            if grad_enabled and t._requires_grad and t._grad_fn is None:
                refusal = (LEAF_INPLACE, "write into a copy (`y = x.clone()`), or under torch.no_grad()")
            elif any(r is root and u._data is not t._data for u, r in zip(tensors, roots)):
                refusal = ("this input shares memory with another input of the call (as `f(x, x[0])`): the "
                           "compiled code would not see the write through the other", "pass separate tensors "
                           "(`x[0].clone()`), or pass only the base and take the view inside")
            h = by_array[id(t._data)] = Storage(a.builder, a.atom, layout_of(t._data), refusal)
        handles.append(h)
    return handles


def _root(array):
    """The array that owns ``array``'s memory (following NumPy's ``.base``)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def memory_key(tensors) -> tuple:
    """Each input's strides and which inputs share memory: what the functionalised trace depends on
    besides shapes and dtypes (a reshape is a view or a copy by the strides)."""
    owners, key = {}, []
    for t in tensors:
        a = t._data
        key.append((a.strides, owners.setdefault(id(_root(a)), len(owners))))
    return tuple(key)


def outputs_of(result, tensors, handles, origins, info, context, grad_enabled=False):
    """The graph outputs of a traced call: its tensors' traced values, then inputs written in place."""
    info.draws = list(context.draws)
    out_leaves = []
    info.out_spec = flatten(result, out_leaves)
    outputs, info.out_consts, info.out_alias = [], [], []
    for t in out_leaves:
        if isinstance(t._data, Traced):
            outputs.append(t._data)
            info.out_consts.append(None)
            info.out_alias.append(_alias_of(t, tensors, handles))
        else:  # a tensor the call made from constants alone: returned as is by every call
            info.out_consts.append(np.array(t._data))
    info.n_out = len(outputs)
    info.mutated, info.tracked = [], []
    wrt_atoms = {id(o) for t, o in zip(tensors, origins) if t._requires_grad}
    for i, (t, h, origin) in enumerate(zip(tensors, handles, origins)):
        if t._data is h and h.atom is origin:
            continue
        if not isinstance(t._data, Traced):
            raise TraceError("the function replaces a tensor's storage with a concrete array",
                             hint="run it eagerly")
        if grad_enabled and t._requires_grad:
            raise TraceError("the function writes in place into an input that requires grad (its autograd "
                             "history would not record the write)", hint="write into a copy (`y = x.clone()`)")
        if grad_enabled and id(h) in context.tracked and _depends_on(h, wrt_atoms):
            info.tracked.append(i)  # an in-place op wrote a value with a history: the input takes it, as in eager
        info.mutated.append(i)
        outputs.append(t._data)
    if not outputs:
        raise TraceError("the function returns no tensor computed from its inputs",
                         hint="nothing to compile: call it eagerly")
    return tuple(outputs) if len(outputs) > 1 else outputs[0]


def _alias_of(t, tensors, handles):
    """How an output shares memory with an input, as eager's would: ``("input", i)`` when it is input tensor
    ``i`` itself, ``("view", i, steps)`` when it is a view of input ``i``'s memory, else None."""
    for i, u in enumerate(tensors):
        if t is u:
            return ("input", i)
    data, steps = t._data, []
    while isinstance(data, Storage) and data.view_base is not None:
        if data.view_step[0] == "stop_gradient":
            return None
        steps.append(data.view_step)
        data = data.view_base
    for i, h in enumerate(handles):
        if steps and data is h:
            return ("view", i, tuple(reversed(steps)))
    return None


def _depends_on(value, atoms) -> bool:
    """Whether traced ``value`` is computed from any of ``atoms`` (ids), through its builder's equations."""
    producers = {id(e.out): e for e in value.builder.eqns}
    stack, seen = [value.atom], set()
    while stack:
        atom = stack.pop()
        if id(atom) in atoms:
            return True
        eqn = producers.get(id(atom))
        if eqn is None or id(eqn) in seen:
            continue
        seen.add(id(eqn))
        stack.extend(eqn.inputs)
    return False


def make_pure(fn, args, kwargs, tensors, names, info, n_noise=0):
    """A function of the inputs' arrays (named ``names``) that runs ``fn`` on tensors holding them.

    ``tensors``: the input tensors (argument tensors first, then state); ``info`` (a ``TraceInfo``)
    receives the output structure and the dropout draws when the function is traced; ``n_noise``
    more arrays after the tensors' are the dropout noise (``TraceContext.noise``).
    """
    def pure(*arrays):
        context = TraceContext(arrays[len(tensors):] if n_noise else None)
        saved = [(t._data, t._vc[0]) for t in tensors]
        prev = grad_mode._STATE["enabled"], grad_mode._STATE["tracing"]
        try:
            handles = storage_handles(tensors, arrays, prev[0])
            origins = [h.atom for h in handles]
            for t, h in zip(tensors, handles):
                t._data = h
            grad_mode._STATE["enabled"] = False
            grad_mode._STATE["tracing"] = context
            # the argument tensors are among ``tensors``: the call sees the traced storage
            return outputs_of(fn(*args, **kwargs), tensors, handles, origins, info, context, prev[0])
        finally:
            for t, (data, version) in zip(tensors, saved):
                t._data = data
                t._vc[0] = version
            grad_mode._STATE["enabled"], grad_mode._STATE["tracing"] = prev
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
    pure.__signature__ = inspect.Signature(params)
    name = getattr(fn, "__name__", "compiled")
    pure.__name__ = pure.__qualname__ = "lambda_" if name == "<lambda>" else identifier(name, set())
    return pure
