"""Ops that steer differentiation: ``stop_gradient`` and the calls of user-written derivative rules.

``stop_gradient(x)`` is ``x`` with a zero derivative in both modes.

``custom_call(y, *residuals, *xs, rule=KEY, residuals=N)`` is ``y`` (the value of a function
the user gave its own rule, computed from ``xs``) whose derivative comes from the
rule registered under ``KEY`` in ``RULES`` instead of from the ops that computed
``y``: ``y`` itself gets no cotangent, ``xs`` get the rule's. The rules (Python
functions written in NumPy by the user) are registered by ``gradc.custom_vjp`` and
``gradc.custom_jvp``, which also wrap them so that they trace: this module only
looks them up.

>>> import numpy as np
>>> float(stop_gradient(np.float64(2.0)))
2.0
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from gradc.errors import MissingRuleError
from gradc.ir.registry import bind, defop
from gradc.ops import c_spell
from gradc.ops.elementwise import _same_types


@dataclass
class Rule:
    """A user's derivative rule for ``custom_call``: ``vjp(ct, residuals, xs)`` -> cotangent per x (or None),
    ``jvp(tangents, residuals, xs, out)`` -> the output's tangent (or None); either may be missing."""

    name: str
    vjp: Callable | None = None
    jvp: Callable | None = None
    tolerance: float = 0.0  # the value's relative accuracy when an iterative solve computes it (0: exact)


RULES: dict = {}  # key -> Rule; keys are the user functions' names, made unique in registration order


def register_rule(rule: Rule) -> str:
    """Store ``rule`` under a key derived from its name (deterministic: names, then a counter)."""
    key, k = rule.name, 1
    while key in RULES:
        k += 1
        key = f"{rule.name}_{k}"
    RULES[key] = rule
    return key


def _identity_spell(args, params, out, target):
    return args[0]


def _fresh(x):
    """``x`` as a new object: the eager facade's tape tells values apart by identity."""
    return x.copy() if hasattr(x, "copy") else x


defop("stop_gradient", infer=_same_types, impl=_fresh, nondiff=True, elementwise=True,
      doc="x_bar = 0 (the value passes, the derivative does not)", np=_identity_spell, math=_identity_spell,
      c=c_spell.scalar(lambda a, p, ti, to: a[0]))


def stop_gradient(x: Any) -> Any:
    """``x``, with a zero derivative (JAX's ``stop_gradient``, torch's ``detach``).

    >>> import numpy as np, gradc
    >>> gradc.grad(lambda x: x * stop_gradient(x))(3.0)  # d/dx of x * c, c = x held constant
    3.0
    """
    return bind("stop_gradient", x)


defop("recompute", infer=_same_types, impl=_fresh, vjp=lambda ct, out, x, needs: (ct,), elementwise=True,
      linear=True, doc="x_bar = ct (marks where a checkpointed block is recomputed in the backward sweep)",
      np=_identity_spell, math=_identity_spell, c=c_spell.scalar(lambda a, p, ti, to: a[0]))


def recompute(x):
    """``x``, as the input of a block recomputed in the backward sweep: CSE cannot merge it with the
    forward sweep's copy of the block, whose inputs are ``x`` itself (``gradc.checkpoint``)."""
    return bind("recompute", x)


def _custom_infer(types, params):
    return types[0]


def _split(args, n):
    return list(args[1:1 + n]), list(args[1 + n:])


def _custom_vjp(ct, out, *args, needs, rule, residuals):
    r = RULES[rule]
    if r.vjp is None:
        raise MissingRuleError(f"{r.name} has a custom forward-mode rule only, and reverse mode could not "
                               "be derived from it", hint="give it a reverse rule with gradc.custom_vjp")
    res, xs = _split(args, residuals)
    x_bars = r.vjp(ct, res, xs)
    return [None] * (1 + residuals) + [b if need else None for b, need in zip(x_bars, needs[1 + residuals:])]


def _custom_jvp(tangents, out, *args, rule, residuals):
    r = RULES[rule]
    if r.jvp is None:
        raise MissingRuleError(f"{r.name} has a custom reverse-mode rule (custom_vjp) and no forward-mode rule",
                               hint="forward mode (jvp, jacfwd, hessian, hvp) needs gradc.custom_jvp; "
                                    "or use reverse mode only (grad, vjp, jacrev)")
    res, xs = _split(args, residuals)
    return r.jvp(tangents[1 + residuals:], res, xs, out)


defop("custom_call", infer=_custom_infer, impl=lambda y, *rest, rule, residuals: _fresh(y), vjp=_custom_vjp,
      jvp=_custom_jvp,
      doc="derivative from the user's rule (gradc.custom_vjp / custom_jvp)", np=_identity_spell,
      math=_identity_spell, c=c_spell.loop("reshape"))  # the C emitter aliases y, as for a reshape to its shape


def custom_call(y, residuals, xs, rule: str):
    """Mark ``y`` (computed from ``xs``) as differentiated by the user's rule ``rule``."""
    return bind("custom_call", y, *residuals, *xs, rule=rule, residuals=len(residuals))
