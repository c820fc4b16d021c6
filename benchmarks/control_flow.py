#!/usr/bin/env python3
"""Loops kept as loops: gradc's emitted gradient of a loop against hand-written NumPy with its own tape, and peers.

Workloads (issue 14's):

* ``simulate``: explicit Euler, ``x = x + dt * (-k * x ** 3 + sin(x))`` for T = 10,000 steps on a state
  of 100 values, loss ``sum(x**2)``, gradient with respect to ``x0`` and ``k``. Reported:
  compile time (trace, AD, passes, emit, load), emitted module lines, the gradient against the
  unrolled compile at 300 steps (relative difference), gradient time against a hand-written
  NumPy loop that keeps its own tape (and of the C target's, where a C compiler is found), and the
  tape's bytes against T x the carried state; then the time and states kept under each checkpoint policy.
* ``rnn``: a tanh cell, hidden 64, input 32, T = 1,000: value and gradient per call against
  torch eager (a Python loop with autograd) and JAX (``jit(value_and_grad)`` of ``lax.scan``),
  where they import (a scratch venv with ``torch==2.13.0`` CPU and ``jax``).

Medians of interleaved runs (``run.py``'s harness), in one process.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/control_flow.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import compile_ms as compile_median_ms  # noqa: E402
from run import interleaved  # noqa: E402

import gradc  # noqa: E402

N_STATE, STEPS, HIDDEN, INPUT, T_RNN = 100, 10_000, 64, 32, 1_000


def make_simulate(steps):
    def simulate(x0, k, dt):
        x = x0
        for _ in range(steps):
            x = x + dt * (-k * x ** 3 + np.sin(x))
        return np.sum(x ** 2)
    return simulate


def simulate_grad_by_hand(x0, k, dt, steps):
    """The textbook adjoint: a forward loop writing its own tape, a backward loop reading it."""
    x = x0
    tape = np.empty((steps,) + x0.shape)
    for t in range(steps):
        tape[t] = x
        x = x + dt * (-k * x ** 3 + np.sin(x))
    x_bar, k_bar = 2.0 * x, np.zeros_like(x0)
    for t in range(steps - 1, -1, -1):
        xt = tape[t]
        k_bar -= dt * x_bar * xt ** 3
        x_bar = x_bar + dt * x_bar * (np.cos(xt) - 3.0 * k * xt * xt)
    return x_bar, k_bar.sum()


def rnn_loss(W, U, b, xs):
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h * h)


def simulate_table(args):
    steps = 300 if args.quick else STEPS
    rng = np.random.default_rng(0)
    x0, k, dt = rng.uniform(-1, 1, N_STATE), 0.7, 1e-3
    simulate = make_simulate(steps)
    t0 = time.perf_counter()
    compiled = gradc.compile(simulate, x0, k, dt, wrt=("x0", "k"))
    first_ms = (time.perf_counter() - t0) * 1e3  # the first in this process: capture, imports, caches
    compile_ms = compile_median_ms(simulate, (x0, k, dt), ("x0", "k"), 5)
    lines = len(compiled.source.splitlines())
    by_hand = simulate_grad_by_hand(x0, k, dt, steps)
    got = compiled.grad(x0, k, dt)
    err = max(np.max(np.abs(got[0] - by_hand[0]) / np.max(np.abs(by_hand[0]))),
              abs(got[1] - by_hand[1]) / abs(by_hand[1]))
    assert err < 1e-10, err
    # against the unrolled trace at 300 steps (the loop unrolled by calling the body in Python)
    short = make_simulate(300)
    rolled = gradc.compile(short, x0, k, dt, wrt=("x0", "k")).grad(x0, k, dt)

    flat = gradc.grad(lambda x0, k, dt: _unrolled(x0, k, dt, 300), wrt=("x0", "k"))(x0, k, dt)
    unrolled_err = max(np.max(np.abs(rolled[0] - flat[0]) / np.max(np.abs(flat[0]))),
                       abs(rolled[1] - flat[1]) / abs(flat[1]))
    fns = [lambda: compiled.grad(x0, k, dt), lambda: simulate_grad_by_hand(x0, k, dt, steps)]
    in_c = _c_compile(simulate, (x0, k, dt), ("x0", "k"))  # the same loops as C (None without a compiler)
    if in_c is not None:
        got_c = in_c.grad(x0, k, dt)
        assert np.allclose(got_c[0], got[0], rtol=1e-10, atol=0) and np.isclose(got_c[1], got[1], rtol=1e-10)
        fns.append(lambda: in_c.grad(x0, k, dt))
    times = interleaved(fns, min_time=0.2, repeat=5 if args.quick else 9)
    tape = _tape_bytes(compiled.grad_graph)  # what the emitted forward sweep allocates, read off the graph
    print(f"simulate, T = {steps} steps, state of {N_STATE}")
    print(f"  compile {compile_ms:.0f} ms (median of 5; the first in the process {first_ms:.0f} ms); "
          f"module {lines} lines; gradient vs hand-written adjoint: {err:.1e}; "
          f"vs the unrolled compile at 300 steps: {unrolled_err:.1e}")
    print(f"  tape: {tape / 1e6:.1f} MB = {tape / (steps * x0.nbytes):g} x T x {x0.nbytes} bytes of carried state")
    print(f"  gradient: gradc {times[0] * 1e3:.2f} ms, hand-written NumPy {times[1] * 1e3:.2f} ms, "
          f"ratio {times[0] / times[1]:.2f}")
    if in_c is not None:
        print(f"  gradient in C (target='c', the loops kept): {times[2] * 1e3:.2f} ms, ratio to hand-written NumPy "
              f"{times[2] / times[1]:.2f}")


def _tape_bytes(graph):
    """Bytes of the tapes (``*_tape`` stacks) a gradient graph's loops write."""
    return sum(int(np.prod(e.out.type.shape)) * e.out.type.np_dtype.itemsize for e in graph.eqns
               if e.op == "element" and e.out.name.endswith("_tape"))


def _c_compile(f, args, wrt):
    """``gradc.compile(..., target="c")``, or None where no C compiler is found."""
    from gradc.backends.c import build

    if build.find_compiler() is None:
        return None
    return gradc.compile(f, *args, wrt=wrt, target="c")


def checkpoint_table(args):
    """simulate's gradient under each ``checkpoint=`` policy: states kept for the reverse sweep, time against none."""
    steps = 300 if args.quick else STEPS
    rng = np.random.default_rng(0)
    x0, k, dt = rng.uniform(-1, 1, N_STATE), 0.7, 1e-3
    simulate = make_simulate(steps)
    segment = int(np.ceil(np.sqrt(steps)))
    rows = [("none (tape every step)", None, steps), ("sqrt", "sqrt", steps // segment + segment),
            ("binomial(snapshots=10)", gradc.binomial(snapshots=10), 10)]
    compiled = [gradc.compile(simulate, x0, k, dt, wrt=("x0", "k"), checkpoint=policy) for _, policy, _ in rows]
    ref = compiled[0].grad(x0, k, dt)
    for c in compiled[1:]:
        assert np.allclose(c.grad(x0, k, dt)[0], ref[0], rtol=1e-12, atol=0)
    times = interleaved([lambda c=c: c.grad(x0, k, dt) for c in compiled], min_time=0.2, repeat=3 if args.quick else 5)
    print(f"simulate's gradient by checkpoint policy, T = {steps}: states of {x0.nbytes} bytes kept for the "
          "reverse sweep")
    for (name, _, states), t in zip(rows, times):
        print(f"  {name:24s} {states:6d} states   {t * 1e3:8.2f} ms   time vs none {t / times[0]:.2f}")


def _unrolled(x0, k, dt, steps):
    """The same recurrence with no loop left for gradc to keep: each step an explicit call (a static list)."""
    x = x0
    for _ in [None] * steps:  # iterating over a list: the capture leaves it to Python, so it unrolls
        x = x + dt * (-k * x ** 3 + np.sin(x))
    return np.sum(x ** 2)


def rnn_table(args):
    T = 100 if args.quick else T_RNN
    rng = np.random.default_rng(1)
    W = rng.standard_normal((HIDDEN, HIDDEN)) * 0.1
    U = rng.standard_normal((HIDDEN, INPUT)) * 0.1
    b = rng.standard_normal(HIDDEN) * 0.1
    xs = rng.standard_normal((T, INPUT))
    compiled = gradc.compile(rnn_loss, W, U, b, xs, wrt=("W", "U", "b"))
    names, fns = ["gradc NumPy"], [lambda: compiled.value_and_grad(W, U, b, xs)]
    ref_value, ref_grads = compiled.value_and_grad(W, U, b, xs)
    in_c = _c_compile(rnn_loss, (W, U, b, xs), ("W", "U", "b"))
    if in_c is not None:
        assert np.allclose(in_c.value_and_grad(W, U, b, xs)[1][0], ref_grads[0], rtol=1e-9, atol=1e-12)
        names.append("gradc C")
        fns.append(lambda: in_c.value_and_grad(W, U, b, xs))
    try:
        import torch
        Wt, Ut, bt = (torch.tensor(a, requires_grad=True) for a in (W, U, b))
        xt = torch.tensor(xs)

        def torch_step():
            h = torch.zeros(HIDDEN, dtype=torch.float64)
            for t in range(T):
                h = torch.tanh(Wt @ h + Ut @ xt[t] + bt)
            loss = (h * h).sum()
            grads = torch.autograd.grad(loss, (Wt, Ut, bt))
            return loss, grads
        loss, grads = torch_step()
        assert np.allclose(grads[0].numpy(), ref_grads[0], rtol=1e-9, atol=1e-12)
        names.append("torch eager")
        fns.append(torch_step)
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)

        def jax_loss(W, U, b, xs):
            def cell(h, x):
                return jnp.tanh(W @ h + U @ x + b), None
            h, _ = jax.lax.scan(cell, jnp.zeros(HIDDEN), xs)
            return jnp.sum(h * h)
        vg = jax.jit(jax.value_and_grad(jax_loss, argnums=(0, 1, 2)))
        value, grads = vg(W, U, b, xs)
        assert np.allclose(np.asarray(grads[0]), ref_grads[0], rtol=1e-9, atol=1e-12)
        names.append("JAX jit(lax.scan)")
        fns.append(lambda: jax.block_until_ready(vg(W, U, b, xs)))
    except ImportError:
        pass
    times = interleaved(fns, min_time=0.2, repeat=5 if args.quick else 9)
    print(f"rnn, tanh cell, hidden {HIDDEN}, input {INPUT}, T = {T}: value and gradient per call")
    for name, t in zip(names, times):
        print(f"  {name:20s} {t * 1e3:8.2f} ms   ratio to gradc {t / times[0]:.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    args = parser.parse_args(argv)
    simulate_table(args)
    checkpoint_table(args)
    rnn_table(args)


if __name__ == "__main__":
    main()
