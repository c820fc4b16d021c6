"""Load emitted source in-process, registered with ``linecache`` for tracebacks and pdb.

>>> ns = load_source("def f(x):\\n    return x + 1\\n", "demo")
>>> ns["f"](1)
2
"""
from __future__ import annotations

import hashlib
import linecache


def load_source(source: str, name: str) -> dict:
    """Execute ``source`` as a module; its file name is ``<gradc:NAME:HASH>``."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    filename = f"<gradc:{name}:{digest}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace: dict = {"__name__": f"gradc_generated_{name}"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace
