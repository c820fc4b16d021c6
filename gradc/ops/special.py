"""Elementwise math and special functions: importing this module registers the family's ops.

* ``special_numpy``: NumPy's other elementwise math (inverse trigonometric and hyperbolic functions,
  ``log2``/``log10``/``exp2``, ``hypot``, ``arctan2``, ``fmax``/``fmin``, ``copysign``, ``mod``/``fmod``,
  rounding, the float tests, ``nan_to_num``);
* ``special_scipy``: ``scipy.special``'s functions (``erf``, ``gammaln``, ``digamma``/``polygamma``, ``expit``,
  ``xlogy``, the entropies, ``logsumexp``, ``softmax``, ...);
* ``special_stats``: ``scipy.stats`` distributions' log-densities and distribution functions, in those ops.

Their dispatch (NumPy's ufuncs and functions, SciPy's names) is ``gradc.trace.special_dispatch``.

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.

>>> from gradc.ops import OPS
>>> OPS["erf"].doc
'x_bar = ct * 2/sqrt(pi) * exp(-x**2)'
"""
from gradc.ops import special_numpy, special_scipy, special_stats

__all__ = ["special_numpy", "special_scipy", "special_stats"]
