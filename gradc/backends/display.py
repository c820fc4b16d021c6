"""How compiled objects show in a notebook: ``_repr_html_`` with their source, highlighted.

Highlighting uses Pygments when it is importable (Jupyter installs it); without it the
source is an escaped ``<pre>`` block. gradc does not depend on Pygments. Every piece of
text (the title, which holds the user's function name, and the source, which holds the
file name and docstrings) is HTML-escaped, so nothing the user wrote becomes markup.

>>> print(source_html("gradc.Compiled f", "x = '<b>'\\n", "python", highlight=False))
<div class="gradc-compiled"><div style="font-family: monospace; font-weight: bold">gradc.Compiled f</div>
<pre style="max-height: 40em; overflow: auto">x = &#x27;&lt;b&gt;&#x27;
</pre></div>
"""
from __future__ import annotations

import html
from typing import Any

_BOX = '<div class="gradc-compiled"><div style="font-family: monospace; font-weight: bold">{title}</div>\n{code}</div>'
_PRE = '<pre style="max-height: 40em; overflow: auto">{text}</pre>'
# a longer source (a long unrolled program) is shown escaped but not highlighted: Pygments would take seconds
# and multiply the page's size by ten
HIGHLIGHT_MAX_CHARS = 200_000


def highlighted(source: str, language: str) -> str | None:
    """``source`` as HTML highlighted by Pygments (``language`` "python" or "c"), or None without Pygments.

    >>> text = highlighted("int f(void);", "c")
    >>> text is None or "<span" in text
    True
    """
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import CLexer, PythonLexer
    except ImportError:
        return None
    lexer = CLexer() if language == "c" else PythonLexer()
    # inline styles: a notebook shows them without Pygments' stylesheet; Pygments escapes the text it formats
    formatter = HtmlFormatter(noclasses=True, cssstyles="max-height: 40em; overflow: auto")
    return highlight(source, lexer, formatter)


# ``provider(graph, wrt) -> LaTeX or None``: the function and its gradient as mathematics, installed by
# gradc.symbolic (which imports SymPy only when a notebook asks); None for a graph too large to show
FORMULAS: list = []


def formula_html(graph: Any, wrt: tuple) -> str:
    """The formula block a notebook shows above the code (MathJax typesets ``$$...$$`` in HTML output), or "".

    >>> formula_html(None, ())
    ''
    """
    latex = FORMULAS[0](graph, tuple(wrt)) if FORMULAS and graph is not None else None
    if not latex:
        return ""
    return f'<div class="gradc-formula">$$\\begin{{aligned}}{html.escape(latex)}\\end{{aligned}}$$</div>\n'


def source_html(title: str, source: str, language: str = "python", highlight: bool = True, formula: str = "") -> str:
    """An HTML block: ``title`` above ``formula`` (an HTML block, see ``formula_html``) above ``source``
    (highlighted when Pygments is importable, ``highlight`` is true and the source has at most
    ``HIGHLIGHT_MAX_CHARS`` characters)."""
    code = highlighted(source, language) if highlight and len(source) <= HIGHLIGHT_MAX_CHARS else None
    if code is None:
        code = _PRE.format(text=html.escape(source))
    return _BOX.format(title=html.escape(title), code=formula + code)
