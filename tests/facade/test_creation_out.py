"""Factories with torch's ``out=`` (``torch.rand(2, 2, out=c)`` returns ``c``, drawn in ``c``'s dtype) and the
refusal of integer dtypes by ``rand``/``randn``: against real torch 2.13.0, values bit for bit (seeded streams)."""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch as gt

real = pytest.importorskip("torch")

CASES = {
    "rand": lambda T, o: T.rand(2, 3, out=o),
    "randn": lambda T, o: T.randn(2, 3, out=o),
    "zeros": lambda T, o: T.zeros(2, 3, out=o),
    "ones": lambda T, o: T.ones(2, 3, out=o),
    "full": lambda T, o: T.full((2, 3), 2.5, out=o),
    "eye": lambda T, o: T.eye(2, 3, out=o),
    "arange": lambda T, o: T.arange(6, out=o.view(-1)),
    "linspace": lambda T, o: T.linspace(-1, 1, 6, out=o.view(-1)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_out_matches_torch(name, dtype):
    seen = []
    for T in (gt, real):
        T.manual_seed(11)
        out = T.zeros(2, 3, dtype=getattr(T, dtype))
        result = CASES[name](T, out)
        assert result is out or result._base is out or name in ("arange", "linspace")
        seen.append((str(out.dtype), out.numpy().copy()))
    assert seen[0][0] == seen[1][0]
    np.testing.assert_array_equal(seen[0][1], seen[1][1])


@pytest.mark.parametrize("expr", ["T.rand(2, dtype=T.int64)", "T.rand(2, dtype=T.bool)", "T.randn(2, dtype=T.int32)",
                                  "T.rand(2, 2, out=T.zeros(2, 2, dtype=T.int64))"])
def test_integer_draws_refused_as_torch(expr):
    errors = []
    for T in (gt, real):
        with pytest.raises(NotImplementedError) as info:
            eval(expr, {"T": T})
        errors.append(str(info.value))
    assert errors[0] == errors[1]
