"""The exponential integrals ``expn(n, x)`` (``E_n``, integer ``n >= 0``), ``exp1`` (``E_1``) and ``expi`` (``Ei``),
double and float, for the C math library: C99 has none of them.

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used.

``E_n(x)`` for ``0 < x <= 1``: the power series ``E_n(x) = (-x)^(n-1) / (n-1)! (psi(n) - log x)
- sum_{k != n-1} (-x)^k / ((k - n + 1) k!)`` (DLMF 8.19.8; ``psi(n) = -gamma + sum_{j<n} 1/j``), summed until a
term is below 1e-17 of the sum. For ``x > 1``: the continued fraction ``E_n(x) = e^-x (1/(x+n-) 1 n/(x+n+2-)
2 (n+1)/(x+n+4-) ...)`` (DLMF 8.19.17, even form) by the modified Lentz method to a relative step of 1e-17.
``E_0(x) = e^-x / x``. SciPy's special values: NaN for ``n < 0`` and ``x < 0`` (and NaN), ``E_n(0)`` is ``inf``
for ``n <= 1`` and ``1 / (n - 1)`` above, 0 beyond ``x = 709.78`` (SciPy's cut: the value is subnormal
there; SciPy's ``exp1`` cuts a little later, a difference below 1e-311).

``Ei(x)``: ``-E_1(-x)`` for ``x < 0``; for ``0 < x <= 50`` the series ``gamma + log x + sum x^k / (k k!)``
(positive terms); beyond, the asymptotic series ``e^x / x sum k! / x^k`` up to its smallest term (below
1e-20 relative from 50 on); ``inf`` beyond 709.8 and at ``inf``, ``-inf`` at 0, ``-0`` at ``-inf``.

The float versions compute in double (as SciPy's float32 loops do) and round once.
"""

from gradc.backends.c.mathlib.in_double import float_twin

EXPN = """\
/* E_n(x) = integral_1^inf e^(-x t) t^-n dt: a power series up to x = 1, a continued fraction beyond */
static inline double gradc_expn(int n, double x)
{
    const double euler = 0.57721566490153286061;
    if (isnan(x) || n < 0 || x < 0.0) {
        return NAN;
    }
    if (x == 0.0) {
        return n <= 1 ? INFINITY : 1.0 / (n - 1);
    }
    if (x > 709.782712893384) {  /* SciPy's cut: log of the largest double; beyond, the value is subnormal */
        return 0.0;
    }
    if (n == 0) {
        return exp(-x) / x;
    }
    if (x > 1.0) {
        /* modified Lentz on the even continued fraction */
        double b = x + n;
        double c = 1.0e300;
        double d = 1.0 / b;
        double h = d;
        for (int i = 1; i < 1000; i++) {
            const double a = -(double)i * (n - 1 + i);
            b += 2.0;
            d = 1.0 / (a * d + b);
            c = b + a / c;
            const double step = c * d;
            h *= step;
            if (fabs(step - 1.0) < 1e-17) {
                break;
            }
        }
        return h * exp(-x);
    }
    const int m = n - 1;
    double sum = m != 0 ? 1.0 / m : -log(x) - euler;
    double factor = 1.0;
    for (int k = 1; k < 1000; k++) {
        double term;
        factor *= -x / k;
        if (k != m) {
            term = -factor / (k - m);
        } else {
            double psi = -euler;
            for (int j = 1; j <= m; j++) {
                psi += 1.0 / j;
            }
            term = factor * (psi - log(x));
        }
        sum += term;
        if (fabs(term) < fabs(sum) * 1e-17) {
            break;
        }
    }
    return sum;
}"""

EXPI = """\
/* Ei(x) = -E_1(-x) below 0; the power series up to 40, the asymptotic series beyond */
static inline double gradc_expi(double x)
{
    const double euler = 0.57721566490153286061;
    if (isnan(x)) {
        return x;
    }
    if (x < 0.0) {
        return -gradc_expn(1, -x);
    }
    if (x == 0.0) {
        return -INFINITY;
    }
    if (x > 709.8) {
        return INFINITY;
    }
    if (x <= 50.0) {
        double term = 1.0;
        double sum = 0.0;
        for (int k = 1; k < 1000; k++) {
            term *= x / k;
            sum += term / k;
            if (term / k < sum * 1e-17) {
                break;
            }
        }
        return euler + log(x) + sum;
    }
    double term = 1.0;
    double sum = 1.0;
    for (int k = 1; k < 1000; k++) {
        const double next = term * k / x;
        if (next >= term || next < 1e-17 * sum) {
            break;
        }
        term = next;
        sum += term;
    }
    return exp(x) / x * sum;
}"""

# name -> (C text, the names it calls), for gradc.backends.c.mathlib's table
LIBRARY = {
    "gradc_expn": (EXPN, ()),
    "gradc_expnf": float_twin("expn", "int n, x"),
    "gradc_expi": (EXPI, ("gradc_expn",)),
    "gradc_expif": float_twin("expi"),
}
