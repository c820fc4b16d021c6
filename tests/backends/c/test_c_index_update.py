"""``index_update`` (``out = x.copy(); out[index] = v``) through the C target.

The op on its own (slices, ints, ``None``, index arrays with repeats and negative entries,
``v`` broadcast, 0-d traced indices) against NumPy's own assignment and the NumPy target;
an index read at run time that is out of range (a status from C: ``ValueError``); in-place
updates of dead work arrays; a loop writing ``out[i] = f(x[i])`` against the NumPy target and
central differences; binomial (Revolve) checkpointing, whose snapshots are stored by
``index_update`` and read by ``gather`` at a slot read inside the C loop.
"""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build
from gradc.errors import EmitError
from gradc.ops.shape_extra import index_update
from tests.transforms.test_checkpoint_binomial import euler  # the Euler loop the binomial tests reverse

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")

RNG = np.random.default_rng(7)
FULL = ("slice", None, None, None)


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def _close(got, want, rtol=1e-12, what="value"):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=1e-14, err_msg=what)


def _numpy_assign(x, v, index):
    out = np.array(x, copy=True)
    out[index] = v
    return out


# ---------------------------------------------------------------- the op on its own, constant index
STATIC = [  # (id, x shape, v shape, spec, the NumPy index it means)
    ("slices", (5, 4), (2, 4), [("slice", 1, None, 2), FULL], (slice(1, None, 2),)),
    ("reversed_slice_broadcast_row", (5, 4), (4,), [("slice", None, None, -2)], (slice(None, None, -2),)),
    ("negative_int", (3, 4), (4,), [("int", -1)], (-1,)),
    ("int_and_slice", (3, 4), (), [("slice", 1, 3, None), ("int", -2)], (slice(1, 3), -2)),
    ("new_axis", (3, 4), (4,), [("new",), ("int", 1)], (None, 1)),
    ("scalar_into_3d", (2, 3, 4), (), [("int", 1), ("slice", None, None, -1), ("slice", 1, 3, None)],
     (1, slice(None, None, -1), slice(1, 3))),
    ("all_of_a_0d", (), (), [], ()),
]


@pytest.mark.parametrize("xs, vs, spec, where", [c[1:] for c in STATIC], ids=[c[0] for c in STATIC])
def test_basic_index_against_numpy(xs, vs, spec, where):
    x, v = RNG.standard_normal(xs), RNG.standard_normal(vs)

    def f(x, v):
        return np.sum(np.sin(index_update(x * 1.5, v, [], spec)))

    c = gradc.compile(f, x, v, wrt=("x", "v"), target="c")
    n = gradc.compile(f, x, v, wrt=("x", "v"))
    _close(c.forward(x, v), np.sum(np.sin(_numpy_assign(x * 1.5, v, where))))
    value, grads = c.value_and_grad(x, v)
    n_value, n_grads = n.value_and_grad(x, v)
    _close(value, n_value)
    for k, (g, ng) in enumerate(zip(grads, n_grads)):
        _close(g, ng, what=f"gradient {k}")
    _close(grads[1], central_gradient(lambda z: f(x, z), v), rtol=1e-6, what="v_bar against differences")


ARRAYS = [  # (id, x shape, v shape, spec, constant index arrays)
    ("repeats_last_write_wins", (4, 3), (5, 3), [("array", 0)], [np.array([2, 0, 2, -1, 0])]),
    ("repeats_broadcast_value", (4, 3), (3,), [("array", 0), FULL], [np.array([1, 1, 3])]),
    ("two_arrays_and_slice", (4, 3, 2), (2, 2, 2), [("array", 0), ("array", 1), FULL],
     [np.array([[0], [-1]]), np.array([2, 0])]),
    ("array_after_slice", (3, 5), (3, 2), [("slice", None, None, -1), ("array", 0)], [np.array([4, -5])]),
    ("apart_arrays_go_first", (3, 4, 5), (2, 4), [("array", 0), FULL, ("array", 1)],
     [np.array([0, 2]), np.array([-1, 3])]),
]


@pytest.mark.parametrize("xs, vs, spec, arrays", [c[1:] for c in ARRAYS], ids=[c[0] for c in ARRAYS])
def test_constant_index_arrays_against_numpy(xs, vs, spec, arrays):
    x, v = RNG.standard_normal(xs), RNG.standard_normal(vs)
    where = tuple(arrays[item[1]] if item[0] == "array" else slice(*item[1:]) for item in spec)

    def f(x, v):
        return index_update(x, v, arrays, spec) * 2.0

    c = gradc.compile(f, x, v, wrt=("x", "v"), mode="vjp", target="c")
    n = gradc.compile(f, x, v, wrt=("x", "v"), mode="vjp")
    _close(c.forward(x, v), _numpy_assign(x, v, where) * 2.0)
    ct = RNG.standard_normal(xs)
    _same_vjp(c.vjp(x, v, ct), n.vjp(x, v, ct))


def _same_vjp(got, want):
    _close(got[0], want[0])
    for k, (g, w) in enumerate(zip(got[1], want[1])):
        _close(g, w, what=f"gradient {k}")


def traced_rows(x, v, i):
    return index_update(x, v, [i], [("array", 0), FULL])


def traced_scalar_index(x, v, i):
    return index_update(x, v, [i], [FULL, ("array", 0)])


@pytest.mark.parametrize("index", [np.array([3, 0, 3, -4, -1]), np.array([[1], [-2]]), np.array([2, 2, 2])])
def test_traced_index_arrays_with_repeats_and_negatives(index):
    x = RNG.standard_normal((4, 3))
    v = RNG.standard_normal(index.shape + (3,))
    c = gradc.compile(traced_rows, x, v, index, wrt=("x", "v"), mode="vjp", target="c")
    n = gradc.compile(traced_rows, x, v, index, wrt=("x", "v"), mode="vjp")
    _close(c.forward(x, v, index), _numpy_assign(x, v, index))
    ct = RNG.standard_normal(x.shape)
    _same_vjp(c.vjp(x, v, index, ct), n.vjp(x, v, index, ct))
    other = index[::-1].copy()  # compiled once: the same code for other index values
    _close(c.forward(x, v, other), _numpy_assign(x, v, other))


@pytest.mark.parametrize("i", [0, 2, -1, -4])
def test_a_traced_0d_index_and_its_gradient(i):
    x, v = RNG.standard_normal((3, 4)), RNG.standard_normal(3)

    def loss(x, v, i):
        return np.sum(np.cos(traced_scalar_index(x, v, i)) * x)

    c = gradc.compile(loss, x, v, np.array(0), wrt=("x", "v"), target="c")
    n = gradc.compile(loss, x, v, np.array(0), wrt=("x", "v"))
    _close(c.forward(x, v, np.array(i)), np.sum(np.cos(_numpy_assign(x, v, (slice(None), i))) * x))
    value, grads = c.value_and_grad(x, v, np.array(i))
    n_value, n_grads = n.value_and_grad(x, v, np.array(i))
    _close(value, n_value)
    for k, (g, ng) in enumerate(zip(grads, n_grads)):
        _close(g, ng, what=f"gradient {k}")
    _close(grads[0], central_gradient(lambda z: loss(z, v, i), x), rtol=1e-6, what="x_bar against differences")


@pytest.mark.parametrize("bad", [4, -5, 100])
def test_an_index_out_of_range_returns_a_status_and_writes_nothing_out_of_bounds(bad):
    x, v = np.zeros((4, 3)), np.ones(3)
    with pytest.raises(IndexError):
        _numpy_assign(x, v, (bad,))  # what NumPy does
    c = gradc.compile(traced_rows, x, v[None], np.array([0]), wrt=("x", "v"), mode="vjp", target="c")
    assert "out of range */" in c.c_source and "was out of range" in c.c_source  # the check and its header line
    with pytest.raises(ValueError, match="the index of index_update .* was out of range"):
        c.forward(x, v[None], np.array([bad]))
    with pytest.raises(ValueError, match="out of range"):
        c.vjp(x, v[None], np.array([bad]), x)
    _close(c.forward(x, v[None], np.array([1])), _numpy_assign(x, v, (1,)))  # and it runs on after a refusal


def test_a_constant_index_out_of_range_is_refused_when_emitting():
    with pytest.raises(EmitError, match="out of range for axis 0 of length 4"):
        gradc.compile(lambda x: np.sum(index_update(x, 1.0, [np.array([0, 4])], [("array", 0)])), np.zeros(4),
                      target="c")


def test_a_dead_work_array_is_updated_in_place():
    def f(x, v):
        y = index_update(np.exp(x), v, [], [("slice", 1, None, None)])
        return y * x

    x, v = RNG.standard_normal(5), RNG.standard_normal(4)
    c = gradc.compile(f, x, v, wrt=("x", "v"), mode="vjp", target="c")
    forward = c.c_source[c.c_source.index("void gradc_fn_f("):].split("size_t gradc_fn_f_work_size")[0]
    assert "index_update" in forward and "a copy of" not in forward  # written where exp(x) was: no copy
    _close(c.forward(x, v), np.concatenate([np.exp(x[:1]), v]) * x)
    ct = RNG.standard_normal(5)
    _same_vjp(c.vjp(x, v, ct), gradc.compile(f, x, v, wrt=("x", "v"), mode="vjp").vjp(x, v, ct))


def test_a_value_read_after_the_update_is_copied():
    def f(x, v):
        y = np.exp(x)
        z = index_update(y, v, [], [("int", 0)])
        return z * y  # y is read after the update: it must keep its old values

    x = RNG.standard_normal(3)
    c = gradc.compile(f, x, 0.5, wrt="x", mode="vjp", target="c")
    assert "a copy of t" in c.c_source
    _close(c.forward(x, 0.5), _numpy_assign(np.exp(x), 0.5, (0,)) * np.exp(x))


# ---------------------------------------------------------------- loops writing out[i]
def write_each(x):
    out = np.zeros(10)
    for i in range(10):
        out[i] = np.sin(x[i]) * x[i]
    return np.sum(out * out)


def write_each_negative(x):
    out = np.ones(10)
    for i in range(10):
        out[i - 10] = np.cos(x[-1 - i]) + out[i - 1]  # negative traced indices wrap once, as in NumPy
        out[i] += x[i] ** 2
    return np.sum(out * x)


@pytest.mark.parametrize("f", [write_each, write_each_negative])
def test_a_loop_writing_out_i(f):
    x = np.linspace(-1.2, 0.9, 10)
    c = gradc.compile(f, x, target="c")
    n = gradc.compile(f, x)
    assert "for (long j0 = 0; j0 < " in c.c_source  # the loop stays a loop in C
    value, grad = c.value_and_grad(x)
    n_value, n_grad = n.value_and_grad(x)
    _close(value, f(x))
    _close(value, n_value)
    _close(grad, n_grad, what="gradient")
    _close(grad, central_gradient(f, x), rtol=1e-6, what="gradient against differences")


# ---------------------------------------------------------------- binomial checkpointing
@pytest.mark.parametrize("steps", [1, 2, 3, 10, 57])
def test_binomial_checkpointing_on_the_c_target(steps):
    x0, k = np.linspace(-1.0, 1.0, 4), 0.4
    simulate = euler(steps)
    policy = gradc.binomial(snapshots=3)
    c = gradc.compile(simulate, x0, k, wrt=("x0", "k"), target="c", checkpoint=policy)
    n = gradc.compile(simulate, x0, k, wrt=("x0", "k"), checkpoint=policy)
    value, grads = c.value_and_grad(x0, k)
    n_value, n_grads = n.value_and_grad(x0, k)
    _close(value, n_value)
    _close(grads[0], n_grads[0], what="x0_bar")
    _close(grads[1], n_grads[1], what="k_bar")
    _close(grads[0], central_gradient(lambda z: simulate(z, k), x0), rtol=1e-6, what="x0_bar against differences")
    if steps >= 2:  # (0 or 1 trips unroll) the schedule runs in C: snapshots stored and read at a traced slot
        assert "index_update" in c.c_source and "gather" in c.c_source
