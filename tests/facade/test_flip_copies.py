"""``flip`` copies, as torch's does: writing into the flipped tensor leaves the original alone, and it is
contiguous (so ``reshape`` of it is a ``ViewBackward0``). NumPy's reversed view wrote into the original."""
import numpy as np
import pytest

import gradc.torch as facade

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1), (-1,)])
@pytest.mark.parametrize("write", ["item", "add_", "mul_", "copy_"])
def test_writing_into_a_flipped_tensor_leaves_the_original(dims, write):
    results = []
    for module in (torch, facade):
        x = module.arange(6.0).reshape(2, 3)
        y = x.flip(dims)
        if write == "item":
            y[0, 0] = 9.0
        elif write == "copy_":
            y.copy_(module.ones(2, 3))
        else:
            getattr(y, write)(2.0)
        results.append((x.numpy().copy(), y.numpy().copy(), y.is_contiguous()))
    (tx, ty, tc), (fx, fy, fc) = results
    np.testing.assert_array_equal(fx, tx)
    np.testing.assert_array_equal(fy, ty)
    assert fc == tc


def test_reshape_of_a_flip_is_a_view_as_in_torch():
    names = []
    for module in (torch, facade):
        x = module.arange(6.0, requires_grad=True)
        names.append((x * 1.0).reshape(2, 3).flip(1).reshape(-1).grad_fn.name())
    assert names[1] == names[0] == "ViewBackward0"
