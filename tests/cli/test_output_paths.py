"""Where ``-o`` writes, for every kind of path: regular files, symlinks, FIFOs, devices, directories.

The rules (README, "Errors and exit status"): a regular file is replaced atomically and keeps
its permission bits (a new one gets 0666 minus the umask); a symlink is followed like ``cp``
does (a dangling one is refused); a FIFO or character device is written into; a directory,
a path ending in ``/``, a missing directory or the input file itself is an exit-2 error and
nothing is written. Everything here happens inside the test's temporary directory.
"""
import os
import shutil
import stat
import subprocess
import sys
import threading

import pytest
from cli_harness import MODEL, REPO, assert_one_line_error, make_char_device, run_cli, snapshot

COMMANDS = {
    "numpy": ["compile", "m.py:loss"],
    "c": ["compile", "m.py:loss", "--target", "c"],
    "show": ["show", "m.py:loss"],
    "graph": ["graph", "m.py:loss", "--format", "dot"],
    "ops": ["ops"],
}
KINDS = sorted(COMMANDS)


@pytest.fixture
def work(tmp_path):
    (tmp_path / "m.py").write_text(MODEL)
    return tmp_path


def expected_output(work, kind, name=None):
    """What the command writes to ``-o NAME`` as a new regular file in a fresh directory (stdout for None).

    The Regenerate line of emitted code names the output, so the reference uses the same name.
    """
    fresh = work.parent / f"{work.name}-reference-{kind}"
    fresh.mkdir(exist_ok=True)
    (fresh / "m.py").write_text(MODEL)
    if name is None:
        result = run_cli(*COMMANDS[kind], cwd=fresh)
        assert result.status == 0, result
        return result.out
    result = run_cli(*COMMANDS[kind], "-o", name, cwd=fresh)
    assert result.status == 0, result
    return (fresh / name).read_bytes()


def no_temp_files(directory):
    return [n for n in os.listdir(directory) if n.endswith(".tmp")] == []


def with_umask(mask, fn):
    old = os.umask(mask)
    try:
        return fn()
    finally:
        os.umask(old)


# ---------------------------------------------------------------- regular files
@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
@pytest.mark.parametrize("kind", KINDS)
def test_new_file_gets_0666_minus_the_umask(work, kind, mask):
    result = with_umask(mask, lambda: run_cli(*COMMANDS[kind], "-o", "out.txt", cwd=work))
    assert result.status == 0, result
    assert stat.S_IMODE(os.stat(work / "out.txt").st_mode) == 0o666 & ~mask
    assert no_temp_files(work)


@pytest.mark.parametrize("kind", KINDS)
def test_existing_file_is_replaced_and_keeps_its_permissions(work, kind):
    target = work / "out.txt"
    target.write_text("old")
    os.chmod(target, 0o640)
    result = run_cli(*COMMANDS[kind], "-o", "out.txt", cwd=work)
    assert result.status == 0, result
    assert target.read_bytes() == expected_output(work, kind, "out.txt")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert no_temp_files(work)


def test_existing_file_keeps_its_owner_when_root_replaces_it(work):
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    target = work / "out.txt"
    target.write_text("old")
    os.chown(target, 65534, 65534)
    assert run_cli("ops", "-o", "out.txt", cwd=work).status == 0
    st = os.stat(target)
    assert (st.st_uid, st.st_gid) == (65534, 65534) and target.read_text() != "old"


@pytest.mark.parametrize("kind", KINDS)
def test_longest_file_names_can_be_replaced(work, kind):
    """A name near the 255-byte limit (two-byte characters): the temporary file next to it must fit too."""
    name = "é" * 120 + ".txt"
    (work / name).write_text("old")
    result = run_cli(*COMMANDS[kind], "-o", name, cwd=work)
    assert result.status == 0, result
    assert (work / name).read_bytes() == expected_output(work, kind, name)
    assert no_temp_files(work)


@pytest.mark.parametrize("kind", KINDS)
def test_dash_writes_to_stdout(work, kind):
    result = run_cli(*COMMANDS[kind], "-o", "-", cwd=work)
    assert result.status == 0 and result.out == expected_output(work, kind) and result.out
    assert sorted(os.listdir(work)) == ["m.py"]


# ---------------------------------------------------------------- symlinks
@pytest.mark.parametrize("kind", KINDS)
def test_symlink_is_followed_like_cp(work, kind):
    (work / "real").mkdir()
    (work / "real" / "target.txt").write_text("old")
    os.symlink("real/target.txt", work / "link.txt")
    result = run_cli(*COMMANDS[kind], "-o", "link.txt", cwd=work)
    assert result.status == 0, result
    assert os.path.islink(work / "link.txt") and os.readlink(work / "link.txt") == "real/target.txt"
    assert (work / "real" / "target.txt").read_bytes() == expected_output(work, kind, "link.txt")
    assert no_temp_files(work) and no_temp_files(work / "real")


@pytest.mark.parametrize("kind", KINDS)
def test_dangling_symlink_is_refused(work, kind):
    os.symlink("nowhere/target.txt", work / "link.txt")
    before = snapshot(work)
    result = run_cli(*COMMANDS[kind], "-o", "link.txt", cwd=work)
    assert_one_line_error(result, "link.txt", "symlink")
    assert snapshot(work) == before


def test_symlink_loop_is_refused(work):
    os.symlink("b", work / "a")
    os.symlink("a", work / "b")
    before = snapshot(work)
    assert_one_line_error(run_cli("ops", "-o", "a", cwd=work), "a")
    assert snapshot(work) == before


@pytest.mark.parametrize("kind", KINDS)
def test_symlink_to_a_directory_is_refused(work, kind):
    (work / "d").mkdir()
    os.symlink("d", work / "link")
    before = snapshot(work)
    assert_one_line_error(run_cli(*COMMANDS[kind], "-o", "link", cwd=work), "link", "directory")
    assert snapshot(work) == before


# ---------------------------------------------------------------- FIFOs and devices
@pytest.mark.parametrize("kind", KINDS)
def test_fifo_is_written_into(work, kind):
    fifo = work / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    result = run_cli(*COMMANDS[kind], "-o", "pipe", cwd=work)
    reader.join(30)
    assert result.status == 0, result
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received == [expected_output(work, kind, "pipe")]
    assert sorted(os.listdir(work)) == ["m.py", "pipe"]


@pytest.mark.parametrize("kind", KINDS)
def test_character_device_is_written_into_and_stays_a_device(work, kind):
    make_char_device(work / "null")
    mode = os.lstat(work / "null").st_mode
    result = run_cli(*COMMANDS[kind], "-o", "null", cwd=work)
    assert result.status == 0, result
    st = os.lstat(work / "null")
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3) and st.st_mode == mode
    assert sorted(os.listdir(work)) == ["m.py", "null"]


@pytest.mark.parametrize("kind", KINDS)
def test_symlink_to_a_character_device_writes_into_the_device(work, kind):
    make_char_device(work / "null")
    os.symlink("null", work / "link")
    result = run_cli(*COMMANDS[kind], "-o", "link", cwd=work)
    assert result.status == 0, result
    assert stat.S_ISCHR(os.lstat(work / "null").st_mode) and os.path.islink(work / "link")


@pytest.mark.parametrize("stdout", ["pipe", "file"])
def test_dev_stdout_means_the_real_stdout(work, stdout):
    """In a fresh process: ``-o /dev/stdout`` (this process's own fd 1, a pipe or a file) gets the product,
    though the user's code runs with fd 1 pointed at stderr."""
    if not os.path.exists("/proc/self/fd/1"):
        pytest.skip("no /proc/self/fd")
    env = dict(os.environ, PYTHONPATH=REPO)
    argv = [sys.executable, "-m", "gradc", "compile", "m.py:loss", "-o", "/dev/stdout"]
    if stdout == "pipe":
        out = subprocess.run(argv, cwd=work, env=env, capture_output=True, timeout=120).stdout
    else:
        with open(work / "redirected.txt", "wb") as f:
            subprocess.run(argv, cwd=work, env=env, stdout=f, stderr=subprocess.PIPE, timeout=120, check=True)
        out = (work / "redirected.txt").read_bytes()
    assert out.startswith(b"# Generated by gradc from m.py:loss")
    assert b"def loss_grad(" in out


def test_socket_is_refused(work):
    import socket

    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(work / "sock"))
    except OSError as e:
        pytest.skip(f"no unix sockets here: {e}")
    try:
        before = snapshot(work)
        assert_one_line_error(run_cli("ops", "-o", "sock", cwd=work), "sock")
        assert snapshot(work) == before
    finally:
        sock.close()


# ---------------------------------------------------------------- paths that cannot be written
BAD_PATHS = [
    ("d", "is a directory"),
    ("d/", "is a directory"),
    ("d/.", "is a directory"),
    ("missing/", "directory"),
    ("missing/out.txt", "does not exist"),
    ("m.py/out.txt", "not a directory"),
    ("x" * 300, "too long"),
    ("", "empty"),
]


@pytest.mark.parametrize("path, fragment", BAD_PATHS, ids=[p[:12] or "empty" for p, _ in BAD_PATHS])
@pytest.mark.parametrize("kind", KINDS)
def test_paths_that_cannot_be_written_are_user_errors(work, kind, path, fragment):
    (work / "d").mkdir()
    before = snapshot(work)
    assert_one_line_error(run_cli(*COMMANDS[kind], "-o", path, cwd=work), fragment)
    assert snapshot(work) == before


@pytest.mark.parametrize("kind", ["numpy", "c", "show", "graph"])
def test_output_over_the_input_file_is_refused(work, kind):
    before = snapshot(work)
    assert_one_line_error(run_cli(*COMMANDS[kind], "-o", "m.py", cwd=work), "m.py", "input")
    assert snapshot(work) == before
    os.symlink("m.py", work / "alias.py")
    before = snapshot(work)
    assert_one_line_error(run_cli(*COMMANDS[kind], "-o", "alias.py", cwd=work), "alias.py", "input")
    assert snapshot(work) == before


def test_unwritable_directory_is_a_user_error(work):
    """A directory gradc may not write into: mode 0555, and as root (who ignores modes) also immutable."""
    locked = work / "locked"
    locked.mkdir()
    os.chmod(locked, 0o555)
    immutable = False
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(locked)]).returncode != 0:
            pytest.skip("root ignores permissions, and this file system has no immutable flag")
        immutable = True
    try:
        for kind in KINDS:
            line = assert_one_line_error(run_cli(*COMMANDS[kind], "-o", "locked/out.txt", cwd=work), "out.txt")
            assert "permission" in line or "not permitted" in line, line
            assert os.listdir(locked) == []
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(locked)], check=True)


# ---------------------------------------------------------------- nothing written when the command fails
@pytest.mark.parametrize("kind", ["numpy", "c", "show", "graph"])
def test_failing_command_leaves_the_output_alone(work, kind):
    (work / "out.txt").write_text("old")
    argv = [a if a != "m.py:loss" else "m.py:nope" for a in COMMANDS[kind]]
    before = snapshot(work)
    assert_one_line_error(run_cli(*argv, "-o", "out.txt", cwd=work), "nope")
    assert snapshot(work) == before


# ---------------------------------------------------------------- the C header next to the source
def test_c_writes_source_and_header_next_to_it(work):
    result = run_cli(*COMMANDS["c"], "-o", "out.c", cwd=work)
    assert result.status == 0 and result.out == b"", result
    assert (work / "out.c").read_text().startswith("/* Generated by gradc")
    assert "#ifndef GRADC_fn_loss_grad_H" in (work / "out.h").read_text()


@pytest.mark.parametrize("name, header", [("name", "name.h"), ("name.txt", "name.h"), ("sub/out.cc", "sub/out.h")])
def test_c_output_without_dot_c_says_where_the_header_went(work, name, header):
    (work / "sub").mkdir()
    result = run_cli(*COMMANDS["c"], "-o", name, cwd=work)
    assert result.status == 0, result
    assert "#ifndef GRADC_fn_loss_grad_H" in (work / header).read_text()
    assert header in result.stderr and "header" in result.stderr


def test_c_output_named_like_its_header_is_refused(work):
    before = snapshot(work)
    assert_one_line_error(run_cli(*COMMANDS["c"], "-o", "out.h", cwd=work), "out.h", "header")
    assert snapshot(work) == before


@pytest.mark.parametrize("blocker", ["dir", "dangling"])
def test_c_header_that_cannot_be_written_writes_neither_file(work, blocker):
    if blocker == "dir":
        (work / "out.h").mkdir()
    else:
        os.symlink("nowhere/x.h", work / "out.h")
    before = snapshot(work)
    assert_one_line_error(run_cli(*COMMANDS["c"], "-o", "out.c", cwd=work), "out.h")
    assert snapshot(work) == before


def test_c_to_stdout_says_the_header_was_not_written(work):
    result = run_cli(*COMMANDS["c"], cwd=work)
    assert result.status == 0 and result.out.startswith(b"/* Generated by gradc"), result
    assert "header" in result.stderr and "-o" in result.stderr


def test_c_into_a_fifo_writes_no_header(work):
    os.mkfifo(work / "pipe")
    received = []
    reader = threading.Thread(target=lambda: received.append(open(work / "pipe", "rb").read()), daemon=True)
    reader.start()
    result = run_cli(*COMMANDS["c"], "-o", "pipe", cwd=work)
    reader.join(30)
    assert result.status == 0 and received and received[0].startswith(b"/* Generated by gradc"), result
    assert sorted(os.listdir(work)) == ["m.py", "pipe"]


# ---------------------------------------------------------------- gradc.files.write_atomically: the one rule
def test_write_atomically_follows_a_symlink_and_keeps_it(tmp_path):
    from gradc.files import write_atomically

    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "target.pt").write_bytes(b"old")
    os.chmod(tmp_path / "real" / "target.pt", 0o640)
    os.symlink("real/target.pt", tmp_path / "link.pt")
    written = write_atomically(tmp_path / "link.pt", b"new")
    assert written == os.path.realpath(tmp_path / "real" / "target.pt")
    assert os.path.islink(tmp_path / "link.pt") and (tmp_path / "real" / "target.pt").read_bytes() == b"new"
    assert stat.S_IMODE(os.stat(tmp_path / "real" / "target.pt").st_mode) == 0o640
    assert no_temp_files(tmp_path) and no_temp_files(tmp_path / "real")


def test_write_atomically_text_is_utf8(tmp_path):
    from gradc.files import write_atomically

    write_atomically(str(tmp_path / "t.txt"), "é\n")
    assert (tmp_path / "t.txt").read_bytes() == "é\n".encode()


@pytest.mark.parametrize("make, fragment", [
    (lambda p: None, "/missing does not exist"),
    (lambda p: os.symlink("nowhere/x.pt", p / "dest.pt"), "which does not exist"),
    (lambda p: (p / "dest.pt").mkdir(), "it is a directory"),
    (lambda p: (p / "d").mkdir() or os.symlink("d", p / "dest.pt"), "it is a directory"),
])
def test_write_atomically_refuses_naming_the_path_given(tmp_path, make, fragment):
    from gradc.errors import WriteError
    from gradc.files import write_atomically

    make(tmp_path)
    given = str(tmp_path / ("missing/dest.pt" if "missing" in fragment else "dest.pt"))
    with pytest.raises(WriteError) as info:
        write_atomically(given, b"x")
    message = str(info.value)
    assert message.startswith(f"cannot write {given}: ") and fragment in message
    assert ".tmp" not in message and info.value.path == given
    assert no_temp_files(tmp_path)


def test_write_atomically_failing_midway_keeps_the_old_file(tmp_path, monkeypatch):
    import errno

    from gradc.errors import WriteError
    from gradc.files import write_atomically

    target = tmp_path / "model.pt"
    target.write_bytes(b"old")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(WriteError, match=f"cannot write {target}: no space left on the device"):
        write_atomically(target, b"new")
    assert target.read_bytes() == b"old" and no_temp_files(tmp_path)


def test_write_atomically_writes_into_a_fifo(tmp_path):
    from gradc.files import write_atomically

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    write_atomically(fifo, b"through")
    reader.join(10)
    assert got == [b"through"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def _random_tree(root, rng):
    """A random chain of symlinks (relative or absolute) from ``root/start`` to a file, a directory or nothing."""
    end = rng.choice(["file", "missing", "directory", "missing-directory"])
    (root / "d").mkdir()
    final = root / "d" / "end"
    if end == "file":
        final.write_bytes(b"old")
    elif end == "directory":
        final.mkdir()
    elif end == "missing-directory":
        final = root / "nowhere" / "end"
    names = [f"link{i}" for i in range(int(rng.integers(0, 4)))]
    previous = final
    for name in reversed(names):
        link = root / name
        os.symlink(os.path.relpath(previous, root) if rng.random() < 0.5 else str(previous), link)
        previous = link
    return previous, final, end


@pytest.mark.parametrize("seed", range(24))
def test_every_writer_follows_one_rule(tmp_path, seed):
    """``write_atomically`` and ``-o`` agree on random symlink chains: both write the file at the end of
    the chain (the links stay), or both refuse naming the path given, and nothing else changes."""
    import numpy as np

    from gradc.errors import WriteError
    from gradc.files import write_atomically

    outcomes = []
    for writer in ("library", "cli"):
        root = tmp_path / writer
        root.mkdir()
        (root / "m.py").write_text(MODEL)
        start, final, end = _random_tree(root, np.random.default_rng(seed))
        given = os.path.relpath(start, root)
        links = {p.name: os.readlink(p) for p in root.iterdir() if p.is_symlink()}
        if writer == "library":
            old = os.getcwd()
            os.chdir(root)
            try:
                write_atomically(given, b"new")
                outcome = "written"
            except WriteError as e:
                assert str(e).startswith(f"cannot write {given}: "), str(e)
                outcome = "refused"
            finally:
                os.chdir(old)
        else:
            result = run_cli(*COMMANDS["ops"], "-o", given, cwd=root)
            outcome = "written" if result.status == 0 else "refused"
            if outcome == "refused":
                assert_one_line_error(result, given)
        assert links == {p.name: os.readlink(p) for p in root.iterdir() if p.is_symlink()}  # links untouched
        if end == "file" or (end == "missing" and start == final):
            assert outcome == "written"
            assert final.read_bytes() != b"old"
        else:
            assert outcome == "refused"
        assert no_temp_files(root) and no_temp_files(root / "d")
        outcomes.append(outcome)
    assert outcomes[0] == outcomes[1]


def test_c_source_and_header_are_written_together(work, monkeypatch):
    """A full disk while writing the header leaves the old source too: all files are staged before any rename."""
    import errno

    from gradc import files

    (work / "out.c").write_text("old source")
    real = files._stage

    def header_fails(target, data):
        if target.path.endswith(".h"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(target, data)
    monkeypatch.setattr(files, "_stage", header_fails)
    result = run_cli(*COMMANDS["c"], "-o", "out.c", cwd=work)
    assert_one_line_error(result, "out.h", "no space left")
    assert (work / "out.c").read_text() == "old source" and not (work / "out.h").exists()
    assert no_temp_files(work)
