"""Views and in-place writes under ``torch.compile``: storage handles, functionalised as torch does.

While ``torch.compile`` traces a facade function, each tensor's ``_data`` is a ``Storage``:
a traced value that stands for the tensor's memory. A view (``view``, ``reshape`` when it
need not copy, ``t()``, ``transpose``, ``permute``, ``unsqueeze``, ``squeeze``, ``expand``,
basic indexing, ``detach`` and ``.data`` share the handle itself) is a ``Storage`` that
remembers the handle it views and the step that made it. An in-place write into any
handle (``add_``, ``mul_``, ``y[0] += 1``, ``fill_``, ``zero_``, ``out=``) becomes an
out-of-place update, as torch's functionalisation pass does:

* the written handle takes the new value;
* its base takes the value with the write scattered in, through the inverse of each view
  step (``reshape`` back, the inverse permutation, ``index_update`` for a slice), up to
  the root handle, the tensor that owns the memory;
* every other live view of that root is regenerated from the root's new value.

So the graph is pure and every later read, of the base or of any view, sees the write.
Which results are views follows torch: a ``reshape`` is a view exactly when the strides
allow it, which a small int8 *layout* array with the same strides decides (NumPy's rule
for ``reshape`` is torch's); basic indexing is always a view; ``flip`` is a copy. A
write that torch refuses (into an ``expand``-ed tensor, whose elements share memory) is
refused here with torch's message.

>>> import gradc.torch as torch
>>> def f(x):
...     y = x * 1.0
...     y.view(2, 1).mul_(3.0)
...     return (y * y).sum()
>>> x = torch.tensor([1.0, 2.0])
>>> float(torch.compile(f)(x)), float(f(x))
(45.0, 45.0)
"""
from __future__ import annotations

import weakref

import numpy as np

from gradc.api import Tracer, as_value, fit, parse_index
from gradc.api import traced_inplace as np_inplace
from gradc.errors import TraceError
from gradc.ir import registry
from gradc.ir.builder import Traced
from gradc.ops import elementwise as ew
from gradc.ops import shape as sh
from gradc.ops.autodiff import stop_gradient
from gradc.ops.shape_extra import index_update, indexed_shape
from gradc.ops.values import first_traced

VIEW_OPS = frozenset({"reshape", "transpose", "index", "broadcast_to"})
OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation.")


class Storage(Tracer):
    """A facade tensor's traced memory: a root, or a view of another ``Storage`` (see the module docstring)."""

    __slots__ = ("view_base", "view_step", "children", "_layout", "refusal", "__weakref__")

    def __init__(self, builder, atom, layout=None, refusal=None):
        super().__init__(builder, atom)
        self.view_base, self.view_step, self.children, self._layout = None, None, [], layout
        self.refusal = refusal  # (why, hint) when this memory must not be written (a leaf that requires grad)

    def wrap(self, atom, builder=None):
        return Storage(builder or self.builder, atom)

    def copy(self, order="K"):
        return Storage(self.builder, self.atom)

    @property
    def layout(self):
        """An int8 array with this memory's shape and strides (element units): it decides what is a view."""
        if self._layout is None:
            self._layout = np.zeros(self.aval.shape, np.int8)
        return self._layout

    @classmethod
    def __gradc_bind__(cls, op, args, params):
        out = Traced.__gradc_bind__.__func__(cls, op, args, params)
        src = args[0] if args else None
        if op.name in VIEW_OPS and type(src) is Storage and type(out) is Storage:
            layout = _view_layout(src.layout, op.name, params)
            if layout is not None:
                out.view_base, out.view_step, out._layout = src, (op.name, params), layout
                src.children.append(weakref.ref(out))
        elif op.elementwise and type(out) is Storage:
            out._layout = _elementwise_layout(args, out)
        return out

    def __array__(self, dtype=None, copy=None):
        raise TraceError("a traced tensor's numbers were needed while torch.compile traced the call (a NumPy "
                         "conversion such as .numpy(), or an out= tensor of another shape, which torch resizes)",
                         hint="give out= a tensor of the result's shape, or keep that step outside the compiled "
                              "function")

    def __getitem__(self, key):
        """``t[key]``: a view for a basic index (``index``), a copy for index arrays (``gather``)."""
        spec, arrays = parse_index(self.aval, _plain_key(key))
        return sh.gather(self, arrays, spec) if arrays else sh.index(self, spec)

    # ---- writes: every in-place path of the facade arrives here
    def __setitem__(self, key, value):
        """``t[key] = value``: the NumPy tracer's update on a copy of the current value, then ``write``."""
        key = _plain_key(key)
        what = f"item assignment t[{_key_text(key)}] = ..."
        write(self, _updated(Tracer(self.builder, self.atom), key, getattr(value, "_data", value), what), what)

    def _update(self, symbol, op, other):
        write(self, op(self, getattr(other, "_data", other)), f"`{symbol}=`")
        return self

    def __array_function__(self, func, types, args, kwargs):
        if func is np.copyto and args and args[0] is self:  # torch's out= writes its result here
            write(self, args[1], "out=")
            return None
        return super().__array_function__(func, types, args, kwargs)


def _view_layout(layout, op, params):
    """The layout of the view ``op`` makes of ``layout``, or None when torch's op gives a copy."""
    if op == "index":
        spec = params["spec"]
        if any(item[0] == "slice" and item[3] is not None and item[3] < 0 for item in spec):
            return None  # a negative step comes from flip(), which copies
        if any(item[0] == "array" for item in spec):
            return None
        return layout[sh.spec_to_numpy(spec) + (Ellipsis,)]  # the Ellipsis keeps an all-int index a 0-d view
    if op == "reshape":
        out = layout.reshape(params["shape"])
        return out if np.may_share_memory(out, layout) else None
    if op == "transpose":
        return layout.transpose(params["perm"])
    return np.broadcast_to(layout, params["shape"])


def _elementwise_layout(args, out):
    """An elementwise result's layout: its operands' (NumPy's rule, and torch's, for a transposed input),
    or None (C-contiguous) when they are all C-contiguous."""
    layouts = [a._layout for a in args if type(a) is Storage and a._layout is not None]
    if all(layout.flags["C_CONTIGUOUS"] for layout in layouts):
        return None
    operands = [a.layout if type(a) is Storage else np.zeros(np.shape(a) if not isinstance(a, Traced) else
                                                             a.aval.shape, np.int8) for a in args]
    result = operands[0] + np.zeros((), np.int8) if len(operands) == 1 else operands[0]
    for operand in operands[1:]:
        result = np.add(result, operand)
    return result if result.shape == tuple(out.aval.shape) else None


def layout_of(array) -> np.ndarray:
    """An int8 array with ``array``'s shape and strides (in elements): an input's memory layout."""
    if array.flags["C_CONTIGUOUS"] or array.size == 0:
        return np.zeros(array.shape, np.int8)
    strides = [s // array.itemsize for s in array.strides]
    low = sum(s * (n - 1) for s, n in zip(strides, array.shape) if s < 0)
    high = sum(s * (n - 1) for s, n in zip(strides, array.shape) if s > 0)
    buffer = np.zeros(high - low + 1, np.int8)
    return np.lib.stride_tricks.as_strided(buffer[-low:], array.shape, strides, writeable=False)


def _plain_key(key):
    items = key if isinstance(key, tuple) else (key,)
    items = tuple(getattr(k, "_data", k) for k in items)
    return items if isinstance(key, tuple) else items[0]


def _key_text(key):
    items = key if isinstance(key, tuple) else (key,)
    return ", ".join(":" if k == slice(None) else "..." if k is Ellipsis else "None" if k is None else
                     type(k).__name__ if not isinstance(k, (int, slice)) else str(k) for k in items)


def _overlaps(layout) -> bool:
    return any(s == 0 and n > 1 for s, n in zip(layout.strides, layout.shape))


def _fit(handle, value, what):
    """``value`` as the handle's dtype and shape (torch casts and broadcasts an in-place result into it)."""
    t = handle.aval
    target = tuple(t.shape)
    if isinstance(value, Traced):
        value = value if value.aval.dtype == t.dtype else ew.astype(value, t.dtype)
        shape = tuple(value.aval.shape)
    else:
        value = np.asarray(value).astype(t.np_dtype)
        shape = value.shape
    if shape != target:
        try:
            fits = len(shape) <= len(target) and np.broadcast_shapes(shape, target) == target
        except ValueError:
            fits = False
        if not fits:
            raise TraceError(f"{what}: a result of shape {list(shape)} does not fit the tensor of shape "
                             f"{list(target)} it is written into", hint="in-place operations keep a tensor's "
                             "shape; assign a new name: `y = y + ...`")
        value = sh.broadcast_to(value, target)
    if not isinstance(value, Traced):  # a concrete value: written over the whole traced memory
        value = index_update(handle, value, [], (("slice", None, None, None),) * len(target))
    return value


def _updated(current, key, value, what):
    """``current`` with ``value`` written at ``key`` (NumPy's rules, as the NumPy tracer's ``setitem``)."""
    t = current.aval
    traced = first_traced([current, value, *(key if isinstance(key, tuple) else (key,))])
    if np_inplace._traced_mask(key):
        return np_inplace._masked_update(current, key, value, traced, what, None)
    spec, arrays = parse_index(t, key)
    value = as_value(np_inplace._cast_into(value, t, what, None), t, spec, arrays, traced, what, None)
    spec, arrays, value = fit(t, spec, arrays, value, what, None)
    return index_update(current, value, arrays, spec)


def write(handle: Storage, value, what: str = "an in-place operation") -> Storage:
    """Write ``value`` into ``handle`` in place: its base and the other views of its memory follow.
    Returns the root handle (the memory's owner)."""
    if _overlaps(handle.layout):
        raise TraceError(f"{what}: {OVERLAP}", hint="clone() the expanded tensor before writing into it")
    value = _fit(handle, value, what)
    path, new = [handle], [value]
    while path[-1].view_base is not None:  # the write scattered into each base, up to the root
        view = path[-1]
        path.append(view.view_base)
        new.append(_scatter(view, new[-1]))
    if path[-1].refusal is not None:
        reason, hint = path[-1].refusal
        raise TraceError(f"{what}: {reason}", hint=hint)
    for h, v in zip(path, new):
        h.atom = v.atom
    on_path = {id(h) for h in path}
    stack = [path[-1]]
    while stack:  # regenerate the root's other views, parents before children
        h = stack.pop()
        if id(h) not in on_path:
            h.atom = _regenerate(h).atom
        live = []
        for ref in h.children:
            child = ref()
            if child is not None:
                live.append(ref)
        h.children = live
        stack.extend(c for c in (ref() for ref in reversed(live)) if c is not None)
    return path[-1]


def detached(handle: Storage) -> Storage:
    """``handle``'s memory read without a gradient (``detach()``): a view whose step is ``stop_gradient``."""
    out = Traced.__gradc_bind__.__func__(Storage, registry.OPS["stop_gradient"], (handle,), {})
    out.view_base, out.view_step, out._layout = handle, ("stop_gradient", {}), handle.layout
    handle.children.append(weakref.ref(out))
    return out


def _regenerate(view):
    op, params = view.view_step
    base = view.view_base
    return Traced.__gradc_bind__.__func__(Storage, registry.OPS[op], (base,), params)


def _scatter(view, value):
    """The base's new value when ``view`` (one step from it) takes ``value``."""
    op, params = view.view_step
    base = view.view_base
    shape = tuple(base.aval.shape)
    if op == "stop_gradient":  # through detach(): torch's value, and the derivative of the base's history
        return ew.add(stop_gradient(value), ew.sub(base, stop_gradient(base)))
    if op == "reshape" or op == "broadcast_to":  # a broadcast without repeats (writes into repeats are refused)
        return _plain(sh.reshape(value, shape))
    if op == "transpose":
        return _plain(sh.transpose(value, tuple(int(i) for i in np.argsort(params["perm"]))))
    # an index's new axes (None) have size 1: drop them from the value, then write at the rest of the index
    spec = tuple(item for item in params["spec"] if item[0] != "new")
    value = sh.reshape(value, indexed_shape(shape, spec))
    if all(item == ("slice", None, None, None) for item in spec):
        return _plain(value)
    return _plain(index_update(base, value, [], spec))


def _plain(value):
    """A fresh value (not registered as a view of what it was computed from)."""
    if isinstance(value, Storage) and value.view_base is not None:
        return Storage(value.builder, value.atom)
    return value
