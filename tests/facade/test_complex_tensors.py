"""Complex tensors of the facade: against torch 2.13.0's recorded behaviour (``spec/gen_complex.py``), and
gradients of real losses checked by central differences along real and imaginary directions (torch's
convention: the ``.grad`` of a complex leaf is ``dL/dx + i dL/dy``), on the recorded ops and on seeded random
compositions of them."""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch as torch
from gradc.facade import dtypes
from tests.facade.recorded import RUNNER, recorded

GEN, EXPECTED = recorded("complex")


def test_every_case_is_recorded():
    assert [fn.__name__ for fn in GEN.CASES] == list(EXPECTED)


@pytest.mark.parametrize("fn", GEN.CASES, ids=lambda f: f.__name__)
def test_matches_torch(fn):
    assert RUNNER.compare(EXPECTED[fn.__name__], RUNNER.run_case(fn, torch), 1e-9) == []


# ---------------------------------------------------------------- central differences
def _real_loss(expr, values, w):
    """The recorded op ``expr`` on float64/complex128 ``values``, reduced to ``sum(real(y * w))``."""
    x = {k: torch.tensor(v, requires_grad=True) for k, v in values.items()}
    y = eval(expr, {"T": torch}, dict(x))  # noqa: S307 - the expressions of gen_complex.OPS
    loss = (y * torch.tensor(w)).real.sum() if y.is_complex() else (y * torch.tensor(w)).sum()
    return loss, x


def _inputs(seed):
    rng = np.random.default_rng(seed)
    def c(*shape):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return {"a": c(3, 4), "b": c(3, 4), "m": c(4, 2), "r": rng.standard_normal((3, 4))}


def _check_by_differences(expr, values, seed, rtol=1e-5):
    rng = np.random.default_rng(seed)
    y = eval(expr, {"T": torch}, {k: torch.tensor(v) for k, v in values.items()})  # noqa: S307
    w = rng.standard_normal(tuple(y.shape))
    if y.is_complex():
        w = w + 1j * rng.standard_normal(tuple(y.shape))
    loss, leaves = _real_loss(expr, values, w)
    loss.backward()
    h = 1e-6
    for name, value in values.items():
        grad = leaves[name].grad
        directions = [rng.standard_normal(value.shape)]
        if np.iscomplexobj(value):
            directions.append(1j * rng.standard_normal(value.shape))
        for d in directions:
            plus = dict(values, **{name: value + h * d})
            minus = dict(values, **{name: value - h * d})
            slope = (_real_loss(expr, plus, w)[0].item() - _real_loss(expr, minus, w)[0].item()) / (2 * h)
            predicted = 0.0 if grad is None else float(np.sum(np.real(np.conj(grad.numpy()) * d)))
            assert abs(predicted - slope) <= rtol * max(1.0, abs(slope)), (expr, name, d.dtype, predicted, slope)


# not smooth in the inputs, or computed in complex64 (central differences need float64)
SMOOTH_OPS = [e for e in GEN.OPS if e not in ("a.masked_fill(r > 0, 0)", "T.where(r > 0, a, b)", "a.to(T.complex64)",
                                              "a.cfloat()")]


@pytest.mark.parametrize("expr", SMOOTH_OPS)
def test_gradients_by_central_differences(expr):
    values = _inputs(3)
    if "sqrt" in expr or "log" in expr or "** 0.5" in expr or "rsqrt" in expr or "** b" in expr:
        values["a"] = values["a"] + 4.0  # away from the branch cut on the negative real axis
    _check_by_differences(expr, values, 4)


# ---------------------------------------------------------------- seeded random compositions
UNARY = ["({}).exp()", "({}).sin()", "({}).conj()", "({}) * (0.5 - 2j)", "({}).tanh()", "({}) * ({}).conj()",
         "T.view_as_complex(T.view_as_real({}) * 1.5)", "({}).sum(1, keepdim=True) + ({})", "({}).flip(1)",
         "T.fft.fft({})", "T.fft.ifft({}, dim=0)", "T.fft.fftn({}, norm='ortho')", "({}).mT.mT", "({}).reciprocal()",
         "T.complex(({}).real, ({}).abs())", "T.polar(({}).abs(), ({}).angle())", "({}).cumsum(1)"]
REDUCE = ["({}).abs().sum()", "({}).real.sum()", "({}).imag.pow(2).sum()", "(({}) * ({}).conj()).real.mean()",
          "({}).angle().sum()", "T.view_as_real({}).sum()", "({}).var()"]


def _random_program(seed):
    rng = np.random.default_rng(seed)
    expr = "a"
    for _ in range(int(rng.integers(1, 4))):
        op = UNARY[rng.integers(len(UNARY))]
        expr = op.format(*[expr] * op.count("{}"))
    reduce = REDUCE[rng.integers(len(REDUCE))]
    return reduce.format(*[expr] * reduce.count("{}"))


@pytest.mark.parametrize("seed", range(40))
def test_random_compositions_by_central_differences(seed):
    expr = _random_program(seed)
    rng = np.random.default_rng(100 + seed)
    value = 0.3 * (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))) + (1.0 + 0.5j)
    _check_by_differences(expr, {"a": value}, 200 + seed, rtol=1e-4)


# ---------------------------------------------------------------- float32 / complex64 and generators
@pytest.mark.parametrize("seed", range(10))
def test_complex64_arithmetic_against_numpy(seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))).astype(np.complex64)
    b = (rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))).astype(np.complex64)
    ta, tb = torch.tensor(a), torch.tensor(b)
    for got, want in [(ta @ tb, a @ b), (ta * 2 - 1j, a * 2 - 1j), (ta.exp(), np.exp(a)), (ta.abs(), np.abs(a)),
                      (ta / (ta + 3), a / (a + 3)), (ta.sum(0), a.sum(0)), (ta.conj().T, a.conj().T)]:
        assert got.dtype is dtypes.from_np(np.asarray(want).dtype)
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-5, atol=2e-6)


def test_complex64_gradient_keeps_dtype_and_convention():
    z = torch.tensor([3 + 4j, -1 + 0.5j], requires_grad=True)
    (z.abs() ** 2).sum().backward()
    assert z.grad.dtype is torch.complex64
    np.testing.assert_allclose(z.grad.numpy(), 2 * np.array([3 + 4j, -1 + 0.5j]), rtol=1e-6)


def test_holomorphic_chain_matches_conjugate_derivative():
    """For a holomorphic f and L = Re(sum(w * f(z))), torch's gradient is conj(w * f'(z))."""
    z0 = np.array([0.3 + 0.2j, -0.7 + 1.1j])
    w = np.array([1.5 - 0.5j, 0.25 + 2j])
    z = torch.tensor(z0, requires_grad=True)
    ((z.exp() * z) * torch.tensor(w)).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), np.conj(w * (np.exp(z0) * (1 + z0))), rtol=1e-12)


def test_real_to_complex_casts_and_warns():
    z = torch.tensor([1 + 2j], requires_grad=True)
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        x = z.to(torch.float32)
    x.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [1 + 0j])


def test_parts_are_views_without_a_graph():
    """As torch's: writes through x.real, x.imag and view_as_real(x) change x and bump its version."""
    z = torch.tensor([1 + 2j, 3 - 1j])
    z.real.mul_(2)
    z.imag[0] = 5
    torch.view_as_real(z)[1, 1] = 7
    np.testing.assert_array_equal(z.numpy(), [2 + 5j, 6 + 7j])
    assert z._version == 3


def test_real_and_imag_are_copies_under_a_graph_and_assignment_writes():
    """Documented difference: x.real of a tensor that requires grad is a copy (torch's is a view); assigning the
    attribute writes into x."""
    w = torch.tensor([1 + 2j], requires_grad=True)
    r = w.real
    assert type(r.grad_fn).__name__ == "SelectBackward0"
    z = torch.tensor([1 + 2j, 3 + 4j])
    z.real = torch.tensor([7.0, 8.0])
    np.testing.assert_array_equal(z.numpy(), [7 + 2j, 8 + 4j])
    z.imag = 0.5
    np.testing.assert_array_equal(z.numpy(), [7 + 0.5j, 8 + 0.5j])


@pytest.mark.parametrize("call, kind, message", [
    (lambda: torch.tensor([1j], requires_grad=True).sum().backward(), RuntimeError, "real scalar outputs"),
    (lambda: torch.view_as_complex(torch.ones(2, 3)), RuntimeError, "last dimension of size 2"),
    (lambda: torch.view_as_complex(torch.ones(2, 2, dtype=torch.float16)), RuntimeError, "complex32"),
    (lambda: torch.complex(torch.ones(2), torch.ones(2, dtype=torch.float64)), RuntimeError, "scalar type Float"),
    (lambda: torch.ones(2).imag, RuntimeError, "non-complex dtypes"),
    (lambda: torch.ones(2, 2, 2).H, RuntimeError, "only supported on matrices"),
])
def test_errors_say_what_is_wrong(call, kind, message):
    with pytest.raises(kind, match=message):
        call()


def test_complex_functions_inside_gradc_grad_on_numpy_arrays():
    """torch-style complex code given to gradc.grad: traced, differentiated, equal to central differences."""
    import gradc

    def f(x):
        z = torch.polar(x, x)
        return ((torch.view_as_real(z) ** 2).sum() + torch.angle(torch.complex(x, x * 2)).sum()
                + torch.real(torch.vdot(torch.complex(x, x), torch.complex(x, -x))))
    x = np.array([0.5, 1.5, -0.25])
    h = 1e-6
    slopes = [(f(torch.tensor(x + h * e)).item() - f(torch.tensor(x - h * e)).item()) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(gradc.grad(f)(x), slopes, rtol=1e-6)
