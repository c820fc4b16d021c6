"""Every file the ``gradc`` command writes, and what it writes to stdout, goes through here.

``-o PATH`` (and a C header next to it) is checked before any work is done
(:func:`plan_outputs`, :func:`destination`) and written after (:func:`write`), with
these rules:

the rule of :mod:`gradc.files`, which every gradc writer follows (``torch.save`` too): a
regular file is replaced atomically, a symlink is resolved and the file it points to replaced,
a FIFO or character device is written into, anything else (a directory, a missing directory,
a dangling symlink, a socket, the input file itself) is an error (exit 2) and nothing is written.

While the user's code is imported and traced, what it prints goes to stderr
(:func:`user_output_to_stderr`): stdout carries only gradc's product.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys

from gradc.backends.escape import printable
from gradc.cli.load import CliError
from gradc.errors import WriteError
from gradc.files import Target, writable_target, write_to


def Destination(kind: str, given: str = "", path: str = "", mode=None, owner=None) -> Target:  # noqa: N802
    """Where one output goes: ``stdout``, or a :class:`gradc.files.Target` (a regular file or a stream)."""
    return Target(kind, given, path, mode, owner)


def _as_cli_error(err: WriteError) -> CliError:
    return CliError(err.message, where="", hint=err.hint)


def destination(out, *, inputs=()) -> Destination:
    """Check that ``out`` can be written (and is none of ``inputs``) before anything is computed.

    >>> destination("-").kind
    'stdout'
    """
    if out is None or out == "-":
        return Destination("stdout")
    if out == "":
        raise CliError("-o is empty", where="", hint="give a file name, or - for stdout")
    try:
        return writable_target(out, inputs=inputs)
    except WriteError as e:
        raise _as_cli_error(e) from None


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
        write_to(dest, data)
    except WriteError as e:
        raise _as_cli_error(e) from None


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
