"""The C build cache trusts nothing it did not write (issue 11, must-have 9).

A cached shared object is loaded only when it is a regular file owned by the current user and
writable by no one else, in a directory with the same properties; a ``GRADC_CACHE_DIR`` that is
not is refused with a one-line message; crash reports go into the same private cache, pruned.
"""
import os
import stat

import numpy as np
import pytest

import gradc
from gradc.backends.c import cache
from gradc.backends.c.build import build, find_compiler
from gradc.errors import EmitError

needs_cc = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")
SOURCE = "double gradc_cache_probe(double x) { return 2.0 * x; }\n"


@pytest.fixture
def private(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    os.chmod(root, 0o700)
    monkeypatch.setenv("GRADC_CACHE_DIR", str(root))
    return root


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757, 0o722, 0o770, 0o702])
def test_group_or_world_writable_cache_dir_is_refused(private, mode):
    os.chmod(private, mode)
    with pytest.raises(EmitError) as info:
        cache.cache_dir()
    message = str(info.value)
    assert "GRADC_CACHE_DIR=" in message and "writable by" in message and f"{mode:04o}" in message
    assert "\n" not in message and "mkdir -m 700" in message


@pytest.mark.parametrize("mode", [0o700, 0o755, 0o750, 0o705])
def test_private_cache_dir_is_accepted(private, mode):
    os.chmod(private, mode)
    assert cache.cache_dir() == str(private)


def test_cache_dir_that_is_a_file_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "file"
    path.write_text("")
    monkeypatch.setenv("GRADC_CACHE_DIR", str(path))
    with pytest.raises(EmitError, match="GRADC_CACHE_DIR"):
        cache.cache_dir()


def test_missing_cache_dir_is_created_private(tmp_path, monkeypatch):
    root = tmp_path / "new" / "cache"
    monkeypatch.setenv("GRADC_CACHE_DIR", str(root))
    old = os.umask(0)
    try:
        assert cache.cache_dir() == str(root)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700


def test_default_cache_dir_is_tightened(tmp_path, monkeypatch):
    monkeypatch.delenv("GRADC_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = tmp_path / "gradc" / "c"
    root.mkdir(parents=True)
    os.chmod(root, 0o777)  # made by an older gradc under a loose umask: gradc's own, so it fixes it
    assert cache.cache_dir() == str(root)
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_cache_dir_owned_by_another_user_is_refused(private):
    os.chown(private, 12345, 12345)
    with pytest.raises(EmitError, match="owned by another user"):
        cache.cache_dir()


@pytest.mark.parametrize("kind", ["group-writable", "world-writable", "symlink", "directory", "fifo"])
def test_untrusted_cached_object_is_not_trusted(tmp_path, kind):
    path = tmp_path / "thing.so"
    if kind == "symlink":
        target = tmp_path / "real.so"
        target.write_bytes(b"x")
        os.chmod(target, 0o700)
        path.symlink_to(target)
    elif kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_bytes(b"x")
        os.chmod(path, 0o770 if kind == "group-writable" else 0o707)
    assert not cache.trusted_file(str(path))


def test_own_private_file_is_trusted(tmp_path):
    path = tmp_path / "ok.so"
    path.write_bytes(b"x")
    os.chmod(path, 0o700)
    assert cache.trusted_file(str(path))


@needs_cc
@pytest.mark.parametrize("mode", [0o777, 0o666, 0o620])
def test_tampered_cached_object_is_rebuilt(private, mode):
    """A cached object someone else could have written is replaced by a fresh build, never loaded."""
    path = build(SOURCE, "probe")
    assert cache.trusted_file(path)
    with open(path, "wb") as fh:
        fh.write(b"not an object")
    os.chmod(path, mode)
    again = build(SOURCE, "probe")
    assert again == path and cache.trusted_file(path)
    with open(path, "rb") as fh:
        assert fh.read(4) == b"\x7fELF" or os.uname().sysname != "Linux"


@needs_cc
def test_built_objects_are_private_under_a_loose_umask(private):
    old = os.umask(0o002)
    try:
        path = build(SOURCE.replace("probe", "probe2"), "probe2")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0


@needs_cc
def test_compile_refuses_a_world_writable_cache(private):
    os.chmod(private, 0o777)
    with pytest.raises(EmitError, match="writable by its group and others"):
        gradc.compile(lambda x: np.sum(x * x), np.ones(3), target="c")


def test_crash_reports_go_to_the_private_cache_and_are_pruned(private):
    paths = [cache.write_crash_report(f"report {n}") for n in range(cache.CRASH_REPORTS_KEPT + 5)]
    directory = os.path.dirname(paths[-1])
    assert directory == os.path.join(str(private), "crash")
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(paths[-1]).st_mode) == 0o600
    left = [name for name in os.listdir(directory) if name.startswith("gradc-crash-")]
    assert len(left) == cache.CRASH_REPORTS_KEPT
    with open(paths[-1]) as fh:
        assert fh.read() == f"report {cache.CRASH_REPORTS_KEPT + 4}"


def test_crash_report_falls_back_to_a_private_temp_file(private):
    os.chmod(private, 0o777)  # the cache is refused, the report is still written somewhere private
    path = cache.write_crash_report("report")
    try:
        assert not path.startswith(str(private))
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    finally:
        os.unlink(path)


def test_cli_internal_error_writes_into_the_cache(private, monkeypatch, capsys):
    from gradc.cli import commands

    monkeypatch.setattr(commands.sys, "argv", ["gradc", "ops"])
    status = commands._internal_error(RuntimeError("boom"), debug=False)
    err = capsys.readouterr().err
    assert status == commands.EXIT_INTERNAL_ERROR
    assert os.path.join(str(private), "crash") in err
