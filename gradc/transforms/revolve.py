"""Binomial checkpointing schedules (Griewank & Walther, "Algorithm 799: Revolve", ACM TOMS 26(1), 2000).

Reversing ``T`` steps of a loop while storing at most ``s`` states: a schedule is a list of
rows ``(action, step, target)``:

* ``ADVANCE step target``: run the loop's body from ``step`` up to ``target`` (``target - step`` steps);
* ``TAKESHOT step target``: store the current state (the state before ``step``) in slot ``target``;
* ``RESTORE step target``: make the state of slot ``target`` (the state before ``step``) current;
* ``YOUTURN step``: reverse ``step``: its adjoint, at the current state (the state before ``step``).

Revolve's ``firsturn`` (the first step reversed) is a ``YOUTURN`` here: the reverse sweep starts
from the loop's initial state, so the last step is reached by advancing like any other.

The schedule is the optimal one of the recursion ``F(l, c) = min over m of
m + F(l - m, c - 1) + F(m, c)``, ``F(1, c) = 0`` (advance ``m`` steps, store, reverse the last
``l - m`` steps with one snapshot fewer, then the first ``m`` with all of them). Its
minimum is Griewank's closed form (see :func:`forward_steps`); the first optimal split
``m`` has a closed form too (derived in ``docs/control_flow.md``), so the schedule is made by an
explicit stack of pending ranges (at most ``s + 1`` deep), never by recursion, in time
proportional to its length.

>>> [ACTIONS[a] + f" {x} {y}" for a, x, y in revolve_schedule(3, 2)]
['takeshot 0 0', 'advance 0 1', 'takeshot 1 1', 'advance 1 2', 'youturn 2 0', 'restore 1 1', 'youturn 1 0', \
'restore 0 0', 'youturn 0 0']
>>> forward_steps(3, 2), sum(y - x for a, x, y in revolve_schedule(3, 2) if a == ADVANCE)
(2, 2)
"""
from __future__ import annotations

import numpy as np

ADVANCE, TAKESHOT, RESTORE, YOUTURN = 0, 1, 2, 3
ACTIONS = ("advance", "takeshot", "restore", "youturn")


def revolve_schedule(steps, snapshots):
    """Binomial checkpointing (Revolve, Griewank & Walther 2000): the rows reversing `steps` steps."""
    # emitted into generated modules as it stands: no imports, no helpers, no builtins. Rows: 0 advance from
    # step up to target; 1 store the state of step in slot target; 2 restore it; 3 reverse step (its adjoint)
    at = 0  # the step whose state is current
    if steps > 1:
        yield (1, 0, 0)
    # pending ranges: (first step, number of steps, snapshots it may use, slot holding its first state)
    pending = [(0, steps, snapshots, 0)] if steps > 0 else []
    while pending:
        first, count, free, slot = pending.pop()
        if at != first:
            yield (2, first, slot)
            at = first
        if count == 1:
            yield (3, first, 0)
            continue
        split = count - 1
        if free > 1:
            # t: the fewest sweeps with C(free + t, t) >= count; beta = C(free + t, t)
            t, beta = 0, 1
            while beta < count:
                t += 1
                beta = beta * (free + t) // t
            below = beta * t // (free + t)  # C(free + t - 1, t - 1)
            below2 = below * (t - 1) // (free + t - 1) if t > 1 else 0  # C(free + t - 2, t - 2)
            split = count - beta * free // (free + t)  # count - C(free - 1 + t, t)
            if split < below2:
                split = below2
            if split < 1:
                split = 1
        yield (0, first, first + split)
        at = first + split
        pending.append((first, split, free, slot))
        if count - split == 1:
            yield (3, at, 0)
        else:
            yield (1, at, slot + 1)
            pending.append((at, count - split, free - 1, slot + 1))


def schedule_table(steps: int, snapshots: int) -> np.ndarray:
    """The schedule as an ``int64`` array of rows ``(action, step, target)`` (what the reverse sweep loops over).

    >>> schedule_table(2, 1).tolist()
    [[1, 0, 0], [0, 0, 1], [3, 1, 0], [2, 0, 0], [3, 0, 0]]
    """
    rows = list(revolve_schedule(int(steps), int(snapshots)))
    return np.array(rows, dtype=np.int64).reshape(len(rows), 3)


def sweeps(steps: int, snapshots: int) -> int:
    """The smallest ``t`` with ``C(snapshots + t, t) >= steps``: how often the costliest step runs forward.

    >>> sweeps(10_000, 10)
    7
    """
    t, beta = 0, 1
    while beta < steps:
        t += 1
        beta = beta * (snapshots + t) // t
    return t


def forward_steps(steps: int, snapshots: int) -> int:
    """The fewest forward steps that reverse ``steps`` steps with ``snapshots`` states: ``t*T - C(s+t, t-1)``.

    With ``t = sweeps(T, s)`` (Griewank 1992; Griewank & Walther, *Evaluating Derivatives*, 2008,
    Prop. 12.6). The reverse sweep's own evaluation of each step (inside its adjoint) is not
    counted; counted with the one at the last step it is the ``t*T - C(s+t, t-1) + 1`` of
    some texts.

    >>> forward_steps(10, 1), forward_steps(10, 9), forward_steps(10_000, 10)
    (45, 9, 57624)
    """
    if steps <= 1:
        return 0
    t = sweeps(steps, snapshots)
    return t * steps - _choose(snapshots + t, t - 1)


def _choose(n: int, k: int) -> int:
    if k < 0 or k > n:
        return 0
    out = 1
    for j in range(1, k + 1):
        out = out * (n - k + j) // j
    return out
