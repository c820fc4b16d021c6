"""One rule for every file gradc writes (``gradc compile -o``, the C header, ``gradc.torch.save``).

* A regular file, new or existing, is replaced atomically: a temporary file in the same
  directory, then a rename, so a reader never sees half a file and a failure leaves the old
  file as it was. An existing file keeps its permission bits (and owner, where allowed); a new
  one gets 0666 minus the umask.
* A symlink is resolved, as ``cp`` does: the regular file it points to is replaced and the link
  stays. A dangling symlink is refused (gradc does not guess where to create its target).
* A FIFO or character device (``/dev/null``, ``/dev/stdout``, ``>(cmd)``) is written into:
  there is no file to replace.
* Anything else is refused before a byte is written, with a :class:`~gradc.errors.WriteError`
  that names the path the user gave (never a temporary name) and says what to do: a directory,
  a name ending in ``/``, a missing or unwritable directory, a socket, a block device.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "out.txt")
>>> write_atomically(path, "hello\\n") == os.path.realpath(path)
True
>>> open(path).read()
'hello\\n'
"""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass

from gradc.errors import WriteError


@dataclass(frozen=True)
class Target:
    """Where bytes for a path go: a regular ``file`` (replaced atomically) or a ``stream`` (FIFO, device)."""

    kind: str
    given: str  # the path as the user wrote it, for messages
    path: str  # the path written: symlinks resolved
    mode: int | None = None  # permission bits of the file replaced
    owner: tuple | None = None  # (uid, gid) of the file replaced


def shown(path: str) -> str:
    """``path`` as one line of visible characters (control characters and stray bytes escaped).

    >>> shown("a\\nb.py")
    'a\\\\nb.py'
    """
    return path if path.isprintable() else repr(path)[1:-1]


def _refuse(given: str, problem: str, hint: str | None = None, code: int | None = None):
    raise WriteError(f"cannot write {shown(given)}: {problem}", path=given, errno=code, hint=hint)


def writable_target(path, *, inputs=()) -> Target:
    """Check that ``path`` can be written (and is none of ``inputs``), before anything is computed.

    Raises :class:`~gradc.errors.WriteError` when it cannot.

    >>> writable_target("/dev/null").kind
    'stream'
    """
    given = os.fspath(path)
    if isinstance(given, bytes):
        given = os.fsdecode(given)
    if given == "":
        _refuse(given, "the name is empty", "give a file name")
    if "\0" in given:
        _refuse(given, "the name contains a NUL character")
    if given.endswith(("/", os.sep)) or os.path.basename(given) in (".", ".."):
        is_dir = os.path.isdir(given)
        _refuse(given, "it is a directory" if is_dir else "the name ends in / (a directory)",
                "give a file name, e.g. " + shown(os.path.join(given, "out.txt")), errno.EISDIR)
    try:
        st = os.stat(given)
    except FileNotFoundError:
        return _new_file(given)
    except OSError as e:
        _refuse(given, reason(e), code=e.errno)
    for other in inputs:
        if os.path.exists(other) and os.path.samefile(other, given):
            _refuse(given, "it is the input file", "choose another output name")
    if stat.S_ISDIR(st.st_mode):
        _refuse(given, "it is a directory", "give a file name, e.g. " + shown(os.path.join(given, "out.txt")),
                errno.EISDIR)
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
        if not os.access(given, os.W_OK):
            _refuse(given, "permission denied", code=errno.EACCES)
        return Target("stream", given, given)
    if not stat.S_ISREG(st.st_mode):
        kind = "a socket" if stat.S_ISSOCK(st.st_mode) else "a block device" if stat.S_ISBLK(st.st_mode) else \
            "not a regular file"
        _refuse(given, f"it is {kind}", "gradc writes regular files, FIFOs and character devices")
    real = os.path.realpath(given)
    _check_directory(given, os.path.dirname(real))
    return Target("file", given, real, stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid))


def _new_file(given: str) -> Target:
    if os.path.islink(given):
        _refuse(given, f"it is a symlink to {shown(os.readlink(given))}, which does not exist",
                "create the target first or remove the link", errno.ENOENT)
    _check_directory(given, os.path.dirname(os.path.abspath(given)))
    return Target("file", given, os.path.abspath(given))


def _check_directory(given: str, directory: str):
    named = shown(os.path.dirname(given) or ".")
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        _refuse(given, f"directory {named} does not exist", "create it first (mkdir -p)", errno.ENOENT)
    except OSError as e:
        _refuse(given, reason(e), code=e.errno)
    if not stat.S_ISDIR(st.st_mode):
        _refuse(given, f"{named} is not a directory", code=errno.ENOTDIR)
    if not os.access(directory, os.W_OK | os.X_OK):
        _refuse(given, f"permission denied: cannot create files in directory {named}", code=errno.EACCES)


def reason(e: OSError) -> str:
    """A short lower-case phrase for an OSError, without the path (the message names the path itself).

    >>> reason(OSError(errno.ENOSPC, "No space left on device"))
    'no space left on the device'
    """
    reasons = {errno.ENOTDIR: "a part of the path is not a directory", errno.ENAMETOOLONG: "the name is too long",
               errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
               errno.EACCES: "permission denied", errno.EPERM: "permission denied",
               errno.ENOSPC: "no space left on the device", errno.EROFS: "read-only file system",
               errno.EISDIR: "it is a directory", errno.ENOENT: "no such file or directory",
               getattr(errno, "EDQUOT", -1): "disk quota exceeded"}
    return reasons.get(e.errno, (e.strerror or type(e).__name__).lower())


def write_to(target: Target, data: bytes | str) -> None:
    """Write ``data`` (text is UTF-8) where ``target`` says; an OSError becomes a WriteError naming ``target.given``."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        if target.kind == "stream":
            fd = os.open(target.path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
            with open(fd, "wb") as f:
                f.write(data)
        else:
            _replace(target, data)
    except OSError as e:
        _refuse(target.given, reason(e), _hint(e), e.errno)


def _hint(e: OSError) -> str | None:
    if e.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        return "free some space (or write elsewhere) and run again"
    if e.errno == errno.EROFS:
        return "write to a writable place"
    return None


def write_atomically(path, data: bytes | str) -> str:
    """Write ``data`` to ``path`` by the rule of this module; return the path written (symlinks resolved).

    Raises :class:`~gradc.errors.WriteError` (naming ``path`` as given) when it cannot; the
    previous content, if any, is then unchanged.

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> try:
    ...     write_atomically(os.path.join(folder, "missing", "out.pt"), b"x")
    ... except Exception as e:
    ...     print(type(e).__name__, "missing" in str(e), ".tmp" in str(e))
    WriteError True False
    """
    target = writable_target(path)
    write_to(target, data)
    return target.path


def _replace(target: Target, data: bytes):
    """A temporary file next to ``target.path``, then a rename over it (atomic on POSIX)."""
    directory, base = os.path.split(target.path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(directory, f".{base[:40]}.{secrets.token_hex(4)}.tmp")  # short: names cap at 255 bytes
        try:
            fd = os.open(tmp, flags, 0o666)  # the kernel applies the umask
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary name", directory)
    try:
        with open(fd, "wb") as f:
            if target.mode is not None:
                os.fchmod(f.fileno(), target.mode)
                with contextlib.suppress(OSError):  # only root may give a file away
                    os.fchown(f.fileno(), *target.owner)
            f.write(data)
        os.replace(tmp, target.path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
