"""Compiled objects unpickled in other processes: a fresh interpreter, and spawn-started worker pools.

A fresh process has none of this one's loaded modules or linecache entries, and (for C)
possibly no cached shared object: the pickle alone must be enough (with gradc installed).
"""
from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.api import compile as gradc_compile
from gradc.backends.c.build import find_compiler

ROOT = pathlib.Path(__file__).resolve().parents[1]
needs_cc = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")


def loss(w, X, y):
    return np.mean((np.tanh(X @ w) - y) ** 2)


def sines(x):
    return np.sin(x)


def call_grad(compiled, *args):
    """What a worker runs: the unpickled object's gradient."""
    return compiled.grad(*args)


def call(fn, *args):
    return fn(*args)


def data(seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=5)


def reference(seed):
    w, X, y = data(seed)
    return central_gradient(lambda v: loss(v, X, y), w)


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """An empty C build cache for this test (and the processes it starts, which inherit the environment)."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("GRADC_CACHE_DIR", str(cache))
    return cache


LOADER = """
import json, pickle, sys, logging
import numpy as np
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
with open(sys.argv[1], "rb") as fh:
    compiled = pickle.load(fh)
w, X, y = (np.asarray(a) for a in json.loads(sys.argv[2]))
value, grad = compiled.value_and_grad(w, X, y)
print(json.dumps({"value": float(value), "grad": np.asarray(grad).tolist(), "type": type(compiled).__name__,
                  "source": compiled.source}))
"""


def run_fresh(tmp_path, compiled, seed, env=None):
    path = tmp_path / "compiled.pickle"
    path.write_bytes(pickle.dumps(compiled))
    args = json.dumps([a.tolist() for a in data(seed)])
    proc = subprocess.run([sys.executable, "-c", LOADER, str(path), args], capture_output=True, text=True,
                          cwd=ROOT, env=env or os.environ.copy(), timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


@pytest.mark.parametrize("target", ["numpy", "array_api"])
def test_fresh_process_loads_and_calls(tmp_path, target):
    compiled = gradc_compile(loss, *data(0), target=target)
    out, _ = run_fresh(tmp_path, compiled, seed=1)
    w, X, y = data(1)
    assert out["source"] == compiled.source and out["type"] == "Compiled"
    assert np.isclose(out["value"], loss(w, X, y)) and np.allclose(out["grad"], reference(1), atol=1e-6)


@needs_cc
def test_fresh_process_builds_c_when_the_cache_is_empty_then_finds_it(tmp_path, private_cache):
    compiled = gradc_compile(loss, *data(0), target="c")
    elsewhere = tmp_path / "other-cache"
    elsewhere.mkdir(mode=0o700)
    env = dict(os.environ, GRADC_CACHE_DIR=str(elsewhere))
    out, log = run_fresh(tmp_path, compiled, seed=2, env=env)  # the cache it was built in is not this one
    assert out["type"] == "CCompiled" and out["source"] == compiled.source
    assert np.allclose(out["grad"], reference(2), atol=1e-6)
    assert "building C extension" in log or "building C library" in log, log
    assert any(p.suffix == ".so" for p in elsewhere.iterdir())
    out, log = run_fresh(tmp_path, compiled, seed=3, env=env)  # now it is there: loaded, not built
    assert "found in the cache" in log and "building C" not in log, log
    assert np.allclose(out["grad"], reference(3), atol=1e-6)


@pytest.mark.parametrize("target", ["numpy", pytest.param("c", marks=needs_cc)])
def test_process_pool_spawn_workers(target, private_cache):
    compiled = gradc_compile(loss, *data(0), target=target)
    context = multiprocessing.get_context("spawn")  # a fresh interpreter per worker: nothing inherited
    with concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        futures = {seed: pool.submit(call_grad, compiled, *data(seed)) for seed in (4, 5, 6)}
        results = {seed: f.result(timeout=600) for seed, f in futures.items()}
    for seed, grad in results.items():
        assert np.allclose(grad, reference(seed), atol=1e-6)


def test_multiprocessing_pool_sends_modes_and_transforms():
    x = np.array([0.5, -1.0, 2.0])
    jac = gradc_compile(sines, x, mode="jacobian")
    transform = gradc.grad(loss)
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        got_jac, got_grad = pool.starmap(call, [(_jacobian_of, jac, x), (transform, *data(7))])
    assert np.allclose(got_jac, np.diag(np.cos(x)))
    assert np.allclose(got_grad, reference(7), atol=1e-6)


def _jacobian_of(unit, x):
    return unit.jacobian(x)
