"""Large constant arrays on the C target without their bytes in the source: read broadcast, or filled by a loop.

A table the traced function computed from static values (``np.zeros``, ``np.full``, a row repeated over many
rows, ``np.arange``/``np.linspace`` grids, ``np.eye``, llsq's power table built by ``np.cumprod``) would else
be written into the unit as a string of its bytes, so the C source and its compile time grew with the data
(llsq at n = 4,096: 16.9 MB). Past :data:`FILL_LIMIT` elements:

* :func:`broadcast_parts`: an array repeating along some axes is its first slice along them, read with
  stride 0 there (an all-zero array is one element);
* :func:`fill_plan`: a grid, a power table or a mostly-zero array is computed into a work array at the top
  of the function by a short loop (re-entrant: no static state is written).

Each is kept only when NumPy, doing the very operations the C does in the same order and type (IEEE
arithmetic, no contraction under ``-std=c99``), gives the constant's bytes (NaN payloads, signed zeros);
else None and the caller writes the bytes as before.

>>> small, strides = broadcast_parts(np.zeros((300, 400)))
>>> small.shape, strides
((1, 1), (0, 0))
>>> fill_plan(np.linspace(-1.0, 1.0, 3000)).kind
'affine'
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gradc.backends.c.names import fresh
from gradc.backends.c.values import C_TYPES, Loc, literal
from gradc.ir.graph import Const, subgraphs

FILL_LIMIT = 2048  # elements (as BLOB_LIMIT): a larger constant is looked at for a broadcast or a fill
MAX_RUNS = 64  # a table of at most this many runs of equal entries is filled run by run
POWER_ROWS = 8  # rows of a power table filled together (independent multiplications in flight)
SPARSE_SHARE = 8  # a table with at most 1/SPARSE_SHARE of its entries non-zero is zeroed, then scattered
_C_TYPES = {np.dtype(np.float64): "double", np.dtype(np.float32): "float", np.dtype(np.int64): "int64_t",
            np.dtype(np.int32): "int32_t"}


def _bits(arr: np.ndarray) -> np.ndarray:
    return arr.view(f"u{arr.dtype.itemsize}")  # NaN == NaN and -0.0 != 0.0 here


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit equal (a few entries first: most candidates differ there already)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    bits_a, bits_b = _bits(np.ascontiguousarray(a)).reshape(-1), _bits(np.ascontiguousarray(b)).reshape(-1)
    probe = np.linspace(0, bits_a.size - 1, min(bits_a.size, 17)).astype(np.int64)
    return bool((bits_a[probe] == bits_b[probe]).all() and np.array_equal(bits_a, bits_b))


def broadcast_parts(arr: np.ndarray) -> tuple[np.ndarray, tuple] | None:
    """``(small, strides)``: ``arr`` is ``small`` (its first slice along each repeating axis) read at
    ``strides`` (0 on those axes), or None when no axis repeats or ``arr`` is small.

    >>> small, strides = broadcast_parts(np.tile(np.arange(3.0), (1000, 1)))
    >>> small.tolist(), strides
    ([[0.0, 1.0, 2.0]], (0, 1))
    """
    if arr.size <= FILL_LIMIT or arr.ndim == 0 or arr.dtype.kind not in "biuf":
        return None
    bits = _bits(np.ascontiguousarray(arr))
    keep = []
    for axis in range(arr.ndim):
        first = bits[(slice(None),) * axis + (slice(0, 1),)]
        keep.append(slice(0, 1) if arr.shape[axis] > 1 and (bits == first).all() else slice(None))
    if all(k == slice(None) for k in keep):
        return None
    small = np.ascontiguousarray(arr[tuple(keep)])
    step, strides = 1, []
    for axis in reversed(range(arr.ndim)):
        strides.append(0 if keep[axis] == slice(0, 1) else step)
        step *= small.shape[axis]
    return small, tuple(reversed(strides))


@dataclass
class FillPlan:
    """How to compute a constant into a contiguous array: ``kind`` and the numbers the loop needs."""

    kind: str  # "affine", "runs", "powers" or "sparse"
    dtype: np.dtype
    numbers: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)  # name -> small array the loop reads (written as a static)

    def lines(self, target: str, tables: dict, size: int) -> list:
        """C statements filling ``target`` (``size`` elements); ``tables``: the C names of ``self.tables``."""
        ctype = _C_TYPES[self.dtype]
        if self.kind == "affine":
            first, step = (self._lit(self.numbers[k]) for k in ("first", "step"))
            form = self.numbers["form"]
            k = f"({'double' if form == 'doubled' else ctype})gradc_k"
            if form == "doubled":  # computed in double, then rounded to float
                first, step = (literal(float(self.numbers[name]), "f64") for name in ("first", "step"))
                value = f"(float)({k} * ({step}) + ({first}))"
            elif form == "stepped":
                value = f"{k} * {step} + {first}"
            else:
                value = f"{first} + ({k} * {step}) / {self._lit(self.numbers['divisor'])}"
            lines = [f"for (long gradc_k = 0; gradc_k < {size}; ++gradc_k) {target}[gradc_k] = {value};"]
            if "last" in self.numbers:
                lines.append(f"{target}[{size - 1}] = {self._lit(self.numbers['last'])};")
            return lines
        if self.kind == "powers":
            return self._power_lines(target, tables["ratios"], ctype)
        if self.kind == "runs":
            return [f"for (long gradc_r = 0, gradc_k = 0; gradc_r < {self.numbers['count']}; ++gradc_r)",
                    f"    for (; gradc_k < {tables['ends']}[gradc_r]; ++gradc_k) "
                    f"{target}[gradc_k] = {tables['values']}[gradc_r];"]
        return [f"for (long gradc_k = 0; gradc_k < {size}; ++gradc_k) {target}[gradc_k] = 0;",
                f"for (long gradc_k = 0; gradc_k < {self.numbers['count']}; ++gradc_k) "
                f"{target}[{tables['positions']}[gradc_k]] = {tables['values']}[gradc_k];"]

    def _power_lines(self, target: str, ratios: str, ctype: str) -> list:
        """Each power the one before times its ratio, in order (as ``np.cumprod``), many chains at once: one
        chain's multiplications wait on each other, so a row at a time would cost several times the reads."""
        rows, cols = self.numbers["rows"], self.numbers["cols"]
        if self.numbers["by_rows"]:  # row j is row j - 1 times the ratios: contiguous, vectorisable
            return [f"for (long gradc_i = 0; gradc_i < {cols}; ++gradc_i) {target}[gradc_i] = 1;",
                    f"for (long gradc_j = 1; gradc_j < {rows}; ++gradc_j)",
                    f"    for (long gradc_i = 0; gradc_i < {cols}; ++gradc_i)",
                    f"        {target}[gradc_j * {cols} + gradc_i] = {target}[(gradc_j - 1) * {cols} + gradc_i]"
                    f" * {ratios}[gradc_i];"]
        block = POWER_ROWS
        return [f"for (long gradc_i = 0; gradc_i < {rows}; gradc_i += {block}) {{",
                f"    long gradc_rows = {rows} - gradc_i < {block} ? {rows} - gradc_i : {block};",
                f"    {ctype} gradc_p[{block}];",
                "    for (long gradc_b = 0; gradc_b < gradc_rows; ++gradc_b) gradc_p[gradc_b] = 1;",
                f"    for (long gradc_j = 0; gradc_j < {cols}; ++gradc_j)",
                "        for (long gradc_b = 0; gradc_b < gradc_rows; ++gradc_b) {",
                f"            {target}[(gradc_i + gradc_b) * {cols} + gradc_j] = gradc_p[gradc_b];",
                f"            gradc_p[gradc_b] = gradc_p[gradc_b] * {ratios}[gradc_i + gradc_b];",
                "        }",
                "}"]

    def _lit(self, value) -> str:
        if self.dtype.kind == "i":
            return str(int(value))
        text = literal(float(value), "f64")  # repr: the exact double (a float32 value is one)
        return f"((float){text})" if self.dtype == np.float32 else f"({text})" if text.startswith("-") else text


def fill_plan(arr: np.ndarray) -> FillPlan | None:
    """A loop computing ``arr`` bit for bit, or None (small, another dtype, or no plan reproduces it).

    >>> table = np.cumprod(np.concatenate([np.ones((3000, 1)), np.repeat(np.linspace(-1, 1, 3000)[:, None], 3,
    ...                                    axis=1)], axis=1), axis=1)
    >>> plan = fill_plan(table); plan.kind, plan.numbers["rows"], plan.tables["ratios"].shape
    ('powers', 3000, (3000,))
    """
    if arr.size <= FILL_LIMIT or arr.ndim == 0 or arr.dtype not in _C_TYPES:
        return None
    arr = np.ascontiguousarray(arr)
    for plan in (_affine, _runs, _powers, _sparse):
        found = plan(arr)
        if found is not None:
            return found
    return None


def _affine(arr: np.ndarray) -> FillPlan | None:
    """``first + k*step`` over the flat index ``k`` (as written, or ``first + (k*span)/divisor``, or in double
    then rounded to float), the last element possibly set apart (``np.linspace`` sets it to ``stop``)."""
    flat, n, dt = arr.reshape(-1), arr.size, arr.dtype
    with np.errstate(all="ignore"):
        if dt.kind == "i":
            step = int(flat[1]) - int(flat[0])
            candidates = [("stepped", flat[0], step, None, flat[0] + np.arange(n, dtype=dt) * dt.type(step))]
        else:
            k = np.arange(n).astype(dt)
            first, last = flat[0], flat[-1]
            step = dt.type(flat[1] - flat[0])
            lin_step = dt.type((last - first) / dt.type(n - 1))
            span, divisor = dt.type(last - first), dt.type(n - 1)
            steps = []  # the step the user wrote is rarely a difference of two entries: its neighbours too
            for base in (step, lin_step):
                for ulps in range(-3, 4):
                    near = _ulps_away(base, ulps)
                    if near not in steps:
                        steps.append(near)
            candidates = [("stepped", first, s, None, k * s + first) for s in steps]
            candidates.append(("spanned", first, span, divisor, first + (k * span) / divisor))
            if dt == np.float32:  # np.linspace(..., dtype=float32) computes in double, then rounds
                k64, first64 = np.arange(n, dtype=np.float64), np.float64(first)
                step64 = (np.float64(last) - first64) / np.float64(n - 1)
                candidates.append(("doubled", first64, step64, None, (k64 * step64 + first64).astype(dt)))
    for form, first, step, divisor, values in candidates:
        numbers = {"form": form, "first": first, "step": step, "divisor": divisor}
        if _same(values, flat):
            return FillPlan("affine", dt, numbers)
        values = values.copy()
        values[-1] = flat[-1]
        if _same(values, flat):
            return FillPlan("affine", dt, {**numbers, "last": flat[-1]})
    return None


def _ulps_away(x, ulps: int):
    """``x`` moved ``ulps`` representable numbers up (down when negative)."""
    towards = x.dtype.type(np.inf if ulps > 0 else -np.inf)
    for _ in range(abs(ulps)):
        x = np.nextafter(x, towards)
    return x


def _powers(arr: np.ndarray) -> FillPlan | None:
    """Rows (or columns) ``1, r, r*r, ...``: each entry the one before times a fixed ratio, in order."""
    if arr.ndim != 2 or arr.dtype.kind != "f":
        return None
    for by_rows, table in ((False, arr), (True, arr.T)):
        rows, cols = table.shape
        if cols < 3 or not (table[:, 0] == 1).all():
            continue
        ratios = np.ascontiguousarray(table[:, 1])
        built = np.cumprod(np.concatenate([np.ones((rows, 1), arr.dtype), np.repeat(ratios[:, None], cols - 1, axis=1)],
                                          axis=1), axis=1)  # a left fold: p = p * r, as the C loop
        if _same(built, np.ascontiguousarray(table)):
            return FillPlan("powers", arr.dtype, {"rows": arr.shape[0], "cols": arr.shape[1], "by_rows": by_rows},
                            {"ratios": ratios})
    return None


def _runs(arr: np.ndarray) -> FillPlan | None:
    """A step function: at most :data:`MAX_RUNS` runs of equal entries (bitwise), each written by a loop."""
    bits = _bits(arr.reshape(-1))
    starts = np.concatenate([[0], np.flatnonzero(bits[1:] != bits[:-1]) + 1])
    if starts.size > MAX_RUNS:
        return None
    ends = np.append(starts[1:], bits.size).astype(np.int64)
    return FillPlan("runs", arr.dtype, {"count": int(starts.size)},
                    {"ends": ends, "values": np.ascontiguousarray(arr.reshape(-1)[starts])})


def _sparse(arr: np.ndarray) -> FillPlan | None:
    """Zeros, then the few non-zero entries (bitwise: a -0.0 is one) from a table of positions and values."""
    flat = arr.reshape(-1)
    positions = np.flatnonzero(_bits(flat) != 0)
    if positions.size > arr.size // SPARSE_SHARE:
        return None
    return FillPlan("sparse", arr.dtype, {"count": int(positions.size)},
                    {"positions": positions.astype(np.int64), "values": np.ascontiguousarray(flat[positions])})


def _key(arr: np.ndarray) -> tuple:
    return (arr.dtype.str, arr.shape, np.ascontiguousarray(arr).tobytes())


def fill_constants(emitter, graphs: list) -> None:
    """Compute each large constant of ``graphs`` (and their loop bodies and branches, not the helper functions
    they call) that has a :func:`fill_plan` into a work array of ``emitter``'s function, at its top (so the
    array holds it wherever it is read); records ``emitter.filled``: constant key -> location."""
    emitter.filled = getattr(emitter, "filled", {})
    tried: set = set()  # constants without a plan (each looked at once)
    stack = list(graphs)
    while stack:
        g = stack.pop(0)
        for e in g.eqns:
            for atom in e.inputs:
                if not isinstance(atom, Const) or atom.value.size <= FILL_LIMIT:
                    continue
                key = _key(atom.value)
                if key in emitter.filled or key in tried or broadcast_parts(atom.value) is not None:
                    continue
                tried.add(key)
                plan = fill_plan(atom.value)
                if plan is not None:
                    name = _filled(emitter, np.ascontiguousarray(atom.value), plan)
                    emitter.filled[key] = Loc(name, atom.type.shape, dtype=atom.type.dtype)
            if e.op != "call":
                stack.extend(subgraphs(e))


def _filled(emitter, arr: np.ndarray, plan: FillPlan) -> str:
    """The name of a work array holding ``arr``, filled here by ``plan`` (whose own large tables, such as the
    ratios of a power table, are filled first the same way)."""
    tables = {}
    for label, table in plan.tables.items():
        inner = fill_plan(table)
        if inner is not None:
            tables[label] = _filled(emitter, table, inner)
        else:
            ctype = "long" if label in ("positions", "ends") else _C_TYPES[table.dtype]
            tables[label] = emitter.module.static("C" if ctype != "long" else "G", ctype, table.tolist())
    name = fresh("table", emitter.taken)
    emitter.taken.add(name)
    emitter.arrays.append((name, _C_TYPES[arr.dtype], arr.size))  # never pooled: it lives the whole call
    emitter.emit(f"/* {arr.size} constant values computed by a loop ({plan.kind}), not written out */")
    for line in plan.lines(name, tables, arr.size):
        emitter.emit(line)
    return name


def constant_location(emitter, atom):
    """Where a non-scalar constant is read: its filled work array, its repeating slice at stride 0, or a static."""
    arr = atom.value
    filled = getattr(emitter, "filled", {}).get(_key(arr)) if arr.size > FILL_LIMIT else None
    if filled is not None:
        return filled
    ctype = C_TYPES[atom.type.dtype]
    parts = broadcast_parts(arr) if not ctype.endswith("_Complex") else None
    if parts is not None:
        small, strides = parts
        name = emitter.module.static("C", ctype, small.reshape(-1).tolist(), small.shape)
        return Loc(name, atom.type.shape, 0, strides, dtype=atom.type.dtype)
    name = emitter.module.static("C", ctype, arr.reshape(-1).tolist(), atom.type.shape)
    return Loc(name, atom.type.shape, dtype=atom.type.dtype)
