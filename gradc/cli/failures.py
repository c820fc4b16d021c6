"""What ``gradc`` says, and which status it exits with, when a command fails.

======  =====================================================================================
status  cause
======  =====================================================================================
0       success (``--check`` passed)
1       a bug in gradc: one line, the traceback saved in the private cache (``--debug`` prints it)
2       the user's input (a GradcError), or the machine: a full disk, a read-only or unwritable
        directory, too many open files, out of memory: one line naming the place and what to do
3       ``--check`` found a mismatch or a non-finite value
130     interrupted (Ctrl-C); 141: stdout closed early (``gradc ops | head``)
======  =====================================================================================

Nothing here may fail in turn: a crash report that cannot be written (the disk that is full is
usually the cache's) is one more line, never a second traceback.

>>> import errno
>>> environment_line(OSError(errno.EROFS, "Read-only file system", "/ro/x"))
'read-only file system: /ro/x; write somewhere writable (for the C build cache: set GRADC_CACHE_DIR)'
"""
from __future__ import annotations

import contextlib
import errno
import shlex
import sys
import traceback

from gradc.backends.escape import printable
from gradc.files import reason

EXIT_INTERNAL_ERROR = 1
EXIT_USER_ERROR = 2

_ROOM = "free some space (or set GRADC_CACHE_DIR, TMPDIR or -o to a place with room)"
_WRITABLE = "write somewhere writable (for the C build cache: set GRADC_CACHE_DIR)"
ENVIRONMENT = {  # errno -> what to do
    errno.ENOSPC: _ROOM, getattr(errno, "EDQUOT", errno.ENOSPC): _ROOM,
    errno.EROFS: _WRITABLE, errno.EACCES: _WRITABLE, errno.EPERM: _WRITABLE,
    errno.EMFILE: "raise the limit of open files (ulimit -n)", errno.ENFILE: "close some programs and run again",
    errno.ENOMEM: "free some memory, or use smaller shapes",
}


def say(line: str) -> None:
    """Print one line on stderr; if even that fails (stderr closed or full) there is no one to tell."""
    with contextlib.suppress(Exception):
        print(line, file=sys.stderr)


def environment_line(exc: OSError) -> str | None:
    """The one line for an OSError the machine causes (full, read-only, ...), or None for any other.

    >>> environment_line(OSError(errno.EBADF, "Bad file descriptor")) is None
    True
    """
    todo = ENVIRONMENT.get(exc.errno)
    if todo is None:
        return None
    where = exc.filename if isinstance(exc.filename, str) else None
    return f"{reason(exc)}{': ' + printable(where) if where else ''}; {todo}"


def exit_status(exc: BaseException, debug: bool) -> int:
    """Say what went wrong (one line) and return the exit status, for an exception that is not a GradcError."""
    try:
        if isinstance(exc, MemoryError):
            say("gradc: error: out of memory; free some memory, or use smaller shapes")
            return EXIT_USER_ERROR
        line = environment_line(exc) if isinstance(exc, OSError) else None
        if line is not None:
            say(f"gradc: error: {line}")
            return EXIT_USER_ERROR
        return internal_error(exc, debug)
    except BaseException:  # noqa: BLE001 - the report of a failure must not fail
        say(f"gradc: internal error: {type(exc).__name__}. This is a bug in gradc; rerun with --debug")
        return EXIT_INTERNAL_ERROR


def internal_error(exc: BaseException, debug: bool) -> int:
    """A bug in gradc: one line, and the traceback saved in the private cache (or printed with ``--debug``)."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    summary = f"gradc: internal error: {type(exc).__name__}: {printable(str(exc))}"
    if debug:
        with contextlib.suppress(Exception):
            sys.stderr.write(text)
        say(summary)
        return EXIT_INTERNAL_ERROR
    from gradc.backends.c.cache import save_crash_report  # the private per-user cache, old reports pruned

    path, why = save_crash_report("command: " + shlex.join(["gradc"] + sys.argv[1:]) + "\n\n" + text)
    if path is not None:
        say(f"{summary}. This is a bug in gradc; please report it with the command and the traceback saved in "
            f"{printable(path)} (or rerun with --debug).")
    else:
        say(f"{summary}. This is a bug in gradc; please report it with the command and the traceback, which could "
            f"not be saved ({printable(why or 'unknown reason')}): rerun with --debug to print it.")
    return EXIT_INTERNAL_ERROR
