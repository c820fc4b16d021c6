"""``refuse_derivative(x, what=..., hint=...)`` (the op ``no_derivative``): ``x``, its derivative refused.

For results whose derivative is meaningless rather than zero, such as ``scipy.stats.mode`` (the most frequent
value: moving one copy of it changes which value is the mode), a zero gradient would be silently wrong. The value
passes unchanged on every target; differentiating through it (either mode) raises ``MissingRuleError`` naming
the public function, the user's line recorded when tracing, and how to proceed.

>>> import numpy as np
>>> float(refuse_derivative(np.float64(2.0), what="scipy.stats.mode"))
2.0
"""
from __future__ import annotations

from typing import Any

from gradc.errors import MissingRuleError, user_location
from gradc.ir.registry import bind, defop
from gradc.ops import c_spell
from gradc.ops.elementwise import _same_types


def _impl(x, **params):
    return x.copy() if hasattr(x, "copy") else x


def _identity_spell(args, params, out, target):
    return args[0]


def _refusal(*args, what, hint, where, **rest):
    raise MissingRuleError(f"{what} has no derivative", where=where or None, hint=hint)


def _vjp(ct, out, x, needs, **params):
    _refusal(**params)


def _jvp(tangents, out, x, **params):
    _refusal(**params)


defop("no_derivative", infer=_same_types, impl=_impl, vjp=_vjp, jvp=_jvp, elementwise=True,
      doc="x_bar: refused (MissingRuleError naming the public function and the user's line)",
      np=_identity_spell, math=_identity_spell, c=c_spell.scalar(lambda a, p, ti, to: a[0]))


def refuse_derivative(x: Any, *, what: str, hint: str = "") -> Any:
    """``x``, with its derivative refused: ``what`` (the public function) is named at the user's line."""
    return bind("no_derivative", x, what=what, hint=hint, where=user_location() or "")


__all__ = ["refuse_derivative"]
