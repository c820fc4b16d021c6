"""User mistakes on the command line are one-line errors (exit 2), never "a bug in gradc", and write nothing.

Each case asserts the exit status, a single ``gradc: error:`` line naming the problem (and the
user's ``file:line`` where there is one), and that the working directory is unchanged.
"""
import os
import subprocess
import sys

import pytest
from cli_harness import REPO, assert_one_line_error, run_cli, run_subprocess, snapshot

MODEL = '''\
import sys

import numpy as np

CONST = 3
sin = np.sin


def loss(x: "f64[3]", w: "f64[3]", n=2):
    return np.sum(np.sin(x) * w) * n


class Klass:
    pass


def raises(x: "f64[3]"):
    return np.sum(x) + {}["key"]


def star(*xs):
    return xs[0]


def exits(x: "f64[3]"):
    sys.exit(0)


def plain(x, w):
    return np.sum(x * w)


def big(x: "f64[100000000000]"):
    return np.sum(np.sin(x) * 2.0)


alias = loss
lam = lambda x: np.sum(x ** 2)  # noqa: E731
globals()["a\\nb"] = loss
globals()["if"] = loss
globals()["1x"] = loss
globals()["a-b"] = loss
globals()["a\\x1b[2Jb"] = loss
'''


def line_of(text, source=MODEL):
    return source.splitlines().index(next(ln for ln in source.splitlines() if ln.startswith(text))) + 1


@pytest.fixture
def work(tmp_path):
    (tmp_path / "m.py").write_text(MODEL)
    (tmp_path / "d").mkdir()
    (tmp_path / "d.py").mkdir()
    (tmp_path / "data.txt").write_text("x = 1\n")
    (tmp_path / "syntax.py").write_text("import numpy as np\n\ndef f(x):\n    return (x\n")
    (tmp_path / "boom.py").write_text("import numpy as np\n\nraise RuntimeError('at import')\n")
    (tmp_path / "quits.py").write_text("import sys\n\nsys.exit(0)\n")
    (tmp_path / "quits3.py").write_text("import sys\n\nsys.exit('bye')\n")
    (tmp_path / "latin.py").write_bytes(b"# caf\xe9\ndef f(x):\n    return x\n")
    os.mkfifo(tmp_path / "fifo.py")
    return tmp_path


def assert_user_error(work, argv, *fragments, status=2):
    before = snapshot(work)
    line = assert_one_line_error(run_cli(*argv, cwd=work), *fragments, status=status)
    assert snapshot(work) == before, "the failed command wrote or changed a file"
    return line


COMPILE = ["compile", "m.py:loss", "-o", "out.py"]

# ---------------------------------------------------------------- --arg
BAD_ARGS = [
    ("repeated", ["--arg", "x=f64[3]", "--arg", "x=f64[4]"], ["--arg x", "more than once"]),
    ("repeated-same", ["--arg", "x=f64[3]", "--arg", "x=f64[3]"], ["--arg x", "more than once"]),
    ("repeated-static", ["--arg", "n=2", "--arg", "n=3"], ["--arg n", "more than once"]),
    ("unclosed", ["--arg", "x=f64[3"], ["--arg"]),
    ("no-type", ["--arg", "x="], ["--arg"]),
    ("no-name", ["--arg", "=f64[3]"], ["--arg"]),
    ("no-equals", ["--arg", "x"], ["--arg"]),
    ("bad-name", ["--arg", "1x=f64[3]"], ["--arg"]),
    ("keyword-name", ["--arg", "lambda=f64[3]"], ["--arg"]),
    ("bad-dtype", ["--arg", "x=f128[3]"], ["--arg"]),
    ("float-dim", ["--arg", "x=f64[3.5]"], ["--arg"]),
    ("negative-dim", ["--arg", "x=f64[-1]"], ["--arg"]),
    ("space-dim", ["--arg", "x=f64[a b]"], ["--arg"]),
    ("overflow-dim", ["--arg", "x=f64[99999999999999999999999]"], ["--arg"]),
    ("extra-bracket", ["--arg", "x=f64[3]]"], ["--arg"]),
    ("newline", ["--arg", "x=f64[3]\nprint(1)"], ["--arg"]),
    ("nul", ["--arg", "x=f64[3]\x00"], ["--arg"]),
    ("unknown-param", ["--arg", "y=f64[3]"], ["--arg y", f"m.py:{line_of('def loss')}"]),
    ("wrong-shape", ["--arg", "w=f64[4]"], [f"m.py:{line_of('    return np.sum(np.sin(x) * w)')}"]),
]


@pytest.mark.parametrize("extra, fragments", [c[1:] for c in BAD_ARGS], ids=[c[0] for c in BAD_ARGS])
def test_bad_arg_options(work, extra, fragments):
    line = assert_user_error(work, COMPILE + extra, *fragments)
    assert "\x00" not in line and "\x1b" not in line


def test_repeated_arg_names_both_values(work):
    line = assert_user_error(work, COMPILE + ["--arg", "x=f64[3]", "--arg", "x=f64[4]"])
    assert "f64[3]" in line and "f64[4]" in line


# ---------------------------------------------------------------- huge and empty shapes: tracing needs only types
@pytest.mark.parametrize("command", [["compile"], ["show"], ["graph"], ["compile", "--target", "c"]])
def test_huge_shapes_are_traced_without_allocating(work, command):
    result = run_cli(command[0], "m.py:big", *command[1:], cwd=work)
    assert result.status == 0, result
    assert b"100000000000" in result.out


@pytest.mark.parametrize("arg", ["x=f64[100000000000]", "x=f64[100000,100000,100000]", "x=f32[4000000000]"])
def test_huge_shapes_from_arg(work, arg):
    result = run_cli("compile", "m.py:loss", "--arg", arg, "--arg", arg.replace("x=", "w="), cwd=work)
    assert result.status == 0, result
    assert "def loss_grad(x, w, n=2):" in result.stdout  # the def's default kept


def test_huge_shapes_with_check_is_a_user_error(work):
    line = assert_user_error(work, ["compile", "m.py:big", "--check", "-o", "out.py"], "--check")
    assert "memory" in line or "large" in line


@pytest.mark.parametrize("dims", ["0", "0,3", "3,0"])
def test_empty_shapes_compile(work, dims):
    arg = f"f64[{dims}]"
    result = run_cli("compile", "m.py:plain", "--arg", f"x={arg}", "--arg", f"w={arg}", "--check", cwd=work)
    assert result.status == 0, result


# ---------------------------------------------------------------- FILE:FUNC
BAD_TARGETS = [
    ("no-colon", ["m.py"], ["FILE.py:FUNC"]),
    ("no-file", [":loss"], ["FILE.py:FUNC"]),
    ("no-function", ["m.py:"], ["FILE.py:FUNC"]),
    ("missing-file", ["missing.py:loss"], ["missing.py"]),
    ("directory", ["d:loss"], ["d"]),
    ("directory-py", ["d.py:loss"], ["d.py"]),
    ("not-python", ["data.txt:loss"], ["data.txt"]),
    ("fifo", ["fifo.py:loss"], ["fifo.py", "not a regular file"]),
    ("nul-in-path", ["m\x00.py:loss"], ["m\\x00.py"]),
    ("missing-function", ["m.py:nope"], ["nope", "m.py"]),
    ("module", ["m.py:np"], ["np", "m.py"]),
    ("int", ["m.py:CONST"], ["CONST", "m.py"]),
    ("ufunc", ["m.py:sin"], ["sin", "m.py"]),
    ("class", ["m.py:Klass"], ["Klass", "m.py"]),
    ("newline-name", ["m.py:a\nb"], ["a\\nb"]),
    ("keyword-name", ["m.py:if"], ["'if'"]),
    ("digit-name", ["m.py:1x"], ["1x"]),
    ("dash-name", ["m.py:a-b"], ["a-b"]),
    ("escape-name", ["m.py:a\x1b[2Jb"], ["a\\x1b[2Jb"]),
    ("syntax-error", ["syntax.py:f"], ["syntax.py:4"]),
    ("import-raises", ["boom.py:f"], ["boom.py:3", "RuntimeError"]),
    ("import-exits", ["quits.py:f"], ["quits.py:3", "exit"]),
    ("import-exits-text", ["quits3.py:f"], ["quits3.py:3", "exit"]),
    ("bad-encoding", ["latin.py:f"], ["latin.py"]),
    ("raises-while-tracing", ["m.py:raises"], [f"m.py:{line_of('    return np.sum(x) + {}')}", "KeyError"]),
    ("exits-while-tracing", ["m.py:exits"], [f"m.py:{line_of('    sys.exit(0)')}", "exit"]),
    ("varargs", ["m.py:star"], ["star", f"m.py:{line_of('def star')}"]),
    ("untyped", ["m.py:plain"], ["'x'", f"m.py:{line_of('def plain')}"]),
]


@pytest.mark.parametrize("spec, fragments", [c[1:] for c in BAD_TARGETS], ids=[c[0] for c in BAD_TARGETS])
@pytest.mark.parametrize("command", ["compile", "show", "graph"])
def test_bad_file_or_function(work, command, spec, fragments):
    argv = [command, *spec, "-o", "out.dot"]
    line = assert_user_error(work, argv, *fragments)
    assert "\x1b" not in line


@pytest.mark.parametrize("spec, extra", [("m.py:alias", []), ("m.py:lam", ["--arg", "x=f64[3]"])])
def test_aliases_and_lambdas_compile_under_the_name_given(work, spec, extra):
    result = run_cli("compile", spec, *extra, "--check", cwd=work)
    assert result.status == 0, result
    name = spec.split(":")[1]
    assert f"def {name}_grad(" in result.stdout and "ok" in result.stderr


# ---------------------------------------------------------------- --wrt and other options
BAD_OPTIONS = [
    ("wrt-unknown", ["--wrt", "nope"], ["nope"]),
    ("wrt-int", ["--wrt", "n"], ["n"]),
    ("wrt-empty", ["--wrt", ","], ["--wrt"]),
    ("wrt-repeated", ["--wrt", "x,x"], ["x"]),
    ("unknown-option", ["--bogus"], ["--bogus"]),
    ("unknown-target", ["--target", "fortran"], ["fortran"]),
    ("output-twice", ["-o", "a.py", "-o", "b.py"], ["-o"]),
    ("output-empty", ["-o", ""], ["empty"]),
    ("graph-format", ["--format", "jpg"], ["jpg"]),
]


@pytest.mark.parametrize("extra, fragments", [c[1:] for c in BAD_OPTIONS], ids=[c[0] for c in BAD_OPTIONS])
def test_bad_options(work, extra, fragments):
    command = "graph" if extra[0] == "--format" else "compile"
    argv = [command, "m.py:loss", *extra]
    if "-o" not in extra:
        argv += ["-o", "out.txt"]
    assert_user_error(work, argv, *fragments)


@pytest.mark.parametrize("command", ["compile", "show", "graph", "ops"])
@pytest.mark.parametrize("path, fragment", [("d", "is a directory"), ("d/", "is a directory"),
                                            ("missing/out", "does not exist")])
def test_output_directory_mistakes(work, command, path, fragment):
    argv = [command] + (["m.py:loss"] if command != "ops" else []) + ["-o", path]
    assert_user_error(work, argv, fragment, path.rstrip("/"))


def test_graph_into_a_directory_names_the_directory(work):
    line = assert_user_error(work, ["graph", "m.py:loss", "-o", "d"], "is a directory")
    assert "format" not in line


@pytest.mark.parametrize("name", ["graph", "graph.gv", "graph.dot"])
def test_graph_without_a_known_extension_writes_dot(work, name):
    result = run_cli("graph", "m.py:loss", "-o", name, cwd=work)
    assert result.status == 0, result
    assert (work / name).read_text().startswith("digraph ")


# ---------------------------------------------------------------- help
def test_top_level_help_mentions_the_c_target(work):
    result = run_cli("--help", cwd=work)
    assert result.status == 0
    assert "--target c" in result.stdout and "C" in result.stdout


def test_no_command_is_a_usage_error(work):
    result = run_cli(cwd=work)
    assert result.status == 2 and "usage: gradc" in result.stderr + result.stdout


# ---------------------------------------------------------------- the terminal and the pipe
def test_messages_escape_control_characters(work):
    os.rename(work / "boom.py", work / "bo\x1b[2Jom.py")
    line = assert_user_error(work, ["compile", "bo\x1b[2Jom.py:f"], "bo\\x1b[2Jom.py")
    assert "\x1b" not in line


def test_closed_stdout_is_not_a_crash(work):
    env = dict(os.environ, PYTHONPATH=REPO)
    proc = subprocess.Popen([sys.executable, "-m", "gradc", "compile", "m.py:loss"], cwd=work, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read()
    status = proc.wait(60)
    assert status not in (0, 1), (status, err)
    assert b"Traceback" not in err and b"bug in gradc" not in err and b"BrokenPipe" not in err


def test_ascii_stdout_still_gets_utf8_source(work):
    (work / "u.py").write_text('import numpy as np\n\n\ndef f(θ: "f64[3]"):\n    return np.sum(θ ** 2)\n',
                               encoding="utf-8")
    result = run_subprocess("compile", "u.py:f", cwd=work, env={"PYTHONIOENCODING": "ascii"})
    assert result.status == 0, result
    assert "def f_grad(θ):" in result.out.decode("utf-8")
