"""Seeded random compositions of complex elementwise ops, each differentiated by gradc and checked against
the user's function run by NumPy and against central differences along the real and the imaginary direction
of every complex input (JAX's convention: the gradient of a real loss is df/dx - i df/dy), on the NumPy and
the C target."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build

TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(c_build.find_compiler() is None,
                                                                 reason="no C compiler found"))]

# (name, arity, function): holomorphic ops, the non-holomorphic parts, and promotion with real operands
UNARY = [
    ("exp", lambda a: np.exp(0.3 * a)),
    ("sin", np.sin), ("cos", np.cos), ("tanh", lambda a: np.tanh(0.5 * a)),
    ("sinh", lambda a: np.sinh(0.5 * a)), ("square", np.square),
    ("conj", np.conj), ("neg", np.negative),
    ("log", lambda a: np.log(a * np.conj(a) + 1.0)),  # away from the branch cut and 0
    ("sqrt", lambda a: np.sqrt(a * np.conj(a) + 0.5)),
    ("recip", lambda a: 1.0 / (a * np.conj(a) + 1.0 + 0.5j)),
    ("real_back", lambda a: np.real(a) + 0.5j),
    ("imag_back", lambda a: np.imag(a) * (1 - 1j)),
    ("abs_back", lambda a: np.abs(a + 0.1) + 0j),
]
BINARY = [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
    ("div", lambda a, b: a / (b * np.conj(b) + 1.0)),
    ("pow", lambda a, b: (a * np.conj(a) + 1.0) ** (0.5 + 0.25j) * b),
]
REDUCE = [
    ("abs2", lambda v: np.sum(np.abs(v) ** 2)), ("real_sum", lambda v: np.real(np.sum(v))),
    ("imag_mean", lambda v: np.imag(np.mean(v))), ("angle", lambda v: np.sum(np.angle(v + 3.0))),
]


def random_program(seed):
    """A function of a complex array z and a real array x, and its description."""
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(int(rng.integers(2, 6))):
        if rng.random() < 0.55:
            steps.append(("u",) + UNARY[int(rng.integers(len(UNARY)))])
        else:
            steps.append(("b",) + BINARY[int(rng.integers(len(BINARY)))] + (int(rng.integers(3)),))
    loss = REDUCE[int(rng.integers(len(REDUCE)))]

    def program(z, x):
        values = [z, x * (0.5 - 0.25j), z * x]
        v = z
        for step in steps:
            if step[0] == "u":
                v = step[2](v)
            else:
                v = step[2](v, values[step[3]])
            v = v * 0.5  # keep magnitudes moderate
        return loss[1](v)

    text = " -> ".join(s[1] for s in steps) + f" -> {loss[0]}"
    return program, text


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(30))
def test_random_complex_program_against_differences(seed, target):
    program, text = random_program(seed)
    rng = np.random.default_rng(1000 + seed)
    z = rng.normal(size=3) * 0.7 + 1j * rng.normal(size=3) * 0.7
    x = rng.normal(size=3)
    compiled = gradc.compile(program, z, x, wrt=("z", "x"), target=target)
    value, (gz, gx) = compiled.value_and_grad(z, x)
    np.testing.assert_allclose(value, program(z, x), rtol=1e-11, atol=1e-12, err_msg=text)
    assert gz.dtype == np.complex128 and gx.dtype == np.float64, text
    np.testing.assert_allclose(gz, central_gradient(lambda v: program(v, x), z), rtol=2e-5, atol=2e-6, err_msg=text)
    np.testing.assert_allclose(gx, central_gradient(lambda v: program(z, v), x), rtol=2e-5, atol=2e-6, err_msg=text)


@pytest.mark.parametrize("seed", range(8))
def test_random_program_jvp_agrees_with_vjp(seed):
    """Forward mode on complex tangents: <grad, t> in JAX's pairing Re(g * t) equals the directional derivative."""
    program, text = random_program(seed)
    rng = np.random.default_rng(2000 + seed)
    z = rng.normal(size=3) * 0.7 + 1j * rng.normal(size=3) * 0.7
    x = rng.normal(size=3)
    t = rng.normal(size=3) + 1j * rng.normal(size=3)
    g = gradc.grad(program)(z, x)
    _, tangent = gradc.jvp(program, (z, x), (t, np.zeros(3)))
    np.testing.assert_allclose(tangent, np.real(np.sum(g * t)), rtol=1e-9, atol=1e-10, err_msg=text)
