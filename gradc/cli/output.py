"""Every file the ``gradc`` command writes, and what it writes to stdout, goes through here.

``-o PATH`` (and a C header next to it) is checked before any work is done
(:func:`plan_outputs`, :func:`destination`) and written after (:func:`write`), with
these rules:

* a regular file (new or existing) is replaced atomically: a temporary file in the same
  directory, then a rename, so a reader never sees half a file; an existing file keeps
  its permission bits (and owner, where allowed), a new one gets 0666 minus the umask;
* a symlink is followed, as ``cp`` does: the file it points to is replaced, the link
  stays; a dangling symlink is refused;
* a FIFO or character device (``/dev/stdout``, ``/dev/null``, ``>(cmd)``) is written into;
* a directory, a path ending in ``/``, a missing directory, an unwritable place, a socket
  or block device, or the input file itself is an error (exit 2) and nothing is written.

While the user's code is imported and traced, what it prints goes to stderr
(:func:`user_output_to_stderr`): stdout carries only gradc's product.
"""
from __future__ import annotations

import contextlib
import errno
import io
import os
import secrets
import stat
import sys
from dataclasses import dataclass

from gradc.backends.escape import printable
from gradc.cli.load import CliError


@dataclass
class Destination:
    """Where one output goes: ``stdout``, a regular ``file`` (replaced atomically) or a ``stream`` (FIFO, device)."""

    kind: str
    given: str = ""  # the path as the user wrote it, for messages
    path: str = ""  # the path written: symlinks resolved for files
    mode: int | None = None  # permission bits of the file replaced
    owner: tuple | None = None  # (uid, gid) of the file replaced


def _fail(given, problem, hint=None):
    raise CliError(f"cannot write {printable(given)}: {problem}", where="", hint=hint)


def destination(out, *, inputs=()) -> Destination:
    """Check that ``out`` can be written (and is none of ``inputs``) before anything is computed.

    >>> destination("-").kind
    'stdout'
    """
    if out is None or out == "-":
        return Destination("stdout")
    if out == "":
        raise CliError("-o is empty", where="", hint="give a file name, or - for stdout")
    if "\0" in out:
        _fail(out, "the name contains a NUL character")
    if out.endswith(("/", os.sep)) or os.path.basename(out) in (".", ".."):
        is_dir = os.path.isdir(out)
        _fail(out, "it is a directory" if is_dir else "the name ends in / (a directory)",
              hint="give a file name, e.g. -o " + printable(os.path.join(out, "out.py")))
    try:
        st = os.stat(out)
    except FileNotFoundError:
        return _new_file(out)
    except OSError as e:
        _fail(out, _reason(e))
    for path in inputs:
        if os.path.exists(path) and os.path.samefile(path, out):
            _fail(out, "it is the input file", hint="choose another output name")
    if stat.S_ISDIR(st.st_mode):
        _fail(out, "it is a directory", hint="give a file name, e.g. -o " + printable(os.path.join(out, "out.py")))
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
        if not os.access(out, os.W_OK):
            _fail(out, "permission denied")
        return Destination("stream", out, out)
    if not stat.S_ISREG(st.st_mode):
        kind = "a socket" if stat.S_ISSOCK(st.st_mode) else "a block device" if stat.S_ISBLK(st.st_mode) else \
            "not a regular file"
        _fail(out, f"it is {kind}", hint="gradc writes regular files, FIFOs and character devices")
    real = os.path.realpath(out)
    _check_directory(out, os.path.dirname(real))
    return Destination("file", out, real, stat.S_IMODE(st.st_mode), (st.st_uid, st.st_gid))


def _inputs(args):
    """The user's source file, which no output may overwrite."""
    path = args.function.rpartition(":")[0] if getattr(args, "function", None) else ""
    return [path] if path and "\0" not in path else []


def plan_outputs(args):
    """Check ``-o`` (and the C header next to it) before any work, and before the user's code runs
    with file descriptor 1 pointed at stderr (``-o /dev/stdout`` must mean the real stdout).

    >>> import argparse
    >>> args = argparse.Namespace(output=None, command="compile", target="c", function="m.py:f")
    >>> plan_outputs(args)
    >>> args.dest.kind, args.header_dest
    ('stdout', None)
    """
    inputs = _inputs(args)
    args.dest = destination(args.output, inputs=inputs)
    args.header_dest, args.header_note = None, None
    if args.command == "compile" and args.target == "c":
        args.header_dest, args.header_note = _c_header_destination(args, args.dest, inputs)


def _c_header_destination(args, source, inputs):
    """Where ``--target c`` writes the header (``NAME.h`` next to ``NAME.c``), and a note when it is not obvious."""
    if source.kind != "file":
        where = "stdout" if source.kind == "stdout" else "a FIFO or device"
        return None, f"note: the C header is not written when the source goes to {where}; " \
                     "use -o NAME.c to get NAME.h too"
    base, ext = os.path.splitext(args.output)
    header = base + ".h"
    if ext == ".h":
        raise CliError(f"-o {printable(args.output)}: that is the name of the header, which goes next to the source",
                       where="", hint=f"name the C source {printable(base)}.c")
    dest = destination(header, inputs=inputs)
    note = None if ext == ".c" else f"note: wrote the C header to {printable(header)} (the source is in " \
                                    f"{printable(args.output)})"
    return dest, note


def _new_file(out) -> Destination:
    if os.path.islink(out):
        _fail(out, f"it is a symlink to {printable(os.readlink(out))}, which does not exist",
              hint="create the target first or remove the link")
    _check_directory(out, os.path.dirname(os.path.abspath(out)))
    return Destination("file", out, os.path.abspath(out))


def _check_directory(out, directory):
    shown = printable(os.path.dirname(out) or ".")
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        _fail(out, f"directory {shown} does not exist", hint="create it first (mkdir -p)")
    except OSError as e:
        _fail(out, _reason(e))
    if not stat.S_ISDIR(st.st_mode):
        _fail(out, f"{shown} is not a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        _fail(out, f"permission denied: cannot create files in directory {shown}")


def _reason(e: OSError) -> str:
    reasons = {errno.ENOTDIR: "a part of the path is not a directory", errno.ENAMETOOLONG: "the name is too long",
               errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
               errno.EACCES: "permission denied", errno.EPERM: "permission denied",
               errno.ENOSPC: "no space left on the device", errno.EROFS: "read-only file system",
               errno.EISDIR: "it is a directory"}
    return reasons.get(e.errno, (e.strerror or type(e).__name__).lower())


def write(dest: Destination, data: bytes, stdout=None):
    """Write ``data`` where ``dest`` says; an OSError is a user error naming the path.

    >>> write(Destination("stdout"), b"hello\\n")
    hello
    """
    if dest.kind == "stdout":
        stream = stdout or sys.stdout
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            stream.flush()
            buffer.write(data)
            buffer.flush()
        else:
            stream.write(data.decode("utf-8"))
            stream.flush()
        return
    try:
        if dest.kind == "stream":
            fd = os.open(dest.path, os.O_WRONLY)
            with open(fd, "wb") as f:
                f.write(data)
        else:
            _replace(dest, data)
    except OSError as e:
        _fail(dest.given, _reason(e))


def _replace(dest: Destination, data: bytes):
    """A temporary file next to ``dest.path``, then a rename over it (atomic on POSIX)."""
    directory, base = os.path.split(dest.path)
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
            if dest.mode is not None:
                os.fchmod(f.fileno(), dest.mode)
                with contextlib.suppress(OSError):  # only root may give a file away
                    os.fchown(f.fileno(), *dest.owner)
            f.write(data)
        os.replace(tmp, dest.path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def user_output_to_stderr():
    """Send what the user's code prints to stderr, at the Python and the file-descriptor level.

    Yields the real stdout stream, for gradc's own product after the block.

    >>> with user_output_to_stderr():
    ...     print("this goes to stderr")
    """
    real = sys.stdout
    saved_fd = None
    with contextlib.suppress(AttributeError, OSError, ValueError, io.UnsupportedOperation):
        if real.fileno() == 1 and sys.stderr.fileno() == 2:
            real.flush()
            saved_fd = os.dup(1)
            os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield real
    finally:
        with contextlib.suppress(Exception):  # e.g. print(..., file=sys.__stdout__) without flush
            sys.__stdout__.flush()
            real.flush()
        sys.stdout = real
        if saved_fd is not None:
            os.dup2(saved_fd, 1)
            os.close(saved_fd)
