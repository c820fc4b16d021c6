"""The errors gradc raises, and where in the user's code they point.

Every error a user can cause is a :class:`GradcError`; its message names the
problem, the user's ``file:line`` and the fix.

>>> try:
...     raise TraceError("np.foo is not supported", hint="use np.bar")
... except GradcError as e:
...     print(type(e).__name__)
TraceError
"""
from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from gradc.stages import enter_call, leave_call

_P = ParamSpec("_P")
_R = TypeVar("_R")

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_SKIP_DIRS = (_PACKAGE_DIR, os.path.dirname(os.path.abspath(str(__import__("numpy").__file__))))
# the standard library's own frames (contextlib's `with`, functools) are never the user's line
_STDLIB_DIR = os.path.dirname(os.path.abspath(os.__file__))
_STDLIB_USER_DIRS = ("site-packages", "dist-packages")


def user_location() -> str | None:
    """``file:line`` of the innermost stack frame outside gradc and NumPy.

    >>> user_location() is not None
    True
    """
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_SKIP_DIRS) and not frame.f_code.co_filename.startswith("<frozen") and \
                not _in_stdlib(path):
            return f"{_display_path(frame.f_code.co_filename)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def _in_stdlib(path: str) -> bool:
    """Whether ``path`` is a module of Python's standard library (not a package installed beside it)."""
    if not path.startswith(_STDLIB_DIR + os.sep):
        return False
    return not any(part in _STDLIB_USER_DIRS for part in path[len(_STDLIB_DIR):].split(os.sep))


def _display_path(path: str) -> str:
    """A path relative to the working directory when it is below it."""
    if path.startswith("<"):
        return path
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def user_facing(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorator for public entry points: a GradcError surfaces without gradc's internal frames.

    >>> @user_facing
    ... def f():
    ...     raise GradcError("bad", where="x.py:1")
    >>> import traceback
    >>> try:
    ...     f()
    ... except GradcError as e:
    ...     print([frame.name for frame in traceback.extract_tb(e.__traceback__)])
    ['<module>', 'entry']
    """
    import functools

    @functools.wraps(fn)
    def entry(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        enter_call()  # the stages run inside are one compile: one clock for the slow-compile notice (gradc.stages)
        try:
            return fn(*args, **kwargs)
        except GradcError as err:
            err.__cause__ = err.__context__ = None
            err.__suppress_context__ = True
            raise err.with_traceback(None) from None
        finally:
            leave_call()
    return entry


class GradcError(Exception):
    """Base class of every error gradc reports about the user's input.

    ``where`` is the user's ``file:line`` (found on the stack when not given);
    ``hint`` says how to fix it. ``str(err)`` joins the three.

    >>> str(GradcError("bad", where="f.py:3", hint="do this"))
    'bad (f.py:3); do this'
    """

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None):
        self.message = message
        self.where = where if where is not None else user_location()
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        text = self.message
        if self.where:
            text += f" ({self.where})"
        if self.hint:
            text += f"; {self.hint}"
        return text


class TraceError(GradcError):
    """The function cannot be traced: unsupported call, control flow on a traced value, ...

    >>> issubclass(TraceError, GradcError)
    True
    """



class ImmutableArgumentError(TraceError, TypeError):
    """The function writes into a view of one of its array arguments that gradc cannot follow back to it (a
    reshape or transpose view, a view carried through a loop). A ``TypeError`` too, as JAX and HIPS autograd
    raise for writes into arguments (gradc allows the direct ones, with a warning: see ``gradc.trace.inplace``).

    >>> issubclass(ImmutableArgumentError, TypeError) and issubclass(ImmutableArgumentError, TraceError)
    True
    """


class StaticValueNeeded(TraceError):
    """A traced value is used where Python needs a concrete one (an int for a slice bound, a float, an index).

    Inside a traced loop this is usually the loop counter: gradc then runs a loop of static
    length as plain Python (unrolled) instead.
    """

class StaleStateError(TraceError):
    """A global the traced function read at trace time has changed since (see README, "frozen").

    >>> issubclass(StaleStateError, TraceError)
    True
    """


class ShapeError(GradcError):
    """Operand shapes or dtypes do not fit the operation.

    >>> issubclass(ShapeError, GradcError)
    True
    """


class MissingRuleError(GradcError):
    """An operation has no derivative rule but a gradient flows through it.

    >>> issubclass(MissingRuleError, GradcError)
    True
    """


class EmitError(GradcError):
    """Source code cannot be emitted for a graph (e.g. ops without a C spelling).

    >>> issubclass(EmitError, GradcError)
    True
    """


class ArgumentError(GradcError):
    """A call's arguments do not fit: unknown ``wrt`` name, unsupported input type, ...

    >>> issubclass(ArgumentError, GradcError)
    True
    """


class OutputShapeError(ShapeError, TypeError):
    """``grad`` (or ``hessian``) of a function whose output is not a scalar. A ``TypeError`` too, as JAX and HIPS
    autograd raise for it, so code written for them that catches it keeps working.

    >>> issubclass(OutputShapeError, ShapeError) and issubclass(OutputShapeError, TypeError)
    True
    """


class OutputDtypeError(ArgumentError, TypeError):
    """``grad`` of a function with a complex output and no ``holomorphic=True`` (or holomorphic with a real output).
    A ``TypeError`` too, as JAX and HIPS autograd raise for it.

    >>> issubclass(OutputDtypeError, ArgumentError) and issubclass(OutputDtypeError, TypeError)
    True
    """


class WriteError(GradcError):
    """A file cannot be written where the user asked (see :mod:`gradc.files` for the rule).

    ``path`` is the path as the user gave it, ``errno`` the OS error number when there is one.

    >>> str(WriteError("cannot write d/x.pt: directory d does not exist", path="d/x.pt", where=""))
    'cannot write d/x.pt: directory d does not exist'
    """

    def __init__(self, message: str, *, path: str = "", errno: int | None = None, where: str | None = None,
                 hint: str | None = None):
        self.path, self.errno = path, errno
        super().__init__(message, where=where, hint=hint)


class EnvironmentProblem(GradcError):
    """The machine stops gradc, not the user's code: a full disk, a read-only or unwritable directory.

    ``directory`` names the place; the message says what to do. The command line exits with 2.

    >>> str(EnvironmentProblem("no space left in /tmp/c", directory="/tmp/c", where="", hint="free some space"))
    'no space left in /tmp/c; free some space'
    """

    def __init__(self, message: str, *, directory: str = "", where: str | None = None, hint: str | None = None):
        self.directory = directory
        super().__init__(message, where=where, hint=hint)


class CheckError(GradcError):
    """``gradc.check`` found the compiled function disagreeing with the user's function.

    ``report`` is the :class:`gradc.check.CheckReport` with every comparison.

    >>> issubclass(CheckError, GradcError)
    True
    """

    def __init__(self, message: str, *, report: object = None, where: str | None = None, hint: str | None = None):
        self.report = report
        super().__init__(message, where=where, hint=hint)


class GradcWarning(UserWarning):
    """Something the user's code does is fixed at trace time: a global array read, a random draw, ...

    Issued with ``warnings.warn_explicit`` at the user's ``file:line``.

    >>> issubclass(GradcWarning, UserWarning)
    True
    """
