"""The C target: C99 source and header, built in process into a Python extension.

``emit`` writes functions (``values``: locations and the SymPy printer;
``vectorise``: which fused loops vectorise; ``loops`` and ``matmul``: the tensor
ops' loops; ``linalg``: Cholesky, triangular and LU solves, log|det| and the
Cholesky adjoint; ``linalg_decomp``/``linalg_spectral``: eigh, svd, qr and expm in plain C99
(Jacobi, one-sided Jacobi, Householder, Pade); ``control``: loops and branches as ``for``/``while``/``if``, their tapes
and the ``max_trips`` bound; ``lowering``: each op's ``c=`` facet; ``mathlib``: gradc's own
vectorisable exp/log, hyperbolic and trig functions); ``build`` compiles and
caches; ``pyglue`` is the extension's C entry points. SymPy is imported only
here, so ``import gradc`` does not pay for it.

>>> import gradc.backends.c.lowering as lowering
>>> "exp" in lowering.C_LOWERING
True
"""
