"""Helpers the Tangent-style cases import from another module (a helper's home should not matter)."""
from __future__ import annotations

import numpy as np


def fill_squares(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i] + i
    return out


def pairwise_update(s):
    s2 = s.copy()
    for i in range(0, s.shape[0], 2):
        s2[i], s2[i + 1] = s[i + 1] * 2.0, s[i] * s[i + 1]
    return s2
