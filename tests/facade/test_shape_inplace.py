"""In-place shape changes (``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_``, ``swapdims_``, ``swapaxes_``) and
``squeeze`` of several dims, against real torch 2.13.0: shapes, node names, version counters, gradients, the
leaf refusal; a view or a tensor with views is refused with a clear error (not silently wrong)."""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch as gt

real = pytest.importorskip("torch")

CHANGES = {"squeeze_": ((), (0,), ((0,),)), "unsqueeze_": ((2,), (-1,), (0,)), "t_": ((),),
           "transpose_": ((1, 0),), "swapdims_": ((0, 1),), "swapaxes_": ((1, 0),)}
CASES = [(name, args) for name, options in CHANGES.items() for args in options]


@pytest.mark.parametrize("name,args", CASES)
def test_in_place_shape_change_matches_torch(name, args):
    seen = []
    for T in (gt, real):
        x = T.tensor(np.arange(3.0).reshape(1, 3) + 1.0, dtype=T.float64, requires_grad=True)
        z = x * 2.0
        version = z._version
        getattr(z, name)(*args)
        (z * T.tensor(np.arange(z.numel(), dtype=np.float64).reshape(tuple(z.shape)))).sum().backward()
        seen.append((z.grad_fn.name(), tuple(z.shape), z._version - version, x.grad.numpy().tolist(),
                     z.detach().numpy().tolist()))
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            getattr(x, name)(*args)
        y = T.zeros(1, 3)
        getattr(y, name)(*args)  # no grad: metadata only
        seen.append(tuple(y.shape))
    assert seen[:2] == seen[2:]


@pytest.mark.parametrize("dims", [(0, 2), (0, 1), [0], (), (-1,)])
def test_squeeze_of_several_dims_matches_torch(dims):
    got, want = ((T.zeros(1, 3, 1, requires_grad=True) * 1).squeeze(dims) for T in (gt, real))
    assert tuple(got.shape) == tuple(want.shape) and got.grad_fn.name() == want.grad_fn.name()
    for bad, error in (((0, 5), IndexError), ((0, 0), RuntimeError)):
        messages = []
        for T in (gt, real):
            with pytest.raises(error) as info:
                T.zeros(1, 3, 1).squeeze(bad)
            messages.append(str(info.value))
        assert messages[0] == messages[1]


def test_views_refuse_in_place_shape_changes():
    base = gt.zeros(1, 3)
    row = base[0]
    with pytest.raises(RuntimeError, match="on a view or on a tensor that has views"):
        base.squeeze_(0)
    with pytest.raises(RuntimeError, match="use the out-of-place x.unsqueeze"):
        row.unsqueeze_(0)
    del row
    assert tuple(base.squeeze_(0).shape) == (3,)  # the view is gone: allowed again


def test_t_refuses_more_than_two_dims_as_torch():
    messages = []
    for T in (gt, real):
        x = T.zeros(1, 3, 2)
        for call, arg in ((type(x).t, x), (type(x).t_, x), (T.t, x)):
            with pytest.raises(RuntimeError) as info:
                call(arg)
            messages.append(str(info.value))
        assert tuple(T.zeros(3).t().shape) == (3,) and tuple(T.zeros(()).t().shape) == ()
    assert messages[:3] == messages[3:]
