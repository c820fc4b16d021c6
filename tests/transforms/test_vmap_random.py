"""Seeded random (function, in_axes, out_axes) triples: ``gradc.vmap`` against a Python loop over the examples.

Each case is a real ``def`` (written as source and executed, so gradc traces it as it
would a user's file) built from elementwise, broadcasting and reducing NumPy operations on
one to three arguments of broadcast-compatible shapes, each batched along a random axis
(positive or negative) or not at all. Every fourth case also checks per-example gradients
(``vmap(grad(...))``) against central finite differences. The emitted source is the same
under two hash seeds (and jit's, pytree arguments included).
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gradc

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from finite_differences import central_gradient  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHAPES = [(), (3,), (2, 3)]
UNARY = ["np.sin({})", "np.tanh({})", "np.exp(-({}) ** 2)", "({}) ** 2", "np.cos({}) * 0.5"]
BINARY = ["({} + {})", "({} * {})", "({} - {})", "np.maximum({}, {})", "np.where({0} > {1}, {0}, {1})"]
REDUCE = ["np.sum({})", "np.mean({})", "np.max({})", "np.prod(np.cos({}))"]


def random_expression(rng, names, depth):
    if depth == 0 or rng.random() < 0.25:
        return str(rng.choice(names)) if rng.random() < 0.85 else f"{rng.uniform(0.5, 2.0):.3f}"
    kind = rng.random()
    if kind < 0.35:
        return str(rng.choice(UNARY)).format(random_expression(rng, names, depth - 1))
    if kind < 0.85:
        return str(rng.choice(BINARY)).format(random_expression(rng, names, depth - 1),
                                              random_expression(rng, names, depth - 1))
    return str(rng.choice(REDUCE)).format(random_expression(rng, names, depth - 1))


def random_case(seed):
    """``(f, source, args, in_axes, out_axes)``: a function, its batched arguments and its axes."""
    rng = np.random.default_rng(seed)
    n_args = int(rng.integers(1, 4))
    names = ["a", "b", "c"][:n_args]
    n_out = int(rng.integers(1, 3))
    body = [random_expression(rng, names, 3) for _ in range(n_out)]
    # every argument is used, so that each in_axes entry matters
    body[0] = f"{body[0]} + " + " + ".join(f"np.sum({n})" for n in names)
    returned = body[0] if n_out == 1 else "(" + ", ".join(body) + ")"
    params = ", ".join(names)
    first = "out[0]" if n_out > 1 else "out"
    source = (f"def f({params}):\n    return {returned}\n\n\n"
              f"def scalar({params}):\n    out = f({params})\n    return np.sum({first})\n")
    namespace = {"np": np}
    exec(compile(source, f"<random vmap case {seed}>", "exec"), namespace)
    f = namespace["f"]
    f.scalar = namespace["scalar"]
    size = int(rng.integers(1, 5))
    args, in_axes = [], []
    for _ in names:
        shape = SHAPES[int(rng.integers(0, 3))]
        if rng.random() < 0.3:
            in_axes.append(None)
            args.append(rng.normal(size=shape))
            continue
        axis = int(rng.integers(0, len(shape) + 1))
        batched = shape[:axis] + (size,) + shape[axis:]
        in_axes.append(axis - len(batched) if rng.random() < 0.3 else axis)
        args.append(rng.normal(size=batched))
    if all(a is None for a in in_axes):
        in_axes[0] = 0
        args[0] = rng.normal(size=(size,) + np.shape(args[0]))
    example = f(*[a if ax is None else np.take(a, 0, axis=ax) for a, ax in zip(args, in_axes)])
    outs = example if isinstance(example, tuple) else (example,)
    out_axes = tuple(int(rng.integers(-np.ndim(o) - 1, np.ndim(o) + 1)) for o in outs)
    return f, source, args, tuple(in_axes), (out_axes if n_out > 1 else out_axes[0])


def loop_reference(f, in_axes, args, out_axes):
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    results = [f(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]) for i in range(n)]
    if isinstance(results[0], tuple):
        return tuple(np.stack([np.broadcast_to(r[k], np.shape(results[0][k])) for r in results], axis=o)
                     for k, o in enumerate(out_axes))
    return np.stack(results, axis=out_axes)


@pytest.mark.parametrize("seed", range(60))
def test_random_vmap_against_a_loop(seed):
    f, source, args, in_axes, out_axes = random_case(seed)
    got = gradc.vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)
    expected = loop_reference(f, in_axes, args, out_axes)
    as_tuple = isinstance(expected, tuple)
    for g, e in zip(got if as_tuple else (got,), expected if as_tuple else (expected,)):
        assert np.shape(g) == np.shape(e), source
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14, err_msg=source)


@pytest.mark.parametrize("seed", range(0, 60, 4))
def test_random_per_example_gradients(seed):
    f, source, args, in_axes, _ = random_case(seed)
    scalar = f.scalar
    got = gradc.vmap(gradc.grad(scalar), in_axes=in_axes)(*args)
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    for i in range(n):
        example = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]
        rest = example[1:]
        expected = central_gradient(lambda v, rest=rest: scalar(v, *rest), example[0])
        # kinks of max / maximum / where are measure-zero for random normal inputs
        np.testing.assert_allclose(got[i], expected, rtol=1e-5, atol=1e-7, err_msg=source)


def test_emitted_source_is_identical_across_hash_seeds():
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, "tests/transforms")
        from test_vmap_random import random_case
        import numpy as np
        import gradc
        for seed in range(8):
            f, source, args, in_axes, out_axes = random_case(seed)
            print(gradc.vmap(f, in_axes=in_axes, out_axes=out_axes).lower(*args).source)
            example = [a if ax is None else np.take(a, 0, axis=ax) for a, ax in zip(args, in_axes)]
            print(gradc.jit(f).lower(*example).source)
        print(gradc.jit(lambda p, x: {"h": x @ p["w"] + p["b"]}).lower({"w": np.ones((2, 3)), "b": np.ones(3)},
                                                                       np.ones(2)).source)
    """)
    outputs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=ROOT)
        outputs.append(subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True,
                                      text=True, check=True).stdout)
    assert outputs[0] == outputs[1] and "def f_vmap(" in outputs[0] and "def lambda_(p_b, p_w, x):" in outputs[0]


def test_random_programs_with_loops_and_branches_against_a_loop():
    """vmap of random programs of index and integer arithmetic in ``for``/``while`` loops and ``if`` on traced
    integers and data (tests/integer_programs.py): every argument batched, against a Python loop."""
    import warnings

    from test_jit import _random_programs

    rng = np.random.default_rng(77)
    ran = 0
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's on x % 0
        for f, prog in _random_programs(30, 99):
            batch = [np.stack([a, *(rng.uniform(-1.5, 1.5, a.shape) if a.dtype.kind == "f"
                                    else rng.integers(-4, 6, a.shape).astype(a.dtype) for _ in range(2))])
                     for a in prog.args]
            want = np.array([f(*[a[i] for a in batch]) for i in range(3)])
            if not np.all(np.isfinite(want)):
                continue
            try:
                got = gradc.vmap(f)(*batch)
            except gradc.GradcError:
                continue  # refused clearly, as the integer-program suite counts
            ran += 1
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, err_msg=prog.source)
    assert ran >= 20
