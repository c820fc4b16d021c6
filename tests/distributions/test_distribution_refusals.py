"""Refusals name the public function (``scipy.stats.t.entropy``), never SciPy's internal path, and the user's
file:line: methods gradc lacks with traced arguments (rvs, fit, ...), distributions gradc lacks (called directly,
frozen, or reached through an object), wrong arguments."""
from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.stats
from scipy.stats import moyal, multivariate_normal, norm

import gradc
from gradc.errors import GradcError

HERE = re.escape(__file__.rsplit("/", 1)[-1])


def _refused(fn, *args, match):
    with pytest.raises(GradcError) as info:
        gradc.grad(fn)(*args)
    message = str(info.value)
    assert re.search(match, message), message
    assert "_distn_infrastructure" not in message and "_multivariate" not in message, message
    assert re.search(HERE + r":\d+", message), message  # the user's line
    return message


def rvs_of_traced_loc(mu):
    return np.sum(norm.rvs(loc=mu, size=3, random_state=0))


def fit_of_traced_data(x):
    return np.sum(scipy.stats.norm.fit(x))


def entropy_of_traced_scale(s):
    return scipy.stats.t.entropy(3.0, scale=s)


def unsupported_distribution(x):
    return np.sum(moyal.logpdf(x))


def unsupported_frozen(x, mu):
    return np.sum(scipy.stats.gompertz(1.3, mu, 1.0).cdf(x))


def frozen_passed_in(x, dist=norm(0.0, 1.0)):
    return np.sum(dist.logpdf(x))


def too_many(x):
    return np.sum(scipy.stats.norm.logpdf(x, 0, 1, 2))


def unknown_keyword(x):
    return np.sum(scipy.stats.gamma.logpdf(x, b=2.0))


def missing_shape(x):
    return np.sum(scipy.stats.gamma.cdf(x))


def covariance_object(x):
    return np.sum(multivariate_normal.logpdf(x, np.zeros(2), scipy.stats.Covariance.from_diagonal([1.0, 2.0])))


def mismatched_mean(x):
    return np.sum(multivariate_normal.logpdf(x, np.zeros(3), np.eye(2)))


def wrong_coordinates(x):
    return np.sum(multivariate_normal.logpdf(x, np.zeros(3), np.eye(3)))


def test_methods_gradc_lacks_are_named_with_a_hint():
    message = _refused(rvs_of_traced_loc, 0.5, match=r"scipy\.stats\.norm\.rvs is not supported")
    assert "loc + scale * z" in message
    assert "log-likelihood" in _refused(fit_of_traced_data, np.ones(3), match=r"scipy\.stats\.norm\.fit is not")
    _refused(entropy_of_traced_scale, 1.5, match=r"scipy\.stats\.t\.entropy is not supported")


def test_distributions_gradc_lacks_are_named_by_their_public_path():
    message = _refused(unsupported_distribution, np.ones(3), match=r"scipy\.stats\.moyal\.logpdf is not supported")
    assert "norm" in message  # the hint lists the distributions gradc has
    _refused(unsupported_frozen, np.ones(3), 0.5, match=r"scipy\.stats\.gompertz\.cdf is not supported")


def test_a_distribution_gradc_cannot_route_is_named_with_the_fix():
    _refused(frozen_passed_in, np.ones(3), match=r"scipy\.stats\.norm\.logpdf was reached on a traced value")


def test_wrong_arguments():
    _refused(too_many, np.ones(2), match=r"scipy\.stats\.norm\.logpdf takes at most 3 arguments")
    _refused(unknown_keyword, np.ones(2), match=r"scipy\.stats\.gamma\.logpdf got an unexpected .* 'b'")
    _refused(missing_shape, np.ones(2), match=r"scipy\.stats\.gamma\.cdf is missing a")
    _refused(covariance_object, np.ones((3, 2)), match=r"multivariate_normal\.logpdf with cov of type CovViaDiagonal")
    _refused(mismatched_mean, np.ones((3, 2)), match=r"mean has 3 entries but cov is of size 2")
    _refused(wrong_coordinates, np.ones((3, 2)), match=r"x has 2 coordinates")


def test_untraced_calls_stay_scipys():
    def f(x):
        return x * norm.ppf(0.975) + moyal.logpdf(0.3) + scipy.stats.t.entropy(3.0)

    assert abs(gradc.grad(f)(1.0) - norm.ppf(0.975)) < 1e-15
