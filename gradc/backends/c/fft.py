"""The C lowering of the FFT ops (``fft``, ``rfft``, ``irfft``): one call of a line function per equation.

``FftLowerings`` is a mixin of the C function emitter (``gradc.backends.c.emit``). The operand is read
row-major (a strided view or a constant is copied first); the array is seen as ``outer x n x inner``
around the transformed axis and ``gradc_{fft,rfft,irfft}_lines_{c128,c64}`` of
``gradc.backends.c.mathlib.fft`` (radix 2, Bluestein's chirp-z for other lengths) transform every line.
Like the ops, nothing is scaled: ``norm=`` is a ``mul`` the emitter fuses with its neighbours.

>>> line_call("fft", "c128", "x", "y", 2, 8, 3, {"inverse": True})
'gradc_fft_lines_c128(x, y, 2, 8, 3, 1);'
"""
from __future__ import annotations

from gradc.backends.c.values import dim_c, eqn_text, ptr
from gradc.ir.dims import prod

COMPLEX_OF = {"f64": "c128", "f32": "c64"}


def line_call(op: str, complex_dtype: str, src: str, dst: str, outer, n, inner, params) -> str:
    """The C statement that transforms every line (``n`` here is the length of the transformed signal)."""
    name = f"gradc_{op}_lines_{complex_dtype}"
    sizes = f"{dim_c(outer)}, {dim_c(n)}, {dim_c(inner)}"
    if op == "fft":
        return f"{name}({src}, {dst}, {sizes}, {1 if params['inverse'] else -1});"
    return f"{name}({src}, {dst}, {sizes});"


class FftLowerings:
    """``op_fft_lines``: the lowering of the three FFT ops (see the module docstring)."""

    def op_fft_lines(self, e):
        x = self.atom_loc(e.inputs[0])
        if x.value is not None or x.local or not x.standard:
            x = self.contiguous_copy(x)
        out = self.storage(e.out)
        axis = e.params["axis"]
        shape = e.inputs[0].type.shape
        n = e.params["n"] if e.op == "irfft" else shape[axis]
        dtype = e.inputs[0].type.dtype if e.op != "rfft" else COMPLEX_OF[e.inputs[0].type.dtype]
        call = line_call(e.op, dtype, ptr(x.name, x.offset, []), out.name, prod(shape[:axis]), n,
                         prod(shape[axis + 1:]), e.params)
        self.emit(f"/* {eqn_text(e)}: every line along axis {axis} (allocation failure: NaN) */")
        self.emit("(void)" + self.module.note_calls(call))
