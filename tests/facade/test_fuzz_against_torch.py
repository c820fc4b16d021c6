"""Seeded PyTorch-style programs (tests/facade/fuzz_programs.py) on real torch 2.13.0 and on gradc.torch:
the same values, dtypes, shapes, ``grad_fn`` names and leaf gradients, or both raise.

CI-sized by default; ``GRADC_FUZZ_LONG=1`` runs twenty times as many, ``GRADC_FUZZ_SEED=N`` others.
"""
import os

import numpy as np
import pytest

import gradc.torch as facade
from tests.facade import fuzz_programs

torch = pytest.importorskip("torch")

LONG = os.environ.get("GRADC_FUZZ_LONG") == "1"
SEED = int(os.environ.get("GRADC_FUZZ_SEED", 20261128))
PROGRAMS = fuzz_programs.generate(400 * (20 if LONG else 1), SEED)


def _run(module, program):
    try:
        return module, program.run(module)
    except Exception as e:  # compared below: torch raising must mean the facade raises
        return module, e


def _tolerance(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("part", range(4))
def test_programs_agree_with_torch(part):
    checked = 0
    for program in PROGRAMS[part::4]:
        _, want = _run(torch, program)
        _, got = _run(facade, program)
        if isinstance(want, Exception):
            assert isinstance(got, Exception), f"torch raised {want!r}; the facade did not\n{program!r}"
            continue
        assert not isinstance(got, Exception), f"the facade raised {got!r}; torch did not\n{program!r}"
        (want_values, want_leaves), (got_values, got_leaves) = want, got
        tol = _tolerance(program.dtype)
        for n, (w, g) in enumerate(zip(want_values, got_values)):
            where = f"value {n}\n{program!r}"
            assert tuple(g.shape) == tuple(w.shape), where
            assert str(g.dtype) == str(w.dtype), where
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), err_msg=where, **tol)
            want_name = type(w.grad_fn).__name__ if w.grad_fn is not None else None
            got_name = type(g.grad_fn).__name__ if g.grad_fn is not None else None
            assert got_name == want_name, where
        for n, (w, g) in enumerate(zip(want_leaves, got_leaves)):
            if w.grad is None:  # a leaf the loss does not use
                assert g.grad is None, f"leaf {n} has a grad where torch's has none\n{program!r}"
                continue
            # a gradient sums contributions that may cancel: compared on the scale of its largest entry
            want_grad = w.grad.numpy()
            scale = tol["rtol"] * 5 * (1.0 + np.max(np.abs(want_grad), initial=0.0))
            np.testing.assert_allclose(g.grad.numpy(), want_grad, rtol=0, atol=scale,
                                       err_msg=f"leaf {n} grad\n{program!r}")
        checked += 1
    assert checked >= len(PROGRAMS[part::4]) // 2


def test_maximum_keeps_a_nan_cotangent_from_the_operand_it_did_not_select():
    """Found by the generator (GRADC_FUZZ_LONG=1): hypot's derivative at (0, 0) is NaN, and torch's maximum
    gives the operand it did not select a gradient of 0, not NaN."""
    got, want = (_run(module, fuzz_programs.Program(
        [np.array([[-1.0, 0.5]]), np.array([[-2.0, 0.3]])],
        ["v2 = torch.relu(v1)", "v3 = torch.maximum(v0, v2)", "v4 = torch.hypot(v3, v3 * 0.0)",
         "loss = v4.sum()"], np.float64))[1] for module in (facade, torch))
    np.testing.assert_array_equal(got[1][0].grad.numpy(), want[1][0].grad.numpy())
