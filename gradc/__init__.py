"""gradc: a source-to-source differentiation compiler for NumPy code.

The pipeline, each stage a pure function on the IR::

    Python function --trace--> Graph --vjp--> adjoint Graph --passes--> Graph --emit--> NumPy source

>>> import numpy as np, gradc
>>> gradc.grad(lambda x: np.sum(np.sin(x)))(np.zeros(3))
array([1., 1., 1.])
"""
from gradc.api import Compiled, compile, grad, trace, value_and_grad
from gradc.errors import ArgumentError, EmitError, GradcError, MissingRuleError, ShapeError, TraceError
from gradc.ir.graph import Graph

__version__ = "0.1.0"

__all__ = ["ArgumentError", "Compiled", "EmitError", "Graph", "GradcError", "MissingRuleError", "ShapeError",
           "TraceError", "compile", "grad", "trace", "value_and_grad"]
