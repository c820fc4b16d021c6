"""The C lowering of ``index_update``: ``out = x.copy(); out[index] = v``, as NumPy assigns.

``x`` is copied into the result's storage, unless ``x``'s array is the emitter's to write and
nothing reads it afterwards (a work array, or a loop's carried array: ``in_place``); then the
result takes its array and is written in place. ``index_add`` (``v`` added, as ``np.add.at``)
is lowered the same way with ``+=``. ``v``
is broadcast to the indexed shape and written element by element in row-major order, so of
repeated positions the last write stays, as in NumPy. Slices, ints and ``None`` are a strided
view of the result (``values.index_view``); index arrays (a loop counter among them) go
through the tables of ``gather`` (``LoopLowerings.index_code``): a negative index wraps once.
An index read at run time that is still out of range makes the function return its status
(``control.loop_limits``, ``kind="index"``; the Python callers raise ``ValueError`` where
NumPy raises ``IndexError``) before anything is written there; a constant one is refused
when the C is emitted.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.ops.shape_extra import index_update
>>> from gradc.backends.c.emit import emit_function
>>> g = trace(lambda x, v: index_update(x * 2.0, v, [], [("slice", None, None, 2)]) * x, np.ones(4), 1.0)
>>> print(emit_function(g, "f", ["value"])[1])  # t1 is dead after the update: written in place
void f(const double *restrict x, const double *restrict v, double *restrict value)
{
    double t1[4];
    /* t1 = mul x t0 */
    for (long k = 0; k < 4; ++k) {
        t1[k] = 2.0*x[k];
    }
    /* t2 = index_update t1 v: v broadcast to (2,), written at the index in place */
    for (long i0 = 0; i0 < 2; ++i0) {
        t1[2*i0] = v[0];
    }
    /* t3 = mul t2 x */
    for (long k = 0; k < 4; ++k) {
        value[k] = t1[k]*x[k];
    }
}
"""
from __future__ import annotations

from gradc.backends.c.values import C_TYPES, Loc, eqn_text, index_view, loops
from gradc.errors import EmitError
from gradc.ir.graph import Const
from gradc.ops.shape_extra import indexed_shape


def broadcast_loc(v: Loc, shape) -> Loc:
    """``v`` read as broadcast to ``shape`` (stride 0 along the axes it is repeated on).

    >>> broadcast_loc(Loc("v", (3,)), (2, 3)).at(["i0", "i1"])
    'v[i1]'
    """
    lead = len(shape) - len(v.shape)
    strides = [0] * lead + [0 if d == 1 and n != 1 else s for s, d, n in zip(v.strides, v.shape, shape[lead:])]
    return Loc(v.name, shape, v.offset, strides, v.value, v.local, v.dtype)


def _check_constant_indices(e, x_shape):
    """Refuse a constant index array with an entry out of range (NumPy would raise IndexError at every call)."""
    axis = 0
    for item in e.params["spec"]:
        if item[0] == "array":
            atom = e.inputs[2 + item[1]]
            n = x_shape[axis]
            if isinstance(atom, Const) and atom.value.size and not (
                    -n <= int(atom.value.min()) and int(atom.value.max()) < n):
                raise EmitError(f"{e.out.name} = index_update: an index is out of range for axis {axis} of "
                                f"length {n}", where="", hint="each index must be in [-n, n)")
        if item[0] != "new":
            axis += 1


UPDATE_OPS = ("index_update", "index_add")  # ops writing (``=``) or adding (``+=``) a value at an index of a copy
_INDEX_HINT = "NumPy raises IndexError here: each index must be in [-n, n) for an axis of length n"


def index_check(eqn):
    """``(what, hint)`` of an ``index_update`` whose index arrays are read at run time (checked in C), else None.

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> from gradc.ops.shape_extra import index_update
    >>> g = trace(lambda x, i: index_update(x, 0.0, [i], [("array", 0)]), np.ones(3), np.array(1))
    >>> index_check(g.eqns[-1])[0]
    'the index of index_update t0'
    """
    if eqn.op not in UPDATE_OPS or all(isinstance(a, Const) for a in eqn.inputs[2:]):
        return None
    return f"the index of {eqn.op} {eqn.out.name}", _INDEX_HINT


class UpdateLowerings:
    """``op_index_update``, mixed into ``FunctionEmitter`` (through ``LoopLowerings``)."""

    def op_index_update(self, e):
        self.write_at(e, "=")

    def op_index_add(self, e):
        """``index_add`` (``x`` with ``v`` added at the index; repeated positions accumulate, as ``np.add.at``)."""
        self.write_at(e, "+=")

    def write_at(self, e, assign: str):
        """``out = x`` (in place when ``x`` is dead, else a copy), then ``out[index] assign v`` element by element."""
        x = self.atom_loc(e.inputs[0])
        v = self.atom_loc(e.inputs[1])
        arrays = [self.atom_loc(a) for a in e.inputs[2:]]
        spec = e.params["spec"]
        target = indexed_shape(x.shape, spec, [a.shape for a in arrays])
        _check_constant_indices(e, x.shape)
        vb = broadcast_loc(v, target)
        if x.shape == ():  # the whole of a 0-d value (its spec has None items at most)
            out = self.storage(e.out)
            self.emit(f"/* {eqn_text(e)} */")
            where = f"const {C_TYPES[out.dtype]} {out.name}" if out.local else out.at(())
            value = vb.at(["0"] * len(target))
            self.emit(f"{where} = {value if assign == '=' else f'{x.at(())} + {value}'};")
            return
        out = self.in_place(e, x, [v] + arrays)
        what = f"{vb.name or 'a constant'} broadcast to {target}" if vb.shape != v.shape else vb.name or "a constant"
        verb = "written" if assign == "=" else "added"
        if out is None:
            out = self.storage(e.out)
            self.copy(out, x, f"{eqn_text(e)}: a copy of {x.name or 'a constant'}, then {what} {verb} at the index")
        else:
            self.emit(f"/* {eqn_text(e)}: {what}, {verb} at the index in place */")
        if not arrays:
            view = index_view(out, spec, target)
            lines, idx = loops(target)
            self.open(lines)
            self.emit(f"{view.at(idx)} {assign} {vb.at(idx)};")
            self.close(len(lines))
            return
        limit = self.limit_of(e)
        body, dst, n = self.index_code(out, arrays, spec, target, None if limit is None else limit.code,
                                       atoms=e.inputs[2:])
        if vb.value is not None or vb.local or vb.standard:
            src = vb.flat("k")
        else:  # a view or a broadcast: the position of each element, row-major, in a table
            src = f"{vb.name}[{self.module.static('G', 'long', vb.physical().reshape(-1).tolist())}[k]]"
        self.open([f"for (long k = 0; k < {n}; ++k) {{"])
        for line in body:
            self.emit(line)
        self.emit(f"{dst} {assign} {src};")  # in order: of repeated positions the last write stays (or all add up)
        self.close(1)

    def in_place(self, e, x: Loc, reads) -> Loc | None:
        """``x``'s own array for the result, when this emitter may write that array and nothing reads it after
        this equation (and neither ``v`` nor an index reads it): see ``in_place.InPlaceStorage``; else None (copy).

        A value held elsewhere (an input, an output parameter, a constant, a view into part of another
        value) is never written: only an array whose values are all known to be dead here.
        """
        if id(e.out) in self.direct_out:
            return None
        slot = self.writable_slot(x, e.inputs[0], reads)
        if slot is None:
            return None
        loc = self.reuse(slot, x, id(e.out), x.shape, x.dtype)  # not free while the result is alive
        self.loc[id(e.out)] = loc
        return loc
