"""``torch.functional`` (``import torch.functional as F``, met in PyTorch's "Building Models" tutorial),
``torch.atleast_1d/2d/3d`` and ``torch.broadcast_shapes`` against real torch 2.13.0."""
import sys

import numpy as np
import pytest

import gradc.torch as facade

torch = pytest.importorskip("torch")


def test_module_path_and_its_names():
    import gradc.torch.functional as F
    assert F is facade.functional and sys.modules["gradc.torch.functional"] is F
    assert F.einsum is facade.einsum and F.meshgrid is facade.meshgrid and F.split is facade.split
    with pytest.raises(AttributeError, match="lacks torch.functional.stft"):
        F.stft  # noqa: B018 - the missing-name error is the point


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 4)])
def test_atleast_matches_torch(name, shape):
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    results = []
    for m in (torch, facade):
        t = m.tensor(x, requires_grad=True)
        y = getattr(m, name)(t)
        (y * 2.0).sum().backward()
        results.append((tuple(y.shape), y.grad_fn.name() if y.grad_fn is not None else None, y is t,
                        y.tolist(), t.grad.tolist(), len(getattr(m, name)(t, t)), type(getattr(m, name)([t])).__name__))
    assert results[0] == results[1]


@pytest.mark.parametrize("shapes", [((2, 1), (3,)), ((), (4, 1), (1, 5)), ((2,), (3,)), ((2, 3), (4, 2, 1)),
                                    ((3, 1), (2, 3, 4)), (5, (1,)), ((0,), (1,)), ((2, 0), (3, 1, 1))])
def test_broadcast_shapes_matches_torch(shapes):
    def run(m):
        try:
            return tuple(m.broadcast_shapes(*shapes))
        except RuntimeError as e:
            return str(e)
    assert run(facade) == run(torch)
