"""The dispatch tables assembled: ``numpy_dispatch``'s own entries and each op family's (one module each).

The families' modules build on ``numpy_dispatch``'s helpers, so the merge lives here, above
all of them; the tracer imports this module before it reads the tables.

>>> import numpy as np
>>> np.cumsum in FUNCTIONS and np.arcsin in UFUNCS and np.flip in FUNCTIONS
True
"""
from __future__ import annotations

from gradc.trace import (
    arrangement_dispatch,
    fft_dispatch,
    interval_dispatch,
    polynomial_dispatch,
    routines_dispatch,
    shape_dispatch,
    spatial_dispatch,
    special_dispatch,
    stats_dispatch,
)
from gradc.trace.numpy_dispatch import FUNCTIONS, UFUNCS

for _family in (stats_dispatch, special_dispatch, shape_dispatch, routines_dispatch, polynomial_dispatch,
                arrangement_dispatch, fft_dispatch, interval_dispatch, spatial_dispatch):
    FUNCTIONS.update(_family.FUNCTIONS)
    UFUNCS.update(_family.UFUNCS)

__all__ = ["FUNCTIONS", "UFUNCS"]
