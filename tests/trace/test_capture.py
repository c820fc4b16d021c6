"""The capture transform keeps Python's meaning on concrete values, and reports traced misuse at the user's line.

The corpus (test_capture_corpus.py) runs each program as written and captured, on the same
arguments: same result, or the same exception. Hypothesis writes more small programs.
Error paths trace functions (nothing is compiled) and check the message and its line.
"""
import importlib.util
import inspect
import re
import sys
import traceback

import numpy as np
import pytest
import test_capture_corpus as corpus
from finite_differences import central_gradient as central

import gradc
from gradc import TraceError
from gradc.trace import trace
from gradc.trace.capture import _CACHE, capture, converted_source

HERE = "test_capture.py"


def outcome(fn, args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # the same exception type and message as the original
        return ("raised", type(e).__name__, str(e))


def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and \
            a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and (a == b or (a != a and b != b))


@pytest.mark.parametrize("fn,calls", corpus.CORPUS, ids=[fn.__name__ for fn, _ in corpus.CORPUS])
def test_corpus_same_as_python(fn, calls):
    captured = capture(fn)
    # every function of the corpus has control flow, or calls a nested function or lambda (through the helper hook)
    assert captured is not fn, fn.__name__
    for args in calls:
        want, got = outcome(fn, args), outcome(captured, args)
        assert want[0] == got[0] and same(want[1:], got[1:]), (fn.__name__, args, want, got)


def test_global_statement_writes_the_module():
    before = corpus.COUNTER
    assert capture(corpus.uses_global)(3) == before + 3 and corpus.COUNTER == before + 3


def test_helpers_of_the_module_are_captured_too():
    captured = capture(corpus.calls_helper)
    helper = captured.__globals__["helper_with_loop"]
    assert helper is not corpus.helper_with_loop and converted_source(helper) is not None
    assert captured.__globals__ is not corpus.__dict__  # the module itself is untouched
    assert corpus.calls_helper.__globals__["helper_with_loop"] is corpus.helper_with_loop


def test_left_as_they_are():
    plain = lambda x: x + 1  # noqa: E731  (nothing to rewrite)
    assert capture(plain) is plain and capture(len) is len
    choice = lambda x: x + 1 if x > 0 else x  # noqa: E731  (a lambda is rewritten as a def is, issue 26)
    assert converted_source(choice) is not None and capture(choice)(2.0) == 3.0 and capture(choice)(-2.0) == -2.0
    assert capture(corpus.generator_function) is corpus.generator_function
    namespace = {}
    exec("def no_source(x):\n    if x:\n        return 1\n    return 2\n", namespace)
    assert capture(namespace["no_source"]) is namespace["no_source"]

    def straight(x):
        return np.sin(x) * 2.0
    assert capture(straight) is straight and converted_source(straight) is None


def test_methods_and_closures():
    class Acc:
        def __init__(self, k):
            self.k = k

        def total(self, n):
            s = 0
            for i in range(n):
                if i % 2:
                    s += self.k * i
            return s
    a = Acc(3)
    assert capture(a.total)(6) == a.total(6) == 27
    scale = 10

    def uses_cell(n):
        return [i * scale if i else -1 for i in range(n)] if n > 1 else []
    assert capture(uses_cell)(3) == uses_cell(3)


def test_converted_once_per_code_object():
    code = corpus.fibonacci.__code__
    capture(corpus.fibonacci)
    first = _CACHE[code, code.co_filename]
    capture(corpus.fibonacci)
    assert _CACHE[code, code.co_filename] is first


def test_the_same_text_in_two_files_names_its_own_file():
    # code objects compare equal without their file: one cache entry gave the second file's errors the first's name
    import gradc
    # (OSError: a class a compiled check cannot raise, refused at the raise's line)
    src = "def f(x):\n    if np.sum(x) > 0:\n        raise OSError('no')\n    return np.sum(x)\n"
    import linecache
    for path in ("<copy-a>", "<copy-b>"):
        linecache.cache[path] = (len(src), None, src.splitlines(True), path)  # the capture reads the source
        namespace = {"np": np}
        exec(compile(src, path, "exec"), namespace)
        with pytest.raises(gradc.TraceError, match=f"{path}:3"):
            gradc.grad(namespace["f"])(np.ones(2))


def test_generated_names_never_collide():
    def clash(n, _gc_rt=5, _gc_p1=7):
        _gc_it1 = 0
        for _gc_c1 in range(n):
            if _gc_c1 % 2:
                _gc_it1 += _gc_rt + _gc_p1
        return _gc_it1
    source = converted_source(clash)
    assert "_gc1_rt" in source and capture(clash)(5) == clash(5) == 24


def test_line_numbers_kept():
    def fails(n):
        s = 0
        for i in range(n):
            if i == 2:
                s += 1 / 0  # FAILS HERE
        return s
    line = inspect.getsourcelines(fails)[1] + 4
    with pytest.raises(ZeroDivisionError) as info:
        capture(fails)(5)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].lineno == line and frames[-1].filename == __file__
    assert "FAILS HERE" in frames[-1].line


def test_converted_source_shows_the_rewrite():
    text = converted_source(corpus.newton_sqrt)
    assert "while_stmt" in text and "abs(x * x - a) > 1e-12" in text


# ---------------------------------------------------------------- hypothesis: random small programs
hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


def _program(rng, depth=0, loops=0, lines=None, counter=None):
    """Statements over ints a, b, c: assignments, if/elif/else, for over range, bounded while, break/continue,
    return."""
    lines = [] if lines is None else lines
    counter = counter if counter is not None else [0]
    pad = "    " * (depth + 1)
    lines.append(f"{pad}a = (a + 1) % 50")  # no block is empty
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["assign", "assign", "if", "for", "while", "jump", "return"])
        var, other = rng.choice("abc"), rng.choice("abc")
        if kind == "assign" or depth >= 3:
            op = rng.choice(["+=", "-=", "="])
            lines.append(f"{pad}{var} {op} {other} {rng.choice('+-*')} {rng.randint(-3, 3)}")
            if op == "=":
                lines.append(f"{pad}{var} = {var} % 1000")
        elif kind == "if":
            lines.append(f"{pad}if {var} {rng.choice(['<', '>', '==', '!='])} {rng.randint(-2, 5)}:")
            _program(rng, depth + 1, loops, lines, counter)
            if rng.random() < 0.4:
                lines.append(f"{pad}elif {other} % 2 == 0 and {var} != {other}:")
                _program(rng, depth + 1, loops, lines, counter)
            if rng.random() < 0.5:
                lines.append(f"{pad}else:")
                _program(rng, depth + 1, loops, lines, counter)
        elif kind == "for":
            args = rng.choice(["3", "a % 4", "1, 5", "6, 0, -2", "b % 3, 4"])
            counter[0] += 1
            lines.append(f"{pad}for i{counter[0]} in range({args}):")
            lines.append(f"{pad}    c += i{counter[0]}")
            _program(rng, depth + 1, loops + 1, lines, counter)
            if rng.random() < 0.3:
                lines.append(f"{pad}else:")
                lines.append(f"{pad}    a += 1")
        elif kind == "while":
            counter[0] += 1
            k = f"k{counter[0]}"
            lines.append(f"{pad}{k} = 0")
            lines.append(f"{pad}while {k} < {rng.randint(0, 4)} and {var} != 99:")
            lines.append(f"{pad}    {k} += 1")
            _program(rng, depth + 1, loops + 1, lines, counter)
        elif kind == "jump" and loops:
            lines.append(f"{pad}if {var} % 3 == {rng.randint(0, 2)}:")
            lines.append(f"{pad}    {rng.choice(['break', 'continue'])}")
        elif kind == "return":
            lines.append(f"{pad}if {var} > {rng.randint(0, 20)}:")
            lines.append(f"{pad}    return a, b, c, 'early'")
    return lines


@hypothesis.settings(max_examples=30, deadline=None)
@hypothesis.given(seed=st.integers(0, 2 ** 32 - 1))
def test_random_programs_same_as_python(seed, tmp_path_factory):
    import random
    rng = random.Random(seed)
    body = _program(rng)
    source = "def prog(a, b, c):\n" + "\n".join(body) + "\n    return a, b, c\n"
    path = tmp_path_factory.mktemp("prog") / f"prog_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"prog_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    captured = capture(module.prog)
    for args in [(0, 0, 0), (1, 2, 3), (5, -1, 4), (-3, 7, 2)]:
        want, got = outcome(module.prog, args), outcome(captured, args)
        assert want == got, (source, args)
    sys.modules.pop(f"prog_{seed}", None)


# ---------------------------------------------------------------- errors on traced values, at the user's line
def check(err, *words):
    text = str(err)
    match = re.search(rf"{re.escape(HERE)}:(\d+)", text)
    assert match, f"no {HERE}:<line> in {text!r}"
    assert err.hint, text
    for w in words:
        assert w in text, (w, text)
    return int(match.group(1))


def line_of(fn, marker):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, text in enumerate(lines) if marker in text)


def test_if_on_traced_array_suggests_where():
    def elementwise(x):
        if x > 0:  # MARK
            x = x * 2.0
        return x
    with pytest.raises(TraceError) as info:
        trace(elementwise, np.ones(3))
    assert check(info.value, "np.where") == line_of(elementwise, "MARK")


def test_variable_in_one_branch():
    def one_branch(x):
        if x > 0:  # MARK
            y = x * 2.0
        return y
    with pytest.raises(TraceError) as info:
        trace(one_branch, 1.0)
    assert check(info.value, "'y'", "only one branch", "initialise y") == line_of(one_branch, "MARK")


def test_variable_first_defined_in_traced_loop():
    def first_inside(x):
        for i in range(3):  # MARK
            y = x * i
            x = y + 1.0
        return y
    with pytest.raises(TraceError) as info:
        trace(first_inside, 1.0)
    assert check(info.value, "'y'", "initialise y") == line_of(first_inside, "MARK")


def test_return_inside_traced_loop_reads_the_loop_variable_as_it_was():
    def returns_index(x):
        for i in range(5):
            if x > 2.0:
                return x * i + i  # i as it was when the loop stopped
            x = x * 1.5
        return x
    g = trace(returns_index, 1.0)
    assert any(e.op == "scan" for e in g.eqns)
    c = gradc.compile(returns_index, 1.0)
    for x in (1.0, 0.5, 3.0, 0.1):  # returns at i = 2, at i = 4, at i = 0, and after the loop
        np.testing.assert_allclose(c.forward(x), returns_index(x), rtol=1e-14)
        np.testing.assert_allclose(c.grad(x), central(returns_index, x), rtol=1e-6, atol=1e-9)


def test_return_inside_a_nested_traced_loop():
    def nested_return(x):
        for i in range(3):
            for j in range(2):
                if x > i + j + 1:
                    return x * (i + 1) + j  # j: the inner loop's counter at the return
            x = x * 2.0
        return x
    g = trace(nested_return, 1.0)
    assert sum(e.op == "scan" for e in g.eqns) == 1 and str(g).count("scan") == 2  # two loops, nested
    c = gradc.compile(nested_return, 1.0)
    for x in (0.3, 0.7, 1.5, 2.5, 9.0):
        np.testing.assert_allclose(c.forward(x), nested_return(x), rtol=1e-14)
        np.testing.assert_allclose(c.grad(x), central(nested_return, x), rtol=1e-6, atol=1e-9)


def test_global_assigned_in_traced_branch():
    def sets_global(x):
        global SEEN
        if x > 0:  # MARK
            SEEN = x
        return x
    with pytest.raises(TraceError) as info:
        trace(sets_global, 1.0)
    assert check(info.value, "global") == line_of(sets_global, "MARK")


def test_and_on_traced_floats():
    def float_and(x, y):
        return x and y  # MARK
    with pytest.raises(TraceError) as info:
        trace(float_and, 1.0, 2.0)
    assert check(info.value, "`and`") == line_of(float_and, "MARK")


def test_traced_condition_inside_try_keeps_the_tracer_error():
    def in_try(x):
        try:
            if x > 0:  # MARK
                x = -x
        finally:
            pass
        return x
    with pytest.raises(TraceError) as info:
        trace(in_try, 1.0)
    assert check(info.value, "depends on a traced value") == line_of(in_try, "MARK")


def test_traced_break_in_a_python_loop():
    def over_list(x):
        for w in [1.0, 2.0, 3.0]:
            x = x * w
            if x > 10.0:  # MARK
                break
        return x
    with pytest.raises(TraceError) as info:
        trace(over_list, 1.0)
    assert check(info.value, "`break`", "range") == line_of(over_list, "MARK")


def test_traced_while_that_appends_to_a_list():
    def appends(x):
        ys = []
        while x < 5.0:  # MARK
            x = x * 2.0
            ys.append(x)
        return x
    with pytest.raises(TraceError) as info:
        trace(appends, 1.0)
    assert check(info.value, "`while`", "list") == line_of(appends, "MARK")


def test_partials_are_captured():
    import functools
    part = functools.partial(corpus.bisection, 2.0)
    captured = capture(part)
    assert isinstance(captured, functools.partial) and captured.func is not corpus.bisection
    assert captured(0.0, 2.0) == part(0.0, 2.0)


def test_item_assignment_rewrite_waits_for_inplace(monkeypatch):
    from gradc.trace import capture as capture_module
    from gradc.trace import inplace
    assert "setitem" in capture_module._convert(corpus.list_item_assignment)[1]
    monkeypatch.delattr(inplace, "setitem")
    assert "setitem" not in capture_module._convert(corpus.list_item_assignment)[1]


def test_conditional_expression_on_traced_array():
    def pick(x):
        return x if x > 0 else -x  # MARK
    with pytest.raises(TraceError) as info:
        trace(pick, np.ones(3))
    assert check(info.value, "np.where") == line_of(pick, "MARK")


def test_too_large_a_rewrite_is_abandoned_with_a_warning(monkeypatch):
    from gradc import GradcWarning
    from gradc.trace import capture as capture_module
    from gradc.trace import capture_convert
    monkeypatch.setattr(capture_convert, "MAX_NAMES", 3)
    monkeypatch.setattr(capture_module, "MAX_NAMES", 3)
    from gradc.trace import capture_nodes
    monkeypatch.setattr(capture_nodes, "MAX_NAMES", 3)
    with pytest.warns(GradcWarning, match="not captured"):
        assert capture_module._convert(corpus.nested_break_inner) is None
