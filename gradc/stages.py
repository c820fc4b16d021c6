"""The compiler's stages, logged with their time, and the one notice a slow compile gives on stderr.

Every stage logs to a child of the ``gradc`` logger, with its time::

    gradc.trace              tracing a function into a graph
    gradc.transforms         reverse / forward mode, batching
    gradc.passes             fold, CSE, DCE
    gradc.backends.numpy     emitting and loading NumPy source
    gradc.backends.c         emitting C, running the C compiler, loading the library

``DEBUG`` says when a stage starts, ``INFO`` when it ends and how long it took. Nothing
is shown unless the application configures logging (``logging.basicConfig(level=logging.INFO)``)
or the command line is given ``-v`` (``-vv`` for DEBUG). Logging never changes what gradc emits.

A compile still running :data:`NOTICE_AFTER` seconds after its first stage began writes one
line to stderr saying what it is doing (``gradc: tracing f (5,000 operations recorded so
far)...``): once per compile, from a timer that is cancelled when the compile ends, or at
the next stage boundary past the mark. Fast compiles print nothing. Set ``NOTICE_AFTER``
to None (or ``$GRADC_NOTICE_AFTER`` to ``never``) to silence it. A compile is every stage
run inside one call of gradc's public API (``gradc.compile``, the first call of
``gradc.grad(f)`` for a signature, ...: the functions ``gradc.errors.user_facing`` marks)
or of the ``gradc`` command.

>>> import logging
>>> with stage("gradc.passes", "optimising f") as timer:
...     pass
>>> timer.seconds >= 0.0
True
"""
from __future__ import annotations

import contextlib
import logging
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

LOGGER = logging.getLogger("gradc")
LOGGER.addHandler(logging.NullHandler())  # a library: no "No handlers could be found" and no output by default


def threshold_from_environment(default: float = 2.0) -> float | None:
    """Seconds before a compile's notice: ``$GRADC_NOTICE_AFTER`` (a number, or ``never``), else ``default``.

    A value that is not a number of seconds is ignored (the default), never an error at import.

    >>> saved = os.environ.get("GRADC_NOTICE_AFTER")
    >>> os.environ["GRADC_NOTICE_AFTER"] = "0.5"; threshold_from_environment()
    0.5
    >>> os.environ["GRADC_NOTICE_AFTER"] = "never"; threshold_from_environment() is None
    True
    >>> os.environ["GRADC_NOTICE_AFTER"] = ""; threshold_from_environment()
    2.0
    >>> _ = os.environ.pop("GRADC_NOTICE_AFTER") if saved is None else os.environ.update(GRADC_NOTICE_AFTER=saved)
    """
    text = os.environ.get("GRADC_NOTICE_AFTER", "").strip().lower()
    if text in ("never", "off", "none"):
        return None
    try:
        seconds = float(text)
    except ValueError:
        return default
    return seconds if math.isfinite(seconds) and seconds >= 0 else default


# seconds before a running compile says what it is doing (None: never); the test suite sets $GRADC_NOTICE_AFTER
# to never, as a notice depends on the speed of the machine (tests/test_stages.py sets this itself)
NOTICE_AFTER: float | None = threshold_from_environment()

_local = threading.local()  # the compile running in this thread (stages nest within it)


class _Compile:
    """One compile: the stages run from its first until the call into gradc that began it returns (or, outside
    such a call, until its first stage ends). It owns the clock and the single notice."""

    def __init__(self, level: int) -> None:
        self.level = level  # how many calls into gradc were open when it began (see enter_call)
        self.start = time.perf_counter()
        self.doing: list[tuple[str, Callable[[], str] | None]] = []
        self.lock = threading.Lock()
        self.noticed = False
        self.finished = False
        self.timer: threading.Timer | None = None

    def start_timer(self) -> None:
        if NOTICE_AFTER is not None:
            self.timer = threading.Timer(max(NOTICE_AFTER, 0.0), self.notice)
            self.timer.daemon = True  # never keeps the interpreter alive
            self.timer.start()

    def describe(self) -> str:
        what, detail = self.doing[-1]
        if detail is not None:
            try:
                what = f"{what} ({detail()})"
            except Exception:  # noqa: BLE001 - a description must never break the compile it describes
                pass
        return what

    def notice(self) -> None:
        """Say once on stderr what the compile is doing (from the timer or a stage boundary)."""
        with self.lock:
            if self.noticed or self.finished or not self.doing:  # between stages: running, not compiling
                return
            self.noticed = True
            text = f"gradc: {self.describe()}...\n"
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):  # no stderr (pythonw), or it was closed
            pass

    def past_the_mark(self) -> bool:
        return NOTICE_AFTER is not None and time.perf_counter() - self.start >= NOTICE_AFTER

    def finish(self) -> None:
        with self.lock:
            self.finished = True
        if self.timer is not None:
            self.timer.cancel()


def enter_call() -> None:
    """A call into gradc's public API begins (``gradc.errors.user_facing``): its stages are one compile."""
    _local.calls = getattr(_local, "calls", 0) + 1


def leave_call() -> None:
    """The call :func:`enter_call` began returns: the compile begun inside it, if any, is over."""
    _local.calls = level = _local.calls - 1
    current = getattr(_local, "compile", None)
    if current is not None and current.level > level:
        current.finish()
        _local.compile = None


@contextlib.contextmanager
def one_compile() -> Iterator[None]:
    """Within the block, every stage belongs to one compile (one clock, at most one notice): the command line's.

    >>> with one_compile():
    ...     with stage("gradc.trace", "tracing f"):
    ...         pass
    ...     with stage("gradc.passes", "optimising f"):
    ...         pass
    """
    enter_call()
    try:
        yield
    finally:
        leave_call()


class StageTimer:
    """What :func:`stage` yields: ``seconds`` once the stage ended, and ``note`` to add to its log line."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.note = ""


@contextlib.contextmanager
def stage(logger: str, what: str, detail: Callable[[], str] | None = None) -> Iterator[StageTimer]:
    """Log the stage ``what`` to the logger named ``logger`` (a child of ``gradc``) with its time.

    ``detail`` is called only if the slow-compile notice is given while this stage runs, to say
    how far it got (``"1,234 operations recorded so far"``). The outermost stage of a thread
    is the compile the notice belongs to.

    >>> with stage("gradc.backends.numpy", "emitting f") as timer:
    ...     timer.note = "12 lines"
    >>> timer.note
    '12 lines'
    """
    log = logging.getLogger(logger)
    current: _Compile | None = getattr(_local, "compile", None)
    owner = current is None
    if current is None:
        current = _local.compile = _Compile(getattr(_local, "calls", 0))
    current.doing.append((what, detail))
    if owner:
        current.start_timer()
    if current.past_the_mark():  # a stage boundary after the mark: say it now (once)
        current.notice()
    log.debug("%s...", what)
    timer = StageTimer()
    began = time.perf_counter()
    try:
        yield timer
    finally:
        timer.seconds = time.perf_counter() - began
        current.doing.pop()
        if owner and current.level == 0:  # outside any call into gradc: the compile is this stage
            current.finish()
            _local.compile = None
        if log.isEnabledFor(logging.INFO):
            note = f" ({timer.note})" if timer.note else ""
            log.info("%s: %.3f s%s", what, timer.seconds, note)


class _Stderr(logging.StreamHandler):
    """A handler writing to ``sys.stderr`` as it is when a record is written (not when the handler was made)."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self) -> TextIO:
        return sys.stderr


@contextlib.contextmanager
def stages_on_stderr(verbosity: int) -> Iterator[None]:
    """Within the block, show gradc's stage logs on stderr: ``1`` INFO (each stage and its time), ``2`` or more
    DEBUG (when each starts, too); ``0`` shows nothing. The command line's ``-v`` and ``-vv``.

    >>> with stages_on_stderr(1):
    ...     LOGGER.level == logging.INFO
    True
    >>> LOGGER.level
    0
    """
    if verbosity <= 0:
        yield
        return
    handler = _Stderr()
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    old_level = LOGGER.level
    LOGGER.setLevel(logging.DEBUG if verbosity >= 2 else logging.INFO)
    LOGGER.addHandler(handler)
    try:
        yield
    finally:
        LOGGER.removeHandler(handler)
        LOGGER.setLevel(old_level)
