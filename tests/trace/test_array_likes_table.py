"""Every NumPy function of the dispatch table given lists of traced values where it takes an array-like.

A generator over the whole table: for each function, the first call form NumPy itself
accepts on concrete arrays (one to three arguments of shape (3,) or (2, 3)) is taken;
then one argument becomes a Python list of traced scalars (or traced rows), some
entries replaced by Python numbers or NumPy rows. gradc's value must equal the user's
function run by NumPy on the concrete list, and its gradient central finite differences.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradc
from gradc.errors import GradcError
from tests.dispatch_table import finite_values, functions, name_of
from tests.finite_differences import central_gradient

# functions whose concrete call forms are not array-likes of floats, or whose value is not a smooth function of
# them at random points (their own tests cover them)
_SKIP = {"shape", "ndim", "size", "copyto", "empty_like", "full_like", "zeros_like", "ones_like", "result_type",
         "can_cast", "iscomplexobj", "isrealobj", "isscalar", "sort_complex", "nonzero", "flatnonzero", "argwhere",
         "unique", "searchsorted", "digitize", "bincount", "histogram", "histogram_bin_edges", "histogramdd",
         "histogram2d", "lexsort", "argsort", "argpartition", "partition",
         "unstack"}  # np.unstack itself takes arrays only (x.ndim): a list is NumPy's AttributeError


def _call_form(f, rng):
    """The first (args, listed position) NumPy accepts for ``f`` with a float result, or None."""
    for shape in ((3,), (2, 3)):
        for arity in (1, 2, 3):
            args = [rng.uniform(0.5, 1.5, shape) for _ in range(arity)]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    value = f(*args)
            except Exception:  # noqa: BLE001  (NumPy refuses this form: try the next)
                continue
            if finite_values(value) and not any(value is a for a in args):  # not a form writing into out=
                return args
    return None


def _scalar(value, weights):
    leaves = list(value) if isinstance(value, (tuple, list)) else [value]
    return sum(np.sum(np.asarray(leaf) * w) if not hasattr(leaf, "aval") else np.sum(leaf * w)
               for leaf, w in zip(leaves, weights))


CASES = []
_rng = np.random.default_rng(26)
for _f in functions(_SKIP):
    _args = _call_form(_f, _rng)
    if _args is None:
        continue
    for _position in range(len(_args)):
        _label = ("linalg." if "linalg" in (getattr(_f, "__module__", None) or "") else "") + name_of(_f)
        CASES.append(pytest.param(_f, _args, _position, int(_rng.integers(1 << 30)), id=f"{_label}-{_position}"))


def test_the_generator_covers_the_table():
    names = {c.id.rsplit("-", 1)[0] for c in CASES}
    for expected in ("mean", "std", "var", "sum", "prod", "amax", "amin", "append", "dot", "concatenate",
                     "where", "exp", "multiply", "stack", "outer", "cumsum", "linalg.norm", "block", "vstack", "cov"):
        assert expected in names, expected
    assert len(CASES) > 150


@pytest.mark.parametrize("f, args, position, seed", CASES)
def test_a_list_of_traced_values_is_an_array_like(f, args, position, seed):
    rng = np.random.default_rng(seed)
    base = args[position]
    rows = len(base)
    constant = [int(i) for i in np.nonzero(rng.uniform(size=rows) < 0.3)[0]]  # entries given as constants
    constant = constant[:rows - 1]  # at least one traced entry: else the list is a constant, never refused
    # Python numbers for scalar entries, NumPy rows for row entries (mixed with the traced ones)
    fixed = {i: (float(base[i]) if base.ndim == 1 else np.array(base[i])) for i in constant}

    def listed(v):
        return [fixed[i] if i in fixed else v[i] for i in range(rows)]

    def with_list(v):
        call = list(args)
        call[position] = listed(v)
        return f(*call)

    def with_array(v):
        call = list(args)
        call[position] = v
        return f(*call)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            gradc.jit(with_array)(base)
        except GradcError as refusal:  # gradc refuses this form for arrays too: a list is refused the same way
            with pytest.raises(type(refusal)):
                gradc.jit(with_list)(base)
            return
        expected = with_list(base)  # the user's function run by NumPy on the concrete list
        out_leaves = list(expected) if isinstance(expected, (tuple, list)) else [expected]
        weights = [rng.normal(size=np.shape(leaf)) for leaf in out_leaves]
        got = gradc.jit(with_list)(base)
        got_leaves = list(got) if isinstance(got, (tuple, list)) else [got]
        assert len(got_leaves) == len(out_leaves)
        for g, e in zip(got_leaves, out_leaves):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)
        out, pullback = gradc.vjp(with_list, base)
        cotangent = [np.asarray(w) for w in weights]
        if hasattr(expected, "_fields"):  # a named tuple (np.linalg.qr's result): the cotangent of that type
            grad = pullback(type(out)(*cotangent))
        else:
            grad = pullback(tuple(cotangent) if isinstance(expected, tuple) else cotangent
                            if isinstance(expected, list) else cotangent[0])
        grad = grad[0] if isinstance(grad, tuple) else grad
        reference = central_gradient(lambda v: _scalar(with_list(v), weights), base)
    np.testing.assert_allclose(grad, reference, rtol=1e-5, atol=1e-6)
