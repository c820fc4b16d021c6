"""In-place updates on traced arrays: allowed where NumPy's meaning is kept, refused where it would be lost.

``y += 1`` on a value the function computed rebinds the traced array object, so every
Python name for it sees the new value, as in NumPy. Refused, at the user's line:
an update of an input (the caller's array would not change), of a view (a slice,
reshape or transpose: the array it views would not change), and of an array that
views were taken of (they would not see the change).

>>> from gradc.ir.builder import Builder
>>> from gradc.ir.types import TensorType
>>> b = Builder(); x = b.input("x", TensorType((3,), "f64"))
>>> alias_of(b, x)
('input', 'x')
"""
from __future__ import annotations

from gradc.errors import ShapeError, TraceError

VIEW_OPS = frozenset({"index", "reshape", "transpose", "broadcast_to"})
# broadcast_to is also what the tracer inserts to align operands: a temporary, never written through
_LASTING_VIEW_OPS = VIEW_OPS - {"broadcast_to"}


def alias_of(builder, atom):
    """``("input", name)`` if ``atom`` is an input or a view of one, ``("view", None)`` if it views an
    intermediate, ``("fresh", None)`` otherwise."""
    producers = {id(e.out): e for e in builder.eqns}
    inputs = {id(v): v.name for v in builder.inputs}
    through_view = False
    while True:
        if id(atom) in inputs:
            return ("input" if not through_view else "view-of-input", inputs[id(atom)])
        eqn = producers.get(id(atom))
        if eqn is None or eqn.op not in VIEW_OPS:
            return ("view", None) if through_view else ("fresh", None)
        through_view, atom = True, eqn.inputs[0]


def has_views(builder, atom) -> bool:
    """Whether a slice, reshape or transpose of ``atom`` was taken."""
    return any(e.op in _LASTING_VIEW_OPS and e.inputs and e.inputs[0] is atom for e in builder.eqns)


def check_writable(tracer, what: str, *, owned: bool = False) -> None:
    """Raise a TraceError when writing ``what`` (e.g. ``"x += ..."``) into ``tracer`` would lose NumPy's meaning.

    ``owned``: the tracer is a copy the function made (``x.copy()``) that still shares the copied value.
    """
    kind, name = ("fresh", None) if owned else alias_of(tracer.builder, tracer.atom)
    if kind == "input":
        raise TraceError(f"{what} changes the input {name!r} in place; the caller's array would not change",
                         hint=f"compute a new value instead: `{name} = {name} + ...` (or np.where(mask, new, "
                              f"{name}) for some entries); a traced function must not modify its arguments")
    if kind == "view-of-input":
        raise TraceError(f"{what} changes a view (slice, reshape or transpose) of the input {name!r} in place; "
                         "the caller's array would not change", hint="make a copy first (`v = v.copy()`) or "
                         "compute a new value: `v = v + ...`")
    if kind == "view":
        raise TraceError(f"{what} changes a view (slice, reshape or transpose) in place; gradc would not "
                         "update the array it views", hint="make a copy first (`v = v.copy()`) or compute a "
                         "new value: `v = v + ...`")
    if has_views(tracer.builder, tracer.atom):
        raise TraceError(f"{what} changes an array in place after a slice, reshape or transpose of it was taken; "
                         "gradc would not update those views", hint="compute a new value instead (`y = y + ...`) "
                         "and take views of that")


def assign(tracer, result, what: str, cast) -> None:
    """Make ``tracer`` hold ``result`` (same shape; cast to its dtype within the same kind, as NumPy does)."""
    if result.aval.shape != tracer.aval.shape:
        raise ShapeError(f"{what}: the result has shape {result.aval.shape} but the array it is written into has "
                         f"{tracer.aval.shape}", hint="in-place operations cannot change an array's shape; "
                         "assign a new name: `y = y + ...`")
    if result.aval.dtype != tracer.aval.dtype:
        if result.aval.is_float != tracer.aval.is_float:
            raise TraceError(f"{what} would cast {result.aval.dtype} into the {tracer.aval.dtype} array in place",
                             hint="assign a new name (`y = y + ...`) or convert with .astype(...) first")
        result = cast(result, tracer.aval.dtype)
    tracer.atom = result.atom
