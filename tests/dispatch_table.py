"""The NumPy and SciPy functions of gradc's dispatch table, for the generators that run each one
(``tests/trace/test_array_likes_table.py``: lists of traced values; ``tests/complex/test_complex_table.py``:
complex arrays).

>>> import numpy as np
>>> np.mean in functions(skip=set())
True
"""
from __future__ import annotations

import numpy as np

from gradc.trace.dispatch import FUNCTIONS, UFUNCS


def name_of(f) -> str:
    return getattr(f, "__name__", repr(f))


def functions(skip: set) -> list:
    """Each function and ufunc of the table once, in a fixed order, but those named in ``skip``."""
    seen, out = set(), []
    for f in list(FUNCTIONS) + list(UFUNCS):
        if not callable(f) or id(f) in seen or name_of(f) in skip:
            continue
        seen.add(id(f))
        out.append(f)
    return sorted(out, key=lambda f: (getattr(f, "__module__", None) or "", name_of(f)))


def finite_values(value, kinds: str = "f") -> bool:
    """Whether ``value`` (an array or a tuple of them) is non-empty, finite and of the dtype kinds ``kinds``."""
    leaves = list(value) if isinstance(value, (tuple, list)) else [value]
    if not leaves:
        return False
    for leaf in leaves:
        arr = np.asarray(leaf)
        if arr.dtype.kind not in kinds or arr.size == 0 or not np.all(np.isfinite(arr)):
            return False
    return True
