"""``grad_fn`` graphs against torch 2.13.0's (``spec/gen_grad_fn.py``, ``spec/grad_fn.expected.txt``).

Each case evaluates one expression (elementwise ops, scalars, matmul of every rank, reductions,
views, indexing, joins, losses, layers) and records the graph below its result: node class
names, ``next_functions`` in torch's slot order with output numbers, and which leaf each
``AccumulateGrad.variable`` is. The facade must build the same graph exactly. A case whose
expression uses a name the facade does not have yet is skipped, naming it.
"""
from __future__ import annotations

import pytest

import gradc.torch
from tests.facade.recorded import RUNNER, recorded

GEN, EXPECTED = recorded("grad_fn")


def test_every_case_is_recorded():
    assert sorted(EXPECTED) == sorted(fn.__name__ for fn in GEN.CASES)


@pytest.mark.parametrize("fn", GEN.CASES, ids=lambda fn: fn.__name__)
def test_graph_matches_torch(fn):
    expected = EXPECTED[fn.__name__]
    assert "CASE RAISED" not in repr(expected), expected
    actual = RUNNER.run_case(fn, gradc.torch)
    if isinstance(actual, str) and (actual.startswith("CASE RAISED AttributeError") and "has no attribute" in actual
                                    or actual.startswith("CASE RAISED FacadeMissingName")):
        pytest.skip("the facade lacks a name this case uses: " + actual)
    assert actual == expected


def test_linear_graph_reads_like_torch():
    """The tutorial's walk: ``loss.grad_fn.next_functions`` of a Linear layer is AddmmBackward0's three slots."""
    torch = gradc.torch
    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 2)
    out = layer(torch.randn(3, 4))
    bias_slot, input_slot, weight_slot = out.grad_fn.next_functions
    assert type(out.grad_fn).__name__ == "AddmmBackward0"
    assert bias_slot[0].variable is layer.bias and input_slot == (None, 0)
    assert type(weight_slot[0]).__name__ == "TBackward0"
    assert weight_slot[0].next_functions[0][0].variable is layer.weight


def test_chained_views_keep_values_and_gradients():
    """``x[0, :3]`` as two views gives the same values and gradient as NumPy's indexing."""
    import numpy as np
    torch = gradc.torch
    x = torch.randn(3, 5, requires_grad=True)
    y = x[1, 1::2]
    assert np.array_equal(y.detach().numpy(), x.detach().numpy()[1, 1::2])
    y.sum().backward()
    want = np.zeros((3, 5), np.float32)
    want[1, 1::2] = 1
    assert np.array_equal(x.grad.numpy(), want)
