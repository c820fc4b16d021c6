"""Loop lowerings of the C emitter: views, reductions, matmul, concatenate and indexing.

``LoopLowerings`` is mixed into ``FunctionEmitter`` (``c_src``); each ``op_KIND`` method
lowers one equation whose ``C_LOWERING`` entry names ``KIND``.
"""
from __future__ import annotations

import numpy as np

from gradc.backends.c.convolution import ConvLowerings
from gradc.backends.c.linalg import LinalgLowerings
from gradc.backends.c.matmul import MatmulLowerings
from gradc.backends.c.scalar_types import symbol
from gradc.backends.c.sorting import SortLowerings
from gradc.backends.c.update import UpdateLowerings
from gradc.backends.c.values import C_TYPES, Loc, dim_c, eqn_text, index_view, known, loops, size
from gradc.ir.dims import is_symbolic
from gradc.ops.shape import spec_to_numpy

SHORT_REDUCED = 16  # trailing reduced axes of at most this many elements go outside the kept ones (below)


def _reduction_order(op, shape, axes) -> list:
    """The order of the loops over ``shape`` of a reduction over ``axes``: the array's own, except that short
    trailing reduced axes (a row sum of an n x 8 array) go outside, so the inner loop runs along the kept axes
    and vectorises. Each output element still takes its terms in the same order: the same bits either way.

    >>> _reduction_order("sum", (1000, 8), (1,)), _reduction_order("sum", (10, 1000), (1,))
    ([1, 0], [0, 1])
    """
    ndim = len(shape)
    kept = [a for a in range(ndim) if a not in axes]
    trailing = sorted(axes) == list(range(ndim - len(axes), ndim))
    if op not in ("sum", "mean", "prod") or not kept or not trailing \
            or not known(size([shape[a] for a in axes]) <= SHORT_REDUCED, False) \
            or not known(size([shape[a] for a in kept]) >= 64, False):
        return list(range(ndim))
    return sorted(axes) + kept


class LoopLowerings(MatmulLowerings, LinalgLowerings, UpdateLowerings, SortLowerings, ConvLowerings):
    """Methods lowering non-elementwise ops; they use the emitter's ``emit``/``open``/``close``."""

    def copy(self, dst, src, comment):
        self.emit(f"/* {comment} */")
        lines, idx = loops(src.shape)
        self.open(lines)
        self.emit(f"{dst.at(idx) if not dst.local else dst.name} = {src.at(idx)};")
        self.close(len(lines))

    def op_view(self, e):
        src = self.atom_loc(e.inputs[0])
        shape = e.out.type.shape
        if e.op == "transpose":
            perm = e.params["perm"]
            loc = Loc(src.name, shape, src.offset, [src.strides[p] for p in perm], src.value, src.local, src.dtype)
        elif e.op == "broadcast_to":
            lead = len(shape) - len(src.shape)
            strides = [0] * lead + [0 if d == 1 and n != 1 else s
                                    for s, d, n in zip(src.strides, src.shape, shape[lead:])]
            loc = Loc(src.name, shape, src.offset, strides, src.value, src.local, src.dtype)
            if src.local:
                loc.local = False  # a broadcast scalar local reads as the local at every index
                loc.value = symbol(src.name, src.dtype)
        else:  # basic index
            loc = index_view(src, e.params["spec"], shape)
        if src.value is None and not src.local:
            self.emit(f"/* {eqn_text(e)}: no code, read in place from {src.name} */")
        self.loc[id(e.out)] = loc

    def op_reshape(self, e):
        src = self.atom_loc(e.inputs[0])
        shape = e.out.type.shape
        if src.standard or src.value is not None:
            if src.value is None and not src.local:
                self.emit(f"/* {eqn_text(e)}: no code, read in place from {src.name} */")
            self.loc[id(e.out)] = Loc(src.name, shape, src.offset, None, src.value, src.local, src.dtype)
            if src.local and shape != ():
                self.loc[id(e.out)].local, self.loc[id(e.out)].value = False, symbol(src.name, src.dtype)
            return
        out = self.storage(e.out)
        self.copy(Loc(out.name, src.shape, dtype=out.dtype), src, eqn_text(e) + ": copy of a strided view")

    def op_reduce(self, e):
        product = self.fused.get(id(e))
        if product is not None:  # sum(a * b): the factors multiplied where the product would be read
            return self.reduce_product(e, product)
        x = self.atom_loc(e.inputs[0])
        out = self.storage(e.out)
        init = {"sum": "0", "mean": "0", "prod": "1", "max": "-INFINITY", "min": "INFINITY"}[e.op]
        if x.dtype in ("i64", "i32") and e.op in ("max", "min"):  # an infinity converted to an int is undefined
            init = {("i64", "max"): "INT64_MIN", ("i64", "min"): "INT64_MAX", ("i32", "max"): "INT32_MIN",
                    ("i32", "min"): "INT32_MAX"}[x.dtype, e.op]
        if e.op in ("sum", "mean") and out.shape == () and x.dtype == out.dtype and x.dtype in ("f64", "f32") \
                and x.value is None and not x.local and x.standard and known(size(x.shape) >= 64, True):
            return self.reduce_all(e, x, out)
        if e.op in ("sum", "mean") and _long_rows(e, x, out):
            return self.reduce_rows(e, x, out)
        self.emit(f"/* {eqn_text(e)} */")
        self.reduce_loops(e, out, x.shape, x.dtype, init, x.at)

    def reduce_product(self, e, product):
        """``sum``/``mean`` of ``product`` (a ``mul`` read by nothing else: ``reduce_fusion``), never stored."""
        factors = [self.atom_loc(a) for a in product.inputs]
        out = self.storage(e.out)
        self.emit(f"/* {eqn_text(product)}: not stored, its factors multiplied in the sum below */")
        self.emit(f"/* {eqn_text(e)} */")
        t = product.out.type
        self.reduce_loops(e, out, t.shape, t.dtype, "0", lambda idx: "*".join(f"({f.at(idx)})" for f in factors))

    def reduce_loops(self, e, out, shape, dtype, init, read):
        """The loops of a reduction of an operand of ``shape`` whose element at ``idx`` is ``read(idx)``."""
        axes, keep = e.params["axes"], e.params["keepdims"]
        result = None
        if out.shape == () and not out.local:  # accumulate in a local, store once
            result, out = out, Loc("acc", (), local=True, dtype=out.dtype)
            self.open(["{"])
        if out.local:
            self.emit(f"{C_TYPES[out.dtype]} {out.name} = {init};")
        else:
            self.each(out, f"@ = {init};")
        order = _reduction_order(e.op, shape, axes)
        lines, inner = loops([shape[a] for a in order])
        idx = [inner[order.index(a)] for a in range(len(shape))]
        self.open(lines)
        out_idx = [("0" if a in axes else i) for a, i in enumerate(idx) if keep or a not in axes]
        o, v = self.target(out, out_idx), read(idx)
        nan = f" || isnan({v})" if dtype in ("f32", "f64") else ""
        step = {"sum": f"{o} += {v};", "mean": f"{o} += {v};", "prod": f"{o} *= {v};",
                "max": f"if ({v} > {o}{nan}) {o} = {v};",  # NaN wins, as in NumPy
                "min": f"if ({v} < {o}{nan}) {o} = {v};"}[e.op]
        self.emit(step)
        self.close(len(lines))
        if e.op == "mean":
            if out.local:
                self.emit(f"{out.name} /= {dim_c(e.params['count'])};")
            else:
                self.each(out, f"@ /= {dim_c(e.params['count'])};")
        if result is not None:
            self.emit(f"{result.at(())} = acc;")
            self.close(1)

    def reduce_all(self, e, x, out):
        """A contiguous array summed to a scalar in 8 running sums (independent, so the loop vectorises)."""
        ctype, n = C_TYPES[out.dtype], size(x.shape)
        self.emit(f"/* {eqn_text(e)}: in 8 running sums, added pairwise */")
        if out.local:
            self.emit(f"{ctype} {out.name};")
        self.open(["{"])
        self.emit(f"{ctype} acc[8] = {{0, 0, 0, 0, 0, 0, 0, 0}};")
        full = f"{dim_c(n, paren=True)}/8*8" if hasattr(n, "free_symbols") else n // 8 * 8  # whole blocks of 8
        self.open([f"for (long k = 0; k < {full}; k += 8) {{"])
        for half in (range(4), range(4, 8)):
            self.emit(" ".join(f"acc[{j}] += {x.flat(f'k + {j}' if j else 'k')};" for j in half))
        self.close(1)
        if hasattr(n, "free_symbols") or n % 8:
            self.open([f"for (long k = {full}; k < {dim_c(n)}; ++k) {{"])
            self.emit(f"acc[0] += {x.flat('k')};")
            self.close(1)
        total = "((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))"
        if e.op == "mean":
            total = f"({total}) / ({dim_c(e.params['count'])})"  # a product too: / (3*n)
        self.emit(f"{out.name if out.local else out.at(())} = {total};")
        self.close(1)

    def reduce_rows(self, e, x, out):
        """Each row of a contiguous array summed over its long trailing axes in 8 running sums, as ``reduce_all``
        sums a whole array (a single running sum is a chain of dependent additions, 4 cycles each)."""
        ctype, n = C_TYPES[out.dtype], size(x.shape)
        length = n // size(out.shape)
        full = length // 8 * 8
        self.emit(f"/* {eqn_text(e)}: each row in 8 running sums, added pairwise */")
        self.open([f"for (long r = 0; r < {size(out.shape)}; ++r) {{"])
        self.emit(f"{ctype} acc[8] = {{0, 0, 0, 0, 0, 0, 0, 0}};")
        self.emit(f"const {ctype} *restrict row = &{x.flat(f'{length}*r')};")
        self.open([f"for (long k = 0; k < {full}; k += 8) {{"])
        for half in (range(4), range(4, 8)):
            self.emit(" ".join(f"acc[{j}] += row[k + {j}];" if j else "acc[0] += row[k];" for j in half))
        self.close(1)
        if length % 8:
            self.open([f"for (long k = {full}; k < {length}; ++k) {{"])
            self.emit("acc[0] += row[k];")
            self.close(1)
        total = "((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))"
        if e.op == "mean":
            total = f"({total}) / ({dim_c(e.params['count'])})"
        self.emit(f"{out.flat('r')} = {total};")
        self.close(1)

    def op_argreduce(self, e):
        x = self.atom_loc(e.inputs[0])
        out = self.storage(e.out)
        axis = e.params["axis"] if e.params["axis"] is not None else 0
        cmp = ">" if e.op == "argmax" else "<"
        self.emit(f"/* {eqn_text(e)} */")
        rest = [d for a, d in enumerate(x.shape) if a != axis]
        lines, idx = loops(rest)
        if out.local:
            self.emit(f"{C_TYPES[out.dtype]} {out.name};")
        self.open(lines or ["{"])
        full = list(idx[:axis]) + ["best"] + list(idx[axis:])
        j = f"i{len(idx)}"  # the probe index: a name no array can take
        probe = list(idx[:axis]) + [j] + list(idx[axis:])
        self.emit("long best = 0;")
        self.open([f"for (long {j} = 1; {j} < {dim_c(x.shape[axis])}; ++{j}) {{"])
        nan = f" || (isnan({x.at(probe)}) && !isnan({x.at(full)}))" if x.dtype in ("f32", "f64") else ""
        self.emit(f"if ({x.at(probe)} {cmp} {x.at(full)}{nan}) best = {j};")  # the first NaN, as in NumPy
        self.close(1)
        self.emit(f"{self.target(out, idx)} = best;")
        self.close(len(lines) or 1)

    def op_concatenate(self, e):
        out = self.storage(e.out)
        axis, start = e.params["axis"], 0
        self.emit(f"/* {eqn_text(e)} */")
        for x in e.inputs:
            src = self.atom_loc(x)
            dst = Loc(out.name, src.shape, out.offset + start * out.strides[axis], out.strides, dtype=out.dtype)
            lines, idx = loops(src.shape)
            self.open(lines)
            self.emit(f"{dst.at(idx)} = {src.at(idx)};")
            self.close(len(lines))
            start += src.shape[axis]

    def each(self, out, statement):
        """``statement`` (with ``@`` for the element) for every element of ``out``, row-major."""
        if out.shape == ():
            self.emit(statement.replace("@", out.at(())))
            return
        self.open([f"for (long k = 0; k < {dim_c(size(out.shape))}; ++k) {{"])
        self.emit(statement.replace("@", out.flat("k")))
        self.close(1)

    def op_size(self, e):
        """``size``: a named size (or a product of sizes) as a number, read from the function's size arguments."""
        out = self.storage(e.out)
        ctype = C_TYPES[out.dtype]
        where = f"const {ctype} {out.name}" if out.local else out.at(())
        self.emit(f"{where} = ({ctype}){dim_c(e.params['dim'], paren=True)};  /* {eqn_text(e)} */")

    def zero(self, out):
        self.declare_local(out)
        self.each(out, "@ = 0;")

    def declare_local(self, out):
        """A scalar local result written by a loop below is declared first (an index by a loop's counter)."""
        if out.local:
            self.emit(f"{C_TYPES[out.dtype]} {out.name};")

    def op_index_grad(self, e):
        ct = self.atom_loc(e.inputs[0])
        out = self.storage(e.out)
        self.emit(f"/* {eqn_text(e)}: zeros with ct written at the index */")
        self.zero(out)
        view = index_view(out, e.params["spec"], ct.shape)
        lines, idx = loops(ct.shape)
        self.open(lines)
        self.emit(f"{view.at(idx)} = {ct.at(idx)};")
        self.close(len(lines))

    def gather_tables(self, x_loc, arrays, spec, out_shape):
        """Index tables: base[k] (physical index from slices and ints) and, per index array, pos[k]."""
        items = list(spec) + [("slice", None, None, None)] * (len(x_loc.shape) - len(spec))
        probe_shape, axis, positions = [], 0, []
        for item in items:
            if item[0] == "array":
                probe_shape.append(size(arrays[item[1]].shape))
                positions.append((item[1], axis))
            if item[0] != "new":
                if item[0] != "array":
                    probe_shape.append(x_loc.shape[axis])
                axis += 1
        pos_arrays = [np.arange(size(a.shape)).reshape(a.shape) for a in arrays]
        coords = np.indices(probe_shape, dtype=np.int64) if probe_shape else np.zeros((0,), np.int64)
        npspec = spec_to_numpy(spec, pos_arrays)
        base = np.full(out_shape, x_loc.offset, dtype=np.int64)
        pos = {}
        for d in range(len(probe_shape)):
            c = np.broadcast_to(coords[d][npspec], out_shape)
            arr = [p for p in positions if p[1] == d]
            if arr:
                phys = arrays[arr[0][0]].physical().reshape(-1)
                pos[arr[0][0]] = (phys[c].reshape(-1), d)
            else:
                base = base + x_loc.strides[d] * c
        return base.reshape(-1), pos

    def gather_code(self, e, x_loc, arrays):
        shape = e.inputs[0].type.shape if e.op == "gather_grad" else e.out.type.shape
        return self.index_code(x_loc, arrays, e.params["spec"], shape, atoms=e.inputs[1:])

    def index_code(self, x_loc, arrays, spec, shape, status=None, atoms=None):
        """``(lines, element, count)``: C for element ``k`` (row-major over ``shape``) of ``x_loc[spec]``.

        ``lines`` set each index array's entry ``a<j>``, a negative one wrapped once as in NumPy;
        with ``status``, an entry still out of range returns it before anything is read or written
        there (without, the caller vouches for the indices). An index whose range is known at compile time
        (``atoms``: the IR atoms of ``arrays``; a loop counter and its offsets, see ``counter_ranges``) drops
        the wrap and the check it never needs, so a loop body indexing ``x[i]``, ``y[i - 1]`` is plain
        arithmetic the C compiler can vectorise. Example (``t0 = x[i]`` for a 0-d ``i`` of unknown range)::

            long a0 = (long)i;
            if (a0 < 0) a0 += 10;
            t0[0] = x[G0[k] + a0];
        """
        base, pos = self.gather_tables(x_loc, arrays, spec, shape)
        if x_loc.value is not None or x_loc.local:
            # a broadcast scalar or constant: every element is the same value (there is no array to index)
            return [], x_loc.at(()), base.size
        bname = self.module.static("G", "long", base.tolist())
        terms = [f"{bname}[k]"]
        body = []
        for j in sorted(pos):
            table, axis = pos[j]
            index = arrays[j]
            if index.value is not None or index.local:
                at = index.at(())
            else:
                at = f"{index.name}[{self.module.static('G', 'long', table.tolist())}[k]]"
            body.append(f"long a{j} = (long){at};")
            known = self.int_range(atoms[j]) if atoms is not None else None
            n_axis = x_loc.shape[axis]
            if known is None or known[0] < 0:
                body.append(f"if (a{j} < 0) a{j} += {n_axis};")
            in_range = known is not None and -n_axis <= known[0] and known[1] < n_axis
            if status is not None and not in_range:
                body.append(f"if (a{j} < 0 || a{j} >= {x_loc.shape[axis]}) return {status};  /* out of range */")
            stride = x_loc.strides[axis]
            terms.append(f"a{j}" if stride == 1 else f"{stride}*a{j}")
        return body, f"{x_loc.name}[{' + '.join(terms)}]", base.size

    def op_gather(self, e):
        x = self.atom_loc(e.inputs[0])
        arrays = [self.atom_loc(a) for a in e.inputs[1:]]
        out = self.storage(e.out)
        self.emit(f"/* {eqn_text(e)} (integer-array indexing) */")
        self.declare_local(out)
        body, src, n = self.gather_code(e, x, arrays)
        self.open([f"for (long k = 0; k < {n}; ++k) {{"])
        for line in body:
            self.emit(line)
        self.emit(f"{out.flat('k') if not out.local else out.name} = {src};")
        self.close(1)

    def op_gather_grad(self, e):
        ct = self.atom_loc(e.inputs[0])
        arrays = [self.atom_loc(a) for a in e.inputs[1:]]
        out = self.storage(e.out)
        self.emit(f"/* {eqn_text(e)}: zeros with ct added at the index (repeats accumulate) */")
        self.zero(out)
        body, dst, n = self.gather_code(e, out, arrays)
        if not (ct.standard or ct.value is not None or ct.local):
            ctab = self.module.static("G", "long", ct.physical().reshape(-1).tolist())
            src = f"{ct.name}[{ctab}[k]]"
        else:
            src = ct.flat("k")
        self.open([f"for (long k = 0; k < {n}; ++k) {{"])
        for line in body:
            self.emit(line)
        self.emit(f"{dst} += {src};")
        self.close(1)

    def op_cumulative(self, e):
        """cumsum/cumprod along an axis: the loops run row-major, so the previous element along it is written."""
        x, out = self.atom_loc(e.inputs[0]), self.storage(e.out)
        axis = e.params["axis"]
        self.emit(f"/* {eqn_text(e)} */")
        lines, idx = loops(x.shape)
        self.open(lines)
        prev = list(idx)
        prev[axis] = f"({idx[axis]} - 1)"
        step = "+" if e.op == "cumsum" else "*"
        self.emit(f"{out.at(idx)} = {idx[axis]} ? {out.at(prev)} {step} {x.at(idx)} : {x.at(idx)};")
        self.close(len(lines))


# a row shorter than this is summed as written (the 8 running sums and their pairwise total cost more than they gain)
LONG_ROW = 64


def _long_rows(e, x, out) -> bool:
    """Whether ``e`` sums contiguous rows of at least ``LONG_ROW`` terms: fixed sizes, its axes the trailing ones
    of a standard (row-major, whole) operand, the same float type in and out, a result stored in an array."""
    shape, axes = x.shape, tuple(e.params["axes"])
    if is_symbolic(shape) or not axes or not shape or x.dtype != out.dtype or x.dtype not in ("f64", "f32"):
        return False
    if x.value is not None or x.local or not x.standard or out.local or not out.standard or out.shape == ():
        return False
    return axes == tuple(range(len(shape) - len(axes), len(shape))) and size(shape[len(shape) - len(axes):]) >= LONG_ROW

