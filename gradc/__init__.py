"""gradc: a source-to-source differentiation compiler for NumPy code.

The pipeline, each stage a pure function on the IR::

    Python function --trace--> Graph --transforms--> adjoint Graph --passes--> Graph --backends--> source

The packages, one per stage; each imports only from the ones before it
(``tests/test_layers.py`` enforces it, counting imports inside functions too)::

    errors       GradcError and its kinds, the user's file:line in messages
    ir/          types, atoms, graphs, the op registry, printer, dot, verify, interpreter
    ops/         the ops: one defop each (type rule, impl, VJP, NumPy/math/C spellings)
    trace/       the NumPy tracer and dispatch: a Python function becomes a Graph
    transforms/  derivatives as graph-to-graph transforms: reverse, forward (jvp), batching (vmap)
    passes/      fold, cse, dce
    backends/    numpy/ and c/: emit source from a Graph and load it
    derivatives/ jvp, vjp, hvp, Jacobians, Hessians, custom rules, checkpoint, the compile modes
    api          grad, value_and_grad, trace, compile: the decorator and library entry points
    cli/         the gradc command
    facade/      the torch-style Tensor (on ir and ops; api for compiling), aliased as
                 gradc.nn, gradc.optim, gradc.utils.data, gradc.autograd, ... for ``import gradc as torch``

>>> import numpy as np, gradc
>>> gradc.grad(lambda x: np.sum(np.sin(x)))(np.zeros(3))
array([1., 1., 1.])
"""
import importlib as _importlib
import sys as _sys

from gradc import tree_util as tree_util  # pytrees: JAX's names and semantics (gradc.tree_util.tree_map, ...)
from gradc.api import Compiled, check, grad, spec, trace, value_and_grad
from gradc.derivatives import (
    checkpoint,
    custom_jvp,
    custom_vjp,
    hessian,
    hvp,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    stop_gradient,
    vjp,
)
from gradc.derivatives.jit import jit  # NumPy code compiled per signature (NumPy or C target)
from gradc.derivatives.vectorize import vmap  # batching on NumPy code (JAX's vmap), emitted as vectorised NumPy
from gradc.errors import (
    ArgumentError,
    CheckError,
    EmitError,
    EnvironmentProblem,
    GradcError,
    GradcWarning,
    MissingRuleError,
    ShapeError,
    StaleStateError,
    TraceError,
    WriteError,
)
from gradc.facade import torch_api as _torch_api
from gradc.facade.compile import gradc_compile as compile  # gradc's compiler, and torch.compile
from gradc.facade.torch_modules import ALIASES as _ALIASES
from gradc.facade.torch_modules import AliasFinder as _AliasFinder
from gradc.ir.graph import Graph
from gradc.trace.checkpoint import binomial  # checkpoint=binomial(snapshots=s): Revolve schedules for loops
from gradc.trace.control import cond, fori_loop, scan, while_loop  # structured control flow (JAX's signatures)

# torch's module paths (torch.autograd, torch.nn, torch.nn.functional, torch.optim, torch.utils.data,
# torch.func) are modules of gradc.facade: register them under gradc's name instead of a shim package each
for _alias, _target in _ALIASES.items():
    _sys.modules[_alias] = _importlib.import_module(_target)
    _parent, _child = _alias.rsplit(".", 1)
    setattr(_sys.modules[_parent], _child, _sys.modules[_alias])
del _alias, _target, _parent, _child
_sys.meta_path.append(_AliasFinder())  # ``import torch.nn`` where sys.modules["torch"] is gradc
autograd, nn = _sys.modules["gradc.autograd"], _sys.modules["gradc.nn"]

# torch-style names for ``import gradc as torch`` (gradc.grad stays the compiler's grad)
_torch_names = [n for n in _torch_api.__all__ if n not in globals()]
globals().update({n: getattr(_torch_api, n) for n in _torch_names})

__version__ = "0.1.0"


def __getattr__(name):  # gradc.dask on first use: Dask is an optional extra, so ``import gradc`` never imports it
    if name == "dask":
        return _importlib.import_module("gradc.dask")
    raise AttributeError(f"module 'gradc' has no attribute {name!r}")


__all__ = ["fori_loop", "while_loop", "cond", "scan", "binomial",
           "ArgumentError", "CheckError", "Compiled", "EmitError", "EnvironmentProblem", "WriteError", "check",
           "Graph", "GradcError", "GradcWarning", "MissingRuleError",
           "ShapeError", "StaleStateError", "TraceError", "autograd", "checkpoint", "compile", "custom_jvp",
           "custom_vjp", "grad", "hessian", "hvp", "jacfwd", "jacobian", "jacrev", "jvp", "nn", "spec", "stop_gradient",
           "trace", "value_and_grad", "vjp", "vmap", "jit"] + _torch_names
