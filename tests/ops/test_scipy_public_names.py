"""Refusals of SciPy functions name the public function (``scipy.linalg.logm``), never SciPy's internal paths
(``scipy._lib...``, ``scipy.linalg._matfuncs``), whether the function is handed to a transform itself or called
in the user's code; a routed SciPy function handed to a transform itself is routed
(``gradc.jit(scipy.linalg.expm)``)."""
from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.linalg
import scipy.special

import gradc
from gradc.errors import GradcError

A = np.array([[0.5, 0.2], [0.1, 0.4]])
PRIVATE = re.compile(r"scipy(\.\w+)*\._")

REFUSED = [  # SciPy functions gradc does not differentiate, reached with a traced matrix
    ("scipy.linalg.logm", scipy.linalg.logm),
    ("scipy.linalg.signm", scipy.linalg.signm),
    ("scipy.linalg.funm", lambda a: scipy.linalg.funm(a, np.exp)),
]


@pytest.mark.parametrize("name,fn", REFUSED, ids=[n for n, _ in REFUSED])
@pytest.mark.parametrize("how", ["handed", "called"])
def test_refusal_names_the_public_function(name, fn, how):
    f = fn if how == "handed" else (lambda a: fn(a) * 2.0)
    with pytest.raises(GradcError) as info:
        gradc.jit(f)(A)
    message = str(info.value)
    assert not PRIVATE.search(message), message
    assert name in message or "scipy.linalg" in message, message
    assert "test_scipy_public_names.py" in message or how == "handed", message


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("fn", [scipy.linalg.expm, scipy.linalg.sqrtm, scipy.special.logsumexp, scipy.special.erf],
                         ids=lambda f: f.__name__)
def test_routed_scipy_function_handed_to_a_transform(fn, target):
    got = gradc.jit(fn, target=target)(A)
    np.testing.assert_allclose(got, fn(A), rtol=1e-10, atol=1e-12)


def test_grad_of_routed_scipy_function_handed_itself():
    def f(a):
        return scipy.special.logsumexp(a)
    np.testing.assert_allclose(gradc.grad(scipy.special.logsumexp)(A), gradc.grad(f)(A), rtol=1e-14)
    np.testing.assert_allclose(gradc.grad(scipy.special.logsumexp)(A), np.exp(A) / np.exp(A).sum(), rtol=1e-12)
