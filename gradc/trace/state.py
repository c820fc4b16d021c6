"""The call-time check that the state a function read at trace time is unchanged.

A value read through a global, a closure cell or an attribute (see ``frozen``) is
compared by identity; an array also by shape, dtype and contents: whole up to
16 KiB, a fixed sample of 256 evenly spaced entries above that (an update of the
whole array, as a training step makes, always shows; a change of a few entries of a
large array may not). Code that captured nothing is never wrapped, so the check
costs nothing there; elsewhere it costs about a dict lookup per value, plus a copy
of at most 16 KiB per array.

>>> import numpy as np
>>> from gradc.trace.frozen import scan
>>> W = np.ones(3)
>>> state = CapturedState(scan(lambda x: W * x).reads)
>>> state.changed() is None
True
>>> W[0] = 2.0
>>> state.changed().label
'W'
"""
from __future__ import annotations

import numpy as np

_WHOLE_BYTES = 1 << 14
_SAMPLES = 256
_MISSING = object()


class _Watch:
    """One array: its identity, shape, dtype and a snapshot of (a sample of) its bytes."""

    __slots__ = ("read", "value", "shape", "dtype", "step", "picks", "snapshot")

    def __init__(self, read):
        a = read.value
        self.read, self.value, self.shape, self.dtype = read, a, a.shape, a.dtype
        self.step = self.picks = None
        if a.nbytes > _WHOLE_BYTES:
            if a.flags.c_contiguous:
                self.step = a.size // _SAMPLES  # a strided view: no copy of the whole array
            else:
                self.picks = np.linspace(0, a.size - 1, _SAMPLES).astype(np.intp)
        self.snapshot = self.content(a)

    def content(self, a):
        if self.step is not None:
            return a.reshape(-1)[::self.step].tobytes()
        return a.tobytes() if self.picks is None else a.take(self.picks).tobytes()


class CapturedState:
    """The values a trace read besides its arguments, as they were when it finished."""

    def __init__(self, reads):
        self.reads = list(reads)
        # plain globals are read with one dict lookup; other paths (cells, attributes) call their getter
        self._checks = []
        for r in self.reads:
            namespace, name = r.source if r.source is not None else (None, None)
            watch = _Watch(r) if isinstance(r.value, np.ndarray) else None
            small = watch is not None and watch.step is None and watch.picks is None
            self._checks.append((namespace, name, r.get, r.value, watch, small, r))

    def __bool__(self) -> bool:
        return bool(self.reads)

    def changed(self):
        """The first :class:`~gradc.trace.frozen.Read` whose value changed since, or None."""
        for namespace, name, get, value, watch, small, read in self._checks:
            now = namespace.get(name, _MISSING) if namespace is not None else get()
            if now is not value:
                return read
            if watch is None:
                continue
            if now.shape != watch.shape or (now.dtype is not watch.dtype and now.dtype != watch.dtype):
                return read
            if (now.tobytes() if small else watch.content(now)) != watch.snapshot:
                return read
        return None
