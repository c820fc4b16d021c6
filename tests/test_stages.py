"""The ``gradc`` loggers, ``-v`` on the command line, and the one notice of a slow compile.

Slowness is made deterministically: the threshold (``gradc.stages.NOTICE_AFTER``) is set to 0
(every compile is "slow") or to an hour (none is), never by timing a compile.
"""
from __future__ import annotations

import logging
import sys
import threading

import numpy as np
import pytest

import gradc
import gradc.stages as gradc_stages
from gradc.api import compile as gradc_compile
from gradc.backends.c.build import build, find_compiler
from gradc.cli import main

needs_cc = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")


def loss(x, w):
    return np.sum(np.sin(x @ w) ** 2)


ARGS = (np.ones((3, 2)), np.array([0.5, -0.5]))


@pytest.fixture
def slow(monkeypatch):
    """Every compile counts as slow: its notice is due at its first stage."""
    monkeypatch.setattr(gradc_stages, "NOTICE_AFTER", 0.0)


@pytest.fixture
def fast(monkeypatch):
    """No compile counts as slow (whatever the load of the machine running the tests)."""
    monkeypatch.setattr(gradc_stages, "NOTICE_AFTER", 3600.0)


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("GRADC_CACHE_DIR", str(cache))
    return cache


def notices(text: str) -> list:
    return [line for line in text.splitlines() if line.startswith("gradc: ")]


def test_default_threshold_is_about_two_seconds(monkeypatch):
    monkeypatch.delenv("GRADC_NOTICE_AFTER")
    assert 1.0 <= gradc_stages.threshold_from_environment() <= 3.0
    assert gradc_stages.NOTICE_AFTER is None  # the suite's (tests/conftest.py): stderr must not depend on timing


@pytest.mark.parametrize("text, expected", [("0", 0.0), ("3.5", 3.5), ("never", None), ("OFF", None),
                                            ("", 2.0), ("soon", 2.0), ("-1", 2.0), ("nan", 2.0), ("inf", 2.0)])
def test_threshold_from_the_environment(monkeypatch, text, expected):
    monkeypatch.setenv("GRADC_NOTICE_AFTER", text)
    assert gradc_stages.threshold_from_environment() == expected


# ---------------------------------------------------------------- the loggers
def test_each_stage_is_logged_with_its_time(caplog):
    with caplog.at_level(logging.DEBUG, logger="gradc"):
        gradc_compile(loss, *ARGS, wrt=(0, 1))
    names = {r.name for r in caplog.records}
    assert {"gradc.trace", "gradc.transforms", "gradc.passes", "gradc.backends.numpy"} <= names
    timed = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert all(" s" in m and any(c.isdigit() for c in m) for m in timed), timed
    assert any(m.startswith("tracing loss: ") for m in timed)
    starts = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert "tracing loss..." in starts


@needs_cc
def test_c_stages_are_logged(caplog, private_cache):
    with caplog.at_level(logging.INFO, logger="gradc"):
        gradc_compile(loss, *ARGS, target="c")
    c_lines = [r.getMessage() for r in caplog.records if r.name == "gradc.backends.c"]
    assert any(m.startswith("emitting C for loss") for m in c_lines)
    assert any("building C extension loss with" in m or "building C library loss with" in m for m in c_lines)


def test_logging_never_changes_the_output(caplog):
    quiet = gradc_compile(loss, *ARGS, wrt=(0, 1)).source
    with caplog.at_level(logging.DEBUG, logger="gradc"):
        loud = gradc_compile(loss, *ARGS, wrt=(0, 1)).source
    assert loud == quiet and caplog.records


def test_a_library_is_silent_by_default(capsys, fast):
    gradc_compile(loss, *ARGS)
    gradc.grad(loss)(*ARGS)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


# ---------------------------------------------------------------- the command line
@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import numpy as np\n\ndef loss(x, w):\n    return np.sum(np.sin(x @ w) ** 2)\n")
    return path


def cli(capsys, *argv):
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_is_quiet_without_v(capsys, user_file, fast):
    status, out, err = cli(capsys, "compile", f"{user_file}:loss", "--arg", "x=f64[3,2]", "--arg", "w=f64[2]")
    assert status == 0 and "def loss_grad(" in out and err == ""


@pytest.mark.parametrize("where", ["before", "after"])
def test_cli_v_shows_the_stages_on_stderr(capsys, user_file, fast, where):
    args = ["compile", f"{user_file}:loss", "--arg", "x=f64[3,2]", "--arg", "w=f64[2]"]
    argv = ["-v"] + args if where == "before" else args + ["-v"]
    status, out, err = cli(capsys, *argv)
    assert status == 0
    quiet_status, quiet_out, _ = cli(capsys, *args)
    assert out == quiet_out  # -v never changes the product
    lines = err.splitlines()
    assert any(line.startswith("gradc.trace: tracing loss: ") for line in lines), err
    assert any(line.startswith("gradc.passes: ") for line in lines)
    assert not any(line.endswith("...") for line in lines)  # DEBUG (the starts) only with -vv
    status, _, err = cli(capsys, "-vv", *args)
    assert "gradc.trace: tracing loss..." in err.splitlines()
    assert logging.getLogger("gradc").level == logging.NOTSET and len(logging.getLogger("gradc").handlers) == 1


def test_cli_v_is_counted(capsys):
    from gradc.cli.commands import build_parser

    assert build_parser().parse_args(["-vv", "ops"]).verbose == 2
    assert build_parser().parse_args(["ops", "-v"]).verbose == 1
    assert build_parser().parse_args(["ops"]).verbose == 0


# ---------------------------------------------------------------- the slow-compile notice
def test_fast_compile_says_nothing(capsys, fast):
    gradc_compile(loss, *ARGS)
    assert capsys.readouterr().err == ""


def test_slow_compile_says_once_what_it_is_doing(capsys, slow):
    gradc_compile(loss, *ARGS, wrt=(0, 1))
    err = capsys.readouterr().err
    assert notices(err) == ["gradc: tracing loss (0 operations recorded so far)..."], err
    assert err.count("\n") == 1


def test_one_notice_per_compile(capsys, slow):
    gradc_compile(loss, *ARGS)
    df = gradc.grad(loss)
    df(*ARGS)
    df(*ARGS)  # cached: no compile, no notice
    gradc_compile(loss, *ARGS, mode="jacobian")  # a mode traces twice, in one compile
    assert len(notices(capsys.readouterr().err)) == 3


@needs_cc
def test_slow_c_compile_says_once(capsys, slow, private_cache):
    gradc_compile(loss, *ARGS, target="c")
    assert len(notices(capsys.readouterr().err)) == 1


@needs_cc
def test_slow_c_build_says_what_it_builds(capsys, slow, private_cache):
    build("double gradc_fn_one(void) { return 1.0; }\n", "one")
    err = capsys.readouterr().err
    assert len(notices(err)) == 1 and err.startswith("gradc: building C library one with "), err
    build("double gradc_fn_one(void) { return 1.0; }\n", "one")  # in the cache: nothing is built, nothing said
    assert capsys.readouterr().err == ""


def test_slow_cli_compile_says_once(capsys, user_file, slow):
    status, out, err = cli(capsys, "compile", f"{user_file}:loss", "--arg", "x=f64[3,2]", "--arg", "w=f64[2]")
    assert status == 0 and len(notices(err)) == 1 and "def loss_grad(" in out


def test_notice_can_be_switched_off(capsys, monkeypatch):
    monkeypatch.setattr(gradc_stages, "NOTICE_AFTER", None)
    gradc_compile(loss, *ARGS)
    assert capsys.readouterr().err == ""


def test_a_failing_compile_ends_its_session(capsys, fast):
    with pytest.raises(gradc.GradcError):  # an integer output: refused
        gradc_compile(lambda x: 1 if x > 0 else 0, 1.0)
    assert getattr(gradc_stages._local, "compile", None) is None and gradc_stages._local.calls == 0
    gradc_compile(loss, *ARGS)
    assert capsys.readouterr().err == ""


def test_the_timer_says_what_the_current_stage_is_doing(capsys, monkeypatch):
    """The timer thread's notice, made due at once; the stage waits until it was given."""
    monkeypatch.setattr(gradc_stages, "NOTICE_AFTER", 3600.0)
    with gradc_stages.stage("gradc.trace", "tracing f", lambda: "12 operations recorded so far"):
        session = gradc_stages._local.compile
        session.timer.cancel()
        fired = threading.Thread(target=session.notice)
        fired.start()
        fired.join()
        session.notice()  # once
    assert capsys.readouterr().err == "gradc: tracing f (12 operations recorded so far)...\n"


def test_no_notice_after_the_compile_or_between_stages(capsys, monkeypatch):
    monkeypatch.setattr(gradc_stages, "NOTICE_AFTER", 3600.0)
    with gradc_stages.stage("gradc.passes", "optimising f"):
        session = gradc_stages._local.compile
    session.notice()  # the timer firing late: the compile is over
    with gradc_stages.one_compile():
        with gradc_stages.stage("gradc.passes", "optimising g"):
            between = gradc_stages._local.compile
        between.notice()  # no stage running: gradc is not compiling at this moment
    assert capsys.readouterr().err == ""
    assert session.timer.finished.is_set() or not session.timer.is_alive()


def test_a_broken_description_never_breaks_the_compile(capsys, monkeypatch):
    monkeypatch.setattr(gradc_stages, "NOTICE_AFTER", 0.0)

    def broken():
        raise RuntimeError("no")

    with gradc_stages.stage("gradc.trace", "tracing f", broken):
        pass
    assert capsys.readouterr().err == "gradc: tracing f...\n"


@pytest.mark.parametrize("extra, logger", [(["--target", "c"], "gradc.backends.c: emitting C for loss"),
                                           (["--mode", "jvp"], "gradc.transforms: differentiating loss (jvp"),
                                           (["--mode", "hvp", "--target", "c"], "gradc.backends.c: emitting C")])
def test_cli_v_on_every_path(capsys, user_file, fast, extra, logger):
    args = ["compile", f"{user_file}:loss", "--arg", "x=f64[3,2]", "--arg", "w=f64[2]", *extra]
    status, out, err = cli(capsys, *args, "-v")
    assert status == 0 and any(line.startswith(logger) for line in err.splitlines()), err
    assert cli(capsys, *args)[1] == out  # the same product without -v


def test_a_trace_notice_names_the_loop_it_unrolls(monkeypatch):
    """The trace's description (what the notice says when the timer fires during a long trace)."""
    import collections
    import types

    from gradc.trace import _progress

    unrolled = collections.deque(maxlen=64)
    monkeypatch.setattr(sys.modules["gradc.trace"], "UNROLLED", unrolled)
    builder = types.SimpleNamespace(eqns=[None] * 1234)
    unrolled.append(("old.py:1", "before this trace"))
    describe = _progress(builder)
    assert describe() == "1,234 operations recorded so far"  # a loop unrolled by an earlier trace is not this one's
    unrolled.append(("model.py:7", "the body needs its counter as an int"))
    builder.eqns.extend([None] * 4000)
    assert describe() == "unrolling the loop at model.py:7: 5,234 operations recorded so far"


def test_a_compile_that_turns_slow_midway_says_so_once(capsys, monkeypatch):
    """A loop run in Python (its body slices by the counter), the notice made due while it runs (the timer,
    started with an hour's threshold, stays quiet): the next stage boundary gives it, once."""
    monkeypatch.setattr(gradc_stages, "NOTICE_AFTER", 3600.0)

    def f(x):
        for i in range(40):
            if i == 20:
                monkeypatch.setattr(gradc_stages, "NOTICE_AFTER", 0.0)  # from here on, the compile is "slow"
            x = x[: i % 2 + 1].sum() * x + 1.0
        return np.sum(x)

    gradc_compile(f, np.ones(2))
    lines = notices(capsys.readouterr().err)
    assert lines == ["gradc: differentiating f (reverse mode, wrt x)..."], lines
