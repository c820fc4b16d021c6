"""``scipy.special`` names whose gradc versions are compositions of ops (gradc/ops/special_boxcox.py,
special_orthogonal.py, special_elliptic.py), the exponential integrals (special_exponential_integral.py) Owen's T
(special_owens_t.py) the Hurwitz zeta (special_zeta.py) and
sici (special_sici.py), routed
by name; imported by ``special_dispatch``.

>>> from gradc.trace import scipy_dispatch
>>> "scipy.special.boxcox" in scipy_dispatch.SCIPY_FUNCTIONS
True
"""
from __future__ import annotations

from gradc.ops import special_boxcox as boxcox
from gradc.ops import special_elliptic as elliptic
from gradc.ops import special_exponential_integral as exponential_integral
from gradc.ops import special_orthogonal as orthogonal
from gradc.ops import special_owens_t as owens_t
from gradc.ops import special_sici as sici
from gradc.ops import special_zeta as zeta
from gradc.trace import scipy_dispatch

for _module in (boxcox, orthogonal, elliptic, exponential_integral, owens_t, zeta, sici):
    for _name in _module.__all__:
        if _name != "static_degree":
            _fn = scipy_dispatch.operands_only(_name, getattr(_module, _name))
            scipy_dispatch.register(f"scipy.special.{_name}", _fn)

__all__: list[str] = []
