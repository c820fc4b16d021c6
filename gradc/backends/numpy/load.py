"""Load emitted source in-process, registered with ``linecache`` for tracebacks and pdb.

>>> ns = load_source("def f(x):\\n    return x + 1\\n", "demo")
>>> ns["f"](1)
2
"""
from __future__ import annotations

import hashlib
import linecache

GENERATED_MODULE_PREFIX = "gradc_generated_"  # the __module__ of every function loaded from emitted source


def load_source(source: str, name: str) -> dict:
    """Execute ``source`` as a module; its file name is ``<gradc:NAME:HASH>``."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    filename = f"<gradc:{name}:{digest}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace: dict = {"__name__": GENERATED_MODULE_PREFIX + name}
    exec(compile(source, filename, "exec"), namespace)
    return namespace
