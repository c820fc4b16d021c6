"""Random streams under torch and gradc: the values each sampler draws after a seed, bit for bit.

    /work/main/.venv/bin/python tests/facade/spec/gen_random.py torch > tests/facade/spec/random.expected.txt
    python tests/facade/spec/gen_random.py gradc.torch      # the same cases under gradc

A tensor is recorded as ``[dtype, shape, values]`` when it has at most 40 elements, else as
``[dtype, shape, sha256 of its bytes, first 4 values, last 4 values]``: the comparison is exact
either way (``tests/facade/test_random_streams.py``). Sizes 1..40, 100 and 1000 cover torch's
serial normal sampler (fewer than 16 values), its blocks of 16 and the redrawn last block.
"""
from __future__ import annotations

import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_runner  # noqa: E402

CASES, case = spec_runner.registry()
SIZES = list(range(1, 41)) + [100, 1000]
SEEDS = (0, 1, 42)


def t(x):
    """A tensor as exact data: all values when small, a digest of the bytes and its ends when large."""
    dtype = str(x.dtype).replace("torch.", "")
    values = x.detach().reshape(-1)
    if values.numel() <= 40:
        return [dtype, list(x.shape), values.tolist()]
    raw = values.numpy().tobytes()
    return [dtype, list(x.shape), hashlib.sha256(raw).hexdigest(), values[:4].tolist(), values[-4:].tolist()]


def _grid(T, draw):
    """``draw(T, n, dtype)`` after ``manual_seed(seed)`` for every seed, size and float dtype."""
    out = {}
    for seed in SEEDS:
        for name, dtype in (("float32", T.float32), ("float64", T.float64)):
            for n in SIZES:
                T.manual_seed(seed)
                out[f"{seed}/{name}/{n}"] = t(draw(T, n, dtype))
    return out


@case
def randn_grid(T):
    return _grid(T, lambda T, n, dtype: T.randn(n, dtype=dtype))


@case
def rand_grid(T):
    return _grid(T, lambda T, n, dtype: T.rand(n, dtype=dtype))


@case
def randn_shapes(T):
    T.manual_seed(0)
    return [t(T.randn(4, 4)), t(T.randn(2, 3, 5)), t(T.randn(())), t(T.randn(0)), t(T.randn(3, 7))]


@case
def randn_sequence_keeps_cached_normal(T):
    """The serial sampler keeps the second value of a pair for the next call (also across sizes)."""
    T.manual_seed(0)
    return [t(T.randn(3)), t(T.randn(5)), t(T.randn(20)), t(T.randn(1)), t(T.randn(15)), t(T.randn(17))]


@case
def manual_seed_drops_cached_normal(T):
    T.manual_seed(0)
    T.randn(1)
    T.manual_seed(0)
    return t(T.randn(3))


@case
def normal_mean_std(T):
    out = {}
    for mean, std in ((0.0, 1.0), (0.5, 2.0), (-3.0, 0.01), (1.0, 0.0)):
        for name, dtype in (("float32", T.float32), ("float64", T.float64)):
            for n in (1, 7, 15, 16, 17, 33, 100, 1000):
                T.manual_seed(7)
                out[f"{mean}/{std}/{name}/{n}"] = t(T.empty(n, dtype=dtype).normal_(mean, std))
    return out


@case
def strided_fills(T):
    """A tensor that is not contiguous is filled by torch's serial kernels, in the elements' memory order."""
    out = []
    for fill in (lambda x: x.normal_(), lambda x: x.normal_(1.0, 2.0), lambda x: x.uniform_(-1, 2),
                 lambda x: x.bernoulli_(0.4), lambda x: x.exponential_(2.0), lambda x: x.random_(10)):
        for make in (lambda: T.zeros(20, 4).t(), lambda: T.zeros(10, 6)[:, 1:4], lambda: T.zeros(3, 8)[:, ::2]):
            T.manual_seed(12)
            x = make()
            fill(x)
            out.append(t(x.contiguous()))
    return out


@case
def uniform_bounds(T):
    out = {}
    for a, b in ((0.0, 1.0), (-2.5, 3.1), (1e-3, 7.0), (-0.3, -0.1), (5.0, 5.0)):
        for name, dtype in (("float32", T.float32), ("float64", T.float64)):
            for n in (1, 16, 100):
                T.manual_seed(3)
                out[f"{a}/{b}/{name}/{n}"] = t(T.empty(n, dtype=dtype).uniform_(a, b))
    return out


@case
def randint_ranges(T):
    out = {}
    for low, high in ((0, 2), (0, 10), (-5, 5), (3, 1000), (0, 2 ** 32), (-(2 ** 40), 2 ** 40)):
        T.manual_seed(11)
        out[f"{low}/{high}"] = t(T.randint(low, high, (50,)))
    T.manual_seed(11)
    out["high_only"] = t(T.randint(6, (3, 4)))
    return out


@case
def randperm_sizes(T):
    out = {}
    for n in SIZES:
        T.manual_seed(5)
        out[str(n)] = t(T.randperm(n))
    return out


@case
def random_fills(T):
    out = {}
    for name, dtype in (("float32", T.float32), ("float64", T.float64), ("int64", T.int64), ("int32", T.int32)):
        T.manual_seed(2)
        out[name] = t(T.empty(20, dtype=dtype).random_())
        out[name + "/to"] = t(T.empty(20, dtype=dtype).random_(7))
        out[name + "/from_to"] = t(T.empty(20, dtype=dtype).random_(-3, 9))
    return out


@case
def bernoulli_and_exponential(T):
    out = {}
    for name, dtype in (("float32", T.float32), ("float64", T.float64)):
        for p in (0.0, 0.3, 0.5, 1.0):
            T.manual_seed(9)
            out[f"bernoulli_/{name}/{p}"] = t(T.empty(64, dtype=dtype).bernoulli_(p))
        T.manual_seed(9)
        probs = T.rand(50, dtype=dtype)
        out[f"bernoulli/{name}"] = t(T.bernoulli(probs))
        for lam in (1.0, 1.5, 0.3):
            T.manual_seed(9)
            out[f"exponential_/{name}/{lam}"] = t(T.empty(100, dtype=dtype).exponential_(lam))
    return out


@case
def torch_normal(T):
    T.manual_seed(4)
    mean, std = T.arange(6.0), T.rand(6) + 0.5
    a = T.normal(mean, std)
    b = T.normal(mean, 2.0)
    c = T.normal(1.0, std)
    d = T.normal(2.0, 3.0, size=(20,))
    return [t(a), t(b), t(c), t(d)]


@case
def multinomial_draws(T):
    T.manual_seed(6)
    w = T.tensor([0.1, 0.0, 2.0, 1.0, 0.5])
    rows = T.rand(3, 8)
    return [t(T.multinomial(w, 30, replacement=True)), t(T.multinomial(w, 4)), t(T.multinomial(w, 1)),
            t(T.multinomial(rows, 5, replacement=True)), t(T.multinomial(rows, 3))]


@case
def generator_objects(T):
    g = T.Generator().manual_seed(123)
    a = T.randn(20, generator=g)
    b = T.rand(5, generator=g)
    T.manual_seed(123)
    c = T.randn(20)
    return [t(a), t(b), t(c), g.initial_seed()]


@case
def rng_state_round_trip(T):
    T.manual_seed(8)
    T.randn(3)  # leaves a cached normal in the state
    state = T.get_rng_state()
    a = T.randn(5)
    T.set_rng_state(state)
    return [t(a), t(T.randn(5))]


def _init_cases(T):
    init = T.nn.init
    return [("uniform_", (33,), {"a": -0.2, "b": 0.7}), ("normal_", (50,), {"mean": 1.0, "std": 0.02}),
            ("xavier_uniform_", (5, 7), {}), ("xavier_uniform_", (16, 8, 3), {"gain": init.calculate_gain("relu")}),
            ("xavier_normal_", (40, 3), {"gain": 2.0}), ("kaiming_uniform_", (6, 4, 3, 3), {"a": 5 ** 0.5}),
            ("kaiming_uniform_", (10, 20), {}), ("kaiming_normal_", (17, 5), {"mode": "fan_out",
                                                                              "nonlinearity": "relu"}),
            ("kaiming_normal_", (3, 4), {}), ("trunc_normal_", (100,), {"std": 0.02}),
            ("trunc_normal_", (300,), {"mean": 0.3, "std": 1.0, "a": -0.1, "b": 0.2}),
            ("trunc_normal_", (8, 8), {"a": -1.0, "b": 1.0}), ("constant_", (4,), {"val": 0.25}),
            ("ones_", (3,), {}), ("zeros_", (3,), {}), ("eye_", (3, 4), {})]


@case
def nn_init(T):
    out = {}
    for i, (name, shape, kw) in enumerate(_init_cases(T)):
        for dname, dtype in (("float32", T.float32), ("float64", T.float64)):
            T.manual_seed(3)
            w = T.empty(*shape, dtype=dtype)
            getattr(T.nn.init, name)(w, **kw)
            out[f"{i}/{name}/{dname}"] = t(w)
    return out


@case
def nn_init_gains_and_errors(T):
    init = T.nn.init
    gains = [init.calculate_gain(n) for n in ("linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu")]
    gains.append(init.calculate_gain("leaky_relu", 0.2))
    errors = []
    for f in (lambda: init.xavier_uniform_(T.empty(3)), lambda: init.calculate_gain("nope"),
              lambda: init.kaiming_uniform_(T.empty(3, 4), mode="fan_sideways")):
        try:
            f()
            errors.append(None)
        except ValueError as e:
            errors.append(str(e))
    return [gains, errors]


@case
def layer_defaults_then_draws(T):
    """A Linear layer's initialisation consumes the stream as torch's does: the next draws agree too."""
    T.manual_seed(0)
    layer = T.nn.Linear(20, 7)
    return [t(layer.weight), t(layer.bias), t(T.randn(16)), t(T.rand(3))]


if __name__ == "__main__":
    sys.exit(spec_runner.main(CASES, sys.argv))
