"""Convolutions and pooling in C: ``convolve`` (``np.convolve``/``np.correlate``, whose modes slice its full
result), ``conv2d``, ``max_pool2d`` and ``max_pool2d_index`` (the facade's ops).

``ConvLowerings`` is a mixin of the C function emitter (``gradc.backends.c.emit``): plain loops that read
their operands through strides, one output element at a time, summed in the result's type.

* ``convolve``: ``out[k] = sum_i a[i] v[k - i]`` over the ``i`` where both exist (NumPy's full mode).
* ``conv2d`` (torch's cross-correlation, as ``gradc.ops.nn``): ``out[n, o, y, x] = sum w[o, c, i, j]
  x[n, g * Cin/groups + c, y * sh - top + i * dh, x * sw - left + j * dw]`` over ``c`` in the group
  ``g = o / (Cout/groups)`` and the kernel; positions in the padding read zero (they are skipped).
* ``max_pool2d``: the window of ``kernel`` positions at ``(y * sh - top + i * dh, x * sw - left + j * dw)``,
  positions in the padding reading ``-inf``; the maximum, NaN if the window has one (NumPy's ``max``).
  ``max_pool2d_index``: the flat position ``row * W + col`` of the window's first maximum in row-major
  window order, the first NaN if there is one (NumPy's ``argmax``, torch's ``return_indices``).

>>> _affine("i2", 2, "i4", 1, -1)  # the input row of output row i2, kernel row i4 (stride 2, padding 1)
'i2 * 2 + i4 - 1'
"""
from __future__ import annotations

from gradc.backends.c.values import C_TYPES, eqn_text, loops


class ConvLowerings:
    """The lowerings of ``convolve``, ``conv2d`` and the max pools (see the module docstring)."""

    def scalar_temp(self) -> str:
        """A fresh temporary name ``q<N>`` (numbered with the fused loops' temporaries: never a clash)."""
        name = f"q{self.temps}"
        self.temps += 1
        return name

    def op_convolve(self, e):
        a, v = (self.matrix_operand(x) for x in e.inputs)
        out = self.storage(e.out)
        n, m = a.shape[0], v.shape[0]
        acc, ctype = self.scalar_temp(), C_TYPES[out.dtype]
        self.emit(f"/* {eqn_text(e)}: out[i0] = sum over i1 of a[i1] v[i0 - i1] */")
        lines, (k,) = loops(out.shape)
        self.open(lines)
        self.emit(f"{ctype} {acc} = 0;")
        first, last = f"{k} > {m - 1} ? {k} - {m - 1} : 0", f"{k} < {n - 1} ? {k} : {n - 1}"
        self.open([f"for (long i1 = {first}; i1 <= ({last}); ++i1) {{"])
        self.emit(f"{acc} += {a.at(['i1'])} * {v.at([f'({k} - i1)'])};")
        self.close(1)
        self.emit(f"{out.at([k])} = {acc};")
        self.close(len(lines))

    def window_position(self, idx, params, counters):
        """Lines declaring the input row and column ``i<r>``, ``i<r+1>`` of kernel position ``counters``."""
        (sh, sw), (dh, dw) = params["stride"], params["dilation"]
        top, left = params["padding"][0], params["padding"][1]
        top, left = (top[0], left[0]) if isinstance(top, tuple) else (top, left)
        row, col = f"i{len(idx) + 3}", f"i{len(idx) + 4}"
        return row, col, [f"const long {row} = {_affine(idx[2], sh, counters[0], dh, -top)};",
                          f"const long {col} = {_affine(idx[3], sw, counters[1], dw, -left)};"]

    def op_conv2d(self, e):
        x, w = (self.matrix_operand(a) for a in e.inputs)
        out = self.storage(e.out)
        height, width = x.shape[2:]
        cout, cin_g, kh, kw = w.shape
        cout_g = cout // e.params["groups"]
        acc, ctype = self.scalar_temp(), C_TYPES[out.dtype]
        self.emit(f"/* {eqn_text(e)} */")
        lines, idx = loops(out.shape)
        self.open(lines)
        self.emit(f"{ctype} {acc} = 0;")
        c, i, j = "i4", "i5", "i6"
        row, col, where = self.window_position(idx, e.params, (i, j))
        chan = "i9"
        group_start = f"{idx[1]} / {cout_g} * {cin_g} + " if e.params["groups"] > 1 else ""
        self.open([f"for (long {c} = 0; {c} < {cin_g}; ++{c}) {{", f"const long {chan} = {group_start}{c};",
                   f"for (long {i} = 0; {i} < {kh}; ++{i}) {{"])
        self.emit(where[0])
        self.emit(f"if ({row} < 0 || {row} >= {height}) continue;")
        self.open([f"for (long {j} = 0; {j} < {kw}; ++{j}) {{"])
        self.emit(where[1])
        self.emit(f"if ({col} < 0 || {col} >= {width}) continue;")
        self.emit(f"{acc} += {x.at([idx[0], chan, row, col])} * {w.at([idx[1], c, i, j])};")
        self.close(3)
        self.emit(f"{out.at(idx)} = {acc};")
        self.close(len(lines))

    def op_max_pool(self, e):
        x = self.matrix_operand(e.inputs[0])
        out = self.storage(e.out)
        _, _, height, width = x.shape
        kh, kw = e.params["kernel"]
        best, value, pos = self.scalar_temp(), self.scalar_temp(), "i9"
        ctype = C_TYPES[x.dtype]
        self.emit(f"/* {eqn_text(e)}: -inf in the padding; NaN wins, the first maximum's position */")
        lines, idx = loops(out.shape)
        self.open(lines)
        self.emit(f"{ctype} {best} = -INFINITY;")
        self.emit(f"long {pos} = 0;")
        i, j = "i4", "i5"
        row, col, where = self.window_position(idx, e.params, (i, j))
        self.open([f"for (long {i} = 0; {i} < {kh}; ++{i}) {{", where[0], f"for (long {j} = 0; {j} < {kw}; ++{j}) {{",
                   where[1]])
        inside = f"{row} >= 0 && {row} < {height} && {col} >= 0 && {col} < {width}"
        self.emit(f"const {ctype} {value} = {inside} ? {x.at([idx[0], idx[1], row, col])} : -INFINITY;")
        self.emit(f"if (({i} == 0 && {j} == 0) || {value} > {best} || (isnan({value}) && !isnan({best}))) {{")
        self.emit(f"    {best} = {value};")
        self.emit(f"    {pos} = {row} * {width} + {col};")
        self.emit("}")
        self.close(2)
        self.emit(f"{out.at(idx)} = {best if e.op == 'max_pool2d' else pos};")
        self.close(len(lines))


def _affine(base, step, counter, spacing, shift) -> str:
    """``base * step + counter * spacing + shift`` as short C."""
    text = base if step == 1 else f"{base} * {step}"
    text += f" + {counter}" if spacing == 1 else f" + {counter} * {spacing}"
    return text + (f" + {shift}" if shift > 0 else f" - {-shift}" if shift < 0 else "")
