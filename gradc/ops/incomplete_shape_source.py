"""NumPy source of the shape-parameter derivatives of the regularized incomplete gamma and beta functions.

One text serves twice: the ops of ``gradc.ops.special_incomplete_shape`` run it (``exec``), and the NumPy
emitter writes it into every module that calls it (``gradc.ops.spell.HELPERS``), so emitted code needs only
numpy and scipy.special. The C math library has the same algorithms (``gradc/backends/c/mathlib/
incomplete_shape.py``). Methods:

``_gammainc_da(a, x) = dP/da``. For ``x < a + 1`` the power series ``P = sum_n x^(a+n) e^-x / Gamma(a+n+1)``
differentiated term by term (Moore 1982): ``dP/da = sum_n t_n (log x - digamma(a+n+1))``, the digamma by its
recurrence; the terms are summed until one is below 1e-17 of the sum of their magnitudes (the accuracy the
cancellation between terms allows). Else ``P = 1 - Q`` with ``Q = x^a e^-x / Gamma(a) F`` and ``F`` Legendre's
continued fraction, evaluated by the modified Lentz method carrying each quantity's derivative in ``a``
alongside (forward-mode differentiation of the recurrence, as Boik and Robison-Cox 1998 do for the beta
fraction): ``dQ/da = Q (log x - digamma(a)) + x^a e^-x / Gamma(a) dF/da``.

``_betainc_dab(a, b, x) = (dI/da, dI/db)``. With ``J(p, q, y) = y^p (1-y)^q / (p B(p, q)) F(p, q, y)`` and ``F``
the continued fraction of DLMF 8.17.22 (its ``p`` and ``q`` derivatives carried through the Lentz recurrence,
Boik and Robison-Cox 1998): ``I_x(a, b) = J(a, b, x)`` where ``x < (a + 1) / (a + b + 2)``, else ``1 - J(b, a,
1 - x)`` (so the derivatives are ``-`` those of ``J`` with the roles swapped: no ``1 -`` cancels in them).
``d log(prefactor)/dp = log y - digamma(p + 1) + digamma(p + q)`` (``-1/p - digamma(p)`` written as one
digamma: no large terms cancel for small ``p``).

Outside the domain (``a <= 0``, ``x < 0``, ``b <= 0``, ``x > 1`` for beta, NaN) the result is NaN; at the ends
(``x = 0``, ``x = inf``; ``x = 0``, ``x = 1``) the function is constant in its shape parameters: 0.

>>> import numpy as np, scipy.special
>>> ns = run()
>>> h = 1e-6
>>> fd = (scipy.special.gammainc(2.0 + h, 1.5) - scipy.special.gammainc(2.0 - h, 1.5)) / (2 * h)
>>> bool(abs(ns["_gammainc_da"](2.0, 1.5) - fd) < 1e-8)
True
"""
from __future__ import annotations

SOURCE = '''
def _gammainc_da(a, x):
    """d/da of scipy.special.gammainc(a, x), written by gradc: the series (x < a + 1) or the continued
    fraction of Q differentiated alongside its Lentz evaluation (Moore 1982; Boik and Robison-Cox 1998)."""
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    out = np.where((a > 0.0) & (x >= 0.0), 0.0, np.nan)
    series = (a > 0.0) & (x > 0.0) & (x < a + 1.0)
    if series.any():
        s, y = a[series], x[series]
        log_y = np.log(y)
        term = np.ones_like(y)
        psi = scipy.special.digamma(s + 1.0)
        total = log_y - psi
        size = np.abs(total)
        active = np.ones(y.shape, dtype=bool)
        k = 0
        while active.any() and k < 100000:
            k += 1
            term = term * (y / (s + k))
            psi = psi + 1.0 / (s + k)
            add = np.where(active, term * (log_y - psi), 0.0)
            total = total + add
            size = size + np.abs(add)
            active = active & ((np.abs(add) > 1e-17 * size) | (y > s + k))
        front = np.exp(s * log_y - y - scipy.special.gammaln(s + 1.0))
        out[series] = front * total
    fraction = (a > 0.0) & (x >= a + 1.0) & np.isfinite(x)
    if fraction.any():
        s, y = a[fraction], x[fraction]
        b = y + 1.0 - s
        c = np.full(y.shape, 1e300)
        dc = np.zeros_like(y)
        d = 1.0 / b
        dd = d * d
        h, dh = d, dd
        active = np.ones(y.shape, dtype=bool)
        i = 0
        while active.any() and i < 100000:
            i += 1
            an, dan = -i * (i - s), float(i)
            b = b + 2.0
            pre = an * d + b
            dpre = dan * d + an * dd - 1.0
            pre = np.where(np.abs(pre) < 1e-300, 1e-300, pre)
            cn = b + an / c
            dc = -1.0 + (dan - an * dc / c) / c
            c = np.where(np.abs(cn) < 1e-300, 1e-300, cn)
            d = 1.0 / pre
            dd = -dpre * d * d
            delta = d * c
            ddelta = dd * c + d * dc
            dh = np.where(active, dh * delta + h * ddelta, dh)
            h = np.where(active, h * delta, h)
            active = active & ((np.abs(delta - 1.0) > 1e-16) | (np.abs(h * ddelta) > 1e-16 * (np.abs(dh) + np.abs(h))))
        front = np.exp(s * np.log(y) - y - scipy.special.gammaln(s))
        q = front * h
        out[fraction] = -(q * (np.log(y) - scipy.special.digamma(s)) + front * dh)
    return out


def _betainc_fraction_grad(p, q, y):
    """(dJ/dp, dJ/dq) of J(p, q, y) = y^p (1-y)^q / (p B(p, q)) F(p, q, y), F by modified Lentz with its
    derivatives carried along (Boik and Robison-Cox 1998); y below the fraction's switch point."""
    qab, qap, qam = p + q, p + 1.0, p - 1.0
    c = np.ones_like(y)
    dcp, dcq = np.zeros_like(y), np.zeros_like(y)
    d = 1.0 - qab * y / qap
    ddp, ddq = -y * (1.0 - q) / (qap * qap), -y / qap
    d = np.where(np.abs(d) < 1e-300, 1e-300, d)
    d = 1.0 / d
    ddp, ddq = -ddp * d * d, -ddq * d * d
    h, dhp, dhq = d, ddp, ddq
    active = np.ones(y.shape, dtype=bool)
    m = 0
    while active.any() and m < 100000:
        m += 1
        for odd in (False, True):
            if odd:
                aa = -(p + m) * (qab + m) * y / ((p + 2 * m) * (qap + 2 * m))
                dap = aa * (1.0 / (p + m) + 1.0 / (qab + m) - 1.0 / (p + 2 * m) - 1.0 / (qap + 2 * m))
                daq = aa / (qab + m)
            else:
                aa = m * (q - m) * y / ((qam + 2 * m) * (p + 2 * m))
                dap = -aa * (1.0 / (qam + 2 * m) + 1.0 / (p + 2 * m))
                daq = m * y / ((qam + 2 * m) * (p + 2 * m))
            pre = 1.0 + aa * d
            dprep, dpreq = dap * d + aa * ddp, daq * d + aa * ddq
            pre = np.where(np.abs(pre) < 1e-300, 1e-300, pre)
            cn = 1.0 + aa / c
            dcp, dcq = (dap - aa * dcp / c) / c, (daq - aa * dcq / c) / c
            c = np.where(np.abs(cn) < 1e-300, 1e-300, cn)
            d = 1.0 / pre
            ddp, ddq = -dprep * d * d, -dpreq * d * d
            delta = d * c
            dlp, dlq = ddp * c + d * dcp, ddq * c + d * dcq
            dhp = np.where(active, dhp * delta + h * dlp, dhp)
            dhq = np.where(active, dhq * delta + h * dlq, dhq)
            h = np.where(active, h * delta, h)
        small = 1e-16 * (np.abs(dhp) + np.abs(dhq) + np.abs(h))
        active = active & ((np.abs(delta - 1.0) > 1e-16) | (np.abs(h * dlp) > small) | (np.abs(h * dlq) > small))
    log_y, log_1my = np.log(y), np.log1p(-y)
    front = np.exp(p * log_y + q * log_1my - np.log(p) - scipy.special.betaln(p, q))
    j = front * h
    both = scipy.special.digamma(qab)
    jp = j * (log_y - scipy.special.digamma(p + 1.0) + both) + front * dhp
    jq = j * (log_1my - scipy.special.digamma(q) + both) + front * dhq
    return jp, jq


def _betainc_dab(a, b, x):
    """(d/da, d/db) of scipy.special.betainc(a, b, x), written by gradc (see _betainc_fraction_grad)."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, x)))
    ok = (a > 0.0) & (b > 0.0) & (x >= 0.0) & (x <= 1.0)
    da, db = np.where(ok, 0.0, np.nan), np.where(ok, 0.0, np.nan)
    inside = ok & (x > 0.0) & (x < 1.0)
    flip = x > (a + 1.0) / (a + b + 2.0)
    for swapped in (False, True):
        pick = inside & (flip == swapped)
        if not pick.any():
            continue
        if swapped:
            jp, jq = _betainc_fraction_grad(b[pick], a[pick], 1.0 - x[pick])
            da[pick], db[pick] = -jq, -jp
        else:
            da[pick], db[pick] = _betainc_fraction_grad(a[pick], b[pick], x[pick])
    return da, db
'''


def run() -> dict:
    """The functions of ``SOURCE``, defined in a namespace with ``np`` and ``scipy`` (SciPy imported here).

    >>> sorted(k for k in run() if k.startswith("_") and not k.startswith("__"))
    ['_betainc_dab', '_betainc_fraction_grad', '_gammainc_da']
    """
    import numpy as np
    import scipy.special
    namespace = {"np": np, "scipy": scipy}
    exec(compile(SOURCE, "<gradc incomplete_shape_source>", "exec"), namespace)  # noqa: S102 (gradc's own text)
    return namespace
