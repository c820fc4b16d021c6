"""The work arrays of one C function and which of them are free: placing stays linear in program length.

A slot is ``(name, ctype, size, ids)``: a work array and the values stored there over time. It is
free at a segment when every value it held is read for the last time before it (``last``: value id
-> the last segment reading it, the emitter's). A long unrolled program keeps hundreds of arrays
alive (its forward values, for the reverse sweep) and places thousands of values: scanning every slot
at each placement was quadratic. Here each slot waits in a heap keyed by the last segment reading its
values, moves to the free set when the emission passes that segment, and each value's ``last`` is
read once (``dead_after``). Ties between equally good free slots go to the oldest, as before.

>>> pool = SlotPool({1: 0, 2: 5})
>>> pool.add(("t0", "double", 8, [1])); pool.add(("t1", "double", 8, [2]))
>>> [s[0] for s in pool.free_at(1, set())], [s[0] for s in pool.free_at(6, set())]
(['t0'], ['t0', 't1'])
"""
from __future__ import annotations

import heapq


class SlotPool:
    """The slots of one emitter, in order of addition, and the free ones at the current segment."""

    def __init__(self, last: dict):
        self.last = last  # the emitter's: entries are added before a value is placed, and never change after
        self.slots: list = []
        self.position: dict = {}  # slot name -> its index in slots
        self.until: dict = {}  # slot name -> (values seen, the last segment reading one of them)
        self.waiting: list = []  # heap of (dead after, position): slots not known to be free
        self.free: dict = {}  # position -> slot: slots whose values were all dead when last looked at

    def dead_after(self, slot) -> int:
        """The last segment reading a value of ``slot`` (-1: none), brought up to date with values appended since."""
        seen, until = self.until.get(slot[0], (0, -1))
        values = slot[3]
        if seen < len(values):
            until = max([until] + [self.last.get(o, -1) for o in values[seen:]])
            self.until[slot[0]] = (len(values), until)
        return until

    def add(self, slot):
        self.position[slot[0]] = len(self.slots)
        self.slots.append(slot)
        self._wait(slot)

    def _wait(self, slot):
        heapq.heappush(self.waiting, (self.dead_after(slot), self.position[slot[0]]))

    def taken(self, slot):
        """``slot`` got a new value (appended to its ids): it waits again until that value is dead."""
        self.free.pop(self.position[slot[0]], None)
        self._wait(slot)

    def find(self, name: str):
        """The slot called ``name``, or None."""
        at = self.position.get(name)
        return None if at is None else self.slots[at]

    def free_at(self, segment: int, busy) -> list:
        """The slots whose values are all dead at ``segment``, oldest first, but those named in ``busy``."""
        while self.waiting and self.waiting[0][0] < segment:
            _, at = heapq.heappop(self.waiting)
            if at in self.free:
                continue
            slot = self.slots[at]
            until = self.dead_after(slot)
            if until < segment:
                self.free[at] = slot
            else:  # values were appended since it was queued: wait for them
                heapq.heappush(self.waiting, (until, at))
        out = []
        for at in sorted(self.free):
            slot = self.free[at]
            if self.dead_after(slot) >= segment:  # appended to without taken(): checked, not trusted
                del self.free[at]
                self._wait(slot)
            elif slot[0] not in busy:
                out.append(slot)
        return out
