"""torch's top-level in-place functions and ``gammainc``'s refused shape derivative against torch 2.13.0's recorded
behaviour (``spec/gen_inplace_functions.py``), plus seeded random checks: ``torch.<f>_(y)`` writes exactly
``torch.<f>(y)`` and its gradient is the out-of-place one, and the error paths."""
import numpy as np
import pytest

import gradc.torch as torch
from gradc.facade import inplace_functions
from tests.facade.recorded import RUNNER, recorded

GEN, EXPECTED = recorded("inplace_functions")


def test_every_case_is_recorded():
    assert [fn.__name__ for fn in GEN.CASES] == list(EXPECTED)


@pytest.mark.parametrize("fn", GEN.CASES, ids=lambda f: f.__name__)
def test_matches_torch(fn):
    assert RUNNER.compare(EXPECTED[fn.__name__], RUNNER.run_case(fn, torch), 1e-9) == []


_DOMAIN = {"acos": (-0.9, 0.9), "asin": (-0.9, 0.9), "arccos": (-0.9, 0.9), "arcsin": (-0.9, 0.9),
           "atanh": (-0.9, 0.9), "arctanh": (-0.9, 0.9), "acosh": (1.1, 3.0), "arccosh": (1.1, 3.0),
           "log": (0.1, 3.0), "log10": (0.1, 3.0), "log2": (0.1, 3.0), "log1p": (0.1, 3.0), "sqrt": (0.1, 3.0),
           "rsqrt": (0.1, 3.0), "reciprocal": (0.5, 3.0), "tan": (-1.2, 1.2), "logit": (0.05, 0.95)}


@pytest.mark.parametrize("name", [n for n in inplace_functions.UNARY if hasattr(torch, n + "_")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inplace_equals_out_of_place(name, dtype):
    rng = np.random.default_rng(sum(map(ord, name + dtype)))
    lo, hi = _DOMAIN.get(name, (-2.5, 2.5))
    values = rng.uniform(lo, hi, size=(2, 3))
    weights = torch.tensor(rng.standard_normal((2, 3)), dtype=getattr(torch, dtype))
    x1 = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
    x2 = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
    ref = getattr(torch, name)(x1 * 1.0)
    y = x2 * 1.0
    assert getattr(torch, name + "_")(y) is y and y._version == 1
    np.testing.assert_array_equal(y.detach().numpy(), ref.detach().numpy())
    assert y.dtype == ref.dtype
    (ref * weights).sum().backward()
    if name in ("acosh", "arccosh", "asinh", "arcsinh", "atanh", "arctanh"):  # torch refuses these derivatives
        with pytest.raises(NotImplementedError, match="inplace version of"):
            (y * weights).sum().backward()
        return
    (y * weights).sum().backward()
    np.testing.assert_allclose(x2.grad.numpy(), x1.grad.numpy(), rtol=1e-6)


def test_leaf_and_no_grad():
    x = torch.tensor([1.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        torch.sqrt_(x)
    with torch.no_grad():
        torch.sqrt_(x)
    assert x.tolist() == [1.0, 2.0] and x._version == 1


def test_gammainc_derivative_in_x_by_central_differences():
    rng = np.random.default_rng(3)
    a, xs = rng.uniform(0.5, 4.0, 5), rng.uniform(0.1, 5.0, 5)
    x = torch.tensor(xs, requires_grad=True)
    for f in (torch.special.gammainc, torch.special.gammaincc):
        x.grad = None
        f(torch.tensor(a), x).sum().backward()
        h = 1e-6
        fd = (f(torch.tensor(a), torch.tensor(xs + h)) - f(torch.tensor(a), torch.tensor(xs - h))).numpy() / (2 * h)
        np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-6)


def test_gammainc_shape_derivative_refused_under_every_entry_point():
    a = torch.tensor([1.5, 2.0], dtype=torch.float64, requires_grad=True)
    x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    y = torch.igamma(a, x).sum()
    with pytest.raises(NotImplementedError, match="'igamma: input'"):
        torch.autograd.grad(y, (a, x), retain_graph=True)
    with pytest.raises(NotImplementedError, match="'igamma: input'"):
        torch.autograd.grad(y, a, retain_graph=True)
    (gx,) = torch.autograd.grad(y, x)  # only x's gradient wanted: computed, as torch does
    assert gx.shape == (2,)
