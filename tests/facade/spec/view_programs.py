"""Programs of view ops and in-place ops on tensors derived from leaves, run under torch or gradc.

A program is a JSON list of steps; ``run_step(T, env, step)`` applies one to ``env`` (the list
of tensors made so far) with module ``T`` standing in for torch; ``outcome(T, env)`` is what
is compared: every tensor's value, version and ``grad_fn`` name, then, after a backward of a
weighted sum of them, the leaves' gradients. ``choose_step(pick, env)`` makes a valid random
step from the shapes in ``env``, with ``pick(n)`` an integer in ``[0, n)`` (``random.Random``
or a hypothesis draw).

Steps:
    ["base", kind]                 a new tensor from the leaves (x: (2, 3), w: (3,) require grad)
    ["view", i, op, args]          env[i].<op>(*args), a view, appended (``key`` for indexing)
    ["inplace", i, op, args]       an in-place op on env[i] (``setitem``/``iadd_item`` for indexed writes)
    ["compute", i, j, op]          an out-of-place op (its node saves its operands or result), appended
    ["no_grad", step]              a view or in-place step run under ``no_grad``
Arguments ``{"var": j}`` stand for env[j]; index keys are lists of items: an int, ``["s", a, b, c]``
(a slice), ``["l", [...]]`` (an index list), ``["m", v]`` (the mask ``env[i] > v``), ``None``.
"""
from __future__ import annotations

import math

import numpy as np

X0 = [[0.5, -1.25, 2.0], [1.5, 0.75, -0.5]]
W0 = [0.25, -2.0, 1.5]
C0 = [[3.0, 0.5, -1.0], [2.5, -0.25, 4.0]]
BASES = ("x*1", "exp", "const", "leaf_x", "w*2", "x+w")


def leaves(T):
    x = T.tensor(X0, dtype=T.float64, requires_grad=True)
    w = T.tensor(W0, dtype=T.float64, requires_grad=True)
    c = T.tensor(C0, dtype=T.float64)
    return {"x": x, "w": w, "c": c}


def make_base(L, kind):
    if kind == "x*1":
        return L["x"] * 1.0
    if kind == "exp":
        return L["x"].exp()
    if kind == "const":
        return L["c"].clone()
    if kind == "leaf_x":
        return L["x"]
    if kind == "w*2":
        return L["w"] * 2.0
    return L["x"] + L["w"]


def _arg(env, a):
    if isinstance(a, dict):
        return env[a["var"]]
    return a


def _key(T, target, items):
    out = []
    for it in items:
        if isinstance(it, list) and it and it[0] == "s":
            out.append(slice(it[1], it[2], it[3]))
        elif isinstance(it, list) and it and it[0] == "l":
            out.append(list(it[1]))
        elif isinstance(it, list) and it and it[0] == "m":
            out.append(target.detach() > it[1])
        else:
            out.append(it)
    return tuple(out) if len(out) != 1 else out[0]


def apply_view(T, env, i, op, args):
    t = env[i]
    if op == "key":
        return t[_key(T, t, args)]
    if op == "T":
        return t.T
    if op == "mT":
        return t.mT
    if op in ("unbind", "split", "chunk"):
        parts = getattr(t, op)(*args[:-1])
        return parts[args[-1]]
    return getattr(t, op)(*args)


def apply_inplace(T, env, i, op, args):
    t = env[i]
    args = [_arg(env, a) for a in args]
    if op == "setitem":
        t[_key(T, t, args[0])] = args[1]
    elif op == "iadd_item":
        key = _key(T, t, args[0])
        t[key] += args[1]
    elif op == "iadd":
        t += args[0]
        env[i] = t
    else:
        getattr(t, op)(*args)


def apply_compute(T, env, i, j, op):
    a, b = env[i], env[j]
    if op == "mul":
        return a * b
    if op == "exp":
        return a.exp()
    if op == "div":
        return a / (b * b + 1.0)
    return a.sigmoid()


def run_step(T, env, L, step):
    kind = step[0]
    if kind == "no_grad":
        with T.no_grad():
            return run_step(T, env, L, step[1])
    if kind == "base":
        env.append(make_base(L, step[1]))
    elif kind == "view":
        env.append(apply_view(T, env, step[1], step[2], step[3]))
    elif kind == "inplace":
        apply_inplace(T, env, step[1], step[2], step[3])
    elif kind == "compute":
        env.append(apply_compute(T, env, step[1], step[2], step[3]))
    else:
        raise ValueError(step)


def _name(t):
    try:
        fn = t.grad_fn
    except RuntimeError as e:  # torch refuses the history of a no_grad view whose base was written
        return "raises: " + str(e)[:40]
    return None if fn is None else type(fn).__name__


def _flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def snapshot(env):
    return [{"shape": list(t.shape), "value": _flat(t), "version": t._version, "grad_fn": _name(t),
             "requires_grad": bool(t.requires_grad)} for t in env]


def error_of(e):
    return [type(e).__name__, str(e)]


def run(T, steps):
    """The outcome of a program: per-tensor snapshots, the first error (step index, type, message), the
    backward's error or the leaves' gradients."""
    L = leaves(T)
    env = []
    result = {"error": None, "backward_error": None, "grads": None}
    for k, step in enumerate(steps):
        try:
            run_step(T, env, L, step)
        except Exception as e:  # noqa: BLE001 - compared with torch's
            result["error"] = [k] + error_of(e)
            break
    result["env"] = snapshot(env)
    tracked = [t for t in env if t.requires_grad]
    if result["error"] is None and tracked:
        try:
            loss = None
            for n, t in enumerate(tracked):
                weight = T.linspace(0.5, 1.5 + n, max(t.numel(), 1), dtype=T.float64).reshape(t.shape)
                term = (t * weight).sum()
                loss = term if loss is None else loss + term
            loss.backward()
        except Exception as e:  # noqa: BLE001
            result["backward_error"] = error_of(e)
        else:
            result["grads"] = {k: None if L[k].grad is None else _flat(L[k].grad) for k in ("x", "w")}
    return result


# ---------------------------------------------------------------- random steps
def _shape(t):
    return tuple(int(d) for d in t.shape)


def _choice(pick, seq):
    return seq[pick(len(seq))]


def view_step(pick, env):
    i = _nonempty(pick, env)
    shape = _shape(env[i])
    n = len(shape)
    numel = math.prod(shape)
    ops = ["view", "reshape", "unsqueeze", "flatten", "key"]
    if n:
        ops += ["transpose", "permute", "narrow", "select", "expand", "squeeze", "unbind", "split", "chunk"]
    if n <= 2:
        ops.append("t")
    if n == 2:
        ops.append("T")
    if n >= 2:
        ops += ["diagonal", "mT", "movedim"]
    op = _choice(pick, ops)
    if op in ("view", "reshape"):
        shapes = [[-1], [numel, 1], [1, numel]] + ([[shape[1], shape[0]] + list(shape[2:])] if n >= 2 else [])
        if numel % 2 == 0 and numel > 2:
            shapes.append([2, -1])
        return ["view", i, op, _choice(pick, shapes)]
    if op == "unsqueeze":
        return ["view", i, op, [pick(n + 1) - (n + 1) * pick(2)]]
    if op == "flatten" or op in ("t", "T", "mT"):
        return ["view", i, op, []]
    if op == "transpose":
        return ["view", i, op, [pick(n), pick(n) - n * pick(2)]]
    if op == "permute":
        perm = list(range(n))
        for k in range(n - 1, 0, -1):
            j = pick(k + 1)
            perm[k], perm[j] = perm[j], perm[k]
        return ["view", i, op, perm]
    if op == "movedim":
        return ["view", i, op, [pick(n), pick(n)]]
    if op == "narrow":
        d = pick(n)
        start = pick(shape[d])
        return ["view", i, op, [d, start, 1 + pick(shape[d] - start)]]
    if op == "select":
        d = pick(n)
        return ["view", i, op, [d, pick(shape[d]) - shape[d] * pick(2)]]
    if op == "squeeze":
        return ["view", i, op, [] if pick(2) else [pick(n)]]
    if op == "expand":
        new = [2 if d == 1 and pick(2) else d for d in shape]
        return ["view", i, op, ([2] if pick(2) else []) + new]
    if op in ("unbind", "split", "chunk"):
        d = pick(n)
        if op == "unbind":
            return ["view", i, op, [d, pick(shape[d])]]
        size = 1 + pick(shape[d])
        parts = -(-shape[d] // size)
        return ["view", i, op, [size, d, pick(parts)]]
    if op == "diagonal":
        d1 = pick(n)
        d2 = (d1 + 1 + pick(n - 1)) % n
        return ["view", i, op, [pick(3) - 1, d1, d2]]
    return ["view", i, "key", basic_key(pick, shape)]


def basic_key(pick, shape):
    key = []
    for d in shape[:1 + pick(max(len(shape), 1))]:
        kind = pick(4)
        if kind == 0:
            key.append(pick(d))
        elif kind == 1:
            a = pick(d)
            key.append(["s", a, a + 1 + pick(d - a), None])
        elif kind == 2:
            key.append(["s", None, None, 2])
        else:
            key.append(["s", None, None, None])
    if pick(4) == 0:
        key.insert(pick(len(key) + 1), None)
    return key


def index_key(pick, shape):
    """A key with an index list, a mask or a mixed tuple (for indexed writes)."""
    if not shape:
        return [None]
    kind = pick(3)
    if kind == 0:
        return [["l", [pick(shape[0]) for _ in range(1 + pick(3))]]]
    if kind == 1:
        return [["m", _choice(pick, [0.0, 1.0, -0.5])]]
    if len(shape) >= 2:
        return [pick(shape[0]), ["l", [pick(shape[1]) for _ in range(1 + pick(2))]]]
    return [["s", None, None, None], ["l", [pick(shape[0])]]] if pick(2) else [["l", [0, pick(shape[0])]]]


def _defined_alias(target, source):
    """Whether torch's result of ``target.op_(source)`` is defined: the two do not share memory, are the same
    memory, or are both dense (torch then refuses a partial overlap). Otherwise torch's kernel reads elements it
    has already written, in an order of its own. (``choose_step`` runs on facade tensors: ``_data`` is NumPy.)"""
    a, b = target._data, source._data
    if target is source or not np.shares_memory(a, b):
        return True
    return _dense(a) and _dense(b)


def _dense(a):
    span = sum((n - 1) * abs(st) for n, st in zip(a.shape, a.strides)) + a.itemsize
    return span == a.size * a.itemsize and all(st or n <= 1 for n, st in zip(a.shape, a.strides))


def _broadcastable(env, shape):
    return [j for j, t in enumerate(env) if _fits(_shape(t), shape)]


def _fits(src, dst):
    if len(src) > len(dst):
        return False
    return all(s in (1, d) for s, d in zip(reversed(src), reversed(dst)))


def inplace_step(pick, env):
    i = _nonempty(pick, env)
    shape = _shape(env[i])
    op = _choice(pick, ["add_", "mul_", "sub_", "div_", "zero_", "fill_", "copy_", "clamp_", "setitem", "iadd_item",
                        "iadd", "mul_t"])
    const = _choice(pick, [2.0, -0.5, 3.0, 0.25])
    if op in ("add_", "mul_", "sub_", "div_", "fill_"):
        return ["inplace", i, op, [const]]
    if op == "zero_":
        return ["inplace", i, op, []]
    if op == "clamp_":
        return ["inplace", i, op, [-0.5, 1.25]]
    sources = [j for j in _broadcastable(env, shape) if _defined_alias(env[i], env[j])]
    if op in ("copy_", "iadd", "mul_t"):
        if not sources:
            return ["inplace", i, "add_", [const]]
        j = _choice(pick, sources)
        return ["inplace", i, {"copy_": "copy_", "iadd": "iadd", "mul_t": "mul_"}[op], [{"var": j}]]
    key = basic_key(pick, shape) if pick(2) else index_key(pick, shape)
    if op == "setitem":
        return ["inplace", i, op, [key, const]]
    return ["inplace", i, op, [key, const]]


def compute_step(pick, env):
    i = _nonempty(pick, env)
    same = [j for j, t in enumerate(env) if _shape(t) == _shape(env[i])]
    return ["compute", i, _choice(pick, same), _choice(pick, ["mul", "exp", "div", "sigmoid"])]


def _nonempty(pick, env):
    return _choice(pick, [k for k, t in enumerate(env) if t.numel()])


def choose_step(pick, env):
    """A random valid step for ``env`` (the tensors so far; empty: a base)."""
    if not any(t.numel() for t in env) or pick(8) == 0:
        return ["base", _choice(pick, BASES)]
    kind = pick(10)
    if kind < 4:
        step = view_step(pick, env)
    elif kind < 8:
        step = inplace_step(pick, env)
    else:
        step = compute_step(pick, env)
    if step[0] in ("view", "inplace") and pick(10) == 0:
        return ["no_grad", step]
    return step


# ---------------------------------------------------------------- comparison
def _close(a, b, tol=1e-12):
    if a is None or b is None:
        return a is b
    if len(a) != len(b):
        return False
    for u, v in zip(a, b):
        if math.isnan(u) or math.isnan(v):
            if not (math.isnan(u) and math.isnan(v)):
                return False
        elif abs(u - v) > tol * max(1.0, abs(u), abs(v)):
            return False
    return True


def differences(got, want, names=True):
    """What differs between two outcomes of ``run`` (empty when they agree)."""
    out = []
    if got["error"] != want["error"]:
        out.append(f"error: {got['error']!r} != {want['error']!r}")
        return out
    if got["backward_error"] != want["backward_error"]:
        out.append(f"backward error: {got['backward_error']!r} != {want['backward_error']!r}")
    if len(got["env"]) != len(want["env"]):
        return out + [f"{len(got['env'])} tensors != {len(want['env'])}"]
    for k, (g, w) in enumerate(zip(got["env"], want["env"])):
        for field in ("shape", "version", "requires_grad") + (("grad_fn",) if names else ()):
            if g[field] != w[field]:
                out.append(f"tensor {k} {field}: {g[field]!r} != {w[field]!r}")
        if not _close(g["value"], w["value"]):
            out.append(f"tensor {k} value: {g['value']} != {w['value']}")
    gg, wg = got["grads"] or {}, want["grads"] or {}
    for leaf in ("x", "w"):
        if not _close(gg.get(leaf), wg.get(leaf), 1e-10):
            out.append(f"grad of {leaf}: {gg.get(leaf)} != {wg.get(leaf)}")
    return out
