"""The backward engine's scoped collector policy and its cached order for repeated ``backward(retain_graph=True)``:
the collector's state is what it was after every backward (raising or not), a graph with a cached order is
still freed by reference counting (no cycle), and repeated backward passes give the same gradients as fresh
graphs (a Jacobian row by row, seeded random)."""
import gc
import weakref

import numpy as np
import pytest

import gradc.torch as torch


def _graph(seed):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal(4), requires_grad=True)
    w = torch.tensor(rng.standard_normal((3, 4)))
    y = torch.tanh(w @ x) * x[:3] + torch.exp(x[1:]).sum()
    return x, y


@pytest.mark.parametrize("enabled", [True, False])
def test_collector_state_restored(enabled):
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        x, y = _graph(0)
        y.sum().backward()
        assert gc.isenabled() is enabled

        def failing_hook(g):
            raise ValueError("hook failed")
        x2, y2 = _graph(1)
        x2.register_hook(failing_hook)
        with pytest.raises(ValueError, match="hook failed"):
            y2.sum().backward()
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("seed", range(5))
def test_jacobian_rows_with_retained_graph_match_fresh_graphs(seed):
    x, y = _graph(seed)
    rows = []
    for i in range(3):
        x.grad = None
        y.backward(torch.eye(3, dtype=torch.float64)[i], retain_graph=True)
        rows.append(x.grad.numpy().copy())
    for i in range(3):
        fresh_x, fresh_y = _graph(seed)
        fresh_y.backward(torch.eye(3, dtype=torch.float64)[i])
        np.testing.assert_array_equal(rows[i], fresh_x.grad.numpy())
    # and by central differences
    h = 1e-6
    base = x.detach().numpy()
    for j in range(4):
        e = np.zeros(4)
        e[j] = h
        hi, lo = (_value(seed, base + e), _value(seed, base - e))
        np.testing.assert_allclose(np.array(rows)[:, j], (hi - lo) / (2 * h), rtol=1e-6, atol=1e-8)


def _value(seed, xs):
    rng = np.random.default_rng(seed)
    rng.standard_normal(4)
    w = rng.standard_normal((3, 4))
    return np.tanh(w @ xs) * xs[:3] + np.exp(xs[1:]).sum()


def test_cached_order_holds_no_cycle():
    was = gc.isenabled()
    gc.disable()
    try:
        x, y = _graph(2)
        s = y.sum()
        s.backward(retain_graph=True)
        s.backward(retain_graph=True)  # the second walk takes the order cached on s's node
        assert "_order_below" in vars(s.grad_fn)
        node = weakref.ref(s.grad_fn)
        del y, s
        assert node() is None  # freed by reference counting, with the collector off
    finally:
        if was:
            gc.enable()
