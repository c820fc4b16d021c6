"""``scipy.special`` names whose gradc versions are compositions of ops (gradc/ops/special_boxcox.py,
special_orthogonal.py, special_elliptic.py) and the exponential integrals (special_exponential_integral.py), routed
by name; imported by ``special_dispatch``.

>>> from gradc.trace import scipy_dispatch
>>> "scipy.special.boxcox" in scipy_dispatch.SCIPY_FUNCTIONS
True
"""
from __future__ import annotations

from gradc.errors import TraceError
from gradc.ops import special_boxcox as boxcox
from gradc.ops import special_elliptic as elliptic
from gradc.ops import special_exponential_integral as exponential_integral
from gradc.ops import special_orthogonal as orthogonal
from gradc.trace import scipy_dispatch


def _operands_only(name, fn):
    """A SciPy ufunc's call: positional operands; ``out=``/``where=`` and the like refused by name."""
    def call(*args, **kwargs):
        if kwargs:
            raise TraceError(f"scipy.special.{name} with {', '.join(sorted(kwargs))}= is not supported by gradc",
                             hint=f"call scipy.special.{name} with its operands only")
        return fn(*args)
    return call


for _module in (boxcox, orthogonal, elliptic, exponential_integral):
    for _name in _module.__all__:
        if _name != "static_degree":
            scipy_dispatch.register(f"scipy.special.{_name}", _operands_only(_name, getattr(_module, _name)))

__all__: list[str] = []
