"""Bad input to every public entry point gives a clear error at the user's line, never an internal exception.

Each case is a lambda on one line of this file that calls gradc wrongly (a bad option, a bad ``wrt`` or
``argnums``, a function gradc cannot trace: not callable, ``*args``/``**kwargs``, a generator, a coroutine,
a builtin, a class). The error must be a gradc error (or Python's TypeError/ValueError), and it must name
this file and the line of the call or of the function's ``def`` in its message, or be raised by Python
itself at the call (the call's own frame is the last one, as for a keyword the function does not take).
"""
from __future__ import annotations

import math
import os
import traceback

import numpy as np
import pytest

import gradc

HERE = os.path.basename(__file__)
INTERNAL = (KeyError, AttributeError, IndexError, AssertionError, RecursionError, StopIteration,
            ZeroDivisionError, NameError, UnboundLocalError, NotImplementedError, OverflowError)
X = np.ones(3)


def square(x):
    return np.sum(x ** 2)


def two(x, y):
    return np.sum(x * y)


def star_args(*args):
    return np.sum(args[0] ** 2)


def star_kwargs(x, **kwargs):
    return np.sum(x ** 2)


def generator(x):
    yield np.sum(x ** 2)


async def coroutine(x):
    return np.sum(x ** 2)


def vector(x):
    return x ** 2


class Model:
    def loss(self, x):
        return np.sum(x ** 3)


DEF_LINES = {f.__code__.co_firstlineno for f in (square, two, star_args, star_kwargs, generator, coroutine, vector,
                                                 Model.loss)}

CASES = {
    # checkpoint= (a loop memory policy): every transform that takes it
    "grad checkpoint=0": lambda: gradc.grad(square, checkpoint=0)(X),
    "grad checkpoint=-1": lambda: gradc.grad(square, checkpoint=-1)(X),
    "grad checkpoint='bogus'": lambda: gradc.grad(square, checkpoint="bogus")(X),
    "grad checkpoint=2.5": lambda: gradc.grad(square, checkpoint=2.5)(X),
    "grad checkpoint=True": lambda: gradc.grad(square, checkpoint=True)(X),
    "grad checkpoint=[1]": lambda: gradc.grad(square, checkpoint=[1])(X),
    "value_and_grad checkpoint=0": lambda: gradc.value_and_grad(square, checkpoint=0)(X),
    "decorator checkpoint=0": lambda: gradc.grad(checkpoint=0)(square)(X),
    "compile checkpoint=0": lambda: gradc.compile(square, X, checkpoint=0),
    "compile checkpoint='x'": lambda: gradc.compile(square, X, checkpoint="x"),
    "fori_loop checkpoint=0": lambda: gradc.grad(lambda x: gradc.fori_loop(0, 3, lambda i, v: v * x, x,
                                                                          checkpoint=0).sum())(X),
    "binomial(0)": lambda: gradc.binomial(snapshots=0),
    "binomial('a')": lambda: gradc.binomial(snapshots="a"),
    # wrt / argnums
    "grad wrt='nope'": lambda: gradc.grad(square, wrt="nope")(X),
    "grad wrt=5": lambda: gradc.grad(square, wrt=5)(X),
    "grad wrt=-7": lambda: gradc.grad(square, wrt=-7)(X),
    "grad wrt=1.5": lambda: gradc.grad(square, wrt=1.5)(X),
    "grad argnums and wrt": lambda: gradc.grad(two, argnums=1, wrt="x")(X, X),
    "grad argnums='x'": lambda: gradc.grad(two, argnums="x")(X, X),
    "grad argnums=(0, -2)": lambda: gradc.grad(two, argnums=(0, -2))(X, X),
    "grad argnums=True": lambda: gradc.grad(two, argnums=True)(X, X),
    "grad(*args) wrt='args'": lambda: gradc.grad(star_args, wrt="args")(X),
    "jacobian wrt='nope'": lambda: gradc.jacobian(vector, wrt="nope")(X),
    "jvp argnums=5": lambda: gradc.jvp(square, (X,), (X,), argnums=5),
    "vjp wrt='nope'": lambda: gradc.vjp(square, X, wrt="nope"),
    "hvp argnums and wrt": lambda: gradc.hvp(square, (X,), (X,), argnums=0, wrt="x"),
    "grad wrt=()": lambda: gradc.grad(two, wrt=())(X, X),
    "grad wrt=[object]": lambda: gradc.grad(two, wrt=[object()])(X, X),
    "value_and_grad wrt='nope'": lambda: gradc.value_and_grad(square, wrt="nope")(X),
    "compile wrt='nope'": lambda: gradc.compile(square, X, wrt="nope"),
    "compile wrt=3": lambda: gradc.compile(two, X, X, wrt=3),
    "compile jvp wrt=3": lambda: gradc.compile(two, X, X, wrt=3, mode="jvp"),
    "jacfwd argnums=5": lambda: gradc.jacfwd(vector, argnums=5)(X),
    "jacrev argnums='a'": lambda: gradc.jacrev(vector, argnums="a")(X),
    "jacobian argnums=1.5": lambda: gradc.jacobian(vector, argnums=1.5)(X),
    "hessian argnums=5": lambda: gradc.hessian(square, argnums=5)(X),
    "hessian argnums=(0, 7)": lambda: gradc.hessian(two, argnums=(0, 7))(X, X),
    "hvp argnums=4": lambda: gradc.hvp(square, (X,), (X,), argnums=4),
    # not a function gradc can trace
    "grad(3)": lambda: gradc.grad(3)(X),
    "grad('f')": lambda: gradc.grad("f")(X),
    "grad(None)()": lambda: gradc.grad(None)(X),
    "value_and_grad(3)": lambda: gradc.value_and_grad(3)(X),
    "compile(3)": lambda: gradc.compile(3, X),
    "jvp(3)": lambda: gradc.jvp(3, (X,), (X,)),
    "vjp(3)": lambda: gradc.vjp(3, X),
    "jacfwd(3)": lambda: gradc.jacfwd(3)(X),
    "jacrev(3)": lambda: gradc.jacrev(3)(X),
    "hessian(3)": lambda: gradc.hessian(3)(X),
    "hvp(3)": lambda: gradc.hvp(3, (X,), (X,)),
    "trace(3)": lambda: gradc.trace(3, X),
    "grad(*args) past the call": lambda: gradc.grad(star_args, argnums=1)(X),
    "grad(**kwargs) keyword not a name": lambda: gradc.grad(star_kwargs)(X, **{"k-1": X}),
    "compile(*args) without examples": lambda: gradc.compile(star_args),
    "jvp(*args) past the call": lambda: gradc.jvp(star_args, (X,), (X,), argnums=2),
    "grad(generator)": lambda: gradc.grad(generator)(X),
    "compile(generator)": lambda: gradc.compile(generator, X),
    "jacrev(generator)": lambda: gradc.jacrev(generator)(X),
    "grad(coroutine)": lambda: gradc.grad(coroutine)(X),
    "compile(coroutine)": lambda: gradc.compile(coroutine, X),
    "grad(math.sin)": lambda: gradc.grad(math.sin)(1.0),
    "grad(class dict)": lambda: gradc.grad(dict)(X),
    "grad(vector output)": lambda: gradc.grad(vector)(X),
    "grad(method) wrong arity": lambda: gradc.grad(Model().loss)(X, X),
    # arguments of the wrong kind
    "grad(str argument)": lambda: gradc.grad(square)("abc"),
    "grad(object argument)": lambda: gradc.grad(square)(object()),
    "grad(too many)": lambda: gradc.grad(square)(X, X),
    "grad(too few)": lambda: gradc.grad(two)(X),
    "grad(int array)": lambda: gradc.grad(square)(np.arange(3)),
    "compile(no example)": lambda: gradc.compile(two, X),
    "compile target=3": lambda: gradc.compile(square, X, target=3),
    "compile target='fortran'": lambda: gradc.compile(square, X, target="fortran"),
    "compile mode=None": lambda: gradc.compile(square, X, mode=None),
    "compile mode='sideways'": lambda: gradc.compile(square, X, mode="sideways"),
    "jvp primals not a tuple": lambda: gradc.jvp(square, X, X),
    "jvp tangent count": lambda: gradc.jvp(two, (X, X), (X,)),
    "jvp tangent shape": lambda: gradc.jvp(square, (X,), (np.ones(2),)),
    "vjp no primals": lambda: gradc.vjp(square),
    "vjp cotangent shape": lambda: gradc.vjp(vector, X)[1](np.ones(2)),
    "hvp tangent shape": lambda: gradc.hvp(square, (X,), (np.ones(2),)),
    "hvp primals not a tuple": lambda: gradc.hvp(square, X, X),
    # spec
    "spec('f64[')": lambda: gradc.spec("f64["),
    "spec('')": lambda: gradc.spec(""),
    "spec(3)": lambda: gradc.spec(3),
    "spec(None)": lambda: gradc.spec(None),
    "spec('q64[3]')": lambda: gradc.spec("q64[3]"),
    "spec('f64[-1]')": lambda: gradc.spec("f64[-1]"),
    "spec('f64[n,')": lambda: gradc.spec("f64[n,"),
    "spec('f64[1.5]')": lambda: gradc.spec("f64[1.5]"),
    # every transform on functions of every kind: **kwargs, a method, a lambda, a builtin (the call is wrong)
    "jacrev(**kwargs) chosen whole": lambda: gradc.jacrev(star_kwargs, wrt="kwargs")(X, k=X),
    "hessian(*args) past the call": lambda: gradc.hessian(star_args, argnums=1)(X),
    "hvp(*args) past the call": lambda: gradc.hvp(star_args, (X,), (X,), argnums=1),
    "vjp(*args) past the call": lambda: gradc.vjp(star_args, X, argnums=1),
    "vjp(generator)": lambda: gradc.vjp(generator, X),
    "jvp(coroutine)": lambda: gradc.jvp(coroutine, (X,), (X,)),
    "hessian(method) wrong arity": lambda: gradc.hessian(Model().loss)(X, X),
    "jacfwd(lambda) too many": lambda: gradc.jacfwd(lambda x: x * 2.0)(X, X),
    "value_and_grad(math.sin) array": lambda: gradc.value_and_grad(math.sin)(X),
    "jacrev(vector) keyword it lacks": lambda: gradc.jacrev(vector)(X, y=X),
    "compile unknown keyword": lambda: gradc.compile(square, X, bogus=1),
    # structured control flow called wrongly
    "fori_loop body not callable": lambda: gradc.grad(lambda x: gradc.fori_loop(0, 3, 5, x).sum())(X),
    "fori_loop step 0": lambda: gradc.grad(lambda x: gradc.fori_loop(0, 3, lambda i, v: v, x, step=0).sum())(X),
    "while_loop cond not callable": lambda: gradc.grad(lambda x: gradc.while_loop(1, lambda v: v, x).sum())(X),
    "cond array predicate": lambda: gradc.grad(lambda x: gradc.cond(x > 0, lambda v: v, lambda v: -v, x).sum())(X),
    "scan xs of different rows": lambda: gradc.grad(lambda x: gradc.scan(lambda c, r: (c + r[0], r), 0.0,
                                                                         (x, np.ones(2)))[0])(X),
    "scan without xs or length": lambda: gradc.grad(lambda x: gradc.scan(lambda c, r: (c, c), np.sum(x),
                                                                         None)[0])(X),
    "stop_gradient of a string": lambda: gradc.grad(lambda x: np.sum(gradc.stop_gradient("a") * x))(X),
    # custom rules
    "custom_vjp(3)": lambda: gradc.custom_vjp(3),
    "custom_jvp(3)": lambda: gradc.custom_jvp(3),
    "checkpoint(3)": lambda: gradc.checkpoint(3),
    "custom_vjp without defvjp": lambda: gradc.grad(gradc.custom_vjp(square))(X),
    "custom_jvp without defjvp": lambda: gradc.grad(gradc.custom_jvp(square))(X),
    "defvjp(3, 4)": lambda: gradc.custom_vjp(square).defvjp(3, 4),
    "defjvp(3)": lambda: gradc.custom_jvp(square).defjvp(3),
}


def _dask_cases():
    try:
        import dask.array as da
    except ImportError:
        return {}
    import gradc.dask as gd

    def loss(w, X):
        return np.sum((X @ w) ** 2)
    Xd = da.from_array(np.ones((4, 2)), chunks=2)
    w = np.ones(2)
    return {
        "dask rows=()": lambda: gd.value_and_grad(loss, rows=()),
        "dask split_every=1": lambda: gd.value_and_grad(loss, rows="X", split_every=1),
        "dask rows not a parameter": lambda: gd.value_and_grad(loss, rows="Z")(w, Xd),
        "dask wrt a row argument": lambda: gd.value_and_grad(loss, wrt="X", rows="X")(w, Xd),
        "dask wrt not a parameter": lambda: gd.value_and_grad(loss, wrt="q", rows="X")(w, Xd),
        "dask f not callable": lambda: gd.value_and_grad(3, rows="X")(w, Xd),
        "dask scalar rows": lambda: gd.value_and_grad(loss, rows="X")(w, 2.0),
        "dask rows of different lengths": lambda: gd.value_and_grad(lambda w, X, y: np.sum(X @ w - y),
                                                                    rows=("X", "y"))(w, Xd, np.ones(3)),
        "dask checkpoint keyword": lambda: gd.value_and_grad(loss, rows="X", checkpoint=0),
    }


CASES.update(_dask_cases())


def _user_lines(thunk, *more):
    return {thunk.__code__.co_firstlineno} | {m.__code__.co_firstlineno for m in more} | DEF_LINES


def _check(name, thunk, *callers):
    try:
        thunk()
    except BaseException as e:  # noqa: BLE001 (what is raised is the subject)
        err = e
    else:
        pytest.fail(f"{name}: no error")
    assert not isinstance(err, INTERNAL), f"{name}: internal {type(err).__name__}: {err}"
    assert isinstance(err, (gradc.GradcError, TypeError, ValueError)), f"{name}: {type(err).__name__}: {err}"
    text = str(err)
    frames = traceback.extract_tb(err.__traceback__)
    if isinstance(err, gradc.GradcError):  # never a traceback from deep inside gradc: the entry points at most
        package = os.path.dirname(os.path.abspath(gradc.__file__)) + os.sep  # wherever the clone lives
        inside = [f"{os.path.basename(f.filename)}:{f.lineno}" for f in frames if f.filename.startswith(package)]
        assert len(inside) <= 3, f"{name}: {type(err).__name__} raised through {inside}"
    if any(f"{HERE}:{line}" in text for line in _user_lines(thunk, *callers)):
        return
    assert frames and os.path.basename(frames[-1].filename) == HERE, \
        f"{name}: {type(err).__name__} names no line of {HERE} ({text}); raised at {frames[-1].filename}:" \
        f"{frames[-1].lineno}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_is_reported_at_the_users_line(name):
    _check(name, CASES[name])


def test_every_public_transform_is_swept():
    swept = " ".join(CASES)
    for entry in ("grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "jacobian", "hessian", "hvp",
                  "compile", "spec", "trace", "custom_vjp", "custom_jvp", "checkpoint", "binomial", "fori_loop",
                  "while_loop", "cond", "scan", "stop_gradient", "dask"):
        assert entry in swept, entry


def test_builtins_that_run_on_a_traced_array_are_traced():
    # not errors: len(x) is a constant of x (gradient 0), sum(x) adds the rows (gradient 1)
    np.testing.assert_array_equal(gradc.grad(len)(X), np.zeros(3))
    np.testing.assert_array_equal(gradc.compile(sum, X).grad(X), np.ones(3))


def test_an_error_raised_inside_a_with_block_names_the_users_line():
    # user_location skips the standard library's frames (contextlib's __enter__ was reported as the user's line)
    import importlib
    control_trace = importlib.import_module("gradc.trace.control_trace")
    with pytest.raises(gradc.TraceError) as info:
        with control_trace.loop_checkpoint(0):
            pass
    assert "contextlib" not in str(info.value) and f"{HERE}:" in str(info.value)


def test_checkpoint_zero_is_refused_at_the_grad_call_and_a_good_policy_works():
    line = test_checkpoint_zero_is_refused_at_the_grad_call_and_a_good_policy_works.__code__.co_firstlineno + 3
    with pytest.raises(gradc.TraceError, match="checkpoint=0") as info:
        gradc.grad(square, checkpoint=0)
    assert f"{HERE}:{line}" in str(info.value)
    np.testing.assert_allclose(gradc.grad(square, checkpoint=1)(X), 2 * X)  # what the hint offers works
    np.testing.assert_allclose(gradc.grad(square, checkpoint="sqrt")(X), 2 * X)



# every transform crossed with every kind of function it cannot take (the table above picks examples; this is the
# whole product, so a new transform or a new kind is covered by adding one line)
TRANSFORMS = {
    "grad": lambda fn: gradc.grad(fn)(X),
    "value_and_grad": lambda fn: gradc.value_and_grad(fn)(X),
    "compile": lambda fn: gradc.compile(fn, X),
    "trace": lambda fn: gradc.trace(fn, X),
    "jvp": lambda fn: gradc.jvp(fn, (X,), (X,)),
    "vjp": lambda fn: gradc.vjp(fn, X),
    "jacfwd": lambda fn: gradc.jacfwd(fn)(X),
    "jacrev": lambda fn: gradc.jacrev(fn)(X),
    "jacobian": lambda fn: gradc.jacobian(fn)(X),
    "hessian": lambda fn: gradc.hessian(fn)(X),
    "hvp": lambda fn: gradc.hvp(fn, (X,), (X,)),
    "custom_vjp": lambda fn: gradc.grad(lambda x: gradc.custom_vjp(fn)(x))(X),
    "checkpoint": lambda fn: gradc.grad(lambda x: np.sum(gradc.checkpoint(fn)(x)))(X),
    "fori_loop": lambda fn: gradc.grad(lambda x: np.sum(gradc.fori_loop(0, 2, fn, x)))(X),
    "cond": lambda fn: gradc.grad(lambda x: np.sum(gradc.cond(np.sum(x) > 0, fn, fn, x)))(X),
}
NOT_TRACEABLE = {"int": 3, "str": "f", "None": None, "array": X, "generator": generator,
                 "coroutine": coroutine, "class": dict}


VALID = {("cond", "*args")}  # a branch taking *args is called with the operands: fine


@pytest.mark.parametrize("transform, kind", [(t, k) for t in TRANSFORMS for k in NOT_TRACEABLE if (t, k) not in VALID])
def test_every_transform_refuses_every_kind_of_bad_function(transform, kind):
    fn = NOT_TRACEABLE[kind]
    call = TRANSFORMS[transform]
    _check(f"{transform}({kind})", lambda: call(fn), call)
