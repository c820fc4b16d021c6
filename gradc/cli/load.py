"""What the ``gradc`` command compiles: the user's function, its argument types and ``wrt``.

``FILE.py:FUNC`` is imported from its file; each parameter's type comes from
``--arg NAME=TYPE``, a string annotation (``x: "f64[5]"``) or a static default.

>>> parse_arg_option("x=f64[5,3]")
('x', f64[5,3])
"""
from __future__ import annotations

import importlib.util
import inspect
import keyword
import os
import sys
import traceback

import numpy as np

from gradc.backends.escape import printable
from gradc.errors import GradcError
from gradc.ir.types import TensorType, parse_type
from gradc.trace.signature import callable_signature, static_note


class CliError(GradcError):
    """A mistake on the command line (bad FILE:FUNC, malformed --arg, ...)."""

    def __init__(self, message, *, where="", hint=None):
        super().__init__(message, where=where, hint=hint)



# ---------------------------------------------------------------- loading the user's function
def parse_target(spec: str):
    """``FILE.py:FUNC`` split into the path and the function name.

    >>> parse_target("examples/logistic.py:loss")
    ('examples/logistic.py', 'loss')
    """
    path, sep, func = spec.rpartition(":")
    if not sep or not path or not func:
        raise CliError(f"expected FILE.py:FUNC, got '{printable(spec)}'", hint="e.g. examples/logistic.py:loss")
    if not func.isidentifier() or keyword.iskeyword(func):
        raise CliError(f"'{printable(func)}' in {printable(spec)} is not a Python function name", where="",
                       hint="name a function defined with def (or assigned) at the module's top level")
    return path, func


def load_function(spec: str):
    """Import FILE.py (its directory first on sys.path) and return ``(function, path, name)``."""
    path, func_name = parse_target(spec)
    shown = printable(path)
    if "\0" in path:
        raise CliError(f"no such file: {shown} (a file name cannot contain NUL)", where="")
    if os.path.isdir(path):
        raise CliError(f"{shown} is a directory, not a Python file", where="", hint="e.g. model.py:loss")
    if os.path.exists(path) and not os.path.isfile(path):
        raise CliError(f"{shown} is not a regular file (a FIFO or device?)", where="", hint="e.g. model.py:loss")
    if not os.path.isfile(path):
        raise CliError(f"no such file: {shown}", where="", hint="give the path of a Python file, e.g. model.py:loss")
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    module_name = "gradc_user_" + "".join(c if c.isalnum() else "_" for c in os.path.basename(path)[:-3])
    spec_obj = importlib.util.spec_from_file_location(module_name, path)
    if spec_obj is None or spec_obj.loader is None:
        raise CliError(f"cannot import {shown}", where="", hint="the file must be a Python module ending in .py")
    module = importlib.util.module_from_spec(spec_obj)
    try:
        spec_obj.loader.exec_module(module)
    except GradcError:
        raise
    except SyntaxError as e:
        raise CliError(f"syntax error in {shown}: {e.msg}", where=f"{shown}:{e.lineno}") from None
    except SystemExit as e:  # not ours to obey: gradc would exit with the user's status and no output
        raise CliError(f"importing {shown} called sys.exit({e.code!r})", where=_user_line(e, path),
                       hint="guard script code with `if __name__ == \"__main__\":`") from None
    except Exception as e:  # the user's module failed while importing
        line = _user_line(e, path)
        raise CliError(f"importing {shown} raised {type(e).__name__}: {e}", where=line) from None
    func = getattr(module, func_name, None)
    if inspect.isclass(func) or inspect.ismodule(func):
        kind = "a class" if inspect.isclass(func) else "a module"
        raise CliError(f"{func_name} in {shown} is {kind}, not a function", where=path,
                       hint="name a function defined with def")
    if func is None or not callable(func):
        names = sorted(n for n, v in vars(module).items()
                       if inspect.isfunction(v) and v.__module__ == module_name and not n.startswith("_"))
        hint = f"functions defined there: {', '.join(names)}" if names else "define the function at module level"
        raise CliError(f"no function {func_name!r} in {shown}", where=shown, hint=hint)
    return func, path, func_name


def _user_line(exc, path):
    target = os.path.abspath(path)
    where = printable(path)
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if os.path.abspath(frame.f_code.co_filename) == target:
            where = f"{printable(path)}:{lineno}"
    return where


def _user_raise_site(exc, path):
    """``file:line`` in the user's file when ``exc`` was raised by user code (not inside gradc), else None."""
    from gradc.errors import _PACKAGE_DIR

    target = os.path.abspath(path)
    where, after_user = None, False
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        filename = os.path.abspath(frame.f_code.co_filename)
        if filename == target:
            where, after_user = f"{printable(path)}:{lineno}", True
        elif after_user and filename.startswith(_PACKAGE_DIR + os.sep):
            return None
    return where


def parse_arg_option(text: str):
    """One ``--arg NAME=TYPE`` option.

    A plain integer is a static Python int (like a default ``n=3``): it is fixed at trace time.

    >>> parse_arg_option("n=i64[]")
    ('n', i64[])
    >>> parse_arg_option("n=3")
    ('n', 3)
    """
    name, sep, type_text = text.partition("=")
    name = name.strip()
    shown = printable(text)
    if not sep or not name.isidentifier() or keyword.iskeyword(name):
        raise CliError(f"malformed --arg '{shown}'", where="",
                       hint="write NAME=TYPE, e.g. --arg x=f64[5,3] or --arg s=f64[]")
    if type_text.strip().lstrip("-").isascii() and type_text.strip().lstrip("-").isdigit():
        return name, int(type_text)
    try:
        t = parse_type(type_text)
    except ValueError as e:
        raise CliError(f"malformed --arg '{shown}': {printable(str(e))}", where="",
                       hint="types look like f64[5,3], f32[], i64[10]") from None
    if int(np.prod([float(d) for d in t.shape if isinstance(d, int)])) * t.np_dtype.itemsize >= 2 ** 63:
        raise CliError(f"--arg '{shown}': an array of that shape would not fit in any memory", where="",
                       hint="check the dimensions")
    return name, t


def _given_types(arg_options):
    """``--arg`` options by parameter name; naming a parameter twice is an error (which one would win?)."""
    given, texts = {}, {}
    for option in arg_options or []:
        name, value = parse_arg_option(option)
        if name in given:
            raise CliError(f"--arg {name} is given more than once ('{printable(texts[name])}' and "
                           f"'{printable(option)}')", where="", hint="keep one --arg per parameter")
        given[name], texts[name] = value, option
    return given


def argument_types(func, path, arg_options):
    """The type (or static default) of every parameter: from --arg, else string annotations, else defaults."""
    given = _given_types(arg_options)
    try:
        sig = callable_signature(func)
    except (TypeError, ValueError):
        raise CliError(f"cannot read the parameters of {printable(repr(func))}", where=printable(path),
                       hint="name a Python function defined with def") from None
    params = list(sig.parameters.values())
    names = [p.name for p in params]
    for name in given:
        if name not in names:
            raise CliError(f"--arg {name}: {func.__name__} has no parameter {name!r}",
                           where=_def_line(func, path), hint=f"parameters are: {', '.join(names)}")
    types = {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise CliError(f"{func.__name__} takes *{p.name}; gradc compiles functions with named parameters",
                           where=_def_line(func, path))
        if p.name in given:
            types[p.name] = given[p.name]
        elif isinstance(p.annotation, str) and "[" in p.annotation:
            try:
                types[p.name] = parse_type(p.annotation)
            except ValueError as e:
                raise CliError(f"annotation of {p.name!r}: {e}", where=_def_line(func, path)) from None
        elif p.default is not p.empty:
            types[p.name] = p.default
        else:
            raise CliError(f"no type for parameter {p.name!r} of {func.__name__}", where=_def_line(func, path),
                           hint=f"add --arg {p.name}=f64[...] (or {p.name}=3 for a static int) or annotate it: "
                                f"{p.name}: \"f64[5]\"")
    return types


def parse_static_option(text: str):
    """One ``--static NAME=VALUE`` option: VALUE is a Python literal (a number, a string, a tuple, True, None),
    read with ``ast.literal_eval`` (never run as code).

    >>> parse_static_option("n=3"), parse_static_option("shape=(2, 3)"), parse_static_option("mode='mean'")
    (('n', 3), ('shape', (2, 3)), ('mode', 'mean'))
    """
    import ast

    name, sep, value_text = text.partition("=")
    name = name.strip()
    shown = printable(text)
    if not sep or not name.isidentifier() or keyword.iskeyword(name):
        raise CliError(f"malformed --static '{shown}'", where="", hint="write NAME=VALUE, e.g. --static n=3")
    try:
        value = ast.literal_eval(value_text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise CliError(f"--static '{shown}': the value is not a Python literal", where="",
                       hint="give a number, a string in quotes, a tuple, True, False or None, e.g. --static "
                            "n=3 or --static mode=\"'mean'\"") from None
    try:
        hash(value)
    except TypeError:
        raise CliError(f"--static '{shown}': a {type(value).__name__} is not hashable (a static value is part of "
                       "what the compiled code was specialised to)", where="",
                       hint="use a tuple instead of a list, e.g. --static shape=(2,3)") from None
    return name, value


def static_values(func, path, static_options, arg_options):
    """The parameters made static: ``--static`` options (checked against the parameters and ``--arg``), then the
    parameters left to a default gradc cannot trace (a function, ``act=np.tanh``): ``{name: value}``."""
    from gradc.derivatives.static_args import is_opaque

    params = callable_signature(func).parameters
    given = {}
    for option in static_options or []:
        name, value = parse_static_option(option)
        if name in given:
            raise CliError(f"--static {name} is given more than once", where="", hint="keep one --static per parameter")
        if name not in params:
            raise CliError(f"--static {name}: {func.__name__} has no parameter {name!r}", where=_def_line(func, path),
                           hint=f"parameters are: {', '.join(params)}")
        given[name] = value
    typed = _given_types(arg_options)
    for name in given:
        if name in typed:
            raise CliError(f"{name} is given both --arg and --static", where="",
                           hint="a static parameter is a constant of the compiled code: give it --static only")
    for p in params.values():
        if p.name not in given and p.name not in typed and p.default is not p.empty and is_opaque(p.default):
            given[p.name] = p.default
    return {p: given[p] for p in params if p in given}


def _def_line(func, path):
    code = getattr(func, "__code__", None)
    return f"{printable(path)}:{code.co_firstlineno}" if code else printable(path)


class Job:
    """A traced function with its argument types and ``wrt`` names, as the options describe it."""

    def __init__(self, args, need_wrt=True, scalar_output=True):
        from gradc.trace import trace_bound
        from gradc.trace.control_trace import loop_checkpoint
        from gradc.trace.selection import float_inputs, select_arguments
        from gradc.transforms import reverse as ad

        self.func, self.path, self.func_name = load_function(args.function)
        self.static = static_values(self.func, self.path, getattr(args, "static", None), args.arg)
        if self.static:  # baked in: the compiled functions do not take them (gradc.derivatives.static_args)
            from gradc.derivatives.static_args import with_static

            self.func = with_static(self.func, self.static)
        self.types = argument_types(self.func, self.path, args.arg)
        self.examples = list(self.types.values())  # types, not arrays: tracing allocates nothing
        self.max_trips = getattr(args, "max_trips", None)
        try:
            with loop_checkpoint(getattr(args, "checkpoint", None)):  # --checkpoint: the loops' default policy
                self.graph = trace_bound(self.func, dict(zip(self.types, self.examples)))[0]  # keyword-only too
        except GradcError:
            raise
        except SystemExit as e:
            raise CliError(f"{self.func_name} called sys.exit({e.code!r}) while tracing",
                           where=_user_line(e, self.path), hint="return a value instead") from None
        except Exception as e:
            where = _user_raise_site(e, self.path)
            if where is None:
                raise  # raised inside gradc: a bug
            raise CliError(f"{self.func_name} raised {type(e).__name__} while tracing: {printable(str(e))}",
                           where=where,
                           hint="gradc runs the function on traced arrays (shapes and dtypes, no values)") from None
        self.graph.origin = f"{self.path}:{self.func_name}{static_note(self.func)}"
        self.graph.name = self.func_name  # a partial or an alias is named as on the command line
        self.wrt = None
        self.wrt_defaulted = getattr(args, "wrt", None) is None
        if need_wrt:
            where = _def_line(self.func, self.path)
            wrt = None
            if args.wrt is not None:
                wrt = [_position_or_name(n) for n in _split_names(args.wrt)]
                if not wrt:
                    raise CliError(f"--wrt '{printable(args.wrt)}' names no parameter", where="",
                                   hint="e.g. --wrt w,b (or leave --wrt out: the first parameter)")
                wrt = tuple(wrt) if len(wrt) > 1 else wrt[0]
            # the library's rules and default (gradc.trace.selection): the first parameter when --wrt is left out
            selection = select_arguments(self.func, wrt=wrt, what="", where=where, option="--wrt")
            try:
                self.wrt = float_inputs(selection, self.graph, where)
                if scalar_output:  # grad, hessian, hvp; jvp, vjp and Jacobians take any output
                    ad.check_differentiable_output(self.graph)
            except GradcError as e:
                e.where = where
                raise

    def arg_options(self):
        """Canonical ``--arg`` options: every traced parameter, and static ints that differ from their defaults."""
        defaults = {p.name: p.default for p in callable_signature(self.func).parameters.values()}
        return [f"{n}={t}" for n, t in self.types.items()
                if isinstance(t, TensorType) or type(t) is not type(defaults[n]) or t != defaults[n]]


def _split_names(text):
    return [n.strip() for n in text.split(",") if n.strip()]


def _position_or_name(text):
    """One item of ``--wrt``: a position (``0``, ``-1``) or a parameter's name.

    >>> _position_or_name("-1"), _position_or_name("w")
    (-1, 'w')
    """
    digits = text[1:] if text.startswith("-") else text
    return int(text) if digits.isascii() and digits.isdigit() else text
