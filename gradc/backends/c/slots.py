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
        self.kinds: dict = {}  # (ctype, size) -> heap of positions of free slots of that kind (some stale)

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

    def _advance(self, segment: int):
        """Move the slots whose values are all dead at ``segment`` from the waiting heap to the free ones."""
        while self.waiting and self.waiting[0][0] < segment:
            _, at = heapq.heappop(self.waiting)
            if at in self.free:
                continue
            slot = self.slots[at]
            until = self.dead_after(slot)
            if until < segment:
                self.free[at] = slot
                heapq.heappush(self.kinds.setdefault((slot[1], slot[2]), []), at)
            else:  # values were appended since it was queued: wait for them
                heapq.heappush(self.waiting, (until, at))

    def best_free(self, segment: int, busy, fits, order):
        """The free slot at ``segment`` (not named in ``busy``) of a kind ``fits(ctype, size)`` accepts, smallest
        by ``order(size)``, the oldest of equals: ``min(free_at(...), key=...)`` of the fitting ones, without
        looking at every free slot (a long program's reverse sweep frees thousands).

        >>> pool = SlotPool({1: 0, 2: 0, 3: 0})
        >>> for name, n, v in [("a", 8, 1), ("b", 4, 2), ("c", 4, 3)]: pool.add((name, "double", n, [v]))
        >>> pool.best_free(1, {"b"}, lambda ct, n: n >= 4, lambda n: n)[0]
        'c'
        """
        self._advance(segment)
        best = None
        for (ctype, size), heap in self.kinds.items():
            if not fits(ctype, size):
                continue
            at = self._oldest(heap, segment, busy)
            if at is not None and (best is None or (order(size), at) < best):
                best = (order(size), at)
        return None if best is None else self.slots[best[1]]

    def _oldest(self, heap, segment, busy):
        """The oldest free slot of ``heap`` not in ``busy`` (stale entries dropped), or None."""
        skipped, found = [], None
        while heap:
            at = heap[0]
            slot = self.free.get(at)
            if slot is None or (skipped and at == skipped[-1]):  # taken since (or a second entry of one skipped)
                heapq.heappop(heap)
            elif self.dead_after(slot) >= segment:  # appended to without taken(): checked, not trusted
                heapq.heappop(heap)
                del self.free[at]
                self._wait(slot)
            elif slot[0] in busy:
                skipped.append(heapq.heappop(heap))
            else:
                found = at
                break
        for at in skipped:
            heapq.heappush(heap, at)
        return found

    def free_at(self, segment: int, busy) -> list:
        """The slots whose values are all dead at ``segment``, oldest first, but those named in ``busy``."""
        self._advance(segment)
        out = []
        for at in sorted(self.free):
            slot = self.free[at]
            if self.dead_after(slot) >= segment:  # appended to without taken(): checked, not trusted
                del self.free[at]
                self._wait(slot)
            elif slot[0] not in busy:
                out.append(slot)
        return out
