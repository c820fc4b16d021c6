"""The per-user cache of compiled C (and of crash reports): private, and trusted only where gradc wrote it.

A shared object is code the process will run, so a cached one is loaded only
when it is a regular file owned by the current user and writable by no one
else, in a directory with the same properties. The default directory
(``$XDG_CACHE_HOME/gradc/c`` or ``~/.cache/gradc/c``) is created ``0700``; a
``$GRADC_CACHE_DIR`` that another user owns, or that group or others may write,
is refused with a clear message. A cached file that fails the test is rebuilt.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     os.chmod(tmp, 0o700)
...     _problem(tmp) is None
True
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile

from gradc.errors import EmitError, EnvironmentProblem

CRASH_REPORTS_KEPT = 20  # the newest crash reports kept; older ones are deleted when a new one is written


def _problem(path: str, directory: bool = True) -> str | None:
    """Why ``path`` is not trusted (another owner, group/other-writable, wrong kind), or None."""
    try:
        st = os.stat(path) if directory else os.lstat(path)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if directory and not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if not directory and not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return f"is owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        who = {0o020: "its group", 0o002: "others", 0o022: "its group and others"}[st.st_mode & 0o022]
        return f"is writable by {who} (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def cache_dir() -> str:
    """The C cache directory, created private if missing; an EmitError if it cannot be trusted.

    >>> os.path.isdir(cache_dir())
    True
    """
    explicit = os.environ.get("GRADC_CACHE_DIR")
    if explicit:
        root = explicit
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "gradc", "c")
    try:
        os.makedirs(root, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise environment_problem(exc, root, doing="create") from None
    problem = _problem(root)
    if problem and not explicit and "writable by" in problem:
        try:  # gradc's own default directory, made under a loose umask by an older gradc: tighten it
            os.chmod(root, 0o700)
            problem = _problem(root)
        except OSError:  # not ours: reported below
            pass
    if problem:
        source = f"GRADC_CACHE_DIR={root}" if explicit else f"the C build cache {root}"
        raise EmitError(f"{source} {problem}: compiled code loaded from it could have been replaced", where="",
                        hint="use a directory only you can write (mkdir -m 700 DIR; GRADC_CACHE_DIR=DIR)")
    return root


class CacheProblem(EnvironmentProblem, EmitError):
    """The C build cache cannot be used because of the machine (full, read-only, ...); an EmitError as before.

    >>> issubclass(CacheProblem, EnvironmentProblem) and issubclass(CacheProblem, EmitError)
    True
    """


# what the machine can do wrong to a directory gradc writes in, and what the user can do about it
_PROBLEMS = {
    errno.ENOSPC: ("is full (no space left on the device)", "free some space there"),
    errno.EROFS: ("is on a read-only file system", None),
    errno.EACCES: ("is not writable (permission denied)", None),
    errno.EPERM: ("is not writable (operation not permitted)", None),
    errno.ENOENT: ("does not exist (removed while gradc was using it?)", "run again"),
    errno.ENOTDIR: ("is not a directory", None),
    errno.EEXIST: ("is not a directory", None),
    errno.EMFILE: ("cannot be used: too many open files", "raise the limit (ulimit -n)"),
}
if hasattr(errno, "EDQUOT"):
    _PROBLEMS[errno.EDQUOT] = ("is full (disk quota exceeded)", "free some space there")


def environment_problem(exc: OSError, directory: str, doing: str = "write in") -> EnvironmentProblem | OSError:
    """The :class:`EnvironmentProblem` an OSError in ``directory`` (the C build cache) means, or ``exc`` itself
    when it is not a problem of the machine (a bug in gradc is not hidden as one).

    >>> problem = environment_problem(OSError(errno.ENOSPC, "No space left on device"), "/c")
    >>> problem.directory, "/c: it is full" in str(problem), "free some space there" in str(problem)
    ('/c', True, True)
    """
    known = _PROBLEMS.get(exc.errno)
    if known is None:
        return exc
    what, todo = known
    explicit = os.environ.get("GRADC_CACHE_DIR")
    source = "the C build cache" + (" (GRADC_CACHE_DIR)" if explicit else "")
    fix = "set GRADC_CACHE_DIR to a directory " + ("with room" if exc.errno in (
        errno.ENOSPC, getattr(errno, "EDQUOT", -1)) else "you own")
    hint = f"{todo}, or {fix}" if todo else fix
    return CacheProblem(f"cannot {doing} {source} {directory}: it {what}", directory=directory, where="", hint=hint)


@contextlib.contextmanager
def cache_writes(directory: str):
    """Writing in the cache: an OSError the machine causes (full, read-only, ...) becomes an EnvironmentProblem.

    >>> with cache_writes("/c"):
    ...     pass
    """
    try:
        yield
    except OSError as exc:
        problem = environment_problem(exc, directory)
        if problem is exc:
            raise
        raise problem from None


def trusted_file(path: str) -> bool:
    """Whether the cached file ``path`` may be loaded: a regular file of ours that only we can write.

    >>> trusted_file("/nonexistent/x.so")
    False
    """
    return _problem(path, directory=False) is None


def make_private(path: str) -> None:
    """Make a file gradc just wrote readable and writable by its owner only (whatever the umask).

    >>> with tempfile.NamedTemporaryFile() as fh:
    ...     make_private(fh.name); trusted_file(fh.name)
    True
    """
    os.chmod(path, 0o700)


def write_crash_report(text: str) -> str | None:
    """:func:`save_crash_report`'s path (None when no report could be written).

    >>> path = write_crash_report("trace"); open(path).read(), os.unlink(path)
    ('trace', None)
    """
    return save_crash_report(text)[0]


def save_crash_report(text: str) -> tuple:
    """Save an internal error's report in the private cache (``crash/``), keeping the newest few.

    Returns ``(path, None)``, or ``(None, why)`` when no report could be written: it never raises,
    because it runs while gradc is already failing (a full disk must not turn into a second traceback).
    Falls back to a private temporary file when the cache cannot be used.

    >>> path, why = save_crash_report("trace"); open(path).read(), os.unlink(path), why
    ('trace', None, None)
    """
    problems = []
    directory = None
    try:
        directory = os.path.join(cache_dir(), "crash")
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if _problem(directory):
            raise EmitError("crash directory not private", where="")
        _prune(directory, CRASH_REPORTS_KEPT - 1)
    except (EmitError, EnvironmentProblem, OSError) as exc:
        problems.append(str(exc))
        directory = None
    for place in ([directory] if directory else []) + [None]:  # None: the system's temporary directory
        path = None
        try:
            fd, path = tempfile.mkstemp(prefix="gradc-crash-", suffix=".txt", dir=place)  # mode 0600
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            return path, None
        except Exception as exc:  # noqa: BLE001 - whatever happens here, the caller still reports the first error
            where = place or tempfile.gettempdir()
            problems.append(f"{where}: {getattr(exc, 'strerror', None) or exc}")
            if path:
                with contextlib.suppress(OSError):
                    os.unlink(path)
    return None, "; ".join(problems)


def _prune(directory: str, keep: int) -> None:
    """Delete all but the ``keep`` newest crash reports in ``directory``."""
    reports = []
    for entry in os.scandir(directory):
        if entry.name.startswith("gradc-crash-") and entry.is_file(follow_symlinks=False):
            reports.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
    for _, name in sorted(reports, reverse=True)[keep:]:
        try:
            os.unlink(os.path.join(directory, name))
        except OSError:
            pass
