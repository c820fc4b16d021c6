"""A griffe extension for the API reference: gradc's docstrings are reST-flavoured plain text
with ``>>>`` examples; Markdown would render those as nested block quotes. Each run of doctest
lines (and their expected output) becomes a fenced Python block, and ``:func:`x``` a code span."""
from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc):`~?([^`]+)`")


def fence_doctests(text: str) -> str:
    """The docstring ``text`` with each doctest example fenced as Python."""
    out, in_example = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>"):
            if not in_example:
                out.append("```python")
                in_example = True
            out.append(stripped)
        elif in_example and stripped:
            out.append(stripped if stripped.startswith("...") else line)
        else:
            if in_example:
                out.append("```")
                in_example = False
            out.append(line)
    if in_example:
        out.append("```")
    return _ROLE.sub(r"`\1`", "\n".join(out))


class DoctestFences(griffe.Extension):
    def on_object(self, *, obj, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
