"""User strings (file paths, names, command lines) made safe for the source gradc emits.

Every place a string the user controls meets emitted Python, C or a shell command
line goes through one function here, so no file name can end a comment early and
put live code into the output:

* :func:`printable` -- one line of visible text: line breaks, control, format
  (bidi) and unpaired surrogate characters (the undecodable bytes of a path)
  become Python-style escapes;
* :func:`python_comment` -- a ``#`` comment line (also never an encoding cookie);
* :func:`c_comment` -- text for inside ``/* ... */`` (``*/`` and ``/*`` broken up);
* :func:`shell_join` -- a command line that bash turns back into exactly the
  same arguments (ANSI-C ``$'...'`` quoting where plain quoting cannot say it).

Strings inside Python code (docstrings, error messages) are ``ast.Constant``
nodes, which ``ast.unparse`` already quotes; names are identifiers by the time
they reach an emitter.

>>> print(python_comment('from evil\\nprint("x")\\n#.py'))
# from evil\\nprint("x")\\n#.py
>>> c_comment("a*/b")
'a*\\\\/b'
>>> shell_join(["gradc", "compile", "my model.py:loss", "a\\nb"])
"gradc compile 'my model.py:loss' $'a\\\\nb'"
"""
from __future__ import annotations

import re
import shlex

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Python reads an encoding declaration from a comment on the first two lines
# (PEP 263); a file named "coding=bogus.py" must not declare one.
_CODING = re.compile(r"(coding)([:=])")
_C_DELIMITERS = re.compile(r"\*/|/\*")


def _escape_char(c: str) -> str:
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # a byte os.fsdecode could not decode (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _visible(c: str) -> bool:
    return c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF


def printable(text: str) -> str:
    """``text`` as one line of visible characters: everything else escaped as in a Python string.

    Backslashes stay as they are: this is for reading, not for parsing back.

    >>> printable("a\\tb\\x1b[2J\\u202ec")
    'a\\\\tb\\\\x1b[2J\\\\u202ec'
    >>> printable("caf\\udce9.py")
    'caf\\\\xe9.py'
    """
    if all(_visible(c) for c in text):
        return text
    return "".join(c if _visible(c) else _escape_char(c) for c in text)


def python_comment(text: str) -> str:
    """A ``#`` comment line that says ``text`` and can contain nothing else.

    >>> python_comment("Generated from coding=latin-1.py")
    '# Generated from coding\\\\x3dlatin-1.py'
    """
    safe = _CODING.sub(lambda m: m.group(1) + _escape_char(m.group(2)), printable(text))
    return f"# {safe}" if safe else "#"


def c_comment(text: str) -> str:
    """``text`` for inside a C block comment: one line, and never ``*/`` (nor a nested ``/*``).

    >>> c_comment("a/*b*/c")
    'a/\\\\*b*\\\\/c'
    """
    return _C_DELIMITERS.sub(lambda m: m.group(0)[0] + "\\" + m.group(0)[1], printable(text))


def _hazardous(arg: str) -> bool:
    """True when plain quoting would leave ``arg`` unsafe in a comment: invisible characters or delimiters."""
    return not all(_visible(c) for c in arg) or bool(_C_DELIMITERS.search(arg) or _CODING.search(arg))


def shell_word(arg: str) -> str:
    """``arg`` quoted for bash (and zsh); ANSI-C ``$'...'`` quoting for anything plain quotes cannot carry.

    >>> shell_word("loss.py")
    'loss.py'
    >>> shell_word("caf\\udce9.py")
    "$'caf\\\\xe9.py'"
    """
    if not _hazardous(arg):
        return shlex.quote(arg)
    out = []
    for i, c in enumerate(arg):
        if c in "\\'":
            out.append("\\" + c)
        elif c in "*/:=" and _hazard_at(arg, i):
            out.append(f"\\x{ord(c):02x}")
        elif _visible(c):
            out.append(c)
        elif c in _NAMED or 0xDC80 <= ord(c) <= 0xDCFF:
            out.append(_escape_char(c))
        else:  # the UTF-8 bytes of the character, which $'\xHH' reproduces exactly
            out.extend(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass"))
    return "$'" + "".join(out) + "'"


def _hazard_at(arg: str, i: int) -> bool:
    """Whether ``arg[i]`` is the second character of ``*/``, ``/*`` or ``coding:``/``coding=``."""
    return (arg[i - 1:i + 1] in ("*/", "/*") if i else False) or (arg[:i].endswith("coding") and arg[i] in ":=")


def shell_join(argv) -> str:
    """A command line bash splits back into exactly ``argv``, and safe inside a Python or C comment.

    >>> shell_join(["gradc", "compile", "a*/b.py:f"])
    "gradc compile $'a*\\\\x2fb.py:f'"
    """
    return " ".join(shell_word(a) for a in argv)
