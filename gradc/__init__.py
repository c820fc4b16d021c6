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
    dask/        data-parallel gradients over Dask arrays (an optional extra, imported on first use)
    cli/         the gradc command
    facade/      the torch-style Tensor (on ir and ops; api for compiling)
    torch/       the facade's public face: ``import gradc.torch as torch``; its torch.nn, torch.optim,
                 torch.autograd, torch.utils.data, ... are the facade's modules under torch's paths

``gradc`` itself is the compiler's API, nothing else (``__all__``):

    derivatives     grad, value_and_grad, jvp, vjp, jacfwd, jacrev, jacobian, hessian, hvp
    custom rules    custom_jvp, custom_vjp, checkpoint, stop_gradient
    compiling       compile, check, trace, spec, Compiled, Graph
    control flow    cond, fori_loop, while_loop, scan, binomial (checkpoint schedules for loops)
    errors          GradcError and its kinds; GradcWarning
    dask            gradients of losses over Dask arrays (``gradc.dask``, imported on first use)

>>> import numpy as np, gradc
>>> gradc.grad(lambda x: np.sum(np.sin(x)))(np.zeros(3))
array([1., 1., 1.])
"""
import importlib as _importlib
import importlib.abc as _importlib_abc
import sys as _sys

from gradc import integrate as _integrate  # noqa: F401  (routes scipy.integrate's odeint and solve_ivp)
from gradc import symbolic as symbolic  # gradc.symbolic(f, *args): the derivative as SymPy/LaTeX (lazy)
from gradc import tree_util as tree_util  # pytrees: JAX's names and semantics (gradc.tree_util.tree_map, ...)
from gradc.api import Compiled, check, compile, grad, spec, trace, value_and_grad  # noqa: A004 - gradc.compile
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
from gradc.ir.graph import Graph
from gradc.trace.checkpoint import binomial  # checkpoint=binomial(snapshots=s): Revolve schedules for loops
from gradc.trace.control import cond, fori_loop, scan, while_loop  # structured control flow (JAX's signatures)

__version__: str = _importlib.import_module("gradc.version").__version__  # the package metadata's (gradc.version)

_LAZY = {"dask": "gradc.dask", "torch": "gradc.torch"}  # optional extras and the facade load on first use


def __getattr__(name):
    if name in _LAZY:
        return _importlib.import_module(_LAZY[name])
    if not name.startswith("_"):
        try:
            facade = _importlib.import_module("gradc.torch")
        except ImportError:
            facade = None
        if hasattr(facade, name):  # a torch-style name: ``import gradc as torch`` code from before gradc.torch
            raise AttributeError(f"gradc.{name} is the Tensor facade's: import gradc.torch as torch "
                                 f"(then torch.{name}); gradc itself is the compiler's API")
    raise AttributeError(f"module 'gradc' has no attribute {name!r}")


_TORCH_PATHS = ("nn", "optim", "autograd", "utils", "func", "cuda", "accelerator", "backends.mps", "backends.cudnn")


class _FacadeMoved(_importlib_abc.MetaPathFinder):
    """Asked last, when no finder found a module: ``import gradc.nn`` (or ``import torch.nn`` where a harness
    bound ``torch`` to gradc) fails with where torch's paths are now, ``gradc.torch``."""

    def find_spec(self, fullname, path=None, target=None):
        head, _, rest = fullname.partition(".")
        if getattr(_sys.modules.get(head), "__name__", None) != "gradc" or not any(
                rest == p or rest.startswith(p + ".") for p in _TORCH_PATHS):
            return None
        fix = "import gradc.torch" + fullname[len(head):] if head == "gradc" else \
            f'sys.modules["{head}"] = gradc.torch (gradc is the compiler)'
        raise ModuleNotFoundError(f"No module named {fullname!r}: torch's module paths are the Tensor facade's, "
                                  f"under gradc.torch: {fix}", name=fullname)


if not any(isinstance(finder, _FacadeMoved) for finder in _sys.meta_path):
    _sys.meta_path.append(_FacadeMoved())

__all__ = [
    # derivatives
    "grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "jacobian", "hessian", "hvp",
    # vectorising and compiling the function itself
    "vmap", "jit",
    # custom rules
    "custom_jvp", "custom_vjp", "checkpoint", "stop_gradient",
    # compiling
    "compile", "check", "trace", "spec", "Compiled", "Graph", "symbolic",
    # control flow
    "cond", "fori_loop", "while_loop", "scan", "binomial",
    # errors
    "GradcError", "ArgumentError", "CheckError", "EmitError", "EnvironmentProblem", "MissingRuleError",
    "ShapeError", "StaleStateError", "TraceError", "WriteError", "GradcWarning",
]  # gradc.dask and gradc.torch are subpackages, not here: ``from gradc import *`` must not shadow dask or torch
