"""Random facade programs of views, in-place writes and ordinary ops, run eagerly, compiled and in torch.

``program(rng)`` builds the source of ``def f(x, z)`` one line at a time: each candidate line
is run eagerly on sample tensors and kept only if it runs, so every program is valid eager
code (and its shapes are known while it grows). ``x`` requires grad; ``z`` does not and may
be written in place (an input the compiled code must write back). ``outcome(torch_module,
source, compiled)`` runs the program with that module as ``torch`` and returns its value,
``x``'s gradient and ``z`` afterwards (or the error it raised).
"""
from __future__ import annotations

import warnings

import numpy as np

SHAPES = [(2, 3), (6,), (2, 1, 3), (4, 2)]
X = np.array([0.3, -1.2, 0.7, 1.5, -0.4, 0.9, 0.2, -0.8])
Z = np.array([1.1, 0.5, -0.6, 0.25, -1.3, 0.8, 0.4, 0.6])


def _sample(shape, base):
    return base[:int(np.prod(shape))].reshape(shape)


def _new_value(rng, a, b):
    c = round(float(rng.uniform(0.5, 2.0)), 2)
    return [f"{a} * {c}", f"{a} + {b}", f"{a}.sin()", f"torch.tanh({a})", f"{a} - {c}", f"{a} * {b}",
            f"{a}.sum(0, keepdim=True)", f"{a}.exp() * 0.1", f"{a}.clone()", f"{a}.abs() + {b}"][rng.integers(10)]


def _view(rng, a, shape):
    n = len(shape)
    options = [f"{a}.view(-1)", f"{a}.reshape(-1)", f"{a}.unsqueeze(0)", f"{a}.unsqueeze(-1)", f"{a}.squeeze()",
               f"{a}[0]", f"{a}[1:]", f"{a}[..., :1]", f"{a}[:, 0]" if n > 1 else f"{a}[::2]",
               f"{a}.t()" if n <= 2 else f"{a}.transpose(0, -1)", f"{a}.permute({', '.join(map(str, range(n)))[::-1]})",
               f"{a}.flatten()", f"{a}.expand(2, *{a}.shape)", f"{a}.detach()", f"{a}[None]", f"{a}.view(2, -1)",
               f"{a}.reshape(-1, 2)", f"{a}.T" if n == 2 else f"{a}[..., None]", f"{a}.transpose(0, 1)",
               f"{a}[-1:, ...]"]
    return options[rng.integers(len(options))]


def _in_place(rng, a, b):
    c = round(float(rng.uniform(0.5, 2.0)), 2)
    options = [f"{a}.mul_({c})", f"{a}.add_({b})", f"{a}.sub_({c})", f"{a}.div_({c})", f"{a}[0] += {c}",
               f"{a}[0] = {b}[0]", f"{a}.zero_()", f"{a}.fill_({c})", f"{a}.clamp_(-0.5, 0.6)", f"{a}.tanh_()",
               f"{a}.mul_({b})", f"{a}[..., -1:] *= {c}", f"{a} += {b}", f"{a} *= {c}", f"{a}.sigmoid_()",
               f"{a}.exp_()", f"{a}[:1] = {c}", f"{a}.neg_()", f"torch.mul({b}, {c}, out={a})",
               f"torch.add({a}, {b}, out={a})"]
    return options[rng.integers(len(options))]


def _inputs(module, spec):
    """``x`` (requires grad) and ``z`` (does not; a transposed, non-contiguous view when ``spec`` says so)."""
    shape, transposed = spec
    x = module.tensor(_sample(shape, X), requires_grad=True)
    z = module.tensor(_sample(shape[::-1], Z)).t() if transposed else module.tensor(_sample(shape, Z))
    return x, z


def _env(module, spec):
    x, z = _inputs(module, spec)
    return {"torch": module, "x": x, "z": z}


def program(rng, n_lines=8, modules=()):
    """The source of a random ``f(x, z)`` (see the module docstring) that runs eagerly in the facade and in
    each of ``modules`` (torch, when it is installed)."""
    import gradc.torch as torch

    shape = SHAPES[rng.integers(len(SHAPES))]
    spec = (shape, len(shape) == 2 and rng.random() < 0.3)
    lines = ["y = x * 1.0"]
    names = ["y"]
    envs = [_env(m, spec) for m in (torch, *modules)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for env in envs:
            exec(lines[0], env)  # noqa: S102 - the generated program, run to learn its shapes
        tries = 0
        while len(lines) < n_lines and tries < 10 * n_lines:
            tries += 1
            kind = rng.random()
            a = names[rng.integers(len(names))] if rng.random() < 0.85 else "z"
            b = names[rng.integers(len(names))]
            if kind >= 0.35 and kind < 0.7 and b != a:
                b += ".clone()"  # an operand overlapping the written memory in part has no defined result in torch
            new = f"v{len(lines)}"
            if kind < 0.35:
                line = f"{new} = {_view(rng, a, tuple(envs[0][a].shape))}"
            elif kind < 0.7:
                line = _in_place(rng, a, b)
            else:
                line = f"{new} = {_new_value(rng, a, b)}"
            trials = [dict(env) for env in envs]
            try:
                for trial in trials:
                    exec(line, trial)  # noqa: S102
                    trial["_check"] = sum((trial[n] * trial[n]).sum() for n in names + ["z"])
                    trial["_check"].backward(retain_graph=True) if trial["_check"].requires_grad else None
            except Exception:  # noqa: BLE001 - an invalid line (shapes, an expanded target): try another
                continue
            envs = trials
            lines.append(line)
            if line.startswith(new + " "):
                names.append(new)
    weights = [round(0.3 + 0.2 * i, 2) for i in range(len(names))]
    terms = " + ".join(f"({n} * {n}).sum() * {w}" for n, w in zip(names, weights))
    body = "\n".join("    " + line for line in lines + [f"return {terms} + (z * z).sum()"])
    return f"def f(x, z):\n{body}\n", spec


def outcome(module, source, spec, compiled=False, show=False):
    """``(value, x.grad, z after)`` of the program run with ``module`` as ``torch`` (compiled: the second call,
    which runs the cached code); an error's class name instead when it raises; ``"refused"`` when the
    compiled call refused to trace (a gradc error, which without ``fullgraph`` runs the call eagerly)."""
    env = {"torch": module}
    exec(source, env)  # noqa: S102
    f = env["f"]
    if compiled:
        f = module.compile(f, fullgraph=True)
    try:
        for _ in range(2 if compiled else 1):
            x, z = _inputs(module, spec)
            out = f(x, z)
        out.backward()
    except Exception as e:  # noqa: BLE001
        if show:
            print(e)
        refused = compiled and any(c.__name__ == "GradcError" for c in type(e).__mro__)
        return "refused" if refused else type(e).__name__
    grad = None if x.grad is None else np.array(x.grad.detach().numpy(), np.float64)
    return float(out.detach()), grad, np.array(z.detach().numpy(), np.float64)


def same(a, b, rtol=1e-5) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if not np.isclose(a[0], b[0], rtol=rtol, atol=1e-6):
        return False
    if (a[1] is None) != (b[1] is None):
        return False
    if a[1] is not None and not np.allclose(a[1], b[1], rtol=rtol, atol=1e-6):
        return False
    return np.allclose(a[2], b[2], rtol=rtol, atol=1e-6)
