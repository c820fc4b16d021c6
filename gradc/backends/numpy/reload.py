"""Objects holding functions loaded from emitted NumPy source pickle by that source, and load it again.

A function ``exec``-ed from emitted source belongs to no importable module, so pickle
cannot send it by reference. An object that holds such functions (``gradc.Compiled``,
the compile modes' ``Unit``) pickles instead its other attributes (the source, the
graphs, the names) and the name of each loaded function; unpickling loads the
source again (``load_source``: in any process, with ``linecache`` for tracebacks)
and puts the functions back.

>>> class Holder:  # its __reduce__ returns reduce_by_source(self)
...     def __init__(self, source, name):
...         self.source, self.name = source, name
...         self.f = load_source(source, name)["f"]
>>> make, args = reduce_by_source(Holder("def f(x):\\n    return x + 1\\n", "demo"))
>>> args[1]["__gradc_loaded_functions__"]
{'f': 'f'}
>>> make(*args).f(1)
2
"""
from __future__ import annotations

import types
from typing import Any

from gradc.backends.numpy.load import GENERATED_MODULE_PREFIX, load_source

_FUNCTIONS = "__gradc_loaded_functions__"  # the key of the state that maps attributes to the functions' names


def loaded_functions(obj: object) -> dict[str, str]:
    """``{attribute: function name}`` for the attributes of ``obj`` that hold functions of emitted source.

    >>> loaded_functions(object())
    {}
    """
    found = {}
    for attribute, value in sorted(getattr(obj, "__dict__", {}).items()):
        if isinstance(value, types.FunctionType) and value.__module__.startswith(GENERATED_MODULE_PREFIX):
            found[attribute] = value.__name__
    return found


def reduce_by_source(obj: Any) -> tuple:
    """What ``obj.__reduce__`` returns: rebuilt by :func:`rebuild` from its ``source``, ``name`` and the rest of
    its attributes (each must pickle; the loaded functions are left out and loaded again)."""
    functions = loaded_functions(obj)
    state = {k: v for k, v in vars(obj).items() if k not in functions}
    state[_FUNCTIONS] = functions
    return rebuild, (type(obj), state)


def rebuild(cls: type[Any], state: dict[str, Any]) -> Any:
    """An object of ``cls`` with the attributes of ``state``, its functions loaded again from ``state["source"]``."""
    state = dict(state)
    functions = state.pop(_FUNCTIONS)
    obj = object.__new__(cls)  # not __init__: that would trace and compile again
    obj.__dict__.update(state)
    if functions:
        namespace = load_source(state["source"], state["name"])
        for attribute, name in functions.items():
            setattr(obj, attribute, namespace[name])
    return obj
