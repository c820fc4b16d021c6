"""Per-op table entries for the special family (merged into ``op_cases``; see its docstring for the checks).

NumPy's elementwise math (gradc/ops/special_numpy.py) and SciPy's special functions and distributions
(gradc/ops/special_scipy.py, special_stats.py). The SciPy cases call SciPy itself: ``routed`` traces them
the way ``gradc.grad`` traces a user's function (SciPy's names routed to gradc's), since the table's loss
wrapper lives in another module. Domains keep away from poles, branch cuts and the kinks of mod.
"""
from __future__ import annotations

import numpy as np
import scipy.special
import scipy.stats
from op_cases import Case, NondiffCase, away_from_zero, const, distinct, f32, normal, positive, uniform

from gradc.trace.scipy_dispatch import rebind


def routed(fn):
    """``fn`` with its SciPy names routed to gradc's (plain SciPy still, on arrays), as ``gradc.grad`` does."""
    return rebind(fn)


X_MOD = const(np.array([2.3, -1.1, 0.45, 5.2]))  # x / y stays 0.15 or more from an integer
Y_MOD = const(np.array([0.7, 1.3, -2.0, -1.9]))
LOGIT = const(np.array([0.1, 0.35, 0.5, 0.6, 0.9]))  # both sides of SciPy's 0.3 < x < 0.65 switch
XLOGY_X = const(np.array([0.0, 1.2, -0.7]))  # x = 0: y's derivative is 0


def special(name, arity=1):
    """``scipy.special.<name>`` of the case's inputs."""
    if arity == 2:
        return routed(lambda a, b: getattr(scipy.special, name)(a, b))
    return routed(lambda a: getattr(scipy.special, name)(a))


DIFF_CASES = [
    # ---- NumPy's elementwise math
    Case("arcsin", lambda a: np.arcsin(a), [uniform(-0.8, 0.8, 5)], ("arcsin",)),
    Case("arcsin_f32", lambda a: np.arcsin(a), [f32(uniform(-0.8, 0.8, 4))], ("arcsin",), rtol=1e-3),
    Case("arccos", lambda a: np.arccos(a), [uniform(-0.8, 0.8, 5)], ("arccos",)),
    Case("arcsinh", lambda a: np.arcsinh(a), [normal(5)], ("arcsinh",)),
    Case("arccosh", lambda a: np.arccosh(a), [uniform(1.2, 3.0, 5)], ("arccosh",)),
    Case("arctanh", lambda a: np.arctanh(a), [uniform(-0.8, 0.8, 5)], ("arctanh",)),
    Case("log2", lambda a: np.log2(a), [positive(4)], ("log2",)),
    Case("log10", lambda a: np.log10(a), [positive(4)], ("log10",)),
    Case("exp2", lambda a: np.exp2(a), [normal(4)], ("exp2",)),
    Case("cbrt", lambda a: np.cbrt(a), [away_from_zero(5)], ("cbrt",)),
    Case("sinc", lambda a: np.sinc(a), [normal(5)], ("sinc",)),
    Case("sinc_at_zero", lambda a: np.sinc(a), [const(np.array([0.0, 0.4, -1.3]))], ("sinc",)),
    Case("arctan2", lambda a, b: np.arctan2(a, b), [normal(2, 3), away_from_zero(3)], ("arctan2",)),
    Case("hypot", lambda a, b: np.hypot(a, b), [away_from_zero(4), normal(4)], ("hypot",)),
    Case("logaddexp2", lambda a, b: np.logaddexp2(a, b), [normal(3, 1), normal(4)], ("logaddexp2",)),
    Case("fmax", lambda a, b: np.fmax(a, b), [distinct(2, 3), distinct(2, 3)], ("fmax",)),
    Case("fmin_scalar", lambda a: np.fmin(a, 0.1), [away_from_zero(5)], ("fmin",)),
    Case("copysign", lambda a, b: np.copysign(a, b), [away_from_zero(5), away_from_zero(5)], ("copysign",)),
    Case("float_power", lambda a, b: np.float_power(a, b), [positive(3), normal(3)], ("pow",)),
    Case("deg2rad_rad2deg", lambda a: np.deg2rad(a) * np.degrees(a), [normal(3)], ("mul",)),
    Case("mod", lambda a, b: np.mod(a, b), [X_MOD, Y_MOD], ("mod", "floor_divide")),
    Case("remainder_operator", lambda a, b: np.remainder(a, b) * 2.0, [X_MOD, Y_MOD], ("mod",)),
    Case("fmod", lambda a, b: np.fmod(a, b), [X_MOD, Y_MOD], ("fmod", "trunc")),
    Case("divmod", lambda a, b: np.divmod(a, b)[1], [X_MOD, Y_MOD], ("mod",)),
    Case("nan_to_num", lambda a: np.nan_to_num(a * 2.0), [normal(4)], ("where", "isnan", "isinf", "signbit")),
    # ---- scipy.special
    Case("erf", special("erf"), [normal(5)], ("erf",)),
    Case("erf_f32", special("erf"), [f32(normal(4))], ("erf",), rtol=1e-3),
    Case("erfc", special("erfc"), [normal(5)], ("erfc",)),
    Case("erfinv", special("erfinv"), [uniform(-0.8, 0.8, 5)], ("erfinv",)),
    Case("erfcinv", special("erfcinv"), [uniform(0.2, 1.8, 5)], ("erfcinv",)),
    Case("ndtr", special("ndtr"), [normal(5)], ("ndtr",)),
    Case("log_ndtr", special("log_ndtr"), [uniform(-6.0, 3.0, 5)], ("log_ndtr",)),
    Case("ndtri", special("ndtri"), [uniform(0.1, 0.9, 5)], ("ndtri",)),
    Case("gammaln", special("gammaln"), [uniform(0.3, 6.0, 5)], ("gammaln", "digamma")),
    Case("loggamma", special("loggamma"), [uniform(0.3, 6.0, 5)], ("gammaln", "digamma")),
    Case("gamma", special("gamma"), [uniform(0.3, 4.0, 5)], ("gamma", "digamma")),
    Case("digamma", special("psi"), [uniform(0.3, 6.0, 5)], ("digamma", "polygamma")),
    Case("gammaln_f32", special("gammaln"), [f32(uniform(0.5, 5.0, 4))], ("gammaln", "digamma"), rtol=1e-3),
    Case("gammaln_negative", special("gammaln"), [uniform(-2.9, -2.1, 4)], ("gammaln", "digamma")),
    Case("polygamma_2", routed(lambda a: scipy.special.polygamma(2, a)),
         [uniform(0.3, 6.0, 4)], ("polygamma",)),
    Case("polygamma_f32", routed(lambda a: scipy.special.polygamma(1, a)), [f32(uniform(0.5, 3.0, 4))],
         ("polygamma",), rtol=1e-3),
    # (betaln's and beta's derivatives call polygamma: the C target names only the forward graph's ops)
    Case("betaln", special("betaln", 2), [positive(4), positive(4)], ("betaln",)),
    Case("beta", special("beta", 2), [positive(2, 3), positive(3)], ("beta",)),
    Case("expit", special("expit"), [normal(5)], ("expit",)),
    Case("logit", special("logit"), [LOGIT], ("logit",)),
    Case("log_expit", special("log_expit"), [uniform(-6.0, 6.0, 6)], ("log_expit", "expit")),
    Case("xlogy", special("xlogy", 2), [XLOGY_X, positive(3)], ("xlogy",)),
    Case("xlogy_broadcast", special("xlogy", 2), [normal(2, 3), positive(3)], ("xlogy",)),
    Case("xlog1py", special("xlog1py", 2), [XLOGY_X, uniform(-0.5, 2.0, 3)], ("xlog1py",)),
    Case("entr", special("entr"), [positive(5)], ("rel_entr",)),
    Case("rel_entr", special("rel_entr", 2), [positive(4), positive(4)], ("rel_entr",)),
    Case("kl_div", special("kl_div", 2), [positive(4), positive(4)], ("rel_entr",)),
    Case("multigammaln", routed(lambda a: scipy.special.multigammaln(a, 3)), [uniform(2.0, 4.0, 3)],
         ("gammaln", "digamma")),
    Case("logsumexp", routed(lambda a: scipy.special.logsumexp(a)), [normal(3, 4)],
         ("max", "stop_gradient", "exp", "log")),
    Case("logsumexp_axis_keepdims", routed(lambda a: scipy.special.logsumexp(a, axis=1, keepdims=True)),
         [normal(3, 4)], ("exp", "log")),
    Case("logsumexp_b", routed(lambda a, b: scipy.special.logsumexp(a, axis=0, b=b)), [normal(3, 2), positive(3, 1)],
         ("exp", "log", "mul")),
    Case("softmax", routed(lambda a: scipy.special.softmax(a, axis=-1)), [normal(2, 4)], ("exp", "div")),
    Case("log_softmax", routed(lambda a: scipy.special.log_softmax(a)), [normal(5)], ("exp", "log")),
    # ---- scipy.stats
    Case("norm_logpdf", routed(lambda x, m, s: scipy.stats.norm.logpdf(x, m, s)), [normal(4), normal(4), positive(4)],
         ("log", "div")),
    Case("norm_pdf_frozen", routed(lambda x, m, s: scipy.stats.norm(m, scale=s).pdf(x)), [normal(4), normal(1),
                                                                                           positive(1)], ("exp",)),
    Case("norm_cdf_logcdf", routed(lambda x, s: scipy.stats.norm.cdf(x, scale=s) + scipy.stats.norm.logcdf(x)),
         [normal(4), positive(4)], ("ndtr", "log_ndtr")),
    Case("norm_sf_logsf", routed(lambda x: scipy.stats.norm.sf(x, loc=0.3) * scipy.stats.norm.logsf(x)),
         [normal(4)], ("ndtr", "log_ndtr")),
    Case("t_logpdf", routed(lambda df, x, s: scipy.stats.t.logpdf(x, df, 0.5, s)),
         [uniform(1.0, 8.0, 4), normal(4), positive(4)], ("gammaln", "digamma", "log1p")),
    Case("gamma_logpdf", routed(lambda a, x, s: scipy.stats.gamma.logpdf(x, a, scale=s)),
         [positive(4), positive(4), positive(4)], ("xlogy", "gammaln", "digamma", "where")),
    Case("beta_pdf", routed(lambda x, a, b: scipy.stats.beta.pdf(x, a, b)),
         [uniform(0.1, 0.9, 4), positive(4), positive(4)], ("xlogy", "xlog1py", "betaln")),
    Case("expon", routed(lambda x, s: scipy.stats.expon.logpdf(x, scale=s) + scipy.stats.expon.cdf(x, 0.1, s)),
         [positive(4), positive(4)], ("expm1", "where")),
    Case("laplace", routed(lambda x, m: scipy.stats.laplace.logpdf(x, m) * scipy.stats.laplace.cdf(x, m)),
         [distinct(4), uniform(-0.05, 0.05, 4)], ("abs", "where")),
    Case("cauchy", routed(lambda x, s: scipy.stats.cauchy.logpdf(x, scale=s) + scipy.stats.cauchy.cdf(x)),
         [normal(4), positive(4)], ("log1p", "arctan2")),
]

NONDIFF_CASES = [
    NondiffCase("rint", lambda a: np.rint(a), [uniform(-3.0, 3.0, 5)], ("rint",)),
    NondiffCase("ceil", lambda a: np.ceil(a), [uniform(-3.0, 3.0, 5)], ("ceil",)),
    NondiffCase("trunc_fix", lambda a: np.trunc(a) + np.fix(a), [uniform(-3.0, 3.0, 5)], ("trunc",)),
    NondiffCase("round", lambda a: np.round(a) + a.round(2), [uniform(-3.0, 3.0, 5)], ("round",)),
    NondiffCase("floor_divide", lambda a, b: np.floor_divide(a, b), [X_MOD, Y_MOD], ("floor_divide",)),
    NondiffCase("isnan", lambda a: np.isnan(a).astype(np.float64), [normal(4)], ("isnan", "astype")),
    NondiffCase("isinf_isfinite", lambda a: (np.isinf(a) | np.isfinite(a)).astype(np.float64), [normal(4)],
                ("isinf", "isfinite", "astype")),
    NondiffCase("signbit", lambda a: np.signbit(a).astype(np.float64), [away_from_zero(4)], ("signbit", "astype")),
    # integers from the input (away from integer boundaries): NumPy's bits of negative and positive ones
    NondiffCase("bitwise", lambda a: (((a * 4.0).astype(np.int64) & 5) | (a.astype(np.int64) ^ -3)) * 1.0,
                [uniform(-3.0, 3.0, 6)], ("bitwise_and", "bitwise_or", "bitwise_xor")),
    NondiffCase("shifts_invert", lambda a: ((~(a * 4.0).astype(np.int64) << 2) + ((a * 9.0).astype(np.int64) >> 1))
                * 0.5, [uniform(-3.0, 3.0, 6)], ("invert", "left_shift", "right_shift")),
]
