"""Per-op table entries for the ``scipy.stats`` distributions (merged into ``op_cases``; see its docstring).

The distributions add no primitive: each method is a composition of existing ops (log_ndtr, xlogy, gammaln,
arctan2, cholesky, triangular_solve, ...). These cases run those compositions through the table's checks
(the VJP against central differences, interpreter against emitted NumPy, and the C target against NumPy in
tests/backends/c/test_c_op_table.py). Parameters stay inside the support, away from kinks.
"""
from __future__ import annotations

import numpy as np
import scipy.stats
from op_cases import Case, const, normal, positive, uniform
from op_cases_special import routed

SPD = const(np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]]))
COUNTS = np.array([0.0, 1.0, 3.0, 6.0])
ST = scipy.stats

DIFF_CASES = [
    Case("norm_logcdf_loc_scale", routed(lambda x, m, s: ST.norm.logcdf(x, m, s)),
         [normal(5), uniform(-0.5, 0.5, 5), positive(5)], ("log_ndtr", "div")),
    Case("norm_frozen_logsf", routed(lambda x, s: ST.norm(0.3, s).logsf(x)), [normal(4), positive(4)],
         ("log_ndtr",)),
    Case("t_logpdf_df", routed(lambda x, df: ST.t.logpdf(x, df, 0.2, 1.3)), [normal(4), uniform(1.5, 6.0, 4)],
         ("gammaln", "log1p")),
    Case("cauchy_cdf_logcdf", routed(lambda x: ST.cauchy.cdf(x) + ST.cauchy.logsf(x)), [normal(5)], ("arctan2",)),
    Case("logistic_logpdf_logcdf", routed(lambda x: ST.logistic.logpdf(x) + ST.logistic.logcdf(x, scale=2.0)),
         [normal(5)], ("log_expit",)),
    Case("gamma_logpdf_shape", routed(lambda x, a: ST.gamma.logpdf(x, a, scale=1.5)),
         [uniform(0.3, 4.0, 4), uniform(0.5, 3.0, 4)], ("xlogy", "gammaln")),
    Case("lognorm_sf_weibull_logcdf", routed(lambda x, s: ST.lognorm.sf(x, s) + ST.weibull_min.logcdf(x, s + 1.0)),
         [uniform(0.3, 3.0, 4), uniform(0.5, 2.0, 4)], ("ndtr", "expm1")),
    Case("expon_laplace_quantiles", routed(lambda p: ST.expon.isf(p, 0.5) + ST.laplace.ppf(p, scale=2.0)),
         [uniform(0.05, 0.95, 5)], ("log",)),
    Case("poisson_logpmf_rate", routed(lambda mu: ST.poisson.logpmf(COUNTS, mu)), [uniform(0.5, 5.0, 4)],
         ("xlogy",)),
    Case("binom_pmf_probability", routed(lambda p: ST.binom.pmf(COUNTS, 8, p)), [uniform(0.1, 0.9, 4)],
         ("xlog1py",)),
    Case("multivariate_normal_logpdf", routed(lambda x, m, c: ST.multivariate_normal.logpdf(x, m, c)),
         [normal(4, 3), normal(3), SPD], ("cholesky", "triangular_solve")),
    Case("multivariate_normal_diagonal", routed(lambda x, v: ST.multivariate_normal.logpdf(x, np.zeros(2), v)),
         [normal(3, 2), positive(2)], ("log", "div")),
    Case("dirichlet_logpdf_alpha", routed(lambda a: ST.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), a)),
         [uniform(0.5, 3.0, 3)], ("gammaln", "xlogy")),
    Case("gumbel_genextreme_logs",
         routed(lambda x, c: ST.gumbel_r.logsf(x, 0.1) + ST.genextreme.logpdf(x, c, scale=2.0)),
         [uniform(-0.5, 0.5, 4), uniform(-0.3, 0.3, 4)], ("exp", "log1p")),
    Case("truncnorm_skewnorm_vonmises", routed(lambda x, a, k: ST.truncnorm.logcdf(x, -1.0, 1.5) +
                                               ST.skewnorm.logpdf(x, a) + ST.vonmises.logpdf(x, k)),
         [uniform(-0.5, 0.5, 4), uniform(-2.0, 2.0, 4), uniform(0.5, 3.0, 4)], ("log_ndtr", "i0e")),
    Case("rayleigh_loggamma", routed(lambda x: ST.rayleigh.logcdf(x, scale=0.7) + ST.loggamma.logpdf(x, 1.7)),
         [uniform(0.3, 2.0, 4)], ("expm1", "exp")),
]
NONDIFF_CASES: list = []
