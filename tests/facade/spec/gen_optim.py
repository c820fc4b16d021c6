#!/usr/bin/env python3
"""Conformance cases for torch.optim and torch.optim.lr_scheduler; prints one line per case.

    /tmp/torchenv/bin/python tests/facade/spec/gen_optim.py torch > tests/facade/spec/optim.expected.txt

(torch 2.13.0+cpu). Trajectories: a small tanh regression, 20 steps of each optimiser
configuration in float64 and float32, parameters recorded after every step.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spec_runner import main, registry  # noqa: E402

CASES, case = registry()

X = [[0.5, -1.2, 0.3], [1.5, 0.2, -0.7], [-0.3, 0.8, 1.1], [0.9, -0.4, 0.6]]
Y = [[0.2, -0.1], [0.7, 0.3], [-0.5, 0.9], [0.1, 0.4]]
W0 = [[0.1, -0.2, 0.3], [0.4, 0.05, -0.15]]
B0 = [0.01, -0.02]

CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.1, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1, "weight_decay": 0.01}),
]


def params(T, dtype):
    return (T.nn.Parameter(T.tensor(W0, dtype=dtype)), T.nn.Parameter(T.tensor(B0, dtype=dtype)))


def loss_of(T, w, b):
    x, y = T.tensor(X, dtype=w.dtype), T.tensor(Y, dtype=w.dtype)
    return ((x @ w.t() + b).tanh() - y).pow(2).mean()


def values(ps):
    return [v for p in ps for v in p.detach().reshape(-1).tolist()]


def train(T, opt, ps, steps):
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss_of(T, *ps).backward()
        opt.step()
        out.append(values(ps))
    return out


def _trajectory_case(prefix, index, name, kwargs):
    def run(T):
        dtype = T.float64 if prefix == "f64" else T.float32
        ps = params(T, dtype)
        return train(T, getattr(T.optim, name)(ps, **kwargs), ps, 20)
    run.__name__ = f"{prefix}_{name.lower()}_{index}"
    case(run)


def _fed_case(index, name, kwargs):
    """Gradients fed in (the same float32 numbers for both libraries): the optimiser's arithmetic alone."""
    def run(T):
        ps = params(T, T.float32)
        opt = getattr(T.optim, name)(ps, **kwargs)
        out = []
        for step in range(20):
            for j, p in enumerate(ps):
                n = p.numel()
                g = [math.sin(1.3 * step + 0.7 * (i + 3 * j)) * (1 + 0.1 * i) for i in range(n)]
                p.grad = T.tensor(g, dtype=T.float32).reshape(p.shape)
            opt.step()
            out.append(values(ps))
        return out
    run.__name__ = f"fed32_{name.lower()}_{index}"
    case(run)


for _prefix in ("f64", "f32"):
    for _i, (_name, _kwargs) in enumerate(CONFIGS):
        _trajectory_case(_prefix, _i, _name, _kwargs)
for _i, (_name, _kwargs) in enumerate(CONFIGS):
    _fed_case(_i, _name, _kwargs)


@case
def f64_param_groups(T):
    w, b = params(T, T.float64)
    opt = T.optim.SGD([{"params": [w]}, {"params": b, "lr": 0.01}], lr=0.1, momentum=0.9)
    trajectory = train(T, opt, (w, b), 20)
    return [trajectory, [g["lr"] for g in opt.param_groups], [len(g["params"]) for g in opt.param_groups]]


@case
def f64_state_dict_resume(T):
    ps = params(T, T.float64)
    opt = T.optim.Adam(ps, lr=0.05, amsgrad=True)
    train(T, opt, ps, 10)
    saved = opt.state_dict()
    copies = tuple(T.nn.Parameter(p.detach().clone()) for p in ps)
    fresh = T.optim.Adam(copies, lr=0.5)
    fresh.load_state_dict(saved)
    return [fresh.param_groups[0]["lr"], train(T, fresh, copies, 10)[-1], train(T, opt, ps, 10)[-1]]


@case
def state_dict_layout(T):
    out = []
    for name, kwargs in [("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {}),
                         ("AdamW", {"amsgrad": True}), ("RMSprop", {"momentum": 0.9, "centered": True}),
                         ("Adagrad", {})]:
        ps = params(T, T.float32)
        opt = getattr(T.optim, name)(ps, **kwargs)
        before = {k: sorted(v) for k, v in opt.state_dict()["state"].items()}
        train(T, opt, ps, 2)
        sd = opt.state_dict()
        state = {k: {n: (repr(v) if n == "step" else [str(v.dtype), list(v.shape)]) for n, v in s.items()}
                 for k, s in sd["state"].items()}
        out.append([name, before, state, sd["param_groups"]])
    return out


@case
def optimizer_repr(T):
    ps = params(T, T.float32)
    return [repr(T.optim.SGD(ps, lr=0.1, momentum=0.9)), repr(T.optim.Adam(ps)),
            repr(T.optim.SGD([{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.5}], lr=0.1))]


@case
def zero_grad_modes(T):
    ps = params(T, T.float32)
    opt = T.optim.SGD(ps, lr=0.1)
    loss_of(T, *ps).backward()
    opt.zero_grad(set_to_none=False)
    kept = [p.grad.tolist() for p in ps]
    loss_of(T, *ps).backward()
    opt.zero_grad()
    return [kept, [p.grad is None for p in ps]]


@case
def optimizer_errors(T):
    w, b = params(T, T.float32)
    out = []
    for make in (lambda: T.optim.SGD([], lr=0.1), lambda: T.optim.SGD([w, w * 2], lr=0.1),
                 lambda: T.optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1),
                 lambda: T.optim.SGD([w], lr=-1.0), lambda: T.optim.Adam([w], betas=(1.0, 0.9)),
                 lambda: T.optim.SGD([w], lr=0.1, nesterov=True), lambda: T.optim.SGD(w, lr=0.1)):
        try:
            make()
            out.append("NO ERROR")
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {e}")
    return out


def _lrs(T, make, steps, groups=1):
    ps = params(T, T.float32)
    opt = T.optim.SGD([{"params": [p]} for p in ps[:groups]] if groups > 1 else ps[:1], lr=0.1)
    sched = make(T.optim.lr_scheduler, opt)
    out = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr() + [g["lr"] for g in opt.param_groups])
    return out


@case
def sched_steplr(T):
    return _lrs(T, lambda S, o: S.StepLR(o, step_size=3, gamma=0.5), 12)


@case
def sched_steplr_default_gamma(T):
    return _lrs(T, lambda S, o: S.StepLR(o, 2), 7)


@case
def sched_cosine(T):
    return _lrs(T, lambda S, o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01), 25)


@case
def sched_cosine_groups(T):
    return _lrs(T, lambda S, o: S.CosineAnnealingLR(o, T_max=7), 16, groups=2)


@case
def sched_others(T):
    return [_lrs(T, lambda S, o: S.ExponentialLR(o, gamma=0.9), 6),
            _lrs(T, lambda S, o: S.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.5), 7),
            _lrs(T, lambda S, o: S.LambdaLR(o, lambda e: 1.0 / (e + 1)), 5)]


@case
def sched_plateau(T):
    out = []
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6]
    for kwargs in ({"patience": 2}, {"mode": "max", "factor": 0.5, "patience": 1, "cooldown": 2},
                   {"patience": 0, "threshold": 0.05, "threshold_mode": "abs", "min_lr": 0.02}):
        ps = params(T, T.float32)
        opt = T.optim.SGD(ps, lr=0.1)
        sched = T.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        lrs = []
        for m in metrics:
            opt.step()
            sched.step(m)
            lrs.append(sched.get_last_lr()[0])
        out.append(lrs)
    return out


@case
def sched_state(T):
    ps = params(T, T.float32)
    opt = T.optim.SGD(ps, lr=0.1)
    sched = T.optim.lr_scheduler.StepLR(opt, step_size=2)
    opt.step()
    sched.step()
    sd = sched.state_dict()
    return [sorted(k for k in sd if not k.startswith("_")), sd["last_epoch"], sd["base_lrs"],
            opt.param_groups[0]["initial_lr"]]


if __name__ == "__main__":
    sys.exit(main(CASES, sys.argv))
