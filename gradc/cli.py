"""The ``gradc`` command: compile, show, graph and ops.

``gradc compile FILE.py:FUNC --wrt w,b --arg x=f64[5] ... -o out.py`` writes a
standalone NumPy module with ``FUNC``, ``FUNC_grad`` and ``FUNC_value_and_grad``.
Errors in the user's input exit with status 2 and one line on stderr; anything
else is a bug in gradc (status 1, traceback saved to a file).

>>> parse_arg_option("x=f64[5,3]")
('x', f64[5,3])
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import shlex
import sys
import tempfile
import traceback

import numpy as np

from gradc.errors import GradcError
from gradc.ir.types import TensorType, parse_type

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 1
EXIT_CHECK_FAILED = 3
CHECK_TOLERANCE = 1e-4


class CliError(GradcError):
    """A mistake on the command line (bad FILE:FUNC, malformed --arg, ...)."""

    def __init__(self, message, *, where="", hint=None):
        super().__init__(message, where=where, hint=hint)


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors use gradc's one-line error shape (exit status 2)."""

    def error(self, message):
        raise CliError(f"{message} (see `{self.prog} --help`)")


# ---------------------------------------------------------------- loading the user's function
def parse_target(spec: str):
    """``FILE.py:FUNC`` split into the path and the function name.

    >>> parse_target("examples/logistic.py:loss")
    ('examples/logistic.py', 'loss')
    """
    path, sep, func = spec.rpartition(":")
    if not sep or not path or not func:
        raise CliError(f"expected FILE.py:FUNC, got {spec!r}", hint="e.g. examples/logistic.py:loss")
    return path, func


def load_function(spec: str):
    """Import FILE.py (its directory first on sys.path) and return ``(function, path, name)``."""
    path, func_name = parse_target(spec)
    if not os.path.isfile(path):
        raise CliError(f"no such file: {path}", where="", hint="give the path of a Python file, e.g. model.py:loss")
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    module_name = "gradc_user_" + "".join(c if c.isalnum() else "_" for c in os.path.basename(path)[:-3])
    spec_obj = importlib.util.spec_from_file_location(module_name, path)
    if spec_obj is None or spec_obj.loader is None:
        raise CliError(f"cannot import {path}", hint="the file must be a Python module ending in .py")
    module = importlib.util.module_from_spec(spec_obj)
    try:
        spec_obj.loader.exec_module(module)
    except GradcError:
        raise
    except SyntaxError as e:
        raise CliError(f"syntax error in {path}: {e.msg}", where=f"{path}:{e.lineno}") from None
    except Exception as e:  # the user's module failed while importing
        line = _user_line(e, path)
        raise CliError(f"importing {path} raised {type(e).__name__}: {e}", where=line) from None
    func = getattr(module, func_name, None)
    if func is None or not callable(func):
        names = sorted(n for n, v in vars(module).items()
                       if inspect.isfunction(v) and v.__module__ == module_name and not n.startswith("_"))
        hint = f"functions defined there: {', '.join(names)}" if names else "define the function at module level"
        raise CliError(f"no function {func_name!r} in {path}", where=path, hint=hint)
    return func, path, func_name


def _user_line(exc, path):
    target = os.path.abspath(path)
    where = path
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if os.path.abspath(frame.f_code.co_filename) == target:
            where = f"{path}:{lineno}"
    return where


def _user_raise_site(exc, path):
    """``file:line`` in the user's file when ``exc`` was raised by user code (not inside gradc), else None."""
    from gradc.errors import _PACKAGE_DIR

    target = os.path.abspath(path)
    where, after_user = None, False
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        filename = os.path.abspath(frame.f_code.co_filename)
        if filename == target:
            where, after_user = f"{path}:{lineno}", True
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
    if not sep or not name.isidentifier():
        raise CliError(f"malformed --arg {text!r}", hint="write NAME=TYPE, e.g. --arg x=f64[5,3] or --arg s=f64[]")
    if type_text.strip().lstrip("-").isdigit():
        return name, int(type_text)
    try:
        return name, parse_type(type_text)
    except ValueError as e:
        raise CliError(f"malformed --arg {text!r}: {e}", hint="types look like f64[5,3], f32[], i64[10]") from None


def argument_types(func, path, arg_options):
    """The type (or static default) of every parameter: from --arg, else string annotations, else defaults."""
    given = dict(parse_arg_option(a) for a in arg_options or [])
    sig = inspect.signature(func)
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


def _def_line(func, path):
    code = getattr(func, "__code__", None)
    return f"{path}:{code.co_firstlineno}" if code else path


def example_value(t, fill=1.0):
    """An example argument of type ``t`` for tracing: ones for floats, zeros for ints, False for bools."""
    if not isinstance(t, TensorType):
        return t  # a static default
    if t.is_float:
        if t.shape == () and t.dtype == "f64":
            return float(fill)
        return np.full(t.shape, fill, dtype=t.np_dtype)
    return np.zeros(t.shape, dtype=t.np_dtype)


def random_value(t, rng):
    """A random argument for --check: floats in [0.5, 1.5] (inside log/sqrt domains), ints zero."""
    if not isinstance(t, TensorType):
        return t
    if t.is_float:
        value = rng.uniform(0.5, 1.5, size=t.shape).astype(t.np_dtype)
        return float(value) if t.shape == () and t.dtype == "f64" else value
    return np.zeros(t.shape, dtype=t.np_dtype)


class Job:
    """A traced function with its argument types and ``wrt`` names, as the options describe it."""

    def __init__(self, args, need_wrt=True):
        from gradc import ad
        from gradc.api import resolve_wrt
        from gradc.trace import trace

        self.func, self.path, self.func_name = load_function(args.function)
        self.types = argument_types(self.func, self.path, args.arg)
        self.examples = [example_value(t) for t in self.types.values()]
        try:
            self.graph = trace(self.func, *self.examples)
        except GradcError:
            raise
        except Exception as e:
            where = _user_raise_site(e, self.path)
            if where is None:
                raise  # raised inside gradc: a bug
            raise CliError(f"{self.func_name} raised {type(e).__name__} while tracing: {e}", where=where,
                           hint="gradc runs the function on traced arrays (shapes and dtypes, no values)") from None
        self.graph.origin = f"{self.path}:{self.func_name}"
        self.wrt = None
        if need_wrt:
            wrt = _split_names(args.wrt) if args.wrt else self.default_wrt()
            try:
                self.wrt, _ = resolve_wrt(self.graph, tuple(wrt))
                ad.check_differentiable_output(self.graph)
            except GradcError as e:
                e.where = _def_line(self.func, self.path)
                raise

    def default_wrt(self):
        names = [v.name for v in self.graph.inputs if v.type.is_float]
        if not names:
            raise CliError(f"{self.func_name} has no float parameter to differentiate with respect to",
                           where=_def_line(self.func, self.path))
        return names

    def arg_options(self):
        """Canonical ``--arg`` options: every traced parameter, and static ints that differ from their defaults."""
        defaults = {p.name: p.default for p in inspect.signature(self.func).parameters.values()}
        return [f"{n}={t}" for n, t in self.types.items()
                if isinstance(t, TensorType) or type(t) is not type(defaults[n]) or t != defaults[n]]


def _split_names(text):
    return [n.strip() for n in text.split(",") if n.strip()]


# ---------------------------------------------------------------- output
def write_output(text: str, out: str | None):
    """Write ``text`` to ``out`` atomically (temp file in the same directory, then rename); stdout for None/-."""
    if out is None or out == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    directory = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(directory):
        raise CliError(f"cannot write {out}: directory {os.path.dirname(out) or '.'} does not exist")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(out) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _display(path):
    from gradc.errors import _display_path

    return _display_path(path).replace(os.sep, "/")


# ---------------------------------------------------------------- commands
def cmd_compile(args):
    from gradc.api import Compiled

    job = Job(args)
    command = ["gradc", "compile", f"{_display(job.path)}:{job.func_name}", "--wrt", ",".join(job.wrt)]
    for option in job.arg_options():
        command += ["--arg", option]
    if args.target != "numpy":
        command += ["--target", args.target]
    if args.output and args.output != "-":
        command += ["-o", _display(args.output)]
    header = [f"Generated by gradc from {_display(job.path)}:{job.func_name} "
              f"(reverse mode, wrt {', '.join(job.wrt)}). Do not edit.",
              f"Regenerate: {shlex.join(command)}"]
    if args.target == "c":
        source, c_header = _compile_c(job, header)
        write_output(source, args.output)
        if args.output and args.output.endswith(".c"):
            write_output(c_header, args.output[:-2] + ".h")
        return 0
    compiled = Compiled(job.graph, job.wrt, len(job.wrt) > 1, header=header)
    status = 0
    if args.check:
        status = run_check(job, compiled.source)
    write_output(compiled.source, args.output)
    return status


def _compile_c(job, header):
    """C source (and header text) from D's backend, or a clear error while it has not landed."""
    try:
        from gradc.codegen.c_build import emit_sources
    except ImportError:
        raise CliError("target c is not available yet", hint="use --target numpy") from None
    from gradc import ad
    from gradc.passes import optimize

    vg = optimize(ad.value_and_grad_graph(job.graph, job.wrt, name=f"{job.func_name}_value_and_grad"))
    source, c_header = emit_sources(optimize(job.graph), vg, job.wrt)
    return _with_regenerate(source, header[1]), _with_regenerate(c_header, header[1])


def _with_regenerate(text, line):
    """Add the Regenerate line to the C block comment that opens ``text``."""
    first, sep, rest = text.partition("\n")
    if first.startswith("/* "):
        return f"{first}\n * {line}{sep}{rest}"
    return f"/* {line} */\n{text}"


def run_check(job, source):
    """Run the emitted code on random inputs against central finite differences; print the largest error."""
    from gradc.codegen.load import load_source

    namespace = load_source(source, job.func_name)
    forward = namespace[job.func_name]
    grad = namespace[f"{job.func_name}_value_and_grad"]
    rng = np.random.default_rng(0)
    names = list(job.types)
    values = [random_value(job.types[n], rng) for n in names]
    _, grads = grad(*values)
    if len(job.wrt) == 1:
        grads = (grads,)
    worst_abs = worst_rel = 0.0
    checked = 0
    for name, g in zip(job.wrt, grads):
        i = names.index(name)
        t = job.types[name]
        h = 1e-6 if t.dtype == "f64" else 1e-2
        base = values[i]
        flat_count = int(np.prod(t.shape)) if t.shape else 1
        picks = range(flat_count) if flat_count <= 50 else sorted(rng.choice(flat_count, 50, replace=False))
        for k in picks:
            def shifted(delta, base=base, k=k, t=t):
                if t.shape == () and t.dtype == "f64":
                    return base + delta
                arr = np.array(base, copy=True)
                arr.reshape(-1)[k] += delta
                return arr
            plus = list(values)
            minus = list(values)
            plus[i], minus[i] = shifted(h), shifted(-h)
            fd = (float(forward(*plus)) - float(forward(*minus))) / (2 * h)
            got = float(np.asarray(g).reshape(-1)[k]) if t.shape else float(g)
            err = abs(got - fd)
            worst_abs = max(worst_abs, err)
            worst_rel = max(worst_rel, err / max(1.0, abs(fd)))
            checked += 1
    ok = worst_rel <= (CHECK_TOLERANCE if all(job.types[n].dtype == "f64" for n in job.wrt) else 1e-2)
    verdict = "ok" if ok else "MISMATCH"
    print(f"gradc: check: {verdict}: largest error {worst_abs:.3g} (relative {worst_rel:.3g}) over {checked} "
          f"gradient entries against central finite differences", file=sys.stderr)
    return 0 if ok else EXIT_CHECK_FAILED


def stage_graphs(job, stage):
    """The IR of the requested stages: ``[(title, graph)]``."""
    from gradc import ad
    from gradc.passes import optimize

    out = []
    if stage in (None, "trace"):
        out.append(("trace", job.graph))
    if stage in (None, "grad", "opt"):
        vg = ad.value_and_grad_graph(job.graph, job.wrt, name=f"{job.func_name}_value_and_grad")
        if stage in (None, "grad"):
            out.append(("grad", vg))
        if stage in (None, "opt"):
            out.append(("opt", optimize(vg)))
    return out


def cmd_show(args):
    graphs = stage_graphs(Job(args), args.stage)
    parts = []
    for title, graph in graphs:
        text = str(graph)
        parts.append(text if args.stage else f"# {title}\n{text}")
    write_output("\n\n".join(parts) + "\n", args.output)
    return 0


def cmd_graph(args):
    import shutil
    import subprocess

    from gradc.ir import dot
    from gradc.passes import optimize

    job = Job(args)
    from gradc import ad

    vg = optimize(ad.value_and_grad_graph(job.graph, job.wrt, name=f"{job.func_name}_value_and_grad"))
    text = dot.to_dot(vg)
    out = args.output
    fmt = (args.format or (os.path.splitext(out)[1][1:].lower() if out and out != "-" else "dot"))
    if fmt in ("dot", "gv"):
        write_output(text, out)
        return 0
    if fmt not in ("svg", "png", "pdf"):
        raise CliError(f"unknown graph format {fmt!r}", hint="use an output ending in .dot, .svg or .png")
    exe = shutil.which("dot")
    if exe is None:
        raise CliError(f"drawing {fmt.upper()} needs Graphviz's `dot` program, which is not installed",
                       hint="install it (apt-get install graphviz / brew install graphviz) or write -o graph.dot")
    result = subprocess.run([exe, f"-T{fmt}"], input=text.encode(), capture_output=True, check=False)
    if result.returncode != 0:
        raise CliError(f"Graphviz dot failed: {result.stderr.decode(errors='replace').strip()}")
    if out is None or out == "-":
        sys.stdout.buffer.write(result.stdout)
        return 0
    write_output_bytes(result.stdout, out)
    return 0


def write_output_bytes(data: bytes, out: str):
    directory = os.path.dirname(os.path.abspath(out))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(out) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def cmd_ops(args):
    from gradc.cli_ops import ops_table

    write_output(ops_table(markdown=args.markdown), args.output)
    return 0


# ---------------------------------------------------------------- argument parsing
_COMPILE_EXAMPLE = """\
example:
  gradc compile examples/logistic.py:loss --wrt w,b \\
      --arg x=f64[5] --arg y=f64[3] --arg w=f64[5,3] --arg b=f64[3] -o loss_grad.py --check

  writes loss_grad.py, a standalone NumPy module defining loss, loss_grad and
  loss_value_and_grad. Types may also come from string annotations:
      def loss(x: "f64[5]", w: "f64[5,3]"): ...
  Types: f64[5,3], f32[] (scalar), i64[10] (integer inputs such as labels);
  a plain integer (--arg n=3) is a static Python int, fixed at trace time.
  Without -o (or with -o -) the module goes to stdout.
  Exit status: 0 ok, 2 error in the input, 3 --check found a mismatch, 1 bug in gradc.
"""
_SHOW_EXAMPLE = """\
example:
  gradc show examples/logistic.py:loss --wrt w,b \\
      --arg x=f64[5] --arg y=f64[3] --arg w=f64[5,3] --arg b=f64[3] --stage opt

  stages: trace (the traced IR), grad (value and gradient, before passes),
  opt (after fold/CSE/DCE). Without --stage all three are printed.
"""
_GRAPH_EXAMPLE = """\
example:
  gradc graph examples/logistic.py:loss --wrt w,b \\
      --arg x=f64[5] --arg y=f64[3] --arg w=f64[5,3] --arg b=f64[3] -o loss.svg

  draws the forward and adjoint (backward) graphs. .dot output is always
  available; .svg/.png need Graphviz (apt-get install graphviz).
"""
_OPS_EXAMPLE = """\
example:
  gradc ops              # every op and its derivative, from the real VJP rules
  gradc ops --markdown   # the same as a Markdown table (README)
"""
_MAIN_EXAMPLE = """\
commands:
  compile   emit a NumPy module with FUNC, FUNC_grad, FUNC_value_and_grad
  show      print the IR after tracing, differentiation and optimisation
  graph     draw the forward and adjoint graphs (DOT, SVG, PNG)
  ops       the table of supported ops and their derivatives

example:
  gradc compile examples/logistic.py:loss --wrt w,b \\
      --arg x=f64[5] --arg y=f64[3] --arg w=f64[5,3] --arg b=f64[3] -o loss_grad.py

Run `gradc COMMAND --help` for each command's options.
"""


def build_parser():
    fmt = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog="gradc", description="gradc: a source-to-source differentiation compiler for NumPy code.",
                     epilog=_MAIN_EXAMPLE, formatter_class=fmt)
    parser.add_argument("--debug", action="store_true", help="print the traceback of internal errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def function_options(p, wrt_help):
        p.add_argument("function", metavar="FILE.py:FUNC", help="the function to differentiate")
        p.add_argument("--wrt", metavar="NAME[,NAME...]", help=wrt_help)
        p.add_argument("--arg", action="append", metavar="NAME=TYPE", default=[],
                       help="type of a parameter, e.g. x=f64[5,3], s=f64[], labels=i64[8] (repeat for each)")
        p.add_argument("--debug", action="store_true", help="print the traceback of internal errors")

    p = sub.add_parser("compile", help="emit the gradient as a standalone NumPy module",
                       description="Trace FILE.py:FUNC, differentiate it and emit readable NumPy source.",
                       epilog=_COMPILE_EXAMPLE, formatter_class=fmt)
    function_options(p, "parameters to differentiate with respect to (default: every float parameter)")
    p.add_argument("--target", choices=("numpy", "c"), default="numpy", help="output language (default numpy)")
    p.add_argument("-o", "--output", metavar="OUT", help="output file (default or '-': stdout)")
    p.add_argument("--check", action="store_true",
                   help="run the emitted gradient on random inputs against central finite differences")
    p.set_defaults(run=cmd_compile)

    p = sub.add_parser("show", help="print the IR of each stage", description="Print the IR of FILE.py:FUNC.",
                       epilog=_SHOW_EXAMPLE, formatter_class=fmt)
    function_options(p, "parameters of the gradient (default: every float parameter)")
    p.add_argument("--stage", choices=("trace", "grad", "opt"), help="print only this stage")
    p.add_argument("-o", "--output", metavar="OUT", help="output file (default: stdout)")
    p.set_defaults(run=cmd_show)

    p = sub.add_parser("graph", help="draw the forward and adjoint graphs",
                       description="Draw the forward and adjoint graphs of FILE.py:FUNC.",
                       epilog=_GRAPH_EXAMPLE, formatter_class=fmt)
    function_options(p, "parameters of the gradient (default: every float parameter)")
    p.add_argument("-o", "--output", metavar="OUT", help="graph.dot, graph.svg or graph.png (default: DOT on stdout)")
    p.add_argument("--format", choices=("dot", "svg", "png", "pdf"), help="override the format of -o")
    p.set_defaults(run=cmd_graph)

    p = sub.add_parser("ops", help="the supported ops and their derivatives",
                       description="List every op with the derivative its VJP rule produces.",
                       epilog=_OPS_EXAMPLE, formatter_class=fmt)
    p.add_argument("--markdown", action="store_true", help="a Markdown table")
    p.add_argument("-o", "--output", metavar="OUT", help="output file (default: stdout)")
    p.add_argument("--debug", action="store_true", help="print the traceback of internal errors")
    p.set_defaults(run=cmd_ops)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``gradc`` script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return EXIT_USER_ERROR
        return args.run(args)
    except SystemExit as e:  # --help
        return e.code if isinstance(e.code, int) else 0
    except GradcError as e:
        print(f"gradc: error: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("gradc: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # a bug in gradc
        return _internal_error(e, debug)


def _internal_error(exc, debug):
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if debug:
        sys.stderr.write(text)
        print(f"gradc: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL_ERROR
    fd, path = tempfile.mkstemp(prefix="gradc-crash-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("command: " + shlex.join(["gradc"] + sys.argv[1:]) + "\n\n" + text)
    print(f"gradc: internal error: {type(exc).__name__}: {exc}. This is a bug in gradc; please report it with "
          f"the command and the traceback saved in {path} (or rerun with --debug).", file=sys.stderr)
    return EXIT_INTERNAL_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
