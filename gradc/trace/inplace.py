"""In-place updates on traced arrays: allowed where NumPy's meaning is kept, refused where it would be lost.

``y += 1``, ``y[i] = v`` and ``np.add.at(y, idx, v)`` on a value the function computed
rebind the traced array object to a functional update (``index_update``, ``gather_grad``),
so every Python name for it sees the new value, as in NumPy. A basic-index read
``row = y[0]`` is a *view*, as in NumPy: writing into it writes into ``y``, and a write
into ``y`` refreshes it. An update of an input is allowed with a ``GradcWarning``: the
function is differentiated as a function of the input's value on entry, and the compiled
code works on a copy (the caller's array does not change; Tangent's meaning, where JAX and
HIPS autograd raise). Refused, at the user's line: an update of a reshape or transpose view
(the array it views would not change), of a view of an input that gradc cannot follow back
to it, and of an array that such views were taken of (they would not see the change).

The three runtime functions the capture transform (``gradc.trace.capture``) calls for
``a[k] = v``, ``a[k] op= v`` and ``ufunc.at(a, k, v)``, ``setitem``, ``setitem_op`` and
``ufunc_at``, return the value to bind to the name: on concrete values NumPy's own
in-place result (``a`` itself), on traced ones the traced update.

>>> import numpy as np
>>> a = np.zeros(3)
>>> setitem(a, 1, 2.0) is a, a
(True, array([0., 2., 0.]))
>>> ufunc_at(np.add, np.zeros(2), [0, 0], 1.0)
array([2., 0.])
"""
from __future__ import annotations

import itertools
import weakref

import numpy as np

from gradc.errors import ImmutableArgumentError, ShapeError, TraceError
from gradc.ir.builder import Traced
from gradc.ops import bitwise as bits
from gradc.ops import elementwise as ew
from gradc.ops import linalg as la
from gradc.ops import shape as sh
from gradc.ops.shape_extra import index_update, indexed_shape
from gradc.ops.values import aval, first_traced
from gradc.trace.inplace_positions import as_value, fit, layers, lift_target
from gradc.trace.numpy_dispatch import UFUNCS, parse_index, read_index

VIEW_OPS = frozenset({"index", "reshape", "transpose", "broadcast_to"})
# broadcast_to is also what the tracer inserts to align operands: a temporary, never written through
_LASTING_VIEW_OPS = VIEW_OPS - {"broadcast_to"}
_VIEWS: dict = {}  # live views made by basic indexing, in the order they were made (see ``track_view``)
_SEQUENCE = itertools.count()
_VIEW_ATOMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # builder -> ids of those views' atoms
_COPY_ATOMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # builder -> ids of single elements read
# builder -> {id(atom): (atom, list name)}: arrays a kept loop appended to a list as the array itself (ys.append(z))
_LIST_HELD: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def hold_in_list(builder, atom, list_name: str) -> None:
    """Note that the list ``list_name`` holds the array ``atom`` (of ``builder``) itself, as rows of a loop's
    stacked outputs that cannot see a later write into it (see :func:`check_writable`)."""
    _LIST_HELD.setdefault(builder, {})[id(atom)] = (atom, list_name)

_OPS = {"+": ew.add, "-": ew.sub, "*": ew.mul, "/": ew.div, "**": ew.power, "@": la.matmul,
        "&": bits.bitwise_and, "|": bits.bitwise_or, "^": bits.bitwise_xor, "<<": bits.left_shift,
        ">>": bits.right_shift}


def alias_of(builder, atom):
    """``("input", name)`` if ``atom`` is an input or a view of one, ``("view", None)`` if it views an
    intermediate, ``("fresh", None)`` otherwise."""
    producers = _index(builder).producers
    inputs = {id(v): v.name for v in builder.inputs}
    copies = _COPY_ATOMS.get(builder, ())
    through_view = False
    while True:
        if id(atom) in copies:  # x[i, j]: NumPy gives a new scalar, not a view
            return ("view", None) if through_view else ("fresh", None)
        if id(atom) in inputs:
            if getattr(builder, "parent", None) is None:
                return ("input" if not through_view else "view-of-input", inputs[id(atom)])
            # a loop body's or branch's input: an enclosing value it reads (judged there), or a carried value
            captured = [k for k, v in enumerate(builder.capture_inputs) if v is atom]
            if not captured:
                # a carried value: in its first iteration it is the value the loop started from (an input,
                # written in place by NumPy then, and by every later iteration's `x += ...` through it)
                origin = getattr(builder, "carry_origins", {}).get(id(atom))
                kind, name = alias_of(builder.parent, origin) if origin is not None else ("fresh", None)
                if kind in ("input", "view-of-input"):
                    return ("view-of-input" if through_view else kind, name)
                return ("view", None) if through_view else ("fresh", None)
            kind, name = alias_of(builder.parent, builder.captured[captured[0]])
            return ({"input": "view-of-input", "fresh": "view"}.get(kind, kind), name) if through_view else \
                (kind, name)
        eqn = producers.get(id(atom))
        if eqn is None or eqn.op not in VIEW_OPS:
            return ("view", None) if through_view else ("fresh", None)
        through_view, atom = True, eqn.inputs[0]


def has_views(builder, atom, skip: int = 0) -> bool:
    """Whether a slice, reshape or transpose of ``atom`` was taken (other than the tracked basic-index views,
    which a write refreshes), after the first ``skip`` views taken of it."""
    views, copies = _VIEW_ATOMS.get(builder, ()), _COPY_ATOMS.get(builder, ())
    taken = _index(builder).viewed.get(id(atom), ())[skip:]
    return any(id(out) not in views and id(out) not in copies for out in taken)


def views_taken(builder, atom) -> int:
    """How many views of ``atom`` were taken so far (a copy made now ignores them: they view its source)."""
    return len(_index(builder).viewed.get(id(atom), ()))


class _Index:
    """Which equation made each value, and which lasting views were taken of each, kept up to date as the
    builder grows (so a write costs the equations added since the last one, not the whole trace)."""

    def __init__(self):
        self.seen, self.producers, self.viewed, self.last = 0, {}, {}, None


_INDEXES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _index(builder) -> _Index:
    index = _INDEXES.get(builder)
    eqns = builder.eqns
    if index is None or len(eqns) < index.seen or (index.seen and eqns[index.seen - 1] is not index.last):
        index = _INDEXES[builder] = _Index()  # new, or the equations were rewritten: start again
    for e in eqns[index.seen:]:
        index.producers[id(e.out)] = e
        if e.op in _LASTING_VIEW_OPS and e.inputs:
            index.viewed.setdefault(id(e.inputs[0]), []).append(e.out)
    index.seen = len(eqns)
    index.last = eqns[-1] if eqns else None
    return index


# ---------------------------------------------------------------- views made by basic indexing
def track_view(view) -> None:
    """Register ``view`` (a tracer with ``_base`` and ``_spec``): a write to its base refreshes it."""
    key = next(_SEQUENCE)
    _VIEWS[key] = weakref.ref(view, lambda ref, key=key: _VIEWS.pop(key, None))
    _VIEW_ATOMS.setdefault(view.builder, set()).add(id(view.atom))


def track_copy(tracer) -> None:
    """Register ``tracer`` as a single element read (``x[i, j]``): a copy in NumPy, not a view."""
    _COPY_ATOMS.setdefault(tracer.builder, set()).add(id(tracer.atom))


def _views_of(tracer):
    views = (ref() for ref in list(_VIEWS.values()))  # in creation order: the refreshes' order is deterministic
    return [v for v in views if v is not None and v._base is tracer]


def _refresh(view) -> None:
    view.atom = read_index(view._base, view._spec, []).atom
    _VIEW_ATOMS.setdefault(view.builder, set()).add(id(view.atom))
    for inner in _views_of(view):
        _refresh(inner)


def store(tracer, result, skip=None) -> None:
    """Make ``tracer`` hold ``result`` (its type exactly), with NumPy's view semantics: a view writes
    through into its base, and the other views of what changed are refreshed."""
    tracer.atom = result.atom
    base = getattr(tracer, "_base", None)
    if base is not None:
        store(base, index_update(base, result, [], tracer._spec), skip=tracer)
        _VIEW_ATOMS.setdefault(tracer.builder, set()).add(id(tracer.atom))
    for view in _views_of(tracer):
        if view is not skip:
            _refresh(view)


# ---------------------------------------------------------------- what may be written
def _root(builder):
    while getattr(builder, "parent", None) is not None:
        builder = builder.parent
    return builder


def immutable_input(tracer) -> bool:
    """Whether ``tracer`` is an argument given as a Python number or NumPy scalar (or a loop's carry that started
    as one): immutable, so ``b += a`` makes a new value, as Python does, instead of writing in place."""
    if getattr(tracer, "_base", None) is not None:
        return False
    kind, name = alias_of(tracer.builder, tracer.atom)
    return kind == "input" and name in getattr(_root(tracer.builder), "immutable_inputs", ())


def check_writable(tracer, what: str, *, owned: bool = False, where=None) -> None:
    """Raise a TraceError when writing ``what`` (e.g. ``"x += ..."``) into ``tracer`` would lose NumPy's meaning.

    ``owned``: the tracer is a copy the function made (``x.copy()``) that still shares the copied value.
    """
    base = getattr(tracer, "_base", None)
    if base is not None:  # a basic-index view writes through into its base: that must be writable
        return check_writable(base, what, owned=_owned(base), where=where)
    held = _LIST_HELD.get(tracer.builder, {}).get(id(tracer.atom))
    if held is not None and held[0] is tracer.atom:
        raise TraceError(f"{what} writes into an array the list {held[1]} holds (a loop appended the array itself): "
                         f"NumPy's list would see the write, gradc's holds the values the loop appended",
                         where=where, hint=f"append a copy in the loop ({held[1]}.append(z.copy())), or compute a "
                                           "new value here (`z = z + ...`)")
    kind, name = ("fresh", None) if owned else alias_of(tracer.builder, tracer.atom)
    if kind == "input":
        _warn_input_written(what, name, where)
        return
    if kind == "view-of-input":
        raise ImmutableArgumentError(f"{what} changes a view (slice, reshape or transpose) of the input {name!r} in "
                                     f"place; gradc cannot carry that write back into {name!r}", where=where,
                                     hint="make a copy first (`v = v.copy()`) or compute a new value: `v = v + ...`")
    if kind == "view":
        raise TraceError(f"{what} changes a reshape or transpose view in place; gradc would not update the "
                         "array it views", where=where, hint="make a copy first (`v = v.copy()`) or compute a "
                         "new value: `v = v + ...`")
    skip = getattr(tracer, "views_before", 0) if owned else 0
    if has_views(tracer.builder, tracer.atom, skip):
        of = " (or of the array it was copied from, which it shares until written)" if owned else ""
        raise TraceError(f"{what} changes an array in place after a reshape or transpose of it{of} was taken; "
                         "gradc would not update those views", where=where, hint="compute a new value instead "
                         "(`y = y + ...`) and take views of that")


def _owned(tracer) -> bool:
    return getattr(tracer, "copied", None) is tracer.atom


def assign(tracer, result, what: str, cast=ew.astype, where=None) -> None:
    """Make ``tracer`` hold ``result`` (same shape; cast to its dtype within the same kind, as NumPy does)."""
    if result.aval.shape != tracer.aval.shape:
        raise ShapeError(f"{what}: the result has shape {result.aval.shape} but the array it is written into has "
                         f"{tracer.aval.shape}", where=where, hint="in-place operations cannot change an array's "
                         "shape; assign a new name: `y = y + ...`")
    store(tracer, _cast_into(result, tracer.aval, what, where, cast))


def _cast_into(value, t, what, where, cast=ew.astype):
    vt = aval(value)
    if vt.dtype is None or not isinstance(value, Traced):  # Python and NumPy values: NumPy's own cast
        return np.asarray(value).astype(t.np_dtype)
    if vt.dtype != t.dtype:
        if vt.is_float != t.is_float and vt.dtype != "bool":
            raise TraceError(f"{what} would cast {vt.dtype} into the {t.dtype} array in place", where=where,
                             hint="assign a new name (`y = y + ...`) or convert with .astype(...) first")
        value = cast(value, t.dtype)
    return value


# ---------------------------------------------------------------- the runtime functions
def setitem(target, key, value, where=None, through=()):
    """``target[key] = value``; returns what the name ``target`` holds afterwards (see the module docstring).
    ``through=(k1, ...)``: ``target[k1]...[key] = value``, a write into the view ``target[k1]...`` (into
    ``target`` where NumPy's index makes a view, nowhere where it makes a copy, as in NumPy).

    >>> import numpy as np
    >>> m = setitem(np.zeros((2, 2)), (slice(None), 0), [1.0, 2.0]); m
    array([[1., 0.],
           [2., 0.]])
    >>> setitem(np.zeros((2, 2)), 1, 3.0, through=(0,))
    array([[0., 3.],
           [0., 0.]])
    """
    if through:
        return _write_through(target, through, lambda sub: setitem(sub, key, value, where),
                              lambda outer: setitem(target, outer + tuple(_key_items(key)), value, where),
                              [value, key], where)
    traced = first_traced([target, value, *_key_items(key)])
    if traced is None or not isinstance(target, (np.ndarray, Traced)):
        target[key] = value
        return target
    what = "item assignment"
    if isinstance(target, Traced):
        check_writable(target, what, owned=_owned(target), where=where)
    elif target.base is not None:
        raise TraceError(f"{what} writes a traced value into a view of a NumPy array; gradc would not update "
                         "the array it views", where=where, hint="index the array itself, or make the view a "
                         "copy first (`v = v.copy()`)")
    _check_same_level(target, [value, *_key_items(key)], what, where)
    t = aval(target)
    if _traced_mask(key):
        return _masked_update(target, key, value, traced, what, where)
    spec, arrays = parse_index(t, key)
    if isinstance(target, Traced) and getattr(value, "_base", None) is target and getattr(value, "_spec", None) == \
            spec and not arrays:
        return target  # `x[k] = x[k]`, as Python's `x[k] += v` ends once the view has written through
    value = as_value(_cast_into(value, t, what, where), t, spec, arrays, traced, what, where)
    spec, arrays, value = fit(t, spec, arrays, value, what, where)
    if isinstance(target, Traced):
        store(target, index_update(target, value, arrays, spec))
        return target
    return index_update(lift_target(target, traced), value, arrays, spec)


def _traced_mask(key) -> bool:
    return isinstance(key, Traced) and aval(key).dtype == "bool"


def _masked_update(target, mask, value, traced, what, where):
    """``target[mask] = value`` for a traced boolean ``mask`` of the target's shape: ``np.where(mask, value,
    target)``. The value is one number or an array of the target's shape (NumPy's masked values, one per
    selected entry, would need the count of the mask: a data-dependent shape)."""
    t, m = aval(target), aval(mask)
    if m.shape != t.shape:
        raise TraceError(f"{what} with a traced boolean mask of shape {m.shape} into an array of shape {t.shape}",
                         where=where, hint="give the mask the array's shape, or write np.where(mask, new, old)")
    v = aval(value) if isinstance(value, Traced) else aval(np.asarray(value))
    if v.shape not in ((), t.shape):
        raise TraceError(f"{what} with a traced boolean mask takes one number (or an array of the target's shape), "
                         f"not an array of shape {v.shape}: how many entries the mask selects is known only when "
                         "the code runs", where=where, hint="write np.where(mask, new, old) with `new` of the "
                                                           "array's shape")
    base = target if isinstance(target, Traced) else lift_target(target, traced)
    val = ew.astype(value, t.dtype) if isinstance(value, Traced) else np.asarray(value, dtype=t.np_dtype)
    if aval(val).shape != t.shape:
        val = sh.broadcast_to(val, t.shape)
    new = ew.where(mask, val, base)
    if isinstance(target, Traced):
        store(target, new)
        return target
    return new


def check_reaches_caller(target, operands, param, where) -> None:
    """Refuse a traced write into a NumPy array the function was given (``param``: its parameter's name): the
    write makes a new traced array, and the caller's array, which NumPy would change, would not see it."""
    if param is None or not isinstance(target, np.ndarray):
        return
    if first_traced([x for o in operands for x in _key_items(o)]) is None:
        return
    raise TraceError(f"item assignment writes a traced value into the NumPy array passed in as {param!r}; the "
                     "caller's array would not see the change (it holds numbers, the write makes a new traced "
                     "array)", where=where, hint=f"return the array and assign it where the function is called: "
                     f"`{param}[...] = ...; return {param}`, then `{param} = helper({param}, ...)`")


def _forwarded(target, spec, arrays):
    """``target[index]`` when ``target`` was just made by writing ``v`` at that very index (``out[i] += a`` then
    ``out[i] *= b``): ``v`` itself, so that the second update reads no earlier array (and a loop's adjoint needs
    only the slot, not the array as it was between the writes). None otherwise."""
    if getattr(target, "_base", None) is not None:
        return None
    eqn = _index(target.builder).producers.get(id(target.atom))
    if eqn is None or eqn.op != "index_update" or tuple(eqn.params["spec"]) != tuple(spec):
        return None
    atoms = [getattr(a, "atom", None) for a in arrays]
    if len(atoms) != len(eqn.inputs) - 2 or any(a is None or a is not b for a, b in zip(atoms, eqn.inputs[2:])):
        return None
    value = target.wrap(eqn.inputs[1])
    shape = indexed_shape(aval(target).shape, spec, [aval(a).shape for a in arrays])
    return sh.broadcast_to(value, shape) if aval(value).shape != tuple(shape) else value


def _write_through(target, through, write, combined, operands, where):
    """``write`` applied to ``target[k1]...[kn]`` (``through``), as NumPy does: into ``target`` when each index is
    basic (the part is a view), into a temporary copy (no effect) otherwise. Traced: read the part, write it,
    write it back."""
    if first_traced([x for o in [*operands, target, *through] for x in _key_items(o)]) is None:
        part = target
        for k in through:
            part = part[k]
        write(part)
        return target
    if isinstance(target, (list, tuple, dict)):  # parts[0][2] = v: into the item the container holds, aliases and all
        part = target[through[0]]
        new = write(part) if len(through) == 1 else _write_through(part, through[1:], write, None, operands, where)
        if new is not part:
            if isinstance(target, tuple):
                raise TraceError("item assignment into an array a tuple holds, where gradc makes a new value",
                                 where=where, hint="hold the array in a list, or assign to a name of its own")
            target[through[0]] = new
        return target
    if not all(_basic(k) for k in through):
        return target  # NumPy writes into a copy that is then dropped
    if combined is not None and all(_integer(k) for k in through) and _basic(operands[1]):
        # ``Y[i][j] = v`` with whole-number outer indices is ``Y[i, j] = v``: one write, no copy of the row
        return combined(tuple(k for t in through for k in _key_items(t)))
    part = target[through[0]]
    part = part.copy() if hasattr(part, "copy") else part
    part = write(part) if len(through) == 1 else _write_through(part, through[1:], write, None, operands, where)
    return setitem(target, through[0], part, where)


def _integer(key) -> bool:
    """Whether every item of ``key`` is a whole number (a Python int or a 0-d integer value)."""
    return all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) or
               isinstance(k, Traced) and aval(k).shape == () and not aval(k).is_float and aval(k).dtype != "bool"
               for k in _key_items(key))


def _basic(key) -> bool:
    """Whether ``key`` is a basic index (NumPy returns a view): ints, slices, None, Ellipsis, integer scalars."""
    for k in _key_items(key):
        if k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer)) and not isinstance(k, bool):
            continue
        if isinstance(k, Traced) and aval(k).shape == () and aval(k).dtype not in ("bool",) and \
                not aval(k).is_float:
            continue
        return False
    return True


def setitem_op(target, key, op_symbol: str, value, where=None, through=()):
    """``target[key] op= value`` as Python runs it: read, apply the operator, write back (so repeated indices
    keep only their last write, NumPy's buffered semantics); returns what ``target`` holds afterwards.

    >>> import numpy as np
    >>> setitem_op(np.zeros(3), [0, 0, 2], "+", 1.0)
    array([1., 0., 1.])
    """
    if through:
        return _write_through(target, through, lambda sub: setitem_op(sub, key, op_symbol, value, where),
                              lambda outer: setitem_op(target, outer + tuple(_key_items(key)), op_symbol, value,
                                                       where),
                              [value, key], where)
    traced = first_traced([target, value, *_key_items(key)])
    if traced is None or not isinstance(target, (np.ndarray, Traced)):
        item = target[key]
        item = _inplace_python(item, op_symbol, value)
        target[key] = item
        return target
    op = _OPS.get(op_symbol)
    if op is None:
        raise TraceError(f"`{op_symbol}=` on an indexed traced array is not supported", where=where,
                         hint="write it out: `a[k] = a[k] " + op_symbol + " v` with an operation gradc supports")
    if _traced_mask(key):  # `y[mask] += v`: y + v where the mask holds
        return _masked_update(target, key, op(target, _operand(value)), traced, f"`{op_symbol}=`", where)
    spec, arrays = parse_index(aval(target), key)
    current = _forwarded(target, spec, arrays) if isinstance(target, Traced) else None
    if current is None:
        current = read_index(target, spec, arrays) if isinstance(target, Traced) else np.asarray(target)[key]
    if isinstance(current, Traced) and current is not target:
        track_copy(current)  # a temporary read, not a view the user holds
    result = op(current, _operand(value))
    if aval(result).dtype != aval(target).dtype and aval(result).is_float and not aval(target).is_float:
        raise TraceError(f"`{op_symbol}=` would cast a float result into the {aval(target).dtype} array",
                         where=where, hint="convert the array with .astype(np.float64) first")
    return setitem(target, key, result, where)


def ufunc_at(ufunc, target, indices, values, where=None):
    """``ufunc.at(target, indices, values)``: unbuffered, so repeated indices accumulate; returns what
    ``target`` holds afterwards.

    >>> import numpy as np
    >>> ufunc_at(np.subtract, np.ones(3), [2, 2], 0.5)
    array([1., 1., 0.])
    """
    traced = first_traced([target, values, *_key_items(indices)])
    if traced is None:
        ufunc.at(target, indices, values)
        return target
    combine = {np.add: ew.add, np.subtract: ew.sub}.get(ufunc)
    what = f"np.{getattr(ufunc, '__name__', ufunc)}.at"
    if combine is None and (UFUNCS.get(ufunc) is None or ufunc.nin != 2):
        raise TraceError(f"{what} on traced values is not supported", where=where,
                         hint="binary ufuncs gradc supports are (np.add.at, np.multiply.at, np.maximum.at, ...); "
                              "write other updates as `a[idx] = ...`")
    if isinstance(target, Traced):
        check_writable(target, what, owned=_owned(target), where=where)
    elif not isinstance(target, np.ndarray) or target.base is not None:
        raise TraceError(f"{what} writes a traced value into a view of a NumPy array (or a non-array)",
                         where=where, hint="index the array itself, or copy it first (`v = v.copy()`)")
    _check_same_level(target, [values, *_key_items(indices)], what, where)
    t = aval(target)
    spec, arrays = parse_index(t, indices)
    shape = indexed_shape(t.shape, spec, [aval(a).shape for a in arrays])
    values = sh.broadcast_to(as_value(_cast_into(values, t, what, where), t, spec, arrays, traced, what, where),
                             shape)
    result = target if isinstance(target, Traced) else lift_target(target, traced)
    if combine is not None:  # repeated positions accumulate: the transpose of a gather
        added = sh.gather_grad(values, arrays, spec, t.shape) if arrays else sh.index_grad(values, spec, t.shape)
        result = combine(result, added)
    else:  # one ordinary update per occurrence of the positions
        for layer_arrays, layer_values in layers(t, spec, arrays, values, what, where):
            current = read_index(result, spec, layer_arrays)
            new = _cast_into(UFUNCS[ufunc](current, layer_values), t, what, where)
            result = index_update(result, new, layer_arrays, spec)
    if isinstance(target, Traced):
        store(target, result)
        return target
    return result


# ---------------------------------------------------------------- helpers
def _check_same_level(target, operands, what, where):
    """A traced loop body or branch may not write into an array of the code around it: the write would be
    lost when the body's values go out of scope (the capture transform carries such arrays instead)."""
    if not isinstance(target, Traced):
        return
    depth = getattr(target.builder, "depth", 0)
    if any(isinstance(o, Traced) and getattr(o.builder, "depth", 0) > depth for o in operands):
        raise TraceError(f"{what} inside a traced loop body or branch writes into an array from outside it, "
                         "through a name the loop or branch does not assign (a helper's parameter, or a second "
                         "name for the array)", where=where, hint="carry the array through the loop: pass it in "
                         "and return it from the body; a helper that writes into it returns it, and the loop "
                         "assigns it (`out = helper(out, ...)`); or write through the array's own name")


def _key_items(key):
    return key if isinstance(key, tuple) else (key,)


def _operand(x):
    return np.asarray(x) if isinstance(x, (list, tuple)) else x


def _inplace_python(item, op_symbol, value):
    """``item op= value`` for the concrete case, with Python's own in-place operator."""
    import operator
    names = {"+": "iadd", "-": "isub", "*": "imul", "/": "itruediv", "//": "ifloordiv", "%": "imod",
             "**": "ipow", "@": "imatmul", "&": "iand", "|": "ior", "^": "ixor", "<<": "ilshift", ">>": "irshift"}
    return getattr(operator, names[op_symbol])(item, value)




def _warn_input_written(what: str, name: str, where) -> None:
    import warnings

    from gradc.errors import GradcWarning
    message = (f"{what} changes the input {name!r} in place: gradc differentiates the function of {name!r}'s value "
               "on entry and the compiled code works on a copy, so the caller's array does not change; copy it "
               f"first (`{name} = {name}.copy()`) to say so and silence this warning")
    from gradc.errors import user_location
    filename, _, line = (where or user_location() or "").rpartition(":")
    if filename and line.isdigit():
        warnings.warn_explicit(message, GradcWarning, filename, int(line))
    else:
        warnings.warn(message, GradcWarning, stacklevel=2)
