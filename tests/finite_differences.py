"""Central finite differences in float64: the independent reference the gradient tests compare against.

Complex inputs are moved along the real and the imaginary direction of each entry; the gradient
of a real-valued ``f`` is then JAX's ``df/dx - i df/dy``.
"""
from __future__ import annotations

import numpy as np


def central_gradient(f, x, h=1e-6):
    """The gradient of scalar ``f`` at ``x`` (a float, complex or an array), one central difference per
    entry and direction.

    >>> float(central_gradient(lambda v: v ** 3, 2.0))
    12.0...
    >>> complex(np.round(central_gradient(lambda z: abs(z) ** 2, 3 + 4j), 6))
    (6-8j)
    """
    if np.iscomplexobj(x):
        return _complex_gradient(f, np.asarray(x, dtype=np.complex128), h)
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def _complex_gradient(f, z, h):
    g = np.zeros_like(z)
    for i in np.ndindex(z.shape):
        parts = []
        for step in (h, 1j * h):  # the real, then the imaginary direction
            e = np.zeros_like(z)
            e[i] = step
            difference = (f(z + e) - f(z - e)) / (2 * h)
            if np.iscomplexobj(difference):
                assert abs(np.imag(difference)) < 1e-9 * max(1.0, abs(difference)), "f is not real-valued"
                difference = np.real(difference)
            parts.append(float(difference))
        g[i] = parts[0] - 1j * parts[1]
    return g


def central_directional(f, x, direction, h=1e-6):
    """``(f(x + h d) - f(x - h d)) / 2h`` of any ``f`` (complex values and directions allowed).

    >>> complex(np.round(central_directional(lambda z: z ** 2, 1 + 1j, 1j), 6))
    (-2+2j)
    """
    x = np.asarray(x)
    step = h * np.asarray(direction)
    return (np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * h)


def holomorphic_derivative(f, z, h=1e-6):
    """``f'(z)`` of a holomorphic ``f``, elementwise, checked along both directions (Cauchy-Riemann).

    >>> complex(np.round(holomorphic_derivative(lambda z: z ** 2, 1 + 2j), 6))
    (2+4j)
    """
    along_real = central_directional(f, z, 1.0, h)
    along_imag = central_directional(f, z, 1j, h) / 1j
    assert np.allclose(along_real, along_imag, rtol=1e-5, atol=1e-6), "f is not holomorphic here"
    return along_real
