"""The derivatives of the regularized incomplete gamma and beta functions in their shape parameters (double and
float) for the C math library: ``gradc_gammainc_da``, ``gradc_betainc_da``, ``gradc_betainc_db``.

C text only; the methods are those of ``gradc.ops.incomplete_shape_source`` (the NumPy text), element by element:
Moore's series for ``dP/da`` where ``x < a + 1``, else the continued fraction of ``Q`` with its ``a``-derivative
carried through the modified Lentz recurrence; for ``betainc`` the fraction of DLMF 8.17.22 with its ``p`` and
``q`` derivatives carried along (Boik and Robison-Cox 1998), on ``(a, b, x)`` or ``(b, a, 1 - x)``. NaN outside the
domain, 0 where the function is constant in its shape parameters (``x = 0``, ``x = inf``; ``x = 0``, ``x = 1``).
The float versions compute in double and round once.
"""

from gradc.backends.c.mathlib.in_double import float_twin, float_twins

_GAMMAINC_DA = """\
/* d/da of the regularized lower incomplete gamma P(a, x): Moore's series or the differentiated fraction of Q */
static inline double gradc_gammainc_da(double a, double x)
{
    if (!(a > 0.0) || !(x >= 0.0)) {
        return NAN;
    }
    if (x == 0.0 || isinf(x)) {
        return 0.0;
    }
    const double log_x = log(x);
    if (x < a + 1.0) {
        double term = 1.0, psi = gradc_digamma(a + 1.0);
        double total = log_x - psi, size = fabs(total);
        for (int k = 1; k < 100000; ++k) {
            term *= x / (a + k);
            psi += 1.0 / (a + k);
            const double add = term * (log_x - psi);
            total += add;
            size += fabs(add);
            if (fabs(add) <= 1e-17 * size && x <= a + k) {
                break;
            }
        }
        return exp(a * log_x - x - lgamma(a + 1.0)) * total;
    }
    double b = x + 1.0 - a, c = 1e300, dc = 0.0;
    double d = 1.0 / b, dd = d * d;
    double h = d, dh = dd;
    for (int i = 1; i < 100000; ++i) {
        const double an = -i * (i - a), dan = (double)i;
        b += 2.0;
        double pre = an * d + b;
        const double dpre = dan * d + an * dd - 1.0;
        if (fabs(pre) < 1e-300) {
            pre = 1e-300;
        }
        const double cn = b + an / c;
        dc = -1.0 + (dan - an * dc / c) / c;
        c = fabs(cn) < 1e-300 ? 1e-300 : cn;
        d = 1.0 / pre;
        dd = -dpre * d * d;
        const double delta = d * c, ddelta = dd * c + d * dc;
        dh = dh * delta + h * ddelta;
        h *= delta;
        if (fabs(delta - 1.0) <= 1e-16 && fabs(h * ddelta) <= 1e-16 * (fabs(dh) + fabs(h))) {
            break;
        }
    }
    const double front = exp(a * log_x - x - lgamma(a));
    return -(front * h * (log_x - gradc_digamma(a)) + front * dh);
}"""

_BETAINC_FRACTION = """\
/* dJ/dp (which = 0) or dJ/dq (which = 1) of J(p, q, y) = y^p (1-y)^q / (p B(p, q)) F(p, q, y), F (DLMF 8.17.22)
   by modified Lentz with its derivatives carried along (Boik and Robison-Cox 1998) */
static inline double gradc_betainc_fraction_grad(double p, double q, double y, int which)
{
    const double qab = p + q, qap = p + 1.0, qam = p - 1.0;
    double c = 1.0, dcp = 0.0, dcq = 0.0;
    double d = 1.0 - qab * y / qap;
    double ddp = -y * (1.0 - q) / (qap * qap), ddq = -y / qap;
    if (fabs(d) < 1e-300) {
        d = 1e-300;
    }
    d = 1.0 / d;
    ddp = -ddp * d * d;
    ddq = -ddq * d * d;
    double h = d, dhp = ddp, dhq = ddq;
    for (int m = 1; m < 100000; ++m) {
        double delta = 1.0, dlp = 0.0, dlq = 0.0;
        for (int odd = 0; odd < 2; ++odd) {
            double aa, dap, daq;
            if (odd) {
                aa = -(p + m) * (qab + m) * y / ((p + 2 * m) * (qap + 2 * m));
                dap = aa * (1.0 / (p + m) + 1.0 / (qab + m) - 1.0 / (p + 2 * m) - 1.0 / (qap + 2 * m));
                daq = aa / (qab + m);
            } else {
                aa = m * (q - m) * y / ((qam + 2 * m) * (p + 2 * m));
                dap = -aa * (1.0 / (qam + 2 * m) + 1.0 / (p + 2 * m));
                daq = m * y / ((qam + 2 * m) * (p + 2 * m));
            }
            double pre = 1.0 + aa * d;
            const double dprep = dap * d + aa * ddp, dpreq = daq * d + aa * ddq;
            if (fabs(pre) < 1e-300) {
                pre = 1e-300;
            }
            const double cn = 1.0 + aa / c;
            dcp = (dap - aa * dcp / c) / c;
            dcq = (daq - aa * dcq / c) / c;
            c = fabs(cn) < 1e-300 ? 1e-300 : cn;
            d = 1.0 / pre;
            ddp = -dprep * d * d;
            ddq = -dpreq * d * d;
            delta = d * c;
            dlp = ddp * c + d * dcp;
            dlq = ddq * c + d * dcq;
            dhp = dhp * delta + h * dlp;
            dhq = dhq * delta + h * dlq;
            h *= delta;
        }
        const double small = 1e-16 * (fabs(dhp) + fabs(dhq) + fabs(h));
        if (fabs(delta - 1.0) <= 1e-16 && fabs(h * dlp) <= small && fabs(h * dlq) <= small) {
            break;
        }
    }
    const double log_y = log(y), log_1my = log1p(-y);
    const double front = exp(p * log_y + q * log_1my - log(p) - gradc_betaln(p, q));
    const double j = front * h, both = gradc_digamma(qab);
    if (which == 0) {
        return j * (log_y - gradc_digamma(p + 1.0) + both) + front * dhp;
    }
    return j * (log_1my - gradc_digamma(q) + both) + front * dhq;
}"""

_BETAINC_SHAPE = """\
/* d/da (which = 0) or d/db (which = 1) of the regularized incomplete beta I_x(a, b) */
static inline double gradc_betainc_shape(double a, double b, double x, int which)
{
    if (!(a > 0.0) || !(b > 0.0) || !(x >= 0.0) || !(x <= 1.0)) {
        return NAN;
    }
    if (x == 0.0 || x == 1.0) {
        return 0.0;
    }
    if (x > (a + 1.0) / (a + b + 2.0)) {  /* I = 1 - J(b, a, 1 - x): the roles swap, the sign flips */
        return -gradc_betainc_fraction_grad(b, a, 1.0 - x, 1 - which);
    }
    return gradc_betainc_fraction_grad(a, b, x, which);
}"""


def _wrapper(name, params, call):
    signature = ", ".join(f"double {p}" for p in params)
    return f"static inline double gradc_{name}({signature})\n{{\n    return {call};\n}}"


# name -> (C text, the names it calls), for gradc.backends.c.mathlib's table
LIBRARY = {
    "gradc_gammainc_da": (_GAMMAINC_DA, ("gradc_digamma",)),
    "gradc_gammainc_daf": float_twin("gammainc_da", "a, x"),
    "gradc_betainc_fraction_grad": (_BETAINC_FRACTION, ("gradc_digamma", "gradc_betaln")),
    "gradc_betainc_shape": (_BETAINC_SHAPE, ("gradc_betainc_fraction_grad",)),
    "gradc_betainc_da": (_wrapper("betainc_da", "abx", "gradc_betainc_shape(a, b, x, 0)"), ("gradc_betainc_shape",)),
    "gradc_betainc_db": (_wrapper("betainc_db", "abx", "gradc_betainc_shape(a, b, x, 1)"), ("gradc_betainc_shape",)),
    **float_twins(("betainc_da", "betainc_db"), "a, b, x"),
}
