"""The NumPy target: ``emit`` writes the module (``analysis`` decides what is
inlined, ``literals`` spells constants, ``runtime_helpers`` is the argument
checking every module carries), ``load`` executes it in process.

>>> from gradc.backends.numpy import Function, emit_module, load_source
>>> callable(load_source)
True
"""
from gradc.backends.numpy.emit import Function, emit_module
from gradc.backends.numpy.load import load_source

__all__ = ["Function", "emit_module", "load_source"]
