"""The eager Tensor facade (forward + backward) against PyTorch eager and hand-written NumPy.

Four tables, every callable of a table timed interleaved in this one process:

1. seed and logreg (float64, the data of ``run.py``): a training-loop step (clear the
   parameters' grads, the loss, ``backward()``) against hand-written NumPy and torch.
2. Tiny tensors, per step of a 30,000-step run on 2,000-element tensors: the polynomial fit of
   "Learning PyTorch with Examples" (autograd, manual SGD updates under ``no_grad``) and its
   dynamic net (an ``nn.Module`` with a data-independent random depth, ``optim.SGD`` with momentum).
3. The MLP of the "Optimizing model parameters" tutorial (Flatten, Linear(784, 512), ReLU,
   Linear(512, 512), ReLU, Linear(512, 10), CrossEntropyLoss, SGD lr 1e-3, batch 64, float32):
   one training step eager and with ``torch.compile`` (the model compiled), gradc and torch.
4. GradBench's own PyTorch tools for lstm and ht (``facade_gradbench.py`` reads them from the GradBench
   mirror), run unchanged with ``torch`` bound to the facade and to torch: lstm's objective and
   gradient (2 layers, ``--lstm-chars`` characters; GradBench's smallest size is 1024) and ht's
   objective and Jacobian (the eval's first instance: 100 correspondences, complicated variant, big
   model; the tool's Jacobian is one ``backward(retain_graph=True)`` per output, 300 of them), each
   checked against torch's result.

Times are medians of CPU time of this process (steadier than wall time on a shared machine),
with Python's garbage collector at its defaults (docs/facade.md: the facade leaves it alone).
PyTorch is timed only when ``torch==2.13.0`` is importable (install that pinned CPU build in
a scratch venv; never an unpinned torch), with one thread. ``--no-torch-compile`` skips
torch.compile (its first call needs a C compiler and takes tens of seconds).

    OPENBLAS_NUM_THREADS=1 python benchmarks/facade.py [--repeat 9] [--min-time 0.05] [--no-torch-compile]
        [--only training|tiny|mlp|gradbench] [--lstm-chars 256]

Last measured without torch importable? Then compare with the figures in benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import gradc.torch as facade  # noqa: E402 - the Tensor facade, written against as torch is
from benchmarks.run import calibrate, check  # noqa: E402
from benchmarks.workloads import make_data, reference  # noqa: E402


def tensor_step(lib, name, params, consts):
    """A training-loop step written once against a torch-like module ``lib``."""
    f = lib.nn.functional
    x = lib.tensor(consts["x"], dtype=lib.float64)
    y = lib.tensor(consts["y"], dtype=lib.float64)
    w, b = (lib.tensor(p, dtype=lib.float64, requires_grad=True) for p in params)

    def step():
        w.grad = None
        b.grad = None
        loss = f.binary_cross_entropy_with_logits(lib.matmul(x, w) + b, y)
        loss.backward()
        return loss, (w.grad, b.grad)

    def as_numpy(result):
        loss, grads = result
        return float(loss.detach()), tuple(g.detach().numpy() for g in grads)
    return step, as_numpy


def polynomial_step(lib):
    """One step of the polynomial fit: y = a + b x + c x^2 + d x^3, autograd, SGD by hand under no_grad."""
    x = lib.linspace(-math.pi, math.pi, 2000, dtype=lib.float32)
    y = lib.sin(x)
    lib.manual_seed(0)
    a, b, c, d = (lib.randn((), dtype=lib.float32, requires_grad=True) for _ in range(4))
    lr = 1e-6

    def step():
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with lib.no_grad():
            for p in (a, b, c, d):
                p -= lr * p.grad
                p.grad = None
        return loss
    return step


def dynamic_net_step(lib):
    """One step of the dynamic net: a cubic plus 0-2 extra terms sharing one weight (a seeded random depth)."""
    x = lib.linspace(-math.pi, math.pi, 2000, dtype=lib.float32)
    y = lib.sin(x)
    lib.manual_seed(0)
    depth = random.Random(0)

    class DynamicNet(lib.nn.Module):
        def __init__(self):
            super().__init__()
            for name in "abcde":
                setattr(self, name, lib.nn.Parameter(lib.randn(())))

        def forward(self, x):
            out = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, depth.randint(4, 6)):
                out = out + self.e * x ** exp
            return out

    model = DynamicNet()
    criterion = lib.nn.MSELoss(reduction="sum")
    optimizer = lib.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)

    def step():
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss
    return step


def mlp_steps(lib, compiled, data):
    """A training step of the tutorial's MLP, eager or with the model compiled."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    forward = lib.compile(model) if compiled else model
    loss_fn = nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(model.parameters(), lr=1e-3)
    X, y = lib.from_numpy(data[0]), lib.from_numpy(data[1])

    def step():
        loss = loss_fn(forward(X), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss
    return step


def interleaved(fns, min_time, repeat, best=False):
    """Median (with ``best``: (median, min)) per-call CPU seconds of each callable, timed in alternating order.

    CPU time of this process (``time.process_time``), not wall time: on a shared machine the
    wall clock also counts the time other processes hold the cores. Fair to torch, which is
    limited to one thread here.
    """
    numbers = [calibrate(fn, min_time) for fn in fns]
    times = [[] for _ in fns]
    for r in range(repeat):
        for i in (range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))):
            times[i].append(timeit.timeit(fns[i], number=numbers[i], timer=time.process_time) / numbers[i])
    if best:
        return [(statistics.median(t), min(t)) for t in times]
    return [statistics.median(t) for t in times]


def _torch():
    try:
        import torch
    except ImportError:
        return None
    if not torch.__version__.startswith("2.13.0"):
        return None
    torch.set_num_threads(1)
    return torch


def _us(t):
    return f"{t * 1e6:.1f}" if t else "-"


def _ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def training_table(peers, a):
    print("| workload | hand NumPy µs | gradc facade µs | torch µs | facade ÷ torch |")
    print("|---|---:|---:|---:|---:|")
    for name in ("seed", "logreg"):
        params, consts = make_data(name)
        ref = reference(name, consts)
        expected = ref(*params)
        steps = {"gradc": tensor_step(facade, name, params, consts)}
        steps.update({k: tensor_step(lib, name, params, consts) for k, lib in peers.items()})
        for label, (step, as_numpy) in steps.items():
            check(f"{name}/{label}", expected, as_numpy(step()))
        labels = ["numpy"] + list(steps)
        fns = [lambda ref=ref, params=params: ref(*params)] + [s for s, _ in steps.values()]
        times = dict(zip(labels, interleaved(fns, a.min_time, a.repeat)))
        torch_us = times.get("torch")
        print(f"| {name} | {_us(times['numpy'])} | {_us(times['gradc'])} | {_us(torch_us)} | "
              f"{_ratio(times['gradc'], torch_us)} |")


def tiny_table(peers, a):
    print("\n| tiny tensors (per step) | gradc µs | torch µs | gradc ÷ torch | ratio of minima | 30,000 steps, "
          "gradc s |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, make in (("polynomial, autograd + no_grad SGD", polynomial_step),
                        ("dynamic net, optim.SGD", dynamic_net_step)):
        libs = {"gradc": facade, **peers}
        steps = {k: make(lib) for k, lib in libs.items()}
        losses = {k: float(s().detach()) for k, s in steps.items()}
        if "torch" in losses and abs(losses["torch"] - losses["gradc"]) > 1e-4 * abs(losses["torch"]):
            raise AssertionError(f"{label}: gradc loss {losses['gradc']} != torch {losses['torch']}")
        both = dict(zip(steps, interleaved(list(steps.values()), a.min_time, a.repeat, best=True)))
        times = {k: v[0] for k, v in both.items()}
        t = times.get("torch")
        best = _ratio(both["gradc"][1], both["torch"][1]) if t else "-"
        print(f"| {label} | {_us(times['gradc'])} | {_us(t)} | {_ratio(times['gradc'], t)} | {best} | "
              f"{times['gradc'] * 30000:.1f} |")


def mlp_table(peers, a):
    rng = np.random.default_rng(0)
    data = (rng.standard_normal((64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 64))
    labels = {"gradc eager": (facade, False), "gradc compiled": (facade, True)}
    for k, lib in peers.items():
        labels[f"{k} eager"] = (lib, False)
        if not a.no_torch_compile:
            labels[f"{k}.compile"] = (lib, True)
    steps = {k: mlp_steps(lib, compiled, data) for k, (lib, compiled) in labels.items()}
    first = {k: float(s().detach()) for k, s in steps.items()}  # compiles here, outside the timing
    for k, v in first.items():
        if abs(v - first["gradc eager"]) > 1e-4 * abs(v):
            raise AssertionError(f"mlp: {k} loss {v} != gradc eager {first['gradc eager']}")
    times = dict(zip(steps, interleaved(list(steps.values()), a.min_time, a.repeat)))
    base = times["gradc eager"]
    print("\n| MLP training step (batch 64, float32) | ms | ÷ gradc eager |")
    print("|---|---:|---:|")
    for k, t in times.items():
        print(f"| {k} | {t * 1e3:.2f} | {t / base:.2f} |")


def gradbench_table(peers, a):
    """lstm and ht through GradBench's PyTorch tools: medians of single calls, interleaved, in this process."""
    from benchmarks import facade_gradbench as gb
    libs = {"gradc": facade, **peers}
    tools = {k: gb.load(lib) for k, lib in libs.items()}
    inputs = {"lstm": gb.lstm_input(tools["gradc"], 2, a.lstm_chars), "ht": gb.hand_input(tools["gradc"])}
    print("\n| GradBench PyTorch tool (unchanged) | gradc ms | torch ms | gradc ÷ torch |")
    print("|---|---:|---:|---:|")
    for name, function, label, repeat in (
            ("lstm", "calculate_objective", f"lstm objective (l=2, c={a.lstm_chars})", a.repeat),
            ("lstm", "calculate_jacobian", f"lstm gradient (l=2, c={a.lstm_chars})", a.repeat),
            ("ht", "calculate_objective", "ht objective (hand1, 100 points)", a.repeat),
            ("ht", "calculate_jacobian", "ht Jacobian (hand1, 300 backward passes)", min(a.repeat, 3))):
        objs = {k: gb.prepared(t, name, inputs[name]) for k, t in tools.items()}
        fns = {k: getattr(o, function) for k, o in objs.items()}
        outs = {}
        for k, fn in fns.items():
            fn()
            outs[k] = gb.result(objs[k], name, function)
        if "torch" in outs:
            # ht's rotations start from float32 ``torch.eye(3)``: the two agree to float32 rounding there
            tol = (1e-9, 1e-12) if name == "lstm" else (1e-4, 1e-6)
            np.testing.assert_allclose(outs["gradc"], outs["torch"], rtol=tol[0], atol=tol[1], err_msg=label)
        times = {k: [] for k in fns}
        for r in range(repeat):
            for k in (list(fns) if r % 2 == 0 else reversed(list(fns))):
                start = time.process_time()
                fns[k]()
                times[k].append(time.process_time() - start)
        med = {k: statistics.median(v) for k, v in times.items()}
        t = med.get("torch")
        print(f"| {label} | {med['gradc'] * 1e3:.1f} | {f'{t * 1e3:.1f}' if t else '-'} | {_ratio(med['gradc'], t)} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--no-torch-compile", action="store_true")
    ap.add_argument("--only", choices=("training", "tiny", "mlp", "gradbench"), help="run one table")
    ap.add_argument("--lstm-chars", type=int, default=256, help="characters of the lstm workload")
    a = ap.parse_args(argv)
    torch = _torch()
    peers = {"torch": torch} if torch else {}
    print(f"torch: {'2.13.0 (1 thread)' if peers else 'not installed: pip install torch==2.13.0'}")
    for name, table in (("training", training_table), ("tiny", tiny_table), ("mlp", mlp_table),
                        ("gradbench", gradbench_table)):
        if a.only in (None, name):
            table(peers, a)


if __name__ == "__main__":
    main()
