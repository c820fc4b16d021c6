"""The array-API target: the NumPy target's module re-spelled in the array API standard.

``emit`` writes the module (through the NumPy emitter, then ``spellings``'s table);
the loaded functions run on any array library array_api_compat knows: NumPy,
Dask, PyTorch, JAX (no in-place updates: gradients that accumulate slices need
``x.at``), CuPy, and array-api-strict. Shapes stay fixed: one compile per shape.

>>> from gradc.backends.array_api import emit_module, unsupported_ops
>>> callable(emit_module) and callable(unsupported_ops)
True
"""
from gradc.backends.array_api.emit import emit_module, rewrite, unsupported_ops

__all__ = ["emit_module", "rewrite", "unsupported_ops"]
