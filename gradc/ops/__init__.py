"""The ops: one ``defop`` per primitive, every facet of it in that one block.

Each op has a type rule, a NumPy implementation, a VJP rule written with gradc's
own ops (or ``nondiff=True``), its NumPy and ``math`` spellings and its C
lowering (``c=``). Families: ``elementwise`` (on ``promote``, which makes
broadcasting explicit), ``reduce``, ``shape``, ``linalg``, ``autodiff`` (stop_gradient,
user-written rules); ``values`` and
``spell``/``c_spell`` are the helpers they share. The registry itself (``Op``,
``defop``, ``bind``) is the IR's instruction set, in ``gradc.ir.registry``.

May import: ``gradc.ir`` and ``gradc.errors``. Importing this package registers every op.

>>> from gradc.ops import OPS
>>> OPS["exp"].doc
'x_bar = ct * out'
"""
from gradc.ir.registry import OPS, Op, bind, defop
from gradc.ops import (  # noqa: F401  (registers the ops)
    autodiff,
    bitwise,
    call,
    checks,
    complex_numbers,
    contract,
    control,
    elementwise,
    fft,
    index_add,
    linalg,
    linalg_api,
    linalg_cholesky,
    linalg_decomp,
    linalg_eig,
    linalg_svd,
    nn,
    reduce,
    refused_derivative,
    shape,
    shape_extra,
    sizes,
    special,
    stats,
)

__all__ = ["OPS", "Op", "bind", "defop", "autodiff", "elementwise", "linalg", "reduce", "shape"]
