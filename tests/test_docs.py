"""The documentation's examples are real: every page under docs/ is run here, so a stale example fails.

Per page (``docs/**/*.md``), in a temporary working directory holding a copy of ``examples/``:

* every ```python block runs, in order, in one namespace per page; a block followed directly
  (only blank lines between) by a plain ``` or ```text block must print that output
  (doctest's ``...`` matches anything; object addresses are ignored);
* a ```console block is a shell transcript: each ``$ gradc ...`` or ``$ python ...`` command
  runs and must print the lines under it.

Beside the examples: the API reference lists every name ``gradc.__all__`` exports, the CLI page
names every subcommand and option of the real parser, and the site's nav lists every page.
``make docs`` runs this file and then ``mkdocs build --strict``.
"""
from __future__ import annotations

import contextlib
import doctest
import io
import linecache
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
OUTPUT_LANGUAGES = ("", "text")


@dataclass
class Block:
    language: str
    code: str
    line: int  # 1-based line of the first line of code in the page
    output: str | None = None  # the output block that follows a python block directly


def pages() -> list[str]:
    """Every Markdown page of the site, relative to docs/, sorted."""
    found = []
    for folder, _, files in os.walk(DOCS):
        found += [os.path.relpath(os.path.join(folder, f), DOCS) for f in files if f.endswith(".md")]
    return sorted(found)


def blocks(text: str) -> list[Block]:
    """The page's python and console blocks, each python block with the output block right after it."""
    fences = [(m, m.group(1), m.group(2)) for m in FENCE.finditer(text)]
    found = []
    for i, (match, language, code) in enumerate(fences):
        if language not in ("python", "console"):
            continue
        block = Block(language, code, text.count("\n", 0, match.start()) + 2)
        if language == "python" and i + 1 < len(fences):
            following, next_language, next_code = fences[i + 1]
            if next_language in OUTPUT_LANGUAGES and not text[match.end():following.start()].strip():
                block.output = next_code
        found.append(block)
    return found


def normalise(text: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x…", text).rstrip()


def matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is what the page shows (trailing blanks ignored, ``...`` matching anything)."""
    expected, actual = normalise(expected), normalise(actual)
    lines = lambda s: "\n".join(line.rstrip() for line in s.splitlines()) + "\n"  # noqa: E731
    return doctest.OutputChecker().check_output(lines(expected), lines(actual), doctest.ELLIPSIS)


def transcript(code: str) -> list[tuple[list[str], str]]:
    """``(argv, expected output)`` of each ``$ command`` of a console block (``\\`` continues a line)."""
    runs, lines = [], code.splitlines()
    while lines:
        line = lines.pop(0)
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\"):
                command = command[:-1] + " " + lines.pop(0).strip()
            runs.append((shlex.split(command, comments=True), []))
        elif runs:
            runs[-1][1].append(line)
    return [(argv, "\n".join(out)) for argv, out in runs]


def run_command(argv: list[str], cwd: str) -> str:
    if argv[0] == "gradc":
        argv = [sys.executable, "-m", "gradc", *argv[1:]]
    elif argv[0] == "python":
        argv = [sys.executable, *argv[1:]]
    else:
        raise AssertionError(f"the docs run only gradc and python commands, not {argv[0]!r}")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), COLUMNS="100")
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    return proc.stdout + proc.stderr


def run_page(page: str, workdir: str) -> int:
    """Run every example of ``page``; the number of blocks run."""
    text = open(os.path.join(DOCS, page), encoding="utf-8").read()
    found = blocks(text)
    filename = os.path.join("docs", page)
    # the page as Python: its python blocks at their own lines, blanks elsewhere; registered as a source
    # file (as IPython does for a cell) so gradc finds the loops and branches of functions defined here,
    # and a traceback names the page's line
    source = [""] * (text.count("\n") + 2)
    for block in found:
        if block.language == "python":
            for k, line in enumerate(block.code.splitlines()):
                source[block.line - 1 + k] = line
    whole = "\n".join(source) + "\n"
    linecache.cache[filename] = (len(whole), None, whole.splitlines(True), filename)
    namespace = {"__name__": "__docs__"}
    for block in found:
        if block.language == "console":
            for argv, expected in transcript(block.code):
                actual = run_command(argv, workdir)
                assert matches(expected, actual), f"{filename}:{block.line}: `{shlex.join(argv)}` printed\n{actual}"
            continue
        padded = "\n" * (block.line - 1) + block.code
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(padded, filename, "exec"), namespace)
        if block.output is not None:
            assert matches(block.output, out.getvalue()), f"{filename}:{block.line} printed\n{out.getvalue()}"
    return len(found)


@pytest.mark.parametrize("page", pages())
def test_every_example_runs_and_prints_what_the_page_shows(page, tmp_path, monkeypatch):
    shutil.copytree(os.path.join(ROOT, "examples"), tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    try:
        run_page(page, str(tmp_path))
    finally:  # the modules a page wrote and imported (import loss_grad) go with its directory
        for name in set(sys.modules) - before:
            if str(getattr(sys.modules[name], "__file__", None) or "").startswith(str(tmp_path)):
                del sys.modules[name]


def test_the_runner_fails_on_a_stale_example(tmp_path, monkeypatch):
    page = "```python\nprint(1 + 1)\n```\n```\n3\n```\n"
    (tmp_path / "stale.md").write_text(page)
    monkeypatch.setattr(sys.modules[__name__], "DOCS", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AssertionError, match="printed"):
        run_page("stale.md", str(tmp_path))
    (tmp_path / "stale.md").write_text(page.replace("3", "2"))
    assert run_page("stale.md", str(tmp_path)) == 1


def test_output_matching():
    assert matches("a ...\nb", "a 1 2 3\nb\n")
    assert matches("<object at 0x7f00>", "<object at 0x1234>")
    assert not matches("a\nb", "a\nc")
    assert not matches("a", "a\nextra line")


def test_the_api_reference_covers_every_exported_name():
    import gradc

    text = open(os.path.join(DOCS, "api.md"), encoding="utf-8").read()
    documented = set(re.findall(r"^::: gradc\.(\w+)", text, re.M))
    missing = [name for name in gradc.__all__ if name not in documented]
    assert not missing, f"docs/api.md lacks ::: gradc.NAME for {missing}"


def test_the_cli_page_covers_every_subcommand_and_option():
    import argparse

    from gradc.cli.commands import build_parser

    text = open(os.path.join(DOCS, "cli.md"), encoding="utf-8").read()
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    missing = [f"gradc {o}" for a in parser._actions for o in a.option_strings if f"`{o}" not in text]
    for name, sub in subparsers.choices.items():
        if f"## `gradc {name}`" not in text:
            missing.append(f"the section ## `gradc {name}`")
        section = text.split(f"## `gradc {name}`", 1)[-1].split("\n## ", 1)[0]
        missing += [f"gradc {name} {o}" for a in sub._actions for o in a.option_strings if f"`{o}" not in section]
        for action in sub._actions:
            missing += [f"gradc {name} {action.dest}={c}" for c in action.choices or () if f"`{c}`" not in section]
    assert not missing, f"docs/cli.md does not describe: {missing}"


def test_the_site_lists_every_page():
    config = open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8").read()
    listed = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", config, re.M))
    assert set(pages()) == listed


def test_the_api_reference_fences_doctests():
    import importlib.util

    pytest.importorskip("griffe", reason="the docs toolchain (make docs installs it)")
    spec = importlib.util.spec_from_file_location("doctest_fences", os.path.join(DOCS, "_ext", "doctest_fences.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = "Squares.\n\n>>> f(2)\n4\n\nSee :func:`gradc.grad`."
    assert module.fence_doctests(text) == "Squares.\n\n```python\n>>> f(2)\n4\n```\n\nSee `gradc.grad`."
