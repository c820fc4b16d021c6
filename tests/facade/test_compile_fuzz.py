"""``torch.compile`` of the seeded PyTorch-style programs (tests/facade/fuzz_programs.py) gives eager's values and
leaf gradients: each program becomes a function of its leaves returning every value it computes, compiled with
``fullgraph=True`` (a fallback to eager would be an error, not a silent pass).

A leaf that reaches a returned value but not the loss gets a zero gradient, not None: the compiled call is one
``CompiledFunctionBackward`` node over all its inputs, as real torch.compile's is (checked on torch 2.13.0 with
``backend="aot_eager"``); a leaf the function never reads keeps ``.grad`` None in both.

CI-sized by default; ``GRADC_FUZZ_LONG=1`` runs ten times as many, ``GRADC_FUZZ_SEED=N`` others.
"""
import os
import warnings

import numpy as np
import pytest

import gradc.torch as torch
from tests.facade import fuzz_programs

LONG = os.environ.get("GRADC_FUZZ_LONG") == "1"
SEED = int(os.environ.get("GRADC_FUZZ_SEED", 20261129))
PROGRAMS = fuzz_programs.generate(80 * (10 if LONG else 1), SEED)


def function_of(program):
    """The program as ``f(*leaves) -> (v_n, ..., loss)``."""
    first = len(program.leaves)

    def f(*leaves):
        env = {"torch": torch, **{f"v{i}": t for i, t in enumerate(leaves)}}
        for line in program.lines:
            exec(line, env)  # noqa: S102 - generated lines, printed with the program on failure
        return tuple(env[f"v{i}"] for i in range(first, first + len(program.lines) - 1)) + (env["loss"],)
    return f


def _leaves(program):
    return [torch.tensor(leaf, requires_grad=True) for leaf in program.leaves]


def _tolerance(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("part", range(4))
def test_compiled_programs_agree_with_eager(part):
    checked = 0
    for program in PROGRAMS[part::4]:
        eager = _leaves(program)
        try:
            want = function_of(program)(*eager)
            want[-1].backward()
        except RuntimeError:  # a program torch refuses eagerly (test_fuzz_against_torch checks that refusal)
            continue
        compiled = _leaves(program)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a fallback warning fails the test
            got = torch.compile(function_of(program), fullgraph=True)(*compiled)
        got[-1].backward()
        tol = _tolerance(program.dtype)
        for n, (w, g) in enumerate(zip(want, got)):
            where = f"value {n}\n{program!r}"
            assert (tuple(g.shape), g.dtype) == (tuple(w.shape), w.dtype), where
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), err_msg=where, **tol)
        for n, (w, g) in enumerate(zip(eager, compiled)):
            where = f"leaf {n} grad\n{program!r}"
            if w.grad is None:
                assert g.grad is None or not g.grad.numpy().any(), where
                continue
            scale = tol["rtol"] * 5 * (1.0 + np.max(np.abs(w.grad.numpy()), initial=0.0))
            np.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=0, atol=scale, err_msg=where)
        checked += 1
    assert checked >= len(PROGRAMS[part::4]) // 2


def test_a_leaf_the_compiled_function_never_reads_keeps_no_grad():
    a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    torch.compile(lambda x, y: (y * 2).sum())(a, b).backward()
    assert a.grad is None and b.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("kind", ["max", "min"])
def test_compiled_max_along_a_dim_sends_the_gradient_to_the_first_extremum(kind, keepdim):
    """Ties (after relu) go to the first index, as eager and torch do, not shared."""
    def f(x):
        r = getattr(torch.relu(x), kind)(dim=-1, keepdim=keepdim)
        return r.values, r.indices, (r.values * 3.0).sum()
    x0 = np.array([[-1.0, -2.0, -0.5], [0.3, 0.3, -1.0]])
    eager, compiled = torch.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    want = f(eager)
    want[-1].backward()
    got = torch.compile(f, fullgraph=True)(compiled)
    got[-1].backward()
    for w, g in zip(want, got):
        assert g.tolist() == w.tolist() and g.dtype == w.dtype
    assert compiled.grad.tolist() == eager.grad.tolist()


def test_compiled_where_keeps_a_traced_condition_and_refuses_a_float_one():
    f = torch.compile(lambda x: torch.where(x > 0, x, x * 0.1).sum(), fullgraph=True)
    x = torch.tensor([-1.0, 2.0], requires_grad=True)
    f(x).backward()
    assert x.grad.tolist() == pytest.approx([0.1, 1.0])
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor, but got a tensor "
                                           "with dtype Float"):
        torch.where(torch.tensor([1.0, 0.0]), x, x)
