"""The eager Tensor facade: torch-style tensors whose ops come from gradc's op registry.

Its public face is ``gradc.torch`` (``import gradc.torch as torch``): the names of ``torch_api``,
``torch.compile``, and torch's module paths (``gradc.torch.nn``, ``gradc.torch.optim``,
``gradc.torch.utils.data``, ``gradc.torch.autograd``, ...), which are the modules here under a
second name (``torch_modules``).

Layers, each importing only from the ones above it (no cycles, none inside functions either)::

    grad_mode dtypes rng tensor_str traceable torch_modules   leaves
    devices cuda accelerator backends backends_*              leaves: torch.device, CPU-only stand-ins
    tensor                    the Tensor data class: storage, metadata, grad bookkeeping
    grad_fn creation          graph nodes and the backward engine; factories
    record                    one graph node per op, VJPs from the registry's rules
    autograd functional indexing tensor_extras torch_args
    nn.functional nn.module_base nn.modules nn
    methods                   attaches operators, math, indexing, to/clone, backward to Tensor
    lift linalg special fft   gradc ops lifted into recorded nodes: torch.linalg, torch.special, torch.fft
    complex_ops               complex tensors: torch.complex, polar, view_as_real, x.real, x.conj(), ...
    tensor_math tensor_select tensor_misc   more torch.* functions and their Tensor methods (einsum, gather, ...)
    rotations                 torch.rot90, fliplr, flipud
    torch_functional          torch.functional (einsum, meshgrid, ...; atleast_1d/2d/3d, broadcast_shapes)
    missing                   the error for a name the facade lacks (close names by difflib)
    optim utils.data serialization   optimisers, data loading, torch.save/load
    torch_api                 the names of ``import gradc.torch as torch``

``tensor`` cannot import what records nodes, so the Tensor methods that do live in
``methods``, which this file imports last and installs once. Outside the facade, it may
import ``gradc.ir``, ``gradc.ops``, ``gradc.errors`` and (for compiling) ``gradc.api``,
nothing else of gradc; the compiler never imports the facade.
"""
from gradc.facade import (
    bitwise,
    complex_ops,
    methods,
    missing,
    random_ops,
    rotations,
    shape_inplace,
    tensor_math,
    tensor_misc,
    tensor_select,
)
from gradc.facade.tensor import Tensor

methods.install(Tensor)
random_ops.install(Tensor)  # x.normal_, x.uniform_, x.bernoulli, x.multinomial, ... (torch's CPU streams)
tensor_math.install(Tensor)  # torch.linalg/special-backed methods: x.logsumexp(1), x.erf(), x.norm(p, dim), ...
tensor_select.install(Tensor)  # x.gather, x.scatter_add_, x.sort, x.topk, x.masked_fill, ...
tensor_misc.install(Tensor)  # x.remainder, x.cummax, x.type_as, x.where, ...
rotations.install(Tensor)  # x.rot90(k, dims), x.fliplr(), x.flipud()
shape_inplace.install(Tensor)  # x.unsqueeze_(0), x.t_(), ...
bitwise.install(Tensor)  # x & y, x ^ y, ~x, x << 1, mask |= other, x.bitwise_and(y), ...
complex_ops.install(Tensor)  # x.real, x.imag, x.conj(), x.angle(), x.is_complex(), ...
missing.install_tensor(Tensor)  # a method the facade lacks names the close ones it has
