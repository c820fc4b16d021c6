"""Targets: each turns an optimised Graph into source text and loads it.

``numpy`` (standalone NumPy or ``math`` modules, loaded in process) and ``c``
(C99 through SymPy's printer, built into a Python extension). Targets are
plug-ins of the same graph: they never import each other.

May import everything below it: ``gradc.ir``, ``ops``, ``trace``, ``transforms``,
``passes`` and ``errors``.

>>> from gradc.backends.numpy import emit_module
>>> callable(emit_module)
True
"""
