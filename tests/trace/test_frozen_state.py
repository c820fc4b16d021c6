"""State frozen at trace time is never silent (issue 11, must-have 4).

The rule: a traced function's arguments are the only values that vary between calls;
globals, closure cells, attributes of ``self`` or of a module and random draws are read
once, while tracing. Each such read is a GradcWarning at the user's line; a changed
global is a StaleStateError at the next call (or a re-trace under
``static_globals=False``); an in-place update of an input is a TraceError.
"""
import functools
import inspect
import random
import re
import types
import warnings

import numpy as np
import pytest

import gradc
from gradc.errors import GradcError, GradcWarning, StaleStateError, TraceError

HERE = "test_frozen_state.py"


def line_of(fn, marker="# MARK"):
    """The line of this file holding ``marker`` inside ``fn``'s source."""
    fn = getattr(fn, "__func__", fn)
    lines, start = inspect.getsourcelines(fn)
    for k, text in enumerate(lines):
        if marker in text:
            return start + k
    raise AssertionError(marker)


def fd_grad(f, x, h=1e-6):
    """Central finite differences of scalar ``f`` at ``x`` (float64 array)."""
    x = np.array(x, dtype=np.float64)
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.reshape(-1)[k] = h
        g.reshape(-1)[k] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def frozen_warnings(run):
    """The GradcWarnings ``run()`` emits (each must be one line naming this file)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    found = [w for w in caught if issubclass(w.category, GradcWarning)]
    for w in found:
        assert "\n" not in str(w.message), str(w.message)
    return found


def assert_warns_at(run, fn, *words, marker="# MARK"):
    """``run()`` warns once for ``marker``'s line of ``fn``, naming ``words``, with the line in the text."""
    line = line_of(fn, marker)
    found = frozen_warnings(run)
    at_line = [w for w in found if w.lineno == line]
    assert at_line, f"no GradcWarning at line {line}: {[str(w.message) for w in found]}"
    w = at_line[0]
    text = str(w.message)
    assert w.filename.endswith(HERE), w.filename
    assert f"{HERE}:{line}" in text, text
    for word in words:
        assert word in text, f"{word!r} not in {text!r}"
    return text


def assert_error_at(err, cls, line, *words):
    assert isinstance(err, cls), type(err)
    text = str(err)
    assert "\n" not in text, text
    assert f"{HERE}:{line}" in text, text
    assert err.hint, text
    for word in words:
        assert word in text, f"{word!r} not in {text!r}"


# ---------------------------------------------------------------- globals read at trace time
W = np.array([1.0, 2.0, 3.0])
W0D = np.array(2.5)
SCALE = 2.0
CONFIG = types.ModuleType("config")
CONFIG.W = np.array([0.5, -1.0, 2.0])
RNG = np.random.default_rng(0)
count = 0
HISTORY = []


def reads_global(x):
    return np.sum(W * x)  # MARK


def reads_global_matmul(x):
    return np.sum(np.dot(x, W) * x)  # MARK


def reads_global_0d(x):
    return np.sum(x * W0D)  # MARK


def reads_module_attribute(x):
    return np.sum(CONFIG.W * x)  # MARK


def _helper(x):
    return W @ x  # MARK


def calls_helper(x):
    return np.sum(_helper(x) * x)


def reads_in_comprehension(x):
    return sum([np.sum(W * x * k) for k in (1.0, 2.0)])  # MARK


def make_closure():
    V = np.array([3.0, -1.0, 0.5])

    def reads_closure(x):
        return np.sum(V * x)  # MARK
    return reads_closure


reads_closure = make_closure()


class Model:
    def __init__(self):
        self.W = np.array([1.0, -2.0, 0.5])
        self.calls = 0

    def loss(self, x):
        return np.sum(self.W * x * x)  # MARK

    def counting_loss(self, x):
        self.calls += 1  # MARK
        return np.sum(x * x)

    def __call__(self, x):
        return np.sum(self.W * x)  # MARK


GLOBAL_READS = {
    "module-global": (reads_global, "W"),
    "global-in-np.dot": (reads_global_matmul, "W"),
    "global-0d-array": (reads_global_0d, "W0D"),
    "module-attribute": (reads_module_attribute, "CONFIG.W"),
    "helper-function": (calls_helper, "W"),
    "comprehension": (reads_in_comprehension, "W"),
    "closure-cell": (reads_closure, "V"),
    "method-self-attribute": (Model().loss, "self.W"),
    "callable-object": (Model(), "self.W"),
}


def _site(fn):
    """The function whose source holds the marked line."""
    if fn is calls_helper:
        return _helper
    if isinstance(fn, Model):
        return Model.__call__
    return fn


@pytest.mark.parametrize("name", sorted(GLOBAL_READS))
@pytest.mark.parametrize("entry", ["grad", "value_and_grad", "compile", "trace"])
def test_a_global_array_read_warns_at_the_line(name, entry):
    fn, label = GLOBAL_READS[name]
    x = np.array([0.3, -0.7, 1.1])
    run = {"grad": lambda: gradc.grad(fn)(x), "value_and_grad": lambda: gradc.value_and_grad(fn)(x),
           "compile": lambda: gradc.compile(fn, x), "trace": lambda: gradc.trace(fn, x)}[entry]
    text = assert_warns_at(run, _site(fn), label)
    assert "argument" in text and "trace" in text, text


@pytest.mark.parametrize("name", sorted(GLOBAL_READS))
def test_the_frozen_value_gives_the_right_gradient_until_it_changes(name):
    fn, _ = GLOBAL_READS[name]
    x = np.array([0.3, -0.7, 1.1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GradcWarning)
        got = gradc.grad(fn)(x)
    np.testing.assert_allclose(got, fd_grad(fn, x), rtol=1e-6, atol=1e-8)


def no_state(x, w):
    eps = 1e-3
    return np.sum(np.log(np.exp(x * w) + eps))


def reads_only_numpy(x):
    return np.sum(np.sin(x) * np.pi) + np.e


def test_no_warning_without_captured_state():
    x, w = np.array([0.1, 0.2]), np.array([1.0, 2.0])
    assert frozen_warnings(lambda: gradc.grad(no_state)(x, w)) == []
    assert frozen_warnings(lambda: gradc.grad(reads_only_numpy)(x)) == []
    assert frozen_warnings(lambda: gradc.grad(lambda a: np.sum(a * 2.0))(x)) == []


def test_the_decorator_fast_path_has_no_guard_without_captured_state():
    g = gradc.grad(no_state)
    x, w = np.array([0.1, 0.2]), np.array([1.0, 2.0])
    g(x, w)
    (entry,) = g.cache.values()
    assert getattr(entry, "__name__", "") == "no_state_grad", entry  # the emitted function itself


# ---------------------------------------------------------------- a changed global: loud, or re-traced
def test_changing_a_global_in_place_is_an_error_at_the_next_call(monkeypatch):
    monkeypatch.setitem(globals(), "W", np.array([1.0, 2.0, 3.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GradcWarning)
        g = gradc.grad(reads_global)
        x = np.ones(3)
        np.testing.assert_allclose(g(x), [1.0, 2.0, 3.0])
        W[0] = 10.0
        with pytest.raises(StaleStateError) as info:
            g(x)  # CALL
    assert_error_at(info.value, StaleStateError, line_of(test_changing_a_global_in_place_is_an_error_at_the_next_call,
                                                         "# CALL"), "W", "static_globals=False")
    assert f"{HERE}:{line_of(reads_global)}" in str(info.value)


@pytest.mark.parametrize("change", ["rebind", "in-place", "reshape", "dtype"])
@pytest.mark.parametrize("transform", ["grad", "value_and_grad"])
def test_a_changed_global_is_detected(monkeypatch, change, transform):
    monkeypatch.setitem(globals(), "W", np.array([1.0, 2.0, 3.0]))
    x = np.array([0.5, 1.5, -2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GradcWarning)
        g = getattr(gradc, transform)(reads_global)
        g(x)
        if change == "rebind":
            globals()["W"] = W * 2.0
        elif change == "in-place":
            W[...] = W * 2.0
        elif change == "reshape":
            globals()["W"] = np.ones((1, 3))
        else:
            globals()["W"] = W.astype(np.float32)
        with pytest.raises(StaleStateError, match="W"):
            g(x)


@pytest.mark.parametrize("change", ["rebind", "in-place"])
@pytest.mark.parametrize("transform", ["grad", "value_and_grad"])
def test_static_globals_false_retraces_with_the_new_value(monkeypatch, change, transform):
    monkeypatch.setitem(globals(), "W", np.array([1.0, 2.0, 3.0]))
    x = np.array([0.5, 1.5, -2.0])
    g = getattr(gradc, transform)(reads_global, static_globals=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GradcWarning)  # opted in: no "frozen" warning
        first = g(x)
    if change == "rebind":
        globals()["W"] = np.array([-1.0, 4.0, 0.25])
    else:
        W[:] = [-1.0, 4.0, 0.25]
    second = g(x)
    if transform == "value_and_grad":
        (v1, first), (v2, second) = first, second
        np.testing.assert_allclose(v2, reads_global(x), rtol=1e-12)
        np.testing.assert_allclose(v1, np.sum(np.array([1.0, 2.0, 3.0]) * x), rtol=1e-12)
    np.testing.assert_allclose(first, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(second, fd_grad(reads_global, x), rtol=1e-6)


def test_static_globals_false_sees_a_changed_closure_and_scalar(monkeypatch):
    monkeypatch.setitem(globals(), "SCALE", 2.0)
    x = np.array([0.2, 0.4])

    def scaled(a):
        return np.sum(a * a) * SCALE

    g = gradc.grad(scaled, static_globals=False)
    np.testing.assert_allclose(g(x), 2.0 * 2 * x)
    globals()["SCALE"] = 5.0
    np.testing.assert_allclose(g(x), fd_grad(scaled, x), rtol=1e-6)


def test_a_rebound_global_scalar_is_an_error_by_default(monkeypatch):
    monkeypatch.setitem(globals(), "SCALE", 2.0)

    def scaled(a):
        return np.sum(a * a) * SCALE

    g = gradc.grad(scaled)
    g(np.ones(2))
    globals()["SCALE"] = 3.0
    with pytest.raises(StaleStateError, match="SCALE"):
        g(np.ones(2))


def test_a_changed_closure_cell_and_self_attribute_are_detected():
    x = np.array([0.5, -0.5, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GradcWarning)
        model = Model()
        g = gradc.grad(model.loss)
        np.testing.assert_allclose(g(x), fd_grad(model.loss, x), rtol=1e-6)
        model.W = model.W + 1.0
        with pytest.raises(StaleStateError, match="self.W"):
            g(x)
        g2 = gradc.grad(model.loss, static_globals=False)
        g2(x)
        model.W *= -3.0
        np.testing.assert_allclose(g2(x), fd_grad(model.loss, x), rtol=1e-6)


def test_a_large_global_changed_everywhere_is_detected(monkeypatch):
    big = np.linspace(0.0, 1.0, 200_000)
    monkeypatch.setitem(globals(), "W", big)

    def big_loss(x):
        return np.sum(W * x)

    x = np.ones(big.size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GradcWarning)
        g = gradc.grad(big_loss)
        g(x)
        W[...] *= 1.5  # a training step updates every entry
        with pytest.raises(StaleStateError):
            g(x)


def test_a_partial_bound_array_changed_in_place_is_detected():
    def weighted(w, x):
        return np.sum(w * x * x)

    w = np.array([1.0, 2.0])
    g = gradc.grad(functools.partial(weighted, w))
    np.testing.assert_allclose(g(np.ones(2)), [2.0, 4.0])
    w[1] = 7.0
    with pytest.raises(StaleStateError):
        g(np.ones(2))


# ---------------------------------------------------------------- random draws become constants
def random_rand(x):
    return np.sum(x * np.random.rand(3))  # MARK


def random_normal(x):
    return np.sum(x + np.random.normal(size=3))  # MARK


def random_generator(x):
    return np.sum(x * RNG.normal(size=3))  # MARK


def random_default_rng(x):
    return np.sum(x * np.random.default_rng(0).uniform(size=3))  # MARK


randn = np.random.randn


def random_alias(x):
    return np.sum(x * randn(3))  # MARK


def random_stdlib(x):
    return np.sum(x * random.random())  # MARK


def random_seed(x):
    np.random.seed(0)  # MARK
    return np.sum(x * x)


RANDOM_CALLS = {
    "np.random.rand": (random_rand, "np.random.rand"),
    "np.random.normal": (random_normal, "np.random.normal"),
    "generator-method": (random_generator, "RNG.normal"),
    "default_rng": (random_default_rng, "np.random.default_rng"),
    "imported-alias": (random_alias, "randn"),
    "stdlib-random": (random_stdlib, "random.random"),
    "seed": (random_seed, "np.random.seed"),
}


@pytest.mark.parametrize("name", sorted(RANDOM_CALLS))
@pytest.mark.parametrize("entry", ["grad", "compile"])
def test_a_random_call_warns_at_the_line(name, entry):
    fn, label = RANDOM_CALLS[name]
    x = np.array([0.1, 0.2, 0.3])
    run = (lambda: gradc.grad(fn)(x)) if entry == "grad" else (lambda: gradc.compile(fn, x))
    text = assert_warns_at(run, fn, label, "random")
    assert "constant" in text and "argument" in text, text


# ---------------------------------------------------------------- Python-side state the function changes
def increments_global(x):
    global count
    count += 1  # MARK
    return np.sum(x * x)


def appends_to_global(x):
    HISTORY.append(1)  # MARK
    return np.sum(x * x)


def make_nonlocal_counter():
    calls = 0

    def counts_nonlocal(x):
        nonlocal calls
        calls += 1  # MARK
        return np.sum(x * x)
    return counts_nonlocal


STATE_CHANGES = {
    "global-counter": (increments_global, increments_global, "count"),
    "global-list-append": (appends_to_global, appends_to_global, "HISTORY"),
    "nonlocal-counter": (make_nonlocal_counter(), None, "calls"),
    "self-attribute": (Model().counting_loss, Model.counting_loss, "self.calls"),
}


@pytest.mark.parametrize("name", sorted(STATE_CHANGES))
def test_state_the_function_changes_warns_at_the_line(name):
    fn, site, label = STATE_CHANGES[name]
    x = np.array([1.0, 2.0])
    text = assert_warns_at(lambda: gradc.grad(fn)(x), site or fn, label)
    assert "once" in text, text


def test_a_counter_runs_once_per_trace_and_the_gradient_is_right(monkeypatch):
    monkeypatch.setitem(globals(), "count", 0)
    g = gradc.grad(increments_global)
    x = np.array([1.0, -2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GradcWarning)
        for _ in range(3):
            np.testing.assert_allclose(g(x), fd_grad(increments_global, x), rtol=1e-6)
    assert count == 1 + 3 * 2 * x.size  # once while tracing, then only by the finite differences above


# ---------------------------------------------------------------- in-place updates of inputs
def iadd_input(x):
    x += 1.0  # MARK
    return np.sum(x * x)


def isub_input(x, y):
    x -= y  # MARK
    return np.sum(x * x)


def imul_input(x):
    x *= 2.0  # MARK
    return np.sum(x)


def idiv_input(x):
    x /= 2.0  # MARK
    return np.sum(x)


def ipow_input(x):
    x **= 2  # MARK
    return np.sum(x)


def imatmul_input(m, x):
    m @= m  # MARK
    return np.sum(m @ x)


def ellipsis_assign(x):
    x[...] = 0.0  # MARK
    return np.sum(x)


def item_assign(x):
    x[0] = 1.0  # MARK
    return np.sum(x)


def slice_iadd(x):
    x[:2] += 1.0  # MARK
    return np.sum(x)


def ufunc_out_input(x):
    np.add(x, 1.0, out=x)  # MARK
    return np.sum(x * x)


def ufunc_out_tuple(x):
    np.multiply(x, 2.0, out=(x,))  # MARK
    return np.sum(x)


def view_iadd(x):
    v = x[:2]
    v += 1.0  # MARK
    return np.sum(x)


def reshape_view_iadd(x):
    r = x.reshape(3, 1)
    r *= 3.0  # MARK
    return np.sum(x)


def transpose_view_iadd(m, x):
    t = m.T
    t += 1.0  # MARK
    return np.sum(m @ x)


IN_PLACE = {
    "+=": (iadd_input, 1),
    "-=": (isub_input, 2),
    "*=": (imul_input, 1),
    "/=": (idiv_input, 1),
    "**=": (ipow_input, 1),
    "@=": (imatmul_input, "m"),
    "x[...]=": (ellipsis_assign, 1),
    "x[0]=": (item_assign, 1),
    "x[:2]+=": (slice_iadd, 1),
    "np.add(out=x)": (ufunc_out_input, 1),
    "np.multiply(out=(x,))": (ufunc_out_tuple, 1),
    "view+=": (view_iadd, 1),
    "reshape-view*=": (reshape_view_iadd, 1),
    "transpose-view+=": (transpose_view_iadd, "m"),
}


def _in_place_args(fn, spec):
    if spec == "m":
        return (np.eye(3) + np.arange(9.0).reshape(3, 3) / 10, np.array([0.5, 1.0, 1.5]))
    return tuple(np.array([0.5, 1.0, 1.5]) for _ in range(spec))


VIEWS_OF_INPUTS = {"reshape-view*=", "transpose-view+="}  # gradc cannot write such a view back into its input


def _central_gradient(fn, args, h=1e-6):
    """Central differences of ``fn`` in its first argument, each call on fresh copies (``fn`` writes into them)."""
    first = args[0]
    grad = np.zeros_like(first)
    for index in np.ndindex(first.shape):
        step = np.zeros_like(first)
        step[index] = h
        up = fn(first + step, *(a.copy() for a in args[1:]))
        down = fn(first - step, *(a.copy() for a in args[1:]))
        grad[index] = (up - down) / (2 * h)
    return grad


@pytest.mark.parametrize("name", sorted(set(IN_PLACE) - VIEWS_OF_INPUTS))
@pytest.mark.parametrize("entry", ["grad", "compile"])
def test_an_in_place_update_of_an_input_warns_and_differentiates_the_entry_value(name, entry):
    """NumPy's meaning on a copy: the value and gradient of the function of the input's value on entry (against the
    function itself and central differences), a warning at the user's line, and the caller's arrays untouched."""
    fn, spec = IN_PLACE[name]
    args = _in_place_args(fn, spec)
    before = [a.copy() for a in args]
    expected_value = fn(*(a.copy() for a in args))
    with pytest.warns(GradcWarning, match="changes the input .* in place") as caught:
        if entry == "grad":
            value, grad = gradc.value_and_grad(fn)(*args)
        else:
            value, grad = gradc.compile(fn, *args).value_and_grad(*args)
    assert any(w.filename.endswith("test_frozen_state.py") and w.lineno == line_of(fn) for w in caught)
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    np.testing.assert_allclose(grad, _central_gradient(fn, [a.copy() for a in before]), rtol=1e-6, atol=1e-8)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)  # the caller's arrays are untouched


@pytest.mark.parametrize("name", sorted(VIEWS_OF_INPUTS))
@pytest.mark.parametrize("entry", ["grad", "compile"])
def test_an_in_place_update_of_a_reshape_or_transpose_view_of_an_input_is_an_error(name, entry):
    fn, spec = IN_PLACE[name]
    args = _in_place_args(fn, spec)
    before = [a.copy() for a in args]
    run = (lambda: gradc.grad(fn)(*args)) if entry == "grad" else (lambda: gradc.compile(fn, *args))
    with pytest.raises(TraceError) as info:
        run()
    assert_error_at(info.value, TraceError, line_of(fn), "in place")
    assert re.search(r"(\w+) = \1 |new name|np\.where|copy", info.value.hint), info.value.hint
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)  # the caller's arrays are untouched


def fresh_iadd(x):
    y = x * 2.0
    y += x  # a fresh intermediate: NumPy semantics, no error
    y *= y
    return np.sum(y)


def aliased_iadd(x):
    y = x * 2.0
    z = y  # z is the same array as y: it sees the update
    y += 1.0
    return np.sum(z * z)


def copied_iadd(x):
    y = x.copy()
    y -= 0.5
    y **= 2
    return np.sum(y)


def list_alias_iadd(x):
    y = np.sin(x)
    ys = [y]
    y *= 3.0
    return np.sum(ys[0] * x)


@pytest.mark.parametrize("fn", [fresh_iadd, aliased_iadd, copied_iadd, list_alias_iadd], ids=lambda f: f.__name__)
def test_augmented_assignment_on_a_fresh_value_follows_numpy(fn):
    x = np.array([0.3, -0.4, 1.2])
    got_value, got_grad = gradc.value_and_grad(fn)(x)
    np.testing.assert_allclose(got_value, fn(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(got_grad, fd_grad(lambda a: fn(a.copy()), x), rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------- in-place ndarray methods and memory attributes
def sorts(x):
    x.sort()  # MARK
    return np.sum(x)


def fills(x):
    y = x * 2.0
    y.fill(1.0)  # MARK
    return np.sum(y)


def resizes(x):
    x.resize(4)  # MARK
    return np.sum(x)


def puts(x):
    x.put([0], [1.0])  # MARK
    return np.sum(x)


def partitions(x):
    x.partition(1)  # MARK
    return np.sum(x)


def sets_flags(x):
    x.setflags(write=False)  # MARK
    return np.sum(x)


def reads_flags(x):
    if x.flags.writeable:  # MARK
        return np.sum(x)
    return np.sum(x * 2.0)


def reads_strides(x):
    return np.sum(x) * x.strides[0]  # MARK


def reads_data(x):
    return np.sum(x) + len(x.data)  # MARK


def byteswaps(x):
    x.byteswap(inplace=True)  # MARK
    return np.sum(x)


def unknown_method(x):
    return np.sum(x.getfield(np.float64))  # MARK


IN_PLACE_METHODS = {
    ".sort()": (sorts, ("sort",)),
    ".fill()": (fills, ("fill", "np.full_like")),
    ".resize()": (resizes, ("resize",)),
    ".put()": (puts, ("put",)),
    ".partition()": (partitions, ("partition",)),
    ".setflags()": (sets_flags, ("setflags",)),
    ".flags": (reads_flags, ("flags",)),
    ".strides": (reads_strides, ("strides",)),
    ".data": (reads_data, ("data",)),
    ".byteswap()": (byteswaps, ("byteswap",)),
    ".getfield()": (unknown_method, ("getfield", "gradc ops")),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE_METHODS))
def test_in_place_methods_and_memory_attributes_are_refused_at_the_line(name):
    fn, words = IN_PLACE_METHODS[name]
    x = np.array([3.0, 1.0, 2.0])
    for run in (lambda: gradc.grad(fn)(x), lambda: gradc.compile(fn, x)):
        with pytest.raises(GradcError) as info:
            run()
        assert_error_at(info.value, TraceError, line_of(fn), *words)
    np.testing.assert_array_equal(x, [3.0, 1.0, 2.0])


def test_hasattr_probes_still_answer_false():
    seen = {}

    def probe(x):
        seen["iface"] = hasattr(x, "__array_interface__")
        seen["custom"] = hasattr(x, "not_an_ndarray_attribute")
        return np.sum(x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GradcWarning)  # writing into `seen` is reported: it runs once
        gradc.grad(probe)(np.ones(2))
    assert seen == {"iface": False, "custom": False}
