"""The Tensor facade: PyTorch's API on gradc's ops, for code written against torch.

    import gradc.torch as torch         # code that says ``import torch``: see below

Tensors with ``requires_grad``, ``backward()``, ``torch.nn``, ``torch.optim``,
``torch.utils.data``, ``torch.autograd`` (and ``torch.autograd.functional``), ``torch.func``,
``torch.compile``, ``no_grad``, ``manual_seed``, ``save``/``load``, ``cuda``, ``backends``, ...,
checked against what torch 2.13.0 prints. The module paths (``gradc.torch.nn.functional``,
...) are the facade's own modules under torch's names (``gradc.facade.torch_modules``), so
code that imports ``torch`` runs unchanged after one line::

    import sys, gradc.torch
    sys.modules["torch"] = gradc.torch  # then ``import torch.nn.functional as F`` and the like work

The compiler's API (``gradc.grad``, ``gradc.compile``, ...) is ``gradc`` itself; a function
written with these ops can be given to it like its NumPy twin.

>>> import gradc.torch as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> (x ** 2).sum().backward()
>>> x.grad
tensor([2., 4.])
"""
import sys

from gradc.facade import (  # torch's subpackages: the facade's modules (registered under gradc.torch below)
    accelerator,
    autograd,
    backends,
    cuda,
    fft,
    func,
    linalg,
    missing,
    nn,
    optim,
    special,
    torch_api,
    torch_modules,
    utils,
)
from gradc.facade import torch_functional as functional  # torch.functional (not torch.nn.functional)
from gradc.facade.compile import compile  # noqa: A004 - torch.compile
from gradc.facade.torch_api import *  # noqa: F403 - torch's top-level names

torch_modules.register()

# the torch release whose behaviour the facade follows: version checks in torch code take 2.13's paths;
# gradc's own version is gradc.__version__
__version__ = "2.13.0"

__all__ = ["compile", "accelerator", "autograd", "backends", "cuda", "fft", "func", "functional", "linalg", "nn",
           "optim", "special", "utils"]
# torch's top-level names: tensor, Tensor, no_grad, manual_seed, float32, ...
__all__ += [n for n in torch_api.__all__ if n not in __all__]
del torch_api, torch_modules

# a name the facade lacks raises FacadeMissingName (an AttributeError) naming the close names it has
for _module, _owner in ((sys.modules[__name__], "torch"), (linalg, "torch.linalg"), (fft, "torch.fft"),
                        (special, "torch.special"), (nn, "torch.nn"), (nn.functional, "torch.nn.functional"),
                        (autograd, "torch.autograd"), (optim, "torch.optim"), (func, "torch.func"),
                        (functional, "torch.functional")):
    missing.install(_module, _owner)
del _module, _owner, missing
