"""Every derivative as emitted code, beyond ``grad``: the layer between the backends and ``gradc.api``.

``transforms`` (``jvp``, ``vjp``, ``hvp``), ``jacobians`` (``jacfwd``, ``jacrev``,
``jacobian``, ``hessian``) and ``custom`` (``custom_vjp``, ``custom_jvp``,
``stop_gradient``, ``checkpoint``). ``flat_function`` is the one flattening layer of pytrees every
transform goes through (``gradients``: what ``grad`` adds for them and ``has_aux``). May import every
layer below it (not ``gradc.api``, the facade or the CLI).

>>> import numpy as np
>>> from gradc.derivatives import jvp
>>> jvp(lambda x: np.sin(x), (0.0,), (1.0,))
(0.0, 1.0)
"""
from gradc.derivatives import numpy_vectorize  # noqa: F401,I001 (routes np.vectorize in traced functions)
from gradc.derivatives.custom import checkpoint, custom_jvp, custom_vjp, stop_gradient
from gradc.derivatives.jacobians import hessian, jacfwd, jacobian, jacrev
from gradc.derivatives.transforms import hvp, jvp, vjp

__all__ = ["checkpoint", "custom_jvp", "custom_vjp", "hessian", "hvp", "jacfwd", "jacobian", "jacrev", "jvp",
           "stop_gradient", "vjp"]
