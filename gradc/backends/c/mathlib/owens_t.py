"""Owen's T function ``owens_t(h, a)`` (double and float) for the C math library: C99 has no such function.

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used.

``T(h, a) = 1/(2 pi) integral_0^a e^(-h^2 (1 + x^2) / 2) / (1 + x^2) dx``. Symmetries reduce to ``h >= 0``,
``a >= 0`` (``T(-h, a) = T(h, a)``, ``T(h, -a) = -T(h, a)``); for ``a > 1`` the identity
``T(h, a) = (Phi(h) Q(ah) + Phi(ah) Q(h)) / 2 - T(ah, 1/a)`` (``Q = 1 - Phi``, both from ``erfc``: no
cancellation for ``h >= 0``) leaves ``a <= 1``. There ``e^(-h^2/2)`` is taken out of the integral and the rest,
``e^(-h^2 x^2 / 2) / (1 + x^2)``, is summed by 20-point Gauss-Legendre on panels at most two standard deviations
``1/h`` (and 1/2) wide, up to ``x = 9/h`` (beyond, the integrand is below ``e^-40`` of its value at 0); its
poles at ``x = +-i`` are far enough from each panel for a relative error near 1e-16. ``T(h, inf) = Q(|h|)/2``,
NaN in NaN out, 0 at ``h = +-inf``.

``skewnorm_cdf(x, a) = Phi(x) - 2 T(x, a)``, clipped to [0, 1], except where the two cancel: for ``x < 0``,
``a > 0`` and ``a |x| >= 1`` it is ``1/pi integral_a^inf e^(-(1 + b^2) x^2 / 2) / (1 + b^2) db`` (a positive
integrand), which ``b = 1/c`` and ``w = x^2 / (2 c^2) - a^2 x^2 / 2`` turn into
``e^(-(1 + a^2) x^2 / 2) / pi integral_0^inf e^-w |x| / (sqrt(2w + k^2) (2w + k^2 + x^2)) dw`` (``k = a x``),
summed by 20-point Gauss-Legendre on the panels [0, 1], [1, 2], [2, 4], ... [32, 64] (the integrand's
singularity at ``w = -k^2/2 <= -1/2`` stays far from each): relative accuracy in the far left tail, where
``Phi(x) - 2 T(x, a)`` would keep only absolute accuracy.

The float versions compute in double (as SciPy's float32 loop does) and rounds once.
"""

from gradc.backends.c.mathlib.in_double import float_twin

OWENS_T_SMALL = """\
/* T(h, a) for h >= 0 and 0 <= a <= 1: e^(-h^2/2) / (2 pi) times Gauss-Legendre sums over panels */
static inline double gradc_owens_t_small(double h, double a)
{
    static const double node[10] = {
        0.07652652113349734, 0.22778585114164507, 0.37370608871541955, 0.5108670019508271, 0.636053680726515,
        0.7463319064601508, 0.8391169718222188, 0.912234428251326, 0.9639719272779138, 0.993128599185095};
    static const double weight[10] = {
        0.15275338713072628, 0.14917298647260424, 0.1420961093183824, 0.1316886384491769, 0.1181945319615186,
        0.1019301198172407, 0.08327674157670471, 0.06267204833410879, 0.040601429800386446, 0.017614007139150893};
    if (isinf(h) || a == 0.0) {
        return 0.0;
    }
    const double top = h * a > 9.0 ? 9.0 / h : a;
    const double width = h > 4.0 ? 2.0 / h : 0.5;
    const int panels = (int)ceil(top / width);
    const double step = top / panels;
    const double g = -0.5 * h * h;
    double sum = 0.0;
    for (int p = 0; p < panels; ++p) {
        const double middle = (p + 0.5) * step;
        for (int k = 0; k < 10; ++k) {
            const double u = 0.5 * step * node[k];
            const double lo = middle - u;
            const double hi = middle + u;
            sum += weight[k] * (exp(g * lo * lo) / (1.0 + lo * lo) + exp(g * hi * hi) / (1.0 + hi * hi));
        }
    }
    return exp(g) * sum * 0.5 * step * 0.15915494309189533577;
}"""

OWENS_T = """\
/* Owen's T function: symmetries to h >= 0, a >= 0; a > 1 through T(ah, 1/a) */
static inline double gradc_owens_t(double h, double a)
{
    if (isnan(h) || isnan(a)) {
        return NAN;
    }
    const double sign = a < 0.0 ? -1.0 : 1.0;
    h = fabs(h);
    a = fabs(a);
    if (a <= 1.0) {
        return sign * gradc_owens_t_small(h, a);
    }
    const double r = 0.70710678118654752440;  /* 1/sqrt(2) */
    const double qh = 0.5 * erfc(h * r);
    if (isinf(a)) {
        return sign * 0.5 * qh;
    }
    const double ph = 0.5 * erfc(-h * r);
    const double ah = a * h;
    const double qah = 0.5 * erfc(ah * r);
    const double pah = 0.5 * erfc(-ah * r);
    return sign * (0.5 * (ph * qah + pah * qh) - gradc_owens_t_small(ah, 1.0 / a));
}"""

SKEWNORM_CDF = """\
/* the skew-normal distribution function: Phi(x) - 2 T(x, a), or its left tail as a positive integral */
static inline double gradc_skewnorm_cdf(double x, double a)
{
    static const double node[10] = {
        0.07652652113349734, 0.22778585114164507, 0.37370608871541955, 0.5108670019508271, 0.636053680726515,
        0.7463319064601508, 0.8391169718222188, 0.912234428251326, 0.9639719272779138, 0.993128599185095};
    static const double weight[10] = {
        0.15275338713072628, 0.14917298647260424, 0.1420961093183824, 0.1316886384491769, 0.1181945319615186,
        0.1019301198172407, 0.08327674157670471, 0.06267204833410879, 0.040601429800386446, 0.017614007139150893};
    if (isnan(x) || isnan(a)) {
        return NAN;
    }
    if (x < 0.0 && a > 0.0 && -a * x >= 1.0 && !isinf(x) && !isinf(a)) {
        const double k2 = a * x * a * x;
        const double x2 = x * x;
        double sum = 0.0;
        double lo = 0.0;
        for (double hi = 1.0; hi <= 64.0; hi *= 2.0) {
            const double middle = 0.5 * (lo + hi);
            const double half = 0.5 * (hi - lo);
            double panel = 0.0;
            for (int j = 0; j < 10; ++j) {
                for (int side = -1; side <= 1; side += 2) {
                    const double w = middle + side * half * node[j];
                    const double s = 2.0 * w + k2;
                    panel += weight[j] * exp(-w) / (sqrt(s) * (s + x2));
                }
            }
            sum += half * panel;
            lo = hi;
        }
        return exp(-0.5 * (x2 + k2)) * -x * sum * 0.31830988618379067154;  /* 1/pi */
    }
    const double value = 0.5 * erfc(-x * 0.70710678118654752440) - 2.0 * gradc_owens_t(x, a);
    return value < 0.0 ? 0.0 : (value > 1.0 ? 1.0 : value);
}"""



# name -> (C text, the names it calls), for gradc.backends.c.mathlib's table
LIBRARY = {
    "gradc_owens_t_small": (OWENS_T_SMALL, ()),
    "gradc_owens_t": (OWENS_T, ("gradc_owens_t_small",)),
    "gradc_owens_tf": float_twin("owens_t", "h, a"),
    "gradc_skewnorm_cdf": (SKEWNORM_CDF, ("gradc_owens_t",)),
    "gradc_skewnorm_cdff": float_twin("skewnorm_cdf", "x, a"),
}
