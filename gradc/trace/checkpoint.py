"""The ``checkpoint=`` policies of loops: what reverse mode stores and what it recomputes.

* ``None`` / ``"none"``: tape every iteration (the adjoint-only tape);
* ``"sqrt"`` or an int ``k``: a stored state every ``k`` iterations, each segment's tape
  recomputed when it runs backwards (traced as nested loops: ``control_trace._segmented``);
* ``binomial(snapshots=s)`` (or the string ``"binomial:s"``): Griewank's binomial
  checkpointing (Revolve) with ``s`` stored states, the fewest recomputed steps there are for
  ``s`` states; the loop stays one ``scan`` and its reverse rule runs the schedule
  (``gradc.transforms.binomial``). Only for loops whose trip count is known at trace time.

>>> binomial(snapshots=4)
binomial(snapshots=4)
>>> as_policy("binomial:3") == binomial(3)
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gradc.errors import TraceError

POLICY_HINT = ('use checkpoint=None (tape every iteration), "sqrt", an int k (a stored state every k iterations) '
               'or gradc.binomial(snapshots=s) (Revolve: s stored states, the fewest recomputations)')


@dataclass(frozen=True)
class Binomial:
    """Binomial (Revolve) checkpointing with ``snapshots`` stored states (build it with :func:`binomial`).

    >>> Binomial(2).snapshots
    2
    """

    snapshots: int

    def __repr__(self) -> str:
        return f"binomial(snapshots={self.snapshots})"


def binomial(snapshots: int) -> Binomial:
    """The binomial checkpointing policy (Griewank & Walther's Revolve) with ``snapshots`` stored states.

    Reverse mode of a loop of ``T`` steps then keeps ``snapshots`` states (plus one step's
    tape) and recomputes the fewest forward steps possible with that many states: about
    ``t * T`` steps where ``t`` is the smallest integer with ``C(snapshots + t, t) >= T``.

    >>> import numpy as np, gradc
    >>> def f(x):
    ...     for _ in range(100):
    ...         x = x + 0.01 * np.sin(x)
    ...     return x
    >>> float(gradc.grad(f, checkpoint=gradc.binomial(snapshots=3))(0.5)) > 1.0
    True
    """
    if isinstance(snapshots, bool) or not isinstance(snapshots, (int, np.integer)):
        raise TraceError(f"binomial(snapshots={snapshots!r}): the number of snapshots must be an int",
                         hint="pass a whole number of stored states, e.g. gradc.binomial(snapshots=10)")
    if snapshots < 1:
        raise TraceError(f"binomial(snapshots={snapshots}): at least one snapshot is needed (the loop's first state)",
                         hint="pass snapshots >= 1, e.g. gradc.binomial(snapshots=10)")
    return Binomial(int(snapshots))


def as_policy(checkpoint, where=None):
    """``checkpoint`` with the string form ``"binomial:s"`` read as :func:`binomial` (anything else unchanged).

    >>> as_policy("sqrt"), as_policy("binomial:5")
    ('sqrt', binomial(snapshots=5))
    """
    if isinstance(checkpoint, str) and checkpoint.startswith("binomial"):
        _, _, count = checkpoint.partition(":")
        if not count.strip().lstrip("-").isdigit():
            raise TraceError(f"checkpoint={checkpoint!r} is not a checkpointing policy", where=where,
                             hint='write "binomial:s" with s the number of snapshots, e.g. "binomial:10"')
        try:
            return binomial(int(count))
        except TraceError as err:
            raise TraceError(err.message, where=where, hint=err.hint) from None
    return checkpoint
