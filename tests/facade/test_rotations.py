"""torch.rot90 / fliplr / flipud on the facade against real torch 2.13.0: seeded random shapes, turns and planes
(values, node names, contiguity, gradients of a random cotangent), torch's errors, and integer division by zero."""
import numpy as np
import pytest

import gradc.torch as facade

torch = pytest.importorskip("torch")


def _both(f):
    out = []
    for m in (torch, facade):
        try:
            out.append(f(m))
        except Exception as e:  # compared: the same type and words
            out.append((type(e).__name__, str(e)))
    return out


def _rotate(m, x, k, a, b, ct, as_method):
    t = m.tensor(x, requires_grad=True)
    y = t.rot90(k, (a, b)) if as_method else m.rot90(t, k, [a, b])
    c = m.tensor(np.rot90(ct, k, (a, b)).copy())
    (y * c).sum().backward()
    return y.detach().numpy().copy(), y.grad_fn.name(), y.is_contiguous(), t.grad.numpy().copy()


@pytest.mark.parametrize("seed", range(8))
def test_rot90_matches_torch_on_random_planes(seed):
    rng = np.random.default_rng(seed)
    for _ in range(10):
        shape = tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(2, 5))))
        x = rng.standard_normal(shape)
        ct = rng.standard_normal(shape)
        k = int(rng.integers(-6, 7))
        a, b = (int(d) for d in rng.choice(range(-len(shape), len(shape)), 2, replace=False))
        if a % len(shape) == b % len(shape):  # the same axis twice: test_rot90_errors_and_edges_match_torch
            continue
        as_method = bool(rng.integers(0, 2))
        results = _both(lambda m, x=x, k=k, a=a, b=b, ct=ct, as_method=as_method: _rotate(m, x, k, a, b, ct, as_method))
        assert all(len(r) == 4 for r in results), results
        (tv, tn, tc, tg), (fv, fn, fc, fg) = results
        assert np.array_equal(fv, tv) and np.array_equal(fv, np.rot90(x, k, (a, b)))
        assert (fn, fc) == (tn, tc)
        assert np.array_equal(fg, tg)


def test_rotation_is_a_copy():
    x = facade.arange(6.0).reshape(2, 3)
    for k in range(4):
        facade.rot90(x, k).add_(1.0)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


@pytest.mark.parametrize("args", [((3,), 1, [0, 1]), ((2, 3), 1, [0]), ((2, 3), 1, [0, 0]), ((2, 3), 1, [0, 2]),
                                  ((2, 3), 1, [1, -3]), ((2, 3), 1, [0, 1, 1]), ((2, 3), 2, [-1, 0])])
def test_rot90_errors_and_edges_match_torch(args):
    shape, k, dims = args
    t, f = _both(lambda m: m.rot90(m.ones(shape), k, dims).tolist())
    assert t == f


@pytest.mark.parametrize("name", ["fliplr", "flipud"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_flips_match_torch(name, shape):
    x = np.random.default_rng(len(shape)).standard_normal(shape)

    def run(m):
        t = m.tensor(x, requires_grad=True)
        y = getattr(m, name)(t)
        (y * m.arange(y.numel(), dtype=m.float64).reshape(y.shape)).sum().backward()
        return y.tolist(), y.grad_fn.name(), t.grad.tolist(), getattr(t, name)().tolist()
    t, f = _both(run)
    assert t == f


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
@pytest.mark.parametrize("op", ["//", "%", "fmod", "floor_divide"])
def test_integer_division_by_zero_is_refused_as_torch_does(dtype, op):
    def run(m):
        a, b = m.tensor([3, 4], dtype=getattr(m, dtype)), m.tensor([1, 0], dtype=getattr(m, dtype))
        r = {"//": lambda: a // b, "%": lambda: a % b, "fmod": lambda: m.fmod(a, b),
             "floor_divide": lambda: m.floor_divide(a, b)}[op]()
        return r.tolist()
    t, f = _both(run)
    assert t == f == ("RuntimeError", "ZeroDivisionError")


def test_floor_division_follows_torchs_promotion():
    assert (7 // facade.tensor([2, 3], dtype=facade.int8)).tolist() == [3, 2]
    assert (facade.tensor([200], dtype=facade.uint8) // 300).tolist() == [4]  # 300 wraps to 44 first
    assert (facade.tensor([5, 6]) // facade.tensor([2.0, 4.0])).dtype is facade.float32
