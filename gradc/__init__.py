"""gradc: a source-to-source differentiation compiler for NumPy code.

The pipeline, each stage a pure function on the IR::

    Python function --trace--> Graph --vjp--> adjoint Graph --passes--> Graph --emit--> NumPy source

>>> import numpy as np, gradc
>>> gradc.grad(lambda x: np.sum(np.sin(x)))(np.zeros(3))
array([1., 1., 1.])
"""
from gradc import autograd, nn
from gradc.api import Compiled, compile, grad, trace, value_and_grad
from gradc.errors import ArgumentError, EmitError, GradcError, MissingRuleError, ShapeError, TraceError
from gradc.ir.graph import Graph
from gradc.runtime import torch_api as _torch_api

# torch-style names for ``import gradc as torch`` (gradc.grad stays the compiler's grad)
_torch_names = [n for n in _torch_api.__all__ if n not in globals()]
globals().update({n: getattr(_torch_api, n) for n in _torch_names})

__version__ = "0.1.0"

__all__ = ["ArgumentError", "Compiled", "EmitError", "Graph", "GradcError", "MissingRuleError", "ShapeError",
           "TraceError", "autograd", "compile", "grad", "nn", "trace", "value_and_grad"] + _torch_names
