"""Complex numbers in emitted NumPy: literals (signs, NaN and infinite parts), byte-identical source, and the
clear errors where gradc refuses complex values (each naming the user's file and line)."""
from __future__ import annotations

import ast
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.numpy.literals import complex_literal
from gradc.errors import GradcError
from gradc.ir.types import TensorType, parse_type, type_of_array

HERE = os.path.basename(__file__)


@pytest.mark.parametrize("value", [2j, 0j, complex(1, -2), complex(-0.0, 1.0), complex(0.0, -0.0),
                                   complex(math.nan, 1.5), complex(-math.inf, math.nan), complex(2.5, math.inf),
                                   complex(1e-300, -1e300)])
def test_complex_literal_round_trips(value):
    text = ast.unparse(complex_literal(value))
    back = eval(text, {"np": np})  # noqa: S307 - our own literal
    for part, want in ((back.real, value.real), (back.imag, value.imag)):
        assert (math.isnan(part) and math.isnan(want)) or (part == want and math.copysign(1, part) ==
                                                            math.copysign(1, want)), text


def test_types_parse_and_print():
    assert parse_type("c128[3]") == TensorType((3,), "c128")
    assert str(parse_type("c64[2, n]")) == "c64[2,n]"
    assert type_of_array(np.zeros(2, np.complex64)) == TensorType((2,), "c64")
    assert not TensorType((), "c128").is_float and TensorType((), "c128").is_inexact


def test_promotion_is_numpy_s():
    def f(x32, x64, z64, n):
        return x32 * z64, x64 * z64, n * z64, x32 * 1j, n * 2j, z64 + 1.5
    args = (np.ones(2, np.float32), np.ones(2), np.ones(2, np.complex64), np.arange(2))
    graph = gradc.trace(f, *args)
    got = [v.type.dtype for v in graph.outputs]
    want = [type_of_array(np.asarray(r)).dtype for r in f(*args)]
    assert got == want == ["c64", "c128", "c128", "c64", "c128", "c64"]


def test_emitted_constants_compute_as_numpy():
    def f(z):
        c = np.array([1 - 0j, complex(np.nan, -np.inf), -2.5j])
        return np.sum(np.where(np.isfinite(c), c, 0) * z) + (0.5 - 1j) * z[0]
    z = np.array([1 + 2j, -0.5 + 0.25j, 3j])
    c = gradc.compile(lambda z: np.abs(f(z)), z)
    assert c.forward(z) == pytest.approx(np.abs(f(z)), rel=1e-14)
    assert "complex(np.nan, -np.inf)" in c.source or "complex(" in c.source


def _source_under_seed(seed):
    code = textwrap.dedent("""
        import numpy as np, gradc
        def f(z, w):
            u = z * w + (1 - 2j) * z - 0.5j * w
            return np.sum(np.abs(np.exp(u)) ** 2 + np.angle(u + 1j) + np.real(np.conj(u) * u))
        print(gradc.compile(f, np.array([1 + 2j, 3 - 1j]), np.array([0.5, 2.0])).source)
    """)
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True,
                          check=True).stdout


def test_emitted_source_is_byte_identical_across_hash_seeds():
    assert _source_under_seed(1) == _source_under_seed(2)


# ---------------------------------------------------------------- refusals: clear, at the user's line
def _refused(fn, *args, match, **kw):
    with pytest.raises(GradcError, match=match) as info:
        fn(*args, **kw)
    assert HERE in str(info.value), str(info.value)
    return info.value


def test_grad_of_a_complex_output_needs_holomorphic():
    def f(z):
        return z ** 2
    err = _refused(gradc.grad(f), 1 + 1j, match="holomorphic=True")
    assert "real-valued" in str(err)


def test_holomorphic_needs_complex_inputs_and_outputs():
    def real_valued(z):
        return np.abs(z)

    def of_a_real(x):
        return x * 1j
    _refused(gradc.grad(real_valued, holomorphic=True), 1 + 1j, match="needs a complex output")
    _refused(gradc.grad(of_a_real, holomorphic=True), 2.0, match="complex inputs")


def test_jacobians_refuse_non_holomorphic_complex_maps():
    def f(z):
        return z * np.conj(z) * 1j
    z = np.array([1 + 1j])
    _refused(gradc.jacobian(f), z, match="holomorphic")
    _refused(gradc.jacfwd(lambda z: np.abs(z)), z, match="forward mode needs real inputs")
    _refused(gradc.jacrev(lambda x: x * 1j), np.ones(1), match="reverse mode needs real outputs")


# (the decompositions of complex matrices are computed: tests/ops/test_complex_linalg.py)


def test_fabs_and_real_if_close_refuse_complex():
    def fabs(z):
        return np.sum(np.fabs(z))

    def close(z):
        return np.sum(np.real_if_close(z))
    _refused(gradc.grad(fabs), np.ones(2, np.complex128), match="np.fabs")
    _refused(gradc.grad(close), np.ones(2, np.complex128), match="real_if_close")
    assert gradc.grad(lambda x: np.sum(np.real_if_close(x) ** 2))(np.ones(2)).tolist() == [2.0, 2.0]


@pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found")
def test_c_source_is_byte_identical_and_keeps_special_constants():
    def f(z):
        c = np.array([complex(np.nan, -np.inf), -0.0 - 2j, 1.5 + 0j])
        return np.sum(np.abs(z * (1 - 2j)) ** 2) + np.real(np.sum(np.where(np.isnan(c), 0, c) * z))
    z = np.array([1 + 2j, -0.5j, 3.0 + 0j])
    first = gradc.compile(f, z, target="c")
    second = gradc.compile(f, z, target="c")
    assert first.source == second.source
    assert "#include <complex.h>" in first.source and "double _Complex" in first.source
    value, grad = first.value_and_grad(z)
    want_value, want_grad = gradc.value_and_grad(f)(z)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)


@pytest.mark.parametrize("name,fn", [("max", lambda z: np.max(z)), ("sign", lambda z: np.sign(z))])
def test_c_target_refuses_ordering_of_complex_values(name, fn):
    def f(z):
        return np.sum(np.abs(fn(z)))
    with pytest.raises(GradcError, match=f"computes {name} on real values only"):
        gradc.compile(f, np.array([1 + 2j, 2 - 1j]), target="c")


@pytest.mark.parametrize("fn", [lambda z: np.maximum(z, 1j), lambda z: np.floor(z), lambda z: np.clip(z, 0, 1),
                                lambda z: np.logaddexp(z, z)])
def test_real_only_elementwise_ops_refuse_complex(fn):
    def f(z):
        return np.sum(np.abs(fn(z)))
    _refused(gradc.grad(f), np.array([1 + 2j, 2 - 1j]), match="of complex values")
